//! Placement and calibration with the OpenCL device (pocl in CI): auto
//! weighs the device by its profile, calibration measures it, and a kernel
//! skipped for its compile reaches the device once compiled.

use crate::common::*;
use crossover::{DType, DeviceKind};

/// Under `auto` the planner weighs the OpenCL device by its profile: small
/// work stays on the CPU when the device's launch, copies and compile
/// cost more than the kernel (pocl's own numbers), and goes to the device
/// when its profile says it is faster (the synthetic fast GPU's numbers
/// on the same device), with the result still right.
#[test]
fn auto_places_by_cost_between_the_cpu_and_the_opencl_device() {
    use crossover::{Engine, Policy, Profile};
    let Some(gpu) = opencl_or_skip() else {
        return;
    };
    let (a, xa) = array(&[1000], DType::F32, 61, -1.0, 1.0);
    let (b, xb) = array(&[1000], DType::F32, 62, -1.0, 1.0);
    let y = a.mul(&b).unwrap().add(1.0).unwrap();

    // pocl's prior: 50 us launch, copies, 0.5 s to compile a new kernel.
    let own = Engine::new(Profile::defaults())
        .with_gpu_backend(gpu.clone())
        .with_policy(Policy::Auto);
    let plan = own.plan(std::slice::from_ref(&y), None).unwrap();
    let k = &plan.kernels[0];
    assert_eq!(k.device, DeviceKind::Cpu, "{}", plan);
    let on_gpu = k.options.iter().find(|o| o.device == DeviceKind::Gpu);
    let cpu_s = k.predicted().unwrap().total_s;
    match on_gpu.map(|o| &o.outcome) {
        Some(Ok(p)) => {
            assert!(p.total_s > cpu_s, "{plan}");
            assert!(p.copies == 2 && p.prepare_s > 0.0, "{plan}");
        }
        other => panic!("the device was not weighed: {other:?}"),
    }

    // The same device behind a profile that calls it fast, inputs already
    // there: the planner sends the kernel to it.
    let fast = Engine::new(Profile::synthetic())
        .with_gpu_backend(gpu)
        .with_policy(Policy::Auto);
    let (c, xc) = array(&[1 << 16], DType::F32, 63, -1.0, 1.0);
    fast.to_device(&c, DeviceKind::Gpu).unwrap();
    let z = c.sin().unwrap().mul(c.cos().unwrap()).unwrap();
    let ran = fast.evaluate(std::slice::from_ref(&z), None).unwrap();
    assert_eq!(ran.kernels[0].device, DeviceKind::Gpu, "{ran}");
    let want: Vec<f64> = xc.iter().map(|v| v.sin() * v.cos()).collect();
    assert_close(
        &z.to_vec_f64().unwrap(),
        &want,
        rtol(DType::F32, 8.0),
        1e-6,
        "auto on gpu",
    );
    let want_y: Vec<f64> = xa.iter().zip(&xb).map(|(p, q)| p * q + 1.0).collect();
    assert_close(
        &y.to_vec_f64().unwrap(),
        &want_y,
        rtol(DType::F32, 2.0),
        1e-6,
        "auto on cpu",
    );
}

