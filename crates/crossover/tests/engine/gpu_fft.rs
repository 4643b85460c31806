//! FFTs on the OpenCL device (pocl in CI): every transform NumPy has, on
//! power-of-two lengths (radix-2 passes) and others (Bluestein's
//! algorithm), against the CPU's rustfft (itself checked against the DFT
//! by definition in `library_fft.rs`).

use crate::common::*;
use crossover::fft::{self, Norm};
use crossover::{Array, DType, DeviceKind, Generator};
use num_complex::{Complex32, Complex64};

/// The OpenCL test engine, or `None` (printed; a failure when required).
fn opencl_engine() -> Option<TestEngine> {
    engines().into_iter().find(|e| e.name == "opencl")
}

fn randn(seed: u64, shape: &[usize], dtype: DType) -> Array {
    let a = Generator::new(seed).standard_normal(shape, dtype).unwrap();
    a.eval().unwrap();
    a
}

/// A complex array of `shape` in `dtype` (C64 or C128), materialised.
fn crandn(seed: u64, shape: &[usize], dtype: DType) -> Array {
    let n: usize = shape.iter().product();
    let (re, im) = (values(n, seed, -1.0, 1.0), values(n, seed + 1, -1.0, 1.0));
    let z = if dtype == DType::C64 {
        let v = re.iter().zip(&im);
        Array::from_vec(
            v.map(|(&r, &i)| Complex32::new(r as f32, i as f32))
                .collect(),
            shape,
        )
    } else {
        let v = re.iter().zip(&im);
        Array::from_vec(v.map(|(&r, &i)| Complex64::new(r, i)).collect(), shape)
    }
    .unwrap();
    z.eval().unwrap();
    z
}

/// Real and imaginary parts, interleaved, as f64.
fn parts(a: &Array) -> Vec<f64> {
    match a.dtype() {
        DType::C128 => a
            .to_vec::<Complex64>()
            .unwrap()
            .iter()
            .flat_map(|z| [z.re, z.im])
            .collect(),
        DType::C64 => a
            .to_vec::<Complex32>()
            .unwrap()
            .iter()
            .flat_map(|z| [z.re as f64, z.im as f64])
            .collect(),
        _ => a.to_vec_f64().unwrap(),
    }
}

/// Runs `f` on the CPU and on the device (asserting one device kernel and
/// a device-resident result when `on_device`), and compares them.
fn check(gpu: &TestEngine, what: &str, on_device: bool, f: &dyn Fn() -> Array) {
    let (got, want) = cpu_and_device(gpu, what, on_device, f);
    let (g, w) = (parts(&got), parts(&want));
    let n = got.numel().max(2) as f64;
    let big = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    // Radix-2 passes round about log2(n) times per output.
    let tol = rtol(got.dtype().real_part(), 8.0 * n.log2());
    assert_close(&g, &w, tol, tol * big, what);
}

/// `f`'s results on the CPU and on the device, of the same shape and dtype.
fn cpu_and_device(
    gpu: &TestEngine,
    what: &str,
    on_device: bool,
    f: &dyn Fn() -> Array,
) -> (Array, Array) {
    let want = f();
    let got = gpu.run(|| {
        let before = gpu.engine.kernels_run(DeviceKind::Gpu);
        let y = f();
        y.eval().unwrap();
        let ran = gpu.engine.kernels_run(DeviceKind::Gpu) - before;
        assert_eq!(ran, on_device as u64, "{what}: device kernels");
        if on_device {
            assert_eq!(y.residency().unwrap().to_string(), "gpu", "{what}");
        }
        y
    });
    assert_eq!(
        (got.shape(), got.dtype()),
        (want.shape(), want.dtype()),
        "{what}"
    );
    (got, want)
}

