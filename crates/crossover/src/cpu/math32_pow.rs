//! float32 `power` over a chunk with AVX-512 intrinsics, within 1 ulp of
//! the correctly rounded result and with C99's `powf` in every special case.
//!
//! The portable [`super::math::pow_f32`] (the AVX2 and scalar paths)
//! reduces |x| on float32 lanes and runs a division and two long series
//! on 8 f64 lanes: about 110 instructions per 16 elements, 1.5 ns an
//! element on one core of the AMD EPYC (Zen 4) test machine, where NumPy's
//! SVML `powf` takes 0.7. Here instructions that AVX-512 has and
//! autovectorised code never gets cut that to about 85 (1.1 ns):
//!
//! - `vgetmantpd`/`vgetexppd` split |x| = 2^e m, m in [1, 2) (float32
//!   subnormals are normal in f64, so no rescaling);
//! - `vpermt2pd` looks up 16-entry tables held in two registers (an
//!   autovectorised table lookup is a gather, slower than the division
//!   it replaces): 1/c and log2 c for the 16 subintervals of m, so
//!   log2 m = log2 c + log2(1 + r), r = m/c - 1 in [-1/32, 1/16), a
//!   degree-5 polynomial instead of atanh's series and its division;
//!   then 2^(j/16) for the exponential, leaving 2^f for |f| <= 1/32 to a
//!   cubic;
//! - `vscalefpd` applies 2^floor(k/16), `vrangepd` clamps y log2|x|.
//!
//! Everything between the float32 input and output is f64 (the product
//! y log2|x| up to +-150 needs log2 to ~1e-10 relative; the tables and
//! both polynomials are good to 4e-11 and 1.2e-9, so the result is the
//! f64 value rounded once to float32: 0.51 ulp at worst over 2e7 random
//! points). Subintervals 0 and 15 take c = 1 and c = 2 exactly, so
//! log2|x| near x = 1 is as accurate relatively as the polynomial.

use super::interp::Arg;

// Coefficients are quoted as computed (shortest round-trip decimal).
#[allow(clippy::excessive_precision)]
mod tables {
    /// 1/c for the subintervals [1 + i/16, 1 + (i+1)/16) of m, c their
    /// midpoint, except 1 and 1/2 at the ends (so log2 c is exact there):
    /// the float64 logarithms' table.
    pub const INVC: [f64; 16] = crate::cpu::math_log::consts::TABLES64.inv_c;
    /// -log2 of those (log2 c), rounded to f64 from a 120-bit value.
    pub const LOGC: [f64; 16] = [
        0.0,
        0.1292830169449665,
        0.2094533656289497,
        0.28540221886224837,
        0.3575520046180836,
        0.42626475470209796,
        0.49185309632967467,
        0.5545888516776374,
        0.6147098441152083,
        0.6724253419714956,
        0.7279204545631992,
        0.7813597135246597,
        0.8328900141647417,
        0.8826430493618412,
        0.9307373375628862,
        1.0,
    ];
    /// 2^(j/16) (the float64 exp kernels' table).
    pub use crate::cpu::math64_exp512::consts::POW_HI as EXP2;
    /// log2(1 + r) / r on [-1/32, 1/16], coefficients of r^0..r^5: a
    /// Lawson-weighted least-squares fit of the relative error (4.4e-11).
    pub const LOG_P: [f64; 6] = [
        1.4426950408615378,
        -0.7213475127523906,
        0.4808985653615483,
        -0.3606986388231117,
        0.2884969931236873,
        -0.22262798503945624,
    ];
    /// 2^f on [-1/32, 1/32], f^0..f^3, fitted the same way (1.2e-9).
    pub const EXP_P: [f64; 4] = [
        0.9999999988536242,
        0.6931471823126658,
        0.24023589935670503,
        0.055502800654719284,
    ];
}

