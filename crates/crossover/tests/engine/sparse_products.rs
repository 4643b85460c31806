//! Sparse times sparse on every engine: the GPU core's merge kernel (pocl
//! in CI) against the CPU's Gustavson product bit for bit, and against a
//! dense float64 reference with stated tolerances; across work-group
//! edges, empty rows and matrices, rows whose products pile onto a few
//! columns, sums that cancel to zero, stored zeros, -0.0 and NaN; where it
//! is placed and why.

use crate::common::*;
use crossover::device::SyntheticGpu;
use crossover::sparse::{Csr, Values};
use crossover::{DType, DeviceKind, Engine, Error, Policy, Profile};
use std::sync::Arc;

/// A CPU-only engine: the reference every device's bits are compared with.
fn cpu() -> Arc<Engine> {
    Arc::new(Engine::new(Profile::synthetic()).with_policy(Policy::Force(DeviceKind::Cpu)))
}

/// A random `m x n` pattern of `density` with signed values in [-1, 1)
/// (never all zero), as `dtype`.
fn signed(m: usize, n: usize, density: f64, seed: u64, dtype: DType) -> Csr {
    let r = Csr::random(m, n, density, seed, DType::F64).unwrap();
    let idx: Vec<usize> = r.indices().iter().map(|&j| j as usize).collect();
    let v = values(idx.len(), seed + 1000, -1.0, 1.0);
    match dtype {
        DType::F32 => Csr::from_parts(
            m,
            n,
            r.indptr().to_vec(),
            idx,
            v.iter().map(|&x| x as f32).collect(),
        ),
        _ => Csr::from_parts(m, n, r.indptr().to_vec(), idx, v),
    }
    .unwrap()
}

/// Values as f64, and their bit patterns (f32 or f64 bits).
fn values_of(c: &Csr) -> (Vec<f64>, Vec<u64>) {
    match c.values() {
        Values::F32(v) => (
            v.iter().map(|&x| x as f64).collect(),
            v.iter().map(|x| x.to_bits() as u64).collect(),
        ),
        Values::F64(v) => (v.clone(), v.iter().map(|x| x.to_bits()).collect()),
    }
}

fn dense(c: &Csr) -> Vec<f64> {
    let (v, _) = values_of(c);
    let mut d = vec![0.0; c.nrows() * c.ncols()];
    for i in 0..c.nrows() {
        for p in c.indptr()[i]..c.indptr()[i + 1] {
            d[i * c.ncols() + c.indices()[p] as usize] = v[p];
        }
    }
    d
}

/// Asserts `got` is the CPU's product bit for bit (pattern and values).
#[track_caller]
fn assert_same_bits(got: &Csr, want: &Csr, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.indptr(), want.indptr(), "{what}: row pointers");
    assert_eq!(got.indices(), want.indices(), "{what}: column indices");
    assert_eq!(values_of(got).1, values_of(want).1, "{what}: value bits");
}

/// Checks `c = a @ b` against float64 arithmetic: each entry within
/// `terms * eps(dtype) * sum |a_ik b_kj|` (each term and each addition
/// rounds once in the product's dtype); entries the reference has but `c`
/// does not must be within that bound of zero (an exact cancellation).
#[track_caller]
fn assert_close_to_f64(a: &Csr, b: &Csr, c: &Csr, what: &str) {
    let n = b.ncols();
    let (va, vb) = (values_of(a).0, values_of(b).0);
    let eps = match c.dtype() {
        DType::F32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    };
    let got = dense(c);
    // Row by row over the stored entries: sums, magnitudes, term counts.
    let (mut want, mut mag, mut terms) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for i in 0..a.nrows() {
        want.fill(0.0);
        mag.fill(0.0);
        terms.fill(0.0);
        let (p0, p1) = (a.indptr()[i], a.indptr()[i + 1]);
        for (&r, &x) in a.indices()[p0..p1].iter().zip(&va[p0..p1]) {
            let (q0, q1) = (b.indptr()[r as usize], b.indptr()[r as usize + 1]);
            for (&j, &y) in b.indices()[q0..q1].iter().zip(&vb[q0..q1]) {
                let (j, t) = (j as usize, x * y);
                want[j] += t;
                mag[j] += t.abs();
                terms[j] += 1.0;
            }
        }
        for j in 0..n {
            let tol = 2.0 * (terms[j] + 1.0) * eps * mag[j];
            let g = got[i * n + j];
            assert!(
                (g - want[j]).abs() <= tol,
                "{what}: [{i}, {j}] got {g}, want {} (tol {tol:e})",
                want[j]
            );
        }
    }
    let (v, _) = values_of(c);
    assert!(v.iter().all(|&x| x != 0.0), "{what}: a stored zero");
    for i in 0..c.nrows() {
        let row = &c.indices()[c.indptr()[i]..c.indptr()[i + 1]];
        assert!(
            row.windows(2).all(|w| w[0] < w[1]),
            "{what}: row {i} sorted"
        );
    }
}

