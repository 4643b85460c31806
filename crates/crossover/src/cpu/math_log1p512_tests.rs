//! The AVX-512 log1p, arcsinh, arccosh and arctanh. Float64 on the point
//! sets and bounds of the portable forms' tests (`math64_hyp_tests.rs`:
//! log1p within 1 ulp of glibc, the inverse hyperbolics within 2); float32
//! on the portable float32 forms' sweeps (`math32_hyp_tests.rs`): log1p
//! within 1 ulp of the correctly rounded value (the portable form is
//! allowed 2), the inverse hyperbolics within 2 as the portable forms; C's special values bit for bit, one point at a time; then
//! whole registers and every tail length against those one-point results,
//! bit for bit. Skipped (with a note) where the CPU has no AVX-512: the
//! portable forms have their own tests.

use super::*;
use crate::cpu::math32_hyp::tests::{
    inverse_hyperbolics_within, lanes_as_one_point32, log1p_within, one_point32, Slice32,
};
use crate::cpu::math64::tests::{lanes_as_one_point, one_point, runs_avx512, Rng, Slice};
use crate::cpu::math64_hyp::tests::{inverse_hyperbolic_within_2_ulp_of, log1p_within_1_ulp};

#[test]
fn log1p_within_1_ulp_of_glibc() {
    if runs_avx512(log1p_slice_f64) {
        log1p_within_1_ulp(|x| one_point(log1p_slice_f64, x));
    }
}

#[test]
fn inverse_hyperbolic_within_2_ulp_of_glibc() {
    if runs_avx512(asinh_slice_f64) {
        inverse_hyperbolic_within_2_ulp_of(
            |x| one_point(asinh_slice_f64, x),
            |x| one_point(acosh_slice_f64, x),
            |x| one_point(atanh_slice_f64, x),
        );
    }
}

#[test]
fn every_lane_and_tail_as_one_point() {
    let kernels: [(&str, Slice); 4] = [
        ("log1p", log1p_slice_f64),
        ("asinh", asinh_slice_f64),
        ("acosh", acosh_slice_f64),
        ("atanh", atanh_slice_f64),
    ];
    for (name, f) in kernels {
        if runs_avx512(f) {
            lanes_as_one_point(name, f, 41, |i, g: &mut Rng| match i % 4 {
                0 => g.uniform(-1.0, 1.0),
                1 => g.uniform(1.0, 3.0),
                2 => g.log_uniform(-30.0, 30.0, true),
                _ => f64::from_bits(g.next()),
            });
        }
    }
}

#[test]
fn float32_log1p_within_1_ulp() {
    if runs_avx512(log1p_slice_f64) {
        log1p_within(1.0, |x| one_point32(log1p_slice_f32, x));
    }
}

#[test]
fn float32_inverse_hyperbolics_within_2_ulp() {
    if runs_avx512(log1p_slice_f64) {
        inverse_hyperbolics_within(
            2.0,
            |x| one_point32(asinh_slice_f32, x),
            |x| one_point32(acosh_slice_f32, x),
            |x| one_point32(atanh_slice_f32, x),
        );
    }
}

#[test]
fn float32_every_lane_and_tail_as_one_point() {
    if !runs_avx512(log1p_slice_f64) {
        return;
    }
    let kernels: [(&str, Slice32); 4] = [
        ("log1p", log1p_slice_f32),
        ("asinh", asinh_slice_f32),
        ("acosh", acosh_slice_f32),
        ("atanh", atanh_slice_f32),
    ];
    for (name, f) in kernels {
        lanes_as_one_point32(name, f, 43, |i, g| match i % 4 {
            0 => g.uniform(-1.0, 1.0) as f32,
            1 => g.uniform(1.0, 3.0) as f32,
            2 => g.log_uniform(-30.0, 30.0, true) as f32,
            _ => f32::from_bits(g.next() as u32),
        });
    }
}