/// `crossover calibrate` measures the OpenCL device: every number it
/// records is a positive, finite measurement, not the prior.
#[test]
fn calibration_measures_the_opencl_device() {
    let Some(gpu) = opencl_or_skip() else {
        return;
    };
    let (prior, _) = gpu.prior().unwrap();
    let mut steps = 0;
    let mut lines = Vec::new();
    let measured = crossover::cost::calibrate_gpu::calibrate_gpu(
        gpu,
        true,
        0.0,
        &mut |_| steps += 1,
        &mut lines,
    )
    .unwrap();
    let (dev, links) = (&measured.device, &measured.links);
    assert_eq!(steps, crossover::cost::calibrate_gpu::STEPS, "{lines:?}");
    let r = &dev.rates;
    for (what, v) in [
        ("compile", dev.compile_s),
        ("launch", dev.launch_s),
        ("bandwidth", dev.bandwidth),
        ("f32 arith", r.f32_arith),
        ("f32 transcendental", r.f32_transcendental),
        ("f64 arith", r.f64_arith),
        ("f64 transcendental", r.f64_transcendental),
    ] {
        assert!(v.is_finite() && v > 0.0, "{what} = {v}: {lines:#?}");
    }
    assert_ne!(dev.compile_s, prior.compile_s, "compile time not measured");
    assert_ne!(dev.bandwidth, prior.bandwidth, "bandwidth not measured");
    assert_eq!(links.len(), 2);
    for l in links {
        let t = &l.pageable;
        assert!(t.bandwidth.is_finite() && t.bandwidth > 0.0, "{l:?}");
        assert!(t.latency_s.is_finite() && t.latency_s > 0.0, "{l:?}");
    }
    // The device's own matmul curve: measured points at two sizes, never
    // falling with the work (a timing on a shared machine may be noisy, so
    // no strict rise is asserted).
    let f32_curve = measured
        .curves
        .iter()
        .find(|c| c.op == "matmul" && c.dtype == "float32")
        .unwrap_or_else(|| panic!("no float32 matmul curve: {lines:#?}"));
    assert_eq!(f32_curve.points.len(), 2, "{f32_curve:?}");
    let small = f32_curve.seconds(2.0 * 64f64.powi(3));
    let large = f32_curve.seconds(2.0 * 256f64.powi(3));
    assert!(small > 0.0 && large >= small, "{f32_curve:?}");
    // The FFT and scan curves: two measured sizes each; the sparse
    // products: three (they ran on the device: a declined op would have no
    // library kernel on it).
    for (op, dtype, sizes) in [
        ("fft", "complex64", 2),
        ("cumsum", "float32", 2),
        ("sparse_matmul", "float64", 3),
        ("sparse_matmul_dense", "float64", 3),
    ] {
        let c = measured
            .curves
            .iter()
            .find(|c| c.op == op && c.dtype == dtype)
            .unwrap_or_else(|| panic!("no {op} {dtype} curve: {lines:#?}"));
        assert_eq!(c.points.len(), sizes, "{c:?}");
        assert!(c.points.iter().all(|p| p[1] > 0.0), "{c:?}");
    }
    // OpenCL declines dense linear algebra, so it has no dense curves.
    assert!(
        !measured
            .curves
            .iter()
            .any(|c| c.op == "solve" || c.op == "eigh"),
        "{lines:#?}"
    );
}