#[test]
fn every_transform_runs_on_the_opencl_device_on_powers_of_two() {
    let Some(gpu) = opencl_engine() else { return };
    let norms = [Norm::Backward, Norm::Ortho, Norm::Forward];
    for (dtype, real) in [(DType::C64, DType::F32), (DType::C128, DType::F64)] {
        for &(shape, axis) in &[(&[1024usize][..], 0isize), (&[8, 16], 0), (&[3, 4, 32], -1)] {
            let z = crandn(1, shape, dtype);
            let r = randn(3, shape, real);
            for norm in norms {
                let w = format!("{dtype} {shape:?} axis {axis} {norm:?}");
                check(&gpu, &format!("fft {w}"), true, &|| {
                    fft::fft(&z, None, axis, norm).unwrap()
                });
                check(&gpu, &format!("ifft {w}"), true, &|| {
                    fft::ifft(&z, None, axis, norm).unwrap()
                });
                check(&gpu, &format!("fft of real {w}"), true, &|| {
                    fft::fft(&r, None, axis, norm).unwrap()
                });
                check(&gpu, &format!("rfft {w}"), true, &|| {
                    fft::rfft(&r, None, axis, norm).unwrap()
                });
                // (Its default length, 2 * (len - 1), is not a power of two.)
                let len = shape[(axis + shape.len() as isize) as usize % shape.len()];
                check(&gpu, &format!("irfft {w}"), true, &|| {
                    fft::irfft(&z, Some(2 * len), axis, norm).unwrap()
                });
            }
            // Cropped and zero-padded to powers of two.
            let n = shape[shape.len() - 1];
            for len in [n / 2, 2 * n] {
                let w = format!("{dtype} {shape:?} n={len}");
                check(&gpu, &format!("fft {w}"), true, &|| {
                    fft::fft(&z, Some(len), -1, Norm::Backward).unwrap()
                });
                check(&gpu, &format!("irfft {w}"), true, &|| {
                    fft::irfft(&z, Some(len), -1, Norm::Ortho).unwrap()
                });
            }
        }
        // 2-D transforms, on a batch and on a transposed view.
        let z = crandn(5, &[2, 16, 64], dtype);
        let r = randn(6, &[2, 16, 64], real);
        let t = crandn(7, &[32, 8], dtype).transpose().unwrap();
        for norm in norms {
            let w = format!("{dtype} {norm:?}");
            check(&gpu, &format!("fft2 {w}"), true, &|| {
                fft::fft2(&z, norm).unwrap()
            });
            check(&gpu, &format!("ifft2 {w}"), true, &|| {
                fft::ifft2(&z, norm).unwrap()
            });
            check(&gpu, &format!("fft2 of real {w}"), true, &|| {
                fft::fft2(&r, norm).unwrap()
            });
            check(&gpu, &format!("rfft2 {w}"), true, &|| {
                fft::rfft2(&r, norm).unwrap()
            });
            check(&gpu, &format!("irfft2 {w}"), true, &|| {
                fft::irfft2(&z, Some([16, 128]), norm).unwrap()
            });
            check(&gpu, &format!("fft2 of a view {w}"), true, &|| {
                fft::fft2(&t, norm).unwrap()
            });
        }
        // Round trip on the device.
        let back = gpu.run(|| {
            let y = fft::irfft(
                &fft::rfft(&r, None, -1, Norm::Ortho).unwrap(),
                Some(64),
                -1,
                Norm::Ortho,
            )
            .unwrap();
            y.to_vec_f64().unwrap()
        });
        assert_close(
            &back,
            &r.to_vec_f64().unwrap(),
            rtol(real, 64.0),
            rtol(real, 64.0),
            "round trip",
        );
    }
    // Other lengths run on the device too (Bluestein's algorithm).
    let z = crandn(9, &[3, 100], DType::C128);
    check(&gpu, "fft of 100 points", true, &|| {
        fft::fft(&z, None, -1, Norm::Backward).unwrap()
    });
    check(&gpu, "fft padded to 128 points", true, &|| {
        fft::fft(&z, Some(128), -1, Norm::Backward).unwrap()
    });
}

