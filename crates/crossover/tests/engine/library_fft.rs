//! FFTs against the DFT by definition (float64), every norm mode, inverse
//! round trips, non-power-of-two sizes, axes, views, and typed errors.

use crate::common::*;
use crossover::fft::{self, Norm};
use crossover::{Array, DType, Error, Generator, SliceArg};
use num_complex::{Complex32, Complex64};
use std::f64::consts::PI;

const NORMS: [Norm; 3] = [Norm::Backward, Norm::Ortho, Norm::Forward];

fn randn(seed: u64, shape: &[usize], dtype: DType) -> Array {
    let a = Generator::new(seed).standard_normal(shape, dtype).unwrap();
    a.eval().unwrap();
    a
}

fn complex_rand(seed: u64, shape: &[usize]) -> (Array, Vec<Complex64>) {
    let n: usize = shape.iter().product();
    let re = randn(seed, &[n], DType::F64).to_vec::<f64>().unwrap();
    let im = randn(seed + 1, &[n], DType::F64).to_vec::<f64>().unwrap();
    let z: Vec<Complex64> = re
        .iter()
        .zip(&im)
        .map(|(&r, &i)| Complex64::new(r, i))
        .collect();
    (Array::from_vec(z.clone(), shape).unwrap(), z)
}

fn dft(x: &[Complex64], inverse: bool) -> Vec<Complex64> {
    let n = x.len();
    let sign = if inverse { 1.0 } else { -1.0 };
    (0..n)
        .map(|k| {
            x.iter()
                .enumerate()
                .map(|(j, &v)| {
                    let ang = sign * 2.0 * PI * ((j * k) % n) as f64 / n as f64;
                    v * Complex64::new(ang.cos(), ang.sin())
                })
                .sum()
        })
        .collect()
}

fn scale(norm: Norm, n: usize, inverse: bool) -> f64 {
    match (norm, inverse) {
        (Norm::Backward, false) | (Norm::Forward, true) => 1.0,
        (Norm::Ortho, _) => 1.0 / (n as f64).sqrt(),
        _ => 1.0 / n as f64,
    }
}

/// A real array's values as complex128 (zero imaginary parts).
fn real_as_complex(a: &Array) -> Vec<Complex64> {
    a.to_vec_f64()
        .unwrap()
        .into_iter()
        .map(|v| Complex64::new(v, 0.0))
        .collect()
}

fn c64(a: &Array) -> Vec<Complex64> {
    match a.dtype() {
        DType::C128 => a.to_vec::<Complex64>().unwrap(),
        DType::C64 => a
            .to_vec::<Complex32>()
            .unwrap()
            .into_iter()
            .map(|z| Complex64::new(z.re as f64, z.im as f64))
            .collect(),
        d => panic!("not complex: {d}"),
    }
}

fn max_err(got: &[Complex64], want: &[Complex64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().map(|z| z.norm()).fold(1e-300, f64::max);
    got.iter()
        .zip(want)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max)
        / scale
}

#[test]
fn fft_matches_dft_for_every_norm() {
    on_every_engine_lenient(|_e| {
        for n in [1usize, 2, 7, 16, 100, 127] {
            let (x, xv) = complex_rand(n as u64, &[n]);
            for norm in NORMS {
                for inverse in [false, true] {
                    let y = if inverse {
                        fft::ifft(&x, None, -1, norm)
                    } else {
                        fft::fft(&x, None, -1, norm)
                    }
                    .unwrap();
                    assert_eq!(y.dtype(), DType::C128);
                    let f = scale(norm, n, inverse);
                    let want: Vec<Complex64> =
                        dft(&xv, inverse).into_iter().map(|z| z * f).collect();
                    let e = max_err(&c64(&y), &want);
                    assert!(e < 1e-12, "n={n} {norm:?} inverse={inverse}: {e}");
                }
            }
        }
    });
}

