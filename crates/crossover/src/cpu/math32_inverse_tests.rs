//! Accuracy of the native float32 inverse trigonometric functions of
//! `math32_inverse` against the correctly rounded result (libm's f64
//! function, rounded): arcsin within 3 ulp, the others within 2, over
//! hundreds of thousands of points per range, and C99's special cases
//! exactly.

use super::*;
use crate::cpu::math::tests::{points, ulp_diff};
use crate::cpu::math32_hyp::tests::{special_or_within, within_ulp, SPECIALS};

#[test]
fn inverse_trig_within_2_or_3_ulp() {
    let ranges = [
        (-1.0, 1.0),
        (-1e-3, 1e-3),
        (-1e-30, 1e-30),
        (0.999, 1.0),
        (-1.0, -0.999),
    ];
    within_ulp("asin", 3.0, asin_f32, f64::asin, &ranges);
    within_ulp("acos", 2.0, acos_f32, f64::acos, &ranges);
    let ranges = [
        (-3e38, 3e38),
        (-10.0, 10.0),
        (0.3, 2.5),
        (-1e-3, 1e-3),
        (-1e-30, 1e-30),
    ];
    within_ulp("atan", 2.0, atan_f32, f64::atan, &ranges);
    for x in SPECIALS
        .into_iter()
        .chain([1.5, -1.5, 0.414_213_57, 2.414_213_6])
    {
        let d = x as f64;
        assert!(special_or_within(asin_f32(x), d.asin(), 3.0), "asin({x})");
        assert!(special_or_within(acos_f32(x), d.acos(), 2.0), "acos({x})");
        assert!(special_or_within(atan_f32(x), d.atan(), 2.0), "atan({x})");
    }
}

#[test]
fn atan2_within_2_ulp_and_c99_special_cases() {
    let ys: Vec<f32> = points(-1e3, 1e3, 700).collect();
    let xs: Vec<f32> = points(-2e3, 2e3, 700).collect();
    let mut worst = (0.0, 0.0, 0.0);
    for &y in &ys {
        for &x in &xs {
            let u = ulp_diff(atan2_f32(y, x), (y as f64).atan2(x as f64));
            if u > worst.0 {
                worst = (u, y, x);
            }
        }
    }
    // Magnitudes from 1e-22 to 1e22 in both, every quadrant.
    let mags: Vec<f32> = (0..600).map(|i| (i as f32 * 0.085 - 50.0).exp()).collect();
    for (i, &y) in mags.iter().enumerate() {
        for (j, &x) in mags.iter().enumerate() {
            let (y, x) = (
                if i % 2 == 0 { y } else { -y },
                if j % 3 == 0 { -x } else { x },
            );
            let u = ulp_diff(atan2_f32(y, x), (y as f64).atan2(x as f64));
            if u > worst.0 {
                worst = (u, y, x);
            }
        }
    }
    assert!(
        worst.0 <= 2.0,
        "atan2: {} ulp at ({}, {})",
        worst.0,
        worst.1,
        worst.2
    );
    for y in SPECIALS {
        for x in SPECIALS {
            let want = (y as f64).atan2(x as f64);
            assert!(
                special_or_within(atan2_f32(y, x), want, 2.0),
                "atan2({y}, {x}) = {}, want {want}",
                atan2_f32(y, x)
            );
        }
    }
}
