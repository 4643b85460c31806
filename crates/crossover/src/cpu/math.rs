//! Vectorisable f32 transcendental functions.
//!
//! Each function is branch-free scalar code (selects, not jumps) marked
//! `#[inline(always)]`, so inside a SIMD-dispatched loop the compiler turns
//! it into vector instructions (16 lanes with AVX-512). A plain `f32::sin`
//! loop calls libm per element and is ~17x slower here.
//!
//! Accuracy (tested against the f64 result, see tests): sin, cos, tan, exp,
//! log and tanh are within 4 ulp over their useful domains. sin and cos
//! reduce their argument in f32 with fused multiply-adds and pi/2 in three
//! f32 parts (within 1.46 ulp for every f32 up to 1e6, checked
//! exhaustively; the compiled kernels of `cpu/jit` emit the same
//! instructions), and so does tan up to [`TAN_FAST_LIMIT_F32`] (within
//! 1.57 ulp there, every float32 checked; reduced in f64 before, 16 lanes
//! converted to two registers of f64 and back: 0.50 ns a point on one
//! core against 0.29 now and NumPy's SVML 0.40); larger arguments take a
//! scalar f64 path. Polynomials are Cephes' single-precision minimax fits.
//! The f64 functions are in [`super::math64`].

// Coefficients are quoted exactly as published.
#![allow(clippy::excessive_precision)]

/// Beyond this |x|, sin/cos/tan use the scalar f64 path.
pub const TRIG_FAST_LIMIT: f32 = 1.0e6;

/// Beyond this |x|, float32 tan uses the scalar f64 path: with the float32
/// reduction it is within 1.57 ulp of the correctly rounded value for
/// every float32 up to 1e5 (checked exhaustively), but the rounded 2/pi
/// can pick the next multiple of pi/2 near half-way points, and the
/// polynomial outside [-pi/4, pi/4] lost up to 7 ulp near 1e6.
pub const TAN_FAST_LIMIT_F32: f32 = 1.0e5;

const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;
const PIO2_HI: f64 = 1.570_796_326_734_125_614_17; // first 33 bits of pi/2
const PIO2_LO: f64 = 6.077_100_506_506_192_249_32e-11; // pi/2 - PIO2_HI
/// 1.5 * 2^52: adding it rounds an f64 of magnitude below 2^51 to an
/// integer held in the low mantissa bits.
pub(super) const ROUND_MAGIC_F64: f64 = 6_755_399_441_055_744.0;
pub(super) const ROUND_MAGIC_F32: f32 = 12_582_912.0; // 1.5 * 2^23

/// Range reduction: `x = q * pi/2 + r`, |r| <= pi/4; returns (r, q mod 4).
#[inline(always)]
fn reduce_pio2(x: f32) -> (f32, u32) {
    let xd = x as f64;
    let t = xd * FRAC_2_PI + ROUND_MAGIC_F64;
    let q = t.to_bits() as u32;
    let j = t - ROUND_MAGIC_F64;
    let r = (xd - j * PIO2_HI) - j * PIO2_LO;
    (r as f32, q & 3)
}

/// pi/2 in three f32 parts (from a 110-digit pi/2; the remainder is
/// -9.5e-23). The first two are rounded down so that every part is
/// positive: `-j * part` is then -0.0 for j = 0 and `sin(-0.0)` keeps its
/// sign.
pub(crate) const PIO2_F32: [f32; 3] = [
    f32::from_bits(0x3FC9_0FDA), // 1.5707963, one ulp below f32(pi/2)
    7.549_789_4e-8,
    5.390_303e-15,
];

