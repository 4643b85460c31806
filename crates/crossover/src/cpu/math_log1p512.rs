//! `log1p`, `arcsinh`, `arccosh` and `arctanh` over a chunk with AVX-512
//! intrinsics, float32 and float64 from one body, on the table-driven
//! logarithm of [`super::math_log`]: float64 log1p within 1 ulp of glibc,
//! the inverse hyperbolics within 2 (glibc is itself up to 2 ulp from the
//! true value there; these are within 0.7 on the points checked with
//! mpmath); float32 log1p within 1 ulp of the correctly rounded result
//! and the inverse hyperbolics within 2 (the portable float32 forms'
//! bound); C's values at 0, ±1, inf and NaN. The portable forms of
//! [`super::math64_hyp`] and [`super::math32_hyp`] stay for the AVX2 and
//! scalar paths. Float64's reduce with fdlibm's `f / (2 + f)` and take the
//! arguments' quotients and their corrections by divisions, 2.6 ns a point
//! for log1p and 4.0-4.8 for the inverse hyperbolics on one core against
//! NumPy's SVML loops' 2.0 and 2.7-2.9 (issue 23's table: float64
//! `arcsinh` 0.62x at 1e4); float32's evaluate Cephes' nine-term logf
//! polynomial and divide (0.70 ns a point for log1p and 1.18 for arctanh
//! on the Zen 4 VM, against SVML's 0.43 and 0.62).
//!
//! Method: each function is musl's form (as the portable ones), a
//! logarithm of `u + err`, u = 1 + y rounded and err the rounding errors
//! of u and of y's own terms, all kept exactly (TwoSum, FMA remainders).
//! [`log_core`] takes err as a correction of its reduced argument, so no
//! division is left in the logarithm; the quotients of the arguments come
//! from `vrcp14`, one Newton step and one correction by the FMA remainder
//! (within an ulp; their rounding error is carried in err anyway). The
//! square roots of arcsinh and arccosh stay `vsqrt` (the Newton form
//! measured no faster in float64: the divider runs beside the FMA port).
//! Float32's inverse hyperbolics skip the carried errors (the portable
//! float32 forms' arguments, then the same exact log1p); otherwise only
//! the cut-offs differ by type ([`Lanes1p`]).

/// `out[i] = log1p(x[i])` for `out.len()` points of `x` with AVX-512 where
/// [`super::simd::level`] selects it; false (nothing written)
/// elsewhere, for the portable loop.
#[inline(always)]
pub fn log1p_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<f64, LOG1P>(x, out)
}

/// The `arcsinh` form of [`log1p_slice_f64`].
#[inline(always)]
pub fn asinh_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<f64, ASINH>(x, out)
}

/// The `arccosh` form of [`log1p_slice_f64`].
#[inline(always)]
pub fn acosh_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<f64, ACOSH>(x, out)
}

/// The `arctanh` form of [`log1p_slice_f64`].
#[inline(always)]
pub fn atanh_slice_f64(x: &[f64], out: &mut [f64]) -> bool {
    run_slice::<f64, ATANH>(x, out)
}

/// The float32 form of [`log1p_slice_f64`].
#[inline(always)]
pub fn log1p_slice_f32(x: &[f32], out: &mut [f32]) -> bool {
    run_slice::<f32, LOG1P>(x, out)
}

/// The float32 form of [`asinh_slice_f64`].
#[inline(always)]
pub fn asinh_slice_f32(x: &[f32], out: &mut [f32]) -> bool {
    run_slice::<f32, ASINH>(x, out)
}

/// The float32 form of [`acosh_slice_f64`].
#[inline(always)]
pub fn acosh_slice_f32(x: &[f32], out: &mut [f32]) -> bool {
    run_slice::<f32, ACOSH>(x, out)
}

/// The float32 form of [`atanh_slice_f64`].
#[inline(always)]
pub fn atanh_slice_f32(x: &[f32], out: &mut [f32]) -> bool {
    run_slice::<f32, ATANH>(x, out)
}

/// Which function a kernel computes.
const LOG1P: u8 = 0;
const ASINH: u8 = 1;
const ACOSH: u8 = 2;
const ATANH: u8 = 3;

/// The element types with a kernel (each names its register type).
pub(in crate::cpu) trait Elem1p: Copy {
    #[cfg(target_arch = "x86_64")]
    /// The lanes of one register.
    type Lanes: avx512::Lanes1p<Elem = Self>;
}

