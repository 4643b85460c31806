//! Sparse products through cuSPARSE on the CUDA device (SpMV, SpMM,
//! SpGEMM), against float64 references with stated tolerances: random
//! non-zero values, 1 to 1000 rows (across thread-block edges), empty
//! rows, float32 and float64; the SpGEMM product must be a valid CSR
//! matrix (sorted columns, no stored zeros). cuSPARSE sums in its own
//! order, so nothing here is compared bit for bit. Skipped, with the
//! reason, where there is no CUDA device or no cuSPARSE (no GPU is lent to
//! this project's CI: this runs on a machine with one,
//! `scripts/gpu-check.sh`).

use crate::common::*;
use crossover::sparse::{Csr, Values};
use crossover::{DType, DeviceKind};

/// The CUDA test engine with cuSPARSE, or `None` (the reason printed).
fn cusparse_engine() -> Option<TestEngine> {
    let Some(e) = engines().into_iter().find(|e| e.name == "cuda") else {
        let why = crossover::gpu::discover::cuda_device(0)
            .err()
            .unwrap_or_else(|| "the CUDA engine is not available".into());
        eprintln!("skipped: no CUDA device ({why})");
        return None;
    };
    if let Err(why) = crossover::cuda::libs::cusparse() {
        eprintln!("skipped: no cuSPARSE ({why})");
        return None;
    }
    if std::env::var("CROSSOVER_GPU_SPARSE").is_ok_and(|v| v.trim() == "core") {
        eprintln!("skipped: CROSSOVER_GPU_SPARSE=core");
        return None;
    }
    Some(e)
}

/// A random `m x n` matrix of `density` whose values are in ±[0.5, 1.5)
/// (never zero), every fifth row (from row 2) emptied, as `dtype`.
fn matrix(m: usize, n: usize, density: f64, seed: u64, dtype: DType) -> Csr {
    let r = Csr::random(m, n, density, seed, DType::F64).unwrap();
    let v = values(r.nnz(), seed + 7, -1.0, 1.0);
    let (mut indptr, mut idx, mut val) = (vec![0usize], Vec::new(), Vec::new());
    for i in 0..m {
        if i % 5 != 2 {
            let (p0, p1) = (r.indptr()[i], r.indptr()[i + 1]);
            for (&j, &x) in r.indices()[p0..p1].iter().zip(&v[p0..p1]) {
                idx.push(j as usize);
                val.push(x.signum() * (0.5 + x.abs()));
            }
        }
        indptr.push(idx.len());
    }
    match dtype {
        DType::F32 => Csr::from_parts(m, n, indptr, idx, val.iter().map(|&x| x as f32).collect()),
        _ => Csr::from_parts(m, n, indptr, idx, val),
    }
    .unwrap()
}

fn values_f64(c: &Csr) -> Vec<f64> {
    match c.values() {
        Values::F32(v) => v.iter().map(|&x| x as f64).collect(),
        Values::F64(v) => v.clone(),
    }
}

/// Machine epsilon of `dtype`.
fn eps(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    }
}

/// `y = a @ x` (`x` row-major `n x k`) in float64, with each entry's sum
/// of magnitudes and term count.
fn reference(a: &Csr, x: &[f64], k: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let av = values_f64(a);
    let m = a.nrows();
    let (mut y, mut mag, mut terms) = (vec![0.0; m * k], vec![0.0; m * k], vec![0.0; m * k]);
    for i in 0..m {
        let (p0, p1) = (a.indptr()[i], a.indptr()[i + 1]);
        for (&c, &w) in a.indices()[p0..p1].iter().zip(&av[p0..p1]) {
            let c = c as usize;
            for j in 0..k {
                let t = w * x[c * k + j];
                y[i * k + j] += t;
                mag[i * k + j] += t.abs();
                terms[i * k + j] += 1.0;
            }
        }
    }
    (y, mag, terms)
}

/// Each entry within `2 (terms + 1) eps sum |a_ik b_kj|`: every product
/// and every addition rounds once in the dtype, in any summation order.
#[track_caller]
fn assert_within(got: &[f64], want: &(Vec<f64>, Vec<f64>, Vec<f64>), dtype: DType, what: &str) {
    let (y, mag, terms) = want;
    assert_eq!(got.len(), y.len(), "{what}: length");
    for i in 0..y.len() {
        let tol = 2.0 * (terms[i] + 1.0) * eps(dtype) * mag[i];
        assert!(
            (got[i] - y[i]).abs() <= tol,
            "{what}: [{i}] got {}, want {} (tol {tol:e})",
            got[i],
            y[i]
        );
    }
}

/// The route the CUDA device gave the last kernel of `plan`.
fn route(plan: &crossover::Plan) -> String {
    plan.kernels
        .last()
        .and_then(|k| k.options.iter().find(|o| o.device == DeviceKind::Gpu))
        .and_then(|o| o.route.clone())
        .unwrap_or_default()
}