/// Range reduction in f32: `x = j * pi/2 + r`; returns (r, the bits whose
/// low two are j mod 4). `j` is rounded once from the exact `x * 2/pi`
/// (an FMA onto 1.5 * 2^23), and each FMA subtracts `j` times one part of
/// pi/2 with a single rounding: `x - j * PIO2_F32[0]` is exact, so only the
/// last two parts round (valid while |j| < 2^22).
#[inline(always)]
pub(crate) fn reduce_pio2_f32(x: f32) -> (f32, u32) {
    let t = x.mul_add(std::f32::consts::FRAC_2_PI, ROUND_MAGIC_F32);
    let j = t - ROUND_MAGIC_F32;
    let r = (-j).mul_add(PIO2_F32[0], x);
    let r = (-j).mul_add(PIO2_F32[1], r);
    let r = (-j).mul_add(PIO2_F32[2], r);
    (r, t.to_bits())
}

/// The Cephes sin and cos polynomials' coefficients (highest degree first).
pub(crate) const SIN_COEFFS: [f32; 3] =
    [-1.951_529_589_1e-4, 8.332_160_873_6e-3, -1.666_665_461_1e-1];
pub(crate) const COS_COEFFS: [f32; 3] = [
    2.443_315_711_809_948e-5,
    -1.388_731_625_493_765e-3,
    4.166_664_568_298_827e-2,
];

#[inline(always)]
fn sin_poly(r: f32, z: f32) -> f32 {
    let p = SIN_COEFFS[0].mul_add(z, SIN_COEFFS[1]);
    let p = p.mul_add(z, SIN_COEFFS[2]);
    let s = (r * z).mul_add(p, r);
    // sin(r) has r's sign on the reduced range; the product above is +0.0
    // for r = -0.0, which would lose it.
    f32::from_bits(s.to_bits() | (r.to_bits() & SIGN_BIT_F32))
}

const SIGN_BIT_F32: u32 = 1 << 31;

#[inline(always)]
fn cos_poly(z: f32) -> f32 {
    let p = COS_COEFFS[0].mul_add(z, COS_COEFFS[1]);
    let p = p.mul_add(z, COS_COEFFS[2]);
    (z * z).mul_add(p, (-0.5f32).mul_add(z, 1.0))
}

#[inline(always)]
fn flip_sign_if(v: f32, bit: u32) -> f32 {
    f32::from_bits(v.to_bits() ^ (bit << 31))
}

/// sin and cos of `x` together (fast path; see [`TRIG_FAST_LIMIT`]).
#[inline(always)]
pub fn sincos_f32(x: f32) -> (f32, f32) {
    let (r, q) = reduce_pio2_f32(x);
    sincos_quadrant(r, q)
}

/// [`sincos_f32`] with the reduction in f64, as before the f32 one: the
/// normal random numbers (`rng.rs`) keep their documented bits with it.
#[inline(always)]
pub fn sincos_f32_reduced_in_f64(x: f32) -> (f32, f32) {
    let (r, q) = reduce_pio2(x);
    sincos_quadrant(r, q)
}

/// sin and cos from the reduced argument `r` and quadrant `q` (low 2 bits).
#[inline(always)]
fn sincos_quadrant(r: f32, q: u32) -> (f32, f32) {
    let z = r * r;
    let s = sin_poly(r, z);
    let c = cos_poly(z);
    let swap = q & 1 != 0;
    let (sv, cv) = if swap { (c, s) } else { (s, c) };
    let sin = flip_sign_if(sv, (q >> 1) & 1);
    let cos = flip_sign_if(cv, ((q + 1) >> 1) & 1);
    (sin, cos)
}

#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    sincos_f32(x).0
}

#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    sincos_f32(x).1
}

#[inline(always)]
pub fn tan_f32(x: f32) -> f32 {
    let (r, q) = reduce_pio2_f32(x);
    let z = r * r;
    let p = 9.385_401_855_43e-3f32.mul_add(z, 3.119_922_326_97e-3);
    let p = p.mul_add(z, 2.443_013_545_25e-2);
    let p = p.mul_add(z, 5.341_128_070_05e-2);
    let p = p.mul_add(z, 1.333_879_940_85e-1);
    let p = p.mul_add(z, 3.333_315_685_48e-1);
    let t = (p * z).mul_add(r, r);
    if q & 1 != 0 {
        -1.0 / t
    } else {
        t
    }
}