/// Under auto, a kernel placed on the CPU only because the GPU would first
/// have to compile it is compiled there in the background, and a later
/// evaluation of the same kernel runs on the GPU beside its inputs. (On an
/// H100, 2026-11-27, a small kernel on CuPy data stayed on the CPU for 20 s
/// of calls.)
#[test]
fn a_kernel_skipped_for_its_compile_runs_on_the_gpu_once_compiled() {
    use crossover::{Engine, Policy, Profile};
    let name = std::env::var("CROSSOVER_TEST_OPENCL").unwrap_or_default();
    let Some(gpu) = crossover::gpu::discover::find_opencl(Some(&name))
        .ok()
        .and_then(|found| crossover::opencl::OpenClApi::open(found).ok())
        .and_then(|api| crossover::gpu::GpuBackend::new(api, None, None).ok())
    else {
        assert!(!opencl_required(), "no OpenCL device");
        return;
    };
    // The synthetic profile (fast GPU, slow link) with a compile cost, so
    // the first call's compile outweighs the copy of the input back.
    let mut profile = Profile::synthetic();
    for d in &mut profile.devices {
        if d.device == DeviceKind::Gpu {
            d.compile_s = 0.1;
        }
    }
    let engine = Engine::new(profile).with_gpu(gpu).with_policy(Policy::Auto);
    let (a, x) = array(&[60_000], DType::F32, 9, -2.0, 2.0);
    engine.to_device(&a, DeviceKind::Gpu).unwrap();
    let make = || a.cos().unwrap().mul(3.0).unwrap().add(0.5).unwrap();
    let y = make();
    let first = engine.evaluate(std::slice::from_ref(&y), None).unwrap();
    assert_eq!(
        first.devices(),
        vec![DeviceKind::Cpu],
        "{}",
        first.kernels[0].reason
    );
    assert!(
        first.kernels[0].reason.contains("in the background"),
        "{}",
        first.kernels[0].reason
    );
    let want: Vec<f64> = x.iter().map(|v| v.cos() * 3.0 + 0.5).collect();
    assert_close(&y.to_vec_f64().unwrap(), &want, 1e-5, 1e-5, "first call");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut seen = Vec::new();
    loop {
        let y = make();
        let plan = engine.evaluate(std::slice::from_ref(&y), None).unwrap();
        seen.push(plan.devices()[0]);
        if plan.devices() == vec![DeviceKind::Gpu] {
            assert_close(&y.to_vec_f64().unwrap(), &want, 1e-5, 1e-5, "on the GPU");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still on {seen:?} after 120 s: {}",
            plan.kernels[0].reason
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The planner asks whether each kernel is compiled for the GPU on every
/// call; whether it is on disk is found out once per kernel (rendering the
/// source and hashing it took about 20 us a call: a 4,096-element sum with
/// pocl present cost 27 us from Python against 1.8 without a GPU).
#[test]
fn the_disk_cache_is_asked_once_per_kernel_not_once_per_call() {
    use crossover::{Engine, Policy, Profile};
    let name = std::env::var("CROSSOVER_TEST_OPENCL").unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("xo-disk-memo-{}", std::process::id()));
    let Some(gpu) = crossover::gpu::discover::find_opencl(Some(&name))
        .ok()
        .and_then(|found| crossover::opencl::OpenClApi::open(found).ok())
        .and_then(|api| crossover::gpu::GpuBackend::new(api, Some(dir.clone()), None).ok())
    else {
        assert!(!opencl_required(), "no OpenCL device");
        return;
    };
    let gpu = std::sync::Arc::new(gpu);
    let engine = Engine::new(Profile::synthetic())
        .with_gpu_backend(gpu.clone())
        .with_policy(Policy::Auto);
    let (a, x) = array(&[4096], DType::F32, 12, -2.0, 2.0);
    let want: Vec<f64> = x.iter().map(|v| v * 2.0 + 1.0).collect();
    for call in 0..25 {
        let y = a.mul(2.0).unwrap().add(1.0).unwrap();
        engine.evaluate(std::slice::from_ref(&y), None).unwrap();
        assert_close(&y.to_vec_f64().unwrap(), &want, 1e-6, 1e-6, "a*2+1");
        assert_eq!(gpu.cache().stats().disk_lookups, 1, "after call {call}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The history learns a GPU kernel's call, not its device events alone: a
/// run it learns from is recorded as its events plus the device's launch
/// time (the CPU's runs are wall-clock, host work included), so a small
/// kernel is not taken for cheaper than its call.
#[test]
fn the_history_learns_a_gpu_kernels_call_not_its_events_alone() {
    use crossover::cost::History;
    use crossover::{Engine, Policy, Profile};
    let Some(gpu) = opencl_or_skip() else {
        return;
    };
    let e = Engine::new(Profile::synthetic())
        .with_gpu_backend(gpu)
        .with_policy(Policy::Force(DeviceKind::Gpu));
    let (a, _) = array(&[4096], DType::F32, 71, -1.0, 1.0);
    let build = || a.mul(2.0).unwrap().add(1.0).unwrap();
    let entry = |key: &str| {
        e.profile()
            .history
            .entries()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.last_s)
    };
    // A run taken while competing for the cores teaches nothing (CI runs
    // other suites beside this one): evaluate until one is learned.
    for _ in 0..500 {
        let plan = e.evaluate(&[build()], None).unwrap();
        let k = &plan.kernels[0];
        assert_eq!(k.device, DeviceKind::Gpu, "{plan}");
        let key = History::key(k.device, &k.key, k.work.points);
        let events = k.measured_s.expect("a GPU run is measured");
        let launch = k.predicted().unwrap().kernel.launch_s;
        assert!(launch > 0.0, "{plan}");
        assert_eq!(k.measured_call_s(), Some(events + launch), "{plan}");
        if let Some(last) = entry(&key) {
            if last == events + launch {
                return;
            }
            // Learned from an earlier run of this loop, or not at all yet.
            assert_ne!(last, events, "the history learned the events alone");
        }
    }
    panic!("no run of 500 was learned");
}