#[test]
fn cusparse_spmv_and_spmm_agree_with_float64_within_rounding() {
    let Some(gpu) = cusparse_engine() else { return };
    for dtype in [DType::F32, DType::F64] {
        for (m, n) in [(1, 1), (17, 5), (300, 257), (1000, 1000)] {
            let a = matrix(
                m,
                n,
                0.05_f64.max(1.0 / n as f64),
                (m * 3 + n) as u64,
                dtype,
            );
            for k in [0usize, 1, 3, 17] {
                // k = 0: a vector; else a row-major matrix, then its
                // transposed copy read as a view (the core's kernel).
                let shape: Vec<usize> = if k == 0 { vec![n] } else { vec![n, k] };
                let (x, xv) = array(&shape, dtype, (m + k) as u64, -1.0, 1.0);
                let want = reference(&a, &xv, k.max(1));
                let what = format!("{dtype} {m}x{n} k={k}");
                let (got, plan) = gpu.run(|| {
                    let y = a.matmul_dense(&x).unwrap();
                    let plan = gpu.engine.explain(std::slice::from_ref(&y), true).unwrap();
                    (y.to_vec_f64().unwrap(), plan)
                });
                assert_eq!(plan.kernels[0].device, DeviceKind::Gpu, "{what}");
                assert!(
                    route(&plan).starts_with("cuSPARSE"),
                    "{what}: {}",
                    route(&plan)
                );
                assert_within(&got, &want, dtype, &what);
                if k > 1 {
                    let (xt, _) = array(&[k, n], dtype, (m + k) as u64, -1.0, 1.0);
                    let xt = xt.transpose().unwrap();
                    let xtv = gpu.run(|| xt.to_vec_f64().unwrap());
                    let want = reference(&a, &xtv, k);
                    let got = gpu.run(|| a.matmul_dense(&xt).unwrap().to_vec_f64().unwrap());
                    assert_within(&got, &want, dtype, &format!("{what} transposed view"));
                }
            }
        }
    }
}

/// Checks `c` is a valid CSR matrix as the CPU stores a product (row
/// pointers from 0 to nnz, sorted unique columns in range, no stored
/// zeros) and within rounding of `a @ b` in float64 (entries `c` lacks
/// must be within their bound of zero).
#[track_caller]
fn assert_product(a: &Csr, b: &Csr, c: &Csr, what: &str) {
    let (m, n) = (a.nrows(), b.ncols());
    assert_eq!(c.shape(), [m, n], "{what}: shape");
    assert_eq!(c.dtype(), a.dtype(), "{what}: dtype");
    let p = c.indptr();
    assert_eq!(p.len(), m + 1, "{what}: row pointers");
    assert_eq!((p[0], p[m]), (0, c.nnz()), "{what}: row pointer ends");
    let cv = values_f64(c);
    let mut dense = vec![0.0; m * n];
    for i in 0..m {
        assert!(p[i] <= p[i + 1], "{what}: row {i} pointers decrease");
        let row = &c.indices()[p[i]..p[i + 1]];
        assert!(
            row.windows(2).all(|w| w[0] < w[1]),
            "{what}: row {i} sorted"
        );
        for (q, &j) in row.iter().enumerate() {
            assert!((j as usize) < n, "{what}: column {j} in row {i}");
            assert!(cv[p[i] + q] != 0.0, "{what}: a stored zero in row {i}");
            dense[i * n + j as usize] = cv[p[i] + q];
        }
    }
    // b as a dense row-major matrix: the reference is a @ b_dense.
    let bv = values_f64(b);
    let mut bd = vec![0.0; b.nrows() * n];
    for r in 0..b.nrows() {
        for q in b.indptr()[r]..b.indptr()[r + 1] {
            bd[r * n + b.indices()[q] as usize] = bv[q];
        }
    }
    // Terms counted per stored product only (a @ b_dense counts every
    // column of b's rows; the bound only grows).
    let want = reference(a, &bd, n);
    assert_within(&dense, &want, a.dtype(), what);
}

#[test]
fn cusparse_spgemm_is_a_valid_csr_within_rounding_of_float64() {
    let Some(gpu) = cusparse_engine() else { return };
    // (rows of a, inner, columns of b, density).
    let cases = [
        (1, 1, 1, 1.0),
        (17, 30, 9, 0.2),
        (300, 100, 257, 0.03),
        (1000, 300, 500, 0.01),
        (3, 1000, 7, 0.05),
    ];
    for dtype in [DType::F32, DType::F64] {
        for (m, k, n, density) in cases {
            let a = matrix(m, k, density, (m * 31 + k) as u64, dtype);
            let b = matrix(k, n, density, (k * 17 + n) as u64, dtype);
            let what = format!("{dtype} {m}x{k}x{n}");
            let (c, plan) = gpu.run(|| a.matmul_explained(&b).unwrap());
            assert_eq!(plan.kernels[0].device, DeviceKind::Gpu, "{what}");
            assert!(
                route(&plan).starts_with("cuSPARSE"),
                "{what}: {}",
                route(&plan)
            );
            assert_product(&a, &b, &c, &what);
            // The product's device arrays serve the next product.
            let (cc, _) = gpu.run(|| c.matmul_explained(&c.transpose()).unwrap());
            assert_product(&c, &c.transpose(), &cc, &format!("{what} then c @ c^T"));
        }
    }
    // A sum that cancels exactly (row 0: x - x) is not stored, as on the
    // CPU.
    let a = Csr::from_parts(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0f64, 1.0, 2.0]).unwrap();
    let b = Csr::from_parts(2, 2, vec![0, 1, 2], vec![0, 0], vec![0.5f64, -0.5]).unwrap();
    let c = gpu.run(|| a.matmul(&b).unwrap());
    assert_eq!(c.indptr(), &[0, 0, 1], "row 0 cancels to nothing");
    assert_eq!(values_f64(&c), vec![-1.0]);
}