/// [`exp_f32`]'s argument range, ln 2 in two parts and polynomial
/// (Cephes' expf; highest degree first), shared with the compiled kernels.
pub(crate) const EXP_RANGE: [f32; 2] = [-104.0, 89.0];
pub(crate) const LN2_PARTS: [f32; 2] = [0.693_359_375, -2.121_944_4e-4];
pub(crate) const EXP_COEFFS: [f32; 6] = [
    1.987_569_15e-4,
    1.398_199_950_7e-3,
    8.333_451_907_3e-3,
    4.166_579_589_4e-2,
    1.666_666_545_9e-1,
    5.000_000_120_1e-1,
];

/// e^x, ~1 ulp; overflows to inf above ~88.72, underflows through the
/// subnormals to 0.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    let xc = x.clamp(EXP_RANGE[0], EXP_RANGE[1]);
    let t = xc.mul_add(std::f32::consts::LOG2_E, ROUND_MAGIC_F32);
    let n = t - ROUND_MAGIC_F32;
    let ni = (t.to_bits() as i32).wrapping_sub(ROUND_MAGIC_F32.to_bits() as i32);
    let r = (-n).mul_add(LN2_PARTS[0], xc);
    let r = (-n).mul_add(LN2_PARTS[1], r);
    let p = EXP_COEFFS[0].mul_add(r, EXP_COEFFS[1]);
    let p = p.mul_add(r, EXP_COEFFS[2]);
    let p = p.mul_add(r, EXP_COEFFS[3]);
    let p = p.mul_add(r, EXP_COEFFS[4]);
    let p = p.mul_add(r, EXP_COEFFS[5]);
    let y = (p * r).mul_add(r, r) + 1.0;
    // 2^n as two factors so that subnormal results round once.
    let n1 = ni >> 1;
    let n2 = ni - n1;
    let s1 = f32::from_bits(((n1 + 127) as u32) << 23);
    let s2 = f32::from_bits(((n2 + 127) as u32) << 23);
    y * s1 * s2
}

/// The reduction shared by the logarithms: `x = 2^e (1 + f)` with `1 + f`
/// in [sqrt(1/2), sqrt(2)), and `y = ln(1 + f) - f` (Cephes' logf
/// polynomial). Subnormal inputs are scaled first.
#[inline(always)]
pub(super) fn log_parts(x: f32) -> (f32, f32, f32) {
    let sub = x < f32::MIN_POSITIVE;
    let xs = if sub { x * 8_388_608.0 } else { x };
    let ix = xs.to_bits();
    let mut e = ((ix >> 23) & 0xff) as i32 - 127 - if sub { 23 } else { 0 };
    let mut m = f32::from_bits((ix & 0x007f_ffff) | 0x3f80_0000);
    let big = m > std::f32::consts::SQRT_2;
    m = if big { m * 0.5 } else { m };
    e += big as i32;
    let f = m - 1.0;
    (e as f32, f, log_poly(f))
}

/// `ln(1 + f) - f` for 1 + f in [sqrt(1/2), sqrt(2)] (Cephes' logf
/// polynomial).
#[inline(always)]
pub(super) fn log_poly(f: f32) -> f32 {
    let z = f * f;
    let p = 7.037_683_629_2e-2f32.mul_add(f, -1.151_461_031_0e-1);
    let p = p.mul_add(f, 1.167_699_874_0e-1);
    let p = p.mul_add(f, -1.242_014_084_6e-1);
    let p = p.mul_add(f, 1.424_932_278_7e-1);
    let p = p.mul_add(f, -1.666_805_766_5e-1);
    let p = p.mul_add(f, 2.000_071_476_5e-1);
    let p = p.mul_add(f, -2.499_999_399_3e-1);
    let p = p.mul_add(f, 3.333_333_117_4e-1);
    (-0.5f32).mul_add(z, (p * f) * z)
}