#[test]
fn fft_of_real_input_single_and_double() {
    on_every_engine_lenient(|_e| {
        for n in [1usize, 7, 64, 1000] {
            for dtype in [DType::F32, DType::F64] {
                let x = randn(10 + n as u64, &[n], dtype);
                let xv = real_as_complex(&x);
                let y = fft::fft(&x, None, 0, Norm::Ortho).unwrap();
                assert_eq!(
                    y.dtype(),
                    if dtype == DType::F32 {
                        DType::C64
                    } else {
                        DType::C128
                    }
                );
                let want: Vec<Complex64> = dft(&xv, false)
                    .into_iter()
                    .map(|z| z * scale(Norm::Ortho, n, false))
                    .collect();
                let tol = if dtype == DType::F32 { 1e-5 } else { 1e-11 };
                let e = max_err(&c64(&y), &want);
                assert!(e < tol, "n={n} {dtype}: {e}");
            }
        }
    });
}

#[test]
fn round_trips_at_large_odd_sizes() {
    on_every_engine_lenient(|_e| {
        for n in [1000usize, 1023, 1025, 4096 + 3] {
            let (x, xv) = complex_rand(20 + n as u64, &[3, n]);
            for norm in NORMS {
                let y = fft::fft(&x, None, -1, norm).unwrap();
                let back = fft::ifft(&y, None, -1, norm).unwrap();
                assert!(max_err(&c64(&back), &xv) < 1e-12, "n={n} {norm:?}");
            }
            // Spot-check bins of the forward transform by definition.
            let y = c64(&fft::fft(&x, None, -1, Norm::Backward).unwrap());
            for k in [0usize, 1, n / 2, n - 1] {
                for row in 0..3 {
                    let want: Complex64 = (0..n)
                        .map(|j| {
                            let ang = -2.0 * PI * ((j * k) % n) as f64 / n as f64;
                            xv[row * n + j] * Complex64::new(ang.cos(), ang.sin())
                        })
                        .sum();
                    assert!(
                        (y[row * n + k] - want).norm() < 1e-9 * n as f64,
                        "n={n} k={k}"
                    );
                }
            }
        }
    });
}

#[test]
fn fft_along_leading_axis_and_views() {
    on_every_engine_lenient(|_e| {
        // Transform along axis 0 of (7, 5, 3): columns with an inner stride.
        let (x, xv) = complex_rand(30, &[7, 5, 3]);
        let y = c64(&fft::fft(&x, None, 0, Norm::Backward).unwrap());
        for j in 0..5 {
            for k in 0..3 {
                let col: Vec<Complex64> = (0..7).map(|i| xv[i * 15 + j * 3 + k]).collect();
                let want = dft(&col, false);
                for i in 0..7 {
                    assert!((y[i * 15 + j * 3 + k] - want[i]).norm() < 1e-12);
                }
            }
        }
        // A transposed view: fft along its last axis is along the base's first.
        let (b, bv) = complex_rand(31, &[9, 4]);
        let t = b.transpose().unwrap(); // (4, 9)
        let y = c64(&fft::fft(&t, None, -1, Norm::Backward).unwrap());
        for r in 0..4 {
            let row: Vec<Complex64> = (0..9).map(|i| bv[i * 4 + r]).collect();
            assert!(max_err(&y[r * 9..r * 9 + 9], &dft(&row, false)) < 1e-12);
        }
        // The same for real input (the Hermitian fast path).
        let rb = randn(32, &[9, 4], DType::F64);
        let rv = rb.to_vec::<f64>().unwrap();
        let y = c64(&fft::fft(&rb.transpose().unwrap(), None, -1, Norm::Backward).unwrap());
        for r in 0..4 {
            let row: Vec<Complex64> = (0..9).map(|i| Complex64::new(rv[i * 4 + r], 0.0)).collect();
            assert!(max_err(&y[r * 9..r * 9 + 9], &dft(&row, false)) < 1e-12);
        }
    });
}

#[test]
fn fft_crops_and_pads_to_n() {
    on_every_engine_lenient(|_e| {
        let (x, xv) = complex_rand(40, &[10]);
        let y = c64(&fft::fft(&x, Some(6), -1, Norm::Backward).unwrap());
        assert!(max_err(&y, &dft(&xv[..6], false)) < 1e-12);
        let y = c64(&fft::fft(&x, Some(13), -1, Norm::Backward).unwrap());
        let mut padded = xv.clone();
        padded.resize(13, Complex64::new(0.0, 0.0));
        assert!(max_err(&y, &dft(&padded, false)) < 1e-12);
    });
}

