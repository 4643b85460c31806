//! The AVX-512 float64 sinh, cosh, tanh, expm1, exp and exp2 against
//! glibc (which NumPy calls): sinh, cosh and tanh within 2 ulp (glibc is
//! itself up to 1.4, 1.6 and 1.8 ulp from the true value, see
//! `math64_hyp_tests.rs`; the portable forms are held to the same bound),
//! expm1, exp and exp2 within 1, over hundreds of thousands
//! of points per range (tiny, both sides of 1 and of 1/4, every table
//! entry, up to and past the overflow threshold, down to where expm1 is
//! -1, random bit patterns), C's special values bit for bit, and every tail
//! length of a register. Skipped (with a note) where the CPU has no
//! AVX-512: the portable forms have their own tests.

use super::*;
use crate::cpu::math64::tests::{ulps, Rng, SPECIAL};

type Slice = fn(&[f64], &mut [f64]) -> bool;
type Libm = fn(f64) -> f64;

/// (name, kernel, glibc's function, the most ulp allowed from it).
const FUNCTIONS: [(&str, Slice, Libm, u64); 6] = [
    ("sinh", sinh_slice_f64, f64::sinh, 2),
    ("cosh", cosh_slice_f64, f64::cosh, 2),
    ("expm1", expm1_slice_f64, f64::exp_m1, 1),
    ("exp", exp_slice_f64, f64::exp, 1),
    ("exp2", exp2_slice_f64, f64::exp2, 1),
    ("tanh", tanh_slice_f64, f64::tanh, 2),
];

fn run(f: Slice, x: &[f64]) -> Option<Vec<f64>> {
    let mut out = vec![0.0; x.len()];
    f(x, &mut out).then_some(out)
}

fn avx512() -> bool {
    let ok = run(sinh_slice_f64, &[1.0]).is_some();
    if !ok {
        eprintln!("skipped: this CPU has no AVX-512 (the portable sinh and cosh run here)");
    }
    ok
}

fn points(seed: u64, n: usize, mut f: impl FnMut(&mut Rng) -> f64) -> Vec<f64> {
    let mut g = Rng(seed);
    (0..n).map(|_| f(&mut g)).collect()
}

#[test]
fn within_2_ulp_of_glibc() {
    if !avx512() {
        return;
    }
    let sets = [
        points(1, 200_000, |g| g.log_uniform(-60.0, -27.0, true)),
        points(2, 200_000, |g| g.uniform(-1.0, 1.0)),
        points(3, 200_000, |g| g.uniform(0.9, 1.1)),
        points(4, 400_000, |g| g.uniform(-25.0, 25.0)),
        points(5, 200_000, |g| g.uniform(-711.0, 711.0)),
        points(6, 200_000, |g| g.uniform(709.0, 710.6)),
        points(10, 200_000, |g| g.uniform(-0.3, 0.3)),
        points(11, 200_000, |g| g.uniform(-45.0, -30.0)),
        // Subnormal and underflowing results of exp and exp2.
        points(12, 200_000, |g| g.uniform(-750.0, -700.0)),
        points(13, 200_000, |g| g.uniform(-1080.0, -1000.0)),
        points(14, 200_000, |g| g.uniform(1000.0, 1030.0)),
        points(7, 200_000, |g| g.log_uniform(-27.0, 10.0, true)),
        points(8, 200_000, |g| f64::from_bits(g.next())),
    ];
    for (name, f, libm, max) in FUNCTIONS {
        let mut worst = (0, 0.0);
        for xs in &sets {
            assert!(xs.iter().any(|&x| x != 0.0));
            let got = run(f, xs).unwrap();
            for (&x, &y) in xs.iter().zip(&got) {
                let u = ulps(y, libm(x));
                if u > worst.0 {
                    worst = (u, x);
                }
            }
        }
        assert!(
            worst.0 <= max,
            "{name}: {} ulp from glibc at {:e}",
            worst.0,
            worst.1
        );
    }
}

#[test]
fn special_values_as_c() {
    if !avx512() {
        return;
    }
    // Overflow thresholds (cosh and sinh reach f64::MAX at 710.4758600739439),
    // the Taylor edge of sinh, the table's step and its midpoints.
    let edges = [
        710.4758600739439,
        710.475860073944,
        710.4758600739438,
        710.47,
        710.48,
        709.78,
        1.0,
        1.0 - f64::EPSILON / 2.0,
        1.0 + f64::EPSILON,
        std::f64::consts::LN_2 / 16.0,
        std::f64::consts::LN_2 / 32.0,
        22.0,
        0.25,
        0.25 - f64::EPSILON / 8.0,
        40.0,
        37.5,
        709.782712893384,
        709.7827128933841,
        745.1332191019411,
        745.1332191019412,
        1074.0,
        1074.5,
        1075.0,
        1023.0,
        1023.9999999999999,
        1024.0,
        1e300,
        1e-300,
        2.2250738585072014e-308,
    ];
    let mut xs: Vec<f64> = SPECIAL.to_vec();
    for e in edges {
        xs.push(e);
        xs.push(-e);
    }
    for (name, f, libm, max) in FUNCTIONS {
        let got = run(f, &xs).unwrap();
        for (&x, &y) in xs.iter().zip(&got) {
            let want = libm(x);
            if !want.is_finite() || want == 0.0 || x.abs() < 1e-300 {
                // inf, NaN, zeros (with their sign) and tiny arguments bit
                // for bit.
                assert!(
                    y.to_bits() == want.to_bits() || y.is_nan() && want.is_nan(),
                    "{name}({x:e}) = {y:e}, C gives {want:e}"
                );
            } else {
                assert!(
                    ulps(y, want) <= max,
                    "{name}({x:e}) = {y:e}, C gives {want:e}"
                );
            }
        }
    }
}

#[test]
fn every_tail_length_writes_its_points_only() {
    if !avx512() {
        return;
    }
    let xs = points(9, 48, |g| g.uniform(-30.0, 30.0));
    for (name, f, libm, max) in FUNCTIONS {
        for n in 0..=40 {
            let mut out = vec![-7.0; 48];
            assert!(f(&xs[..n], &mut out[..n]));
            for i in 0..48 {
                if i < n {
                    assert!(
                        ulps(out[i], libm(xs[i])) <= max,
                        "{name}: length {n}, point {i}"
                    );
                } else {
                    assert_eq!(out[i], -7.0, "{name}: length {n} wrote point {i}");
                }
            }
        }
    }
}

#[test]
fn exp2_is_exact_at_integers() {
    if !avx512() {
        return;
    }
    let xs: Vec<f64> = (-1080..=1030).map(f64::from).collect();
    let got = run(exp2_slice_f64, &xs).unwrap();
    for (&x, &y) in xs.iter().zip(&got) {
        assert_eq!(y.to_bits(), x.exp2().to_bits(), "exp2({x})");
    }
}