/// A logarithm's special values, as selects: log(inf) = inf, log(±0) =
/// -inf, log(<0) = log(NaN) = NaN.
#[inline(always)]
pub(super) fn log_special(x: f32, r: f32) -> f32 {
    let r = if x == f32::INFINITY { x } else { r };
    let r = if x == 0.0 { f32::NEG_INFINITY } else { r };
    if x < 0.0 || x.is_nan() {
        f32::NAN
    } else {
        r
    }
}

/// Natural logarithm, ~1 ulp; log(0) = -inf, log(<0) = NaN, log(inf) = inf.
#[inline(always)]
pub fn log_f32(x: f32) -> f32 {
    let (e, f, y) = log_parts(x);
    // ln 2 in two parts, so that e ln 2 adds exactly.
    let y = e.mul_add(-2.121_944_4e-4, y);
    log_special(x, e.mul_add(0.693_359_375, f + y))
}

/// log2, within 1 ulp (Cephes' log2f: log2(e) - 1 as the multiplier, so
/// the leading terms add exactly).
#[inline(always)]
pub fn log2_f32(x: f32) -> f32 {
    const LOG2E_M1: f32 = 0.442_695_04;
    let (e, f, y) = log_parts(x);
    log_special(x, y.mul_add(LOG2E_M1, f.mul_add(LOG2E_M1, y)) + f + e)
}

/// log10, within 1 ulp (Cephes' log10f: log10(e) and log10(2) in two
/// parts each).
#[inline(always)]
pub fn log10_f32(x: f32) -> f32 {
    const L10EA: f32 = 4.335_937_5e-1;
    const L10EB: f32 = 7.007_319e-4;
    const L102A: f32 = 3.007_812_5e-1;
    const L102B: f32 = 2.487_456_7e-4;
    let (e, f, y) = log_parts(x);
    let z = y.mul_add(L10EB, f * L10EB);
    let z = y.mul_add(L10EA, z);
    let z = f.mul_add(L10EA, z);
    let z = e.mul_add(L102B, z);
    log_special(x, e.mul_add(L102A, z))
}

/// 2^x, within 1 ulp (Cephes' exp2f polynomial on [-1/2, 1/2]); overflows
/// to inf from 128, underflows through the subnormals to 0.
#[inline(always)]
pub fn exp2_f32(x: f32) -> f32 {
    let xc = x.clamp(-151.0, 129.0);
    let t = xc + ROUND_MAGIC_F32;
    let k = (t.to_bits() as i32).wrapping_sub(ROUND_MAGIC_F32.to_bits() as i32);
    let f = xc - (t - ROUND_MAGIC_F32);
    let p = 1.535_336_2e-4f32.mul_add(f, 1.339_887_4e-3);
    let p = p.mul_add(f, 9.618_437e-3);
    let p = p.mul_add(f, 5.550_332_5e-2);
    let p = p.mul_add(f, 2.402_264_8e-1);
    let p = p.mul_add(f, 6.931_472e-1);
    let y = p.mul_add(f, 1.0);
    // 2^k as two factors so that subnormal results round once.
    let k1 = k >> 1;
    let k2 = k - k1;
    let r =
        y * f32::from_bits(((k1 + 127) as u32) << 23) * f32::from_bits(((k2 + 127) as u32) << 23);
    if x.is_nan() {
        x
    } else {
        r
    }
}

/// Hyperbolic tangent, within 3 ulp.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let p = (-5.704_988_727_45e-3f32).mul_add(z, 2.063_908_879_54e-2);
    let p = p.mul_add(z, -5.373_971_555_31e-2);
    let p = p.mul_add(z, 1.333_144_220_36e-1);
    let p = p.mul_add(z, -3.333_328_194_22e-1);
    let small = (p * z).mul_add(x, x);
    let e = exp_f32(2.0 * a);
    let large = 1.0 - 2.0 / (e + 1.0);
    let large = f32::from_bits(large.to_bits() | (x.to_bits() & 0x8000_0000));
    if a < 0.625 {
        small
    } else {
        large
    }
}