fn dft2(x: &[Complex64], n1: usize, n2: usize, inverse: bool) -> Vec<Complex64> {
    let mut rows: Vec<Complex64> = Vec::with_capacity(n1 * n2);
    for r in 0..n1 {
        rows.extend(dft(&x[r * n2..(r + 1) * n2], inverse));
    }
    let mut out = rows.clone();
    for c in 0..n2 {
        let col: Vec<Complex64> = (0..n1).map(|r| rows[r * n2 + c]).collect();
        for (r, v) in dft(&col, inverse).into_iter().enumerate() {
            out[r * n2 + c] = v;
        }
    }
    out
}

#[test]
fn fft2_matches_dft_real_and_complex() {
    on_every_engine_lenient(|_e| {
        for (n1, n2) in [(1, 1), (7, 5), (8, 9), (16, 1), (1, 12)] {
            let (x, xv) = complex_rand(50 + (n1 * n2) as u64, &[n1, n2]);
            for norm in NORMS {
                let f = scale(norm, n1 * n2, false);
                let want: Vec<Complex64> = dft2(&xv, n1, n2, false)
                    .into_iter()
                    .map(|z| z * f)
                    .collect();
                let y = fft::fft2(&x, norm).unwrap();
                assert!(max_err(&c64(&y), &want) < 1e-12, "{n1}x{n2} {norm:?}");
                let back = fft::ifft2(&y, norm).unwrap();
                assert!(max_err(&c64(&back), &xv) < 1e-12);
            }
            // Real input takes the Hermitian path.
            let r = randn(60 + (n1 * n2) as u64, &[2, n1, n2], DType::F64);
            let rv = real_as_complex(&r);
            let y = c64(&fft::fft2(&r, Norm::Ortho).unwrap());
            let f = scale(Norm::Ortho, n1 * n2, false);
            for b in 0..2 {
                let p = n1 * n2;
                let want: Vec<Complex64> = dft2(&rv[b * p..(b + 1) * p], n1, n2, false)
                    .into_iter()
                    .map(|z| z * f)
                    .collect();
                assert!(
                    max_err(&y[b * p..(b + 1) * p], &want) < 1e-12,
                    "real {n1}x{n2}"
                );
            }
        }
    });
}

/// Real transforms read a contiguous input in place: an offset view (rows
/// 1.. of a matrix), float32 and float64, against float64 DFTs; an int32
/// input and a transposed view are converted first and agree too.
#[test]
fn real_transforms_of_offset_views_and_other_dtypes() {
    on_every_engine_lenient(|_e| {
        let (n1, n2) = (6, 10);
        for dtype in [DType::F64, DType::F32, DType::I32] {
            let base = randn(90, &[n1 + 1, n2], DType::F64)
                .mul(8.0)
                .unwrap()
                .cast(dtype)
                .unwrap();
            let v = base
                .slice(&[SliceArg::range(1, (n1 + 1) as isize)])
                .unwrap();
            let vals = real_as_complex(&v);
            let tol = if dtype == DType::F32 { 1e-4 } else { 1e-11 };
            let want = dft2(&vals, n1, n2, false);
            let got = c64(&fft::fft2(&v, Norm::Backward).unwrap());
            assert!(max_err(&got, &want) < tol, "fft2 {dtype}");
            let h = n2 / 2 + 1;
            let half = c64(&fft::rfft2(&v, Norm::Backward).unwrap());
            let want_half: Vec<Complex64> = (0..n1)
                .flat_map(|r| want[r * n2..r * n2 + h].to_vec())
                .collect();
            assert!(max_err(&half, &want_half) < tol, "rfft2 {dtype}");
            let rows = c64(&fft::rfft(&v, None, -1, Norm::Backward).unwrap());
            for r in 0..n1 {
                let d = dft(&vals[r * n2..(r + 1) * n2], false);
                assert!(
                    max_err(&rows[r * h..(r + 1) * h], &d[..h]) < tol,
                    "rfft {dtype}"
                );
            }
            // A transposed view: copied first, same transform of its values.
            let t = v.transpose().unwrap();
            let tv: Vec<Complex64> = (0..n2 * n1).map(|i| vals[(i % n1) * n2 + i / n1]).collect();
            let got = c64(&fft::fft2(&t, Norm::Backward).unwrap());
            assert!(
                max_err(&got, &dft2(&tv, n2, n1, false)) < tol,
                "fft2 of .T {dtype}"
            );
        }
    });
}

