//! float32 `tanh` over a chunk with AVX-512 intrinsics, within 1.3 ulp of
//! the correctly rounded value (every positive float32 below 10 checked;
//! the portable [`super::math::tanh_f32`] is within 3), C's values at 0,
//! ±inf and NaN. The portable form computes e^2|x| and a division on every
//! point, 0.6 ns per point on one core against NumPy's 0.3 (SVML), which
//! made float32 `tanh` 0.48x NumPy at 1e4 in issue 23's table.
//!
//! Method (NumPy's and SVML's for float32 tanh): |x| is clamped at 9.1
//! (where tanh rounds to 1), its exponent and first fraction bit pick one
//! of 32 half-binades from 2^-12 up, and tanh there is a degree-6
//! polynomial in r = |x| - lo; coefficients come from
//! `scripts/fit_tanh_f32.py` (near-minimax in relative error, 0.8 x 2^-24
//! after rounding to float32). Each coefficient is one `vpermt2ps` from two
//! registers of table: no exp, no division. Below 2^-12, tanh(x) rounds
//! to x. Below 1/16 the fitted c3..c6 are large (up to 1e15 in the first
//! interval, 1e4 near 1/16) and cancel one another: the refit spends them
//! on c0's rounding, which no polynomial vanishing at r = 0 represents.
//! The exhaustive check covers what they compute; tanh's plain Taylor
//! coefficients were tried there and were less accurate (1.23 ulp against
//! 0.70 below 0.625), and at the last interval lost tanh = 1 past the
//! clamp.

// Coefficients are quoted as the script prints them.
#![allow(clippy::excessive_precision)]

use super::simd::{level, SimdLevel};

/// `out[i] = tanh(x[i])` for `out.len()` points of `x` with AVX-512 where
/// [`level`] selects it; false (nothing written) elsewhere, for the
/// portable loop.
#[inline(always)]
pub fn tanh_slice_f32(x: &[f32], out: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if level() == SimdLevel::Avx512 {
        assert!(x.len() >= out.len(), "tanh: input shorter than output");
        // SAFETY: level() reports AVX-512 only where the CPU has every
        // feature the kernel enables; x holds out.len() points (asserted).
        unsafe { avx512::run(x.as_ptr(), out) };
        return true;
    }
    let _ = (x, out);
    false
}

/// Below this tanh(x) rounds to x.
const TINY: f32 = 0.000_244_140_625;
/// Past this tanh(x) rounds to 1.
const CLAMP: f32 = 9.1;
/// The exponent-and-first-bit pattern (`bits >> 22`) of [`TINY`].
const FIRST: i32 = 230;

