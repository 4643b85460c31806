//! float32 `exp2`, `sinh` and `cosh` over a chunk with AVX-512 intrinsics:
//! exp2 bit for bit the portable [`super::math::exp2_f32`] (within 1 ulp,
//! exact at integers), sinh and cosh within 2 ulp of the correctly rounded
//! value like the portable [`super::math32_hyp`] forms, C's values at 0,
//! inf and NaN. The portable forms scale by 2^n as two multiplications by
//! powers of two built with integer bit work, and sinh and cosh take e^-|x|
//! as a division of e^|x|: 0.26, 0.51 and 0.42 ns a point on one core of
//! the Zen 4 VM against NumPy's SVML 0.21, 0.35 and 0.33 (issue 23's table:
//! 0.66x, 0.57x and 0.58x at 1e4).
//!
//! Method: `vscalefps` scales by 2^n in one instruction, rounding once
//! where the result is subnormal (as the two factors did) and saturating
//! to 0 and inf. exp2 keeps the portable polynomial in f = x - round(x).
//! sinh and cosh keep the portable forms' e^|x| (`exp_f32`'s reduction and
//! polynomial), scaled to e^|x|/4 so that it stays finite up to sinh's and
//! cosh's own overflow threshold (89.42), and take e^-|x|/4 as 1/16 of its
//! reciprocal from `vrcp14ps` and one Newton step (2^-28; no division);
//! the result is doubled at the end.
//! Up to |x| = 1 sinh is the portable form's polynomial (the subtraction
//! cancels there). An even/odd split of one Taylor series for e^r and
//! e^-r with a Fast2Sum of the powers of two (float64's method in
//! [`super::math64_exp512`]) was more accurate (0.96 ulp) and no faster
//! than the portable loop: 39 operations a register against 29 here.

// Coefficients are quoted as the portable forms quote them.
#![allow(clippy::excessive_precision)]

/// `out[i] = 2^x[i]` for `out.len()` points of `x` with AVX-512 where
/// [`super::simd::level`] selects it; false (nothing written) elsewhere,
/// for the portable loop.
#[inline(always)]
pub fn exp2_slice_f32(x: &[f32], out: &mut [f32]) -> bool {
    run_slice::<EXP2>(x, out)
}

/// The `sinh` form of [`exp2_slice_f32`].
#[inline(always)]
pub fn sinh_slice_f32(x: &[f32], out: &mut [f32]) -> bool {
    run_slice::<SINH>(x, out)
}

/// The `cosh` form of [`exp2_slice_f32`].
#[inline(always)]
pub fn cosh_slice_f32(x: &[f32], out: &mut [f32]) -> bool {
    run_slice::<COSH>(x, out)
}

/// Which function a kernel computes.
const SINH: u8 = 0;
const COSH: u8 = 1;
const EXP2: u8 = 2;