#[test]
fn fft2_large_real_f32_against_complex_path() {
    on_every_engine_lenient(|_e| {
        // 1023 x 130 crosses the tile width and the parallel thresholds.
        let x = randn(70, &[1023, 130], DType::F32);
        let fast = c64(&fft::fft2(&x, Norm::Backward).unwrap());
        // Same data as complex128 through the general path.
        let z = real_as_complex(&x);
        let zc = Array::from_vec(z, &[1023, 130]).unwrap();
        let slow = c64(&fft::fft2(&zc, Norm::Backward).unwrap());
        let e = max_err(&fast, &slow);
        assert!(e < 1e-5, "{e}");
        let back = c64(&fft::ifft2(&zc.clone(), Norm::Forward).unwrap());
        assert_eq!(back.len(), 1023 * 130);
    });
}

#[test]
fn rfft_and_irfft() {
    on_every_engine_lenient(|_e| {
        for n in [1usize, 2, 7, 8, 1000, 1023] {
            let x = randn(80 + n as u64, &[2, n], DType::F64);
            let xv = x.to_vec::<f64>().unwrap();
            for norm in NORMS {
                let y = fft::rfft(&x, None, -1, norm).unwrap();
                let h = n / 2 + 1;
                assert_eq!(y.shape(), &[2, h]);
                let full = c64(&fft::fft(&x, None, -1, norm).unwrap());
                let yv = c64(&y);
                for r in 0..2 {
                    assert!(
                        max_err(&yv[r * h..(r + 1) * h], &full[r * n..r * n + h]) < 1e-12,
                        "n={n}"
                    );
                }
                let back = fft::irfft(&y, Some(n), -1, norm).unwrap();
                assert_eq!(back.dtype(), DType::F64);
                let bv = back.to_vec::<f64>().unwrap();
                let e = bv
                    .iter()
                    .zip(&xv)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(e < 1e-12, "irfft n={n} {norm:?}: {e}");
            }
        }
        // Default n = 2 (m - 1); f32 stays single precision.
        let x = randn(90, &[10], DType::F32);
        let y = fft::rfft(&x, None, 0, Norm::Backward).unwrap();
        assert_eq!(y.dtype(), DType::C64);
        let back = fft::irfft(&y, None, 0, Norm::Backward).unwrap();
        assert_eq!((back.shape(), back.dtype()), (&[10][..], DType::F32));
        let (bv, xv) = (back.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
        assert!(bv.iter().zip(&xv).all(|(a, b)| (a - b).abs() < 1e-5));
        // Along a leading axis.
        let x = randn(91, &[9, 4], DType::F64);
        let y = fft::rfft(&x, None, 0, Norm::Backward).unwrap();
        assert_eq!(y.shape(), &[5, 4]);
        let full = c64(&fft::fft(&x, None, 0, Norm::Backward).unwrap());
        assert!(max_err(&c64(&y), &full[..20]) < 1e-12);
        let back = fft::irfft(&y, Some(9), 0, Norm::Backward)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        let xv = x.to_vec::<f64>().unwrap();
        assert!(back.iter().zip(&xv).all(|(a, b)| (a - b).abs() < 1e-12));
        // The imaginary part of the zero frequency is ignored, like NumPy.
        let spec = Array::from_vec(
            vec![
                Complex64::new(4.0, 3.0),
                Complex64::new(0.0, 0.0),
                Complex64::new(0.0, 0.0),
            ],
            &[3],
        )
        .unwrap();
        let v = fft::irfft(&spec, None, -1, Norm::Backward)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        assert!(v.iter().all(|x| (x - 1.0).abs() < 1e-12), "{v:?}");
    });
}

#[test]
fn rfft2_and_irfft2() {
    on_every_engine_lenient(|_e| {
        for (n1, n2) in [(7, 5), (8, 8), (33, 20)] {
            let x = randn(100 + (n1 * n2) as u64, &[n1, n2], DType::F64);
            let h = n2 / 2 + 1;
            for norm in NORMS {
                let y = fft::rfft2(&x, norm).unwrap();
                assert_eq!(y.shape(), &[n1, h]);
                let full = c64(&fft::fft2(&x, norm).unwrap());
                let yv = c64(&y);
                for r in 0..n1 {
                    assert!(max_err(&yv[r * h..(r + 1) * h], &full[r * n2..r * n2 + h]) < 1e-12);
                }
                let back = fft::irfft2(&y, Some([n1, n2]), norm)
                    .unwrap()
                    .to_vec::<f64>()
                    .unwrap();
                let xv = x.to_vec::<f64>().unwrap();
                let e = back
                    .iter()
                    .zip(&xv)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(e < 1e-12, "{n1}x{n2} {norm:?}: {e}");
            }
        }
    });
}

#[test]
fn fft_outputs_feed_fusion() {
    on_every_engine_lenient(|_e| {
        let x = randn(110, &[64], DType::F64);
        let y = fft::irfft(
            &fft::rfft(&x, None, -1, Norm::Backward).unwrap(),
            Some(64),
            -1,
            Norm::Backward,
        )
        .unwrap();
        let s = y
            .sub(&x)
            .unwrap()
            .abs()
            .unwrap()
            .max(None, false)
            .unwrap()
            .item()
            .unwrap();
        assert!(s < 1e-12);
    });
}

#[test]
fn fft_errors_are_typed() {
    on_every_engine_lenient(|_e| {
        let x = randn(120, &[4, 4], DType::F64);
        assert!(matches!(
            fft::fft(&x, Some(0), -1, Norm::Backward),
            Err(Error::InvalidArgument { op: "fft", .. })
        ));
        assert!(matches!(
            fft::fft(&x, None, 2, Norm::Backward),
            Err(Error::Axis { op: "fft", .. })
        ));
        assert!(matches!(
            fft::irfft(&x, None, 5, Norm::Backward),
            Err(Error::Axis { .. })
        ));
        let (z, _) = complex_rand(121, &[4]);
        assert!(matches!(
            fft::rfft(&z, None, -1, Norm::Backward),
            Err(Error::DType { op: "rfft", .. })
        ));
        assert!(matches!(
            fft::rfft2(
                &x.cast(DType::F32).unwrap().reshape(&[16]).unwrap(),
                Norm::Backward
            ),
            Err(Error::Shape { .. })
        ));
        let b = Array::from_vec(vec![true, false], &[2]).unwrap();
        assert!(matches!(
            fft::fft(&b, None, -1, Norm::Backward),
            Err(Error::DType { .. })
        ));
        let one = randn(122, &[1], DType::F64);
        let spec = fft::rfft(&one, None, -1, Norm::Backward).unwrap();
        assert!(matches!(
            fft::irfft(&spec, None, -1, Norm::Backward),
            Err(Error::InvalidArgument { .. })
        ));
        let empty = Array::from_vec(Vec::<f64>::new(), &[0]).unwrap();
        assert!(matches!(
            fft::fft(&empty, None, -1, Norm::Backward),
            Err(Error::InvalidArgument { .. })
        ));
        assert_eq!(Norm::parse("ortho"), Some(Norm::Ortho));
        assert_eq!(Norm::parse("bogus"), None);
    });
}

#[test]
fn plan_cache_is_bounded() {
    on_every_engine_lenient(|_e| {
        for n in 200..200 + 2 * fft::PLAN_CACHE_CAPACITY {
            let x = randn(n as u64, &[n], DType::F32);
            fft::fft(&x.cast(DType::F64).unwrap(), None, -1, Norm::Backward)
                .unwrap()
                .eval()
                .unwrap();
        }
        assert!(fft::cached_plans() <= 2 * fft::PLAN_CACHE_CAPACITY);
    });
}
