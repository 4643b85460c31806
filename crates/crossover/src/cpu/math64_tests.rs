//! Tests of [`super`] against libm (Rust's `f64` methods): ulp distances over
//! large deterministic point sets, and the special cases bit for bit.

use super::*;

/// Distance in ulps between two doubles (ordered bit patterns; NaN equals
/// NaN, NaN against a number is infinitely far).
pub(crate) fn ulps(a: f64, b: f64) -> u64 {
    if a.is_nan() && b.is_nan() || a == b {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    let key = |v: f64| {
        let b = v.to_bits() as i64;
        (if b < 0 { i64::MIN - b } else { b }) as i128
    };
    (key(a) - key(b)).unsigned_abs() as u64
}

/// Deterministic xorshift points.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// Magnitude log-uniform in [2^lo, 2^hi); a random sign if `signed`.
    pub(crate) fn log_uniform(&mut self, lo: f64, hi: f64, signed: bool) -> f64 {
        let v = self.uniform(lo, hi).exp2();
        if signed && self.next() & 1 == 1 {
            -v
        } else {
            v
        }
    }
}

pub(crate) const N: usize = 200_000;

/// The largest ulp distance of `f` from `libm` over `xs`, and where.
pub(crate) fn worst(f: impl Fn(f64) -> f64, libm: impl Fn(f64) -> f64, xs: Vec<f64>) -> (u64, f64) {
    assert!(xs.iter().any(|&x| x != 0.0));
    let mut w = (0, 0.0);
    for x in xs {
        let u = ulps(f(x), libm(x));
        if u > w.0 {
            w = (u, x);
        }
    }
    w
}

pub(crate) fn check(
    name: &str,
    max: u64,
    f: impl Fn(f64) -> f64,
    libm: impl Fn(f64) -> f64,
    xs: Vec<f64>,
) {
    let (u, x) = worst(f, libm, xs);
    assert!(u <= max, "{name}: {u} ulp from libm at {x:e}");
}

pub(crate) fn same(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan()
}

/// Exactly libm's value where it is special (NaN, zero, infinity: with its
/// sign), else within `max` ulp.
pub(crate) fn c_like(got: f64, want: f64, max: u64) -> bool {
    let plain = |v: f64| v.is_finite() && v != 0.0;
    same(got, want)
        || plain(got)
            && plain(want)
            && got.is_sign_negative() == want.is_sign_negative()
            && ulps(got, want) <= max
}

pub(crate) fn gen(seed: u64, mut f: impl FnMut(&mut Rng) -> f64) -> Vec<f64> {
    let mut g = Rng(seed);
    (0..N).map(|_| f(&mut g)).collect()
}

pub(crate) const SPECIAL: [f64; 12] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    f64::MAX,
    f64::MIN,
];

#[test]
fn exp_within_1_ulp() {
    check(
        "exp",
        1,
        exp_f64,
        f64::exp,
        gen(1, |g| g.uniform(-745.2, 709.8)),
    );
    check(
        "exp",
        1,
        exp_f64,
        f64::exp,
        gen(2, |g| g.uniform(-1.0, 1.0)),
    );
    check(
        "exp",
        1,
        exp_f64,
        f64::exp,
        gen(3, |g| g.log_uniform(-1074.0, 0.0, true)),
    );
    // Subnormal results, and just below overflow.
    check(
        "exp",
        1,
        exp_f64,
        f64::exp,
        gen(4, |g| g.uniform(-745.2, -708.0)),
    );
    check(
        "exp",
        1,
        exp_f64,
        f64::exp,
        gen(5, |g| g.uniform(709.0, 709.78)),
    );
    for x in SPECIAL
        .into_iter()
        .chain([709.79, 710.0, -745.2, -746.0, -1e300])
    {
        assert!(c_like(exp_f64(x), x.exp(), 1), "exp({x}) = {}", exp_f64(x));
    }
}

#[test]
fn log_within_1_ulp() {
    // Every positive double, subnormals included, by random bit patterns.
    check(
        "log",
        1,
        log_f64,
        f64::ln,
        gen(6, |g| f64::from_bits(g.next() >> 1)),
    );
    check("log", 1, log_f64, f64::ln, gen(7, |g| g.uniform(0.5, 2.0)));
    check(
        "log",
        1,
        log_f64,
        f64::ln,
        gen(8, |g| g.uniform(0.999, 1.001)),
    );
    check(
        "log",
        1,
        log_f64,
        f64::ln,
        gen(9, |g| g.log_uniform(-1074.0, -1022.0, false)),
    );
    for x in SPECIAL
        .into_iter()
        .chain([-1e-300, 1.0 + f64::EPSILON, 1.0 - 1e-16])
    {
        assert!(c_like(log_f64(x), x.ln(), 1), "log({x}) = {}", log_f64(x));
    }
}