/// Start of each interval.
const TANH_LO: [f32; 32] = [
    0.000244140625,
    0.0003662109375,
    0.00048828125,
    0.000732421875,
    0.0009765625,
    0.00146484375,
    0.001953125,
    0.0029296875,
    0.00390625,
    0.005859375,
    0.0078125,
    0.01171875,
    0.015625,
    0.0234375,
    0.03125,
    0.046875,
    0.0625,
    0.09375,
    0.125,
    0.1875,
    0.25,
    0.375,
    0.5,
    0.75,
    1.0,
    1.5,
    2.0,
    3.0,
    4.0,
    6.0,
    8.0,
    8.0,
];
/// Row k: the coefficient of r^k of each interval.
const TANH_C: [[f32; 32]; 7] = [
    [
        0.000244140625,
        0.00036621090839616954,
        0.00048828122089616954,
        0.0007324217585846782,
        0.0009765622089616954,
        0.0014648427022621036,
        0.0019531225552782416,
        0.0029296791180968285,
        0.0039062302093952894,
        0.005859307944774628,
        0.007812341209501028,
        0.011718213558197021,
        0.01562372874468565,
        0.02343321032822132,
        0.031239831820130348,
        0.04684069752693176,
        0.06241874769330025,
        0.093476302921772,
        0.12435299903154373,
        0.18533320724964142,
        0.24491865932941437,
        0.35835739970207214,
        0.46211716532707214,
        0.6351489424705505,
        0.7615941762924194,
        0.9051482677459717,
        0.9640275835990906,
        0.9950547814369202,
        0.9993293285369873,
        0.9999877214431763,
        0.9999997615814209,
        0.9999997615814209,
    ],
    [
        0.9999987483024597,
        1.0000028610229492,
        0.9999985694885254,
        0.9999977350234985,
        0.9999978542327881,
        0.9999978542327881,
        0.9999949932098389,
        0.9999914169311523,
        0.999983549118042,
        0.9999656677246094,
        0.9999378323554993,
        0.9998629093170166,
        0.9997552037239075,
        0.9994474649429321,
        0.9990233778953552,
        0.9978066086769104,
        0.9961029887199402,
        0.9912631511688232,
        0.9845376014709473,
        0.9656481742858887,
        0.9400155544281006,
        0.871579647064209,
        0.786446750164032,
        0.5965869426727295,
        0.4199737012386322,
        0.18070611357688904,
        0.07065039128065109,
        0.009864874184131622,
        0.00133884372189641,
        2.440792741253972e-05,
        7.490786515518266e-07,
        7.490786515518266e-07,
    ],
    [
        0.0815269872546196,
        -0.20105679333209991,
        0.040397290140390396,
        0.05742574855685234,
        0.019466286525130272,
        -0.001464381697587669,
        0.008268808014690876,
        -0.002925991313531995,
        0.0012087863869965076,
        -0.0058298055082559586,
        -0.005403315648436546,
        -0.012197905220091343,
        -0.014883492141962051,
        -0.019822413101792336,
        -0.03084206022322178,
        -0.047088757157325745,
        -0.061931006610393524,
        -0.09291446208953857,
        -0.12259773164987564,
        -0.17851519584655762,
        -0.2302735149860382,
        -0.3123151659965515,
        -0.36339619755744934,
        -0.37895697355270386,
        -0.3198511600494385,
        -0.1635642945766449,
        -0.0681033656001091,
        -0.009803458116948605,
        -0.0013211576733738184,
        -2.370792572037317e-05,
        -2.3627476366527844e-06,
        -2.3627476366527844e-06,
    ],
    [
        -2375.131103515625,
        5739.45263671875,
        -594.032958984375,
        -833.972900390625,
        -148.75889587402344,
        -0.33822429180145264,
        -37.44236755371094,
        -0.35289567708969116,
        -9.621166229248047,
        -0.41158291697502136,
        -2.5070853233337402,
        0.10119745880365372,
        -0.6649806499481201,
        -1.944809913635254,
        -0.4147231876850128,
        -0.25133779644966125,
        -0.35591816902160645,
        -0.293223112821579,
        -0.30352240800857544,
        -0.3140623867511749,
        -0.2556520104408264,
        -0.17922070622444153,
        -0.09474292397499084,
        0.04228925704956055,
        0.10372645407915115,
        0.087872713804245,
        0.04208559915423393,
        0.0064085135236382484,
        0.0008293405990116298,
        1.4330553312902339e-05,
        5.54345342607121e-06,
        5.54345342607121e-06,
    ],
    [
        33271816.0,
        -79534768.0,
        4158978.75,
        5784471.0,
        519875.09375,
        20.528324127197266,
        64989.94921875,
        41.05326461791992,
        8134.86181640625,
        82.10684204101562,
        948.4363403320312,
        -189.22828674316406,
        72.37994384765625,
        349.68011474609375,
        9.027396202087402,
        -8.576494216918945,
        1.5614043474197388,
        -1.4854844808578491,
        -0.17698194086551666,
        0.8006741404533386,
        0.12202165275812149,
        0.17664039134979248,
        0.1689658910036087,
        0.09679920226335526,
        0.026723599061369896,
        -0.025572827085852623,
        -0.017890876159071922,
        -0.0029843784868717194,
        -0.0003423860762268305,
        -5.5479208640463185e-06,
        -7.134648967621615e-06,
        -7.134648967621615e-06,
    ],
    [
        -222590484480.0,
        527647342592.0,
        -13911912448.0,
        -19207573504.0,
        -869499648.0,
        -38148.21484375,
        -54348908.0,
        -38144.94140625,
        -3401982.25,
        -38145.109375,
        -197805.8125,
        39397.64453125,
        -7543.04638671875,
        -36288.91015625,
        -469.0176086425781,
        447.9477233886719,
        -39.61042404174805,
        40.231868743896484,
        3.458209753036499,
        -8.824459075927734,
        0.18723052740097046,
        -0.03743775188922882,
        -0.04518429562449455,
        -0.05653753504157066,
        -0.043212927877902985,
        -0.00020667129138018936,
        0.004984287079423666,
        0.0009391402127221227,
        8.458460797555745e-05,
        1.258550241800549e-06,
        4.520367383520352e-06,
        4.520367383520352e-06,
    ],
    [
        570606672150528.0,
        -1343676894674944.0,
        17831468990464.0,
        24475112308736.0,
        557236944896.0,
        26200696.0,
        17415438336.0,
        13099199.0,
        545123264.0,
        6549630.0,
        15818153.0,
        -3144883.5,
        301502.375,
        1445190.0,
        9372.5205078125,
        -8933.9208984375,
        397.99285888671875,
        -399.2432861328125,
        -16.734298706054688,
        44.35419845581055,
        -0.3580511212348938,
        0.07448671758174896,
        -0.013013591058552265,
        -0.001603421289473772,
        0.015641333535313606,
        0.002432210138067603,
        -0.000698874588124454,
        -0.00015017612895462662,
        -9.343218152935151e-06,
        -1.2628034085082618e-07,
        -1.108655851567164e-06,
        -1.108655851567164e-06,
    ],
];

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{CLAMP, FIRST, TANH_C, TANH_LO, TINY};
    use std::arch::x86_64::*;

    /// A 32-entry table in two registers.
    type Table = [__m512; 2];

    /// # Safety
    /// The CPU has AVX-512 F (the caller's target features).
    #[inline(always)]
    unsafe fn load(v: &[f32; 32]) -> Table {
        // SAFETY: two 16-lane loads inside the 32 entries.
        unsafe {
            [
                _mm512_loadu_ps(v.as_ptr()),
                _mm512_loadu_ps(v.as_ptr().add(16)),
            ]
        }
    }

    /// One vector: tanh of 16 points.
    ///
    /// # Safety
    /// As [`load`].
    #[inline(always)]
    unsafe fn tanh(x: __m512, lo: &Table, c: &[Table; 7]) -> __m512 {
        let sign = _mm512_set1_ps(-0.0);
        let a0 = _mm512_andnot_ps(sign, x);
        // min(9.1, NaN) is NaN: MINPS returns its second operand then.
        let a = _mm512_min_ps(_mm512_set1_ps(CLAMP), a0);
        // 0..=30 from 2^-12 to 9.1; below, garbage the last select drops.
        let idx = _mm512_sub_epi32(
            _mm512_srli_epi32::<22>(_mm512_castps_si512(a)),
            _mm512_set1_epi32(FIRST),
        );
        let pick = |t: &Table| _mm512_permutex2var_ps(t[0], idx, t[1]);
        let r = _mm512_sub_ps(a, pick(lo));
        let mut p = pick(&c[6]);
        for ck in c[..6].iter().rev() {
            p = _mm512_fmadd_ps(p, r, pick(ck));
        }
        // tanh is odd: x's sign (NaN stays NaN).
        let p = _mm512_or_ps(p, _mm512_and_ps(x, sign));
        let tiny = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a0, _mm512_set1_ps(TINY));
        _mm512_mask_mov_ps(p, tiny, x)
    }

    /// # Safety
    /// The CPU has AVX-512 F/VL/DQ/BW and FMA; `x` points to at least
    /// `out.len()` values.
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    pub(super) unsafe fn run(x: *const f32, out: &mut [f32]) {
        // SAFETY: the tables are 32 entries each.
        let (lo, c) = unsafe {
            (
                load(&TANH_LO),
                [
                    load(&TANH_C[0]),
                    load(&TANH_C[1]),
                    load(&TANH_C[2]),
                    load(&TANH_C[3]),
                    load(&TANH_C[4]),
                    load(&TANH_C[5]),
                    load(&TANH_C[6]),
                ],
            )
        };
        let n = out.len();
        let o = out.as_mut_ptr();
        let full = n - n % 16;
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= n: inside x (the caller's contract) and out.
            unsafe {
                let v = tanh(_mm512_loadu_ps(x.add(i)), &lo, &c);
                _mm512_storeu_ps(o.add(i), v);
            }
            i += 16;
        }
        if full < n {
            let mask = (1u16 << (n - full)) - 1;
            // SAFETY: the masked lanes from `full` are inside both.
            unsafe {
                let v = tanh(_mm512_maskz_loadu_ps(mask, x.add(full)), &lo, &c);
                _mm512_mask_storeu_ps(o.add(full), mask, v);
            }
        }
    }
}

#[cfg(test)]
#[path = "math32_tanh512_tests.rs"]
mod tests;
