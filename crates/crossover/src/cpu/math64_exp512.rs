//! float64 `exp`, `exp2`, `expm1`, `sinh`, `cosh` and `tanh` over a chunk
//! with AVX-512 intrinsics, on one table-driven exp: within 1 ulp of glibc
//! (sinh, cosh and tanh within 2, as the portable [`super::math64_hyp`]
//! forms),
//! C's values at 0, inf and NaN, exp2 exact at integers. The portable forms
//! compute exp with a degree-11 polynomial (0.8 ns per point on one core,
//! NumPy's SVML 0.84), e^|x| in double-double and a division for e^-|x|
//! (sinh, cosh), sinh's Taylor series on every point, and both of fdlibm's
//! expm1 branches: 2.2-2.5 ns per point against NumPy's 1.0-1.2 (issue
//! 23's table: float64 `cosh` 0.76x at 1e5 on two threads).
//!
//! Method (the table-driven exp of glibc's and ARM's optimized routines):
//! with n = round(16 v / ln 2) and r = v - n ln2/16 (|r| <= ln2/32, exact
//! in two FMAs), e^v = 2^(n/16) e^r. One register pair holds 2^(j/16),
//! j = 0..15, in two parts, read by `vpermt2pd` with n's low four bits
//! straight from the rounding's bit pattern; e^r - 1 is a Taylor
//! polynomial of degree 7 (2^-59 at ln2/32). Each exponential is kept as a
//! high part 2^(n/16) and a low part 2^(n/16) (e^r - 1) + the table's
//! error, `vscalefpd` scales both, and the high parts are combined exactly
//! (Fast2Sum / TwoSum) before the low ones: one rounding at the end (about
//! 0.6 ulp). sinh and cosh take e^-a from the same reduction (-n's bits,
//! e^-r - 1 from the even and odd halves of the polynomial); cosh needs
//! nothing else down to 0 (no cancellation). Near 0, where the last
//! subtraction would cancel, sinh (below 1) and expm1 (below 1/4) are
//! their Taylor series, computed only for vectors that have such a point.
//! tanh is `(1 - E) / (1 + E)`, E = e^-2|x| from the same reduction, with
//! E's two parts summed (Fast2Sum) and numerator and denominator each kept
//! as a double-double: near 0 the numerator is the polynomial part alone,
//! so nothing cancels; the quotient comes from `vrcp14pd`, one Newton step
//! and one correction by the exact remainder (no division: `vdivpd` alone
//! costs more than the rest). The portable form (E from a degree-11
//! polynomial in double-double) took 2.6 ns per point on one core against
//! NumPy's 1.4 (issue 23's table: float64 `tanh` 0.70x at 1e4).

/// `out[i] = sinh(x[i])` for `out.len()` points of `x` with AVX-512 where
/// [`super::simd::level`] selects it; false (nothing written)
/// elsewhere, for the portable loop.
#[inline(always)]
pub fn sinh_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<SINH>(x, out)
}

/// The `cosh` form of [`sinh_slice_f64`].
#[inline(always)]
pub fn cosh_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<COSH>(x, out)
}

/// The `tanh` form of [`sinh_slice_f64`] (within 2 ulp of glibc, which is
/// itself up to 1.8 ulp from the true value).
#[inline(always)]
pub fn tanh_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<TANH>(x, out)
}

/// The `expm1` form of [`sinh_slice_f64`].
#[inline(always)]
pub fn expm1_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<EXPM1>(x, out)
}

/// The `exp` form of [`sinh_slice_f64`] (within 1 ulp of glibc).
#[inline(always)]
pub fn exp_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<EXP>(x, out)
}

/// The `exp2` form of [`sinh_slice_f64`] (within 1 ulp of glibc, exact at
/// integers).
#[inline(always)]
pub fn exp2_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<EXP2>(x, out)
}

/// Which function a kernel computes.
const SINH: u8 = 0;
const COSH: u8 = 1;
const EXPM1: u8 = 2;
const EXP: u8 = 3;
const EXP2: u8 = 4;
const TANH: u8 = 5;

#[inline(always)]
fn run_slice<const F: u8>(x: &[f64], out: &mut [f64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    return super::simd::avx512_slice("exp kernels", x, out, avx512::run::<F>);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, out);
        false
    }
}

