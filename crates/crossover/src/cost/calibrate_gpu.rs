//! GPU calibration: what `crossover calibrate` measures on the GPU the
//! engine would use (the device `CROSSOVER_GPU` selects).
//!
//! Kernel times are the device's own (events), copies and launches are
//! wall-clock: compile time of a typical fused kernel (caches bypassed),
//! launch-to-result overhead of a 64-element kernel on resident data,
//! host-to-device and device-to-host copy latency and bandwidth, device
//! memory bandwidth and arithmetic/transcendental rates per float dtype.
//! The result replaces the prior taken from the device's reported
//! properties.

use super::calibrate::{measure_bandwidth, measure_rates, median, ready, Runner};
use super::{DeviceProfile, LibraryCurve, LinkProfile, Profile, Transfer};
use crate::array::Array;
use crate::device::{Backend, DeviceKind, Policy};
use crate::dtype::DType;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::explain::{si, time};
use std::sync::Arc;
use std::time::Instant;

/// Progress steps [`calibrate_gpu`] reports.
pub const STEPS: usize = 4 + 4 + 1;

/// What [`calibrate_gpu`] measures: the device, its links, and the curves
/// of the library ops it runs.
pub struct GpuCalibration {
    pub device: DeviceProfile,
    pub links: Vec<LinkProfile>,
    pub curves: Vec<LibraryCurve>,
}

/// Measures `gpu`. `engine_s` is the engine's own overhead per evaluation
/// (measured on the CPU), taken out of the launch overhead.
pub fn calibrate_gpu(
    gpu: Arc<dyn Backend>,
    quick: bool,
    engine_s: f64,
    tick: &mut dyn FnMut(&str),
    lines: &mut Vec<String>,
) -> Result<GpuCalibration> {
    let (mut dev, _) = gpu
        .prior()
        .ok_or_else(|| Error::internal("calibrate", "the GPU backend has no prior"))?;
    let (min_time, reps) = if quick { (0.25, 3) } else { (1.0, 7) };
    let runner = gpu_runner(&gpu, reps, min_time);

    tick("gpu kernel compile time");
    let (a, b) = (
        ready(&[4096], DType::F32, 30)?,
        ready(&[4096], DType::F32, 31)?,
    );
    let typical = a.mul(&b)?.add(&a.sin()?)?.add(&b.cos()?)?;
    let kernel = crate::lower(&[typical])?
        .into_iter()
        .next()
        .ok_or_else(|| Error::internal("calibrate", "no kernel to compile"))?;
    let mut compiles = Vec::new();
    for _ in 0..if quick { 1 } else { 3 } {
        match gpu.measure_compile_s(&kernel)? {
            Some(s) => compiles.push(s),
            None => break,
        }
    }
    if !compiles.is_empty() {
        dev.compile_s = median(compiles);
    }
    lines.push(format!(
        "gpu compile (one kernel) : {}",
        time(dev.compile_s)
    ));

    tick("gpu launch overhead");
    let tiny = runner.resident(ready(&[64], DType::F32, 32)?)?;
    let wall = gpu_runner(&gpu, if quick { 100 } else { 500 }, min_time)
        .time_wall(&|| tiny.add(1.0))?
        .0;
    dev.launch_s = (wall - engine_s).max(wall * 0.25);
    lines.push(format!(
        "gpu launch to result     : {} (wall {}, engine {})",
        time(dev.launch_s),
        time(wall),
        time(engine_s)
    ));

    tick("gpu copies");
    let n_copy = if quick { 1 << 22 } else { 1 << 24 };
    let h2d_small = copy_to_device(&runner, 1024, reps)?;
    let h2d_big = copy_to_device(&runner, n_copy, reps)?;
    let d2h_small = copy_to_host(&runner, 1024, reps)?;
    let d2h_big = copy_to_host(&runner, n_copy, reps)?;
    let bytes = 4.0 * n_copy as f64;
    let link = |small: f64, big: f64| Transfer {
        latency_s: small,
        bandwidth: bytes / (big - small).max(big * 0.5),
    };
    let (up, down) = (link(h2d_small, h2d_big), link(d2h_small, d2h_big));
    for (what, t) in [("host -> gpu", &up), ("gpu -> host", &down)] {
        lines.push(format!(
            "copy {what:<20}: {}B/s, latency {}",
            si(t.bandwidth),
            time(t.latency_s)
        ));
    }
    let links = vec![
        LinkProfile {
            from: DeviceKind::Cpu,
            to: DeviceKind::Gpu,
            pageable: up.clone(),
            pinned: up,
        },
        LinkProfile {
            from: DeviceKind::Gpu,
            to: DeviceKind::Cpu,
            pageable: down.clone(),
            pinned: down,
        },
    ];

    tick("gpu memory bandwidth");
    // Kernel times are device events: no launch overhead to take out.
    dev.bandwidth = measure_bandwidth(&runner, n_copy, 0.0, "gpu", lines)?;
    dev.rates = measure_rates(
        &runner,
        if quick { 1 << 20 } else { 1 << 22 },
        0.0,
        "gpu",
        tick,
        lines,
    )?;
    tick("gpu library ops");
    let curves = library_curves(&runner, &dev, quick, lines)?;
    Ok(GpuCalibration {
        device: dev,
        links,
        curves,
    })
}

