//! The AVX-512 float32 exp2, sinh and cosh on the portable float32 forms'
//! sweeps (`math32_hyp_tests.rs`): exp2 within 1 ulp of the correctly
//! rounded value and exact at integers, and bit for bit the portable
//! [`crate::cpu::math::exp2_f32`] over sweeps; sinh and cosh within 2 ulp
//! on the portable forms' sweeps;
//! C's special values bit for bit, one point at a time; then whole
//! registers and every tail length against those one-point results, bit
//! for bit. Skipped (with a note) where the CPU has no AVX-512: the
//! portable forms have their own tests.

use super::*;
use crate::cpu::math::{self, tests::points};
use crate::cpu::math32_hyp::tests::{
    exp2_within_1_ulp, lanes_as_one_point32, one_point32, sinh_cosh_within, Slice32,
};

/// Whether the kernels run here; where not, says why the tests skip.
fn avx512() -> bool {
    let ok = exp2_slice_f32(&[0.5], &mut [0.0]);
    if !ok {
        eprintln!("skipped: this CPU has no AVX-512 (the portable forms run here)");
    }
    ok
}

#[test]
fn exp2_within_1_ulp_and_as_the_portable_form() {
    if !avx512() {
        return;
    }
    exp2_within_1_ulp(|x| one_point32(exp2_slice_f32, x));
    // One call over a sweep of each range, against the portable loop.
    for (lo, hi) in [(-152.0, 130.0), (-1.0, 1.0), (-149.9, -126.0)] {
        let xs: Vec<f32> = points(lo, hi, 100_003).collect();
        let mut out = vec![0.0; xs.len()];
        assert!(exp2_slice_f32(&xs, &mut out));
        for (&x, &y) in xs.iter().zip(&out) {
            let want = math::exp2_f32(x);
            assert_eq!(
                y.to_bits(),
                want.to_bits(),
                "exp2({x:e}): {y:e}, portable {want:e}"
            );
        }
    }
}

#[test]
fn sinh_and_cosh_within_2_ulp() {
    if !avx512() {
        return;
    }
    let sinh = |x| one_point32(sinh_slice_f32, x);
    let cosh = |x| one_point32(cosh_slice_f32, x);
    // 1.09 ulp measured (the portable forms 1.25).
    sinh_cosh_within(2.0, sinh, cosh);
}

#[test]
fn every_lane_and_tail_as_one_point() {
    if !avx512() {
        return;
    }
    let kernels: [(&str, Slice32); 3] = [
        ("exp2", exp2_slice_f32),
        ("sinh", sinh_slice_f32),
        ("cosh", cosh_slice_f32),
    ];
    for (name, f) in kernels {
        lanes_as_one_point32(name, f, 47, |i, g| match i % 4 {
            0 => g.uniform(-2.0, 2.0) as f32,
            1 => g.uniform(-100.0, 100.0) as f32,
            2 => g.log_uniform(-30.0, 7.0, true) as f32,
            _ => f32::from_bits(g.next() as u32),
        });
    }
}
