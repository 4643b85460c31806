//! Calibration: micro-benchmarks that fill a [`Profile`] for this machine.
//!
//! Each benchmark runs real kernels through a private engine forced onto
//! the device being measured and takes the median kernel time:
//! dispatch overhead (a 64-element kernel), memory bandwidth (a light
//! kernel over a buffer far larger than the caches), arithmetic and
//! transcendental rates per dtype (long chains of `x*c + d` and of `sin` over
//! a cache-sized buffer), and time curves over size for the library ops
//! (matmul, FFT). The GPU the engine would use is measured too
//! ([`calibrate_gpu`](super::calibrate_gpu)). Quick mode uses fewer sizes
//! and shorter runs (well under 30 s); full mode under 3 minutes. Without a
//! usable GPU only the CPU is calibrated and the result says why.

use super::{DeviceProfile, LibraryCurve, Profile, Rates};
use crate::array::Array;
use crate::device::{DeviceKind, Policy};
use crate::dtype::DType;
use crate::engine::Engine;
use crate::error::Result;
use crate::explain::{si, time};
use crate::plan::Plan;
use std::time::Instant;

/// What to measure.
#[derive(Clone, Debug, Default)]
pub struct CalibrateOptions {
    /// Fewer sizes, shorter runs.
    pub quick: bool,
}

/// The result of [`calibrate`].
#[derive(Clone, Debug)]
pub struct Calibration {
    pub profile: Profile,
    /// One line per measurement, for people.
    pub lines: Vec<String>,
}

pub(super) struct Runner {
    pub engine: Engine,
    /// The device measured (kernels are forced there).
    pub device: DeviceKind,
    pub min_reps: usize,
    pub min_time: f64,
}

impl Runner {
    /// Median seconds of the kernels of `build()` (only library kernels if
    /// `library`), and the last plan.
    pub fn time(&self, library: bool, build: &dyn Fn() -> Result<Array>) -> Result<(f64, Plan)> {
        self.samples(build, &|plan, _| {
            plan.kernels
                .iter()
                .filter(|k| !library || k.work.library.is_some())
                .filter_map(|k| k.measured_s)
                .sum()
        })
    }

    /// `a`, made valid on the runner's device (a copy for a GPU).
    pub fn resident(&self, a: Array) -> Result<Array> {
        if self.device != DeviceKind::Cpu {
            self.engine.to_device(&a, self.device)?;
        }
        Ok(a)
    }

    /// Median wall-clock seconds of evaluating `build()` (launch, wait and
    /// the engine's own planning), and the last plan.
    pub fn time_wall(&self, build: &dyn Fn() -> Result<Array>) -> Result<(f64, Plan)> {
        self.samples(build, &|_, wall| wall)
    }

    fn samples(
        &self,
        build: &dyn Fn() -> Result<Array>,
        pick: &dyn Fn(&Plan, f64) -> f64,
    ) -> Result<(f64, Plan)> {
        let policy = Some(Policy::Force(self.device));
        // Warm-up (page faults, thread pool start, FFT plans, compiles).
        let mut last = self.engine.evaluate(&[build()?], policy)?;
        let mut samples = Vec::new();
        let start = Instant::now();
        while samples.len() < self.min_reps
            || (start.elapsed().as_secs_f64() < self.min_time && samples.len() < 100_000)
        {
            let y = build()?;
            let t = Instant::now();
            last = self.engine.evaluate(&[y], policy)?;
            samples.push(pick(&last, t.elapsed().as_secs_f64()));
        }
        Ok((median(samples).max(1e-9), last))
    }
}

/// The median of `samples` (not empty).
pub(super) fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

