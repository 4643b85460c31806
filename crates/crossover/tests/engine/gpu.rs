//! The GPU backend on the OpenCL device (pocl in CI): residency, memory,
//! the kernel cache, bit-exact agreement with the CPU interpreter, and
//! what a user sees when there is no device.

use crate::common::*;
use crossover::{Array, DType, DeviceKind, Generator};

/// The OpenCL test engine, or `None` (printed; a failure when required).
fn opencl_engine() -> Option<TestEngine> {
    engines().into_iter().find(|e| e.name == "opencl")
}

#[test]
fn fused_chain_and_reductions_match_float64_on_every_engine() {
    on_every_engine(|e| {
        for (k, &n) in EDGE_SIZES.iter().enumerate() {
            let (a, x) = array(&[n], DType::F32, 100 + k as u64, -3.0, 3.0);
            let (b, y) = array(&[n], DType::F32, 200 + k as u64, -3.0, 3.0);
            let f = a
                .mul(&b)
                .unwrap()
                .add(a.sin().unwrap())
                .unwrap()
                .add(b.cos().unwrap())
                .unwrap();
            let want: Vec<f64> = x
                .iter()
                .zip(&y)
                .map(|(p, q)| p * q + p.sin() + q.cos())
                .collect();
            assert_close(
                &f.to_vec_f64().unwrap(),
                &want,
                1e-6,
                1e-6,
                &format!("{} n={n}", e.name),
            );
            let s = f.sum(None, false).unwrap().item().unwrap();
            let ws: f64 = want.iter().sum();
            assert!(
                (s - ws).abs() <= 1e-5 * (1.0 + ws.abs()),
                "{}: sum {s} vs {ws}",
                e.name
            );
        }
    });
}

#[test]
fn philox_uniforms_are_bit_identical_to_the_cpu() {
    let Some(gpu) = opencl_engine() else { return };
    for dtype in [DType::F32, DType::F64] {
        let mut g = Generator::new(7);
        let u = g.uniform(&[10_001], dtype).unwrap();
        let on_gpu = gpu.run(|| u.mul(1.0).unwrap().to_vec_f64().unwrap());
        assert!(gpu.engine.kernels_run(DeviceKind::Gpu) > 0);
        let mut g = Generator::new(7);
        let u = g.uniform(&[10_001], dtype).unwrap();
        let on_cpu = u.to_vec_f64().unwrap();
        assert_eq!(on_gpu, on_cpu, "{dtype}");
    }
}

#[test]
fn a_chain_of_gpu_kernels_copies_each_input_once() {
    let Some(gpu) = opencl_engine() else { return };
    gpu.run(|| {
        let (a, x) = array(&[5000], DType::F64, 3, -1.0, 1.0);
        let t = a.mul(2.0).unwrap();
        t.eval().unwrap();
        let copies = gpu.engine.copies_to(DeviceKind::Gpu);
        assert_eq!(copies, 1, "the input went to the device once");
        assert_eq!(t.residency().unwrap().to_string(), "gpu");
        let u = t.add(1.0).unwrap().exp().unwrap();
        let s = u.sum(None, false).unwrap();
        s.eval().unwrap();
        assert_eq!(
            gpu.engine.copies_to(DeviceKind::Gpu),
            copies,
            "no copies between GPU kernels"
        );
        let want: f64 = x.iter().map(|v| (2.0 * v + 1.0).exp()).sum();
        assert!((s.item().unwrap() - want).abs() < 1e-9 * want.abs());
        assert_eq!(
            t.residency().unwrap().to_string(),
            "gpu",
            "an intermediate stays on the device"
        );
        let _ = Array::from_vec(vec![1.0f32], &[1]);
    });
}

