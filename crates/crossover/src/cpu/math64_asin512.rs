//! float64 `arcsin` and `arccos` over a chunk with AVX-512 intrinsics:
//! within 1 ulp of glibc (as the portable [`super::math64_inverse`] forms),
//! C's values at ±0, ±1, beyond ±1 and NaN. The portable forms are
//! fdlibm's: a rational R(z) = z P(z)/Q(z) (two polynomials and a
//! division), every branch computed for every lane, and a second division
//! for the square root's correction: 2.2-2.4 ns a point on one core against
//! NumPy's SVML loop's 1.5 (issue 23's table: float64 `arcsin` 0.62x at
//! 1e4). They stay for the AVX2 and scalar paths.
//!
//! Method (the reduction of SLEEF's and ARM's routines): with z = x^2
//! below 1/2 and z = (1 - |x|)/2 above, s = |x| or sqrt(z), one polynomial
//! gives asin(s) = s + s z P(z) on z in [0, 1/4] (degree 12, fitted by
//! `scripts/fit_asin_f64.py`, 2^-52.9 relative; the term is at most 1/20
//! of the result). Then asin |x| is that below 1/2 and pi/2 - 2 asin(s)
//! above; acos x is pi/2 - asin(x) below 1/2, 2 asin(s) from 1/2 and
//! pi - 2 asin(s) to -1/2. Where a difference could cancel, sqrt(z) is a
//! double-double (its remainder from an FMA over `vrcp14pd` of 2s) and the
//! large terms are summed exactly (Fast2Sum), so one rounding is left.

/// `out[i] = asin(x[i])` for `out.len()` points of `x` with AVX-512 where
/// [`super::simd::level`] selects it; false (nothing written)
/// elsewhere, for the portable loop.
#[inline(always)]
pub fn asin_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<false>(x, out)
}

/// The `arccos` form of [`asin_slice_f64`].
#[inline(always)]
pub fn acos_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<true>(x, out)
}

#[inline(always)]
fn run_slice<const ACOS: bool>(x: &[f64], out: &mut [f64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    return super::simd::avx512_slice("asin kernels", x, out, avx512::run::<ACOS>);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, out);
        false
    }
}

