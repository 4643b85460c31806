//! Random numbers: independent of chunking and threads, right distribution.

use crate::common::*;
use crossover::rng::{fill_normal_f32, fill_uniform_f32_portable, fill_uniform_f64, RandomKey};
use crossover::{Array, DType, Generator, SliceArg};

#[test]
fn engine_values_follow_the_documented_rule() {
    on_every_engine(|_e| {
        let n = 300_001;
        let mut rng = Generator::new(77);
        let x = rng.uniform(&[n], DType::F32).unwrap();
        let mut want = vec![0f32; n];
        fill_uniform_f32_portable(
            RandomKey {
                seed: 77,
                stream: 0,
            },
            0,
            &mut want,
        );
        assert_eq!(x.to_vec::<f32>().unwrap(), want);
        // A slice of a pending random array reads the same indices.
        let y = Generator::new(77).uniform(&[n], DType::F32).unwrap();
        let s = y.slice(&[SliceArg::range(12_345, 12_400)]).unwrap();
        assert_eq!(s.to_vec::<f32>().unwrap(), want[12_345..12_400].to_vec());
        // Reversed order (out of index order: materialised, same values).
        let r = Generator::new(77)
            .uniform(&[n], DType::F32)
            .unwrap()
            .slice(&[SliceArg::Range {
                start: None,
                stop: None,
                step: -1,
            }])
            .unwrap()
            .add(0.0)
            .unwrap();
        let mut rev = want.clone();
        rev.reverse();
        assert_eq!(r.to_vec::<f32>().unwrap(), rev);
    });
}

#[test]
fn draws_are_independent_and_reproducible() {
    on_every_engine(|_e| {
        let mut g = Generator::new(5);
        let a = g
            .uniform(&[1000], DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        let b = g
            .uniform(&[1000], DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        assert_ne!(a, b);
        let a2 = Generator::new(5)
            .uniform(&[1000], DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        assert_eq!(a, a2);
        assert!(a.iter().all(|&u| (0.0..1.0).contains(&u)));
    });
}

#[test]
fn moments_of_uniform_and_normal() {
    on_every_engine(|_e| {
        let n = 2_000_000;
        for dtype in [DType::F32, DType::F64] {
            let mut g = Generator::new(11);
            let u = g.uniform(&[n], dtype).unwrap();
            let m = u.mean(None, false).unwrap().item().unwrap();
            let v = u.var(None, false, 0).unwrap().item().unwrap();
            // 6 standard errors.
            assert!(
                (m - 0.5).abs() < 6.0 * (1.0 / 12.0 / n as f64).sqrt(),
                "{dtype} uniform mean {m}"
            );
            assert!((v - 1.0 / 12.0).abs() < 1e-3, "{dtype} uniform var {v}");
            let z = g.standard_normal(&[n], dtype).unwrap();
            let m = z.mean(None, false).unwrap().item().unwrap();
            let s = z.std(None, false, 0).unwrap().item().unwrap();
            assert!(m.abs() < 6.0 / (n as f64).sqrt(), "{dtype} normal mean {m}");
            assert!((s - 1.0).abs() < 5e-3, "{dtype} normal std {s}");
            // Tails: P(|z| > 3) = 0.0027.
            let tail = z
                .abs()
                .unwrap()
                .gt(3.0)
                .unwrap()
                .mean(None, false)
                .unwrap()
                .item()
                .unwrap();
            assert!((tail - 0.0027).abs() < 0.0006, "{dtype} tail {tail}");
            let w = g
                .normal(10.0, 2.0, &[n], dtype)
                .unwrap()
                .mean(None, false)
                .unwrap()
                .item()
                .unwrap();
            assert!((w - 10.0).abs() < 0.01);
        }
    });
}

#[test]
fn normals_match_the_scalar_rule() {
    on_every_engine(|e| {
        let key = RandomKey { seed: 3, stream: 0 };
        let mut want = vec![0f32; 1001];
        fill_normal_f32(key, 0, &mut want);
        let got = Generator::new(3)
            .standard_normal(&[1001], DType::F32)
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        if e.is_gpu_api() {
            // Box-Muller through the device's logf/sinf/cosf instead of the
            // CPU's polynomials: equal within a few units in the last place.
            let g: Vec<f64> = got.iter().map(|&v| v as f64).collect();
            let w: Vec<f64> = want.iter().map(|&v| v as f64).collect();
            assert_close(&g, &w, rtol(DType::F32, 8.0), 1e-6, "normal f32");
        } else {
            assert_eq!(got, want);
        }
        assert!(Generator::new(3).uniform(&[3], DType::I32).is_err());
        assert!(Generator::new(3)
            .normal(0.0, -1.0, &[3], DType::F32)
            .is_err());
        let _ = Array::zeros(&[1], DType::F32);
    });
}

/// `inside[i]`: whether draw `i` of streams 0 and 1 of `seed` lies in the
/// unit circle, in float64 arithmetic.
fn inside_circle(seed: u64, n: usize, dtype: DType) -> Vec<bool> {
    let key = |stream| RandomKey { seed, stream };
    let (mut x, mut y) = (vec![0f64; n], vec![0f64; n]);
    if dtype == DType::F32 {
        let (mut x32, mut y32) = (vec![0f32; n], vec![0f32; n]);
        fill_uniform_f32_portable(key(0), 0, &mut x32);
        fill_uniform_f32_portable(key(1), 0, &mut y32);
        x = x32.iter().map(|&v| v as f64).collect();
        y = y32.iter().map(|&v| v as f64).collect();
    } else {
        fill_uniform_f64(key(0), 0, &mut x);
        fill_uniform_f64(key(1), 0, &mut y);
    }
    x.iter()
        .zip(&y)
        .map(|(a, b)| a * a + b * b <= 1.0)
        .collect()
}

#[test]
fn counts_of_random_draws_match_a_float64_reference() {
    // Monte Carlo pi's mean(x*x + y*y <= 1) (compiled on AVX2/AVX-512 CPUs
    // with the draws generated per call), over a length that crosses
    // chunks, tasks and a partial 16-point block, and as row means whose
    // rows start inside chunks.
    on_every_engine(|_e| {
        for dtype in [DType::F32, DType::F64] {
            for shape in [vec![1_000_003], vec![13, 40_009]] {
                let n: usize = shape.iter().product();
                let mut g = Generator::new(31);
                let x = g.uniform(&shape, dtype).unwrap();
                let y = g.uniform(&shape, dtype).unwrap();
                let r2 = x.mul(&x).unwrap().add(y.mul(&y).unwrap()).unwrap();
                let axis = shape.len() - 1;
                let got = r2
                    .le(1.0)
                    .unwrap()
                    .mean(Some(&[axis as isize]), false)
                    .unwrap()
                    .to_vec::<f64>()
                    .unwrap();
                let inside = inside_circle(31, n, dtype);
                let row = shape[axis];
                assert_eq!(got.len(), n / row);
                for (i, (m, want)) in got.iter().zip(inside.chunks(row)).enumerate() {
                    let want = want.iter().filter(|&&b| b).count() as f64;
                    // float32's x*x + y*y can round across 1 where
                    // float64's does not: a few points a row at most.
                    assert!(
                        (m * row as f64 - want).abs() <= 3.0,
                        "{dtype} {shape:?}, row {i}: {} inside, want {want}",
                        m * row as f64
                    );
                    let pi = 4.0 * m;
                    assert!(
                        (pi - std::f64::consts::PI).abs() < 0.1,
                        "{dtype} row {i}: pi {pi}"
                    );
                }
            }
        }
    });
}