/// `x^y` for float32 (NumPy's float32 `power`, C's `powf` in every special
/// case), within 1 ulp: `2^(y log2|x|)` in f64, where |y log2|x|| up to
/// 150 needs log2 to about 1e-10 relative. The reduction of |x|, the
/// special cases and the signs run on float32 lanes (16 with AVX-512);
/// only the two kernels run in f64: log2 m from atanh((m-1)/(m+1)) (a
/// degree-4 polynomial in s², relative error 2e-11) and 2^f (degree 6,
/// 5e-9, 0.1 ulp of float32).
/// Branch-free, so it vectorises (libm's `pow` is a call per element,
/// ~20 ns); 31% faster than the same in f64 throughout (the reduction,
/// selects and signs on 8 lanes, longer series). The AVX2 and scalar
/// paths: with AVX-512, `power` runs [`super::math32_pow`] (1.7x faster).
#[inline(always)]
pub fn pow_f32(x: f32, y: f32) -> f32 {
    let ax = x.abs();
    // |x| = 2^e m, m in [sqrt(1/2), sqrt(2)), from the bits (musl's powf
    // reduction); subnormals are scaled by 2^23 first.
    let sub = ax < f32::MIN_POSITIVE;
    let xs = if sub { ax * 8_388_608.0 } else { ax };
    let tmp = xs.to_bits().wrapping_sub(0x3f35_04f3);
    let top = tmp & 0xff80_0000;
    let m = f32::from_bits(xs.to_bits().wrapping_sub(top)) as f64;
    let e = ((top as i32 >> 23) - if sub { 23 } else { 0 }) as f64;
    // ln m = 2 atanh(s), s = (m - 1)/(m + 1), |s| < 0.172.
    let s = (m - 1.0) / (m + 1.0);
    let z = s * s;
    // atanh(s)/s = 1 + z R(z), R least-squares fitted on Chebyshev nodes
    // of [0, 0.0295] (relative error of ln m 1.7e-11; the series to s^11
    // needs one more term).
    let p = 0.116_657_411_988_264_76f64.mul_add(z, 0.142_753_884_390_448_62);
    let p = p.mul_add(z, 0.200_000_611_573_570_3);
    let p = p.mul_add(z, 0.333_333_332_768_691_5);
    let p = p.mul_add(z, 1.0);
    let l = (s * p).mul_add(2.0 * std::f64::consts::LOG2_E, e);
    // log2 0 = -inf, log2 inf = inf, NaN stays.
    let l = if ax == 0.0 { f64::NEG_INFINITY } else { l };
    let l = if ax < f32::INFINITY { l } else { ax as f64 };
    // Beyond +-200 the float32 result is 0 or inf already.
    let t = ((y as f64) * l).clamp(-200.0, 200.0);
    let kb = (t + ROUND_MAGIC_F64).to_bits();
    let f = t - ((t + ROUND_MAGIC_F64) - ROUND_MAGIC_F64);
    // 2^f = 1 + f G(f), |f| <= 1/2, G fitted as R above (relative error
    // 5e-9, 0.09 ulp of float32).
    let q = 1.546_144_746_104_346_3e-4f64.mul_add(f, 1.339_086_735_134_640_6e-3);
    let q = q.mul_add(f, 9.618_056_669_891_442e-3);
    let q = q.mul_add(f, 5.550_357_104_253_058e-2);
    let q = q.mul_add(f, 2.402_265_092_234_269e-1);
    let q = q.mul_add(f, 6.931_471_880_293_424e-1);
    let q = q.mul_add(f, 1.0);
    // The low bits of `kb` hold k: shifted into the exponent field, 2^k.
    let r = (q * f64::from_bits(kb.wrapping_add(1023) << 52)) as f32;
    // Signs and the special cases of C99's pow, as selects on float32.
    let y_int = y == y.trunc();
    let y_odd = y_int && (y * 0.5) != (y * 0.5).trunc();
    let r = if x.is_sign_negative() && y_odd { -r } else { r };
    let r = if x < 0.0 && x.is_finite() && !y_int {
        f32::NAN
    } else {
        r
    };
    let one = y == 0.0 || x == 1.0 || (x == -1.0 && y.is_infinite());
    if one {
        1.0
    } else {
        r
    }
}

