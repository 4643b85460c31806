//! Placement with a synthetic profile: a fast GPU behind a slow link (see
//! `Profile::synthetic`), played by `SyntheticGpu`, which plans and keeps
//! residency like a GPU and runs kernels on the host.
#![allow(clippy::cloned_ref_to_slice_refs)] // `&[y.clone()]` reads better in tests

use crate::common::{array, assert_close};
use crossover::cost::{Profile, PROFILE_FORMAT};
use crossover::device::SyntheticGpu;
use crossover::plan::Choice;
use crossover::{Array, DType, DeviceKind, Engine, Error, Policy};
use std::path::PathBuf;

const GPU: DeviceKind = DeviceKind::Gpu;
const CPU: DeviceKind = DeviceKind::Cpu;
/// Elements of a "large" elementwise input (16 MB of f32).
const BIG: usize = 1 << 22;

fn engine() -> Engine {
    Engine::new(Profile::synthetic()).with_gpu(SyntheticGpu::new().with_library(&["matmul"]))
}

fn big_pair() -> (Array, Array) {
    (
        Array::from_vec(vec![1.5f32; BIG], &[BIG]).unwrap(),
        Array::from_vec(vec![0.25f32; BIG], &[BIG]).unwrap(),
    )
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("crossover-placement-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn small_elementwise_stays_on_cpu() {
    let e = engine();
    let (a, _) = array(&[1000], DType::F32, 1, 0.1, 1.0);
    let (b, _) = array(&[1000], DType::F32, 2, 0.1, 1.0);
    let y = a.mul(&b).unwrap().add(a.sin().unwrap()).unwrap();
    let plan = e.plan(&[y], None).unwrap();
    assert_eq!(plan.devices(), vec![CPU]);
    let k = &plan.kernels[0];
    assert_eq!(k.choice, Choice::Fastest);
    let (c, g) = (k.option(CPU).unwrap(), k.option(GPU).unwrap());
    assert!(c.total_s < g.total_s, "{plan}");
    // The GPU loses on its launch and the copies of both inputs.
    assert_eq!(g.copies, 2);
    assert!(g.copy_s > g.kernel.seconds);
}

#[test]
fn large_elementwise_goes_to_gpu_when_inputs_are_there() {
    let e = engine();
    let (a, b) = big_pair();
    e.to_device(&a, GPU).unwrap();
    e.to_device(&b, GPU).unwrap();
    let y = a.mul(&b).unwrap().add(1.0).unwrap();
    let plan = e.plan(&[y.clone()], None).unwrap();
    assert_eq!(plan.devices(), vec![GPU], "{plan}");
    let k = &plan.kernels[0];
    assert_eq!(k.option(GPU).unwrap().copies, 0);
    assert!(k.reason.contains("inputs already on gpu"), "{}", k.reason);
    // Run it: the result lives on the GPU until host data is asked for.
    e.evaluate(&[y.clone()], None).unwrap();
    let at = y.residency().unwrap();
    assert!(at.contains(GPU) && !at.contains(CPU), "{at}");
    let host = y.to_vec::<f32>().unwrap();
    assert_eq!(host[BIG - 1], 1.5 * 0.25 + 1.0);
    let at = y.residency().unwrap();
    assert!(at.contains(GPU) && at.contains(CPU), "{at}");
}

#[test]
fn large_light_elementwise_stays_on_cpu_when_inputs_must_be_copied() {
    let e = engine();
    let (a, b) = big_pair();
    let y = a.mul(&b).unwrap().add(1.0).unwrap();
    let plan = e.plan(&[y], None).unwrap();
    assert_eq!(plan.devices(), vec![CPU], "{plan}");
    let k = &plan.kernels[0];
    let g = k.option(GPU).unwrap();
    assert_eq!(g.copies, 2);
    assert_eq!(g.copy_bytes, 2 * BIG * 4);
    // The GPU would compute faster; the copies decide.
    assert!(g.kernel.seconds < k.option(CPU).unwrap().kernel.seconds);
    assert!(k.reason.contains("copies"), "{}", k.reason);
}

#[test]
fn large_heavy_elementwise_goes_to_gpu_even_with_copies() {
    let e = engine();
    let (a, _) = big_pair();
    let y = a
        .sin()
        .unwrap()
        .exp()
        .unwrap()
        .cos()
        .unwrap()
        .tanh()
        .unwrap();
    let plan = e.plan(&[y], None).unwrap();
    assert_eq!(plan.devices(), vec![GPU], "{plan}");
    assert_eq!(plan.kernels[0].option(GPU).unwrap().copies, 1);
}

#[test]
fn large_matmul_goes_to_gpu_even_with_copies() {
    let e = engine();
    let n = 1024;
    let a = Array::from_vec(vec![0.5f32; n * n], &[n, n]).unwrap();
    let b = Array::from_vec(vec![0.25f32; n * n], &[n, n]).unwrap();
    let c = a.matmul(&b).unwrap();
    let plan = e.plan(&[c], None).unwrap();
    assert_eq!(plan.devices(), vec![GPU], "{plan}");
    let k = &plan.kernels[0];
    let g = k.option(GPU).unwrap();
    assert_eq!(g.copies, 2);
    assert!(g.copy_s > 0.0);
    assert_eq!(g.kernel.source, crossover::cost::Source::Curve);
}

#[test]
fn small_matmul_stays_on_cpu() {
    let e = engine();
    let a = Array::from_vec(vec![0.5f32; 64], &[8, 8]).unwrap();
    let plan = e.plan(&[a.matmul(&a).unwrap()], None).unwrap();
    assert_eq!(plan.devices(), vec![CPU], "{plan}");
}

#[test]
fn chain_keeps_intermediates_on_the_device() {
    let e = engine();
    let (a, b) = big_pair();
    e.to_device(&a, GPU).unwrap();
    e.to_device(&b, GPU).unwrap();
    // t is read by two kernels (a reduction and an elementwise kernel), so
    // it is materialised: it must stay on the GPU between them.
    let t = a.mul(&b).unwrap().add(1.0).unwrap();
    let s = t.sum(None, false).unwrap();
    let w = t.mul(&t).unwrap().sub(&a).unwrap();
    let plan = e.plan(&[s.clone(), w.clone()], None).unwrap();
    assert!(plan.kernels.len() >= 3, "{plan}");
    assert!(plan.devices().iter().all(|d| *d == GPU), "{plan}");
    for k in &plan.kernels {
        assert_eq!(k.option(GPU).unwrap().copies, 0, "{plan}");
    }
    // On the CPU every later kernel would need t copied back first.
    for k in &plan.kernels[1..] {
        assert_eq!(k.option(CPU).unwrap().copies, 1, "{plan}");
    }
    let ran = e.evaluate(&[s.clone(), w.clone()], None).unwrap();
    assert!(ran.kernels.iter().all(|k| k.measured_s.is_some()));
    assert!(!w.residency().unwrap().contains(CPU));
    let tv = 1.5f64 * 0.25 + 1.0;
    assert_close(
        &[s.item().unwrap()],
        &[tv * BIG as f64],
        1e-5,
        0.0,
        "sum on synthetic gpu",
    );
    assert_eq!(w.to_vec::<f32>().unwrap()[7], (tv * tv - 1.5) as f32);
}

#[test]
fn forced_policy_is_obeyed() {
    let e = engine();
    let (a, _) = array(&[1000], DType::F32, 3, 0.1, 1.0);
    let y = a.mul(&a).unwrap().add(2.0).unwrap();
    // Per call.
    let plan = e.plan(&[y.clone()], Some(Policy::Force(GPU))).unwrap();
    assert_eq!(plan.devices(), vec![GPU]);
    assert_eq!(plan.kernels[0].choice, Choice::Forced);
    assert!(plan.kernels[0].reason.contains("forced"));
    // Per engine.
    let (big, _) = big_pair();
    e.to_device(&big, GPU).unwrap();
    let heavy = big.sin().unwrap().exp().unwrap();
    e.set_policy(Policy::Force(CPU));
    assert_eq!(e.plan(&[heavy.clone()], None).unwrap().devices(), vec![CPU]);
    // The call's policy overrides the engine's.
    assert_eq!(
        e.plan(&[heavy.clone()], Some(Policy::Auto))
            .unwrap()
            .devices(),
        vec![GPU]
    );
    // Running forced on the GPU gives the same numbers as the CPU.
    let want = {
        let cpu_only = Engine::new(Profile::synthetic());
        let z = a.mul(&a).unwrap().add(2.0).unwrap();
        cpu_only.evaluate(&[z.clone()], None).unwrap();
        z.to_vec::<f32>().unwrap()
    };
    let ran = e.evaluate(&[y.clone()], Some(Policy::Force(GPU))).unwrap();
    assert_eq!(ran.devices(), vec![GPU]);
    assert_eq!(y.to_vec::<f32>().unwrap(), want);
}

#[test]
fn forced_gpu_that_cannot_run_is_an_error_naming_why() {
    let (a, _) = array(&[100], DType::F32, 4, 0.1, 1.0);
    let y = a.add(1.0).unwrap();
    let no_gpu = Engine::new(Profile::synthetic()).with_unusable_gpu("no CUDA driver found");
    let err = no_gpu
        .evaluate(&[y.clone()], Some(Policy::Force(GPU)))
        .unwrap_err();
    assert!(matches!(err, Error::Device { .. }), "{err}");
    assert!(err.to_string().contains("no CUDA driver found"), "{err}");
    assert!(
        !y.is_ready(),
        "nothing may run after a refused forced policy"
    );
    // A GPU without a matmul implementation.
    let e = Engine::new(Profile::synthetic()).with_gpu(SyntheticGpu::new());
    let m = Array::from_vec(vec![1.0f32; 16], &[4, 4]).unwrap();
    let err = e
        .plan(&[m.matmul(&m).unwrap()], Some(Policy::Force(GPU)))
        .unwrap_err();
    assert!(
        err.to_string().contains("matmul has no GPU implementation"),
        "{err}"
    );
}

#[test]
fn unusable_device_is_never_chosen() {
    let (a, _) = big_pair();
    let heavy = a
        .sin()
        .unwrap()
        .exp()
        .unwrap()
        .cos()
        .unwrap()
        .tanh()
        .unwrap();
    // Control: with enough memory the GPU wins this kernel.
    let roomy = Engine::new(Profile::synthetic()).with_gpu(SyntheticGpu::new());
    assert_eq!(
        roomy.plan(&[heavy.clone()], None).unwrap().devices(),
        vec![GPU]
    );
    // Out of memory.
    let small =
        Engine::new(Profile::synthetic()).with_gpu(SyntheticGpu::new().with_memory(1 << 20));
    let plan = small.plan(&[heavy.clone()], None).unwrap();
    assert_eq!(plan.devices(), vec![CPU]);
    assert_eq!(plan.kernels[0].choice, Choice::OnlyUsable);
    assert!(plan.kernels[0].reason.contains("device memory"), "{plan}");
    // No GPU at all: the reason is recorded.
    let none = Engine::new(Profile::synthetic()).with_unusable_gpu("no CUDA driver found");
    let plan = none.plan(&[heavy.clone()], None).unwrap();
    assert_eq!(plan.devices(), vec![CPU]);
    assert!(plan.kernels[0].reason.contains("no CUDA driver found"));
    // An op the GPU does not implement.
    let n = 1024;
    let m = Array::from_vec(vec![0.5f32; n * n], &[n, n]).unwrap();
    let plan = roomy.plan(&[m.matmul(&m).unwrap()], None).unwrap();
    assert_eq!(plan.devices(), vec![CPU], "{plan}");
    assert!(plan.kernels[0]
        .reason
        .contains("matmul has no GPU implementation"));
    // A dtype the GPU does not support.
    let z = heavy.cast(DType::C64).unwrap().mul(2.0).unwrap();
    let plan = roomy.plan(&[z], None).unwrap();
    assert!(plan.kernels.iter().any(|k| k.option(GPU).is_none()));
    for k in &plan.kernels {
        if k.option(GPU).is_none() {
            assert_eq!(k.device, CPU);
        }
    }
}

#[test]
fn explain_names_predicted_times_and_the_reason() {
    let e = engine();
    let (a, _) = array(&[1 << 16], DType::F32, 7, 0.1, 1.0);
    let (b, _) = array(&[1 << 16], DType::F32, 8, 0.1, 1.0);
    let y = a.mul(&b).unwrap().add(a.sin().unwrap()).unwrap();
    let text = e.plan(&[y.clone()], None).unwrap().to_string();
    for want in [
        "fused(mul,sin,add)",
        "*cpu",
        " gpu",
        "predicted",
        "copies",
        "choice    : cpu",
        "fastest predicted completion: cpu",
        " us",
        "gpu computes faster",
        "synthetic",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    let ran = e.evaluate(&[y], None).unwrap().to_string();
    assert!(ran.contains("measured  : kernel"), "{ran}");
    assert!(ran.contains("actual/predicted"), "{ran}");
}

#[test]
fn history_corrects_a_wrong_prediction() {
    // A profile that thinks the CPU is a million times slower than it is.
    let mut p = Profile::synthetic();
    let cpu = p.devices.iter_mut().find(|d| d.device == CPU).unwrap();
    cpu.bandwidth = 2e4;
    cpu.rates.f32_arith = 1e5;
    cpu.rates.f32_transcendental = 1e5;
    let e = Engine::new(p);
    let (a, _) = array(&[1 << 16], DType::F32, 5, 0.1, 1.0);
    let build = || a.mul(2.0).unwrap().add(1.0).unwrap();
    let before = e.plan(&[build()], None).unwrap().kernels[0]
        .predicted()
        .unwrap()
        .kernel
        .seconds;
    // The history learns only from runs the process was not preempted in
    // (`cost::Contention`), and on a loaded machine (CI runs the Python
    // tests beside these) most short runs are: evaluate until two count,
    // within a bound that still fails if it never learns.
    for _ in 0..500 {
        e.evaluate(&[build()], None).unwrap();
        let learned = e.plan(&[build()], None).unwrap().kernels[0]
            .predicted()
            .is_some_and(|p| p.kernel.correction.is_some());
        if learned {
            break;
        }
    }
    let after = e.plan(&[build()], None).unwrap();
    let k = &after.kernels[0].predicted().unwrap().kernel;
    assert!(k.correction.is_some(), "{after}");
    assert!(
        k.seconds < before / 100.0,
        "before {before}, after {}",
        k.seconds
    );
    assert!(!e.profile().history.is_empty());
    // The synthetic GPU's timings are not real: they never refine.
    let g = engine();
    let (big, _) = big_pair();
    g.to_device(&big, GPU).unwrap();
    g.evaluate(&[big.sin().unwrap()], Some(Policy::Force(GPU)))
        .unwrap();
    assert!(g.profile().history.is_empty());
}

#[test]
fn trace_records_kernels_and_copies() {
    let e = engine();
    crossover::trace::start();
    let (a, b) = big_pair();
    let y = a
        .sin()
        .unwrap()
        .exp()
        .unwrap()
        .cos()
        .unwrap()
        .tanh()
        .unwrap()
        .add(&b)
        .unwrap();
    let plan = e.evaluate(&[y.clone()], None).unwrap();
    y.to_vec::<f32>().unwrap();
    let events = crossover::trace::stop();
    assert_eq!(plan.devices(), vec![GPU], "{plan}");
    assert!(events
        .iter()
        .any(|ev| ev.category == "kernel" && ev.track == "gpu"));
    assert!(events.iter().any(|ev| ev.track == "copy host->gpu"));
    assert!(events.iter().any(|ev| ev.track == "copy gpu->host"));
    let json: serde_json::Value =
        serde_json::from_str(&crossover::trace::to_chrome_json(&events)).unwrap();
    let list = json["traceEvents"].as_array().unwrap();
    assert!(list.iter().any(|e| e["ph"] == "X" && e["cat"] == "copy"));
    let path = tmp("trace.json");
    crossover::trace::write_chrome(&path, &events).unwrap();
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("traceEvents"));
}

#[test]
fn profile_round_trips() {
    for p in [Profile::synthetic(), Profile::defaults()] {
        let path = tmp(&format!("roundtrip-{}.json", p.fingerprint.len()));
        p.save(&path).unwrap();
        let back = Profile::load(&path, p.fingerprint == "synthetic").unwrap();
        assert_eq!(back, p);
    }
    // With history.
    let e = Engine::new(Profile::defaults());
    let (a, _) = array(&[4096], DType::F32, 6, 0.1, 1.0);
    for _ in 0..3 {
        e.evaluate(&[a.add(1.0).unwrap()], None).unwrap();
    }
    let p = e.profile();
    assert!(!p.history.is_empty());
    let path = tmp("history.json");
    p.save(&path).unwrap();
    assert_eq!(Profile::load(&path, false).unwrap(), p);
}

#[test]
fn damaged_or_stale_profile_is_rejected_with_a_clear_message() {
    let path = tmp("damaged.json");
    std::fs::write(&path, "{ \"format\": 1, \"devices\": [").unwrap();
    let err = Profile::load(&path, true).unwrap_err().to_string();
    assert!(
        err.contains("damaged") && err.contains("damaged.json"),
        "{err}"
    );
    assert!(err.contains("line"), "{err}");

    let mut p = Profile::synthetic();
    p.devices[0].bandwidth = -1.0;
    std::fs::write(&path, p.to_json()).unwrap();
    let err = Profile::load(&path, true).unwrap_err().to_string();
    assert!(err.contains("cpu.bandwidth"), "{err}");

    let mut p = Profile::defaults();
    p.crossover_version = "0.0.0-old".into();
    std::fs::write(&path, p.to_json()).unwrap();
    let err = Profile::load(&path, false).unwrap_err().to_string();
    assert!(err.contains("stale") && err.contains("0.0.0-old"), "{err}");

    let mut p = Profile::defaults();
    p.fingerprint = "another machine".into();
    std::fs::write(&path, p.to_json()).unwrap();
    let err = Profile::load(&path, false).unwrap_err().to_string();
    assert!(err.contains("another machine"), "{err}");

    let mut p = Profile::defaults();
    p.format = PROFILE_FORMAT + 1;
    std::fs::write(&path, p.to_json()).unwrap();
    assert!(Profile::load(&path, true).is_err());
    assert!(Profile::load(&tmp("missing.json"), true).is_err());
}

#[test]
fn library_curve_interpolates_and_extrapolates() {
    use crossover::cost::LibraryCurve;
    let pts: Vec<[f64; 2]> = [1e6, 1e7, 1e8, 1e9]
        .iter()
        .map(|&f| [f, f / 1e11 + 2e-5])
        .collect();
    let c = LibraryCurve::fit("matmul", CPU, "float32", pts);
    for f in [3e6, 5e7, 1e10, 1e11] {
        let want = f / 1e11 + 2e-5;
        let got = c.seconds(f);
        // Log-log interpolation between points; the fit outside them.
        let tol = if f <= 1e9 { 0.25 } else { 0.02 };
        assert!((got / want - 1.0).abs() < tol, "{f}: {got} vs {want}");
    }
}

#[test]
fn library_curve_never_extrapolates_above_the_last_measured_rate() {
    use crossover::cost::LibraryCurve;
    // Times that grow like flops^0.55 (small sizes, launch-bound): the fit
    // alone would promise ever higher rates far beyond the points.
    let pts: Vec<[f64; 2]> = [1e5, 1e6, 1e7]
        .iter()
        .map(|&f: &f64| [f, 1e-6 * f.powf(0.55)])
        .collect();
    let c = LibraryCurve::fit("matmul", CPU, "float32", pts.clone());
    let last_rate = pts[2][0] / pts[2][1];
    for f in [1e8, 1e10, 1e14] {
        let rate = f / c.seconds(f);
        assert!(
            rate <= last_rate * (1.0 + 1e-9),
            "{f}: {rate} > {last_rate}"
        );
    }
    // Inside the points, interpolation is unchanged (exact at a point).
    assert!((c.seconds(1e6) / pts[1][1] - 1.0).abs() < 1e-9);
}

#[test]
fn library_curve_never_predicts_less_time_for_more_work() {
    use crossover::cost::LibraryCurve;
    // The smallest point was preempted: slower than the next one up.
    let pts = vec![[1e5, 9e-5], [1e6, 6e-5], [1e7, 3e-4]];
    let c = LibraryCurve::fit("matmul", CPU, "float32", pts);
    assert_eq!(c.points[0][1], 6e-5, "{c:?}");
    assert_eq!(c.points[2][1], 3e-4, "{c:?}");
    let times: Vec<f64> = [5e4, 1e5, 3e5, 1e6, 3e6, 1e7, 1e8]
        .iter()
        .map(|&f| c.seconds(f))
        .collect();
    for w in times.windows(2) {
        assert!(w[1] >= w[0], "{times:?}");
    }
}

/// A calibrated thread-split threshold travels in the profile (old files
/// without it still load) and the engine applies it to the CPU backend.
#[test]
fn a_calibrated_thread_split_is_stored_and_applied() {
    let mut p = crossover::Profile::defaults();
    let mut cpu = p.device(DeviceKind::Cpu).unwrap().clone();
    assert_eq!(cpu.parallel_min_work, None);
    cpu.parallel_min_work = Some(3.5e5);
    p.set_device(cpu);
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains("parallel_min_work"));
    let back: crossover::Profile = serde_json::from_str(&json).unwrap();
    assert_eq!(
        back.device(DeviceKind::Cpu).unwrap().parallel_min_work,
        Some(3.5e5)
    );
    let old = json.replace(",\"parallel_min_work\":350000.0", "");
    assert!(!old.contains("parallel_min_work"), "{old}");
    let old: crossover::Profile = serde_json::from_str(&old).unwrap();
    assert_eq!(old.device(DeviceKind::Cpu).unwrap().parallel_min_work, None);
    let _engine = crossover::Engine::new(back);
    assert_eq!(crossover::cpu::parallel_min_work(), 3.5e5);
    // Results never depend on it (the grid is the shape's): only speed.
    let (a, x) = array(&[300_000], DType::F32, 5, -1.0, 1.0);
    crossover::cpu::set_parallel_min_work(Some(1e12)); // the calling thread only
    let one = a
        .mul(3.0)
        .unwrap()
        .sum(None, false)
        .unwrap()
        .item()
        .unwrap();
    crossover::cpu::set_parallel_min_work(None);
    assert_eq!(
        crossover::cpu::parallel_min_work(),
        crossover::cpu::PARALLEL_MIN_WORK
    );
    let a2 = Array::from_vec(
        x.iter().map(|&v| v as f32).collect::<Vec<f32>>(),
        &[300_000],
    )
    .unwrap();
    let all = a2
        .mul(3.0)
        .unwrap()
        .sum(None, false)
        .unwrap()
        .item()
        .unwrap();
    assert_eq!(one, all);
}

