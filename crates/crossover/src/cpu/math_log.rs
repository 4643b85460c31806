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

/// The constants of one float type, from `mpmath` at 200 bits: inv_c
/// rounded to the type, then -log_b(inv_c) split into a rounded high part
/// and the rounded rest; P's coefficients are a Chebyshev fit of
/// (log1p(r) - r)/(r^2 ln b) on [-1/32, 1/16] (a margin included),
/// degree 4 (float32: 2^-26.6 from it) and 9 (float64: 2^-55.6).
// Quoted as computed (shortest round-trip decimal of each value).
#[allow(clippy::excessive_precision)]
pub(super) mod consts {
    /// Subinterval i of m in [1, 2) has the centre 1 + (2i + 1)/32, except
    /// 1 (i = 0) and 2 (i = 15, whose -log_b(1/2) is log_b 2 split as
    /// `log_2`, so that k log_b 2 cancels it exactly just below 1).
    pub struct Tables {
        pub inv_c: [f64; 16],
        /// -log_b(inv_c), high and low parts, for b = e, 2, 10: the high
        /// part on a grid of 2^-12 (float32) or 2^-32 (float64), so that
        /// k log_b 2 + hi is exact.
        pub hi: [[f64; 16]; 3],
        pub lo: [[f64; 16]; 3],
        /// log_b 2 in two parts (the high part short enough that k times
        /// it is exact: k has at most 8 bits in float32, 11 in float64),
        /// then 1/ln b in two parts.
        pub log_2: [(f64, f64); 3],
        pub inv_ln: [(f64, f64); 3],
        /// log_b(1 + r) = r/ln b + r^2 P_b(r): P_b's coefficients, highest
        /// first.
        pub p: [&'static [f64]; 3],
    }

    pub const TABLES32: Tables = Tables {
        inv_c: [
            1.0,
            0.9142857193946838,
            0.8648648858070374,
            0.8205128312110901,
            0.7804877758026123,
            0.7441860437393188,
            0.7111111283302307,
            0.6808510422706604,
            0.6530612111091614,
            0.6274510025978088,
            0.6037735939025879,
            0.581818163394928,
            0.5614035129547119,
            0.5423728823661804,
            0.5245901346206665,
            0.5,
        ],
        hi: [
            [
                0.0,
                0.089599609375,
                0.145263671875,
                0.19775390625,
                0.247802734375,
                0.29541015625,
                0.3408203125,
                0.384521484375,
                0.426025390625,
                0.466064453125,
                0.504638671875,
                0.54150390625,
                0.577392578125,
                0.61181640625,
                0.64501953125,
                0.693359375,
            ],
            [
                0.0,
                0.12939453125,
                0.20947265625,
                0.285400390625,
                0.357666015625,
                0.42626953125,
                0.491943359375,
                0.5546875,
                0.61474609375,
                0.67236328125,
                0.72802734375,
                0.78125,
                0.8330078125,
                0.882568359375,
                0.9306640625,
                1.0,
            ],
            [
                0.0,
                0.038818359375,
                0.06298828125,
                0.0859375,
                0.107666015625,
                0.12841796875,
                0.14794921875,
                0.1669921875,
                0.18505859375,
                0.202392578125,
                0.21923828125,
                0.235107421875,
                0.250732421875,
                0.265625,
                0.2802734375,
                0.30103302001953125,
            ],
        ],
        lo: [
            [
                0.0,
                1.2543726370495278e-05,
                -8.168624481186271e-05,
                7.182404078776017e-05,
                3.3466782042523846e-05,
                5.406036871136166e-05,
                0.00010625025606714189,
                -0.00010975379700539634,
                5.9025176597060636e-05,
                2.5241410185117275e-05,
                -8.267602242995054e-05,
                9.340784890810028e-05,
                -7.722053851466626e-05,
                -1.4867006939311977e-05,
                0.0001184860011562705,
                -0.00021219444170128554,
            ],
            [
                0.0,
                -0.0001115223640226759,
                -1.932555460371077e-05,
                1.8094266351909027e-06,
                -0.00011395726323826239,
                -4.7711732804600615e-06,
                -9.029798093251884e-05,
                -9.860264253802598e-05,
                -3.622007352532819e-05,
                6.200966163305566e-05,
                -0.0001069106874638237,
                0.00010975921031786129,
                -0.00011780908243963495,
                7.468729745596647e-05,
                7.335568079724908e-05,
                0.0,
            ],
            [
                0.0,
                9.970422979677096e-05,
                6.345398287521675e-05,
                -2.2876956791151315e-05,
                -3.212104638805613e-05,
                -9.94898728094995e-05,
                0.00011330618872307241,
                -4.4294130930211395e-05,
                -1.248314310942078e-05,
                2.7604282877291553e-05,
                -0.00011239643936278298,
                0.00010530305007705465,
                -7.547758286818862e-06,
                7.703251321800053e-05,
                -9.355654037790373e-05,
                -3.024355464731343e-06,
            ],
        ],
        log_2: [
            (0.693359375, -0.00021219444170128554),
            (1.0, 0.0),
            (0.30103302001953125, -3.024355464731343e-06),
        ],
        inv_ln: [
            (1.0, 0.0),
            (1.4426950216293335, 1.925963033500011e-08),
            (0.4342944920063019, -1.0103049952192578e-08),
        ],
        p: [
            &[
                -0.1562747359275818,
                0.20006753504276276,
                -0.2500128746032715,
                0.3333333432674408,
                -0.5,
            ],
            &[
                -0.22545678913593292,
                0.2886364459991455,
                -0.3606923222541809,
                0.480898380279541,
                -0.7213475108146667,
            ],
            &[
                -0.06786925345659256,
                0.08688822388648987,
                -0.10857920348644257,
                0.14476484060287476,
                -0.21714724600315094,
            ],
        ],
    };