/// The device's library curves (device-timed, inputs resident): matmul of
/// square matrices per float dtype it computes in, complex64 FFTs and
/// float32 cumulative sums, float64 sparse products (sparse times sparse,
/// sparse times dense); float64 solve, cholesky, qr, inv, eigh and SVD
/// where the device runs dense linear algebra.
fn library_curves(
    runner: &Runner,
    dev: &DeviceProfile,
    quick: bool,
    lines: &mut Vec<String>,
) -> Result<Vec<LibraryCurve>> {
    let sizes: &[usize] = if quick { &[64, 256] } else { &[64, 256, 512] };
    let mut curves = Vec::new();
    for dtype in [DType::F32, DType::F64] {
        // A device without float64 (or much slower at it) gets no curve.
        if dtype == DType::F64 && slow_float64(dev) {
            continue;
        }
        curves.push(curve(runner, lines, ("matmul", dtype), sizes, &|n| {
            let a = runner.resident(ready(&[n, n], dtype, 60 + n as u64)?)?;
            let b = runner.resident(ready(&[n, n], dtype, 61 + n as u64)?)?;
            Ok(Box::new(move || a.matmul(&b)))
        })?);
    }
    let long: &[usize] = if quick {
        &[1 << 12, 1 << 16]
    } else {
        &[1 << 12, 1 << 16, 1 << 20]
    };
    curves.push(curve(runner, lines, ("fft", DType::C64), long, &|n| {
        let x = ready(&[n], DType::F32, 70 + n as u64)?.cast(DType::C64)?;
        x.eval()?;
        let x = runner.resident(x)?;
        Ok(Box::new(move || {
            crate::fft::fft(&x, None, -1, crate::fft::Norm::Backward)
        }))
    })?);
    curves.push(curve(runner, lines, ("cumsum", DType::F32), long, &|n| {
        let x = runner.resident(ready(&[n], DType::F32, 80 + n as u64)?)?;
        Ok(Box::new(move || x.cumsum(None)))
    })?);
    if !slow_float64(dev) {
        // Sparse products' operands are uploaded once and cached per
        // matrix, so the warm-up leaves them resident.
        let sizes = super::calibrate::SPGEMM_SIZES;
        curves.push(curve(
            runner,
            lines,
            ("sparse_matmul", DType::F64),
            sizes,
            &|n| {
                let a = super::calibrate::spgemm_operand(n, 95 + n as u64)?;
                Ok(Box::new(move || {
                    crate::sparse::spgemm_node(&a, &a).map(|(c, _)| c)
                }))
            },
        )?);
        // Sparse times a dense block of 8 columns (SpMM; a vector is the
        // same kernel with one).
        curves.push(curve(
            runner,
            lines,
            ("sparse_matmul_dense", DType::F64),
            sizes,
            &|n| {
                let a = super::calibrate::spgemm_operand(n, 97 + n as u64)?;
                let x = runner.resident(ready(&[n, 8], DType::F64, 98 + n as u64)?)?;
                Ok(Box::new(move || a.matmul_dense(&x)))
            },
        )?);
    }
    if runs_dense(runner) {
        // float64 solves and SVDs of square matrices (a vendor solver's
        // curve; the planner's defaults cover the rest).
        let dtype = DType::F64;
        curves.push(curve(runner, lines, ("solve", dtype), sizes, &|n| {
            let a = runner.resident(ready(&[n, n], dtype, 90 + n as u64)?)?;
            let b = runner.resident(ready(&[n, 1], dtype, 91 + n as u64)?)?;
            Ok(Box::new(move || crate::linalg::solve(&a, &b)))
        })?);
        curves.push(curve(runner, lines, ("cholesky", dtype), sizes, &|n| {
            // a aᵀ of a random full-rank a: symmetric positive definite.
            let a = ready(&[n, n], dtype, 100 + n as u64)?;
            let spd = a.matmul(&a.transpose()?)?;
            spd.eval()?;
            let spd = runner.resident(spd)?;
            Ok(Box::new(move || crate::linalg::cholesky(&spd)))
        })?);
        curves.push(curve(runner, lines, ("qr", dtype), sizes, &|n| {
            let a = runner.resident(ready(&[n, n], dtype, 101 + n as u64)?)?;
            Ok(Box::new(move || Ok(crate::linalg::qr(&a)?.1)))
        })?);
        curves.push(curve(runner, lines, ("inv", dtype), sizes, &|n| {
            let a = runner.resident(ready(&[n, n], dtype, 102 + n as u64)?)?;
            Ok(Box::new(move || crate::linalg::inv(&a)))
        })?);
        let small: &[usize] = if quick { &[64, 128] } else { &[64, 128, 256] };
        curves.push(curve(runner, lines, ("svd", dtype), small, &|n| {
            let a = runner.resident(ready(&[n, n], dtype, 92 + n as u64)?)?;
            Ok(Box::new(move || Ok(crate::linalg::svd(&a)?.1)))
        })?);
        curves.push(curve(runner, lines, ("eigh", dtype), small, &|n| {
            // eigh reads one triangle: any square matrix will do.
            let a = runner.resident(ready(&[n, n], dtype, 103 + n as u64)?)?;
            Ok(Box::new(move || Ok(crate::linalg::eigh(&a)?.0)))
        })?);
    }
    Ok(curves)
}

