//! Vectorisable f64 expm1, log1p and the hyperbolic functions with their
//! inverses, in the style of [`super::math64`]: branch-free scalar code
//! (every fdlibm branch computed and picked by a select), marked
//! `#[inline(always)]` so that the SIMD-dispatched loops turn it into
//! AVX-512/AVX2 lanes (libm is a call per element).
//!
//! Algorithms: expm1 is fdlibm's `s_expm1.c` (all of its reconstruction
//! cases as selects); log1p is fdlibm's `s_log1p.c`, its correction term
//! taken from an exact two-sum; tanh is `(1 - E)/(1 + E)`, E = e^-2|x|,
//! and sinh and cosh (a Taylor polynomial near zero) `2^(n-1) ((1 + p) ±
//! 2^-2n / (1 + p))`, with `e^x = 2^n (1 + p)` from math64's exp kernel in
//! double-double, so each rounds about once;
//! asinh, acosh and atanh are musl's forms (as the `libm` crate, used
//! before) on one shared log1p-style kernel that also takes `log(u)` and
//! `log(u) + ln 2`, with the rounding errors of their arguments carried
//! into it (musl's are up to 2 ulp off without).
//!
//! Accuracy (`math64_hyp_tests.rs`): expm1 and log1p within 1 ulp of
//! glibc; tanh, sinh, cosh, asinh, acosh, atanh within 2 of glibc, which
//! is itself up to 1.8 ulp off there, while these are within 0.94 ulp of
//! the true value (mpmath on sampled points).

// Coefficients are quoted exactly as published.
#![allow(clippy::excessive_precision)]

use super::math64::{
    exp_poly, fast_two_sum, frexp_sqrt2, log_poly, pow2i, scale2, two_sum, LN2_HI, LN2_LO,
    ROUND_MAGIC,
};

/// 2^-54 (below it expm1, log1p, tanh, sinh, asinh and atanh return x).
const TINY: f64 = 5.551_115_123_125_783e-17;

/// e^x - 1 (fdlibm's `s_expm1.c`, branch-free): -1 below about -38,
/// inf above 709.78, x itself for |x| < 2^-54 (keeping -0).
#[inline(always)]
pub fn expm1_f64(x: f64) -> f64 {
    const O_THRESHOLD: f64 = 7.09782712893383973096e+02;
    const Q1: f64 = -3.33333333333331316428e-02;
    const Q2: f64 = 1.58730158725481460165e-03;
    const Q3: f64 = -7.93650757867487942473e-05;
    const Q4: f64 = 4.00821782732936239552e-06;
    const Q5: f64 = -2.01099218183624371326e-07;
    // Below -40, e^x - 1 rounds to -1 (the k <= -2 case gives it).
    let xc = x.clamp(-40.0, 710.0);
    let k = xc.mul_add(std::f64::consts::LOG2_E, ROUND_MAGIC) - ROUND_MAGIC;
    // k LN2_HI is exact (|k| < 2^11), so hi is too.
    let hi = (-k).mul_add(LN2_HI, xc);
    let lo = k * LN2_LO;
    let r = hi - lo;
    let c = (hi - r) - lo;
    let hfx = 0.5 * r;
    let hxs = r * hfx;
    let r1 = Q5
        .mul_add(hxs, Q4)
        .mul_add(hxs, Q3)
        .mul_add(hxs, Q2)
        .mul_add(hxs, Q1)
        .mul_add(hxs, 1.0);
    let t = 3.0 - r1 * hfx;
    let e0 = hxs * ((r1 - t) / (6.0 - r * t));
    // k = 0: c is 0.
    let v0 = r - (r * e0 - hxs);
    let e = r * (e0 - c) - c - hxs;
    let vm1 = 0.5 * (r - e) - 0.5;
    let vp1 = if r < -0.25 {
        -2.0 * (e - (r + 0.5))
    } else {
        1.0 + 2.0 * (r - e)
    };
    // k <= -2 or k > 56: the final -1 only rounds (scale2 reaches 2^1024).
    let far = scale2(r - e + 1.0, k) - 1.0;
    let twopk = pow2i(k.clamp(2.0, 56.0));
    let uf = pow2i(-k.clamp(2.0, 56.0));
    let near_lo = (r - e + (1.0 - uf)) * twopk;
    let near_hi = (r - (e + uf) + 1.0) * twopk;
    let v = if k < 20.0 { near_lo } else { near_hi };
    let v = if !(-1.0..=56.0).contains(&k) { far } else { v };
    let v = if k == 1.0 { vp1 } else { v };
    let v = if k == -1.0 { vm1 } else { v };
    let v = if k == 0.0 { v0 } else { v };
    let v = if x > O_THRESHOLD { f64::INFINITY } else { v };
    if x.abs() < TINY || x.is_nan() {
        x
    } else {
        v
    }
}