/// `scripts/fit_asin_f64.py`'s coefficients, highest first.
// Quoted as computed (shortest round-trip decimals).
#[allow(clippy::excessive_precision)]
const ASIN_P: [f64; 13] = [
    0.028762690011846594,
    -0.0148590684677662,
    0.01740553771621538,
    0.005455772997012878,
    0.010323222974141113,
    0.01147911390775028,
    0.013971219544977282,
    0.01735239227429941,
    0.022372172961334005,
    0.030381944138046662,
    0.04464285714636173,
    0.0749999999999843,
    0.16666666666666669,
];

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::ASIN_P;
    use crate::cpu::math64_exp512::avx512::fast_two_sum;
    use crate::cpu::math_log::avx512::{each_register, F64};
    use std::arch::x86_64::*;

    const PIO2_HI: f64 = std::f64::consts::FRAC_PI_2;
    const PIO2_LO: f64 = 6.123_233_995_736_766e-17;
    const PI_HI: f64 = std::f64::consts::PI;
    const PI_LO: f64 = 1.224_646_799_147_353_2e-16;

    /// A register of one value.
    macro_rules! c {
        ($v:expr) => {
            _mm512_set1_pd($v)
        };
    }

    /// asin(s) for the reduced argument of a = |x|: below 1/2 s = a, else
    /// s + s_lo = sqrt((1 - a)/2) exactly to about 2^-106.
    struct Reduced {
        small: __mmask8,
        s: __m512d,
        s_lo: __m512d,
        /// s z P(z): asin(s + s_lo) = s + s_lo + t.
        t: __m512d,
    }

    /// # Safety
    /// The CPU has AVX-512 F (the caller's target features).
    #[inline(always)]
    unsafe fn reduce(a: __m512d) -> Reduced {
        let small = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, c!(0.5));
        // 1 - a is exact from 1/2 on, and halving it too.
        let z = _mm512_mask_mul_pd(
            _mm512_mul_pd(_mm512_sub_pd(c!(1.0), a), c!(0.5)),
            small,
            a,
            a,
        );
        let root = _mm512_sqrt_pd(z);
        let s = _mm512_mask_mov_pd(root, small, a);
        // The root's remainder over 2 root: a correction far below its ulp,
        // so rcp14's 2^-14 is plenty (0 where z = 0 or s = a).
        let keep = !small & _mm512_cmp_pd_mask::<_CMP_GT_OQ>(z, _mm512_setzero_pd());
        let r = _mm512_rcp14_pd(_mm512_add_pd(root, root));
        let s_lo = _mm512_maskz_mul_pd(keep, _mm512_fnmadd_pd(root, root, z), r);
        let mut p = c!(ASIN_P[0]);
        for &k in &ASIN_P[1..] {
            p = _mm512_fmadd_pd(p, z, c!(k));
        }
        let t = _mm512_mul_pd(_mm512_mul_pd(s, z), p);
        Reduced { small, s, s_lo, t }
    }

    /// `big - 2 (s + s_lo + t) + big_lo` with one rounding: big - 2s is
    /// exact as a Fast2Sum (big > 2s).
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn less_twice(big: f64, big_lo: f64, r: &Reduced) -> __m512d {
        let two_s = _mm512_add_pd(r.s, r.s);
        let (h, e) = fast_two_sum(c!(big), _mm512_sub_pd(_mm512_setzero_pd(), two_s));
        let tail = _mm512_add_pd(_mm512_add_pd(r.s_lo, r.s_lo), _mm512_add_pd(r.t, r.t));
        _mm512_add_pd(h, _mm512_add_pd(_mm512_sub_pd(c!(big_lo), tail), e))
    }

    /// NaN where |x| > 1 or x is NaN, else v.
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn domain(a: __m512d, v: __m512d) -> __m512d {
        _mm512_mask_mov_pd(
            v,
            _mm512_cmp_pd_mask::<_CMP_NLE_UQ>(a, c!(1.0)),
            c!(f64::NAN),
        )
    }

    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn asin(x: __m512d) -> __m512d {
        let sign = c!(-0.0);
        let a = _mm512_andnot_pd(sign, x);
        let r = reduce(a);
        // Below 1/2: a + t (s = a, no low part).
        let v = _mm512_mask_add_pd(less_twice(PIO2_HI, PIO2_LO, &r), r.small, a, r.t);
        _mm512_or_pd(domain(a, v), _mm512_and_pd(x, sign))
    }

    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn acos(x: __m512d) -> __m512d {
        let sign = c!(-0.0);
        let a = _mm512_andnot_pd(sign, x);
        let r = reduce(a);
        // Below 1/2: pi/2 - (x + t) with t signed as x, pi/2 - x exact.
        let t = _mm512_or_pd(r.t, _mm512_and_pd(x, sign));
        let (h, e) = fast_two_sum(c!(PIO2_HI), _mm512_sub_pd(_mm512_setzero_pd(), x));
        let middle = _mm512_add_pd(h, _mm512_add_pd(_mm512_sub_pd(c!(PIO2_LO), t), e));
        // From 1/2: 2 asin(s); to -1/2: pi - 2 asin(s).
        let pos = _mm512_mul_pd(c!(2.0), _mm512_add_pd(r.s, _mm512_add_pd(r.s_lo, r.t)));
        let neg = less_twice(PI_HI, PI_LO, &r);
        let negative = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(x, _mm512_setzero_pd());
        let v = _mm512_mask_mov_pd(_mm512_mask_mov_pd(pos, negative, neg), r.small, middle);
        domain(a, v)
    }

    /// # Safety
    /// The CPU has AVX-512 F/VL/DQ/BW and FMA; `x` points to at least
    /// `out.len()` values.
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    pub(super) unsafe fn run<const ACOS: bool>(x: *const f64, out: &mut [f64]) {
        // SAFETY: this function's features; x holds out.len() points (the
        // caller's contract).
        unsafe {
            each_register(x, out, |v: F64| {
                F64(if ACOS { acos(v.0) } else { asin(v.0) })
            });
        }
    }
}

#[cfg(test)]
#[path = "math64_asin512_tests.rs"]
mod tests;
