//! The AVX-512 float32 tanh against float64 tanh rounded: within 1.5 ulp
//! on every 61st float32 below 10 (every positive one checked within 1.3
//! by the ignored `every_float_below_10`), C's special values, every tail
//! length of a register. Skipped (with a note) where the CPU has no
//! AVX-512: the portable form has its own test.

use super::*;
use crate::cpu::math::tests::ulp_diff;

fn run(x: &[f32]) -> Option<Vec<f32>> {
    let mut out = vec![0.0; x.len()];
    tanh_slice_f32(x, &mut out).then_some(out)
}

fn avx512() -> bool {
    let ok = run(&[1.0]).is_some();
    if !ok {
        eprintln!("skipped: this CPU has no AVX-512 (the portable tanh runs here)");
    }
    ok
}

/// The worst distance over the bit patterns from 0 to 10, every `step`th.
fn worst_below_10(step: usize) -> (f64, f32) {
    let xs: Vec<f32> = (0..10f32.to_bits())
        .step_by(step)
        .map(f32::from_bits)
        .collect();
    let got = run(&xs).unwrap();
    let mut worst = (0.0, 0.0);
    for (&x, &y) in xs.iter().zip(&got) {
        for (x, y) in [(x, y), (-x, -y)] {
            let u = ulp_diff(y, (x as f64).tanh());
            if u > worst.0 {
                worst = (u, x);
            }
        }
    }
    worst
}

#[test]
fn within_1_5_ulp_below_10() {
    if !avx512() {
        return;
    }
    let (u, x) = worst_below_10(61);
    assert!(u <= 1.5, "tanh: {u} ulp at {x:e}");
    // Negative inputs and every interval's edges through the kernel too.
    let mut xs: Vec<f32> = Vec::new();
    for &lo in &TANH_LO {
        for d in -3i32..=3 {
            let b = (lo.to_bits() as i32 + d) as u32;
            xs.extend([f32::from_bits(b), -f32::from_bits(b)]);
        }
    }
    for (&x, &y) in xs.iter().zip(&run(&xs).unwrap()) {
        let u = ulp_diff(y, (x as f64).tanh());
        assert!(u <= 1.5, "tanh({x:e}) = {y:e}: {u} ulp");
    }
}

#[test]
#[ignore = "about a minute: every positive float32 below 10"]
fn every_float_below_10() {
    if !avx512() {
        return;
    }
    let (u, x) = worst_below_10(1);
    assert!(u <= 1.3, "tanh: {u} ulp at {x:e}");
}

#[test]
fn special_values_as_c() {
    if !avx512() {
        return;
    }
    let xs = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        -f32::from_bits(1),
        TINY,
        -TINY,
        CLAMP,
        9.0,
        20.0,
        -1e30,
        f32::MAX,
    ];
    for (&x, &y) in xs.iter().zip(&run(&xs).unwrap()) {
        let want = (x as f64).tanh() as f32;
        assert!(
            y.to_bits() == want.to_bits() || y.is_nan() && want.is_nan(),
            "tanh({x:e}) = {y:e}, C gives {want:e}"
        );
    }
}

#[test]
fn every_tail_length_writes_its_points_only() {
    if !avx512() {
        return;
    }
    let xs: Vec<f32> = (0..40).map(|i| (i as f32 - 17.5) * 0.37).collect();
    for n in 0..=40 {
        let mut out = [-7.0f32; 40];
        assert!(tanh_slice_f32(&xs[..n], &mut out[..n]));
        for i in 0..40 {
            if i < n {
                let u = ulp_diff(out[i], (xs[i] as f64).tanh());
                assert!(u <= 1.5, "length {n}, point {i}");
            } else {
                assert_eq!(out[i], -7.0, "length {n} wrote point {i}");
            }
        }
    }
}