/// `ln(u + err) + kadd ln 2` for positive u (u = inf or 0 give garbage,
/// callers select their special values), err a rounding error of u:
/// fdlibm's `s_log1p.c` kernel. Where u lies in [sqrt(1/2), sqrt(2)),
/// `y + y_lo` must be `u + err - 1` exactly (log1p's argument, y_lo a
/// low part or 0): fdlibm then takes f = y, y_lo the correction term.
#[inline(always)]
fn log1p_kernel(u: f64, err: f64, y: f64, y_lo: f64, kadd: f64) -> f64 {
    let (m, dk) = frexp_sqrt2(u);
    let near = dk == 0.0;
    let f = pick(near, y, m - 1.0);
    // c = (err or y_lo) / u is a correction below an ulp of the result:
    // a float32 reciprocal of m is plenty, and spares a float64 division
    // (the slowest vector instruction here).
    let c = if near { y_lo } else { err } * pow2i((-dk).max(-1022.0)) * recip32(m);
    let dk = dk + kadd;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let r = log_poly(s);
    s * (hfsq + r) + dk.mul_add(LN2_LO, c) - hfsq + f + dk * LN2_HI
}

/// `if c { a } else { b }` on the bits: with a plain select LLVM pushed
/// the division that follows into both arms (two vector divisions).
#[inline(always)]
fn pick(c: bool, a: f64, b: f64) -> f64 {
    let m = 0u64.wrapping_sub(c as u64);
    f64::from_bits((a.to_bits() & m) | (b.to_bits() & !m))
}

/// `1/v` to float32 precision (v within float32's range), for
/// corrections far below the result's ulp.
#[inline(always)]
fn recip32(v: f64) -> f64 {
    (1.0 / v as f32) as f64
}

/// log(1 + y) for y >= 0 or y in (-1, 0), without special values.
#[inline(always)]
fn log1p_plain(y: f64) -> f64 {
    let (u, err) = two_sum(1.0, y);
    log1p_kernel(u, err, y, 0.0, 0.0)
}

/// ln(1 + x): -inf at -1, NaN below, x itself for |x| < 2^-54.
#[inline(always)]
pub fn log1p_f64(x: f64) -> f64 {
    let v = log1p_plain(x);
    let v = if x == f64::INFINITY { x } else { v };
    let v = if x == -1.0 { f64::NEG_INFINITY } else { v };
    let v = if x < -1.0 { f64::NAN } else { v };
    if x.abs() < TINY || x.is_nan() {
        x
    } else {
        v
    }
}

/// `e^x = 2^n (1 + p + p_lo)` for |x| < 746, p_lo about 2^-53 p: the exp
/// kernel with the rounding errors of its reduced argument and of its last
/// step kept (sinh, cosh and tanh then round once, not three times).
#[inline(always)]
fn exp_dd(x: f64) -> (f64, f64, f64) {
    let n = x.mul_add(std::f64::consts::LOG2_E, ROUND_MAGIC) - ROUND_MAGIC;
    let hi = (-n).mul_add(LN2_HI, x);
    let r = (-n).mul_add(LN2_LO, hi);
    let r_lo = (-n).mul_add(LN2_LO, hi - r);
    let rr = r * r;
    let u = exp_poly(r);
    let p = rr.mul_add(u, r);
    // r - p is exact (p/r lies in [0.84, 1.19]).
    let p_lo = rr.mul_add(u, r - p);
    // e^(r + r_lo) = (1 + p) (1 + r_lo).
    let p_lo = (1.0 + p).mul_add(r_lo, p_lo);
    (n, p, p_lo)
}