/// Constants from `mpmath` at 200 bits (shortest round-trip decimals).
#[allow(clippy::excessive_precision)]
pub(super) mod consts {
    /// 16 / ln 2.
    pub const INV_STEP: f64 = 23.083120654223414;
    /// ln2/16 on a grid of 2^-42 (n has at most 15 bits: n times it is
    /// exact), and the rest.
    pub const STEP_HI: f64 = 0.04332169878489367;
    pub const STEP_LO: f64 = 1.0291218489310676e-13;
    /// 2^(j/16) rounded, and the rest (the `power` kernels' tables too).
    pub const POW_HI: [f64; 16] = [
        1.0,
        1.0442737824274138,
        1.0905077326652577,
        1.1387886347566916,
        1.189207115002721,
        1.241857812073484,
        1.2968395546510096,
        1.3542555469368927,
        std::f64::consts::SQRT_2,
        1.4768261459394993,
        1.5422108254079407,
        1.6104903319492543,
        1.681792830507429,
        1.7562521603732995,
        1.8340080864093424,
        1.9152065613971474,
    ];
    pub const POW_LO: [f64; 16] = [
        0.0,
        8.551889705537965e-17,
        -3.046782079812471e-17,
        8.912812676025408e-17,
        3.982015231465646e-17,
        4.658027591836937e-17,
        2.5382502794888315e-17,
        7.70094837980299e-17,
        -9.667293313452913e-17,
        -3.483994556892796e-17,
        7.949834809697621e-17,
        2.4707192569797888e-17,
        8.199010020581497e-17,
        2.960140695448873e-17,
        3.283107224245627e-17,
        -1.0619946056195963e-16,
    ];
    /// 1/k! for k = 13 down to 2: expm1's Taylor series below 1/4
    /// (0.25^14/14! is 2^-64 of the result).
    pub const EXPM1_TAYLOR: [f64; 12] = [
        1.6059043836821613e-10,
        2.08767569878681e-9,
        2.505210838544172e-8,
        2.755731922398589e-7,
        2.7557319223985893e-6,
        2.48015873015873e-5,
        1.984126984126984e-4,
        1.388888888888889e-3,
        8.333333333333333e-3,
        4.1666666666666664e-2,
        0.16666666666666666,
        0.5,
    ];
}

#[cfg(target_arch = "x86_64")]
pub(super) mod avx512 {
    use super::consts::*;
    use super::{COSH, EXP, EXP2, EXPM1, SINH, TANH};
    use crate::cpu::math64_hyp::SINH_TAYLOR;
    use std::arch::x86_64::*;

    /// `1.5 * 2^52`: adding it rounds to an integer, left in the low bits.
    const ROUND_MAGIC: f64 = 6755399441055744.0;
    /// Past this |x| sinh and cosh overflow; clamping keeps n in range.
    const CLAMP: f64 = 711.0;
    /// Past this x expm1 overflows (its high part is scaled by one less
    /// than sinh's and cosh's: 711 would make it infinite, and the TwoSum
    /// NaN).
    const CLAMP_EXPM1: f64 = 710.0;

    /// The tables and constants in registers.
    struct Regs {
        hi: [__m512d; 2],
        lo: [__m512d; 2],
    }

    /// v reduced: n = round(16 v / ln 2) (as a double, and as the bit
    /// pattern whose low four bits are n mod 16) and r = v - n ln2/16.
    struct Reduced {
        n: __m512d,
        bits: __m512i,
        r: __m512d,
    }

    /// # Safety
    /// The CPU has AVX-512 F (the caller's target features).
    #[inline(always)]
    unsafe fn reduce(v: __m512d) -> Reduced {
        let magic = _mm512_set1_pd(ROUND_MAGIC);
        let rounded = _mm512_fmadd_pd(v, _mm512_set1_pd(INV_STEP), magic);
        let n = _mm512_sub_pd(rounded, magic);
        // The first step is exact (n STEP_HI is, and it is close to v), the
        // second adds STEP_LO's part.
        let r = _mm512_fnmadd_pd(n, _mm512_set1_pd(STEP_HI), v);
        let r = _mm512_fnmadd_pd(n, _mm512_set1_pd(STEP_LO), r);
        // The magic's low bits are zero: the pattern's low four bits are
        // n mod 16 (two's complement for negative n).
        let bits = _mm512_castpd_si512(rounded);
        Reduced { n, bits, r }
    }