#[test]
fn sin_cos_tan_within_1_ulp() {
    for (i, (lo, hi)) in [(-4.0, 4.0), (-100.0, 100.0), (-1e6, 1e6), (-1e-5, 1e-5)]
        .into_iter()
        .enumerate()
    {
        let xs = gen(10 + i as u64, |g| g.uniform(lo, hi));
        check("sin", 1, sin_f64, f64::sin, xs.clone());
        check("cos", 1, cos_f64, f64::cos, xs.clone());
        check("tan", 1, tan_f64, f64::tan, xs);
    }
    // All magnitudes the fast path takes, subnormals included.
    let xs = gen(20, |g| g.log_uniform(-1074.0, 19.9, true));
    check("sin", 1, sin_f64, f64::sin, xs.clone());
    check("cos", 1, cos_f64, f64::cos, xs.clone());
    check("tan", 1, tan_f64, f64::tan, xs);
    // Doubles nearest to multiples of pi/2 (the hardest reductions), and
    // integers.
    let xs: Vec<f64> = (1..N)
        .map(|k| k as f64 * std::f64::consts::FRAC_PI_2 * 3.0)
        .collect();
    check("sin", 1, sin_f64, f64::sin, xs.clone());
    check("cos", 1, cos_f64, f64::cos, xs.clone());
    check("tan", 1, tan_f64, f64::tan, xs);
    // Near odd multiples of pi/4, where tan is near +-1 and its even
    // quadrants' rounding errors weigh most (results just below 1).
    let xs = gen(21, |g| {
        let k = (g.next() % 600_000) as f64 + 0.5;
        k * std::f64::consts::FRAC_PI_2 + g.uniform(-1e-3, 1e-3)
    });
    check("tan", 1, tan_f64, f64::tan, xs);
    let xs: Vec<f64> = (1..N).map(|k| (k * 5) as f64).collect();
    check("sin", 1, sin_f64, f64::sin, xs.clone());
    check("cos", 1, cos_f64, f64::cos, xs.clone());
    check("tan", 1, tan_f64, f64::tan, xs);
    for x in [
        0.0,
        -0.0,
        1e-300,
        -5e-324,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ] {
        assert!(same(sin_f64(x), x.sin()), "sin({x}) = {}", sin_f64(x));
        assert!(same(cos_f64(x), x.cos()), "cos({x}) = {}", cos_f64(x));
        assert!(same(tan_f64(x), x.tan()), "tan({x}) = {}", tan_f64(x));
    }
}

#[test]
fn huge_trig_arguments_take_libm() {
    let two53 = 9_007_199_254_740_992.0;
    let src = [
        1e7,
        -3e20,
        two53 - 1.0,
        two53 + 2.0,
        1e300,
        0.5,
        f64::INFINITY,
        f64::NAN,
    ];
    let mut dst = [0.0; 8];
    for (fast, exact) in [
        (sin_f64 as fn(f64) -> f64, f64::sin as fn(f64) -> f64),
        (cos_f64, f64::cos),
        (tan_f64, f64::tan),
    ] {
        crate::cpu::math::trig_slice!(f64, &src, &mut dst, fast, exact);
        for (&x, &d) in src.iter().zip(&dst) {
            assert!(ulps(d, exact(x)) <= 1, "{x}: {d}");
        }
    }
}

#[test]
fn pow_within_2_ulp() {
    let mut worst = (0, 0.0, 0.0);
    let mut g = Rng(30);
    let mut probe = |x: f64, y: f64| {
        let u = ulps(pow_f64(x, y), x.powf(y));
        if u > worst.0 {
            worst = (u, x, y);
        }
    };
    for _ in 0..N {
        // Any base; exponents whose results span the normal range, through
        // the subnormals to overflow.
        let x = g.log_uniform(-1074.0, 1024.0, false);
        probe(x, g.uniform(-745.0, 709.7) / x.ln());
        probe(g.uniform(0.0, 10.0), g.uniform(-30.0, 30.0));
        // Bases near 1 with large exponents need log|x| in extended
        // precision.
        let x = 1.0 + g.uniform(-1e-3, 1e-3);
        probe(x, g.uniform(-745.0, 709.7) / x.ln());
        // Negative bases with integer exponents.
        probe(-g.uniform(0.0, 100.0), (g.next() % 200) as f64 - 100.0);
    }
    // Integer exponents near 2^53 (parity decides the sign).
    let two53 = 9_007_199_254_740_992.0;
    for y in [two53 - 1.0, two53, two53 + 2.0, 1e300] {
        for x in [
            -1.0,
            -1.0 - f64::EPSILON,
            -1.0 + f64::EPSILON / 2.0,
            1.0 - f64::EPSILON,
        ] {
            probe(x, y);
            probe(x, -y);
        }
    }
    assert!(
        worst.0 <= 2,
        "pow: {} ulp at {:e}^{:e}",
        worst.0,
        worst.1,
        worst.2
    );
}