/// Whether `plan`'s product ran through a vendor sparse library (cuSPARSE
/// on CUDA), whose sums agree with the CPU's within rounding only.
pub fn ran_on_vendor_library(plan: &crossover::plan::Plan) -> bool {
    plan.kernels[0].device == DeviceKind::Gpu
        && plan.kernels[0].options.iter().any(|o| {
            o.device == DeviceKind::Gpu
                && o.route
                    .as_deref()
                    .is_some_and(|r| r.starts_with("cuSPARSE"))
        })
}

/// The product on the current engine, checked against the CPU's bits
/// (within float64 tolerances alone where cuSPARSE ran it: its summation
/// order is its own) and float64; on a GPU API engine it must have run on
/// the device.
#[track_caller]
fn check(e: &TestEngine, a: &Csr, b: &Csr, what: &str) {
    let want = cpu().scope(|| a.matmul(b)).unwrap();
    let (got, plan) = a.matmul_explained(b).unwrap();
    if !ran_on_vendor_library(&plan) {
        assert_same_bits(&got, &want, what);
    }
    assert_close_to_f64(a, b, &got, what);
    if e.is_gpu_api() {
        assert_eq!(
            plan.devices(),
            vec![DeviceKind::Gpu],
            "{what}: ran on the device ({})",
            plan.kernels[0].reason
        );
    }
}

#[test]
fn spgemm_matches_the_cpus_bits_across_group_edges_on_every_engine() {
    on_every_engine(|e| {
        // (rows of a, inner, columns of b, density): rows crossing the
        // 256-item work-group edges, rectangular shapes, sparse rows (many
        // empty) and dense ones.
        let cases = [
            (1, 1, 1, 1.0),
            (63, 40, 70, 0.1),
            (64, 64, 64, 0.05),
            (65, 30, 65, 0.2),
            (255, 17, 3, 0.1),
            (257, 100, 9, 0.03),
            (1000, 300, 500, 0.01),
            (3, 1000, 7, 0.05),
        ];
        for (m, k, n, density) in cases {
            for (da, db) in [
                (DType::F64, DType::F64),
                (DType::F32, DType::F32),
                (DType::F32, DType::F64),
            ] {
                let a = signed(m, k, density, (m * 31 + k) as u64, da);
                let b = signed(k, n, density, (k * 17 + n) as u64, db);
                check(e, &a, &b, &format!("{m}x{k}x{n} {da}@{db}"));
            }
        }
        // float64 @ float32 computes in float64, as on the CPU.
        let a = signed(20, 30, 0.3, 1, DType::F64);
        let b = signed(30, 10, 0.3, 2, DType::F32);
        assert_eq!(a.matmul(&b).unwrap().dtype(), DType::F64);
        check(e, &a, &b, "f64@f32");
    });
}