/// Compares `f` on the device (by Bluestein's algorithm over `m`-point
/// passes) with the CPU, relative to the largest output: rounding grows
/// with the three `log2(m)`-pass transforms of the convolution.
fn check_bluestein(gpu: &TestEngine, what: &str, m: usize, f: &dyn Fn() -> Array) {
    let (got, want) = cpu_and_device(gpu, what, true, f);
    let (g, w) = (parts(&got), parts(&want));
    let big = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = g
        .iter()
        .zip(&w)
        .fold(0.0f64, |e, (a, b)| e.max((a - b).abs()))
        / big;
    // On pocl the errors are 10 to 80 times smaller than these.
    let tol = match got.dtype().real_part() {
        DType::F32 => 2e-6 * (m as f64).log2(),
        _ => 2e-14 * (m as f64).log2(),
    };
    eprintln!("{what}: error {err:.2e} of max |X| (tolerance {tol:.0e})");
    assert!(err <= tol, "{what}: error {err:e} of max |X| > {tol:e}");
}

#[test]
fn other_lengths_run_on_the_opencl_device_by_bluestein() {
    let Some(gpu) = opencl_engine() else { return };
    // The padded power of two Bluestein's passes take for `n` points.
    let m = |n: usize| (2 * n - 1).next_power_of_two();
    for (dtype, real) in [(DType::C64, DType::F32), (DType::C128, DType::F64)] {
        for (seed, n) in [(1u64, 3usize), (2, 100), (3, 1000), (4, 4097), (5, 10007)] {
            let z = crandn(seed, &[if n < 1000 { 3 } else { 1 }, n], dtype);
            let w = format!("{dtype} n={n}");
            check_bluestein(&gpu, &format!("fft {w}"), m(n), &|| {
                fft::fft(&z, None, -1, Norm::Backward).unwrap()
            });
            check_bluestein(&gpu, &format!("ifft {w}"), m(n), &|| {
                fft::ifft(&z, None, -1, Norm::Backward).unwrap()
            });
        }
        // Every norm, and an axis with an inner stride.
        let z = crandn(6, &[3, 100], dtype);
        for norm in [Norm::Ortho, Norm::Forward] {
            let w = format!("{dtype} {norm:?}");
            check_bluestein(&gpu, &format!("fft {w}"), m(100), &|| {
                fft::fft(&z, None, -1, norm).unwrap()
            });
            check_bluestein(&gpu, &format!("ifft along axis 0 {w}"), m(3), &|| {
                fft::ifft(&z, None, 0, norm).unwrap()
            });
        }
        // Real transforms of odd and even lengths (cropped, padded).
        let r = randn(7, &[3, 100], real);
        let h = crandn(8, &[3, 51], dtype);
        for n in [99, 100, 150] {
            let w = format!("{dtype} n={n}");
            check_bluestein(&gpu, &format!("rfft {w}"), m(n), &|| {
                fft::rfft(&r, Some(n), -1, Norm::Backward).unwrap()
            });
            check_bluestein(&gpu, &format!("irfft {w}"), m(n), &|| {
                fft::irfft(&h, Some(n), -1, Norm::Ortho).unwrap()
            });
        }
        // 2-D: one power-of-two axis and one not, complex and real.
        let z2 = crandn(9, &[2, 12, 64], dtype);
        check_bluestein(&gpu, &format!("fft2 12x64 {dtype}"), m(12), &|| {
            fft::fft2(&z2, Norm::Backward).unwrap()
        });
        check_bluestein(&gpu, &format!("irfft2 12x30 {dtype}"), m(30), &|| {
            fft::irfft2(&z2, Some([12, 30]), Norm::Forward).unwrap()
        });
        // A transposed view: strided loads along both axes.
        let t = crandn(10, &[30, 8], dtype).transpose().unwrap();
        check_bluestein(&gpu, &format!("fft of a view {dtype}"), m(30), &|| {
            fft::fft(&t, None, -1, Norm::Backward).unwrap()
        });
        check_bluestein(&gpu, &format!("fft2 of a view {dtype}"), m(30), &|| {
            fft::fft2(&t, Norm::Ortho).unwrap()
        });
    }
}
