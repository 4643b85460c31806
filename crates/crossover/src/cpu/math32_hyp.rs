//! Float32 logarithmic, exponential and hyperbolic functions in native
//! float32 arithmetic (16 lanes with AVX-512, no f64 conversions): log1p,
//! expm1, sinh, cosh, arcsinh, arccosh, arctanh. Branch-free scalar code
//! marked `#[inline(always)]`, like `math.rs`, on its exp and log kernels
//! (Cephes' polynomials); fdlibm's and musl's reductions.
//!
//! They replace forms computed in f64 and rounded once (within 1 ulp, but
//! 8 lanes, conversions and f64 divisions: 2-4x slower).
//!
//! Accuracy (tests: `math32_hyp_tests.rs`, against the correctly rounded
//! result over dense sweeps of each domain, subnormals to overflow): all
//! within 2 ulp (measured worst: log1p 0.7, expm1 0.95, sinh and cosh 1.25,
//! arcsinh 1.1, arccosh 1.25, arctanh 1.25); C99's special values (signed
//! zeros, infinities, NaN, domain edges) exactly.

// Coefficients are quoted exactly as published.
#![allow(clippy::excessive_precision)]

use super::math::{exp_f32, log_poly, log_special};

const LN2_HI: f32 = 0.693_359_375;
const LN2_LO: f32 = -2.121_944_4e-4;
use super::math::ROUND_MAGIC_F32;

/// `if c { a } else { b }` on the bits: with a plain select LLVM pushed
/// the division that follows into both arms (two vector divisions).
#[inline(always)]
pub(super) fn pick32(c: bool, a: f32, b: f32) -> f32 {
    let m = 0u32.wrapping_sub(c as u32);
    f32::from_bits((a.to_bits() & m) | (b.to_bits() & !m))
}

/// ln(1 + x) for x > -1 without the sign of zero (log1p's core): the
/// logarithm of u = 1 + x (rounded) plus fdlibm's correction c/u, c being
/// the rounding error of 1 + x, exact in float32.
#[inline(always)]
fn log1p_core(x: f32) -> f32 {
    let u = 1.0 + x;
    // u = 2^e m, m in [sqrt(1/2), sqrt(2)), from the bits (musl's
    // reduction; u is never subnormal, and 0, inf, NaN are selected below).
    let tmp = u.to_bits().wrapping_sub(0x3f35_04f3);
    let top = tmp & 0xff80_0000;
    let f = f32::from_bits(u.to_bits().wrapping_sub(top)) - 1.0;
    let e = (top as i32 >> 23) as f32;
    let y = log_poly(f);
    // 1 - (u - x) and x - (u - 1) are exact where used (Sterbenz); from
    // u = 2^25 on, c/u is below float32's precision of the result (and
    // u = inf would make it NaN).
    let c = if e >= 2.0 {
        1.0 - (u - x)
    } else {
        x - (u - 1.0)
    };
    let c = if e < 25.0 { c / u } else { 0.0 };
    let y = e.mul_add(LN2_LO, y + c);
    log_special(u, e.mul_add(LN2_HI, f + y))
}

/// ln(1 + x) of a float32 (C's `log1pf`), within 2 ulp.
#[inline(always)]
pub fn log1p_f32(x: f32) -> f32 {
    let r = log1p_core(x);
    // +-0 (and the subnormals) as themselves: the sum above loses -0.
    if x.abs() < f32::MIN_POSITIVE {
        x
    } else {
        r
    }
}

/// e^x - 1 of a float32 (C's `expm1f`), within 2 ulp: x = n ln2 + r,
/// |r| <= ln2/2, e^r - 1 from exp_f32's polynomial, then
/// 2^n (e^r - 1) + (2^n - 1) rounded once (as 2 (h p + (h - 1/2)),
/// h = 2^(n-1), so that n = 128 near overflow needs no 2^128).
#[inline(always)]
pub fn expm1_f32(x: f32) -> f32 {
    // Below -40 the result is -1 in float32; from 89 it is inf.
    let xc = x.clamp(-40.0, 89.0);
    let t = xc.mul_add(std::f32::consts::LOG2_E, ROUND_MAGIC_F32);
    let n = t - ROUND_MAGIC_F32;
    let ni = (t.to_bits() as i32).wrapping_sub(ROUND_MAGIC_F32.to_bits() as i32);
    let r = (-n).mul_add(LN2_HI, xc);
    let r = (-n).mul_add(LN2_LO, r);
    let p = 1.987_569_15e-4f32.mul_add(r, 1.398_199_950_7e-3);
    let p = p.mul_add(r, 8.333_451_907_3e-3);
    let p = p.mul_add(r, 4.166_579_589_4e-2);
    let p = p.mul_add(r, 1.666_666_545_9e-1);
    let p = p.mul_add(r, 5.000_000_120_1e-1);
    let em1 = (p * r).mul_add(r, r);
    let h = f32::from_bits(((ni + 126) as u32) << 23);
    let v = 2.0 * em1.mul_add(h, h - 0.5);
    // Below 2^-24 expm1(x) rounds to x (subnormals and -0 kept); NaN stays.
    if x.abs() < 5.960_464_5e-8 || x.is_nan() {
        x
    } else {
        v
    }
}

