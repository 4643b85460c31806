//! Accuracy of the native float32 functions of `math32_hyp` (within 2 ulp)
//! and of math.rs's log2, log10 and exp2 (within 1 ulp) against the
//! correctly rounded result (libm's f64 function, rounded) over hundreds of
//! thousands of points per range, and C99's special cases exactly.

use super::*;
use crate::cpu::math::{
    self,
    tests::{max_ulp, points, ulp_diff},
};
use crate::cpu::math64::tests::Rng;

/// Checks `f` against `r` on each range (lo, hi): at most `bound` ulp
/// over 200,000 points (half random, half a uniform grid) and, for
/// positive ranges, 200,000 log-spaced ones.
pub(in crate::cpu) fn within_ulp(
    name: &str,
    bound: f64,
    f: impl Fn(f32) -> f32,
    r: impl Fn(f64) -> f64,
    ranges: &[(f32, f32)],
) {
    for &(lo, hi) in ranges {
        let (u, x) = max_ulp(&f, &r, points(lo, hi, 200_000));
        assert!(u <= bound, "{name}: {u} ulp at {x} (range {lo}..{hi})");
        if lo > 0.0 {
            let (l0, l1) = (lo.ln(), hi.ln());
            let logs = (0..200_000).map(|i| (l0 + (l1 - l0) * (i as f32 / 200_000.0)).exp());
            let (u, x) = max_ulp(&f, &r, logs.filter(|x| *x <= hi));
            assert!(u <= bound, "{name}: {u} ulp at {x} (log range {lo}..{hi})");
        }
    }
}

pub(in crate::cpu) fn within_1_ulp(
    name: &str,
    f: impl Fn(f32) -> f32,
    r: impl Fn(f64) -> f64,
    ranges: &[(f32, f32)],
) {
    within_ulp(name, 1.0, f, r, ranges);
}

/// Exactly equal, NaN equal to NaN, and the sign of zero checked.
pub(in crate::cpu) fn same(got: f32, want: f32) -> bool {
    (got.is_nan() && want.is_nan())
        || (got == want && got.is_sign_negative() == want.is_sign_negative())
}

/// Special results (zeros, infinities, NaN) exactly, others within
/// `bound` ulp.
pub(in crate::cpu) fn special_or_within(got: f32, want: f64, bound: f64) -> bool {
    let w = want as f32;
    if w == 0.0 || !w.is_finite() {
        same(got, w)
    } else {
        ulp_diff(got, want) <= bound
    }
}