    pub const TABLES64: Tables = Tables {
        inv_c: [
            1.0,
            0.9142857142857143,
            0.8648648648648649,
            0.8205128205128205,
            0.7804878048780488,
            0.7441860465116279,
            0.7111111111111111,
            0.6808510638297872,
            0.6530612244897959,
            0.6274509803921569,
            0.6037735849056604,
            0.5818181818181818,
            0.5614035087719298,
            0.5423728813559322,
            0.5245901639344263,
            0.5,
        ],
        hi: [
            [
                0.0,
                0.0896121587138623,
                0.14518200978636742,
                0.19782574335113168,
                0.24783616396598518,
                0.2954642130061984,
                0.3409265868831426,
                0.3844116989057511,
                0.4260843952652067,
                0.466089729918167,
                0.5045560107100755,
                0.5415972825139761,
                0.5773153649643064,
                0.6118015411775559,
                0.6451379614882171,
                0.6931471803691238,
            ],
            [
                0.0,
                0.12928301701322198,
                0.20945336553268135,
                0.28540221881121397,
                0.35755200451239944,
                0.42626475472934544,
                0.4918530962895602,
                0.5545888517517596,
                0.6147098441142589,
                0.6724253420252353,
                0.7279204544611275,
                0.78135971352458,
                0.8328900141641498,
                0.8826430493500084,
                0.9307373375631869,
                1.0,
            ],
            [
                0.0,
                0.0389180660713464,
                0.06305174576118588,
                0.08591462881304324,
                0.10763387847691774,
                0.12831847718916833,
                0.1480625355616212,
                0.16694787959568202,
                0.18504610168747604,
                0.20242019789293408,
                0.2191258913371712,
                0.2352127111516893,
                0.2507248774636537,
                0.26570203341543674,
                0.28017985657788813,
                0.3010299956640665,
            ],
        ],
        lo: [
            [
                0.0,
                -2.417513607415438e-11,
                5.8130425388947895e-11,
                -2.1211762570521887e-11,
                -6.140395686131549e-11,
                -1.123625159550127e-10,
                8.745058161840661e-11,
                4.580954897688746e-12,
                4.569344831885847e-11,
                6.432243387884106e-12,
                4.23198275949667e-11,
                -8.123167695813396e-11,
                7.051730530655821e-11,
                -7.156301169420577e-11,
                -1.1463246577869747e-10,
                1.9082149292723212e-10,
            ],
            [
                0.0,
                -6.82554787807614e-11,
                9.626835583250535e-11,
                5.103442171976455e-11,
                1.0568420806909723e-10,
                -2.7247481959005698e-11,
                4.011445693502977e-11,
                -7.412224111477094e-11,
                9.494446234726583e-13,
                -5.3739685566494726e-11,
                1.0207171473212711e-10,
                7.967231358255966e-14,
                5.919941329697903e-13,
                1.183289532063438e-11,
                -3.0068253449806173e-13,
                0.0,
            ],
            [
                0.0,
                -4.097672917763604e-11,
                -1.4096887844138456e-11,
                -1.0644999123202766e-10,
                -7.708824030976061e-11,
                7.051222235617716e-11,
                -1.0618350238418753e-10,
                2.012947393710708e-11,
                2.113168107845608e-11,
                -1.1490368814504865e-10,
                -5.6288110798884885e-11,
                2.2648599562063723e-11,
                -1.1106823679156099e-10,
                -9.319852899121783e-11,
                1.1297290407396645e-10,
                -8.532344317057107e-14,
            ],
        ],
        log_2: [
            (0.6931471803691238, 1.9082149292723212e-10),
            (1.0, 0.0),
            (0.3010299956640665, -8.532344317057107e-14),
        ],
        inv_ln: [
            (1.0, 0.0),
            (std::f64::consts::LOG2_E, 2.0355273740931033e-17),
            (std::f64::consts::LOG10_E, 1.098319650216765e-17),
        ],
        p: [
            &[
                0.0792355763418047,
                -0.09963636092758034,
                0.11113082514825989,
                -0.12500109248093122,
                0.14285713574945275,
                -0.16666666580985579,
                0.199999999998925,
                -0.25000000000021605,
                0.3333333333333337,
                -0.5,
            ],
            &[
                0.1143127730503005,
                -0.14374488380244302,
                0.16032789033129305,
                -0.18033845622794217,
                0.20609928130133692,
                -0.2404491722453771,
                0.2885390081762418,
                -0.36067376022255254,
                0.48089834696298833,
                -0.7213475204444817,
            ],
            &[
                0.03441157357566963,
                -0.0432715217477689,
                0.048263504131244396,
                -0.05428728469634649,
                0.0620420657564911,
                -0.07238241327843374,
                0.0868588963801835,
                -0.10857362047590678,
                0.1447648273010841,
                -0.2171472409516259,
            ],
        ],
    };
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::consts::{Tables, TABLES32, TABLES64};
    use super::LogBase;
    use std::arch::x86_64::*;