/// Calibrated BLAS thresholds travel in the profile per dtype (old files
/// without them still load, impossible values make it damaged) and the
/// engine applies them to the process.
#[test]
fn calibrated_blas_thresholds_are_stored_and_applied() {
    let mut p = crossover::Profile::defaults();
    let mut cpu = p.device(DeviceKind::Cpu).unwrap().clone();
    assert!(cpu.blas_min_mnk.is_empty());
    let json = serde_json::to_string(&p).unwrap();
    assert!(!json.contains("blas_min_mnk"), "{json}");
    cpu.blas_min_mnk.insert("float32".into(), 1.5e9);
    cpu.blas_min_mnk.insert("float64".into(), f64::MAX);
    p.set_device(cpu.clone());
    let json = serde_json::to_string(&p).unwrap();
    let back = crossover::Profile::from_json(&json).unwrap();
    assert_eq!(
        back.device(DeviceKind::Cpu).unwrap().blas_min_mnk,
        cpu.blas_min_mnk
    );
    let _engine = crossover::Engine::new(back);
    assert_eq!(crossover::linalg::blas_min_mnk(DType::F32), 1.5e9);
    assert_eq!(crossover::linalg::blas_min_mnk(DType::F64), f64::MAX);
    for dtype in [DType::F32, DType::F64] {
        crossover::linalg::set_blas_min_mnk(dtype, None);
        assert_eq!(
            crossover::linalg::blas_min_mnk(dtype),
            crossover::linalg::blas_default_min_mnk()
        );
    }
    cpu.blas_min_mnk.insert("float32".into(), -3.0);
    p.set_device(cpu);
    let bad = serde_json::to_string(&p).unwrap();
    let why = crossover::Profile::from_json(&bad).unwrap_err();
    assert!(why.contains("blas_min_mnk.float32"), "{why}");
}

