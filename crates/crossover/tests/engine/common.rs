//! Shared test helpers: the engines every numeric test body runs on,
//! seeded non-zero inputs and float64 comparisons.
#![allow(dead_code)]

use crossover::device::{Backend, SyntheticGpu};
use crossover::{Array, DType, DeviceKind, Engine, Policy, Profile};
use std::sync::{Arc, OnceLock};

/// One engine a test body runs on.
pub struct TestEngine {
    pub name: &'static str,
    pub engine: Arc<Engine>,
}

impl TestEngine {
    /// Runs `f` with this engine as the thread's current one.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        self.engine.scope(f)
    }

    /// Whether kernels here run on a real GPU API (not the CPU or the
    /// synthetic stand-in).
    pub fn is_gpu_api(&self) -> bool {
        self.name.starts_with("opencl") || self.name.starts_with("cuda")
    }
}

/// The OpenCL device the tests use: `CROSSOVER_TEST_OPENCL` names one (any
/// type), else the first device found (pocl in CI). Opened once per test
/// binary so compiled kernels are shared.
pub fn opencl() -> &'static Result<Arc<dyn Backend>, String> {
    static DEV: OnceLock<Result<Arc<dyn Backend>, String>> = OnceLock::new();
    DEV.get_or_init(|| {
        let name = std::env::var("CROSSOVER_TEST_OPENCL").ok();
        let found = crossover::gpu::discover::opencl_devices()
            .as_ref()
            .map_err(|e| e.clone())?;
        let pick = match name.as_deref() {
            Some(n) => n.to_string(),
            None => found
                .first()
                .map(|f| f.info.name.clone())
                .unwrap_or_default(),
        };
        let api = crossover::gpu::discover::find_opencl(Some(&pick))
            .and_then(|f| crossover::opencl::OpenClApi::open(f).map_err(|e| e.to_string()))?;
        let b = crossover::gpu::GpuBackend::new(api, None, None).map_err(|e| e.to_string())?;
        Ok(Arc::new(b) as Arc<dyn Backend>)
    })
}

/// The OpenCL test device, or `None` after printing why there is none (a
/// failure under `CROSSOVER_REQUIRE_OPENCL=1`).
pub fn opencl_or_skip() -> Option<Arc<dyn Backend>> {
    match opencl() {
        Ok(g) => Some(Arc::clone(g)),
        Err(why) if !opencl_required() => {
            eprintln!("skipped: no OpenCL device ({why})");
            None
        }
        Err(why) => panic!("CROSSOVER_REQUIRE_OPENCL=1 but no OpenCL device: {why}"),
    }
}

/// Whether a missing OpenCL device fails the tests (CI sets it).
pub fn opencl_required() -> bool {
    std::env::var("CROSSOVER_REQUIRE_OPENCL").is_ok_and(|v| v == "1")
}

/// An engine that runs every kernel `gpu` can run there, the rest on the CPU.
pub fn gpu_engine(gpu: Arc<dyn Backend>) -> Arc<Engine> {
    Arc::new(
        Engine::new(Profile::synthetic())
            .with_gpu_backend(gpu)
            .with_policy(Policy::Prefer(DeviceKind::Gpu)),
    )
}

/// The CUDA device the tests use (device 0), opened once per test binary.
pub fn cuda() -> &'static Result<Arc<dyn Backend>, String> {
    static DEV: OnceLock<Result<Arc<dyn Backend>, String>> = OnceLock::new();
    DEV.get_or_init(|| {
        let api = crossover::cuda::CudaApi::open(0)?;
        let b = crossover::gpu::GpuBackend::new(api, None, None).map_err(|e| e.to_string())?;
        Ok(Arc::new(b) as Arc<dyn Backend>)
    })
}

