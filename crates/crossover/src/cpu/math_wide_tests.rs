//! Accuracy of the float32 functions computed in f64 (and of math.rs's
//! native log2, log10 and exp2): within 1 ulp of the
//! correctly rounded result (libm's f64 function, rounded) over hundreds of
//! thousands of points per range, and C99's special cases exactly.

use super::*;
use crate::cpu::math::{
    self,
    tests::{max_ulp, points, ulp_diff},
};

/// Checks `f` against `r` on each range (lo, hi, points): at most 1 ulp.
fn within_1_ulp(name: &str, f: impl Fn(f32) -> f32, r: impl Fn(f64) -> f64, ranges: &[(f32, f32)]) {
    for &(lo, hi) in ranges {
        let (u, x) = max_ulp(&f, &r, points(lo, hi, 200_000));
        assert!(u <= 1.0, "{name}: {u} ulp at {x} (range {lo}..{hi})");
    }
}

/// Exactly equal, NaN equal to NaN, and the sign of zero checked.
fn same(got: f32, want: f32) -> bool {
    (got.is_nan() && want.is_nan())
        || (got == want && got.is_sign_negative() == want.is_sign_negative())
}

const SPECIALS: [f32; 12] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    f32::MIN_POSITIVE,
    1e-45,
    f32::MAX,
];

#[test]
fn logarithms_within_1_ulp() {
    let ranges = [
        (1e-44, 1e-38),
        (1e-30, 10.0),
        (0.5, 2.0),
        (0.999, 1.001),
        (1.0, 3.0e38),
    ];
    within_1_ulp("log2", math::log2_f32, f64::log2, &ranges);
    within_1_ulp("log10", math::log10_f32, f64::log10, &ranges);
    let ranges = [
        (-0.999_999_9, -0.5),
        (-0.5, 0.5),
        (-1e-3, 1e-3),
        (-1e-7, 1e-7),
        (-1e-30, 1e-30),
        (0.5, 3.0e38),
    ];
    within_1_ulp("log1p", log1p_f32, f64::ln_1p, &ranges);
    for x in SPECIALS {
        let d = x as f64;
        assert!(same(math::log2_f32(x), d.log2() as f32), "log2({x})");
        assert!(same(math::log10_f32(x), d.log10() as f32), "log10({x})");
        assert!(same(log1p_f32(x), d.ln_1p() as f32), "log1p({x})");
    }
    assert!(log1p_f32(-2.0).is_nan() && log1p_f32(-1.0) == f32::NEG_INFINITY);
}

#[test]
fn exponentials_within_1_ulp() {
    let ranges = [
        (-150.0, 128.0),
        (-1.0, 1.0),
        (-1e-3, 1e-3),
        (-1e-9, 1e-9),
        (-149.9, -126.0),
    ];
    within_1_ulp("exp2", math::exp2_f32, f64::exp2, &ranges);
    let ranges = [
        (-104.0, 88.7),
        (-1.0, 1.0),
        (-2e-3, 2e-3),
        (-1e-7, 1e-7),
        (-1e-30, 1e-30),
    ];
    within_1_ulp("expm1", expm1_f32, f64::exp_m1, &ranges);
    for x in SPECIALS
        .into_iter()
        .chain([128.0, 200.0, -200.0, 88.8, -150.0])
    {
        let d = x as f64;
        // Exact at integers and non-finite values; within 1 ulp elsewhere.
        if x.fract() == 0.0 || !x.is_finite() {
            assert!(same(math::exp2_f32(x), d.exp2() as f32), "exp2({x})");
        } else {
            assert!(ulp_diff(math::exp2_f32(x), d.exp2()) <= 1.0, "exp2({x})");
        }
        assert!(same(expm1_f32(x), d.exp_m1() as f32), "expm1({x})");
    }
}

#[test]
fn hyperbolic_functions_within_1_ulp() {
    let ranges = [
        (-89.4, 89.4),
        (-2.0, 2.0),
        (-2e-3, 2e-3),
        (-1e-8, 1e-8),
        (-1e-38, 1e-38),
    ];
    within_1_ulp("sinh", sinh_f32, f64::sinh, &ranges);
    within_1_ulp("cosh", cosh_f32, f64::cosh, &ranges);
    within_1_ulp(
        "asinh",
        asinh_f32,
        f64::asinh,
        &[(-3e38, 3e38), (-3.0, 3.0), (-2e-3, 2e-3), (-1e-30, 1e-30)],
    );
    within_1_ulp(
        "acosh",
        acosh_f32,
        f64::acosh,
        &[(1.0, 1.001), (1.0, 10.0), (1.0, 3e38)],
    );
    within_1_ulp(
        "atanh",
        atanh_f32,
        f64::atanh,
        &[(-1.0, 1.0), (0.99, 1.0), (-2e-3, 2e-3), (-1e-30, 1e-30)],
    );
    for x in SPECIALS.into_iter().chain([90.0, -90.0, 2.0, -2.0, 1.5]) {
        let d = x as f64;
        assert!(same(sinh_f32(x), d.sinh() as f32), "sinh({x})");
        assert!(same(cosh_f32(x), d.cosh() as f32), "cosh({x})");
        assert!(same(asinh_f32(x), d.asinh() as f32), "asinh({x})");
        assert!(same(acosh_f32(x), d.acosh() as f32), "acosh({x})");
        assert!(same(atanh_f32(x), d.atanh() as f32), "atanh({x})");
    }
}

#[test]
fn inverse_trig_within_1_ulp() {
    let ranges = [
        (-1.0, 1.0),
        (-1e-3, 1e-3),
        (-1e-30, 1e-30),
        (0.999, 1.0),
        (-1.0, -0.999),
    ];
    within_1_ulp("asin", asin_f32, f64::asin, &ranges);
    within_1_ulp("acos", acos_f32, f64::acos, &ranges);
    let ranges = [
        (-3e38, 3e38),
        (-10.0, 10.0),
        (0.3, 2.5),
        (-1e-3, 1e-3),
        (-1e-30, 1e-30),
    ];
    within_1_ulp("atan", atan_f32, f64::atan, &ranges);
    for x in SPECIALS
        .into_iter()
        .chain([1.5, -1.5, 0.414_213_57, 2.414_213_6])
    {
        let d = x as f64;
        assert!(same(asin_f32(x), d.asin() as f32), "asin({x})");
        assert!(same(acos_f32(x), d.acos() as f32), "acos({x})");
        assert!(same(atan_f32(x), d.atan() as f32), "atan({x})");
    }
}

#[test]
fn atan2_within_1_ulp_and_c99_special_cases() {
    let ys: Vec<f32> = points(-1e3, 1e3, 700).collect();
    let xs: Vec<f32> = points(-2e3, 2e3, 700).collect();
    let mut worst = (0.0, 0.0, 0.0);
    for &y in &ys {
        for &x in &xs {
            let u = ulp_diff(atan2_f32(y, x), (y as f64).atan2(x as f64));
            if u > worst.0 {
                worst = (u, y, x);
            }
        }
    }
    assert!(
        worst.0 <= 1.0,
        "atan2: {} ulp at ({}, {})",
        worst.0,
        worst.1,
        worst.2
    );
    for y in SPECIALS {
        for x in SPECIALS {
            let want = (y as f64).atan2(x as f64) as f32;
            assert!(
                same(atan2_f32(y, x), want),
                "atan2({y}, {x}) = {}, want {want}",
                atan2_f32(y, x)
            );
        }
    }
}
