//! Library ops and other libraries' memory on the OpenCL device (pocl in
//! CI): the GPU core's matrix and sparse products and scans, and what a device
//! without CUDA does with CUDA pointers.

use crate::common::*;
use crossover::{Array, DType, DeviceKind};

/// The OpenCL test engine, or `None` (printed; a failure when required).
fn opencl_engine() -> Option<TestEngine> {
    engines().into_iter().find(|e| e.name == "opencl")
}

/// Matrix products run on the OpenCL device as one kernel each (the core's
/// own GEMM: pocl has no vendor BLAS), across its 64x64 tile and 16-deep
/// step edges, on both float dtypes, batched and broadcast, and on views.
#[test]
fn matmul_runs_on_the_opencl_device_across_tile_edges() {
    let Some(gpu) = opencl_engine() else { return };
    gpu.run(|| {
        for dtype in [DType::F32, DType::F64] {
            for (m, k, n) in [(63, 16, 65), (64, 17, 64), (129, 33, 1), (1, 100, 130)] {
                let (a, x) = array(&[m, k], dtype, (m * k) as u64, -1.0, 1.0);
                let (b, y) = array(&[k, n], dtype, (k * n + 1) as u64, -1.0, 1.0);
                a.eval().unwrap();
                b.eval().unwrap();
                let before = gpu.engine.kernels_run(DeviceKind::Gpu);
                let c = a.matmul(&b).unwrap();
                c.eval().unwrap();
                assert_eq!(
                    gpu.engine.kernels_run(DeviceKind::Gpu),
                    before + 1,
                    "{dtype} {m}x{k}x{n}: the product is one device kernel"
                );
                let mut want = vec![0.0; m * n];
                for i in 0..m {
                    for j in 0..n {
                        want[i * n + j] = (0..k).map(|p| x[i * k + p] * y[p * n + j]).sum();
                    }
                }
                // Accumulated in the operands' type (k terms of size <= 1).
                let tol = rtol(dtype, 4.0 * k as f64);
                assert_close(
                    &c.to_vec_f64().unwrap(),
                    &want,
                    tol,
                    tol,
                    &format!("{dtype} {m}x{k}x{n}"),
                );
            }
        }
        // A batch against a broadcast, transposed operand.
        let (a, x) = array(&[3, 70, 20], DType::F64, 41, -1.0, 1.0);
        let (bt, y) = array(&[66, 20], DType::F64, 42, -1.0, 1.0);
        let c = a.matmul(&bt.transpose().unwrap()).unwrap();
        assert_eq!(c.shape(), &[3, 70, 66]);
        c.eval().unwrap();
        assert_eq!(
            c.residency().unwrap().to_string(),
            "gpu",
            "the result stays on the device"
        );
        let got = c.to_vec_f64().unwrap();
        for bi in 0..3 {
            for (i, j) in [(0, 0), (69, 65), (31, 64), (64, 1)] {
                let want: f64 = (0..20)
                    .map(|p| x[bi * 1400 + i * 20 + p] * y[j * 20 + p])
                    .sum();
                let g = got[bi * 70 * 66 + i * 66 + j];
                assert!((g - want).abs() < 1e-13, "[{bi},{i},{j}] {g} vs {want}");
            }
        }
    });
}

/// Integer products run on the OpenCL device and wrap as NumPy's do (the
/// same values as the CPU's exact wrapping loop), across tile edges.
#[test]
fn integer_matmul_runs_on_the_opencl_device_and_wraps() {
    let Some(gpu) = opencl_engine() else { return };
    for dtype in [DType::I32, DType::I64] {
        // Entries near the type's limit overflow in every product.
        let big = if dtype == DType::I32 { 4e4 } else { 3e9 };
        for (m, k, n) in [(65, 17, 66), (3, 40, 1)] {
            let (a, _) = array(&[m, k], dtype, (m + k) as u64, -big, big);
            let (b, _) = array(&[k, n], dtype, (k + n) as u64, -big, big);
            let want = a.matmul(&b).unwrap();
            let got = gpu.run(|| {
                let before = gpu.engine.kernels_run(DeviceKind::Gpu);
                let c = a
                    .matmul(&b.transpose().unwrap().transpose().unwrap())
                    .unwrap();
                c.eval().unwrap();
                assert_eq!(gpu.engine.kernels_run(DeviceKind::Gpu), before + 1);
                c
            });
            assert_eq!(got.dtype(), dtype);
            let what = format!("{dtype} {m}x{k}x{n}");
            if dtype == DType::I32 {
                let w = want.to_vec::<i32>().unwrap();
                assert!(
                    w.iter().any(|v| v.unsigned_abs() > 1 << 30),
                    "{what}: wraps"
                );
                assert_eq!(got.to_vec::<i32>().unwrap(), w, "{what}");
            } else {
                assert_eq!(
                    got.to_vec::<i64>().unwrap(),
                    want.to_vec::<i64>().unwrap(),
                    "{what}"
                );
            }
        }
    }
}

