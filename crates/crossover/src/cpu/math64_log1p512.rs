//! float64 `log1p`, `arcsinh`, `arccosh` and `arctanh` over a chunk with
//! AVX-512 intrinsics, on the table-driven logarithm of
//! [`super::math_log`]: log1p within 1 ulp of glibc, the inverse
//! hyperbolics within 2 (glibc is itself up to 2 ulp from the true value
//! there; these are within 0.7 on the points checked with mpmath), C's
//! values at 0, ±1, inf and NaN. The portable forms of
//! [`super::math64_hyp`] stay for the AVX2 and scalar paths: they reduce
//! with fdlibm's `f / (2 + f)` and take the arguments' quotients and their
//! corrections by divisions, 2.6 ns a point for log1p and 4.0-4.8 for the
//! inverse hyperbolics on one core against NumPy's SVML loops' 2.0 and
//! 2.7-2.9 (issue 23's table: float64 `arcsinh` 0.62x at 1e4).
//!
//! Method: each function is musl's form (as the portable ones), a
//! logarithm of `u + err`, u = 1 + y rounded and err the rounding errors
//! of u and of y's own terms, all kept exactly (TwoSum, FMA remainders).
//! [`log_core`] takes err as a correction of its reduced argument, so no
//! division is left in the logarithm; the quotients of the arguments come
//! from `vrcp14pd`, one Newton step and one correction by the FMA
//! remainder (within an ulp; their rounding error is carried in err
//! anyway). The square roots of arcsinh and arccosh stay `vsqrtpd` (the
//! Newton form measured no faster: the divider runs beside the FMA port).

/// `out[i] = log1p(x[i])` for `out.len()` points of `x` with AVX-512 where
/// [`super::simd::level`] selects it; false (nothing written)
/// elsewhere, for the portable loop.
#[inline(always)]
pub fn log1p_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<LOG1P>(x, out)
}

/// The `arcsinh` form of [`log1p_slice_f64`].
#[inline(always)]
pub fn asinh_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<ASINH>(x, out)
}

/// The `arccosh` form of [`log1p_slice_f64`].
#[inline(always)]
pub fn acosh_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<ACOSH>(x, out)
}

/// The `arctanh` form of [`log1p_slice_f64`].
#[inline(always)]
pub fn atanh_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<ATANH>(x, out)
}

/// Which function a kernel computes.
const LOG1P: u8 = 0;
const ASINH: u8 = 1;
const ACOSH: u8 = 2;
const ATANH: u8 = 3;

