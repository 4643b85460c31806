//! `log`, `log2` and `log10` over a chunk with AVX-512 intrinsics, float32
//! and float64 from one body: within 1 ulp of the correctly rounded value
//! in float32, of glibc in float64 (`log10` within 2, as the portable
//! [`super::math64::log10_f64`]), C's values at 0, inf, NaN and negative
//! inputs. The portable functions in [`super::math`] and [`super::math64`]
//! stay for the AVX2 and scalar paths: they split x with integer bit work
//! and reduce by a division (float64), 2-3x slower than NumPy's SVML loops
//! on one core (issue 23's table: `log10` float32 0.44x at 1e5).
//!
//! Method (the table-driven reduction of glibc's and ARM's optimized
//! routines, cut to one register of table): `vgetmant`/`vgetexp` split
//! x = 2^k m with m in [1, 2) (subnormals included), and the top four bits
//! of m's fraction pick one of 16 subintervals, each with a centre c, an
//! `inv_c` = 1/c rounded to the type and -log_b(inv_c) in two parts;
//! r = m inv_c - 1 (one rounding, -1/32 <= r < 1/16) and
//! log_b x = k log_b 2 - log_b(inv_c) + log_b(1 + r), the last from a
//! short polynomial, with the large terms added with their rounding errors
//! kept (Fast2Sum). The first subinterval has c = 1 and the last c = 2,
//! whose table entry is log_b 2 split as k's factor is: log_b x keeps its
//! full relative precision on both sides of x = 1, and powers of two give
//! k exactly.

use super::simd::{level, SimdLevel};

/// The base of a logarithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogBase {
    /// Natural logarithm.
    E,
    /// Binary logarithm.
    Two,
    /// Decimal logarithm.
    Ten,
}

/// `out[i] = log_b(x[i])` for `out.len()` points of `x` with AVX-512
/// where [`level`] selects it; false (nothing written) elsewhere, for the
/// portable loop.
#[inline(always)]
pub fn log_slice_f32(base: LogBase, x: &[f32], out: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if level() == SimdLevel::Avx512 {
        assert!(x.len() >= out.len(), "log: input shorter than output");
        // SAFETY: level() reports AVX-512 only where the CPU has every
        // feature the kernel enables; x holds out.len() points (asserted).
        unsafe { avx512::run_base::<avx512::F32>(base, x.as_ptr(), out) };
        return true;
    }
    let _ = (base, x, out);
    false
}