impl Elem1p for f32 {
    #[cfg(target_arch = "x86_64")]
    type Lanes = crate::cpu::math_log::avx512::F32;
}

impl Elem1p for f64 {
    #[cfg(target_arch = "x86_64")]
    type Lanes = crate::cpu::math_log::avx512::F64;
}

#[inline(always)]
fn run_slice<T: Elem1p, const F: u8>(x: &[T], out: &mut [T]) -> bool {
    #[cfg(target_arch = "x86_64")]
    return super::simd::avx512_slice("log1p kernels", x, out, avx512::run::<T::Lanes, F>);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, out);
        false
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) mod avx512 {
    use super::{ACOSH, ASINH, ATANH, LOG1P};
    use crate::cpu::math_log::avx512::{each_register, log_core, tables, Lanes, F32, F64};
    use std::arch::x86_64::*;

    /// What these kernels need beyond the logarithm's [`Lanes`]: masks,
    /// comparisons, the reciprocal estimate, square roots, and each
    /// type's cut-offs.
    pub(in crate::cpu) trait Lanes1p: Lanes {
        /// One bit a lane.
        type Mask: Copy + std::ops::Not<Output = Self::Mask>;
        /// Below it (in magnitude) log1p, arcsinh and arctanh return x:
        /// 2^-54 (float64), 2^-25 (float32), where x^2/2 is below a
        /// quarter of x's ulp.
        const TINY: f64;
        /// A finite cap on the denominators of arcsinh and arccosh, past
        /// which the quotient only rounds away (an infinite one would make
        /// the Newton step NaN).
        const CAP: f64;
        /// Whether the inverse hyperbolics carry their arguments' rounding
        /// errors into the logarithm (float64, for glibc's accuracy), or
        /// take the portable float32 forms' plain arguments: those are
        /// within 2 ulp already, and carrying the errors made the float32
        /// kernels slower than the portable loop (arcsinh 1.10 ns a point
        /// against 0.91-1.00 on the Zen 4 VM).
        const CARRY: bool;
        unsafe fn cmp<const P: i32>(self, o: Self) -> Self::Mask;
        /// `if m { a } else { b }` by lane.
        unsafe fn pick(m: Self::Mask, a: Self, b: Self) -> Self;
        /// `if m { a } else { 0 }` by lane.
        unsafe fn keep(m: Self::Mask, a: Self) -> Self;
        /// |self|.
        unsafe fn abs(self) -> Self;
        /// `self` (positive or NaN) with the sign of x.
        unsafe fn signed_as(self, x: Self) -> Self;
        unsafe fn sqrt(self) -> Self;
        unsafe fn min(self, o: Self) -> Self;
        /// 1/self within 2^-14.
        unsafe fn rcp14(self) -> Self;
        unsafe fn div(self, o: Self) -> Self;
    }

    // SAFETY (every method below): inlined into `run`, which enables the
    // AVX-512 features.
    impl Lanes1p for F32 {
        type Mask = __mmask16;
        const TINY: f64 = 2.980_232_238_769_531_2e-8;
        const CAP: f64 = 1e30;
        const CARRY: bool = false;
        #[inline(always)]
        unsafe fn cmp<const P: i32>(self, o: Self) -> __mmask16 {
            _mm512_cmp_ps_mask::<P>(self.0, o.0)
        }
        #[inline(always)]
        unsafe fn pick(m: __mmask16, a: Self, b: Self) -> Self {
            F32(_mm512_mask_mov_ps(b.0, m, a.0))
        }
        #[inline(always)]
        unsafe fn keep(m: __mmask16, a: Self) -> Self {
            F32(_mm512_maskz_mov_ps(m, a.0))
        }
        #[inline(always)]
        unsafe fn abs(self) -> Self {
            F32(_mm512_andnot_ps(_mm512_set1_ps(-0.0), self.0))
        }
        #[inline(always)]
        unsafe fn signed_as(self, x: Self) -> Self {
            F32(_mm512_or_ps(
                self.0,
                _mm512_and_ps(x.0, _mm512_set1_ps(-0.0)),
            ))
        }
        #[inline(always)]
        unsafe fn sqrt(self) -> Self {
            F32(_mm512_sqrt_ps(self.0))
        }
        #[inline(always)]
        unsafe fn min(self, o: Self) -> Self {
            F32(_mm512_min_ps(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn rcp14(self) -> Self {
            F32(_mm512_rcp14_ps(self.0))
        }
        #[inline(always)]
        unsafe fn div(self, o: Self) -> Self {
            F32(_mm512_div_ps(self.0, o.0))
        }
    }

    impl Lanes1p for F64 {
        type Mask = __mmask8;
        const TINY: f64 = 5.551_115_123_125_783e-17;
        const CAP: f64 = 1e300;
        const CARRY: bool = true;
        #[inline(always)]
        unsafe fn cmp<const P: i32>(self, o: Self) -> __mmask8 {
            _mm512_cmp_pd_mask::<P>(self.0, o.0)
        }
        #[inline(always)]
        unsafe fn pick(m: __mmask8, a: Self, b: Self) -> Self {
            F64(_mm512_mask_mov_pd(b.0, m, a.0))
        }
        #[inline(always)]
        unsafe fn keep(m: __mmask8, a: Self) -> Self {
            F64(_mm512_maskz_mov_pd(m, a.0))
        }
        #[inline(always)]
        unsafe fn abs(self) -> Self {
            F64(_mm512_andnot_pd(_mm512_set1_pd(-0.0), self.0))
        }
        #[inline(always)]
        unsafe fn signed_as(self, x: Self) -> Self {
            F64(_mm512_or_pd(
                self.0,
                _mm512_and_pd(x.0, _mm512_set1_pd(-0.0)),
            ))
        }
        #[inline(always)]
        unsafe fn sqrt(self) -> Self {
            F64(_mm512_sqrt_pd(self.0))
        }
        #[inline(always)]
        unsafe fn min(self, o: Self) -> Self {
            F64(_mm512_min_pd(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn rcp14(self) -> Self {
            F64(_mm512_rcp14_pd(self.0))
        }
        #[inline(always)]
        unsafe fn div(self, o: Self) -> Self {
            F64(_mm512_div_pd(self.0, o.0))
        }
    }

    /// From 2^26 arccosh (and float32's arcsinh) is ln(x) + ln 2, the term
    /// dropped below either type's precision of the result.
    const HUGE: f64 = 67_108_864.0;

    type Tabs<V> = [<V as Lanes>::Table; 3];

    /// A register of one value.
    #[inline(always)]
    unsafe fn c<V: Lanes>(v: f64) -> V {
        // SAFETY: the caller's features.
        unsafe { V::splat(v) }
    }

    /// a + b = s + e exactly, for any a and b (TwoSum).
    ///
    /// # Safety
    /// The CPU has AVX-512 F (the caller's target features).
    #[inline(always)]
    unsafe fn two_sum<V: Lanes>(a: V, b: V) -> (V, V) {
        // SAFETY: the caller's features.
        unsafe {
            let s = a.add(b);
            let bb = s.sub(a);
            (s, a.sub(s.sub(bb)).add(b.sub(bb)))
        }
    }

    /// a + b = s + e exactly where |a| >= |b| or a = 0 (Fast2Sum).
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn fast_two_sum<V: Lanes>(a: V, b: V) -> (V, V) {
        // SAFETY: the caller's features.
        unsafe {
            let s = a.add(b);
            (s, b.sub(s.sub(a)))
        }
    }

    /// (num/den within about an ulp, 1/den within twice the type's
    /// precision), den positive and finite: `vrcp14`, one Newton step, one
    /// correction by the remainder.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn quotient<V: Lanes1p>(num: V, den: V) -> (V, V) {
        // SAFETY: the caller's features.
        unsafe {
            let r0 = den.rcp14();
            let r = r0.fma(den.fnma(r0, c(1.0)), r0);
            let q0 = num.mul(r);
            (q0.fnma(den, num).fma(r, q0), r)
        }
    }

    /// ln(u + err) + kadd ln 2 ([`log_core`]).
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn ln<V: Lanes1p>(u: V, err: V, kadd: V, t: &Tabs<V>) -> V {
        // SAFETY: the caller's features.
        unsafe { log_core::<V, 0, true>(u, err, kadd, t) }
    }

    /// x where |x| < TINY or x is NaN (keeps -0), else v.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn tiny_as_x<V: Lanes1p>(x: V, v: V) -> V {
        // SAFETY: the caller's features.
        unsafe { V::pick(x.abs().cmp::<_CMP_NGE_UQ>(c(V::TINY)), x, v) }
    }

    /// ln(1 + y) + kadd ln 2 for y > -1, y finite: ln(u + err), 1 + y =
    /// u + err exactly.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn ln_1p<V: Lanes1p>(y: V, kadd: V, t: &Tabs<V>) -> V {
        // SAFETY: the caller's features.
        unsafe {
            let (u, err) = two_sum(c(1.0), y);
            ln(u, err, kadd, t)
        }
    }

    /// log1p: ln(u + err), 1 + x = u + err.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn log1p<V: Lanes1p>(x: V, t: &Tabs<V>) -> V {
        // SAFETY: the caller's features.
        unsafe {
            let v = ln_1p(x, c(0.0), t);
            let v = V::pick(x.cmp::<_CMP_EQ_OQ>(c(f64::INFINITY)), x, v);
            let v = V::pick(x.cmp::<_CMP_EQ_OQ>(c(-1.0)), c(f64::NEG_INFINITY), v);
            let v = V::pick(x.cmp::<_CMP_LT_OQ>(c(-1.0)), c(f64::NAN), v);
            tiny_as_x(x, v)
        }
    }

    /// arcsinh of a = |x|: `log1p(a + a^2/(sqrt(a^2 + 1) + 1))` below 2,
    /// `ln(a + 1/(sqrt(a^2 + 1) + a)/2) + ln 2` from 2 (no overflow), one
    /// quotient for both; the rounding errors of a^2, the quotient and the
    /// sums are carried (musl's form is up to 1.6 ulp off without).
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn asinh<V: Lanes1p>(x: V, t: &Tabs<V>) -> V {
        // SAFETY: the caller's features.
        unsafe {
            let a = x.abs();
            let z = a.mul(a);
            let h = z.add(c(1.0)).sqrt();
            if !V::CARRY {
                // log1p(a + a^2/(h + 1)); log1p(a) + ln 2 from HUGE (a^2
                // would overflow, and ln(1 + 1/a) is below the precision).
                // A division, not `quotient`: on the Zen 4 VM `vdivps`
                // cost less than `vrcp14ps` and its Newton step (and a
                // `vrsqrt14ps` root more than `vsqrtps`).
                let huge = a.cmp::<_CMP_GT_OQ>(c(HUGE));
                let y = V::pick(huge, a, a.add(z.div(h.add(c(1.0)))));
                let v = ln_1p(y, V::keep(huge, c(1.0)), t);
                let v = V::pick(a.cmp::<_CMP_EQ_OQ>(c(f64::INFINITY)), a, v);
                return tiny_as_x(x, v.signed_as(x));
            }
            let mid = a.cmp::<_CMP_GE_OQ>(c(2.0));
            let num = V::pick(mid, c(1.0), z);
            let den = h.add(V::pick(mid, a, c(1.0))).min(c(V::CAP));
            let (q, r) = quotient(num, den);
            let num_lo = V::keep(!mid, a.fms(a, z));
            let q_lo = q.fnma(den, num).add(num_lo).mul(r);
            let (y, y_lo) = fast_two_sum(a, q);
            let (u1, err1) = two_sum(c(1.0), y);
            let (u2, err2) = fast_two_sum(a, c::<V>(0.5).mul(q));
            let u = V::pick(mid, u2, u1);
            let err = V::pick(mid, err2, err1.add(y_lo.add(q_lo)));
            let v = ln(u, err, V::keep(mid, c(1.0)), t);
            let v = V::pick(a.cmp::<_CMP_EQ_OQ>(c(f64::INFINITY)), a, v);
            tiny_as_x(x, v.signed_as(x))
        }
    }

    /// arccosh: `log1p(t + sqrt(t^2 + 2t))`, t = x - 1, below 2 (the sum
    /// under the root and the root's error carried), `ln(2x - 1/(x +
    /// sqrt(x^2 - 1)))` from 2, `ln(x) + ln 2` from HUGE; one reciprocal
    /// serves the root's correction and the quotient. NaN below 1.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn acosh<V: Lanes1p>(x: V, t: &Tabs<V>) -> V {
        // SAFETY: the caller's features.
        unsafe {
            let t1 = x.sub(c(1.0));
            let nan_below_1 = x.cmp::<_CMP_NGE_UQ>(c(1.0));
            if !V::CARRY {
                // log1p(t + sqrt(t (t + 2))); log1p(x) + ln 2 from HUGE.
                let big = x.cmp::<_CMP_GT_OQ>(c(HUGE));
                let y = V::pick(big, x, t1.add(t1.mul(t1.add(c(2.0))).sqrt()));
                let v = ln_1p(y, V::keep(big, c(1.0)), t);
                let v = V::pick(x.cmp::<_CMP_EQ_OQ>(c(f64::INFINITY)), x, v);
                return V::pick(nan_below_1, c(f64::NAN), v);
            }
            let tt = t1.mul(t1);
            let (w, w_lo) = fast_two_sum(t1.add(t1), tt);
            let w_lo = w_lo.add(t1.fms(t1, tt));
            let big = x.cmp::<_CMP_GE_OQ>(c(HUGE));
            let mid = x.cmp::<_CMP_GE_OQ>(c(2.0));
            let s = V::pick(mid, x.fms(x, c(1.0)), w).sqrt();
            // 1/(2s) below 2, 1/(x + s) from 2 (capped as in asinh).
            let den = s.add(V::pick(mid, x, s)).min(c(V::CAP));
            let (q, r) = quotient(c(1.0), den);
            let s_lo = s.fnma(s, w).add(w_lo).mul(r);
            let s_lo = V::keep(w.cmp::<_CMP_GT_OQ>(c(0.0)), s_lo);
            let (y, y_lo) = fast_two_sum(s, t1);
            let (u1, err1) = two_sum(c(1.0), y);
            let err1 = err1.add(y_lo.add(s_lo));
            let (u2, err2) = fast_two_sum(x.add(x), c::<V>(0.0).sub(q));
            let u = V::pick(big, x, V::pick(mid, u2, u1));
            let err = V::pick(mid, V::keep(!big, err2), err1);
            let v = ln(u, err, V::keep(big, c(1.0)), t);
            let v = V::pick(x.cmp::<_CMP_EQ_OQ>(c(f64::INFINITY)), x, v);
            V::pick(nan_below_1, c(f64::NAN), v)
        }
    }

    /// arctanh of a = |x|: `log1p(2a + 2a^2/(1 - a)) / 2` below 1/2,
    /// `log1p(2a/(1 - a)) / 2` above (1 - a exact there), one quotient for
    /// both, its error and 2a^2's carried; ±inf at ±1, NaN beyond.
    ///
    /// # Safety
    /// As [`two_sum`].
    #[inline(always)]
    unsafe fn atanh<V: Lanes1p>(x: V, t: &Tabs<V>) -> V {
        // SAFETY: the caller's features.
        unsafe {
            let a = x.abs();
            let d = c::<V>(1.0).sub(a);
            let a2 = a.add(a);
            let v = if V::CARRY {
                let small = a.cmp::<_CMP_LT_OQ>(c(0.5));
                let num = V::pick(small, a2.mul(a), a2);
                let num_lo = V::keep(small, a2.fms(a, num));
                let (q, r) = quotient(num, d);
                let q_lo = q.fnma(d, num).add(num_lo).mul(r);
                let (y, y_lo) = two_sum(V::keep(small, a2), q);
                let (u, err) = two_sum(c(1.0), y);
                let err = err.add(y_lo.add(q_lo));
                ln(u, err, c(0.0), t)
            } else {
                // log1p(2a / (1 - a)) (1 and beyond are selected below;
                // a division, as in asinh).
                ln_1p(a2.div(d), c(0.0), t)
            };
            let v = c::<V>(0.5).mul(v);
            let v = V::pick(a.cmp::<_CMP_EQ_OQ>(c(1.0)), c(f64::INFINITY), v);
            let v = V::pick(a.cmp::<_CMP_GT_OQ>(c(1.0)), c(f64::NAN), v);
            tiny_as_x(x, v.signed_as(x))
        }
    }

    /// # Safety
    /// The CPU has AVX-512 F/VL/DQ/BW and FMA; `x` points to at least
    /// `out.len()` values.
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    pub(super) unsafe fn run<V: Lanes1p, const F: u8>(x: *const V::Elem, out: &mut [V::Elem]) {
        // SAFETY: this function's features; x holds out.len() points (the
        // caller's contract).
        unsafe {
            let t: Tabs<V> = tables::<V, 0>();
            each_register(x, out, |v: V| match F {
                LOG1P => log1p(v, &t),
                ASINH => asinh(v, &t),
                ACOSH => acosh(v, &t),
                _ => {
                    debug_assert_eq!(F, ATANH);
                    atanh(v, &t)
                }
            });
        }
    }
}

#[cfg(test)]
#[path = "math_log1p512_tests.rs"]
mod tests;