    /// [`reduce`] for 2^v: n = round(16 v), r = (v - n/16) ln 2 (the
    /// difference is exact: n/16 has few bits and lies within 1/32 of v).
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn reduce2(v: __m512d) -> Reduced {
        let magic = _mm512_set1_pd(ROUND_MAGIC);
        let rounded = _mm512_fmadd_pd(v, _mm512_set1_pd(16.0), magic);
        let n = _mm512_sub_pd(rounded, magic);
        let d = _mm512_fnmadd_pd(n, _mm512_set1_pd(1.0 / 16.0), v);
        let r = _mm512_mul_pd(d, _mm512_set1_pd(std::f64::consts::LN_2));
        let bits = _mm512_castpd_si512(rounded);
        Reduced { n, bits, r }
    }

    /// e^r - 1 for |r| <= ln2/32 (Taylor to r^7).
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn exp_m1_small(r: __m512d) -> __m512d {
        let c = [
            1.0 / 5040.0,
            1.0 / 720.0,
            1.0 / 120.0,
            1.0 / 24.0,
            1.0 / 6.0,
            0.5,
        ];
        _mm512_fmadd_pd(_mm512_mul_pd(r, r), horner(r, &c), r)
    }

    /// 2^(j/16) in two parts for j = the low four bits of `bits`.
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn pow16(t: &Regs, bits: __m512i) -> (__m512d, __m512d) {
        (
            _mm512_permutex2var_pd(t.hi[0], bits, t.hi[1]),
            _mm512_permutex2var_pd(t.lo[0], bits, t.lo[1]),
        )
    }

