//! The AVX-512 float64 arcsin and arccos on the point sets and bound of
//! the portable forms' tests (`math64_inverse_tests.rs`: within 1 ulp of
//! glibc, C's special values bit for bit), one point at a time; then whole
//! registers and every tail length against those one-point results, bit
//! for bit. Skipped (with a note) where the CPU has no AVX-512: the
//! portable forms have their own tests.

use super::*;
use crate::cpu::math64::tests::{lanes_as_one_point, one_point, runs_avx512, Rng, Slice};
use crate::cpu::math64_inverse::tests::asin_acos_within_1_ulp_of;

#[test]
fn asin_acos_within_1_ulp_of_glibc() {
    if runs_avx512(asin_slice_f64) {
        asin_acos_within_1_ulp_of(
            |x| one_point(asin_slice_f64, x),
            |x| one_point(acos_slice_f64, x),
        );
    }
}

#[test]
fn every_lane_and_tail_as_one_point() {
    for (name, f) in [("asin", asin_slice_f64 as Slice), ("acos", acos_slice_f64)] {
        if runs_avx512(f) {
            lanes_as_one_point(name, f, 43, |i, g: &mut Rng| match i % 4 {
                0 => g.uniform(-0.5, 0.5),
                1 => g.uniform(-1.0, 1.0),
                2 => g.log_uniform(-40.0, 1.0, true),
                _ => f64::from_bits(g.next()),
            });
        }
    }
}