pub(super) fn ready(shape: &[usize], dtype: DType, seed: u64) -> Result<Array> {
    let mut g = crate::Generator::new(seed);
    let a = g.uniform_range(0.5, 1.0, shape, dtype)?;
    // Made on the host, whatever the planner would choose: on a real GPU
    // the planner puts a large generator there, and timing the upload of
    // an array already on the device measured no copy at all (114 TB/s
    // "host -> gpu" on an H200, 2026-11-26).
    a.eval_with(Policy::Force(DeviceKind::Cpu))?;
    Ok(a)
}

/// Sizes of the square sparse products calibration times (float64, about
/// 16 entries per row; the largest has 4M entries in its product, a
/// quarter of a second on 2 cores or pocl). Without the largest, an H100's
/// curve fitted on fixed costs alone predicted 1.3 ms for a product of
/// 5.6M entries that took 26.6 ms (16 cores: 4.9), and `auto` placed it
/// on the GPU (2026-11-27).
pub(super) const SPGEMM_SIZES: &[usize] = &[1000, 4000, 16000];

/// A random `n x n` CSR operand of the sparse-product curve.
pub(super) fn spgemm_operand(n: usize, seed: u64) -> Result<crate::sparse::Csr> {
    crate::sparse::Csr::random(n, n, 16.0 / n as f64, seed, DType::F64)
}