#[inline(always)]
fn run_slice<const F: u8>(x: &[f32], out: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    return super::simd::avx512_slice("exp kernels", x, out, avx512::run::<F>);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, out);
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{COSH, EXP2, SINH};
    use crate::cpu::math::{EXP_COEFFS, LN2_PARTS};
    use crate::cpu::math_log::avx512::{each_register, F32};
    use std::arch::x86_64::*;

    /// Past this |x| sinh and cosh overflow (from 89.416); clamping keeps
    /// n at most 129, so that e^a/4 stays finite.
    const CLAMP: f32 = 89.5;
    /// The portable exp2's polynomial in f, highest first (p(f) f + 1).
    const EXP2_POLY: [f32; 6] = [
        1.535_336_2e-4,
        1.339_887_4e-3,
        9.618_437e-3,
        5.550_332_5e-2,
        2.402_264_8e-1,
        6.931_472e-1,
    ];
    /// The portable sinh's polynomial below 1 (in x², highest first).
    const SINH_SMALL: [f32; 3] = [
        2.037_219_129_45e-4,
        8.330_283_762_39e-3,
        1.666_671_602_11e-1,
    ];

    /// Horner's rule over `coefs` (highest first) at z.
    ///
    /// # Safety
    /// The CPU has AVX-512 F (the caller's target features).
    #[inline(always)]
    unsafe fn horner(z: __m512, coefs: &[f32]) -> __m512 {
        let mut p = _mm512_set1_ps(coefs[0]);
        for &q in &coefs[1..] {
            p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(q));
        }
        p
    }

    /// x rounded to the nearest whole number (ties to even).
    ///
    /// # Safety
    /// As [`horner`].
    #[inline(always)]
    unsafe fn round(x: __m512) -> __m512 {
        _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x)
    }

    /// One vector: 2^x of 16 points, the portable form's steps.
    ///
    /// # Safety
    /// As [`horner`].
    #[inline(always)]
    unsafe fn exp2(x: __m512) -> __m512 {
        let c = _mm512_set1_ps;
        // Past these the result is 0 or inf; NaN stays NaN (MAXPS and
        // MINPS return their second operand then).
        let v = _mm512_min_ps(c(129.0), _mm512_max_ps(c(-151.0), x));
        let n = round(v);
        let f = _mm512_sub_ps(v, n);
        let y = _mm512_fmadd_ps(horner(f, &EXP2_POLY), f, c(1.0));
        _mm512_scalef_ps(y, n)
    }

    /// One vector: sinh or cosh (F) of 16 points.
    ///
    /// # Safety
    /// As [`horner`].
    #[inline(always)]
    unsafe fn sinh_cosh<const F: u8>(x: __m512) -> __m512 {
        let c = _mm512_set1_ps;
        let sign = c(-0.0);
        // min(89.5, NaN) is NaN: MINPS returns its second operand then.
        let a = _mm512_min_ps(c(CLAMP), _mm512_andnot_ps(sign, x));
        // e^a/4 = 2^(n-2) e^r: exp_f32's reduction and polynomial.
        let n = round(_mm512_mul_ps(a, c(std::f32::consts::LOG2_E)));
        let r = _mm512_fnmadd_ps(n, c(LN2_PARTS[0]), a);
        let r = _mm512_fnmadd_ps(n, c(LN2_PARTS[1]), r);
        let p = _mm512_mul_ps(horner(r, &EXP_COEFFS), r);
        let e = _mm512_add_ps(_mm512_fmadd_ps(p, r, r), c(1.0));
        let quarter = _mm512_scalef_ps(e, _mm512_sub_ps(n, c(2.0)));
        // e^-a/4 = (1/16) / (e^a/4): vrcp14ps and one Newton step (2^-28;
        // a flushed reciprocal past 2^126 leaves 0, not NaN).
        let inv = _mm512_rcp14_ps(quarter);
        let inv = _mm512_fmadd_ps(inv, _mm512_fnmadd_ps(quarter, inv, c(1.0)), inv);
        let v = if F == SINH {
            _mm512_fnmadd_ps(inv, c(1.0 / 16.0), quarter)
        } else {
            _mm512_fmadd_ps(inv, c(1.0 / 16.0), quarter)
        };
        let v = _mm512_add_ps(v, v);
        if F == COSH {
            return v;
        }
        // Up to 1: a + a^3 P(a^2), the portable form's polynomial (the
        // subtraction above cancels there).
        let below = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a, c(1.0));
        let z = _mm512_mul_ps(a, a);
        let taylor = _mm512_fmadd_ps(_mm512_mul_ps(horner(z, &SINH_SMALL), z), a, a);
        let v = _mm512_mask_mov_ps(v, below, taylor);
        // sinh is odd: x's sign (also on -0; NaN stays NaN).
        _mm512_or_ps(v, _mm512_and_ps(x, sign))
    }

    /// One vector of the function F.
    ///
    /// # Safety
    /// As [`horner`].
    #[inline(always)]
    unsafe fn lanes<const F: u8>(x: __m512) -> __m512 {
        match F {
            EXP2 => exp2(x),
            _ => sinh_cosh::<F>(x),
        }
    }

    /// # Safety
    /// The CPU has AVX-512 F/VL/DQ/BW and FMA; `x` points to at least
    /// `out.len()` values.
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    pub(super) unsafe fn run<const F: u8>(x: *const f32, out: &mut [f32]) {
        // SAFETY: this function's features; x holds out.len() points (the
        // caller's contract).
        unsafe { each_register(x, out, |v: F32| F32(lanes::<F>(v.0))) }
    }
}

#[cfg(test)]
#[path = "math32_exp512_tests.rs"]
mod tests;