/// e^a / 2 for a >= 0, and 1/e^a: near overflow (a > 88) e^(a - LN2_HI)
/// times e^(LN2_HI - ln 2), so that e^a itself need not be finite.
#[inline(always)]
fn half_exp(a: f32) -> (f32, f32) {
    let big = a > 88.0;
    let w = exp_f32(if big { a - LN2_HI } else { a });
    // e^(LN2_HI - ln 2) = e^2.1219444e-4.
    let half = if big { w * 1.000_212_2 } else { 0.5 * w };
    (half, 0.5 / w)
}

/// Hyperbolic sine of a float32, within 2 ulp: Cephes' sinhf polynomial
/// up to |x| = 1, (e^|x| - e^-|x|)/2 with the sign beyond.
#[inline(always)]
pub fn sinh_f32(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let p = 2.037_219_129_45e-4f32.mul_add(z, 8.330_283_762_39e-3);
    let p = p.mul_add(z, 1.666_671_602_11e-1);
    let small = (p * z).mul_add(x, x);
    let (half, inv) = half_exp(a);
    let large = f32::from_bits((half - inv).to_bits() | (x.to_bits() & 0x8000_0000));
    // NaN takes the polynomial (NaN).
    if a > 1.0 {
        large
    } else {
        small
    }
}

/// Hyperbolic cosine of a float32, within 2 ulp: (e^|x| + e^-|x|)/2.
#[inline(always)]
pub fn cosh_f32(x: f32) -> f32 {
    let (half, inv) = half_exp(x.abs());
    half + inv
}

/// Inverse hyperbolic sine of a float32, within 2 ulp:
/// sign(x) log1p(|x| + x²/(1 + sqrt(x² + 1))) (no cancellation at any
/// |x|); from 2^26 on, ln(2|x|) as log1p(|x|) + ln 2 (x² would overflow,
/// and the error ln(1 + 1/|x|) is below float32's precision there).
#[inline(always)]
pub fn asinh_f32(x: f32) -> f32 {
    let a = x.abs();
    let huge = a > 67_108_864.0;
    let w = a.mul_add(a, 1.0).sqrt();
    let v = pick32(huge, a, a + a * a / (w + 1.0));
    let r = log1p_core(v) + if huge { std::f32::consts::LN_2 } else { 0.0 };
    let r = f32::from_bits(r.to_bits() | (x.to_bits() & 0x8000_0000));
    if a < f32::MIN_POSITIVE {
        x
    } else {
        r
    }
}

/// Inverse hyperbolic cosine of a float32, within 2 ulp:
/// log1p(t + sqrt(t (t + 2))), t = x - 1 (musl's form, without the
/// cancellation of ln(x + sqrt(x² - 1)) near 1); ln(2x) from 2^26 on; NaN
/// below 1.
#[inline(always)]
pub fn acosh_f32(x: f32) -> f32 {
    let huge = x > 67_108_864.0;
    let t = x - 1.0;
    let v = pick32(huge, x, t + (t * (t + 2.0)).sqrt());
    let r = log1p_core(v) + if huge { std::f32::consts::LN_2 } else { 0.0 };
    if x < 1.0 || x.is_nan() {
        f32::NAN
    } else {
        r
    }
}

/// Inverse hyperbolic tangent of a float32, within 2 ulp:
/// sign(x) log1p(2|x| / (1 - |x|)) / 2 (±inf at ±1, NaN beyond).
#[inline(always)]
pub fn atanh_f32(x: f32) -> f32 {
    let a = x.abs();
    let r = 0.5 * log1p_core((a + a) / (1.0 - a));
    let r = f32::from_bits(r.to_bits() | (x.to_bits() & 0x8000_0000));
    let r = if a < f32::MIN_POSITIVE { x } else { r };
    if a > 1.0 || x.is_nan() {
        f32::NAN
    } else {
        r
    }
}

#[cfg(test)]
#[path = "math32_hyp_tests.rs"]
pub(super) mod tests;
