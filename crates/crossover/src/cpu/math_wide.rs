//! Float32 functions computed in f64 ("wide"): a log2 and an exp2 kernel
//! accurate to about 1e-13, far below float32's ulp (6e-8), from which
//! log1p, expm1, sinh, cosh, arcsinh, arccosh, arctanh (and float32 pow,
//! in `math.rs`), and an f64 arctangent series for arctan, arcsin, arccos
//! and arctan2: forms whose float32 versions would need care near poles or
//! zero. (log2, log10 and exp2 are native float32 in `math.rs`.) Each
//! result rounds once to float32, so it is within 1 ulp of the correctly
//! rounded value (tests below), and each function is branch-free scalar code
//! (selects, no jumps) marked `#[inline(always)]`, which the SIMD-dispatched
//! loops turn into vector code (libm's float versions are a call per element,
//! 10-70 ns here).
//!
//! Cancellation near zero (expm1, sinh, arcsinh, arctanh) is avoided with
//! short Taylor series below 1e-3 (their first omitted term is under 1e-15
//! relative there); everywhere else the f64 margin (29 bits) absorbs it.
//!
//! Only integer and bit operations that AVX2 has are used (no i64 <-> f64
//! conversions).

/// 1.5 * 2^52: adding it rounds an f64 of magnitude below 2^51 to an
/// integer held in the low mantissa bits.
pub(super) const ROUND_MAGIC_F64: f64 = 6_755_399_441_055_744.0;
const TWO_52: f64 = 4_503_599_627_370_496.0;
/// Below this magnitude the Taylor forms are used (see the module docs).
const SMALL: f64 = 1e-3;

/// log2(a) for `a >= 0` that is 0, infinite, NaN or a normal f64: relative
/// error about 1e-13. log2(0) = -inf, log2(inf) = inf, NaN stays NaN.
#[inline(always)]
pub(super) fn log2_wide(a: f64) -> f64 {
    // a = 2^e * m, m in [sqrt(1/2), sqrt(2)).
    let bits = a.to_bits();
    let e = f64::from_bits(0x4330_0000_0000_0000 | (bits >> 52)) - TWO_52 - 1023.0;
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let big = m > std::f64::consts::SQRT_2;
    let (m, e) = if big { (m * 0.5, e + 1.0) } else { (m, e) };
    // ln(m) = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172: the series to s^13
    // leaves 2e-13 (the s^15 term).
    let s = (m - 1.0) / (m + 1.0);
    let z = s * s;
    let p = (1.0 / 13.0f64).mul_add(z, 1.0 / 11.0);
    let p = p.mul_add(z, 1.0 / 9.0);
    let p = p.mul_add(z, 1.0 / 7.0);
    let p = p.mul_add(z, 1.0 / 5.0);
    let p = p.mul_add(z, 1.0 / 3.0);
    let ln_m = 2.0 * s * p.mul_add(z, 1.0);
    let l = ln_m.mul_add(std::f64::consts::LOG2_E, e);
    let l = if a == 0.0 { f64::NEG_INFINITY } else { l };
    if a == f64::INFINITY || a.is_nan() {
        a
    } else {
        l
    }
}

/// 2^t for any t (NaN stays NaN): relative error about 1e-13 wherever the
/// result is a normal f64; below 2^-200 and above 2^200 the result is
/// clamped there, already 0 and inf in float32.
#[inline(always)]
pub(super) fn exp2_wide(t: f64) -> f64 {
    let t = t.clamp(-200.0, 200.0);
    // 2^t = 2^k * e^(f ln 2), k = round(t), |f| <= 1/2: Taylor to u^10
    // leaves 4e-13 at |u| = ln(2)/2, and far less for small t.
    let kb = (t + ROUND_MAGIC_F64).to_bits();
    let f = t - ((t + ROUND_MAGIC_F64) - ROUND_MAGIC_F64);
    let u = f * std::f64::consts::LN_2;
    let mut q = 1.0 / 3_628_800.0f64; // 1/10!
    for c in [
        362_880.0f64,
        40_320.0,
        5_040.0,
        720.0,
        120.0,
        24.0,
        6.0,
        2.0,
        1.0,
        1.0,
    ] {
        q = q.mul_add(u, 1.0 / c);
    }
    // The low bits of `kb` hold k: shifted into the exponent field they
    // make 2^k.
    q * f64::from_bits(kb.wrapping_add(1023) << 52)
}

/// ln(a), as [`log2_wide`].
#[inline(always)]
fn ln_wide(a: f64) -> f64 {
    log2_wide(a) * std::f64::consts::LN_2
}

