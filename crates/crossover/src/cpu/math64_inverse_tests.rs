//! Tests of [`super`] against libm (glibc's, through Rust's `f64`
//! methods): ulp distances over 200,000 points per range, special values
//! bit for bit.

use super::*;
use crate::cpu::math64::tests::{c_like, check, gen, Rng, N, SPECIAL};

type F = fn(f64) -> f64;

#[test]
fn atan_within_1_ulp() {
    for xs in [
        gen(200, |g| g.log_uniform(-60.0, -26.0, true)),
        gen(201, |g| g.uniform(-3.0, 3.0)),
        gen(202, |g| g.log_uniform(-30.0, 70.0, true)),
        gen(203, |g| f64::from_bits(g.next())),
        // Around the reduction boundaries 7/16, 11/16, 19/16, 39/16.
        gen(204, |g| {
            let b = [0.4375, 0.6875, 1.1875, 2.4375][(g.next() % 4) as usize];
            b + g.uniform(-1e-3, 1e-3)
        }),
    ] {
        check("atan", 1, atan_f64, f64::atan, xs);
    }
    for x in SPECIAL.into_iter().chain([1e-300, -TINY, 1e20, -1e20]) {
        assert!(c_like(atan_f64(x), x.atan(), 1), "atan({x:e})");
    }
}

#[test]
fn asin_acos_within_1_ulp() {
    asin_acos_within_1_ulp_of(asin_f64, acos_f64);
}

/// `asin` and `acos` (this module's, or the AVX-512 kernels') within 1 ulp
/// of glibc.
pub(crate) fn asin_acos_within_1_ulp_of(asin: F, acos: F) {
    for xs in [
        gen(210, |g| g.log_uniform(-60.0, -26.0, true)),
        gen(211, |g| g.uniform(-1.0, 1.0)),
        gen(212, |g| g.log_uniform(-26.0, 0.0, true)),
        // Near ±1 (the square-root forms) and near the 0.5 and 0.975 seams.
        gen(213, |g| {
            let v = 1.0 - g.log_uniform(-53.0, -3.0, false);
            if g.next() & 1 == 1 {
                -v
            } else {
                v
            }
        }),
        gen(214, |g| g.uniform(0.49, 0.51)),
        gen(215, |g| -g.uniform(0.97, 0.98)),
    ] {
        check("asin", 1, asin, f64::asin, xs.clone());
        check("acos", 1, acos, f64::acos, xs);
    }
    let edges = [1.0 + f64::EPSILON, -1.0 - f64::EPSILON, 0.5, -0.5, 1e-300];
    for (name, f, libm) in [("asin", asin, f64::asin as F), ("acos", acos, f64::acos)] {
        for x in SPECIAL.into_iter().chain(edges) {
            assert!(c_like(f(x), libm(x), 1), "{name}({x:e}) = {:e}", f(x));
        }
    }
}

#[test]
fn atan2_within_1_ulp() {
    let mut g = Rng(220);
    let mut worst = (0, 0.0, 0.0);
    let mut probe = |y: f64, x: f64| {
        let u = crate::cpu::math64::tests::ulps(atan2_f64(y, x), y.atan2(x));
        if u > worst.0 {
            worst = (u, y, x);
        }
    };
    for _ in 0..N {
        probe(g.uniform(-10.0, 10.0), g.uniform(-10.0, 10.0));
        probe(
            g.log_uniform(-80.0, 80.0, true),
            g.log_uniform(-80.0, 80.0, true),
        );
        // Ratios past 2^60 either way, and arbitrary doubles.
        probe(
            g.log_uniform(-1074.0, 1024.0, true),
            g.log_uniform(-1074.0, 1024.0, true),
        );
        probe(f64::from_bits(g.next()), f64::from_bits(g.next()));
        // Near the diagonals (ratio about ±1).
        let x = g.uniform(-5.0, 5.0);
        probe(x * (1.0 + g.uniform(-1e-6, 1e-6)), x);
    }
    assert!(
        worst.0 <= 1,
        "atan2: {} ulp at ({:e}, {:e})",
        worst.0,
        worst.1,
        worst.2
    );
}

#[test]
fn atan2_special_cases_match_c() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let vals = [
        0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 1e300, -1e300, 5e-324, -5e-324, inf, -inf, nan,
    ];
    for y in vals {
        for x in vals {
            let (got, want) = (atan2_f64(y, x), y.atan2(x));
            assert!(c_like(got, want, 1), "atan2({y}, {x}) = {got}, libm {want}");
        }
    }
}