/// Applies a trig function over a slice of `$t` (f32 or f64), fixing up
/// arguments beyond [`TRIG_FAST_LIMIT`] (or `$limit`) with the scalar f64
/// path `$exact`
/// after the vector loop. A macro, so that `$fast` is called in the loop
/// body: passed as a `fn` item to a generic function, its `Fn::call` shim
/// was compiled without the caller's FMA and AVX features (software
/// `fmaf`: float32 sin of 1,000 elements took 23 us, not 1).
macro_rules! trig_slice {
    ($t:ty, $src:expr, $dst:expr, $fast:path, $exact:path) => {
        $crate::cpu::math::trig_slice!(
            $t,
            $src,
            $dst,
            $fast,
            $exact,
            $crate::cpu::math::TRIG_FAST_LIMIT
        )
    };
    ($t:ty, $src:expr, $dst:expr, $fast:path, $exact:path, $limit:expr) => {{
        let (src, dst): (&[$t], &mut [$t]) = ($src, $dst);
        let limit = $limit as $t;
        let mut big = 0u32;
        for (d, &x) in dst.iter_mut().zip(src) {
            *d = $fast(x);
            big |= (x.abs() > limit) as u32;
        }
        if big != 0 {
            for (d, &x) in dst.iter_mut().zip(src) {
                if x.abs() > limit {
                    *d = $exact(x as f64) as $t;
                }
            }
        }
    }};
}
pub(crate) use trig_slice;

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Distance in units in the last place between an f32 result and the
    /// correctly rounded f64 reference.
    pub(in crate::cpu) fn ulp_diff(got: f32, want: f64) -> f64 {
        let w = want as f32;
        if got.is_nan() && w.is_nan() || got == w {
            return 0.0;
        }
        if got.is_infinite() || w.is_infinite() {
            return if got == w { 0.0 } else { f64::INFINITY };
        }
        let ulp = (w.abs().max(f32::MIN_POSITIVE) as f64) * f32::EPSILON as f64;
        let ulp = if w == 0.0 {
            f32::from_bits(1) as f64
        } else {
            ulp
        };
        ((got as f64) - want).abs() / ulp
    }

    pub(in crate::cpu) fn max_ulp(
        f: impl Fn(f32) -> f32,
        r: impl Fn(f64) -> f64,
        xs: impl Iterator<Item = f32>,
    ) -> (f64, f32) {
        let mut worst = (0.0, 0.0);
        for x in xs {
            let u = ulp_diff(f(x), r(x as f64));
            if u > worst.0 {
                worst = (u, x);
            }
        }
        worst
    }

    /// Deterministic pseudo-random points in [lo, hi], plus a dense grid.
    pub(in crate::cpu) fn points(lo: f32, hi: f32, n: usize) -> impl Iterator<Item = f32> {
        let mut s = 0x1234_5678_9abc_def0u64;
        (0..n).map(move |i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            if i % 2 == 0 {
                lo + (hi - lo) * ((s >> 40) as f32 / (1u64 << 24) as f32)
            } else {
                lo + (hi - lo) * (i as f32 / n as f32)
            }
        })
    }

    #[test]
    fn sin_cos_within_4_ulp() {
        for (lo, hi) in [(-10.0, 10.0), (-1e4, 1e4), (-1e6, 1e6), (-1e-3, 1e-3)] {
            let (u, x) = max_ulp(sin_f32, f64::sin, points(lo, hi, 400_000));
            assert!(u <= 4.0, "sin: {u} ulp at {x}");
            let (u, x) = max_ulp(cos_f32, f64::cos, points(lo, hi, 400_000));
            assert!(u <= 4.0, "cos: {u} ulp at {x}");
        }
    }

    /// The f32 values next to every `step`-th multiple of pi/2 below
    /// `k_end` (the rounded multiple and its two neighbours, both signs),
    /// where the reduced argument cancels most: the reduction's last two
    /// parts must carry it.
    fn near_multiples_of_pi_over_2(k_end: u32, step: usize) -> impl Iterator<Item = f32> {
        (1..k_end).step_by(step).flat_map(|k| {
            let m = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
            let (up, down) = (
                f32::from_bits(m.to_bits() + 1),
                f32::from_bits(m.to_bits() - 1),
            );
            [m, up, down, -m, -up, -down]
        })
    }

    #[test]
    fn sin_cos_near_multiples_of_pi_over_2() {
        let xs = near_multiples_of_pi_over_2(636_000, 7);
        let (u, x) = max_ulp(sin_f32, f64::sin, xs);
        assert!(u <= 2.0, "sin: {u} ulp at {x}");
        let (u, x) = max_ulp(cos_f32, f64::cos, near_multiples_of_pi_over_2(636_000, 7));
        assert!(u <= 2.0, "cos: {u} ulp at {x}");
        assert_eq!(sin_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(cos_f32(-0.0), 1.0);
        assert!(sin_f32(f32::NAN).is_nan() && cos_f32(f32::NAN).is_nan());
    }

    #[test]
    fn tan_within_4_ulp_away_from_poles() {
        let (u, x) = max_ulp(tan_f32, f64::tan, points(-1.5, 1.5, 400_000));
        assert!(u <= 4.0, "tan: {u} ulp at {x}");
        let (u, x) = max_ulp(tan_f32, f64::tan, points(-1e5, 1e5, 400_000));
        assert!(u <= 2.0, "tan: {u} ulp at {x}");
    }

    /// Next to every third multiple of pi/2 up to the fast path's limit
    /// (zeros and poles, where the reduced argument is smallest): within 2
    /// ulp (1.57 is the worst of every float32 below the limit).
    #[test]
    fn tan_within_2_ulp_at_its_zeros_and_poles() {
        let xs = near_multiples_of_pi_over_2(63_662, 3);
        let (u, x) = max_ulp(tan_f32, f64::tan, xs);
        assert!(u <= 2.0, "tan: {u} ulp at {x}");
        assert_eq!(tan_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert!(tan_f32(f32::NAN).is_nan() && tan_f32(f32::INFINITY).is_nan());
    }

    #[test]
    fn exp_within_4_ulp() {
        let (u, x) = max_ulp(exp_f32, f64::exp, points(-87.0, 88.5, 400_000));
        assert!(u <= 4.0, "exp: {u} ulp at {x}");
        // Subnormal results.
        let (u, x) = max_ulp(exp_f32, f64::exp, points(-103.0, -87.5, 100_000));
        assert!(u <= 4.0, "exp subnormal: {u} ulp at {x}");
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(100.0), f32::INFINITY);
        assert!(exp_f32(f32::NAN).is_nan());
    }

    #[test]
    fn log_within_4_ulp() {
        let (u, x) = max_ulp(log_f32, f64::ln, points(1e-30, 10.0, 400_000));
        assert!(u <= 4.0, "log: {u} ulp at {x}");
        let (u, x) = max_ulp(log_f32, f64::ln, points(0.5, 2.0, 400_000));
        assert!(u <= 4.0, "log: {u} ulp at {x}");
        let (u, x) = max_ulp(log_f32, f64::ln, points(1.0, 3.0e38, 400_000));
        assert!(u <= 4.0, "log: {u} ulp at {x}");
        // Subnormal inputs.
        let (u, x) = max_ulp(log_f32, f64::ln, points(1e-44, 1e-38, 100_000));
        assert!(u <= 4.0, "log subnormal: {u} ulp at {x}");
        assert_eq!(log_f32(0.0), f32::NEG_INFINITY);
        assert_eq!(log_f32(f32::INFINITY), f32::INFINITY);
        assert!(log_f32(-1.0).is_nan());
        assert!(log_f32(f32::NAN).is_nan());
    }

    #[test]
    fn tanh_within_4_ulp() {
        let (u, x) = max_ulp(tanh_f32, f64::tanh, points(-12.0, 12.0, 400_000));
        assert!(u <= 4.0, "tanh: {u} ulp at {x}");
        let (u, x) = max_ulp(tanh_f32, f64::tanh, points(-0.7, 0.7, 400_000));
        assert!(u <= 4.0, "tanh: {u} ulp at {x}");
        assert_eq!(tanh_f32(f32::INFINITY), 1.0);
        assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
    }

    #[test]
    fn huge_trig_arguments_take_the_exact_path() {
        let src = [1e7f32, -3e20, 0.5, f32::INFINITY, f32::NAN];
        let mut dst = [0f32; 5];
        trig_slice!(f32, &src, &mut dst, sin_f32, f64::sin);
        for (i, &x) in src.iter().enumerate().take(3) {
            assert!(ulp_diff(dst[i], (x as f64).sin()) <= 1.0, "{x}");
        }
        assert!(dst[3].is_nan() && dst[4].is_nan());
    }
    #[test]
    fn pow_within_1_ulp_and_c99_special_cases() {
        let bases: Vec<f32> = points(1e-3, 40.0, 2_000).collect();
        let exps: Vec<f32> = points(-12.0, 12.0, 400).collect();
        let mut worst = (0.0, 0.0, 0.0);
        for &x in &bases {
            for &y in &exps {
                let u = ulp_diff(pow_f32(x, y), (x as f64).powf(y as f64));
                if u > worst.0 {
                    worst = (u, x, y);
                }
            }
        }
        assert!(
            worst.0 <= 1.0,
            "pow: {} ulp at {}^{}",
            worst.0,
            worst.1,
            worst.2
        );
        // Results near overflow and through the subnormals; negative bases
        // with integer exponents; subnormal bases.
        for (x, y) in [
            (2.0f32, 127.99),
            (2.0, -149.0),
            (3.0, -93.5),
            (-2.5, 7.0),
            (-2.5, -6.0),
            (1e-40, 0.5),
            (1e-40, -0.25),
            (0.999_999, 1e7),
            (1.000_001, -3e6),
        ] {
            let u = ulp_diff(pow_f32(x, y), (x as f64).powf(y as f64));
            assert!(u <= 1.0, "pow({x}, {y}): {u} ulp");
        }
        let (inf, nan) = (f32::INFINITY, f32::NAN);
        let cases: [(f32, f32); 28] = [
            (0.0, 3.0),
            (-0.0, 3.0),
            (-0.0, -3.0),
            (-0.0, -2.0),
            (0.0, -0.5),
            (-0.0, 0.5),
            (inf, -1.0),
            (-inf, 3.0),
            (-inf, -3.0),
            (-inf, 0.5),
            (-inf, 2.0),
            (-1.0, inf),
            (-1.0, -inf),
            (1.0, nan),
            (nan, 0.0),
            (nan, -0.0),
            (nan, 2.0),
            (2.0, nan),
            (-2.0, 0.5),
            (-8.0, 1.0 / 3.0),
            (0.5, inf),
            (0.5, -inf),
            (2.0, inf),
            (2.0, -inf),
            (-2.0, inf),
            (-0.5, -inf),
            (3e38, 2.0),
            (1e-30, 3.0),
        ];
        for (x, y) in cases {
            let want = x.powf(y);
            let got = pow_f32(x, y);
            assert!(
                got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                "pow({x}, {y}) = {got}, powf says {want}"
            );
        }
    }
}
