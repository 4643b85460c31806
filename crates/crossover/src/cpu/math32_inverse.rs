//! Float32 inverse trigonometric functions in native float32 arithmetic
//! (16 lanes with AVX-512): arctan, arcsin, arccos, arctan2, on Cephes'
//! atanf and asinf polynomials and reductions, every branch a select.
//!
//! Accuracy (tests: `math32_inverse_tests.rs`, against the correctly
//! rounded result over dense sweeps): arcsin within 3 ulp (measured
//! worst 2.25, just above |x| = 1/2, where pi/2 - 2 arcsin(s) cancels a
//! bit), arccos, arctan and arctan2 within 2 (measured 1.0, 1.3, 1.4);
//! C99's special values (signed zeros, infinities, NaN, ±1) exactly. They
//! replace forms computed in f64 (8 lanes, two f64 divisions: 2-5x slower).

// Coefficients are quoted exactly as published.
#![allow(clippy::excessive_precision)]

use super::math32_hyp::pick32;

/// pi/2, pi/4 and pi as float32 plus the rest, so that adding the small
/// term first keeps a result near them within 1 ulp.
const PIO2_HI: f32 = std::f32::consts::FRAC_PI_2;
const PIO2_LO: f32 = -4.371_139e-8;
const PIO4_HI: f32 = std::f32::consts::FRAC_PI_4;
const PIO4_LO: f32 = -2.185_569_5e-8;
const PI_HI: f32 = std::f32::consts::PI;
const PI_LO: f32 = -8.742_278e-8;
const TAN_PI_8: f32 = 0.414_213_57;
const TAN_3PI_8: f32 = 2.414_213_6;

/// arctan(u) for |u| <= tan(pi/8) (Cephes' atanf polynomial).
#[inline(always)]
fn atan_poly(u: f32) -> f32 {
    let z = u * u;
    let p = 8.053_744_495_38e-2f32.mul_add(z, -1.387_768_560_32e-1);
    let p = p.mul_add(z, 1.997_771_064_78e-1);
    let p = p.mul_add(z, -3.333_294_915_39e-1);
    (p * z).mul_add(u, u)
}

/// With the sign of `s`.
#[inline(always)]
fn with_sign_of(v: f32, s: f32) -> f32 {
    f32::from_bits((v.to_bits() & 0x7fff_ffff) | (s.to_bits() & 0x8000_0000))
}

/// arctan of a float32, within 2 ulp: Cephes' reduction
/// (pi/2 + arctan(-1/|x|) above tan(3pi/8), pi/4 + arctan((|x|-1)/(|x|+1))
/// above tan(pi/8)), one division.
#[inline(always)]
pub fn atan_f32(x: f32) -> f32 {
    let a = x.abs();
    let far = a > TAN_3PI_8;
    let mid = a > TAN_PI_8;
    let num = if far {
        -1.0
    } else if mid {
        a - 1.0
    } else {
        a
    };
    let den = if far {
        a
    } else if mid {
        a + 1.0
    } else {
        1.0
    };
    let (hi, lo) = if far {
        (PIO2_HI, PIO2_LO)
    } else if mid {
        (PIO4_HI, PIO4_LO)
    } else {
        (0.0, 0.0)
    };
    let r = hi + (atan_poly(num / den) + lo);
    // x itself for NaN (the sign copy keeps it NaN) and the signed zeros.
    with_sign_of(r, x)
}

/// arcsin of |s| <= 1/2 given z = s² (Cephes' asinf polynomial).
#[inline(always)]
fn asin_poly(s: f32, z: f32) -> f32 {
    let p = 4.216_319_904_8e-2f32.mul_add(z, 2.418_131_104_9e-2);
    let p = p.mul_add(z, 4.547_002_599_8e-2);
    let p = p.mul_add(z, 7.495_300_268_6e-2);
    let p = p.mul_add(z, 1.666_675_242_2e-1);
    (p * z).mul_add(s, s)
}

/// The shared reduction: above |x| = 1/2, arcsin(|x|) = pi/2 - 2 arcsin(s)
/// with s = sqrt((1 - |x|)/2) (1 - |x| exact). Returns (big, arcsin(s)),
/// s = x below 1/2.
#[inline(always)]
fn asin_reduced(x: f32) -> (bool, f32) {
    let a = x.abs();
    let big = a > 0.5;
    let z = if big { 0.5 * (1.0 - a) } else { x * x };
    // Beyond 1, z < 0 and the root is NaN.
    let s = if big { z.sqrt() } else { x };
    (big, asin_poly(s, z))
}

/// arcsin of a float32, within 3 ulp; NaN beyond ±1.
#[inline(always)]
pub fn asin_f32(x: f32) -> f32 {
    let (big, q) = asin_reduced(x);
    let r = with_sign_of(PIO2_HI + (PIO2_LO - 2.0 * q), x);
    if big {
        r
    } else {
        q
    }
}

/// arccos of a float32, within 2 ulp (Cephes' acosf): pi/2 - arcsin(x)
/// up to |x| = 1/2, 2 arcsin(s) above, pi - 2 arcsin(s) below -1/2.
#[inline(always)]
pub fn acos_f32(x: f32) -> f32 {
    let (big, q) = asin_reduced(x);
    let small = PIO2_HI + (PIO2_LO - q);
    let neg = PI_HI + (PI_LO - 2.0 * q);
    let large = if x < 0.0 { neg } else { 2.0 * q };
    if big {
        large
    } else {
        small
    }
}

/// arctan(y / x) in the quadrant of (x, y), with C99's special cases
/// (signed zeros and infinities), for float32, within 2 ulp. The angle
/// from the nearer axis is arctan(min/max) of the magnitudes, reduced as
/// in [`atan_f32`] by (min - max)/(min + max) above tan(pi/8): one
/// division.
#[inline(always)]
pub fn atan2_f32(y: f32, x: f32) -> f32 {
    let (a, b) = (y.abs(), x.abs());
    let (lo_m, hi_m) = (a.min(b), a.max(b));
    let mid = lo_m > TAN_PI_8 * hi_m;
    // Scaled by 1/4 near overflow (exact there), so that the sum is finite.
    let k = if hi_m > 1e37 { 0.25 } else { 1.0 };
    let num = pick32(mid, (lo_m - hi_m) * k, lo_m);
    let den = pick32(mid, (lo_m + hi_m) * k, hi_m);
    // Equal magnitudes (infinities included): pi/4; both zero: 0.
    let u = num / den;
    let u = if a == b || hi_m == 0.0 { 0.0 } else { u };
    let (h, l) = if mid || (a == b && a != 0.0) {
        (PIO4_HI, PIO4_LO)
    } else {
        (0.0, 0.0)
    };
    let t = atan_poly(u);
    // From the nearer axis to the angle from +x: pi/2 - r when |y| > |x|,
    // then pi - r for negative x (-0 included).
    let r = if a > b {
        (PIO2_HI - h) + (PIO2_LO - l - t)
    } else {
        h + (l + t)
    };
    let r = if x.is_sign_negative() {
        PI_HI + (PI_LO - r)
    } else {
        r
    };
    let r = with_sign_of(r, y);
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else {
        r
    }
}

#[cfg(test)]
#[path = "math32_inverse_tests.rs"]
mod tests;
