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

/// Where Debian's Oclgrind installs its ICD.
const OCLGRIND_ICD: &str = "/usr/lib/oclgrind/liboclgrind-rt-icd.so";

/// One small shape of each kernel family: elementwise contiguous and
/// strided (a transposed view, a broadcast), every reduction layout (row
/// per work-item, group per segment with a merge, column per work-item),
/// and random sources. Run under Oclgrind by the test below; on its own it
/// is an ordinary (ignored) test.
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
        assert!(e.engine.kernels_run(DeviceKind::Gpu) >= 7);
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
    let m = api.compile(&src, &["planted".to_string()]).unwrap().module;
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
    let out = cmd.output().unwrap();
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
