//! Vectorisable f64 arctan, arcsin, arccos and arctan2, in the style of
//! [`super::math64`]: branch-free scalar code (fdlibm's branches computed
//! and picked by selects), `#[inline(always)]`, so that the SIMD loops run
//! it in AVX-512/AVX2 lanes (libm is a call per element).
//!
//! atan is fdlibm's `s_atan.c` (the four reduction intervals chosen by
//! selects, one division); asin and acos are fdlibm's `e_asin.c` and
//! `e_acos.c` rational forms (one `R(z)`, one square root); atan2 takes
//! atan of |y/x| with the division's rounding error fed back as a
//! correction and adds the quadrant's pi in double-double, so it stays
//! within 1 ulp of glibc's correctly rounded atan2 (fdlibm's form is up to
//! 2 off); C99's special cases are selects. Tests:
//! `math64_inverse_tests.rs`.

// Coefficients are quoted exactly as published.
#![allow(clippy::excessive_precision)]

use super::math64::two_sum;

// fdlibm's pio2_hi, pi and atan(1)_hi are the nearest doubles.
const PIO2_HI: f64 = std::f64::consts::FRAC_PI_2;
const PIO2_LO: f64 = 6.12323399573676603587e-17;
const PI: f64 = std::f64::consts::PI;
const PI_LO: f64 = 1.2246467991473531772e-16;
/// 2^-27: below it atan(x) and asin(x) round to x.
const TINY: f64 = 7.450_580_596_923_828e-9;

/// atan(a) for a >= 0 (NaN stays NaN) as `hi + tail` (hi one of five
/// table values, 0 below 0.4375), with `corr` added to the argument to
/// first order (the caller's `δa / (1 + a^2)`). fdlibm's `s_atan.c`.
#[inline(always)]
fn atan_parts(a: f64, corr: f64) -> (f64, f64) {
    const AT: [f64; 11] = [
        3.33333333333329318027e-01,
        -1.99999999998764832476e-01,
        1.42857142725034663711e-01,
        -1.11111104054623557880e-01,
        9.09088713343650656196e-02,
        -7.69187620504482999495e-02,
        6.66107313738753120669e-02,
        -5.83357013379057348645e-02,
        4.97687799461593236017e-02,
        -3.65315727442169155270e-02,
        1.62858201153657823623e-02,
    ];
    // The reductions are exact subtractions (Sterbenz) and one division.
    let (num, den, hi, lo) = if a < 0.4375 {
        (a, 1.0, 0.0, 0.0)
    } else if a < 0.6875 {
        (
            2.0 * a - 1.0,
            2.0 + a,
            4.63647609000806093515e-01,
            2.26987774529616870924e-17,
        )
    } else if a < 1.1875 {
        (
            a - 1.0,
            a + 1.0,
            std::f64::consts::FRAC_PI_4,
            3.06161699786838301793e-17,
        )
    } else if a < 2.4375 {
        (
            a - 1.5,
            1.5f64.mul_add(a, 1.0),
            9.82793723247329054082e-01,
            1.39033110312309984516e-17,
        )
    } else {
        (-1.0, a, PIO2_HI, PIO2_LO)
    };
    let x = num / den;
    let z = x * x;
    let w = z * z;
    let s1 = z * AT[10]
        .mul_add(w, AT[8])
        .mul_add(w, AT[6])
        .mul_add(w, AT[4])
        .mul_add(w, AT[2])
        .mul_add(w, AT[0]);
    let s2 = w * AT[9]
        .mul_add(w, AT[7])
        .mul_add(w, AT[5])
        .mul_add(w, AT[3])
        .mul_add(w, AT[1]);
    (hi, x - (x * (s1 + s2) - (lo + corr)))
}

/// Arctangent (fdlibm's `s_atan.c`): ±pi/2 at ±inf, x itself below 2^-27
/// (keeping -0).
#[inline(always)]
pub fn atan_f64(x: f64) -> f64 {
    let a = x.abs();
    let (hi, tail) = atan_parts(a, 0.0);
    let v = hi + tail;
    let v = if a < TINY { a } else { v };
    // NaN keeps its payload through copysign.
    v.copysign(x)
}