#[inline(always)]
fn run_slice<const F: u8>(x: &[f64], out: &mut [f64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    return super::simd::avx512_slice("log1p kernels", x, out, avx512::run::<F>);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, out);
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{ACOSH, ASINH, ATANH, LOG1P};
    use crate::cpu::math64_exp512::avx512::fast_two_sum;
    use crate::cpu::math_log::avx512::{each_register, log_core, tables, F64};
    use std::arch::x86_64::*;

    /// 2^-54: below it log1p, arcsinh and arctanh return x.
    const TINY: f64 = 5.551_115_123_125_783e-17;
    /// 2^26: from it arccosh is log(x) + ln 2.
    const HUGE: f64 = 67_108_864.0;

    type Tabs = [[__m512d; 2]; 3];

    /// A register of one value.
    macro_rules! c {
        ($v:expr) => {
            _mm512_set1_pd($v)
        };
    }

    /// a + b = s + e exactly, for any a and b (TwoSum).
    ///
    /// # Safety
    /// The CPU has AVX-512 F (the caller's target features).
    #[inline(always)]
    unsafe fn two_sum(a: __m512d, b: __m512d) -> (__m512d, __m512d) {
        let s = _mm512_add_pd(a, b);
        let bb = _mm512_sub_pd(s, a);
        let e = _mm512_add_pd(_mm512_sub_pd(a, _mm512_sub_pd(s, bb)), _mm512_sub_pd(b, bb));
        (s, e)
    }

    /// `if m { a } else { b }` by lane.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn pick(m: __mmask8, a: __m512d, b: __m512d) -> __m512d {
        _mm512_mask_mov_pd(b, m, a)
    }

    /// (num/den within about an ulp, 1/den within 2^-28), den positive
    /// and finite: `vrcp14pd`, one Newton step, one correction by the
    /// remainder.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn quotient(num: __m512d, den: __m512d) -> (__m512d, __m512d) {
        let r0 = _mm512_rcp14_pd(den);
        let r = _mm512_fmadd_pd(r0, _mm512_fnmadd_pd(den, r0, c!(1.0)), r0);
        let q0 = _mm512_mul_pd(num, r);
        (_mm512_fmadd_pd(_mm512_fnmadd_pd(q0, den, num), r, q0), r)
    }

    /// ln(u + err) + kadd ln 2 ([`log_core`] on raw registers).
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn ln(u: __m512d, err: __m512d, kadd: __m512d, t: &Tabs) -> __m512d {
        // SAFETY: the caller's features.
        unsafe { log_core::<F64, 0, true>(F64(u), F64(err), F64(kadd), t).0 }
    }

    /// x where |x| < 2^-54 or x is NaN (keeps -0), else v.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn tiny_as_x(x: __m512d, v: __m512d) -> __m512d {
        let a = _mm512_andnot_pd(c!(-0.0), x);
        pick(_mm512_cmp_pd_mask::<_CMP_NGE_UQ>(a, c!(TINY)), x, v)
    }

    /// `v` with the sign of x (v positive or NaN).
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn signed_as(x: __m512d, v: __m512d) -> __m512d {
        _mm512_or_pd(v, _mm512_and_pd(x, c!(-0.0)))
    }

    /// log1p: ln(u + err), 1 + x = u + err.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn log1p(x: __m512d, t: &Tabs) -> __m512d {
        let (u, err) = two_sum(c!(1.0), x);
        let v = ln(u, err, _mm512_setzero_pd(), t);
        let v = pick(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(x, c!(f64::INFINITY)), x, v);
        let v = pick(
            _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(x, c!(-1.0)),
            c!(f64::NEG_INFINITY),
            v,
        );
        let v = pick(
            _mm512_cmp_pd_mask::<_CMP_LT_OQ>(x, c!(-1.0)),
            c!(f64::NAN),
            v,
        );
        tiny_as_x(x, v)
    }

    /// arcsinh of a = |x|: `log1p(a + a^2/(sqrt(a^2 + 1) + 1))` below 2,
    /// `ln(a + 1/(sqrt(a^2 + 1) + a)/2) + ln 2` from 2 (no overflow), one
    /// quotient for both; the rounding errors of a^2, the quotient and the
    /// sums are carried (musl's form is up to 1.6 ulp off without).
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn asinh(x: __m512d, t: &Tabs) -> __m512d {
        let a = _mm512_andnot_pd(c!(-0.0), x);
        let z = _mm512_mul_pd(a, a);
        let h = _mm512_sqrt_pd(_mm512_add_pd(z, c!(1.0)));
        let mid = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(a, c!(2.0));
        let num = pick(mid, c!(1.0), z);
        // Capped: past 2^600 the quotient only rounds away, and an
        // infinite denominator would make the Newton step NaN.
        let den = _mm512_min_pd(_mm512_add_pd(h, pick(mid, a, c!(1.0))), c!(1e300));
        let (q, r) = quotient(num, den);
        let num_lo = _mm512_maskz_fmsub_pd(!mid, a, a, z);
        let q_lo = _mm512_mul_pd(_mm512_add_pd(_mm512_fnmadd_pd(q, den, num), num_lo), r);
        let (y, y_lo) = fast_two_sum(a, q);
        let (u1, err1) = two_sum(c!(1.0), y);
        let (u2, err2) = fast_two_sum(a, _mm512_mul_pd(c!(0.5), q));
        let u = pick(mid, u2, u1);
        let err = pick(mid, err2, _mm512_add_pd(err1, _mm512_add_pd(y_lo, q_lo)));
        let v = ln(u, err, _mm512_maskz_mov_pd(mid, c!(1.0)), t);
        let v = pick(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, c!(f64::INFINITY)), a, v);
        tiny_as_x(x, signed_as(x, v))
    }

    /// arccosh: `log1p(t + sqrt(t^2 + 2t))`, t = x - 1, below 2 (the sum
    /// under the root and the root's error carried), `ln(2x - 1/(x +
    /// sqrt(x^2 - 1)))` from 2, `ln(x) + ln 2` from 2^26; one reciprocal
    /// serves the root's correction and the quotient. NaN below 1.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn acosh(x: __m512d, t: &Tabs) -> __m512d {
        let t1 = _mm512_sub_pd(x, c!(1.0));
        let tt = _mm512_mul_pd(t1, t1);
        let (w, w_lo) = fast_two_sum(_mm512_add_pd(t1, t1), tt);
        let w_lo = _mm512_add_pd(w_lo, _mm512_fmsub_pd(t1, t1, tt));
        let big = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(x, c!(HUGE));
        let mid = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(x, c!(2.0));
        let s = _mm512_sqrt_pd(pick(mid, _mm512_fmsub_pd(x, x, c!(1.0)), w));
        // 1/(2s) below 2, 1/(x + s) from 2 (capped as in asinh).
        let den = _mm512_min_pd(_mm512_add_pd(s, pick(mid, x, s)), c!(1e300));
        let (q, r) = quotient(c!(1.0), den);
        let s_lo = _mm512_mul_pd(_mm512_add_pd(_mm512_fnmadd_pd(s, s, w), w_lo), r);
        let s_lo = _mm512_maskz_mov_pd(
            _mm512_cmp_pd_mask::<_CMP_GT_OQ>(w, _mm512_setzero_pd()),
            s_lo,
        );
        let (y, y_lo) = fast_two_sum(s, t1);
        let (u1, err1) = two_sum(c!(1.0), y);
        let err1 = _mm512_add_pd(err1, _mm512_add_pd(y_lo, s_lo));
        let (u2, err2) = fast_two_sum(_mm512_add_pd(x, x), _mm512_sub_pd(_mm512_setzero_pd(), q));
        let u = pick(big, x, pick(mid, u2, u1));
        let err = pick(mid, _mm512_maskz_mov_pd(!big, err2), err1);
        let v = ln(u, err, _mm512_maskz_mov_pd(big, c!(1.0)), t);
        let v = pick(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(x, c!(f64::INFINITY)), x, v);
        pick(
            _mm512_cmp_pd_mask::<_CMP_NGE_UQ>(x, c!(1.0)),
            c!(f64::NAN),
            v,
        )
    }

    /// arctanh of a = |x|: `log1p(2a + 2a^2/(1 - a)) / 2` below 1/2,
    /// `log1p(2a/(1 - a)) / 2` above (1 - a exact there), one quotient for
    /// both, its error and 2a^2's carried; ±inf at ±1, NaN beyond.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn atanh(x: __m512d, t: &Tabs) -> __m512d {
        let a = _mm512_andnot_pd(c!(-0.0), x);
        let d = _mm512_sub_pd(c!(1.0), a);
        let small = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, c!(0.5));
        let a2 = _mm512_add_pd(a, a);
        let num = pick(small, _mm512_mul_pd(a2, a), a2);
        let num_lo = _mm512_maskz_fmsub_pd(small, a2, a, num);
        let (q, r) = quotient(num, d);
        let q_lo = _mm512_mul_pd(_mm512_add_pd(_mm512_fnmadd_pd(q, d, num), num_lo), r);
        let (y, y_lo) = two_sum(_mm512_maskz_mov_pd(small, a2), q);
        let (u, err) = two_sum(c!(1.0), y);
        let err = _mm512_add_pd(err, _mm512_add_pd(y_lo, q_lo));
        let v = _mm512_mul_pd(c!(0.5), ln(u, err, _mm512_setzero_pd(), t));
        let v = pick(
            _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, c!(1.0)),
            c!(f64::INFINITY),
            v,
        );
        let v = pick(
            _mm512_cmp_pd_mask::<_CMP_GT_OQ>(a, c!(1.0)),
            c!(f64::NAN),
            v,
        );
        tiny_as_x(x, signed_as(x, v))
    }

    /// # Safety
    /// The CPU has AVX-512 F/VL/DQ/BW and FMA; `x` points to at least
    /// `out.len()` values.
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    pub(super) unsafe fn run<const F: u8>(x: *const f64, out: &mut [f64]) {
        // SAFETY: this function's features; x holds out.len() points (the
        // caller's contract).
        unsafe {
            let t: Tabs = tables::<F64, 0>();
            each_register(x, out, |v: F64| {
                F64(match F {
                    LOG1P => log1p(v.0, &t),
                    ASINH => asinh(v.0, &t),
                    ACOSH => acosh(v.0, &t),
                    _ => {
                        debug_assert_eq!(F, ATANH);
                        atanh(v.0, &t)
                    }
                })
            });
        }
    }
}

#[cfg(test)]
#[path = "math64_log1p512_tests.rs"]
mod tests;