/// Whether a missing GPU (CUDA) fails the tests (`scripts/gpu-check.sh`
/// sets it on machines with an NVIDIA GPU).
pub fn gpu_required() -> bool {
    std::env::var("CROSSOVER_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Every engine a numeric test body runs on: the CPU, the CPU behind the
/// synthetic GPU, the OpenCL device when there is one (its absence is
/// printed, and is a failure under `CROSSOVER_REQUIRE_OPENCL=1`) and the
/// CUDA device when there is one (a failure under
/// `CROSSOVER_REQUIRE_GPU=1`).
pub fn engines() -> Vec<TestEngine> {
    let mut v = vec![
        TestEngine {
            name: "cpu",
            engine: Arc::new(
                Engine::new(Profile::synthetic()).with_policy(Policy::Force(DeviceKind::Cpu)),
            ),
        },
        TestEngine {
            name: "synthetic-gpu",
            engine: gpu_engine(Arc::new(SyntheticGpu::new())),
        },
    ];
    match opencl() {
        Ok(b) => v.push(TestEngine {
            name: "opencl",
            engine: gpu_engine(Arc::clone(b)),
        }),
        Err(why) => {
            assert!(
                !opencl_required(),
                "CROSSOVER_REQUIRE_OPENCL=1 but no OpenCL device: {why}"
            );
            static SAID: OnceLock<()> = OnceLock::new();
            SAID.get_or_init(|| eprintln!("skipping the OpenCL engine: {why}"));
        }
    }
    match cuda() {
        Ok(b) => v.push(TestEngine {
            name: "cuda",
            engine: gpu_engine(Arc::clone(b)),
        }),
        Err(why) => {
            assert!(
                !gpu_required(),
                "CROSSOVER_REQUIRE_GPU=1 but no CUDA device: {why}"
            );
            static SAID: OnceLock<()> = OnceLock::new();
            SAID.get_or_init(|| eprintln!("skipping the CUDA engine: {why}"));
        }
    }
    v
}

/// Runs `body` on every engine; a failure names the engine. On a GPU API
/// engine, at least one kernel of the body must have run on the device.
#[track_caller]
pub fn on_every_engine(body: impl Fn(&TestEngine)) {
    for e in engines() {
        let before = e.engine.kernels_run(DeviceKind::Gpu);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.run(|| body(&e))));
        if let Err(p) = r {
            eprintln!("(the failure above is on engine '{}')", e.name);
            std::panic::resume_unwind(p);
        }
        if e.is_gpu_api() {
            assert!(
                e.engine.kernels_run(DeviceKind::Gpu) > before,
                "engine '{}' ran no kernel on the device",
                e.name
            );
        }
    }
}

/// Sizes that cross the CPU interpreter's chunk (2048) and task edges.
pub const EDGE_SIZES: &[usize] = &[1, 7, 2047, 2048, 2049, 65_537, 131_073];

/// Like [`on_every_engine`] for suites of library ops, which GPU APIs
/// without library implementations run on the CPU (the fused kernels
/// around them still run on the device).
#[track_caller]
pub fn on_every_engine_lenient(body: impl Fn(&TestEngine)) {
    for e in engines() {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.run(|| body(&e))));
        if let Err(p) = r {
            eprintln!("(the failure above is on engine '{}')", e.name);
            std::panic::resume_unwind(p);
        }
    }
}

/// Deterministic pseudo-random values in [lo, hi) (xorshift; independent of
/// the engine's own generator, never all zero).
pub fn values(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    xorshift(seed)
        .take(n)
        .map(|s| lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64))
        .collect()
}

/// The xorshift stream behind [`values`] (and the integer tests' values).
pub fn xorshift(seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    std::iter::repeat_with(move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    })
}

/// An array of `dtype` with values in [lo, hi), and its values as f64 (after
/// rounding to the dtype).
pub fn array(shape: &[usize], dtype: DType, seed: u64, lo: f64, hi: f64) -> (Array, Vec<f64>) {
    let n: usize = shape.iter().product();
    let v = values(n, seed, lo, hi);
    match dtype {
        DType::F32 => {
            let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            let back = f.iter().map(|&x| x as f64).collect();
            (Array::from_vec(f, shape).unwrap(), back)
        }
        DType::F64 => (Array::from_vec(v.clone(), shape).unwrap(), v),
        DType::I32 => {
            let f: Vec<i32> = v.iter().map(|&x| x.floor() as i32).collect();
            let back = f.iter().map(|&x| x as f64).collect();
            (Array::from_vec(f, shape).unwrap(), back)
        }
        DType::I64 => {
            let f: Vec<i64> = v.iter().map(|&x| x.floor() as i64).collect();
            let back = f.iter().map(|&x| x as f64).collect();
            (Array::from_vec(f, shape).unwrap(), back)
        }
        DType::Bool => {
            let f: Vec<bool> = v.iter().map(|&x| x > (lo + hi) / 2.0).collect();
            let back = f.iter().map(|&x| x as u8 as f64).collect();
            (Array::from_vec(f, shape).unwrap(), back)
        }
        d => panic!("no test arrays of {d}"),
    }
}

/// Asserts |got - want| <= atol + rtol * |want| elementwise (NaNs must match).
#[track_caller]
pub fn assert_close(got: &[f64], want: &[f64], rtol: f64, atol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if w.is_nan() || g.is_nan() {
            assert!(w.is_nan() && g.is_nan(), "{what}[{i}]: got {g}, want {w}");
            continue;
        }
        if w.is_infinite() || g.is_infinite() {
            assert_eq!(g, w, "{what}[{i}]");
            continue;
        }
        let tol = atol + rtol * w.abs();
        assert!(
            (g - w).abs() <= tol,
            "{what}[{i}]: got {g}, want {w} (tol {tol:e})"
        );
    }
}

/// Relative tolerance for results rounded to `dtype` (a few units in the
/// last place of that type).
pub fn rtol(dtype: DType, ulps: f64) -> f64 {
    match dtype {
        DType::F32 => ulps * f32::EPSILON as f64,
        _ => ulps * f64::EPSILON,
    }
}

/// Row-major multi-index iteration helper: flat index of `idx` in `shape`.
pub fn flat(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

/// All multi-indices of a shape, row-major.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        out.push(idx.clone());
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}