/// Sparse products run on the OpenCL device (one kernel each) with the
/// CPU's summation order, so their bits equal the CPU's; a loop of
/// products (PageRank's power iteration) keeps its vector on the device.
#[test]
fn sparse_products_run_on_the_opencl_device_with_the_cpus_bits() {
    use crossover::sparse::Csr;
    let Some(gpu) = opencl_engine() else { return };
    for dtype in [DType::F32, DType::F64] {
        let a = Csr::random(300, 257, 0.03, 9, dtype).unwrap();
        let (x, _) = array(&[257, 3], dtype, 10, -1.0, 1.0);
        let (v, _) = array(&[257], dtype, 11, -1.0, 1.0);
        let on_cpu = (
            a.matmul_dense(&x).unwrap().to_vec_f64().unwrap(),
            a.matmul_dense(&v).unwrap().to_vec_f64().unwrap(),
        );
        let on_gpu = gpu.run(|| {
            let before = gpu.engine.kernels_run(DeviceKind::Gpu);
            let y = a.matmul_dense(&x).unwrap();
            y.eval().unwrap();
            assert_eq!(gpu.engine.kernels_run(DeviceKind::Gpu), before + 1);
            (
                y.to_vec_f64().unwrap(),
                a.matmul_dense(&v).unwrap().to_vec_f64().unwrap(),
            )
        });
        assert_eq!(on_gpu, on_cpu, "{dtype}");
    }
    // Power iteration on a square matrix: r <- 0.85 A r + 0.15 / n.
    let n = 500;
    let a = Csr::random(n, n, 0.01, 12, DType::F64).unwrap();
    let step = |r: &Array| {
        a.matmul_dense(r)
            .unwrap()
            .mul(0.85)
            .unwrap()
            .add(0.15 / n as f64)
            .unwrap()
    };
    let r0 = Array::full(&[n], 1.0 / n as f64, DType::F64).unwrap();
    let mut want = r0.clone();
    for _ in 0..5 {
        want = step(&want);
        want.eval().unwrap();
    }
    let got = gpu.run(|| {
        let copies = gpu.engine.copies_to(DeviceKind::Gpu);
        let mut r = r0.clone();
        for _ in 0..5 {
            r = step(&r);
            r.eval().unwrap();
            assert_eq!(r.residency().unwrap().to_string(), "gpu");
        }
        assert!(
            gpu.engine.copies_to(DeviceKind::Gpu) <= copies + 1,
            "the vector went to the device once"
        );
        r.to_vec_f64().unwrap()
    });
    assert_close(
        &got,
        &want.to_vec_f64().unwrap(),
        1e-12,
        1e-15,
        "power iteration",
    );
}