/// Whether the device lacks float64 or is far slower at it (under a
/// hundredth of its float32 rates): it then gets no float64 curves. Both
/// kinds of rates must say so, since one timing on a loaded machine can be
/// far off (pocl under CI's load once measured float32 arithmetic at 1.8
/// Tflop/s on two cores, and float64 arithmetic at 9.7 Gflop/s).
fn slow_float64(dev: &DeviceProfile) -> bool {
    let r = &dev.rates;
    r.f64_arith < r.f32_arith / 100.0 && r.f64_transcendental < r.f32_transcendental / 100.0
}

/// Whether the device runs dense linear algebra (a vendor solver such as
/// cuSOLVER): its curves are measured only then, so devices that decline
/// it (OpenCL) calibrate as before.
fn runs_dense(runner: &Runner) -> bool {
    let probe = || -> Result<bool> {
        let a = ready(&[4, 4], DType::F64, 93)?;
        let b = ready(&[4, 1], DType::F64, 94)?;
        let x = crate::linalg::solve(&a, &b)?;
        let gpu = runner.engine.backend(DeviceKind::Gpu)?;
        let kernels = crate::lower(&[x])?;
        Ok(!kernels.is_empty() && kernels.iter().all(|k| gpu.check(k).is_ok()))
    };
    probe().unwrap_or(false)
}

/// An op to time: built once per size, evaluated many times.
type Timed = Box<dyn Fn() -> Result<crate::array::Array>>;

/// The curve of the library op that `make(n)` times at each of `sizes`
/// (named as its kernel reports, `key` until one does).
fn curve(
    runner: &Runner,
    lines: &mut Vec<String>,
    key: (&'static str, DType),
    sizes: &[usize],
    make: &dyn Fn(usize) -> Result<Timed>,
) -> Result<LibraryCurve> {
    let (mut op, mut dtype) = key;
    let mut points = Vec::new();
    for &n in sizes {
        let build = make(n)?;
        let (t, plan) = runner.time(true, &|| build())?;
        if let Some(k) = plan.kernels.iter().find(|k| k.work.library.is_some()) {
            (op, dtype) = k.work.library.unwrap_or((op, dtype));
            points.push([k.work.flops(), t]);
        }
    }
    let c = LibraryCurve::fit(op, DeviceKind::Gpu, dtype.name(), points);
    lines.push(super::calibrate::curve_line(&c));
    Ok(c)
}

/// A runner forcing kernels onto `gpu`, on an engine of its own.
fn gpu_runner(gpu: &Arc<dyn Backend>, min_reps: usize, min_time: f64) -> Runner {
    let engine = Engine::new(Profile::defaults()).with_gpu_backend(Arc::clone(gpu));
    engine.set_refine(false);
    Runner {
        engine,
        device: DeviceKind::Gpu,
        min_reps,
        min_time,
    }
}

/// Median wall seconds of copying `n` f32 from the host to the device.
fn copy_to_device(runner: &Runner, n: usize, reps: usize) -> Result<f64> {
    // Fresh arrays: a copy stays valid, so each is copied once.
    let arrays = (0..reps + 1)
        .map(|i| ready(&[n], DType::F32, 40 + i as u64))
        .collect::<Result<Vec<Array>>>()?;
    let mut samples = Vec::new();
    for (i, a) in arrays.iter().enumerate() {
        let t = Instant::now();
        runner.engine.to_device(a, DeviceKind::Gpu)?;
        if i > 0 {
            samples.push(t.elapsed().as_secs_f64()); // the first warms up
        }
    }
    Ok(median(samples))
}

/// Median wall seconds of copying `n` f32 a GPU kernel made to the host.
fn copy_to_host(runner: &Runner, n: usize, reps: usize) -> Result<f64> {
    let x = runner.resident(ready(&[n], DType::F32, 50)?)?;
    let gpu = Some(Policy::Force(DeviceKind::Gpu));
    let mut samples = Vec::new();
    for i in 0..reps + 1 {
        let y = x.add(i as f64)?;
        runner.engine.evaluate(std::slice::from_ref(&y), gpu)?;
        let t = Instant::now();
        runner.engine.to_device(&y, DeviceKind::Cpu)?;
        if i > 0 {
            samples.push(t.elapsed().as_secs_f64());
        }
    }
    Ok(median(samples))
}