/// e^t, as [`exp2_wide`].
#[inline(always)]
fn exp_wide(t: f64) -> f64 {
    exp2_wide(t * std::f64::consts::LOG2_E)
}

/// NaN for negative inputs (and NaN), else `v`.
#[inline(always)]
fn nan_below_zero(x: f64, v: f64) -> f64 {
    if x < 0.0 || x.is_nan() {
        f64::NAN
    } else {
        v
    }
}

/// ln(1 + x) of a float32 (C's `log1pf`): 1 + x is exact in f64 from
/// |x| = 2^-29; below, ln(1 + x) = x - x²/2 to f64 precision.
#[inline(always)]
pub fn log1p_f32(x: f32) -> f32 {
    let x = x as f64;
    let tiny = x.abs() < 1.0 / 536_870_912.0;
    let w = 1.0 + x;
    let r = if tiny {
        (-0.5 * x).mul_add(x, x)
    } else {
        ln_wide(w.abs())
    };
    nan_below_zero(w, r) as f32
}

/// e^x - 1 of a float32 (C's `expm1f`).
#[inline(always)]
pub fn expm1_f32(x: f32) -> f32 {
    let x = x as f64;
    // x + x²/2 + ... + x^5/120: the x^6 term is under 2e-16 relative.
    let p = (1.0 / 120.0f64).mul_add(x, 1.0 / 24.0);
    let p = p.mul_add(x, 1.0 / 6.0);
    let p = p.mul_add(x, 0.5);
    // As x (1 + x p), so that -0 stays -0.
    let series = x * p.mul_add(x, 1.0);
    let r = if x.abs() < SMALL {
        series
    } else {
        exp_wide(x) - 1.0
    };
    (if x.is_nan() { x } else { r }) as f32
}

/// sinh and cosh of a float32 (C's `sinhf`, `coshf`) from one exponential.
#[inline(always)]
fn sinh_cosh(x: f32) -> (f64, f64) {
    let x = x as f64;
    let e = exp_wide(x.abs());
    let inv = 1.0 / e;
    let z = x * x;
    // x + x³/6 + x^5/120: the x^7 term is under 2e-16 relative.
    let series = x * (1.0 / 120.0f64).mul_add(z, 1.0 / 6.0).mul_add(z, 1.0);
    let big = f64::from_bits(((e - inv) * 0.5).to_bits() | (x.to_bits() & (1 << 63)));
    let s = if x.abs() < SMALL { series } else { big };
    let c = (e + inv) * 0.5;
    if x.is_nan() {
        (x, x)
    } else {
        (s, c)
    }
}

/// Hyperbolic sine of a float32.
#[inline(always)]
pub fn sinh_f32(x: f32) -> f32 {
    sinh_cosh(x).0 as f32
}

/// Hyperbolic cosine of a float32.
#[inline(always)]
pub fn cosh_f32(x: f32) -> f32 {
    sinh_cosh(x).1 as f32
}

/// Inverse hyperbolic sine of a float32: sign(x) ln(|x| + sqrt(x² + 1)).
#[inline(always)]
pub fn asinh_f32(x: f32) -> f32 {
    let x = x as f64;
    let a = x.abs();
    let z = x * x;
    // x - x³/6 + 3x^5/40: the x^7 term is under 1e-16 relative.
    let series = x * (3.0 / 40.0f64).mul_add(z, -1.0 / 6.0).mul_add(z, 1.0);
    let big = ln_wide(a + a.mul_add(a, 1.0).sqrt());
    let big = f64::from_bits(big.to_bits() | (x.to_bits() & (1 << 63)));
    (if a < SMALL { series } else { big }) as f32
}

/// Inverse hyperbolic cosine of a float32: ln(x + sqrt(x² - 1)), NaN
/// below 1 (x² - 1 is exact in f64).
#[inline(always)]
pub fn acosh_f32(x: f32) -> f32 {
    let x = x as f64;
    let r = ln_wide(x + x.mul_add(x, -1.0).abs().sqrt());
    (if x < 1.0 || x.is_nan() { f64::NAN } else { r }) as f32
}

/// Inverse hyperbolic tangent of a float32: ln((1 + x) / (1 - x)) / 2
/// (±inf at ±1, NaN beyond).
#[inline(always)]
pub fn atanh_f32(x: f32) -> f32 {
    let x = x as f64;
    let a = x.abs();
    let z = x * x;
    // x + x³/3 + x^5/5: the x^7 term is under 2e-19 relative.
    let series = x * 0.2f64.mul_add(z, 1.0 / 3.0).mul_add(z, 1.0);
    let big = 0.5 * ln_wide((1.0 + a) / (1.0 - a));
    let big = f64::from_bits(big.to_bits() | (x.to_bits() & (1 << 63)));
    let r = if a < SMALL { series } else { big };
    (if a > 1.0 || x.is_nan() { f64::NAN } else { r }) as f32
}