/// Scans run on the OpenCL device as one kernel (three stages when lines
/// are cut into chunks): one long line, many short ones, every axis of a
/// cube, a transposed view whose other axes do not merge, and integers
/// wrapping exactly as on the CPU.
#[test]
fn scans_run_on_the_opencl_device_across_chunk_edges() {
    let Some(gpu) = opencl_engine() else { return };
    // (shape, axis): one line cut into thousands of chunks, a line just
    // past one chunk, many short lines, and a cube along each axis.
    let cases: &[(&[usize], usize)] = &[
        (&[300_007], 0),
        (&[65], 0),
        (&[70_001, 3], 1),
        (&[37, 5, 130], 0),
        (&[37, 5, 130], 1),
        (&[37, 5, 130], 2),
    ];
    for dtype in [DType::F32, DType::F64, DType::I64] {
        for &(shape, axis) in cases {
            for prod in [false, true] {
                // Products of values near 1 stay finite over long lines.
                let (lo, hi) = match (dtype, prod) {
                    (DType::I64, _) => (-4.0, 5.0),
                    (_, true) => (0.999, 1.001),
                    _ => (-1.0, 1.0),
                };
                let (x, _) = array(shape, dtype, shape.len() as u64 + axis as u64, lo, hi);
                x.eval().unwrap();
                let scan = |x: &Array| {
                    let a = Some(axis as isize);
                    if prod { x.cumprod(a) } else { x.cumsum(a) }.unwrap()
                };
                let want = scan(&x);
                let got = gpu.run(|| {
                    let before = gpu.engine.kernels_run(DeviceKind::Gpu);
                    let y = scan(&x);
                    y.eval().unwrap();
                    assert_eq!(
                        gpu.engine.kernels_run(DeviceKind::Gpu),
                        before + 1,
                        "{dtype} {shape:?} axis {axis}: a device kernel"
                    );
                    assert_eq!(y.residency().unwrap().to_string(), "gpu");
                    y
                });
                let what = format!("{dtype} {shape:?} axis {axis} prod={prod}");
                if dtype == DType::I64 {
                    assert_eq!(
                        got.to_vec::<i64>().unwrap(),
                        want.to_vec::<i64>().unwrap(),
                        "{what}"
                    );
                } else {
                    // Chunked sums differ from the CPU's sequential order by
                    // rounding only (both accumulate in double precision).
                    let tol = rtol(dtype, 2.0) + 1e-12;
                    assert_close(
                        &got.to_vec_f64().unwrap(),
                        &want.to_vec_f64().unwrap(),
                        tol,
                        tol,
                        &what,
                    );
                }
            }
        }
    }
    // A transposed view: its other axes (strides 1 and 4) do not merge.
    let (x, _) = array(&[2, 3, 4], DType::F64, 5, -1.0, 1.0);
    let v = x.permute(&[2, 1, 0]).unwrap();
    let want = v.cumsum(Some(2)).unwrap().to_vec_f64().unwrap();
    let got = gpu.run(|| {
        let y = v.cumsum(Some(2)).unwrap();
        y.eval().unwrap();
        assert_eq!(y.residency().unwrap().to_string(), "gpu");
        y.to_vec_f64().unwrap()
    });
    assert_close(&got, &want, 1e-15, 1e-15, "scan of a transposed view");
}

/// explain says how the device runs each library op: on OpenCL (no vendor
/// libraries) the core's own kernels, by name; the CPU says nothing more.
#[test]
fn explain_names_how_the_device_runs_library_ops() {
    let Some(gpu) = opencl_engine() else { return };
    let (a, _) = array(&[70, 64], DType::F32, 1, -1.0, 1.0);
    let cases: [(Array, &str); 4] = [
        (
            a.matmul(&a.transpose().unwrap()).unwrap(),
            "crossover's tiled matmul kernel",
        ),
        (
            crossover::fft::fft(&a, None, -1, crossover::fft::Norm::Backward).unwrap(),
            "crossover's radix-2 FFT kernels",
        ),
        (
            a.cumsum(Some(0)).unwrap(),
            "crossover's three-stage scan kernel",
        ),
        (
            a.cast(DType::I32)
                .unwrap()
                .matmul(&a.cast(DType::I32).unwrap().transpose().unwrap())
                .unwrap(),
            "integer products wrap",
        ),
    ];
    for (y, route) in cases {
        let plan = gpu
            .engine
            .plan(
                std::slice::from_ref(&y),
                Some(crossover::Policy::Force(DeviceKind::Gpu)),
            )
            .unwrap();
        let text = plan.to_string();
        assert!(
            text.contains("runs as   : ") && text.contains(route),
            "{text}"
        );
        let on_cpu = gpu
            .engine
            .plan(
                std::slice::from_ref(&y),
                Some(crossover::Policy::Force(DeviceKind::Cpu)),
            )
            .unwrap()
            .to_string();
        assert!(!on_cpu.contains("runs as"), "{on_cpu}");
    }
}