#[test]
fn spgemm_edge_cases_match_the_cpu_on_every_engine() {
    on_every_engine(|e| {
        // Every product of a row lands on a few columns: a dense 1 x 300
        // row times a 300 x 3 dense matrix (300 terms per column), and a
        // 200 x 200 matrix at half density times a 200 x 5 one.
        for dtype in [DType::F32, DType::F64] {
            let a = signed(1, 300, 1.0, 5, dtype);
            let b = signed(300, 3, 1.0, 6, dtype);
            check(e, &a, &b, &format!("one dense row {dtype}"));
            let a = signed(200, 200, 0.5, 7, dtype);
            let b = signed(200, 5, 0.9, 8, dtype);
            check(e, &a, &b, &format!("many duplicates {dtype}"));
        }
        // Empty matrices: no rows, no inner dimension, no columns, no
        // entries.
        for (m, k, n) in [(0, 5, 3), (5, 0, 3), (4, 6, 0), (0, 0, 0)] {
            let a = Csr::from_parts(m, k, vec![0; m + 1], vec![], Vec::<f64>::new()).unwrap();
            let b = signed(k, n, 0.5, 9, DType::F64);
            let c = a.matmul(&b).unwrap();
            assert_eq!((c.shape(), c.nnz()), ([m, n], 0), "{m}x{k}x{n}");
            assert_eq!(c.indptr(), vec![0; m + 1].as_slice());
        }
        let a = signed(70, 40, 0.0, 10, DType::F32);
        let b = signed(40, 30, 0.2, 11, DType::F32);
        check(e, &a, &b, "a without entries");
        check(e, &b.transpose(), &a.transpose(), "b without entries");
        // Empty rows between full ones, exact cancellation (row 0: x - x),
        // stored zeros, -0.0 (0 + -0.0 is +0.0: not stored, as on the CPU)
        // and NaN (stored, and the CPU's NaN bits).
        let a = Csr::from_parts(
            5,
            3,
            vec![0, 2, 2, 4, 4, 6],
            vec![0, 1, 0, 2, 0, 2],
            vec![1.0f64, 1.0, 0.0, 2.0, -0.0, 3.0],
        )
        .unwrap();
        let b = Csr::from_parts(
            3,
            4,
            vec![0, 2, 4, 6],
            vec![0, 3, 0, 3, 1, 2],
            vec![0.5f64, 2.0, -0.5, -2.0, f64::NAN, 4.0],
        )
        .unwrap();
        let want = cpu().scope(|| a.matmul(&b)).unwrap();
        let (got, plan) = a.matmul_explained(&b).unwrap();
        if ran_on_vendor_library(&plan) {
            // Every sum here is exact in any order: the same pattern; NaN
            // bits are the library's.
            assert_eq!(got.indptr(), want.indptr(), "cuSPARSE: row pointers");
            assert_eq!(got.indices(), want.indices(), "cuSPARSE: columns");
        } else {
            assert_same_bits(&got, &want, "cancellation, zeros, -0.0, NaN");
        }
        assert_eq!(
            got.indptr(),
            &[0, 0, 0, 2, 2, 4],
            "row 0 cancels to nothing"
        );
        let (v, _) = values_of(&got);
        assert!(v[0].is_nan() && v[1] == 8.0, "{v:?}");
    });
}

#[test]
fn spgemm_shape_mismatch_is_the_cpus_typed_error_on_every_engine() {
    on_every_engine_lenient(|_e| {
        let a = signed(4, 5, 0.5, 1, DType::F64);
        let b = signed(4, 5, 0.5, 2, DType::F32);
        match a.matmul(&b) {
            Err(Error::Shape { op, msg, .. }) => {
                assert_eq!(op, "sparse_matmul");
                assert!(msg.contains("inner dimensions differ"), "{msg}");
            }
            other => panic!("expected a shape error, got {other:?}"),
        }
        assert!(matches!(a.matmul_plan(&b), Err(Error::Shape { .. })));
    });
}

