//! The AVX-512 logarithms against libm: float32 within 1 ulp of the
//! correctly rounded value (libm's f64 result, rounded), float64 within 1
//! ulp of glibc (`log10` 2), over hundreds of thousands of points per range
//! (subnormals, both sides of 1, every binade), C's special values bit for
//! bit, exact powers, and every tail length of a register. Skipped (with a
//! note) where the CPU has no AVX-512: the portable functions have their
//! own tests.

use super::*;
use crate::cpu::math::tests::{points, ulp_diff};
use crate::cpu::math64::tests::{ulps, Rng};

/// Each base with libm's function.
type Libm = fn(f64) -> f64;

const BASES: [(LogBase, Libm); 3] = [
    (LogBase::E, f64::ln),
    (LogBase::Two, f64::log2),
    (LogBase::Ten, f64::log10),
];

fn run32(base: LogBase, x: &[f32]) -> Option<Vec<f32>> {
    let mut out = vec![0.0; x.len()];
    log_slice_f32(base, x, &mut out).then_some(out)
}

fn run64(base: LogBase, x: &[f64]) -> Option<Vec<f64>> {
    let mut out = vec![0.0; x.len()];
    log_slice_f64(base, x, &mut out).then_some(out)
}

fn avx512() -> bool {
    let ok = run32(LogBase::E, &[1.0]).is_some();
    if !ok {
        eprintln!("skipped: this CPU has no AVX-512 (the portable logarithms run here)");
    }
    ok
}

/// NaN equals NaN; zeros by sign.
fn same32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
}

fn same64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
}

#[test]
fn float32_within_1_ulp_of_the_rounded_value() {
    if !avx512() {
        return;
    }
    let ranges: [(f32, f32); 7] = [
        (1e-45, 1e-38),
        (1e-30, 10.0),
        (0.5, 2.0),
        (0.74, 1.51),
        (0.999, 1.001),
        (0.999_99, 1.000_01),
        (1.0, 3.4e38),
    ];
    for (base, libm) in BASES {
        for (lo, hi) in ranges {
            let mut xs: Vec<f32> = points(lo, hi, 200_000).collect();
            let (l0, l1) = (lo.ln(), hi.ln());
            xs.extend((0..200_000).map(|i| (l0 + (l1 - l0) * (i as f32 / 200_000.0)).exp()));
            let got = run32(base, &xs).unwrap();
            for (&x, &g) in xs.iter().zip(&got) {
                let u = ulp_diff(g, libm(x as f64));
                assert!(u <= 1.0, "{base:?}: {u} ulp at {x:e} (range {lo}..{hi})");
            }
        }
    }
}

#[test]
fn float64_within_1_ulp_of_glibc_log10_within_2() {
    if !avx512() {
        return;
    }
    let mut g = Rng(0x5eed_1095);
    let sets: [Vec<f64>; 5] = [
        // Any positive double, subnormals included.
        (0..200_000)
            .map(|_| f64::from_bits(g.next() >> 1))
            .collect(),
        (0..200_000).map(|_| g.uniform(0.5, 2.0)).collect(),
        (0..200_000).map(|_| g.uniform(0.74, 1.51)).collect(),
        (0..200_000).map(|_| g.uniform(0.999, 1.001)).collect(),
        (0..200_000).map(|_| 1.0 + g.uniform(-1e-9, 1e-9)).collect(),
    ];
    for (base, libm) in BASES {
        let max = if base == LogBase::Ten { 2 } else { 1 };
        for xs in &sets {
            let got = run64(base, xs).unwrap();
            for (&x, &v) in xs.iter().zip(&got) {
                let u = ulps(v, libm(x));
                assert!(u <= max, "{base:?}: {u} ulp from libm at {x:e}");
            }
        }
    }
}

#[test]
fn special_values_and_exact_powers() {
    if !avx512() {
        return;
    }
    let specials64 = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        0.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        -3.5,
    ];
    for (base, libm) in BASES {
        let got = run64(base, &specials64).unwrap();
        for (&x, &v) in specials64.iter().zip(&got) {
            assert!(same64(v, libm(x)), "{base:?}({x}) = {v}, libm {}", libm(x));
        }
        let s32: Vec<f32> = specials64.iter().map(|&x| x as f32).collect();
        let got = run32(base, &s32).unwrap();
        for (&x, &v) in s32.iter().zip(&got) {
            let want = libm(x as f64) as f32;
            let ok = same32(v, want)
                || want.is_finite() && want != 0.0 && ulp_diff(v, libm(x as f64)) <= 1.0;
            assert!(ok, "{base:?}({x}) = {v}, want {want}");
        }
    }
    // log2 of every power of two is its exponent, subnormals included;
    // log10 of the powers of ten is glibc's (exact where glibc is).
    let p64: Vec<f64> = (-1074..1024).map(|k| (k as f64).exp2()).collect();
    let got = run64(LogBase::Two, &p64).unwrap();
    for (k, v) in (-1074..1024).zip(got) {
        assert_eq!(v, k as f64, "log2(2^{k})");
    }
    let p32: Vec<f32> = (-149..128).map(|k| (k as f32).exp2()).collect();
    let got = run32(LogBase::Two, &p32).unwrap();
    for (k, v) in (-149..128).zip(got) {
        assert_eq!(v, k as f32, "log2(2^{k}) float32");
    }
    let tens: Vec<f64> = (-307..309)
        .map(|k| format!("1e{k}").parse().unwrap())
        .collect();
    let got = run64(LogBase::Ten, &tens).unwrap();
    for (&p, v) in tens.iter().zip(got) {
        assert_eq!(v, p.log10(), "log10({p:e})");
    }
    let tens32: Vec<f32> = (-37..39)
        .map(|k| format!("1e{k}").parse().unwrap())
        .collect();
    let got = run32(LogBase::Ten, &tens32).unwrap();
    for (&p, v) in tens32.iter().zip(got) {
        assert!(ulp_diff(v, (p as f64).log10()) <= 1.0, "log10({p:e}) = {v}");
    }
}

#[test]
fn every_tail_length_writes_its_points_only() {
    if !avx512() {
        return;
    }
    let xs: Vec<f64> = (0..40).map(|i| 0.37 + 1.93 * i as f64).collect();
    let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
    for n in 0..=40 {
        for (base, libm) in BASES {
            let mut out = [-7.0f64; 41];
            assert!(log_slice_f64(base, &xs[..n], &mut out[..n]));
            for i in 0..n {
                assert!(ulps(out[i], libm(xs[i])) <= 2, "{base:?} n={n} i={i}");
            }
            assert!(
                out[n..].iter().all(|&v| v == -7.0),
                "{base:?}: wrote past {n}"
            );
            let mut out = [-7.0f32; 41];
            assert!(log_slice_f32(base, &x32[..n], &mut out[..n]));
            for i in 0..n {
                assert!(
                    ulp_diff(out[i], libm(x32[i] as f64)) <= 1.0,
                    "{base:?} f32 n={n} i={i}"
                );
            }
            assert!(
                out[n..].iter().all(|&v| v == -7.0),
                "{base:?} f32: wrote past {n}"
            );
        }
    }
}