pub(in crate::cpu) const SPECIALS: [f32; 12] = [
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
fn logarithms_within_1_or_2_ulp() {
    let ranges = [
        (1e-44, 1e-38),
        (1e-30, 10.0),
        (0.5, 2.0),
        (0.999, 1.001),
        (1.0, 3.0e38),
    ];
    within_1_ulp("log2", math::log2_f32, f64::log2, &ranges);
    within_1_ulp("log10", math::log10_f32, f64::log10, &ranges);
    log1p_within(2.0, log1p_f32);
    for x in SPECIALS {
        let d = x as f64;
        assert!(same(math::log2_f32(x), d.log2() as f32), "log2({x})");
        assert!(same(math::log10_f32(x), d.log10() as f32), "log10({x})");
    }
}

/// `f` as float32 log1p: within `bound` ulp of the correctly rounded value
/// over the ranges, and C's special values (the portable form and the
/// AVX-512 kernel of `math_log1p512`).
pub(in crate::cpu) fn log1p_within(bound: f64, f: impl Fn(f32) -> f32) {
    let ranges = [
        (-0.999_999_9, -0.5),
        (-0.5, 0.5),
        (-1e-3, 1e-3),
        (-1e-7, 1e-7),
        (-1e-30, 1e-30),
        (0.5, 3.0e38),
        (1e-44, 1.0),
    ];
    within_ulp("log1p", bound, &f, f64::ln_1p, &ranges);
    for x in SPECIALS {
        assert!(
            special_or_within(f(x), (x as f64).ln_1p(), bound),
            "log1p({x})"
        );
    }
    assert!(f(-2.0).is_nan() && f(-1.0) == f32::NEG_INFINITY);
}

#[test]
fn exponentials_within_1_or_2_ulp() {
    exp2_within_1_ulp(math::exp2_f32);
    let ranges = [
        (-104.0, 88.7),
        (-1.0, 1.0),
        (-2e-3, 2e-3),
        (-1e-7, 1e-7),
        (-1e-30, 1e-30),
    ];
    within_ulp("expm1", 2.0, expm1_f32, f64::exp_m1, &ranges);
    for x in SPECIALS.into_iter().chain(EXP_EDGES) {
        assert!(
            special_or_within(expm1_f32(x), (x as f64).exp_m1(), 2.0),
            "expm1({x})"
        );
    }
}

/// Past the exponentials' and hyperbolics' overflow and underflow.
const EXP_EDGES: [f32; 8] = [128.0, 200.0, -200.0, 88.8, -150.0, 90.0, -90.0, 1.5];

/// `f` as float32 exp2: within 1 ulp of the correctly rounded value over
/// its range (subnormal results included), exact at integers and C's
/// special values (the portable form and the AVX-512 kernel of
/// `math32_exp512`).
pub(in crate::cpu) fn exp2_within_1_ulp(f: impl Fn(f32) -> f32) {
    let ranges = [
        (-150.0, 128.0),
        (-1.0, 1.0),
        (-1e-3, 1e-3),
        (-1e-9, 1e-9),
        (-149.9, -126.0),
    ];
    within_1_ulp("exp2", &f, f64::exp2, &ranges);
    for x in SPECIALS.into_iter().chain(EXP_EDGES) {
        let d = x as f64;
        // Exact at integers and non-finite values; within 1 ulp elsewhere.
        if x.fract() == 0.0 || !x.is_finite() {
            assert!(same(f(x), d.exp2() as f32), "exp2({x})");
        } else {
            assert!(ulp_diff(f(x), d.exp2()) <= 1.0, "exp2({x})");
        }
    }
}

#[test]
fn hyperbolic_functions_within_2_ulp() {
    sinh_cosh_within(2.0, sinh_f32, cosh_f32);
    inverse_hyperbolics_within(2.0, asinh_f32, acosh_f32, atanh_f32);
}

/// `sinh` and `cosh` as float32's: within `bound` ulp of the correctly
/// rounded value over the ranges (up to and past overflow, across |x| = 1),
/// and C's special values (the portable forms and the AVX-512 kernels of
/// `math32_exp512`).
pub(in crate::cpu) fn sinh_cosh_within(
    bound: f64,
    sinh: impl Fn(f32) -> f32,
    cosh: impl Fn(f32) -> f32,
) {
    let ranges = [
        (-89.4, 89.4),
        (88.0, 89.5),
        (0.9, 1.1),
        (-2.0, 2.0),
        (-2e-3, 2e-3),
        (-1e-8, 1e-8),
        (-1e-38, 1e-38),
        (1e-44, 89.0),
    ];
    within_ulp("sinh", bound, &sinh, f64::sinh, &ranges);
    within_ulp("cosh", bound, &cosh, f64::cosh, &ranges);
    for x in SPECIALS.into_iter().chain(EXP_EDGES) {
        let d = x as f64;
        assert!(special_or_within(sinh(x), d.sinh(), bound), "sinh({x})");
        assert!(special_or_within(cosh(x), d.cosh(), bound), "cosh({x})");
    }
}

/// `asinh`, `acosh`, `atanh` as float32's: within `bound` ulp of the
/// correctly rounded value over the ranges, and C's special values (the
/// portable forms and the AVX-512 kernels of `math_log1p512`).
pub(in crate::cpu) fn inverse_hyperbolics_within(
    bound: f64,
    asinh: impl Fn(f32) -> f32,
    acosh: impl Fn(f32) -> f32,
    atanh: impl Fn(f32) -> f32,
) {
    within_ulp(
        "asinh",
        bound,
        &asinh,
        f64::asinh,
        &[
            (-3e38, 3e38),
            (-3.0, 3.0),
            (-2e-3, 2e-3),
            (-1e-30, 1e-30),
            (1e-44, 3e38),
            (1e7, 1e9),
        ],
    );
    within_ulp(
        "acosh",
        bound,
        &acosh,
        f64::acosh,
        &[(1.0, 1.001), (1.0, 10.0), (1.0, 3e38)],
    );
    within_ulp(
        "atanh",
        bound,
        &atanh,
        f64::atanh,
        &[
            (-1.0, 1.0),
            (0.99, 1.0),
            (-2e-3, 2e-3),
            (-1e-30, 1e-30),
            (1e-44, 1.0),
        ],
    );
    for x in SPECIALS.into_iter().chain([90.0, -90.0, 2.0, -2.0, 1.5]) {
        let d = x as f64;
        assert!(special_or_within(asinh(x), d.asinh(), bound), "asinh({x})");
        assert!(special_or_within(acosh(x), d.acosh(), bound), "acosh({x})");
        assert!(special_or_within(atanh(x), d.atanh(), bound), "atanh({x})");
    }
}

/// A float32 kernel over a chunk (the AVX-512 ones: false where the CPU
/// has none).
pub(in crate::cpu) type Slice32 = fn(&[f32], &mut [f32]) -> bool;

/// `f` on one float32 point (the other lanes of its register masked off).
pub(in crate::cpu) fn one_point32(f: Slice32, x: f32) -> f32 {
    let mut out = [0.0];
    assert!(f(&[x], &mut out), "no AVX-512 kernel");
    out[0]
}

/// Whole registers and each tail length (0 to 33 points, and 1,000) give
/// each point of `point`'s sets the value it has alone, bit for bit: no
/// lane reads another, none is skipped.
pub(in crate::cpu) fn lanes_as_one_point32(
    name: &str,
    f: Slice32,
    seed: u64,
    point: fn(usize, &mut Rng) -> f32,
) {
    let mut g = Rng(seed);
    for n in (0..=33).chain([1000]) {
        let xs: Vec<f32> = (0..n).map(|i| point(i, &mut g)).collect();
        let mut out = vec![f32::NAN; n];
        assert!(f(&xs, &mut out));
        for (&x, &y) in xs.iter().zip(&out) {
            let want = one_point32(f, x);
            assert!(
                y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()),
                "{name}({x:e}) of {n} points: {y:e}, alone {want:e}"
            );
        }
    }
}