/// Under `auto` the cost model places the product (small on the CPU,
/// large on a GPU the profile says is faster); a GPU without an
/// implementation declines with the reason, and a forced policy it cannot
/// honour is a typed error.
#[test]
fn spgemm_placement_follows_the_policy_and_the_cost_model() {
    let small = signed(30, 30, 0.1, 1, DType::F64);
    let big = signed(3000, 3000, 0.01, 2, DType::F64);
    let gpu = Arc::new(
        Engine::new(Profile::synthetic())
            .with_gpu(SyntheticGpu::new().with_library(&["sparse_matmul"])),
    );
    let plan = gpu.scope(|| small.matmul_plan(&small)).unwrap();
    assert_eq!(plan.devices(), vec![DeviceKind::Cpu], "{plan}");
    let plan = gpu.scope(|| big.matmul_plan(&big)).unwrap();
    assert_eq!(plan.devices(), vec![DeviceKind::Gpu], "{plan}");
    assert!(plan.kernels[0].reason.contains("fastest"), "{plan}");
    let want = cpu().scope(|| big.matmul(&big)).unwrap();
    let (got, plan) = gpu.scope(|| big.matmul_explained(&big)).unwrap();
    assert!(plan.ran && plan.devices() == vec![DeviceKind::Gpu]);
    assert_same_bits(&got, &want, "synthetic GPU");

    let none = Arc::new(
        Engine::new(Profile::synthetic())
            .with_gpu(SyntheticGpu::new())
            .with_policy(Policy::Prefer(DeviceKind::Gpu)),
    );
    let plan = none.scope(|| big.matmul_plan(&big)).unwrap();
    assert_eq!(plan.devices(), vec![DeviceKind::Cpu]);
    assert!(
        plan.kernels[0]
            .reason
            .contains("sparse_matmul has no GPU implementation"),
        "{plan}"
    );
    none.set_policy(Policy::Force(DeviceKind::Gpu));
    match none.scope(|| small.matmul(&small)) {
        Err(Error::Device { msg, .. }) => assert!(msg.contains("sparse_matmul"), "{msg}"),
        other => panic!("expected a device error, got {other:?}"),
    }
}

/// On the OpenCL device (pocl in CI) under `gpu-prefer`, explain names the
/// core's merge kernel, and a product's result feeds a sparse-dense
/// product there.
#[test]
fn spgemm_runs_on_the_opencl_device_and_explains_how() {
    let Some(gpu) = engines().into_iter().find(|e| e.name == "opencl") else {
        return;
    };
    let a = signed(300, 200, 0.02, 3, DType::F64);
    let b = signed(200, 100, 0.05, 4, DType::F64);
    let (c, plan) = gpu.run(|| a.matmul_explained(&b)).unwrap();
    let k = &plan.kernels[0];
    assert_eq!(k.device, DeviceKind::Gpu, "{plan}");
    let route = k
        .options
        .iter()
        .find(|o| o.device == DeviceKind::Gpu)
        .and_then(|o| o.route.clone())
        .unwrap_or_default();
    // OpenCL has no sparse library: the core's kernel, word for word.
    assert_eq!(
        route,
        "crossover's CSR merge kernel (count, then fill; the CPU's summation order)"
    );
    assert!(plan.to_string().contains("sparse_matmul"), "{plan}");
    let (x, _) = array(&[100, 3], DType::F64, 5, -1.0, 1.0);
    let want = cpu().scope(|| c.matmul_dense(&x).unwrap().to_vec_f64().unwrap());
    let got = gpu.run(|| {
        let y = c.matmul_dense(&x).unwrap();
        y.eval().unwrap();
        assert_eq!(y.residency().unwrap().to_string(), "gpu");
        y.to_vec_f64().unwrap()
    });
    assert_eq!(got, want);
}

/// A device whose memory cannot hold a product declines it with the sizes
/// (here pocl capped at 64 KiB), and the CPU computes it under
/// `gpu-prefer`.
#[test]
fn spgemm_too_big_for_the_device_runs_on_the_cpu_with_the_reason() {
    if opencl_or_skip().is_none() {
        return;
    }
    let name = std::env::var("CROSSOVER_TEST_OPENCL").unwrap_or_default();
    let found = crossover::gpu::discover::find_opencl(Some(&name)).unwrap();
    let api = crossover::opencl::OpenClApi::open(found).unwrap();
    let small = crossover::gpu::GpuBackend::new(api, None, Some(64 << 10)).unwrap();
    let engine = Arc::new(
        Engine::new(Profile::synthetic())
            .with_gpu(small)
            .with_policy(Policy::Prefer(DeviceKind::Gpu)),
    );
    let a = signed(400, 400, 0.05, 12, DType::F64);
    let (got, plan) = engine.scope(|| a.matmul_explained(&a)).unwrap();
    assert_eq!(plan.devices(), vec![DeviceKind::Cpu], "{plan}");
    assert!(
        plan.kernels[0].reason.contains("device memory"),
        "{}",
        plan.kernels[0].reason
    );
    let want = cpu().scope(|| a.matmul(&a)).unwrap();
    assert_same_bits(&got, &want, "declined");
}