/// The float64 form of [`log_slice_f32`].
#[inline(always)]
pub fn log_slice_f64(base: LogBase, x: &[f64], out: &mut [f64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if level() == SimdLevel::Avx512 {
        assert!(x.len() >= out.len(), "log: input shorter than output");
        // SAFETY: as in log_slice_f32.
        unsafe { avx512::run_base::<avx512::F64>(base, x.as_ptr(), out) };
        return true;
    }
    let _ = (base, x, out);
    false
}

/// The constants of each float type (their derivation: the file's header).
#[path = "math_log_tables.rs"]
pub(super) mod consts;

#[cfg(target_arch = "x86_64")]
pub(super) mod avx512 {
    use super::consts::{Tables, TABLES32, TABLES64};
    use super::LogBase;
    use std::arch::x86_64::*;

    /// One float type's lanes: the few operations the kernel needs, each
    /// one intrinsic. Inlined into [`run`], which enables the features.
    pub(in crate::cpu) trait Lanes: Copy {
        type Elem: Copy;
        /// The table of 16 entries, in registers.
        type Table: Copy;
        const WIDTH: usize;
        const TABLES: &'static Tables;
        unsafe fn splat(v: f64) -> Self;
        unsafe fn table(t: &[f64; 16]) -> Self::Table;
        /// `n` lanes from p (all when n >= WIDTH), zero in the others.
        unsafe fn load(p: *const Self::Elem, n: usize) -> Self;
        /// The first `n` lanes to p (all when n >= WIDTH).
        unsafe fn store(self, p: *mut Self::Elem, n: usize);
        unsafe fn add(self, o: Self) -> Self;
        unsafe fn sub(self, o: Self) -> Self;
        unsafe fn mul(self, o: Self) -> Self;
        /// self * a + b
        unsafe fn fma(self, a: Self, b: Self) -> Self;
        /// self * a - b
        unsafe fn fms(self, a: Self, b: Self) -> Self;
        /// b - self * a
        unsafe fn fnma(self, a: Self, b: Self) -> Self;
        /// self * 2^k (k a whole number)
        unsafe fn scale(self, k: Self) -> Self;
        /// (m in [1, 2), k) with x = 2^k m (subnormals too).
        unsafe fn split(self) -> (Self, Self);
        /// The entry of m's subinterval.
        unsafe fn lookup(m: Self, t: Self::Table) -> Self;
        /// C's values where x is not a positive finite number: log(+-0) =
        /// -inf, log(inf) = inf, NaN for NaN and negative x.
        unsafe fn specials(x: Self, y: Self) -> Self;
    }

    #[derive(Clone, Copy)]
    pub(in crate::cpu) struct F32(pub(in crate::cpu) __m512);
    #[derive(Clone, Copy)]
    pub(in crate::cpu) struct F64(pub(in crate::cpu) __m512d);

    /// A mask of the first n lanes.
    fn first(n: usize) -> u16 {
        ((1u32 << n.min(16)) - 1) as u16
    }

    // SAFETY (every method below): called only from `run`, which has the
    // AVX-512 features enabled and keeps pointers inside the caller's
    // slices for the n lanes read or written.
    impl Lanes for F32 {
        type Elem = f32;
        type Table = __m512;
        const WIDTH: usize = 16;
        const TABLES: &'static Tables = &TABLES32;
        #[inline(always)]
        unsafe fn splat(v: f64) -> Self {
            F32(_mm512_set1_ps(v as f32))
        }
        #[inline(always)]
        unsafe fn table(t: &[f64; 16]) -> __m512 {
            let v: [f32; 16] = std::array::from_fn(|i| t[i] as f32);
            // SAFETY: 16 floats.
            unsafe { _mm512_loadu_ps(v.as_ptr()) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32, n: usize) -> Self {
            // SAFETY: see the impl's note.
            unsafe {
                F32(if n >= Self::WIDTH {
                    _mm512_loadu_ps(p)
                } else {
                    _mm512_maskz_loadu_ps(first(n), p)
                })
            }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, n: usize) {
            // SAFETY: see the impl's note.
            unsafe {
                if n >= Self::WIDTH {
                    _mm512_storeu_ps(p, self.0)
                } else {
                    _mm512_mask_storeu_ps(p, first(n), self.0)
                }
            }
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            F32(_mm512_add_ps(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            F32(_mm512_sub_ps(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn mul(self, o: Self) -> Self {
            F32(_mm512_mul_ps(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn fma(self, a: Self, b: Self) -> Self {
            F32(_mm512_fmadd_ps(self.0, a.0, b.0))
        }
        #[inline(always)]
        unsafe fn fms(self, a: Self, b: Self) -> Self {
            F32(_mm512_fmsub_ps(self.0, a.0, b.0))
        }
        #[inline(always)]
        unsafe fn fnma(self, a: Self, b: Self) -> Self {
            F32(_mm512_fnmadd_ps(self.0, a.0, b.0))
        }
        #[inline(always)]
        unsafe fn scale(self, k: Self) -> Self {
            F32(_mm512_scalef_ps(self.0, k.0))
        }
        #[inline(always)]
        unsafe fn split(self) -> (Self, Self) {
            let m = _mm512_getmant_ps::<_MM_MANT_NORM_1_2, _MM_MANT_SIGN_ZERO>(self.0);
            (F32(m), F32(_mm512_getexp_ps(self.0)))
        }
        #[inline(always)]
        unsafe fn lookup(m: Self, t: __m512) -> Self {
            // The fraction's top four bits (permutexvar reads four).
            let i = _mm512_srli_epi32::<19>(_mm512_castps_si512(m.0));
            F32(_mm512_permutexvar_ps(i, t))
        }
        #[inline(always)]
        unsafe fn specials(x: Self, y: Self) -> Self {
            // NaN, zeros, infinities, negatives.
            if _mm512_fpclass_ps_mask::<0xDF>(x.0) == 0 {
                return y;
            }
            let ok = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x.0, _mm512_setzero_ps());
            let zero = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(x.0, _mm512_setzero_ps());
            let inf = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(x.0, _mm512_set1_ps(f32::INFINITY));
            let v = _mm512_mask_mov_ps(y.0, !ok, _mm512_set1_ps(f32::NAN));
            let v = _mm512_mask_mov_ps(v, zero, _mm512_set1_ps(f32::NEG_INFINITY));
            F32(_mm512_mask_mov_ps(v, inf, x.0))
        }
    }

    impl Lanes for F64 {
        type Elem = f64;
        type Table = [__m512d; 2];
        const WIDTH: usize = 8;
        const TABLES: &'static Tables = &TABLES64;
        #[inline(always)]
        unsafe fn splat(v: f64) -> Self {
            F64(_mm512_set1_pd(v))
        }
        #[inline(always)]
        unsafe fn table(t: &[f64; 16]) -> [__m512d; 2] {
            // SAFETY: two 8-lane loads inside 16 doubles.
            unsafe {
                [
                    _mm512_loadu_pd(t.as_ptr()),
                    _mm512_loadu_pd(t.as_ptr().add(8)),
                ]
            }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64, n: usize) -> Self {
            // SAFETY: see the impl's note.
            unsafe {
                F64(if n >= Self::WIDTH {
                    _mm512_loadu_pd(p)
                } else {
                    _mm512_maskz_loadu_pd(first(n) as u8, p)
                })
            }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64, n: usize) {
            // SAFETY: see the impl's note.
            unsafe {
                if n >= Self::WIDTH {
                    _mm512_storeu_pd(p, self.0)
                } else {
                    _mm512_mask_storeu_pd(p, first(n) as u8, self.0)
                }
            }
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            F64(_mm512_add_pd(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            F64(_mm512_sub_pd(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn mul(self, o: Self) -> Self {
            F64(_mm512_mul_pd(self.0, o.0))
        }
        #[inline(always)]
        unsafe fn fma(self, a: Self, b: Self) -> Self {
            F64(_mm512_fmadd_pd(self.0, a.0, b.0))
        }
        #[inline(always)]
        unsafe fn fms(self, a: Self, b: Self) -> Self {
            F64(_mm512_fmsub_pd(self.0, a.0, b.0))
        }
        #[inline(always)]
        unsafe fn fnma(self, a: Self, b: Self) -> Self {
            F64(_mm512_fnmadd_pd(self.0, a.0, b.0))
        }
        #[inline(always)]
        unsafe fn scale(self, k: Self) -> Self {
            F64(_mm512_scalef_pd(self.0, k.0))
        }
        #[inline(always)]
        unsafe fn split(self) -> (Self, Self) {
            let m = _mm512_getmant_pd::<_MM_MANT_NORM_1_2, _MM_MANT_SIGN_ZERO>(self.0);
            (F64(m), F64(_mm512_getexp_pd(self.0)))
        }
        #[inline(always)]
        unsafe fn lookup(m: Self, t: [__m512d; 2]) -> Self {
            // The fraction's top four bits (permutex2var reads four).
            let i = _mm512_srli_epi64::<48>(_mm512_castpd_si512(m.0));
            F64(_mm512_permutex2var_pd(t[0], i, t[1]))
        }
        #[inline(always)]
        unsafe fn specials(x: Self, y: Self) -> Self {
            // NaN, zeros, infinities, negatives.
            if _mm512_fpclass_pd_mask::<0xDF>(x.0) == 0 {
                return y;
            }
            let ok = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(x.0, _mm512_setzero_pd());
            let zero = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(x.0, _mm512_setzero_pd());
            let inf = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(x.0, _mm512_set1_pd(f64::INFINITY));
            let v = _mm512_mask_mov_pd(y.0, !ok, _mm512_set1_pd(f64::NAN));
            let v = _mm512_mask_mov_pd(v, zero, _mm512_set1_pd(f64::NEG_INFINITY));
            F64(_mm512_mask_mov_pd(v, inf, x.0))
        }
    }

    /// log_b of one register of points, b = e, 2, 10 for `B` = 0, 1, 2
    /// (a constant, so the polynomial unrolls and the base's branch folds).
    #[inline(always)]
    unsafe fn log_lanes<V: Lanes, const B: usize>(x: V, tabs: &[V::Table; 3]) -> V {
        // SAFETY: run's features are enabled here (inlined into run).
        unsafe { V::specials(x, log_core::<V, B, false>(x, x, x, tabs)) }
    }

    /// The tables of base b (`B` as in [`log_lanes`]) in registers.
    ///
    /// # Safety
    /// The CPU has AVX-512 F (the caller's target features).
    #[inline(always)]
    pub(in crate::cpu) unsafe fn tables<V: Lanes, const B: usize>() -> [V::Table; 3] {
        let t = V::TABLES;
        // SAFETY: the caller's features; tables are 16 entries.
        unsafe { [V::table(&t.inv_c), V::table(&t.hi[B]), V::table(&t.lo[B])] }
    }

    /// log_b(u + err) + kadd log_b 2 for positive finite u, without the
    /// special values. With `ERR` (natural logarithm only), err is a
    /// correction of at most about an ulp of u and kadd a small whole
    /// number (log1p and the inverse hyperbolics in
    /// [`crate::cpu::math_log1p512`]); without, both are ignored.
    ///
    /// # Safety
    /// As [`tables`].
    #[inline(always)]
    pub(in crate::cpu) unsafe fn log_core<V: Lanes, const B: usize, const ERR: bool>(
        u: V,
        err: V,
        kadd: V,
        tabs: &[V::Table; 3],
    ) -> V {
        let t = V::TABLES;
        // SAFETY: the caller's features.
        unsafe {
            let (m, k) = u.split();
            let inv_c = V::lookup(m, tabs[0]);
            let r = m.fma(inv_c, V::splat(-1.0));
            let (th, tl) = (V::lookup(m, tabs[1]), V::lookup(m, tabs[2]));
            // log_b(1 + r) = r/ln b + r^2 P_b(r).
            let mut p = V::splat(t.p[B][0]);
            for &c in &t.p[B][1..] {
                p = p.fma(r, V::splat(c));
            }
            // The table's low part less k log_b 2's first (they cancel
            // exactly just below 1), then r/ln b's rounding error (none for
            // ln) and r^2 P_b(r).
            let (k, base) = if ERR {
                // err on r's scale: (u + err) 2^-k inv_c - 1 = r + cr, and
                // log(1 + r + cr) = log(1 + r) + cr/(1 + r), which cr (1 - r)
                // is within cr r^2 (|r| <= 1/16). Added after the low parts
                // have cancelled (just below 1 the result is about cr).
                let cr = inv_c.scale(V::splat(0.0).sub(k)).mul(err);
                let k = k.add(kadd);
                (k, k.fma(V::splat(t.log_2[B].1), tl).add(cr.fnma(r, cr)))
            } else {
                (k, k.fma(V::splat(t.log_2[B].1), tl))
            };
            let (rh, rl) = if B == 0 {
                (r, r.mul(r).fma(p, base))
            } else {
                let inv_ln = V::splat(t.inv_ln[B].0);
                let rh = r.mul(inv_ln);
                let err = r.fms(inv_ln, rh);
                let rl = r.fma(V::splat(t.inv_ln[B].1), err.add(base));
                (rh, r.mul(r).fma(p, rl))
            };
            // k log_b 2 + th (exact: both on th's grid or log_b 2's), then
            // + rh with its rounding error kept (Fast2Sum: a is the larger,
            // or zero).
            let a = k.fma(V::splat(t.log_2[B].0), th);
            let s = a.add(rh);
            let es = rh.sub(s.sub(a));
            let lo = rl.add(es);
            s.add(lo)
        }
    }

    /// `out[i] = f(x[i])` a register at a time, the tail through masked
    /// loads and stores.
    ///
    /// # Safety
    /// The CPU has AVX-512 F/VL/DQ/BW and FMA (the caller's features: this
    /// is inlined into it); `x` points to at least `out.len()` values.
    #[inline(always)]
    pub(in crate::cpu) unsafe fn each_register<V: Lanes>(
        x: *const V::Elem,
        out: &mut [V::Elem],
        f: impl Fn(V) -> V,
    ) {
        let n = out.len();
        let o = out.as_mut_ptr();
        let full = n - n % V::WIDTH;
        let mut i = 0;
        while i < full {
            // SAFETY: i + WIDTH <= n: inside x (the caller's contract) and
            // out.
            unsafe { f(V::load(x.add(i), V::WIDTH)).store(o.add(i), V::WIDTH) };
            i += V::WIDTH;
        }
        if full < n {
            // SAFETY: the n - full lanes from `full` are inside both.
            unsafe { f(V::load(x.add(full), n - full)).store(o.add(full), n - full) };
        }
    }

    /// [`run`] for the base.
    ///
    /// # Safety
    /// As [`run`].
    #[inline(always)]
    pub(super) unsafe fn run_base<V: Lanes>(base: LogBase, x: *const V::Elem, out: &mut [V::Elem]) {
        // SAFETY: the caller's contract.
        unsafe {
            match base {
                LogBase::E => run::<V, 0>(x, out),
                LogBase::Two => run::<V, 1>(x, out),
                LogBase::Ten => run::<V, 2>(x, out),
            }
        }
    }

    /// # Safety
    /// The CPU has AVX-512 F/VL/DQ/BW and FMA; `x` points to at least
    /// `out.len()` values.
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    unsafe fn run<V: Lanes, const B: usize>(x: *const V::Elem, out: &mut [V::Elem]) {
        // SAFETY: this function's features; x holds out.len() points (the
        // caller's contract).
        unsafe {
            let tabs = tables::<V, B>();
            each_register(x, out, |v: V| log_lanes::<V, B>(v, &tabs));
        }
    }
}

#[cfg(test)]
#[path = "math_log_tests.rs"]
mod tests;