    /// Horner's rule over `coefs` (highest first) at z.
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn horner(z: __m512d, coefs: &[f64]) -> __m512d {
        let mut p = _mm512_set1_pd(coefs[0]);
        for &q in &coefs[1..] {
            p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(q));
        }
        p
    }

    /// One vector: sinh, cosh (F) of 8 points.
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn sinh_cosh<const F: u8>(x: __m512d, t: &Regs) -> __m512d {
        let sign = _mm512_set1_pd(-0.0);
        let a = _mm512_andnot_pd(sign, x);
        // min(711, NaN) is NaN: MINPD returns its second operand then.
        let a = _mm512_min_pd(_mm512_set1_pd(CLAMP), a);
        let Reduced { n, bits, r } = reduce(a);
        // e^-a: -n's low bits and -r.
        let (t_hi, t_lo) = pow16(t, bits);
        let (u_hi, u_lo) = pow16(t, _mm512_sub_epi64(_mm512_setzero_si512(), bits));
        // e^r - 1 = even + odd, e^-r - 1 = even - odd (Taylor to r^7).
        let r2 = _mm512_mul_pd(r, r);
        let c = _mm512_set1_pd;
        let odd = horner(r2, &[1.0 / 5040.0, 1.0 / 120.0, 1.0 / 6.0]);
        let odd = _mm512_fmadd_pd(_mm512_mul_pd(r, r2), odd, r);
        let even = _mm512_mul_pd(r2, horner(r2, &[1.0 / 720.0, 1.0 / 24.0, 0.5]));
        let plus = _mm512_add_pd(even, odd);
        let minus = _mm512_sub_pd(even, odd);
        let lo_p = _mm512_fmadd_pd(t_hi, plus, t_lo);
        let lo_m = _mm512_fmadd_pd(u_hi, minus, u_lo);
        // Scaled by 2^(floor(±n/16) - 2): the halving, and a quarter more
        // that the final doubling restores, so that the high part stays
        // finite just below the overflow threshold.
        let k = _mm512_fmsub_pd(n, c(1.0 / 16.0), c(2.0));
        let km = _mm512_fnmsub_pd(n, c(1.0 / 16.0), c(2.0));
        let big = _mm512_scalef_pd(t_hi, k);
        let big_lo = _mm512_scalef_pd(lo_p, k);
        let small = _mm512_scalef_pd(u_hi, km);
        let small_lo = _mm512_scalef_pd(lo_m, km);
        let v = if F == SINH {
            let s = _mm512_sub_pd(big, small);
            let e = _mm512_sub_pd(_mm512_sub_pd(big, s), small);
            _mm512_add_pd(s, _mm512_add_pd(e, _mm512_sub_pd(big_lo, small_lo)))
        } else {
            let s = _mm512_add_pd(big, small);
            let e = _mm512_sub_pd(small, _mm512_sub_pd(s, big));
            _mm512_add_pd(s, _mm512_add_pd(e, _mm512_add_pd(big_lo, small_lo)))
        };
        let v = _mm512_add_pd(v, v);
        if F == COSH {
            return v;
        }
        // Below 1: a + a^3 P(a^2), only where a vector has such points.
        let below = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, c(1.0));
        let v = if below != 0 {
            let z = _mm512_mul_pd(a, a);
            let taylor = _mm512_fmadd_pd(_mm512_mul_pd(a, z), horner(z, &SINH_TAYLOR), a);
            _mm512_mask_mov_pd(v, below, taylor)
        } else {
            v
        };
        // sinh is odd: x's sign (also on -0; NaN stays NaN).
        _mm512_or_pd(v, _mm512_and_pd(x, sign))
    }

    /// One vector: expm1 of 8 points.
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn expm1(x: __m512d, t: &Regs) -> __m512d {
        let c = _mm512_set1_pd;
        // Below -40 the result rounds to -1, past 709.79 it overflows; NaN
        // stays NaN (MAXPD and MINPD return their second operand then).
        let v = _mm512_min_pd(c(CLAMP_EXPM1), _mm512_max_pd(c(-40.0), x));
        let Reduced { n, bits, r } = reduce(v);
        let (t_hi, t_lo) = pow16(t, bits);
        let p = exp_m1_small(r);
        let lo = _mm512_fmadd_pd(t_hi, p, t_lo);
        // (e^v - 1)/2: scaled by 2^(floor(n/16) - 1) so that the high part
        // stays finite just below the overflow threshold; 1/2 subtracted
        // exactly (TwoSum), then the low part, then doubled.
        let k = _mm512_fmsub_pd(n, c(1.0 / 16.0), c(1.0));
        let big = _mm512_scalef_pd(t_hi, k);
        let big_lo = _mm512_scalef_pd(lo, k);
        let half = c(-0.5);
        let s = _mm512_add_pd(big, half);
        let bb = _mm512_sub_pd(s, big);
        let e = _mm512_add_pd(
            _mm512_sub_pd(big, _mm512_sub_pd(s, bb)),
            _mm512_sub_pd(half, bb),
        );
        let y = _mm512_add_pd(s, _mm512_add_pd(e, big_lo));
        let y = _mm512_add_pd(y, y);
        // Below 1/4 in magnitude: x + x^2 P(x), only where a vector has
        // such points (the subtraction above cancels there).
        let near = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_abs_pd(x), c(0.25));
        if near != 0 {
            let taylor = _mm512_fmadd_pd(_mm512_mul_pd(x, x), horner(x, &EXPM1_TAYLOR), x);
            // expm1 has x's sign: this only turns -0 + 0 back into -0.
            let taylor = _mm512_or_pd(taylor, _mm512_and_pd(x, c(-0.0)));
            _mm512_mask_mov_pd(y, near, taylor)
        } else {
            y
        }
    }

    /// One vector: e^x (EXP) or 2^x (EXP2) of 8 points: 2^(n/16)
    /// (1 + p), the table's high part plus the rest, then scaled (one
    /// rounding before `vscalefpd`, a second only for subnormal results).
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn exp<const F: u8>(x: __m512d, t: &Regs) -> __m512d {
        let c = _mm512_set1_pd;
        // Past these the result is 0 or inf (n stays in range); NaN stays
        // NaN (MAXPD and MINPD return their second operand then).
        let (lo, hi) = if F == EXP {
            (-746.0, 710.0)
        } else {
            (-1076.0, 1025.0)
        };
        let v = _mm512_min_pd(c(hi), _mm512_max_pd(c(lo), x));
        let Reduced { n, bits, r } = if F == EXP { reduce(v) } else { reduce2(v) };
        let (t_hi, t_lo) = pow16(t, bits);
        let rest = _mm512_fmadd_pd(t_hi, exp_m1_small(r), t_lo);
        let y = _mm512_add_pd(t_hi, rest);
        _mm512_scalef_pd(y, _mm512_mul_pd(n, c(1.0 / 16.0)))
    }

    /// a + b as a sum s + e with e below s's last bit, for |a| >= |b|.
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    pub(in crate::cpu) unsafe fn fast_two_sum(a: __m512d, b: __m512d) -> (__m512d, __m512d) {
        let s = _mm512_add_pd(a, b);
        (s, _mm512_sub_pd(b, _mm512_sub_pd(s, a)))
    }

    /// One vector: tanh of 8 points, `(1 - E) / (1 + E)` with E = e^-2|x|
    /// (|x| clamped at 22, where tanh rounds to 1).
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn tanh(x: __m512d, t: &Regs) -> __m512d {
        let c = _mm512_set1_pd;
        let sign = c(-0.0);
        // min(22, NaN) is NaN: MINPD returns its second operand then.
        let a = _mm512_min_pd(c(22.0), _mm512_andnot_pd(sign, x));
        let Reduced { n, bits, r } = reduce(_mm512_mul_pd(a, c(-2.0)));
        let (t_hi, t_lo) = pow16(t, bits);
        let lo = _mm512_fmadd_pd(t_hi, exp_m1_small(r), t_lo);
        // E in (e^-44, 1]: no overflow or underflow in the scaling.
        let k = _mm512_mul_pd(n, c(1.0 / 16.0));
        let (e_hi, e_lo) = fast_two_sum(_mm512_scalef_pd(t_hi, k), _mm512_scalef_pd(lo, k));
        // 1 - E and 1 + E, each a double-double (E <= 1). Where n = 0 the
        // high parts are 1 and the numerator is -e_lo: exact to the
        // polynomial's precision down to the subnormals.
        let (nh, ne) = fast_two_sum(c(1.0), _mm512_sub_pd(_mm512_setzero_pd(), e_hi));
        let nl = _mm512_sub_pd(ne, e_lo);
        let (dh, de) = fast_two_sum(c(1.0), e_hi);
        let dl = _mm512_add_pd(de, e_lo);
        // 1/dh to 2^-28 (dh in [1, 2]), the quotient, then the exact
        // remainder's correction.
        let r0 = _mm512_rcp14_pd(dh);
        let r1 = _mm512_fmadd_pd(r0, _mm512_fnmadd_pd(dh, r0, c(1.0)), r0);
        let q0 = _mm512_mul_pd(nh, r1);
        let rem = _mm512_add_pd(_mm512_fnmadd_pd(q0, dh, nh), _mm512_fnmadd_pd(q0, dl, nl));
        let q = _mm512_fmadd_pd(rem, r1, q0);
        // tanh is odd: x's sign (also on -0; NaN stays NaN).
        _mm512_or_pd(q, _mm512_and_pd(x, sign))
    }

    /// One vector of the function F.
    ///
    /// # Safety
    /// As [`reduce`].
    #[inline(always)]
    unsafe fn lanes<const F: u8>(x: __m512d, t: &Regs) -> __m512d {
        match F {
            EXPM1 => expm1(x, t),
            EXP | EXP2 => exp::<F>(x, t),
            TANH => tanh(x, t),
            _ => sinh_cosh::<F>(x, t),
        }
    }

    /// # Safety
    /// The CPU has AVX-512 F/VL/DQ/BW and FMA; `x` points to at least
    /// `out.len()` values.
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    pub(super) unsafe fn run<const F: u8>(x: *const f64, out: &mut [f64]) {
        // SAFETY: 8-lane loads inside the 16-entry tables.
        let regs = unsafe {
            Regs {
                hi: [
                    _mm512_loadu_pd(POW_HI.as_ptr()),
                    _mm512_loadu_pd(POW_HI.as_ptr().add(8)),
                ],
                lo: [
                    _mm512_loadu_pd(POW_LO.as_ptr()),
                    _mm512_loadu_pd(POW_LO.as_ptr().add(8)),
                ],
            }
        };
        let n = out.len();
        let o = out.as_mut_ptr();
        let full = n - n % 8;
        let mut i = 0;
        while i < full {
            // SAFETY: i + 8 <= n: inside x (the caller's contract) and out.
            unsafe {
                let v = lanes::<F>(_mm512_loadu_pd(x.add(i)), &regs);
                _mm512_storeu_pd(o.add(i), v);
            }
            i += 8;
        }
        if full < n {
            let mask = (1u8 << (n - full)) - 1;
            // SAFETY: the masked lanes from `full` are inside both.
            unsafe {
                let v = lanes::<F>(_mm512_maskz_loadu_pd(mask, x.add(full)), &regs);
                _mm512_mask_storeu_pd(o.add(full), mask, v);
            }
        }
    }
}

#[cfg(test)]
#[path = "math64_exp512_tests.rs"]
mod tests;
