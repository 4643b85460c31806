//! The AVX-512 float32 power against the f64 reference and C's `powf`
//! (skipped, with a note, on CPUs without AVX-512).

use super::pow_slices_avx512;
use crate::cpu::interp::Arg;
use crate::cpu::math::tests::{points, ulp_diff};

/// `x^y` elementwise through the kernel; None without AVX-512.
fn pow_all(x: &[f32], y: &[f32]) -> Option<Vec<f32>> {
    let mut out = vec![0f32; x.len()];
    pow_slices_avx512(Arg::Slice(x), Arg::Slice(y), &mut out).then_some(out)
}

fn no_avx512() -> bool {
    let mut o = [0f32];
    let skip = !pow_slices_avx512(Arg::Splat(2.0), Arg::Splat(2.0), &mut o);
    if skip {
        eprintln!("no AVX-512 here: the AVX-512 power kernel is not tested");
    }
    skip
}

/// xorshift64 in [0, 1).
fn uniform(s: &mut u64) -> f64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    (*s >> 11) as f64 / (1u64 << 53) as f64
}

fn worst(x: &[f32], y: &[f32]) -> (f64, f32, f32) {
    let got = pow_all(x, y).expect("AVX-512 checked by the caller");
    let mut w = (0.0, 0.0, 0.0);
    for ((&g, &a), &b) in got.iter().zip(x).zip(y) {
        let u = ulp_diff(g, (a as f64).powf(b as f64));
        if u > w.0 {
            w = (u, a, b);
        }
    }
    w
}

#[test]
fn avx512_pow_within_1_ulp_on_a_grid_and_at_random() {
    if no_avx512() {
        return;
    }
    // The grid of math.rs's test for the portable pow_f32.
    let bases: Vec<f32> = points(1e-3, 40.0, 2_000).collect();
    let exps: Vec<f32> = points(-12.0, 12.0, 400).collect();
    let (x, y): (Vec<f32>, Vec<f32>) = bases
        .iter()
        .flat_map(|&a| exps.iter().map(move |&b| (a, b)))
        .unzip();
    let w = worst(&x, &y);
    assert!(w.0 <= 1.0, "pow: {} ulp at {}^{}", w.0, w.1, w.2);
    // Any positive float32 (subnormals included), with exponents that take
    // y log2 x up to +-150 (the whole range of finite nonzero results),
    // past it, and small; bases within 2^-5 of 1 with large exponents.
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let n = 2_000_000;
    let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for k in 0..n {
        let a = if k % 8 == 7 {
            1.0 + ((uniform(&mut s) - 0.5) / 16.0) as f32
        } else {
            f32::from_bits((uniform(&mut s) * 0x7f80_0000u32 as f64) as u32)
        };
        let l = (a as f64).log2().abs().max(1e-30);
        let span = [150.0 / l, 24.0, 300.0 / l, 4.0][k % 4];
        x.push(a);
        y.push(((uniform(&mut s) * 2.0 - 1.0) * span) as f32);
    }
    let w = worst(&x, &y);
    assert!(w.0 <= 1.0, "pow: {} ulp at {}^{}", w.0, w.1, w.2);
    // Negative bases with integer exponents, results near overflow and in
    // the subnormals, bases a few ulp from 1.
    let cases = [
        (2.0f32, 127.99),
        (2.0, -149.0),
        (3.0, -93.5),
        (-2.5, 7.0),
        (-2.5, -6.0),
        (-3.0, 80.0),
        (-3.0, -81.0),
        (1e-40, 0.5),
        (1e-40, -0.25),
        (-1e-40, 3.0),
        (0.999_999, 1e7),
        (1.000_001, -3e6),
        (1.0 + f32::EPSILON, 1e9),
        (1.0 - f32::EPSILON / 2.0, -2e9),
        (1.999_999_9, 127.5),
        (0.999_999_9, 1e8),
    ];
    let (x, y): (Vec<f32>, Vec<f32>) = cases.iter().copied().unzip();
    let got = pow_all(&x, &y).unwrap();
    for ((&g, &a), &b) in got.iter().zip(&x).zip(&y) {
        let u = ulp_diff(g, (a as f64).powf(b as f64));
        assert!(u <= 1.0, "pow({a}, {b}) = {g}: {u} ulp");
    }
}

#[test]
fn avx512_pow_special_cases_are_powf() {
    if no_avx512() {
        return;
    }
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let vals = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        -3.0,
        1.5,
        -2.5,
        inf,
        -inf,
        nan,
        -nan,
        1e-40,
        -1e-40,
        1e-45,
        3e38,
        -3e38,
        7.0,
        -7.0,
        1e20,
        16_777_216.0,
        -16_777_218.0,
        -8_388_609.0,
        149.5,
        -149.0,
        -0.25,
    ];
    let (x, y): (Vec<f32>, Vec<f32>) = vals
        .iter()
        .flat_map(|&a| vals.iter().map(move |&b| (a, b)))
        .unzip();
    let got = pow_all(&x, &y).unwrap();
    for ((&g, &a), &b) in got.iter().zip(&x).zip(&y) {
        let want = a.powf(b);
        let ok = g.to_bits() == want.to_bits()
            || g.is_nan() && want.is_nan()
            || ulp_diff(g, (a as f64).powf(b as f64)) <= 1.0
                && g.is_sign_negative() == want.is_sign_negative();
        assert!(ok, "pow({a:e}, {b:e}) = {g:e}, powf says {want:e}");
    }
}

#[test]
fn avx512_pow_splats_and_tails() {
    if no_avx512() {
        return;
    }
    let x: Vec<f32> = points(0.01, 10.0, 37).collect();
    let y: Vec<f32> = points(-3.0, 3.0, 37).collect();
    for n in [0, 1, 15, 16, 17, 37] {
        let mut out = vec![f32::NAN; n];
        let check = |out: &[f32], f: &dyn Fn(usize) -> (f32, f32)| {
            for (i, &g) in out.iter().enumerate() {
                let (a, b) = f(i);
                let u = ulp_diff(g, (a as f64).powf(b as f64));
                assert!(u <= 1.0, "n {n} [{i}]: pow({a}, {b}) = {g}");
            }
        };
        assert!(pow_slices_avx512(Arg::Slice(&x), Arg::Slice(&y), &mut out));
        check(&out, &|i| (x[i], y[i]));
        assert!(pow_slices_avx512(Arg::Slice(&x), Arg::Splat(2.5), &mut out));
        check(&out, &|i| (x[i], 2.5));
        assert!(pow_slices_avx512(Arg::Splat(1.7), Arg::Slice(&y), &mut out));
        check(&out, &|i| (1.7, y[i]));
        assert!(pow_slices_avx512(
            Arg::Splat(-2.0),
            Arg::Splat(3.0),
            &mut out
        ));
        assert!(out.iter().all(|&v| v == -8.0));
    }
}
