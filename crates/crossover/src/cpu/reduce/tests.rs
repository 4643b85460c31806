//! The one-pass moments against float64 two-pass references: accepted
//! where their cancellation is small, declined (and the two passes taken)
//! where it is not, on lengths around the 16-value blocks and the
//! 2,048-point segments; whole reductions over many segments.

use super::lanes::{m2_lanes, moments_lanes, sum_lanes};
use super::RNum;
use crate::{Array, DType};

/// Uniform values in [-1, 1) (never all zero), seeded.
fn noise(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// The mean and squared deviations of `v` in float64, two passes (the
/// mean corrected by its residual: a plain sum of 2,047 values near -1e6
/// was 2.5e-9 off).
fn reference(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let rough = v.iter().sum::<f64>() / n;
    let mean = rough + v.iter().map(|x| x - rough).sum::<f64>() / n;
    (mean, v.iter().map(|x| (x - mean) * (x - mean)).sum())
}

const LENGTHS: [usize; 10] = [1, 2, 15, 16, 17, 31, 100, 2047, 2048, 2049];

/// Checks `moments_lanes` on `v` (as `T`): an accepted mean and `m2` are
/// within `tol` of the reference (the mean relative to the data's
/// spread). Returns whether it was accepted.
fn check<T: RNum>(v: &[T], tol: f64, what: &str) -> bool {
    let (mean, m2) = moments_lanes(v);
    let x: Vec<f64> = v.iter().map(|x| x.to_f64()).collect();
    let (want_mean, want) = reference(&x);
    if m2.is_nan() {
        assert!(mean.is_nan(), "{what}: a declined mean");
        return false;
    }
    let err = (m2 - want).abs();
    assert!(
        err <= tol * want.max(f64::MIN_POSITIVE),
        "{what}: m2 {m2} against {want} (relative {:e})",
        err / want
    );
    let spread = (want / x.len() as f64).sqrt() + want_mean.abs() * 1e-6;
    assert!(
        (mean - want_mean).abs() <= 1e-9 * spread,
        "{what}: mean {mean} against {want_mean}"
    );
    true
}

#[test]
fn one_pass_moments_match_two_pass_references_where_they_accept() {
    for (i, &n) in LENGTHS.iter().enumerate() {
        for (offset, scale) in [(0.0, 1.0), (1e3, 1.0), (-1e6, 3.0), (5.0, 1e-3)] {
            let x: Vec<f64> = noise(n, i as u64 + 7)
                .iter()
                .map(|e| offset + scale * e)
                .collect();
            let what = format!("n={n} offset={offset} scale={scale}");
            let f32s: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            // Data around its first block's mean: accepted (n = 1 and
            // constant-looking runs give an exact 0).
            assert!(
                check(&f32s, 1e-12, &format!("f32 {what}")),
                "f32 {what}: declined"
            );
            if n >= 16 {
                assert!(
                    check(&x, 1e-12, &format!("f64 {what}")),
                    "f64 {what}: declined"
                );
            } else {
                check(&x, 1e-12, &format!("f64 {what}"));
            }
        }
    }
}

#[test]
fn one_pass_moments_decline_where_they_would_cancel() {
    // A trend across a segment: the first block's mean is far from the
    // segment's (ratio about 3). float64 declines; float32, whose result
    // keeps 6e-8, accepts within 1e-9.
    let trend: Vec<f64> = (0..2048)
        .zip(noise(2048, 3))
        .map(|(i, e)| 1e6 + i as f64 + e)
        .collect();
    assert!(!check(&trend, 0.0, "f64 trend"));
    let t32: Vec<f32> = trend.iter().map(|&v| v as f32).collect();
    assert!(check(&t32, 1e-9, "f32 trend"));
    // First values 100 deviations off the rest: the ratio nears its bound
    // (2048 / 16). float64 declines, float32 accepts within 1e-9.
    let mut off: Vec<f64> = noise(2048, 5).iter().map(|e| 1e5 + e).collect();
    for v in &mut off[..16] {
        *v += 100.0;
    }
    assert!(!check(&off, 0.0, "f64 outliers first"));
    let o32: Vec<f32> = off.iter().map(|&v| v as f32).collect();
    assert!(check(&o32, 1e-9, "f32 outliers first"));
    // NaN and infinities decline: the two passes give NaN.
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut v = noise(100, 9);
        v[40] = bad;
        assert!(moments_lanes(&v).1.is_nan(), "{bad}");
        let mean = sum_lanes(&v) / 100.0;
        assert!(m2_lanes(&v, mean).is_nan(), "{bad}");
    }
    // Constant data: exactly its value and 0.
    assert_eq!(moments_lanes(&[2.5f32; 2048]), (2.5, 0.0));
}

#[test]
fn std_of_data_the_one_pass_form_declines_matches_float64() {
    // Whole reductions over several segments and tasks (200,003 points),
    // where every segment declines (outliers first in each 2,048) or none
    // does, against float64 references.
    let n = 200_003;
    let e = noise(n, 11);
    let cases: [(&str, Vec<f64>); 3] = [
        ("stationary", e.iter().map(|v| 3.0 + v).collect()),
        (
            "outliers first in every segment",
            e.iter()
                .enumerate()
                .map(|(i, v)| 1e5 + v + if i % 2048 < 16 { 100.0 } else { 0.0 })
                .collect(),
        ),
        (
            "trend",
            e.iter()
                .enumerate()
                .map(|(i, v)| i as f64 * 1e-3 + v)
                .collect(),
        ),
    ];
    for (what, x) in cases {
        let (_, m2) = reference(&x);
        let want = (m2 / n as f64).sqrt();
        let a = Array::from_vec(x.clone(), &[n]).unwrap();
        let got = a.std(None, false, 0).unwrap().item().unwrap();
        assert!(
            (got - want).abs() <= 1e-12 * want,
            "f64 {what}: {got} against {want}"
        );
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let (_, m2) = reference(&x32.iter().map(|&v| v as f64).collect::<Vec<_>>());
        let want = (m2 / n as f64).sqrt();
        let a = Array::from_vec(x32, &[n]).unwrap();
        assert_eq!(a.dtype(), DType::F32);
        let got = a.std(None, false, 0).unwrap().item().unwrap();
        assert!(
            (got - want).abs() <= 2e-7 * want,
            "f32 {what}: {got} against {want}"
        );
    }
}