/// tanh: `(1 - E) / (1 + E)`, E = e^-2|x|, numerator and denominator in
/// double-double from [`exp_dd`] (fdlibm's expm1 form, as glibc, is up to
/// 3 ulp from the true value near 0.5). ±1 from |x| = 22.
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    let a = x.abs().min(22.0);
    let (n, p, p_lo) = exp_dd(-2.0 * a);
    let s = pow2i(n);
    // 1 - s and 1 + s are exact while n >= -52 (|x| < 18); their errors
    // beyond are kept too (else 1.5 ulp near 18.5).
    let (n1, n1e) = fast_two_sum(1.0, -s);
    let (d1, d1e) = fast_two_sum(1.0, s);
    let (nh, nl) = two_sum(n1, -s * p);
    let nl = (-s).mul_add(p_lo, nl + n1e);
    let (dh, dl) = two_sum(d1, s * p);
    let dl = s.mul_add(p_lo, dl + d1e);
    let q = nh / dh;
    let rem = (-q).mul_add(dh, nh) + (-q).mul_add(dl, nl);
    let z = q + rem * recip32(dh);
    if x.abs() < TINY || x.is_nan() {
        x
    } else {
        z.copysign(x)
    }
}

/// `(e^a ± e^-a) / 2` for a >= ~0.34 (NaN stays NaN): with e^a =
/// 2^n (1 + p), `2^(n-1) ((1 + p) ± 2^-2n / (1 + p))`, the sum in
/// double-double and rounded once at the end; overflows to inf past
/// 710.47.
#[inline(always)]
fn exp_pm_half(a: f64, minus: bool) -> f64 {
    let (n, p, p_lo) = exp_dd(a.clamp(0.0, 711.0));
    let (dh, dl) = two_sum(1.0, p);
    let dl = dl + p_lo;
    // 2^-2n underflows harmlessly past n = 511 (the term is far below an
    // ulp there).
    let c = pow2i((-2.0 * n).max(-1022.0));
    let c = if minus { -c } else { c };
    let qh = c / dh;
    let ql = ((-qh).mul_add(dh, c) - qh * dl) * recip32(dh);
    let (h, l) = two_sum(dh, qh);
    scale2(h + (l + (dl + ql)), n - 1.0)
}

/// 1/(2k+1)! for k = 9 down to 1: sinh's Taylor series below 1 (here and
/// in [`super::math64_exp512`]).
pub(super) const SINH_TAYLOR: [f64; 9] = [
    8.22063524662433e-18,
    2.8114572543455206e-15,
    7.647163731819816e-13,
    1.6059043836821613e-10,
    2.505210838544172e-8,
    2.7557319223985893e-6,
    1.984126984126984e-4,
    8.333333333333333e-3,
    0.16666666666666666,
];

/// sinh: Taylor to x^19 below 1, `exp_pm_half` above.
#[inline(always)]
pub fn sinh_f64(x: f64) -> f64 {
    let a = x.abs();
    let z = a * a;
    let p = SINH_TAYLOR[1..]
        .iter()
        .fold(SINH_TAYLOR[0], |p, &q| p.mul_add(z, q));
    let small = (a * z).mul_add(p, a);
    let v = if a < 1.0 { small } else { exp_pm_half(a, true) };
    // Keeps -0 and NaN.
    if a < TINY || x.is_nan() {
        x
    } else {
        v.copysign(x)
    }
}

/// cosh: Taylor to x^14 below ln2/2, `exp_pm_half` above.
#[inline(always)]
pub fn cosh_f64(x: f64) -> f64 {
    let a = x.abs();
    let z = a * a;
    // 1/(2k)! for k = 1..7.
    let p = 1.1470745597729725e-11f64
        .mul_add(z, 2.08767569878681e-9)
        .mul_add(z, 2.755731922398589e-7)
        .mul_add(z, 2.48015873015873e-5)
        .mul_add(z, 1.388888888888889e-3)
        .mul_add(z, 0.041666666666666664)
        .mul_add(z, 0.5);
    let small = z.mul_add(p, 1.0);
    if a < 0.5 * std::f64::consts::LN_2 {
        small
    } else {
        exp_pm_half(a, false)
    }
}