/// Other libraries' memory: an OpenCL device has no address to export and
/// refuses CUDA pointers with the reason; an engine without a GPU says so.
#[test]
fn foreign_gpu_memory_needs_the_cuda_backend() {
    use std::sync::Arc;
    let keep: Arc<dyn std::any::Any + Send + Sync> = Arc::new(());
    let cpu_only = crossover::Engine::new(crossover::Profile::defaults())
        .with_policy(crossover::Policy::Force(DeviceKind::Cpu));
    let (a, _) = array(&[100], DType::F32, 1, -1.0, 1.0);
    a.eval().unwrap();
    assert!(
        a.device_address().is_none(),
        "host memory has no device address"
    );
    let e = cpu_only
        .import_gpu_memory(0x1000, &[4], DType::F32, Arc::clone(&keep))
        .unwrap_err();
    assert!(e.to_string().contains("CUDA backend"), "{e}");
    let Some(gpu) = opencl_engine() else { return };
    let e = gpu
        .engine
        .import_gpu_memory(0x1000, &[4], DType::F32, Arc::clone(&keep))
        .unwrap_err();
    assert!(e.to_string().contains("CUDA backend"), "{e}");
    gpu.run(|| {
        let y = a.mul(2.0).unwrap();
        y.eval().unwrap();
        assert_eq!(y.residency().unwrap().to_string(), "gpu");
        assert!(y.device_address().is_none(), "OpenCL memory has no address");
    });
}

/// Dense linear algebra on the OpenCL device: declined with the reason (no
/// dense solver kernels there; cuSOLVER runs them on CUDA), so a forced GPU
/// policy is an error naming it, and under auto the CPU computes it, with
/// the CPU's results and typed errors.
#[test]
fn dense_solvers_are_declined_on_opencl_and_run_on_the_cpu() {
    use crossover::{linalg, Error, Policy};
    let Some(gpu) = opencl_engine() else { return };
    let n = 33;
    // Diagonally dominant: well conditioned.
    let mut av = values(n * n, 5, -1.0, 1.0);
    for i in 0..n {
        av[i * n + i] += n as f64;
    }
    let a = Array::from_vec(av.clone(), &[n, n]).unwrap();
    let (b, bv) = array(&[n], DType::F64, 6, -1.0, 1.0);
    gpu.run(|| {
        let x = linalg::solve(&a, &b).unwrap();
        let plan = gpu
            .engine
            .plan(std::slice::from_ref(&x), Some(Policy::Auto))
            .unwrap()
            .to_string();
        assert!(
            plan.contains("no dense solver kernels") && plan.contains("cuSOLVER"),
            "{plan}"
        );
        match x.eval_with(Policy::Force(DeviceKind::Gpu)) {
            Err(e) => assert!(e.to_string().contains("no dense solver kernels"), "{e}"),
            Ok(()) => panic!("a forced GPU solve ran on OpenCL"),
        }
        let before = gpu.engine.kernels_run(DeviceKind::Gpu);
        let got = x.to_vec_f64().unwrap();
        assert_eq!(
            gpu.engine.kernels_run(DeviceKind::Gpu),
            before,
            "ran on the CPU"
        );
        let ax: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| av[i * n + j] * got[j]).sum())
            .collect();
        assert_close(&ax, &bv, 1e-12, 1e-12, "A x = b");
        // The CPU's typed errors and NumPy's determinant of a singular matrix.
        let sing = Array::from_vec(vec![1.0f64, 0.0, 2.0, 0.0], &[2, 2]).unwrap();
        let e = linalg::inv(&sing).unwrap().eval().unwrap_err();
        assert!(
            matches!(e, Error::Numerical { op: "inv", .. }) && e.to_string().contains("singular"),
            "{e}"
        );
        assert_eq!(linalg::det(&sing).unwrap().to_vec_f64().unwrap(), vec![0.0]);
        let indefinite = Array::from_vec(vec![1.0f32, 2.0, 2.0, 1.0], &[2, 2]).unwrap();
        let e = linalg::cholesky(&indefinite).unwrap().eval().unwrap_err();
        assert!(e.to_string().contains("not positive definite"), "{e}");
    });
}