#[test]
fn memory_its_owner_may_change_is_copied_to_the_device_for_each_evaluation() {
    use crossover::buffer::Buffer;
    use crossover::shape::Layout;
    let Some(gpu) = opencl_engine() else { return };
    gpu.run(|| {
        let n = 5003;
        let mut owner = Box::new(
            values(n, 41, -2.0, 2.0)
                .iter()
                .map(|&v| v as f32)
                .collect::<Vec<f32>>(),
        );
        let ptr = owner.as_mut_ptr();
        let first: Vec<f64> = owner.iter().map(|&v| v as f64).collect();
        // SAFETY: the Vec's heap memory stays where it is inside the owner,
        // which the buffer keeps alive; it is written below only while no
        // kernel reads it.
        let buffer = unsafe { Buffer::from_external(DType::F32, ptr as *const u8, n, owner) }
            .into_volatile();
        let a = Array::from_buffer(buffer, Layout::contiguous(&[n])).unwrap();
        let twice_sum = |a: &Array| {
            a.mul(2.0)
                .unwrap()
                .sum(None, false)
                .unwrap()
                .item()
                .unwrap()
        };
        let check = |got: f64, want: &[f64], what: &str| {
            let want: f64 = want.iter().map(|v| 2.0 * v).sum();
            assert!(
                (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                "{what}: {got} vs {want}"
            );
        };
        let before = gpu.engine.copies_to(DeviceKind::Gpu);
        check(twice_sum(&a), &first, "first");
        assert!(
            gpu.engine.kernels_run(DeviceKind::Gpu) > 0,
            "ran on the device"
        );
        let after_one = gpu.engine.copies_to(DeviceKind::Gpu);
        assert!(after_one > before, "copied in");
        // The owner changes its memory after an explicit move (which cannot
        // vouch for such memory): the next evaluation must see the change.
        gpu.engine.to_device(&a, DeviceKind::Gpu).unwrap();
        let second: Vec<f64> = values(n, 42, -3.0, 1.0);
        for (i, v) in second.iter().enumerate() {
            // SAFETY: in bounds of the owner's n elements; nothing reads them now.
            unsafe { *ptr.add(i) = *v as f32 };
        }
        let second: Vec<f64> = second.iter().map(|&v| v as f32 as f64).collect();
        check(twice_sum(&a), &second, "after the owner's change");
        assert!(
            gpu.engine.copies_to(DeviceKind::Gpu) > after_one,
            "copied again"
        );
        assert_eq!(
            a.residency().unwrap().to_string(),
            "host",
            "no device copy kept"
        );
    });
}

/// Runs a child test process, killing it (and failing) after `secs`: a
/// hang must fail CI, not stall it.
pub(crate) fn output_within(cmd: &mut std::process::Command, secs: u64) -> std::process::Output {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Drain the pipes on threads so a chatty child cannot block on them.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed().as_secs() > secs {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// Where Debian's Oclgrind installs its ICD.
const OCLGRIND_ICD: &str = "/usr/lib/oclgrind/liboclgrind-rt-icd.so";

/// One small shape of each kernel family: elementwise contiguous and
/// strided (a transposed view, a broadcast), every reduction layout (row
/// per work-item, group per segment with a merge, column per work-item),
/// random sources, and the library kernels (FFTs by radix-2 passes and by
/// Bluestein's algorithm among them). Run under Oclgrind by the test
/// below; on its own it is an ordinary (ignored) test.
#[test]
#[ignore = "run under Oclgrind by oclgrind_finds_no_race_or_out_of_bounds_access"]
fn kernel_families_for_oclgrind() {
    if std::env::var("XO_OCLGRIND_PLANT").is_ok() {
        plant_an_out_of_bounds_read();
        return;
    }
    let e = opencl_engine().expect("an OpenCL device (Oclgrind)");
    e.run(|| {
        let (a, x) = array(&[33, 70], DType::F32, 1, -2.0, 2.0);
        let (b, y) = array(&[70], DType::F32, 2, -2.0, 2.0);
        let (w, xw) = array(&[70, 33], DType::F32, 9, -2.0, 2.0);
        // Contiguous, broadcast and transposed reads in one kernel.
        let t = a.add(&b).unwrap().mul(w.transpose().unwrap()).unwrap();
        let got = t.to_vec_f64().unwrap();
        let want: Vec<f64> = (0..33 * 70)
            .map(|i| (x[i] + y[i % 70]) * xw[(i % 70) * 33 + i / 70])
            .collect();
        assert_close(&got, &want, 1e-6, 1e-6, "elementwise");
        let tt = a.transpose().unwrap().exp().unwrap();
        assert_eq!(tt.to_vec_f64().unwrap().len(), 33 * 70);
        // Reductions: short rows, long rows (segments and merge), columns.
        let rows = a.sum(Some(&[1]), false).unwrap().to_vec_f64().unwrap();
        assert!((rows[0] - x[..70].iter().sum::<f64>()).abs() < 1e-4);
        let (c, z) = array(&[3, 20_000], DType::F64, 3, -1.0, 1.0);
        let long = c.std(Some(&[1]), false, 0).unwrap().to_vec_f64().unwrap();
        assert_eq!(long.len(), 3);
        let m = c.max(None, false).unwrap().item().unwrap();
        assert_eq!(m, z.iter().cloned().fold(f64::MIN, f64::max));
        let (d, _) = array(&[300, 80], DType::F32, 4, -1.0, 1.0);
        let cols = d.argmin(Some(0)).unwrap().to_vec_f64().unwrap();
        assert_eq!(cols.len(), 80);
        let mut g = Generator::new(5);
        let u = g.uniform(&[1000], DType::F32).unwrap();
        let v = g.standard_normal(&[1000], DType::F64).unwrap();
        let s = u
            .mul(&v)
            .unwrap()
            .mean(None, false)
            .unwrap()
            .item()
            .unwrap();
        assert!(s.is_finite());
        // The core's matrix product: partial tiles on both axes and in k,
        // a transposed operand and a broadcast batch (barriers, local tiles).
        let (p, xp) = array(&[2, 65, 17], DType::F32, 6, -1.0, 1.0);
        let (q, xq) = array(&[66, 17], DType::F32, 7, -1.0, 1.0);
        let r = p.matmul(&q.transpose().unwrap()).unwrap();
        let got = r.to_vec_f64().unwrap();
        let want: f64 = (0..17)
            .map(|k| xp[65 * 17 + 64 * 17 + k] * xq[65 * 17 + k])
            .sum();
        assert!((got[65 * 66 + 64 * 66 + 65] - want).abs() < 1e-5);
        // Complex (32x32 tiles, separate re and im tiles) and bool
        // products: partial tiles, a transposed operand, a broadcast batch.
        use num_complex::Complex32;
        let zs = |n: usize, seed: u64| -> Vec<Complex32> {
            values(2 * n, seed, -1.0, 1.0)
                .chunks(2)
                .map(|p| Complex32::new(p[0] as f32, p[1] as f32))
                .collect()
        };
        let (za, zb) = (zs(2 * 33 * 17, 12), zs(35 * 17, 13));
        let zc = Array::from_vec(za.clone(), &[2, 33, 17])
            .unwrap()
            .matmul(
                &Array::from_vec(zb.clone(), &[35, 17])
                    .unwrap()
                    .transpose()
                    .unwrap(),
            )
            .unwrap();
        let got = zc.to_vec::<Complex32>().unwrap();
        let want: Complex32 = (0..17)
            .map(|k| za[33 * 17 + 32 * 17 + k] * zb[34 * 17 + k])
            .sum();
        assert!((got[33 * 35 + 32 * 35 + 34] - want).norm() < 1e-5);
        let (ba, bx) = array(&[20, 17], DType::Bool, 14, 0.0, 1.0);
        let (bb, by) = array(&[17, 70], DType::Bool, 15, 0.0, 1.0);
        let bc = ba.matmul(&bb).unwrap().to_vec::<bool>().unwrap();
        let want = (0..17).any(|k| bx[19 * 17 + k] > 0.5 && by[k * 70 + 69] > 0.5);
        assert_eq!(bc[19 * 70 + 69], want);
        // A sparse product (rows with no entries among them).
        let sp = crossover::sparse::Csr::random(40, 66, 0.05, 8, DType::F32).unwrap();
        let y = sp.matmul_dense(&q).unwrap();
        assert_eq!(y.to_vec_f64().unwrap().len(), 40 * 17);
        // A sparse-sparse product (count, then fill; two work-groups of
        // rows, empty rows among them), against the dense product.
        let sq = crossover::sparse::Csr::random(300, 40, 0.05, 11, DType::F32).unwrap();
        let c = sq.matmul(&sp).unwrap();
        assert!(c.nnz() > 0);
        let want = sq
            .to_dense()
            .unwrap()
            .matmul(&sp.to_dense().unwrap())
            .unwrap()
            .to_vec_f64()
            .unwrap();
        assert_close(
            &c.to_dense().unwrap().to_vec_f64().unwrap(),
            &want,
            1e-6,
            1e-6,
            "spgemm",
        );
        // Scans: one line cut into chunks (three stages), and a
        // transposed view along its middle axis (two other axes).
        let (l, xl) = array(&[1000], DType::F64, 10, -1.0, 1.0);
        let run = l.cumsum(None).unwrap().to_vec_f64().unwrap();
        assert!((run[999] - xl.iter().sum::<f64>()).abs() < 1e-12);
        let cube = d
            .reshape(&[30, 10, 80])
            .unwrap()
            .permute(&[2, 1, 0])
            .unwrap();
        let cp = cube.cumprod(Some(1)).unwrap().to_vec_f64().unwrap();
        assert_eq!(cp.len(), 300 * 80);
        // FFTs: a real transform of a view (load, passes, finish) and an
        // inverse real 2-D one (extend, real part).
        use crossover::fft::{self, Norm};
        let spec = fft::rfft(&a.transpose().unwrap(), Some(64), 0, Norm::Ortho).unwrap();
        assert_eq!(spec.shape(), &[33, 33]);
        let back = fft::irfft2(&spec, Some([32, 64]), Norm::Ortho).unwrap();
        assert_eq!(back.to_vec_f64().unwrap().len(), 32 * 64);
        // Bluestein's algorithm (lengths 12 and 5): chirp, filter, product
        // and unchirp around the passes, along a strided and the last axis.
        let odd = fft::fft(&a, Some(12), 0, Norm::Forward).unwrap();
        let odd = fft::ifft(&odd, Some(5), -1, Norm::Ortho).unwrap();
        assert_eq!(odd.shape(), &[12, 5]);
        assert!(odd.to_vec::<num_complex::Complex32>().unwrap()[0]
            .re
            .is_finite());
        assert!(e.engine.kernels_run(DeviceKind::Gpu) >= 15);
    });
}

/// A kernel that reads one element past its buffer: the control that shows
/// Oclgrind's reports reach the test below.
fn plant_an_out_of_bounds_read() {
    use crossover::gpu::api::{Arg, GpuApi};
    use crossover::gpu::codegen::{prelude, Dialect, Features};
    let found = crossover::gpu::discover::find_opencl(Some("")).unwrap();
    let api = crossover::opencl::OpenClApi::open(found).unwrap();
    let mut src = prelude(Dialect::OpenCl, Features { fp64: true });
    src.push_str(
        "KERNEL void planted(GLOBAL const f32* a, GLOBAL f32* b) {\n  const i64 i = GLOBAL_ID;\n  if (i < 256) b[i] = a[i + 1];\n}\n",
    );
    let m = api
        .compile(&src, &["planted".to_string()], false)
        .unwrap()
        .module;
    let a = api.alloc(256 * 4).unwrap();
    let b = api.alloc(256 * 4).unwrap();
    api.write(&a, &[0u8; 1024]).unwrap();
    api.launch(&m, 0, 1, &[Arg::Mem(&a), Arg::Mem(&b)]).unwrap();
    api.synchronize().unwrap();
}

/// Runs the families test (or the planted control) under Oclgrind; returns
/// whether it passed, its stdout and its stderr.
fn under_oclgrind(plant: bool) -> (bool, String, String) {
    // An ICD directory listing only Oclgrind, so it is the only device.
    let dir = std::env::temp_dir().join(format!("xo-oclgrind-{}-{plant}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("oclgrind.icd"), format!("{OCLGRIND_ICD}\n")).unwrap();
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "gpu::kernel_families_for_oclgrind",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("OCL_ICD_VENDORS", &dir)
    .env("OCLGRIND_DATA_RACES", "1")
    .env("OCLGRIND_CHECK_API", "1")
    .env("CROSSOVER_REQUIRE_OPENCL", "1")
    .env("CROSSOVER_KERNEL_CACHE", "off")
    .env_remove("CROSSOVER_TEST_OPENCL");
    if plant {
        cmd.env("XO_OCLGRIND_PLANT", "1");
    }
    let out = output_within(&mut cmd, 300);
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let passed = out.status.success() && stdout.contains("1 passed");
    (
        passed,
        stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Oclgrind's reports in a stderr.
fn oclgrind_reports(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("invalid read")
                || l.contains("invalid write")
                || l.contains("data race")
                || l.contains("divergence")
                || l.contains("uninitialized")
                || l.contains("oclgrind error")
        })
        .collect()
}

#[test]
fn oclgrind_finds_no_race_or_out_of_bounds_access() {
    let required = std::env::var("CROSSOVER_REQUIRE_OCLGRIND").is_ok_and(|v| v == "1");
    if !std::path::Path::new(OCLGRIND_ICD).exists() {
        assert!(
            !required,
            "CROSSOVER_REQUIRE_OCLGRIND=1 but {OCLGRIND_ICD} is missing"
        );
        eprintln!("skipping: Oclgrind is not installed (apt-get install oclgrind)");
        return;
    }
    let (ok, stdout, stderr) = under_oclgrind(true);
    assert!(ok, "the planted control failed to run:\n{stdout}\n{stderr}");
    assert!(
        oclgrind_reports(&stderr)
            .iter()
            .any(|l| l.to_ascii_lowercase().contains("invalid read")),
        "Oclgrind did not report the planted out-of-bounds read:\n{stderr}"
    );
    let (ok, stdout, stderr) = under_oclgrind(false);
    assert!(ok, "the kernels failed under Oclgrind:\n{stdout}\n{stderr}");
    let reports = oclgrind_reports(&stderr);
    assert!(reports.is_empty(), "Oclgrind reported:\n{stderr}");
}

/// An engine over a fresh OpenCL backend (its own memory cap and kernel
/// cache), or `None` without a device.
fn fresh_opencl(
    cap: Option<u64>,
    policy: crossover::Policy,
) -> Option<std::sync::Arc<crossover::Engine>> {
    let name = std::env::var("CROSSOVER_TEST_OPENCL").unwrap_or_default();
    let found = crossover::gpu::discover::find_opencl(Some(&name)).ok()?;
    let api = crossover::opencl::OpenClApi::open(found).ok()?;
    let b = crossover::gpu::GpuBackend::new(api, None, cap).ok()?;
    Some(std::sync::Arc::new(
        crossover::Engine::new(crossover::Profile::synthetic())
            .with_gpu(b)
            .with_policy(policy),
    ))
}

#[test]
fn out_of_device_memory_falls_back_to_the_cpu_or_errors_when_forced() {
    use crossover::{Error, Policy};
    // Each buffer of 1 MiB + 4 bytes takes a 2 MiB block: the planner sees
    // 2 MiB of work under a 3 MiB cap, the allocator runs out at run time.
    let n = (1 << 18) + 1;
    let (a, x) = array(&[n], DType::F32, 5, -1.0, 1.0);
    let Some(auto) = fresh_opencl(Some(3 << 20), Policy::Prefer(DeviceKind::Gpu)) else {
        assert!(!opencl_required(), "no OpenCL device");
        return;
    };
    let y = a.mul(3.0).unwrap();
    let plan = auto.evaluate(std::slice::from_ref(&y), None).unwrap();
    assert_eq!(plan.devices(), vec![DeviceKind::Cpu]);
    assert!(
        plan.kernels[0].reason.contains("out of memory"),
        "{}",
        plan.kernels[0].reason
    );
    let want: Vec<f64> = x.iter().map(|v| v * 3.0).collect();
    assert_close(
        &y.to_vec_f64().unwrap(),
        &want,
        1e-7,
        0.0,
        "fallback result",
    );
    let forced = fresh_opencl(Some(3 << 20), Policy::Force(DeviceKind::Gpu)).unwrap();
    let z = a.mul(4.0).unwrap();
    match forced.evaluate(std::slice::from_ref(&z), None) {
        Err(Error::OutOfDeviceMemory { device, .. }) => assert!(device.starts_with("opencl:")),
        other => panic!("expected an out-of-memory error, got {other:?}"),
    }
    // Work that does not fit the cap at all is never planned there.
    let big = fresh_opencl(Some(1 << 20), Policy::Prefer(DeviceKind::Gpu)).unwrap();
    let plan = big.plan(&[a.add(1.0).unwrap()], None).unwrap();
    assert_eq!(plan.devices(), vec![DeviceKind::Cpu]);
    assert!(
        plan.kernels[0].reason.contains("device memory"),
        "{}",
        plan.kernels[0].reason
    );
}

/// Runs one kernel on a backend (`CROSSOVER_TEST_CACHE_API`: `opencl` or
/// `cuda`) whose disk cache is `CROSSOVER_KERNEL_CACHE`, and prints the
/// cache's counters (a second process sees the first's kernels through the
/// disk only).
#[test]
#[ignore = "run in child processes by compiled_kernels_are_reused_by_a_second_process"]
fn kernel_cache_child() {
    use crossover::gpu::cache::{default_dir, CacheStats};
    use crossover::gpu::GpuBackend;
    use std::sync::Arc;
    type Stats = Box<dyn Fn() -> CacheStats>;
    let (b, stats): (Arc<dyn crossover::device::Backend>, Stats) =
        match std::env::var("CROSSOVER_TEST_CACHE_API").as_deref() {
            Ok("cuda") => {
                let api = crossover::cuda::CudaApi::open(0).unwrap();
                let b = Arc::new(GpuBackend::new(api, default_dir(), None).unwrap());
                (b.clone(), Box::new(move || b.cache().stats()))
            }
            _ => {
                let name = std::env::var("CROSSOVER_TEST_OPENCL").unwrap_or_default();
                let found = crossover::gpu::discover::find_opencl(Some(&name)).unwrap();
                let api = crossover::opencl::OpenClApi::open(found).unwrap();
                let b = Arc::new(GpuBackend::new(api, default_dir(), None).unwrap());
                (b.clone(), Box::new(move || b.cache().stats()))
            }
        };
    let e = Arc::new(
        crossover::Engine::new(crossover::Profile::synthetic())
            .with_gpu_backend(b)
            .with_policy(crossover::Policy::Force(DeviceKind::Gpu)),
    );
    let (a, x) = array(&[777], DType::F64, 8, -1.0, 1.0);
    let got = e.scope(|| a.mul(a.add(2.5).unwrap()).unwrap().to_vec_f64().unwrap());
    let want: Vec<f64> = x.iter().map(|v| v * (v + 2.5)).collect();
    assert_close(&got, &want, 1e-15, 0.0, "cached kernel");
    let s = stats();
    println!(
        "CACHE compiled={} loaded={} damaged={}",
        s.compiled, s.loaded, s.damaged
    );
}

fn kernel_cache_child_run(api: &str, dir: &std::path::Path) -> (u64, u64, u64) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "gpu::kernel_cache_child",
        "--exact",
        "--ignored",
        "--nocapture",
    ])
    .env("CROSSOVER_TEST_CACHE_API", api)
    .env("CROSSOVER_KERNEL_CACHE", dir);
    let out = output_within(&mut cmd, 300);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().find(|l| l.starts_with("CACHE ")).unwrap();
    let num = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .unwrap()
            .parse()
            .unwrap()
    };
    (num("compiled="), num("loaded="), num("damaged="))
}

/// Rewrites every file of a kernel cache with `damage`.
fn damage_cache(dir: &std::path::Path, damage: impl Fn(Vec<u8>) -> Vec<u8>) {
    let mut files = Vec::new();
    for sub in std::fs::read_dir(dir).unwrap() {
        for f in std::fs::read_dir(sub.unwrap().path()).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    assert!(!files.is_empty());
    for f in &files {
        std::fs::write(f, damage(std::fs::read(f).unwrap())).unwrap();
    }
}

/// The disk cache on each GPU API: a second process loads what the first
/// compiled; a file that fails its checksum, and a well-formed file whose
/// binary the driver refuses (a damaged CUBIN or OpenCL binary), are
/// recompiled, counted, rewritten, and the results stay right.
#[test]
fn compiled_kernels_are_reused_by_a_second_process() {
    let mut apis = Vec::new();
    match opencl() {
        Ok(_) => apis.push("opencl"),
        Err(e) => assert!(!opencl_required(), "no OpenCL device: {e}"),
    }
    match cuda() {
        Ok(_) => apis.push("cuda"),
        Err(e) => {
            assert!(!gpu_required(), "no CUDA device: {e}");
            eprintln!("skipped on CUDA: {e}");
        }
    }
    for api in apis {
        let dir = std::env::temp_dir().join(format!("xo-kcache-{api}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run = || kernel_cache_child_run(api, &dir);
        assert_eq!(run(), (1, 0, 0), "{api}: first process compiles");
        assert_eq!(run(), (0, 1, 0), "{api}: second process loads it");
        damage_cache(&dir, |mut b| {
            let last = b.len() - 1;
            b[last] ^= 0xff;
            b
        });
        assert_eq!(run(), (1, 0, 1), "{api}: a damaged file is recompiled");
        assert_eq!(run(), (0, 1, 0), "{api}: and rewritten");
        damage_cache(&dir, |_| {
            crossover::gpu::cache::pack(b"\x7fELF not a kernel binary")
        });
        assert_eq!(
            run(),
            (1, 0, 1),
            "{api}: a binary the driver refuses is recompiled"
        );
        assert_eq!(run(), (0, 1, 0), "{api}: and rewritten");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Checks, in a child process where libOpenCL cannot be loaded, that the
/// engine says why there is no GPU, computes on the CPU, and that forcing
/// the GPU is a typed error naming the reason.
#[test]
#[ignore = "run in a child process by no_opencl_library_leaves_the_cpu_and_says_why"]
fn no_opencl_child() {
    use crossover::{Error, Policy};
    let why = crossover::gpu::discover::opencl_devices()
        .as_ref()
        .unwrap_err();
    assert!(why.contains("no OpenCL library"), "{why}");
    let e = crossover::Engine::global();
    let gpu = e
        .devices()
        .into_iter()
        .find(|d| d.device == DeviceKind::Gpu)
        .unwrap();
    assert!(gpu.usable.unwrap_err().contains("no OpenCL library"));
    let (a, x) = array(&[100], DType::F32, 2, 0.0, 1.0);
    let y = a.sin().unwrap();
    assert_close(
        &y.to_vec_f64().unwrap(),
        &x.iter().map(|v| v.sin()).collect::<Vec<_>>(),
        1e-6,
        0.0,
        "cpu",
    );
    match a.cos().unwrap().eval_with(Policy::Force(DeviceKind::Gpu)) {
        Err(Error::Device { msg, .. }) => assert!(msg.contains("no OpenCL library"), "{msg}"),
        other => panic!("expected a device error, got {other:?}"),
    }
    println!("NO_OPENCL_OK");
}

#[test]
fn no_opencl_library_leaves_the_cpu_and_says_why() {
    let out = output_within(
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "gpu::no_opencl_child",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env("CROSSOVER_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1")
            // OpenCL named: on a machine with CUDA the engine would
            // otherwise use the CUDA device (H200, 2026-11-26).
            .env("CROSSOVER_GPU", "opencl"),
        300,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("NO_OPENCL_OK"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn views_of_up_to_eight_dims_on_every_engine() {
    on_every_engine(|e| {
        for nd in 1..=8usize {
            let shape: Vec<usize> = (0..nd).map(|d| 2 + (d * 3 + nd) % 4).collect();
            let n: usize = shape.iter().product();
            let (a, x) = array(&shape, DType::F64, 40 + nd as u64, -1.0, 1.0);
            // Reverse the axes, slice every other element of the last, add 1.
            let perm: Vec<usize> = (0..nd).rev().collect();
            let t = a.permute(&perm).unwrap();
            let mut key = vec![crossover::SliceArg::full(); nd];
            key[nd - 1] = crossover::SliceArg::Range {
                start: Some(0),
                stop: None,
                step: 2,
            };
            let v = t.slice(&key).unwrap().add(1.0).unwrap();
            let got = v.to_vec_f64().unwrap();
            let tshape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
            let mut want = Vec::new();
            for idx in indices(&tshape) {
                if idx[nd - 1] % 2 == 1 {
                    continue;
                }
                let orig: Vec<usize> = (0..nd).map(|d| idx[nd - 1 - d]).collect();
                want.push(x[flat(&orig, &shape)] + 1.0);
            }
            assert_eq!(got, want, "{} dims on {}", nd, e.name);
            assert!(n > 0);
        }
    });
}