/// asinh (musl's forms): `log(2a + 1/(sqrt(a^2 + 1) + a))` from 2,
/// `log1p(a + a^2/(sqrt(a^2 + 1) + 1))` below, on one kernel.
#[inline(always)]
pub fn asinh_f64(x: f64) -> f64 {
    let a = x.abs();
    let z = a * a;
    let h = (z + 1.0).sqrt();
    let mid = a >= 2.0;
    // One division serves both forms.
    let num = pick(mid, 1.0, z);
    let den = h + pick(mid, a, 1.0);
    let q = num / den;
    // The rounding errors of a^2, q and y are carried in y_lo (musl's
    // asinh, without them, is up to 1.6 ulp off).
    let num_lo = pick(mid, 0.0, a.mul_add(a, -z));
    let q_lo = ((-q).mul_add(den, num) + num_lo) * recip32(den);
    let (y, y_lo) = two_sum(a, q);
    let y_lo = y_lo + q_lo;
    let (u1, err1) = two_sum(1.0, y);
    // From 2: log(2a + q) = log(a + q/2) + ln 2, which cannot overflow
    // (q is 0 once a^2 does: musl's log(a) + ln 2 from 2^26).
    let (u2, err2) = two_sum(a, 0.5 * q);
    let u = pick(mid, u2, u1);
    let err = pick(mid, err2, err1 + y_lo);
    let v = log1p_kernel(u, err, y, y_lo, pick(mid, 1.0, 0.0));
    let v = if a == f64::INFINITY { a } else { v };
    if a < TINY || x.is_nan() {
        x
    } else {
        v.copysign(x)
    }
}

/// acosh (musl's forms): `log(x) + ln 2` from 2^26, `log(2x - 1/(x +
/// sqrt(x^2 - 1)))` from 2, `log1p(t + sqrt(2t + t^2))`, t = x - 1,
/// below; NaN below 1.
#[inline(always)]
pub fn acosh_f64(x: f64) -> f64 {
    // Below 2, y = t + sqrt(t^2 + 2t) in double-double: the rounding
    // errors of the square root and the sum would otherwise reach 2 ulp
    // (musl's acosh is 2 ulp off near 1.5).
    let t = x - 1.0;
    let tt = t * t;
    let (w, w_lo) = two_sum(2.0 * t, tt);
    let w_lo = w_lo + t.mul_add(t, -tt);
    let big = x >= 67_108_864.0;
    let mid = x >= 2.0;
    // One square root serves both forms.
    let s = pick(mid, x.mul_add(x, -1.0), w).sqrt();
    let s_lo = ((-s).mul_add(s, w) + w_lo) * (0.5 * recip32(s));
    let s_lo = if w > 0.0 { s_lo } else { 0.0 };
    let (y, y_lo) = two_sum(t, s);
    let y_lo = y_lo + s_lo;
    let (u1, err1) = two_sum(1.0, y);
    let err1 = err1 + y_lo;
    let (u2, err2) = two_sum(2.0 * x, -1.0 / (x + s));
    let u = pick(mid, u2, u1);
    let u = pick(big, x, u);
    let err = pick(mid, pick(big, 0.0, err2), err1);
    let v = log1p_kernel(u, err, y, y_lo, pick(big, 1.0, 0.0));
    let v = if x == f64::INFINITY { x } else { v };
    if x < 1.0 || x.is_nan() {
        f64::NAN
    } else {
        v
    }
}

/// atanh (musl's forms): `log1p(2a + 2a^2/(1 - a)) / 2` below 1/2,
/// `log1p(2a/(1 - a)) / 2` above; ±inf at ±1, NaN beyond.
#[inline(always)]
pub fn atanh_f64(x: f64) -> f64 {
    let a = x.abs();
    let d = 1.0 - a;
    let small = a < 0.5;
    // One division for both forms; the rounding errors of 2a^2, q and y
    // are carried in y_lo (musl's atanh, without them, is up to 1.7 ulp
    // off). d = 1 - a is exact from 1/2 on.
    let num = pick(small, 2.0 * a * a, 2.0 * a);
    let num_lo = pick(small, (2.0 * a).mul_add(a, -num), 0.0);
    let q = num / d;
    let q_lo = ((-q).mul_add(d, num) + num_lo) * recip32(d);
    let (y, y_lo) = two_sum(pick(small, 2.0 * a, 0.0), q);
    let y_lo = y_lo + q_lo;
    let (u, err) = two_sum(1.0, y);
    let v = 0.5 * log1p_kernel(u, err + y_lo, y, y_lo, 0.0);
    let v = if a == 1.0 { f64::INFINITY } else { v };
    let v = if a > 1.0 { f64::NAN } else { v };
    if a < TINY || x.is_nan() {
        x
    } else {
        v.copysign(x)
    }
}

#[cfg(test)]
#[path = "math64_hyp_tests.rs"]
pub(super) mod tests;