#[test]
fn pow_special_cases_match_c() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let vals = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        -3.0,
        1.0 / 3.0,
        inf,
        -inf,
        nan,
        5e-324,
        1e308,
    ];
    for x in vals {
        for y in vals {
            let (got, want) = (pow_f64(x, y), x.powf(y));
            assert!(
                c_like(got, want, 2),
                "pow({x}, {y}) = {got}, libm says {want}"
            );
        }
    }
    for (x, y) in [
        (-8.0, 1.0 / 3.0),
        (2.0, 1024.0),
        (2.0, -1074.0),
        (2.0, -1075.0),
        (-2.0, 1023.0),
    ] {
        let (got, want) = (pow_f64(x, y), x.powf(y));
        assert!(
            c_like(got, want, 2),
            "pow({x}, {y}) = {got}, libm says {want}"
        );
    }
}

#[test]
fn log2_exp2_within_1_ulp_log10_within_2() {
    for xs in [
        gen(40, |g| f64::from_bits(g.next() >> 1)),
        gen(41, |g| g.uniform(0.5, 2.0)),
        gen(42, |g| g.uniform(0.999, 1.001)),
    ] {
        check("log2", 1, log2_f64, f64::log2, xs.clone());
        // glibc's log10 is not correctly rounded (2 ulp from it at
        // 1.0716822413567966, where this one is).
        check("log10", 2, log10_f64, f64::log10, xs);
    }
    check(
        "exp2",
        1,
        exp2_f64,
        f64::exp2,
        gen(43, |g| g.uniform(-1075.0, 1024.0)),
    );
    check(
        "exp2",
        1,
        exp2_f64,
        f64::exp2,
        gen(44, |g| g.uniform(-1.0, 1.0)),
    );
    check(
        "exp2",
        1,
        exp2_f64,
        f64::exp2,
        gen(45, |g| g.log_uniform(-1074.0, 0.0, true)),
    );
    for k in -1074..1024 {
        let p = (k as f64).exp2();
        assert_eq!(log2_f64(p), k as f64, "log2(2^{k})");
        assert_eq!(exp2_f64(k as f64), p, "exp2({k})");
    }
    for k in -307..309 {
        let p: f64 = format!("1e{k}").parse().unwrap();
        assert_eq!(log10_f64(p), p.log10(), "log10(1e{k})");
    }
    for x in SPECIAL {
        assert!(
            c_like(log2_f64(x), x.log2(), 1),
            "log2({x}) = {}",
            log2_f64(x)
        );
        assert!(
            c_like(log10_f64(x), x.log10(), 1),
            "log10({x}) = {}",
            log10_f64(x)
        );
        assert!(
            c_like(exp2_f64(x), x.exp2(), 1),
            "exp2({x}) = {}",
            exp2_f64(x)
        );
    }
    for x in [
        1024.0, 1025.0, -1074.0, -1075.0, -1076.0, 1e300, -1e300, 1023.999,
    ] {
        assert!(
            c_like(exp2_f64(x), x.exp2(), 1),
            "exp2({x}) = {}",
            exp2_f64(x)
        );
    }
}

/// A slice kernel of the AVX-512 modules (`math_log1p512.rs`,
/// `math64_asin512.rs`): false, nothing written, where the CPU lacks
/// AVX-512.
pub(crate) type Slice = fn(&[f64], &mut [f64]) -> bool;

/// `f` on one point (the other lanes of its register masked off).
pub(crate) fn one_point(f: Slice, x: f64) -> f64 {
    let mut out = [0.0];
    assert!(f(&[x], &mut out), "no AVX-512 kernel");
    out[0]
}

/// Whether `f` runs on this CPU; where not, says why its tests skip.
pub(crate) fn runs_avx512(f: Slice) -> bool {
    let ok = f(&[0.5], &mut [0.0]);
    if !ok {
        eprintln!("skipped: this CPU has no AVX-512 (the portable forms run here)");
    }
    ok
}

/// Whole registers and each tail length (0 to 17 points, and 1,000) give
/// each point of `point`'s sets the value it has alone, bit for bit: no
/// lane reads another, none is skipped.
pub(crate) fn lanes_as_one_point(
    name: &str,
    f: Slice,
    seed: u64,
    point: fn(usize, &mut Rng) -> f64,
) {
    let mut g = Rng(seed);
    for n in (0..=17).chain([1000]) {
        let xs: Vec<f64> = (0..n).map(|i| point(i, &mut g)).collect();
        let mut out = vec![f64::NAN; n];
        assert!(f(&xs, &mut out));
        for (&x, &y) in xs.iter().zip(&out) {
            let want = one_point(f, x);
            assert!(
                same(y, want),
                "{name}({x:e}) = {y:e} in a run of {n}, {want:e} alone"
            );
        }
    }
}