/// Measures this machine. `progress(done, total, what)` is called before
/// each step.
///
/// # Errors
/// Any evaluation error (which would be a bug).
pub fn calibrate(
    opts: &CalibrateOptions,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<Calibration> {
    let quick = opts.quick;
    let runner = Runner {
        engine: Engine::new(Profile::defaults()),
        device: DeviceKind::Cpu,
        min_reps: if quick { 3 } else { 7 },
        min_time: if quick { 0.25 } else { 1.0 },
    };
    runner.engine.set_refine(false);
    let mm_sizes: &[usize] = if quick {
        &[32, 64, 128, 256]
    } else {
        &[32, 64, 128, 256, 512, 1024]
    };
    let fft_sizes: &[usize] = if quick {
        &[1 << 10, 1 << 14, 1 << 18]
    } else {
        &[1 << 10, 1 << 13, 1 << 16, 1 << 19, 1 << 22]
    };
    // The GPU the engine would use (`CROSSOVER_GPU` chooses).
    let gpu = crate::gpu::discover::from_env();
    let gpu_steps = if gpu.is_ok() {
        super::calibrate_gpu::STEPS
    } else {
        0
    };
    let total = 5 + 4 + 2 * mm_sizes.len() + fft_sizes.len() + SPGEMM_SIZES.len() + gpu_steps;
    let mut step = 0;
    let mut tick = |what: &str, progress: &mut dyn FnMut(usize, usize, &str)| {
        progress(step, total, what);
        step += 1;
    };
    let mut lines = Vec::new();
    let mut cpu = DeviceProfile::cpu_default();

    // Dispatch overhead.
    tick("cpu launch overhead", progress);
    let tiny = ready(&[64], DType::F32, 1)?;
    let tiny_runner = Runner {
        min_reps: if quick { 200 } else { 1000 },
        ..runner_clone(&runner)
    };
    let (launch, _) = tiny_runner.time(false, &|| tiny.add(1.0))?;
    // What the engine itself spends around a kernel (planning, binding):
    // a GPU's launch overhead is its wall time less this.
    let engine_s = (tiny_runner.time_wall(&|| tiny.add(1.0))?.0 - launch).max(0.0);
    cpu.launch_s = launch;
    lines.push(format!("cpu launch overhead      : {}", time(launch)));

    // Bandwidth: a light kernel over a big buffer.
    tick("cpu memory bandwidth", progress);
    let n_bw = if quick { 1 << 22 } else { 1 << 24 };
    cpu.bandwidth = measure_bandwidth(&runner, n_bw, launch, "cpu", &mut lines)?;

    // Arithmetic and transcendental rates, per dtype.
    let n_rate = if quick { 1 << 16 } else { 1 << 18 };
    cpu.rates = measure_rates(
        &runner,
        n_rate,
        launch,
        "cpu",
        &mut |what| tick(what, progress),
        &mut lines,
    )?;

    // Where splitting a kernel across threads starts to pay.
    tick("cpu thread split", progress);
    cpu.parallel_min_work = measure_parallel_min(&runner, quick, &mut lines)?;

    // Where matrix products through the process's BLAS beat faer's.
    tick("cpu matmul BLAS or faer", progress);
    cpu.blas_min_mnk = measure_blas_min(&runner, quick, &mut lines)?;

    let mut profile = Profile::defaults();
    profile.source = format!(
        "calibrated ({}) on {}",
        if quick { "quick" } else { "full" },
        crate::device::cpu_model()
    );

    // Library curves.
    for dtype in [DType::F32, DType::F64] {
        let mut points = Vec::new();
        let mut op = "matmul";
        for &n in mm_sizes {
            tick(&format!("cpu matmul {dtype} {n}x{n}"), progress);
            let a = ready(&[n, n], dtype, 10 + n as u64)?;
            let b = ready(&[n, n], dtype, 11 + n as u64)?;
            let (t, plan) = runner.time(true, &|| a.matmul(&b))?;
            if let Some(k) = plan.kernels.iter().find(|k| k.work.library.is_some()) {
                op = k.work.library.map_or(op, |l| l.0);
                points.push([k.work.flops(), t]);
            }
        }
        let c = LibraryCurve::fit(op, DeviceKind::Cpu, dtype.name(), points);
        lines.push(curve_line(&c));
        profile.set_curve(c);
    }
    let mut points = Vec::new();
    let mut fft_key = ("fft", DType::C64);
    for &n in fft_sizes {
        tick(&format!("cpu fft complex64 {n}"), progress);
        let x = ready(&[n], DType::F32, 20 + n as u64)?.cast(DType::C64)?;
        x.eval()?;
        let (t, plan) = runner.time(true, &|| {
            crate::fft::fft(&x, None, -1, crate::fft::Norm::Backward)
        })?;
        if let Some(k) = plan.kernels.iter().find(|k| k.work.library.is_some()) {
            fft_key = k.work.library.unwrap_or(fft_key);
            points.push([k.work.flops(), t]);
        }
    }
    let c = LibraryCurve::fit(fft_key.0, DeviceKind::Cpu, fft_key.1.name(), points);
    lines.push(curve_line(&c));
    profile.set_curve(c);
    let mut points = Vec::new();
    let mut sp_key = ("sparse_matmul", DType::F64);
    for &n in SPGEMM_SIZES {
        tick(&format!("cpu sparse matmul float64 {n}x{n}"), progress);
        let a = spgemm_operand(n, 30 + n as u64)?;
        let (t, plan) =
            runner.time(true, &|| crate::sparse::spgemm_node(&a, &a).map(|(c, _)| c))?;
        if let Some(k) = plan.kernels.iter().find(|k| k.work.library.is_some()) {
            sp_key = k.work.library.unwrap_or(sp_key);
            points.push([k.work.flops(), t]);
        }
    }
    let c = LibraryCurve::fit(sp_key.0, DeviceKind::Cpu, sp_key.1.name(), points);
    lines.push(curve_line(&c));
    profile.set_curve(c);

    profile.set_device(cpu);
    match gpu {
        Ok(gpu) => {
            let measured = super::calibrate_gpu::calibrate_gpu(
                gpu,
                quick,
                engine_s,
                &mut |what| tick(what, progress),
                &mut lines,
            )?;
            profile.source = format!("{} and {}", profile.source, measured.device.name);
            profile.set_device(measured.device);
            profile.links.retain(|l| l.from == l.to);
            profile.links.extend(measured.links);
            for c in measured.curves {
                profile.set_curve(c);
            }
        }
        Err(why) => lines.push(format!("gpu: not calibrated: {why}")),
    }
    tick("done", progress);
    Ok(Calibration { profile, lines })
}

/// The kernel work from which running `a + b` on all threads beats the
/// calling thread alone by 5%, at that size and every larger one measured
/// (the geometric mean of the work at the last size that did not pay and
/// the first that did; twice the largest size's work when none paid);
/// `None` on one thread.
fn measure_parallel_min(
    runner: &Runner,
    quick: bool,
    lines: &mut Vec<String>,
) -> Result<Option<f64>> {
    if crate::cpu::threads() < 2 {
        lines.push("cpu thread split         : one thread".into());
        return Ok(None);
    }
    let sizes: &[usize] = if quick {
        &[1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19]
    } else {
        &[
            1 << 15,
            1 << 16,
            1 << 17,
            1 << 18,
            1 << 19,
            1 << 20,
            1 << 21,
        ]
    };
    // `a + b`: one flop per point, so its work is 1.25 n (the backend's rule).
    let work = |n: usize| n as f64 * 1.25;
    let before = crate::cpu::parallel_min_work();
    let mut pays = Vec::new();
    let mut detail = Vec::new();
    for &n in sizes {
        let (a, b) = (ready(&[n], DType::F32, 70)?, ready(&[n], DType::F32, 71)?);
        // Wall time (the output's allocation and first touch included, as
        // a user sees it), the two modes alternated three times, best of
        // each: a busy machine slows one round, not the comparison.
        let mut t = [f64::INFINITY; 2];
        for _ in 0..3 {
            for (i, threshold) in [f64::MAX, 1.0].into_iter().enumerate() {
                crate::cpu::set_parallel_min_work(Some(threshold));
                let r = runner.time_wall(&|| a.add(&b));
                crate::cpu::set_parallel_min_work(Some(before));
                t[i] = t[i].min(r?.0);
            }
        }
        pays.push(t[1] < 0.95 * t[0]);
        detail.push(format!("{n}: {} / {}", time(t[0]), time(t[1])));
    }
    let works: Vec<f64> = sizes.iter().map(|&n| work(n)).collect();
    let found = pays_from(&works, &pays);
    lines.push(format!(
        "cpu thread split         : {} (a + b, one thread / all: {})",
        found.map_or(
            "never paid up to the largest size".to_string(),
            |w| format!("from {:.0} weighted points", w)
        ),
        detail.join(", ")
    ));
    Ok(found.or(Some(work(*sizes.last().unwrap_or(&1)) * 2.0)))
}

/// The work from which the faster mode wins at that size and every larger
/// one measured (`works` ascending, `pays[i]` for `works[i]`): the
/// geometric mean of the work at the last size that did not pay and the
/// first that did (the smallest over sqrt 2 when all paid); `None` when
/// the largest did not pay.
fn pays_from(works: &[f64], pays: &[bool]) -> Option<f64> {
    let first = (0..works.len().min(pays.len())).find(|&i| pays[i..].iter().all(|&p| p))?;
    Some(match first {
        0 => works[0] / std::f64::consts::SQRT_2,
        i => (works[i - 1] * works[i]).sqrt(),
    })
}

/// Per float dtype, the `m*n*k` from which a square product through the
/// process's BLAS beats faer's by 2% at that size and every larger one
/// measured (`f64::MAX` where it never did); empty without a BLAS, or when
/// its thread count differs from the engine's (it would not run). Wall
/// times of the two paths alternated three times, best of each.
fn measure_blas_min(
    runner: &Runner,
    quick: bool,
    lines: &mut Vec<String>,
) -> Result<std::collections::BTreeMap<String, f64>> {
    let mut found = std::collections::BTreeMap::new();
    let Some((path, _)) = crate::linalg::blas_library() else {
        lines.push("cpu matmul BLAS          : none loaded (faer runs every product)".into());
        return Ok(found);
    };
    if !crate::linalg::blas_runs_on(crate::cpu::threads()) {
        lines.push(format!(
            "cpu matmul BLAS          : {path} has another thread count than the engine's {}; not used",
            crate::cpu::threads()
        ));
        return Ok(found);
    }
    let sizes: &[usize] = if quick {
        &[256, 512, 1024]
    } else {
        &[256, 384, 512, 768, 1024, 1536, 2048]
    };
    // Short windows: each pair is timed three times anyway (full: ~30 s).
    let runner = Runner {
        min_reps: 3,
        min_time: if quick { 0.05 } else { 0.2 },
        ..runner_clone(runner)
    };
    for dtype in [DType::F32, DType::F64] {
        let before = crate::linalg::blas_min_mnk(dtype);
        let (mut pays, mut detail) = (Vec::new(), Vec::new());
        for &n in sizes {
            let a = ready(&[n, n], dtype, 80 + n as u64)?;
            let b = ready(&[n, n], dtype, 81 + n as u64)?;
            let mut t = [f64::INFINITY; 2];
            for _ in 0..3 {
                // faer (the threshold out of reach), then the BLAS, each
                // once the BLAS's threads have stopped spinning.
                for (i, threshold) in [f64::MAX, 1.0].into_iter().enumerate() {
                    settle();
                    crate::linalg::set_blas_min_mnk(dtype, Some(threshold));
                    let r = runner.time_wall(&|| a.matmul(&b));
                    crate::linalg::set_blas_min_mnk(dtype, Some(before));
                    t[i] = t[i].min(r?.0);
                }
            }
            pays.push(t[1] < 0.98 * t[0]);
            detail.push(format!("{n}: {} / {}", time(t[0]), time(t[1])));
        }
        let works: Vec<f64> = sizes.iter().map(|&n| (n as f64).powi(3)).collect();
        let from = pays_from(&works, &pays);
        lines.push(format!(
            "cpu matmul BLAS {:<9}: {} (faer / BLAS: {})",
            dtype.name(),
            from.map_or("faer at every size measured".to_string(), |w| format!(
                "from {:.0}^3 multiply-adds",
                w.cbrt()
            )),
            detail.join(", ")
        ));
        found.insert(dtype.name().to_string(), from.unwrap_or(f64::MAX));
    }
    Ok(found)
}

/// Waits (at most 1 s) until the process's other threads are idle: two
/// 12 ms windows in a row in which its CPU time grew by less than a
/// quarter of the wall time. OpenBLAS keeps a thread spinning about 0.1 s
/// after each call; on two cores faer's product timed inside that spin
/// took up to twice as long (quick calibration, 512^2 float32: 2.4 ms
/// against 1.3), which made the BLAS look faster than it is. (The same
/// wait as `python -m crossover.compare`'s `timing.settle`.)
fn settle() {
    let cpu = || {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec to write; the clock id is a
        // constant Linux supports.
        unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
        t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
    };
    let start = Instant::now();
    let mut quiet = 0;
    while quiet < 2 && start.elapsed().as_secs_f64() < 1.0 {
        let (w0, c0) = (Instant::now(), cpu());
        std::thread::sleep(std::time::Duration::from_millis(12));
        let busy = cpu() - c0 >= 0.25 * w0.elapsed().as_secs_f64();
        quiet = if busy { 0 } else { quiet + 1 };
    }
}

/// Memory bandwidth of `runner`'s device, bytes/s: a light kernel over a
/// buffer of `n` f32 far larger than the caches (made where the kernel
/// runs).
pub(super) fn measure_bandwidth(
    runner: &Runner,
    n: usize,
    launch: f64,
    label: &str,
    lines: &mut Vec<String>,
) -> Result<f64> {
    let big = runner.resident(ready(&[n], DType::F32, 2)?)?;
    let (t, plan) = runner.time(false, &|| big.mul(2.0))?;
    let bytes = plan
        .kernels
        .first()
        .map_or(8.0 * n as f64, |k| k.work.bytes);
    let bandwidth = bytes / (t - launch).max(t * 0.5);
    lines.push(format!(
        "{:<25}: {}B/s ({}B in {})",
        format!("{label} memory bandwidth"),
        si(bandwidth),
        si(bytes),
        time(t),
    ));
    Ok(bandwidth)
}

/// Arithmetic and transcendental rates of `runner`'s device per float
/// dtype: long chains of `x*c + d` and of `sin` over `n` elements (a
/// cache-sized buffer on a CPU).
pub(super) fn measure_rates(
    runner: &Runner,
    n: usize,
    launch: f64,
    label: &str,
    tick: &mut dyn FnMut(&str),
    lines: &mut Vec<String>,
) -> Result<Rates> {
    let mut rates = [0.0f64; 4];
    for (i, (dtype, trans)) in [
        (DType::F32, false),
        (DType::F32, true),
        (DType::F64, false),
        (DType::F64, true),
    ]
    .into_iter()
    .enumerate()
    {
        let kind = if trans {
            "transcendental"
        } else {
            "arithmetic"
        };
        let what = format!("{label} {dtype} {kind}");
        tick(&what);
        let x = runner.resident(ready(&[n], dtype, 3 + i as u64)?)?;
        let build = || -> Result<Array> {
            let mut v = x.clone();
            for _ in 0..if trans { 8 } else { 32 } {
                v = if trans {
                    v.sin()?
                } else {
                    v.mul(0.999)?.add(0.001)?
                };
            }
            Ok(v)
        };
        let (t, plan) = runner.time(false, &build)?;
        let work = plan.kernels.first().map(|k| k.work.clone());
        rates[i] = match work {
            Some(w) if trans => {
                let arith_s = w.arith / rates[i - 1];
                w.transcendental / (t - launch - arith_s).max(t * 0.25)
            }
            Some(w) => w.arith / (t - launch).max(t * 0.5),
            None => 1e9,
        };
        lines.push(format!("{what:<25}: {}flop/s", si(rates[i])));
    }
    Ok(Rates {
        f32_arith: rates[0],
        f32_transcendental: rates[1],
        f64_arith: rates[2],
        f64_transcendental: rates[3],
    })
}

fn runner_clone(r: &Runner) -> Runner {
    let engine = Engine::new(Profile::defaults());
    engine.set_refine(false);
    Runner {
        engine,
        device: r.device,
        min_reps: r.min_reps,
        min_time: r.min_time,
    }
}

pub(super) fn curve_line(c: &LibraryCurve) -> String {
    let pts: Vec<String> = c
        .points
        .iter()
        .map(|p| format!("{}flop {}", si(p[0]), time(p[1])))
        .collect();
    format!(
        "{} {} {:<9}: {:.3e}*flops^{:.2} + {}  [{}]",
        c.device,
        c.op,
        c.dtype,
        c.a,
        c.b,
        time(c.c),
        pts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::SyntheticGpu;
    use std::sync::Arc;

    #[test]
    fn calibration_inputs_are_made_on_the_host_even_where_the_gpu_is_preferred() {
        // A planner that prefers the GPU would leave the generator's output
        // there, and the "upload" calibration then times no copy.
        let engine = Arc::new(
            Engine::new(Profile::synthetic())
                .with_gpu(SyntheticGpu::new())
                .with_policy(Policy::Prefer(DeviceKind::Gpu)),
        );
        engine.scope(|| {
            let a = ready(&[1 << 16], DType::F32, 7).unwrap();
            let v = a.value().unwrap();
            let r = v.buffer.residency();
            assert!(r.is_valid_on(DeviceKind::Cpu));
            assert!(!r.is_valid_on(DeviceKind::Gpu));
            // The values are the generator's: in [0.5, 1), not all equal.
            let v = a.to_vec_f64().unwrap();
            assert!(v.iter().all(|x| (0.5..1.0).contains(x)));
            assert!(v.iter().any(|&x| x != v[0]));
        });
    }
}