/// `Array::eval` places without the reasons in words, and skips a GPU's
/// prediction where the CPU finishes before the copies to it would: it
/// must still run each kernel where the worded plan (`Engine::plan`) puts
/// it, on inputs on the host, on the GPU, light and heavy, small and large.
#[test]
fn eval_runs_each_kernel_where_the_worded_plan_places_it() {
    let e = std::sync::Arc::new(engine());
    let (a, _) = array(&[1000], DType::F32, 1, 0.1, 1.0);
    let (big, _) = array(&[BIG], DType::F32, 2, 0.1, 1.0);
    let (resident, _) = array(&[BIG], DType::F32, 3, 0.1, 1.0);
    e.to_device(&resident, GPU).unwrap();
    let heavy = |x: &Array| {
        let mut y = x.sin().unwrap();
        for _ in 0..6 {
            y = y.exp().unwrap().cos().unwrap().mul(x).unwrap();
        }
        y
    };
    let cases: Vec<(&str, Array)> = vec![
        ("small on the host", a.mul(&a).unwrap().add(1.0).unwrap()),
        ("small, heavy", heavy(&a)),
        (
            "large on the host, light",
            big.mul(&big).unwrap().add(1.0).unwrap(),
        ),
        ("large on the host, heavy", heavy(&big)),
        (
            "large on the GPU, light",
            resident.mul(&resident).unwrap().add(1.0).unwrap(),
        ),
        ("a sum on the GPU", resident.sum(None, false).unwrap()),
    ];
    let mut seen = Vec::new();
    for (what, y) in cases {
        let planned = e.plan(std::slice::from_ref(&y), None).unwrap();
        let want = planned.devices();
        assert_eq!(want.len(), 1, "{what}: one kernel expected\n{planned}");
        let before = [e.kernels_run(CPU), e.kernels_run(GPU)];
        e.scope(|| y.eval()).unwrap();
        let ran: Vec<DeviceKind> = [CPU, GPU]
            .into_iter()
            .filter(|d| e.kernels_run(*d) > before[d.index()])
            .collect();
        assert_eq!(ran, want, "{what}\n{planned}");
        seen.push(want[0]);
    }
    // The cases cover both outcomes, so the comparison can fail.
    assert!(seen.contains(&CPU) && seen.contains(&GPU), "{seen:?}");
}