/// `out[i] = x[i]^y[i]` with AVX-512 where [`super::simd::level`] selects
/// it; false (nothing written) elsewhere, for the portable loop.
#[inline(always)]
pub fn pow_slices_avx512(x: Arg<'_, f32>, y: Arg<'_, f32>, out: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::level() == super::simd::SimdLevel::Avx512 {
            // (pointer, length or splat bits, splat)
            let parts = |a: Arg<'_, f32>| match a {
                Arg::Slice(s) => (s.as_ptr(), s.len(), false),
                Arg::Splat(v) => (std::ptr::null(), v.to_bits() as usize, true),
            };
            let ((xp, xn, xs), (yp, yn, ys)) = (parts(x), parts(y));
            assert!(
                (xs || xn >= out.len()) && (ys || yn >= out.len()),
                "pow: input shorter than output"
            );
            // SAFETY: level() reports AVX-512 only where the CPU has it
            // (every feature the kernel enables); slices are at least
            // out.len() long (asserted above).
            unsafe { avx512::pow_chunk(xp, xn, xs, yp, yn, ys, out) };
            return true;
        }
    }
    let _ = (x, y, out);
    false
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::tables::*;
    use std::arch::x86_64::*;

    /// 1.5 * 2^48: adding it rounds to a multiple of 1/16 whose count k
    /// sits in the low mantissa bits (the low 4 index the 2^(j/16) table).
    const SHIFT16: f64 = 422_212_465_065_984.0;

    struct Tabs {
        invc: [__m512d; 2],
        logc: [__m512d; 2],
        exp2: [__m512d; 2],
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    fn tabs() -> Tabs {
        let ld = |a: &[f64; 16]| {
            // SAFETY: two 8-lane unaligned loads inside a 16-entry array.
            unsafe {
                [
                    _mm512_loadu_pd(a.as_ptr()),
                    _mm512_loadu_pd(a.as_ptr().add(8)),
                ]
            }
        };
        Tabs {
            invc: ld(&INVC),
            logc: ld(&LOGC),
            exp2: ld(&EXP2),
        }
    }

    /// `|x|^y` of 8 lanes before signs and special cases (those the
    /// arithmetic gets right: 0, inf, and NaN x; see [`pow16`]).
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    fn abs_pow8(t: &Tabs, x: __m256, y: __m256) -> __m256 {
        let xd = _mm512_cvtps_pd(x);
        let yd = _mm512_cvtps_pd(y);
        // |x| = 2^e m, m in [1, 2): 0 gives e = -inf (m = 0), inf e = inf.
        let m = _mm512_getmant_pd::<_MM_MANT_NORM_1_2, _MM_MANT_SIGN_ZERO>(xd);
        let e = _mm512_getexp_pd(xd);
        // The top 4 mantissa bits of m (vpermt2pd reads the low 4).
        let i = _mm512_srli_epi64::<48>(_mm512_castpd_si512(m));
        let invc = _mm512_permutex2var_pd(t.invc[0], i, t.invc[1]);
        let logc = _mm512_permutex2var_pd(t.logc[0], i, t.logc[1]);
        let r = _mm512_fmadd_pd(m, invc, _mm512_set1_pd(-1.0));
        let c = |k: usize| _mm512_set1_pd(LOG_P[k]);
        let p = _mm512_fmadd_pd(c(5), r, c(4));
        let p = _mm512_fmadd_pd(p, r, c(3));
        let p = _mm512_fmadd_pd(p, r, c(2));
        let p = _mm512_fmadd_pd(p, r, c(1));
        let p = _mm512_fmadd_pd(p, r, c(0));
        // e + log2 c is exact (Sterbenz where they cancel, at e = -1).
        let l = _mm512_fmadd_pd(p, r, _mm512_add_pd(e, logc));
        // |y log2|x|| clamped to 200 (float32 results are 0 or inf well
        // before); a NaN comes out as the bound, fixed up in pow16.
        let tt = _mm512_range_pd::<0b0010>(_mm512_mul_pd(yd, l), _mm512_set1_pd(200.0));
        // tt = k/16 + f, |f| <= 1/32.
        let kd = _mm512_add_pd(tt, _mm512_set1_pd(SHIFT16));
        let kr = _mm512_sub_pd(kd, _mm512_set1_pd(SHIFT16));
        let f = _mm512_sub_pd(tt, kr);
        let d = |k: usize| _mm512_set1_pd(EXP_P[k]);
        let q = _mm512_fmadd_pd(d(3), f, d(2));
        let q = _mm512_fmadd_pd(q, f, d(1));
        let q = _mm512_fmadd_pd(q, f, d(0));
        let s = _mm512_permutex2var_pd(t.exp2[0], _mm512_castpd_si512(kd), t.exp2[1]);
        // 2^(k/16) = 2^(k mod 16 / 16) 2^floor(k/16); one rounding to f32.
        _mm512_cvtpd_ps(_mm512_scalef_pd(_mm512_mul_pd(q, s), kr))
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    fn pow16(t: &Tabs, x: __m512, y: __m512) -> __m512 {
        let lo = abs_pow8(t, _mm512_castps512_ps256(x), _mm512_castps512_ps256(y));
        let hi = abs_pow8(
            t,
            _mm512_extractf32x8_ps::<1>(x),
            _mm512_extractf32x8_ps::<1>(y),
        );
        let r = _mm512_insertf32x8::<1>(_mm512_castps256_ps512(lo), hi);
        // Positive finite nonzero x with finite y need nothing more (also
        // x = 1 or y = 0: the sums are exact, 2^0 = 1).
        let x_neg = _mm512_movepi32_mask(_mm512_castps_si512(x));
        // x: QNaN, +0, +inf, SNaN (negatives: x_neg); y: NaN or +-inf.
        let odd = x_neg | _mm512_fpclass_ps_mask::<0x8b>(x) | _mm512_fpclass_ps_mask::<0x99>(y);
        if odd == 0 {
            return r;
        }
        // Signs and C99's special cases, as masks.
        const TRUNC: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
        let y_int = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(_mm512_roundscale_ps::<TRUNC>(y), y);
        // Odd: an integer below 2^24 with its low bit set (larger ones are
        // even, and convert to 0x8000_0000).
        let y_odd =
            _mm512_mask_test_epi32_mask(y_int, _mm512_cvttps_epi32(y), _mm512_set1_epi32(1));
        let r = _mm512_mask_xor_ps(r, x_neg & y_odd, r, _mm512_set1_ps(-0.0));
        let x_lt0 = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, _mm512_setzero_ps());
        let x_neg_finite =
            _mm512_mask_cmp_ps_mask::<_CMP_GT_OQ>(x_lt0, x, _mm512_set1_ps(f32::NEG_INFINITY));
        let nan = (x_neg_finite & !y_int) | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, y);
        let r = _mm512_mask_mov_ps(r, nan, _mm512_set1_ps(f32::NAN));
        let y_inf = _mm512_fpclass_ps_mask::<0x18>(y);
        let one = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(y, _mm512_setzero_ps())
            | _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(x, _mm512_set1_ps(1.0))
            | (_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(x, _mm512_set1_ps(-1.0)) & y_inf);
        _mm512_mask_mov_ps(r, one, _mm512_set1_ps(1.0))
    }

    /// One input: 16 lanes from `p + i` (the first `n` of them when
    /// masked), or the splat `bits` when `splat`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    unsafe fn load(p: *const f32, bits: usize, splat: bool, i: usize, k: __mmask16) -> __m512 {
        if splat {
            _mm512_set1_ps(f32::from_bits(bits as u32))
        } else {
            // SAFETY: the caller keeps the k lanes from i inside the slice.
            unsafe {
                if k == !0 {
                    _mm512_loadu_ps(p.add(i))
                } else {
                    _mm512_maskz_loadu_ps(k, p.add(i))
                }
            }
        }
    }

    /// # Safety
    /// The CPU has AVX-512 F/VL/DQ/BW and FMA; `xp`/`yp` point to at least
    /// `out.len()` floats unless the input is a splat (`xs`/`ys`, its bits
    /// in `xn`/`yn`).
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    pub(super) unsafe fn pow_chunk(
        xp: *const f32,
        xn: usize,
        xs: bool,
        yp: *const f32,
        yn: usize,
        ys: bool,
        out: &mut [f32],
    ) {
        let t = tabs();
        let n = out.len();
        let full = n - n % 16;
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= n: inside out and (the caller's contract)
            // inside non-splat inputs.
            unsafe {
                let v = pow16(&t, load(xp, xn, xs, i, !0), load(yp, yn, ys, i, !0));
                _mm512_storeu_ps(out.as_mut_ptr().add(i), v);
            }
            i += 16;
        }
        if full < n {
            let k = ((1u32 << (n - full)) - 1) as __mmask16;
            // SAFETY: the k lanes from `full` are below n, as above.
            unsafe {
                let v = pow16(&t, load(xp, xn, xs, full, k), load(yp, yn, ys, full, k));
                _mm512_mask_storeu_ps(out.as_mut_ptr().add(full), k, v);
            }
        }
    }
}

#[cfg(test)]
#[path = "math32_pow_tests.rs"]
mod tests;