/// `atan2(y, x)` (NumPy's `arctan2(y, x)`), every C99 special case
/// included: signed zeros, ±pi for negative x on the axis, ±pi/4 and
/// ±3pi/4 for two infinities, NaN if either is NaN.
#[inline(always)]
pub fn atan2_f64(y: f64, x: f64) -> f64 {
    let (ay, ax) = (y.abs(), x.abs());
    let t = ay / ax;
    // atan(t + δ), δ the division's rounding error, is atan t + δ/(1+t^2).
    // ax (1 + t^2) = ax + t ay: one division.
    let d = (-t).mul_add(ax, ay) / t.mul_add(ay, ax);
    let d = if d.is_finite() { d } else { 0.0 };
    let (hi, tail) = atan_parts(t, d);
    let z = hi + tail;
    // Negative x: pi - atan t, with pi - hi exact in double-double.
    let (ph, pl) = two_sum(PI, -hi);
    let left = ph + (pl + (PI_LO - tail));
    let v = if x.is_sign_negative() { left } else { z };
    // |y/x| > 2^64 (and x = 0, y infinite): pi/2.
    let v = if t > 1.844_674_407_370_955_2e19 {
        PIO2_HI
    } else {
        v
    };
    let both_inf = ax == f64::INFINITY && ay == f64::INFINITY;
    let diag = if x.is_sign_negative() {
        3.0 * std::f64::consts::FRAC_PI_4
    } else {
        std::f64::consts::FRAC_PI_4
    };
    let v = if both_inf { diag } else { v };
    let v = v.copysign(y);
    // y = ±0: ±0 for x >= +0, ±pi for x <= -0 (both zero included).
    let axis = if x.is_sign_negative() {
        PI.copysign(y)
    } else {
        y
    };
    let v = if ay == 0.0 { axis } else { v };
    if x.is_nan() || y.is_nan() {
        x + y
    } else {
        v
    }
}

/// `R(z) = z P(z) / Q(z)` of fdlibm's `e_asin.c` and `e_acos.c`:
/// asin(x) = x + x R(x^2) for |x| < 0.5.
#[inline(always)]
fn asin_r(z: f64) -> f64 {
    const PS0: f64 = 1.66666666666666657415e-01;
    const PS1: f64 = -3.25565818622400915405e-01;
    const PS2: f64 = 2.01212532134862925881e-01;
    const PS3: f64 = -4.00555345006794114027e-02;
    const PS4: f64 = 7.91534994289814532176e-04;
    const PS5: f64 = 3.47933107596021167570e-05;
    const QS1: f64 = -2.40339491173441421878e+00;
    const QS2: f64 = 2.02094576023350569471e+00;
    const QS3: f64 = -6.88283971605453293030e-01;
    const QS4: f64 = 7.70381505559019352791e-02;
    let p = z * PS5
        .mul_add(z, PS4)
        .mul_add(z, PS3)
        .mul_add(z, PS2)
        .mul_add(z, PS1)
        .mul_add(z, PS0);
    let q = QS4
        .mul_add(z, QS3)
        .mul_add(z, QS2)
        .mul_add(z, QS1)
        .mul_add(z, 1.0);
    p / q
}

/// `(z, s, f, c, r)` shared by asin and acos: z = x^2 below 0.5, else
/// (1 - |x|)/2; s = sqrt(z) = f + c with f's low 32 bits cleared; r = R(z).
#[inline(always)]
fn asin_parts(a: f64) -> (f64, f64, f64, f64, f64) {
    let z = if a < 0.5 { a * a } else { (1.0 - a) * 0.5 };
    let s = z.sqrt();
    let f = f64::from_bits(s.to_bits() & 0xffff_ffff_0000_0000);
    let c = (-f).mul_add(f, z) / (s + f);
    (z, s, f, c, asin_r(z))
}

/// Arcsine (fdlibm's `e_asin.c`): NaN outside [-1, 1], x itself below
/// 2^-27 (keeping -0).
#[inline(always)]
pub fn asin_f64(x: f64) -> f64 {
    let a = x.abs();
    let (_, s, f, c, r) = asin_parts(a);
    let small = a.mul_add(r, a);
    // |x| > 0.975: pi/2 - 2 (s + s r).
    let edge = PIO2_HI - (2.0 * s.mul_add(r, s) - PIO2_LO);
    // Between: pi/4 - (2 s r - (pio2_lo - 2c) - (pi/4 - 2f)), f + c = s.
    let pio4 = 0.5 * PIO2_HI;
    let mid = pio4 - ((2.0 * s * r - (PIO2_LO - 2.0 * c)) - (pio4 - 2.0 * f));
    let v = if a >= 0.975 { edge } else { mid };
    let v = if a < 0.5 { small } else { v };
    let v = if a < TINY { a } else { v };
    let v = if a == 1.0 { PIO2_HI } else { v };
    let v = if a > 1.0 { f64::NAN } else { v };
    v.copysign(x)
}

/// Arccosine (fdlibm's `e_acos.c`): NaN outside [-1, 1], 0 at 1, pi at -1.
#[inline(always)]
pub fn acos_f64(x: f64) -> f64 {
    let a = x.abs();
    let (_, s, f, c, r) = asin_parts(a);
    let small = PIO2_HI - (x - x.mul_add(-r, PIO2_LO));
    let neg = 2.0 * (PIO2_HI - (r.mul_add(s, -PIO2_LO) + s));
    let pos = 2.0 * (f + r.mul_add(s, c));
    let v = if x < 0.0 { neg } else { pos };
    let v = if a < 0.5 { small } else { v };
    let v = if x == 1.0 { 0.0 } else { v };
    let v = if x == -1.0 { PI } else { v };
    if a > 1.0 || x.is_nan() {
        f64::NAN
    } else {
        v
    }
}

#[cfg(test)]
#[path = "math64_inverse_tests.rs"]
pub(super) mod tests;