    /// One float type's lanes: the few operations the kernel needs, each
    /// one intrinsic. Inlined into [`run`], which enables the features.
    pub(super) trait Lanes: Copy {
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
        /// (m in [1, 2), k) with x = 2^k m (subnormals too).
        unsafe fn split(self) -> (Self, Self);
        /// The entry of m's subinterval.
        unsafe fn lookup(m: Self, t: Self::Table) -> Self;
        /// C's values where x is not a positive finite number: log(+-0) =
        /// -inf, log(inf) = inf, NaN for NaN and negative x.
        unsafe fn specials(x: Self, y: Self) -> Self;
    }

    #[derive(Clone, Copy)]
    pub(super) struct F32(__m512);
    #[derive(Clone, Copy)]
    pub(super) struct F64(__m512d);

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
        let t = V::TABLES;
        // SAFETY: run's features are enabled here (inlined into run).
        unsafe {
            let (m, k) = x.split();
            let r = m.fma(V::lookup(m, tabs[0]), V::splat(-1.0));
            let (th, tl) = (V::lookup(m, tabs[1]), V::lookup(m, tabs[2]));
            // log_b(1 + r) = r/ln b + r^2 P_b(r).
            let mut p = V::splat(t.p[B][0]);
            for &c in &t.p[B][1..] {
                p = p.fma(r, V::splat(c));
            }
            // The table's low part less k log_b 2's first (they cancel
            // exactly just below 1), then r/ln b's rounding error (none for
            // ln) and r^2 P_b(r).
            let base = k.fma(V::splat(t.log_2[B].1), tl);
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
            V::specials(x, s.add(lo))
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
        let t = V::TABLES;
        // SAFETY: this function's features; tables are 16 entries.
        let tabs = unsafe { [V::table(&t.inv_c), V::table(&t.hi[B]), V::table(&t.lo[B])] };
        let n = out.len();
        let o = out.as_mut_ptr();
        let full = n - n % V::WIDTH;
        let mut i = 0;
        while i < full {
            // SAFETY: i + WIDTH <= n: inside x (the caller's contract) and
            // out.
            unsafe {
                let v = log_lanes::<V, B>(V::load(x.add(i), V::WIDTH), &tabs);
                v.store(o.add(i), V::WIDTH);
            }
            i += V::WIDTH;
        }
        if full < n {
            // SAFETY: the n - full lanes from `full` are inside both.
            unsafe {
                let v = log_lanes::<V, B>(V::load(x.add(full), n - full), &tabs);
                v.store(o.add(full), n - full);
            }
        }
    }
}

#[cfg(test)]
#[path = "math_log_tests.rs"]
mod tests;