/// arctan(t) for t >= 0 (inf included): reduced to |u| <= tan(pi/8) by
/// arctan(t) = pi/4 + arctan((t-1)/(t+1)) and pi/2 - arctan(1/t); the
/// Taylor series to u^23 leaves 2e-11 relative there (u^25/25 at 0.414).
#[inline(always)]
fn atan_nonneg(t: f64) -> f64 {
    const TAN_PI_8: f64 = 0.414_213_562_373_095_05;
    const TAN_3PI_8: f64 = 2.414_213_562_373_095;
    let far = t > TAN_3PI_8;
    let mid = t > TAN_PI_8;
    // One division: u = -1/t, (t-1)/(t+1) or t/1.
    let num = if far {
        -1.0
    } else if mid {
        t - 1.0
    } else {
        t
    };
    let den = if far {
        t
    } else if mid {
        t + 1.0
    } else {
        1.0
    };
    let base = if far {
        std::f64::consts::FRAC_PI_2
    } else if mid {
        std::f64::consts::FRAC_PI_4
    } else {
        0.0
    };
    let u = num / den;
    let z = u * u;
    // (-1)^k / (2k + 1), k = 11 down to 0.
    let mut p = -1.0 / 23.0f64;
    for c in [
        1.0 / 21.0f64,
        -1.0 / 19.0,
        1.0 / 17.0,
        -1.0 / 15.0,
        1.0 / 13.0,
        -1.0 / 11.0,
        1.0 / 9.0,
        -1.0 / 7.0,
        1.0 / 5.0,
        -1.0 / 3.0,
        1.0,
    ] {
        p = p.mul_add(z, c);
    }
    p.mul_add(u, base)
}

/// arctan of a float32.
#[inline(always)]
pub fn atan_f32(x: f32) -> f32 {
    let x = x as f64;
    let r = atan_nonneg(x.abs());
    f64::from_bits(r.to_bits() | (x.to_bits() & (1 << 63))) as f32
}

/// arcsin of a float32: arctan(x / sqrt((1-x)(1+x))), NaN beyond ±1.
#[inline(always)]
pub fn asin_f32(x: f32) -> f32 {
    let x = x as f64;
    let a = x.abs();
    let r = atan_nonneg(a / ((1.0 - a) * (1.0 + a)).sqrt());
    let r = f64::from_bits(r.to_bits() | (x.to_bits() & (1 << 63)));
    (if a > 1.0 || x.is_nan() { f64::NAN } else { r }) as f32
}

/// arccos of a float32: pi/2 - arcsin(x) (in f64, so no digits are lost
/// near 1: arccos(1 - 2^-24) is 3e-4, far above f64's error).
#[inline(always)]
pub fn acos_f32(x: f32) -> f32 {
    let xd = x as f64;
    let a = xd.abs();
    let r = atan_nonneg(a / ((1.0 - a) * (1.0 + a)).sqrt());
    let asin = f64::from_bits(r.to_bits() | (xd.to_bits() & (1 << 63)));
    let r = std::f64::consts::FRAC_PI_2 - asin;
    (if a > 1.0 || xd.is_nan() { f64::NAN } else { r }) as f32
}

/// arctan(y / x) in the quadrant of (x, y), with C99's special cases
/// (signed zeros and infinities), for float32.
#[inline(always)]
pub fn atan2_f32(y: f32, x: f32) -> f32 {
    let (yd, xd) = (y as f64, x as f64);
    let (a, b) = (yd.abs(), xd.abs());
    // The angle from the nearer axis: the ratio of the smaller magnitude
    // to the larger (equal ones: pi/4, or 0 when both are zero).
    let t = if a == b {
        if a == 0.0 {
            0.0
        } else {
            1.0
        }
    } else {
        a.min(b) / a.max(b)
    };
    let r = atan_nonneg(t);
    let r = if a > b {
        std::f64::consts::FRAC_PI_2 - r
    } else {
        r
    };
    let r = if x.is_sign_negative() {
        std::f64::consts::PI - r
    } else {
        r
    };
    let r = f64::from_bits(r.to_bits() | (yd.to_bits() & (1 << 63)));
    (if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        r
    }) as f32
}

#[cfg(test)]
#[path = "math_wide_tests.rs"]
mod tests;
