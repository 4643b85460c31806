//! The AVX-512 float64 power against libm's `pow` (glibc's, correctly
//! rounded in practice), by the measures of `math64_tests.rs` (skipped,
//! with a note, on CPUs without AVX-512).

use super::pow_slices_avx512;
use crate::cpu::interp::Arg;
use crate::cpu::math64::tests::{c_like, ulps, Rng, N};

/// `x^y` elementwise through the kernel; None without AVX-512.
fn pow_all(x: &[f64], y: &[f64]) -> Option<Vec<f64>> {
    let mut out = vec![0f64; x.len()];
    pow_slices_avx512(Arg::Slice(x), Arg::Slice(y), &mut out).then_some(out)
}

fn no_avx512() -> bool {
    let mut o = [0f64];
    let skip = !pow_slices_avx512(Arg::Splat(2.0), Arg::Splat(2.0), &mut o);
    if skip {
        eprintln!("no AVX-512 here: the AVX-512 power kernel is not tested");
    }
    skip
}

#[test]
fn avx512_pow_f64_within_2_ulp() {
    if no_avx512() {
        return;
    }
    // The point sets of math64_tests.rs's pow_within_2_ulp, and bases
    // within 1e-9 of 1 (and of the subinterval ends of the tables).
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let mut g = Rng(30);
    let mut probe = |a: f64, b: f64| {
        x.push(a);
        y.push(b);
    };
    for k in 0..N {
        let a = g.log_uniform(-1074.0, 1024.0, false);
        probe(a, g.uniform(-745.0, 709.7) / a.ln());
        probe(g.uniform(0.0, 10.0), g.uniform(-30.0, 30.0));
        let a = 1.0 + g.uniform(-1e-3, 1e-3);
        probe(a, g.uniform(-745.0, 709.7) / a.ln());
        let a = (1.0 + (k % 17) as f64 / 16.0) * (1.0 + g.uniform(-1e-9, 1e-9));
        probe(a, g.uniform(-745.0, 709.7) / a.ln());
        probe(-g.uniform(0.0, 100.0), (g.next() % 200) as f64 - 100.0);
    }
    let two53 = 9_007_199_254_740_992.0;
    for b in [two53 - 1.0, two53, two53 + 2.0, 1e300] {
        for a in [
            -1.0,
            -1.0 - f64::EPSILON,
            -1.0 + f64::EPSILON / 2.0,
            1.0 - f64::EPSILON,
        ] {
            probe(a, b);
            probe(a, -b);
        }
    }
    let got = pow_all(&x, &y).unwrap();
    let mut worst = (0, 0.0, 0.0);
    for ((&v, &a), &b) in got.iter().zip(&x).zip(&y) {
        let u = ulps(v, a.powf(b));
        if u > worst.0 {
            worst = (u, a, b);
        }
    }
    assert!(
        worst.0 <= 2,
        "pow: {} ulp at {:e}^{:e}",
        worst.0,
        worst.1,
        worst.2
    );
}

#[test]
fn avx512_pow_f64_special_cases_match_c() {
    if no_avx512() {
        return;
    }
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let vals = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        -3.0,
        1.0 / 3.0,
        inf,
        -inf,
        nan,
        -nan,
        5e-324,
        -5e-324,
        1e308,
        -1e308,
        9_007_199_254_740_993.0,
        1e-310,
    ];
    let (mut x, mut y): (Vec<f64>, Vec<f64>) = vals
        .iter()
        .flat_map(|&a| vals.iter().map(move |&b| (a, b)))
        .unzip();
    for (a, b) in [
        (-8.0, 1.0 / 3.0),
        (2.0, 1024.0),
        (2.0, -1074.0),
        (2.0, -1075.0),
        (-2.0, 1023.0),
        (10.0, 308.5),
        (0.5, 1074.5),
    ] {
        x.push(a);
        y.push(b);
    }
    let got = pow_all(&x, &y).unwrap();
    for ((&v, &a), &b) in got.iter().zip(&x).zip(&y) {
        let want = a.powf(b);
        assert!(c_like(v, want, 2), "pow({a}, {b}) = {v}, libm says {want}");
    }
}

#[test]
fn avx512_pow_f64_splats_and_tails() {
    if no_avx512() {
        return;
    }
    let mut g = Rng(7);
    let x: Vec<f64> = (0..19).map(|_| g.uniform(0.01, 10.0)).collect();
    let y: Vec<f64> = (0..19).map(|_| g.uniform(-3.0, 3.0)).collect();
    for n in [0, 1, 7, 8, 9, 19] {
        let mut out = vec![f64::NAN; n];
        let check = |out: &[f64], f: &dyn Fn(usize) -> (f64, f64)| {
            for (i, &v) in out.iter().enumerate() {
                let (a, b) = f(i);
                assert!(ulps(v, a.powf(b)) <= 2, "n {n} [{i}]: pow({a}, {b}) = {v}");
            }
        };
        assert!(pow_slices_avx512(Arg::Slice(&x), Arg::Slice(&y), &mut out));
        check(&out, &|i| (x[i], y[i]));
        assert!(pow_slices_avx512(Arg::Slice(&x), Arg::Splat(2.5), &mut out));
        check(&out, &|i| (x[i], 2.5));
        assert!(pow_slices_avx512(Arg::Splat(1.7), Arg::Slice(&y), &mut out));
        check(&out, &|i| (1.7, y[i]));
        assert!(pow_slices_avx512(
            Arg::Splat(-2.0),
            Arg::Splat(3.0),
            &mut out
        ));
        assert!(out.iter().all(|&v| v == -8.0));
    }
}
