//! Dense linear algebra through cuSOLVER on the CUDA device, against the
//! CPU's results: solve, solve_spd, cholesky, qr, inv, det, svd, svdvals
//! and eigh on seeded well-conditioned matrices, float32 and float64,
//! batches of 1 and 3, sizes across 32 and 64; singular and indefinite
//! matrices give the CPU's typed errors. Skipped, with the reason, where
//! there is no CUDA device (no GPU is lent to this project's CI: this
//! runs on a machine with one, `scripts/gpu-check.sh`).

use crate::common::*;
use crossover::{linalg, Array, DType, DeviceKind, Error};

/// The CUDA test engine, or `None` (the reason printed).
pub(crate) fn cuda_engine() -> Option<TestEngine> {
    let e = engines().into_iter().find(|e| e.name == "cuda");
    if e.is_none() {
        let why = crossover::gpu::discover::cuda_device(0)
            .err()
            .unwrap_or_else(|| "the CUDA engine is not available".into());
        eprintln!("skipped: no CUDA device ({why})");
    }
    e
}

/// A named op whose outputs are compared between engines.
pub(crate) type Case<'a> = (&'static str, Box<dyn Fn() -> Vec<Array> + 'a>);

/// solve and inv of `singular`, cholesky and solve_spd of `indefinite`
/// fail on `gpu` with the CPU's typed error, word for word (any dtype:
/// only evaluated, never read back).
pub(crate) fn assert_failures_are_the_cpus(
    gpu: &TestEngine,
    cpu: &TestEngine,
    singular: &Array,
    indefinite: &Array,
    b: &Array,
) {
    let cases: Vec<Case<'_>> = vec![
        (
            "solve",
            Box::new(|| vec![linalg::solve(singular, b).unwrap()]),
        ),
        ("inv", Box::new(|| vec![linalg::inv(singular).unwrap()])),
        (
            "cholesky",
            Box::new(|| vec![linalg::cholesky(indefinite).unwrap()]),
        ),
        (
            "solve_spd",
            Box::new(|| vec![linalg::solve_spd(indefinite, b).unwrap()]),
        ),
    ];
    let dtype = singular.dtype();
    for (name, f) in &cases {
        let g = gpu
            .run(|| f().iter().try_for_each(Array::eval))
            .unwrap_err();
        let w = cpu
            .run(|| f().iter().try_for_each(Array::eval))
            .unwrap_err();
        assert!(matches!(g, Error::Numerical { .. }), "{name} {dtype}: {g}");
        assert_eq!(g.to_string(), w.to_string(), "{name} {dtype}");
    }
}

pub(crate) fn cpu_engine() -> TestEngine {
    engines()
        .into_iter()
        .find(|e| e.name == "cpu")
        .expect("a CPU engine")
}

/// `batch` seeded `n x n` matrices as f64 values: `R + n I` (diagonally
/// dominant: well conditioned), or `R R^T + n I` (positive definite) when
/// `spd`.
fn matrices(batch: usize, n: usize, seed: u64, spd: bool) -> Vec<f64> {
    let r = values(batch * n * n, seed, -1.0, 1.0);
    let mut out = vec![0.0; batch * n * n];
    for b in 0..batch {
        let m = &r[b * n * n..(b + 1) * n * n];
        for i in 0..n {
            for j in 0..n {
                let v = if spd {
                    (0..n).map(|p| m[i * n + p] * m[j * n + p]).sum::<f64>()
                } else {
                    m[i * n + j]
                };
                out[b * n * n + i * n + j] = v + if i == j { n as f64 } else { 0.0 };
            }
        }
    }
    out
}

fn make(v: &[f64], shape: &[usize], dtype: DType) -> Array {
    Array::from_vec(v.to_vec(), shape)
        .unwrap()
        .cast(dtype)
        .unwrap()
}

/// The op's outputs as f64, on `engine`.
fn run_on(engine: &TestEngine, f: &dyn Fn() -> Vec<Array>) -> Result<Vec<Vec<f64>>, Error> {
    engine.run(|| f().iter().map(|a| a.to_vec_f64()).collect())
}

/// `(m x k) @ (k x n)` on host values, per batch entry.
fn mm(a: &[f64], b: &[f64], (m, k, n): (usize, usize, usize)) -> Vec<f64> {
    let batch = a.len() / (m * k).max(1);
    let mut c = vec![0.0; batch * m * n];
    for q in 0..batch {
        for i in 0..m {
            for j in 0..n {
                c[q * m * n + i * n + j] = (0..k)
                    .map(|p| a[q * m * k + i * k + p] * b[q * k * n + p * n + j])
                    .sum();
            }
        }
    }
    c
}

/// Columns of Q (and rows of R, entries of vectors) flipped so that a
/// chosen reference entry is positive: factors unique up to sign compare.
fn signs(q: &mut [f64], (rows, cols): (usize, usize), by_column: bool) {
    let batch = q.len() / (rows * cols).max(1);
    for b in 0..batch {
        let m = &mut q[b * rows * cols..(b + 1) * rows * cols];
        let lines = if by_column { cols } else { rows };
        for l in 0..lines {
            let at = |t: usize| {
                if by_column {
                    t * cols + l
                } else {
                    l * cols + t
                }
            };
            let len = if by_column { rows } else { cols };
            let big = (0..len)
                .max_by(|&x, &y| m[at(x)].abs().total_cmp(&m[at(y)].abs()))
                .unwrap_or(0);
            if m[at(big)] < 0.0 {
                for t in 0..len {
                    m[at(t)] = -m[at(t)];
                }
            }
        }
    }
}

#[test]
fn cusolver_matches_the_cpu_on_well_conditioned_batches() {
    let Some(gpu) = cuda_engine() else { return };
    let cpu = cpu_engine();
    for dtype in [DType::F32, DType::F64] {
        for batch in [1usize, 3] {
            for n in [1usize, 31, 32, 33, 64, 65] {
                let what = format!("{dtype} batch {batch} n {n}");
                // Backward-stable factorisations of condition ~3 matrices.
                let tol = rtol(dtype, 64.0 * n as f64);
                let shape = [batch, n, n];
                let av = matrices(batch, n, 10 + n as u64, false);
                let sv = matrices(batch, n, 20 + n as u64, true);
                let bv = values(batch * n * 3, 30 + n as u64, -1.0, 1.0);
                let (a, s, b) = (
                    make(&av, &shape, dtype),
                    make(&sv, &shape, dtype),
                    make(&bv, &[batch, n, 3], dtype),
                );
                let before = gpu.engine.kernels_run(DeviceKind::Gpu);
                let ops: Vec<Case<'_>> = vec![
                    ("solve", Box::new(|| vec![linalg::solve(&a, &b).unwrap()])),
                    (
                        "solve_spd",
                        Box::new(|| vec![linalg::solve_spd(&s, &b).unwrap()]),
                    ),
                    ("cholesky", Box::new(|| vec![linalg::cholesky(&s).unwrap()])),
                    ("inv", Box::new(|| vec![linalg::inv(&a).unwrap()])),
                    ("det", Box::new(|| vec![linalg::det(&a).unwrap()])),
                    ("svdvals", Box::new(|| vec![linalg::svdvals(&a).unwrap()])),
                ];
                for (name, f) in &ops {
                    let got = run_on(&gpu, f.as_ref()).unwrap();
                    let want = run_on(&cpu, f.as_ref()).unwrap();
                    for (g, w) in got.iter().zip(&want) {
                        // Determinants are products of n pivots of ~n.
                        let scale = w.iter().fold(1.0f64, |m, x| m.max(x.abs()));
                        assert_close(g, w, tol, tol * scale, &format!("{name} {what}"));
                    }
                }
                // QR: Q and R with the same signs (LAPACK's and faer's).
                let qr = || {
                    let (q, r) = linalg::qr(&a).unwrap();
                    vec![q, r]
                };
                let (mut got, mut want) = (run_on(&gpu, &qr).unwrap(), run_on(&cpu, &qr).unwrap());
                for v in [&mut got, &mut want] {
                    signs(&mut v[0], (n, n), true);
                    signs(&mut v[1], (n, n), false);
                }
                assert_close(&got[0], &want[0], tol, tol, &format!("qr Q {what}"));
                assert_close(
                    &got[1],
                    &want[1],
                    tol,
                    tol * n as f64,
                    &format!("qr R {what}"),
                );
                // SVD: singular values, and U diag(s) V^T rebuilds A.
                let svd = || {
                    let (u, s, vt) = linalg::svd(&a).unwrap();
                    vec![u, s, vt]
                };
                let (g, w) = (run_on(&gpu, &svd).unwrap(), run_on(&cpu, &svd).unwrap());
                assert_close(&g[1], &w[1], tol, tol * n as f64, &format!("svd s {what}"));
                let mut us = g[0].clone();
                for (idx, x) in us.iter_mut().enumerate() {
                    let (q, j) = (idx / (n * n), idx % n);
                    *x *= g[1][q * n + j];
                }
                let back = mm(&us, &g[2], (n, n, n));
                let a_seen: Vec<f64> = run_on(&cpu, &|| vec![a.clone()]).unwrap().remove(0);
                assert_close(
                    &back,
                    &a_seen,
                    tol,
                    tol * n as f64,
                    &format!("svd U S Vt {what}"),
                );
                // eigh: eigenvalues, and eigenvectors up to sign.
                let eigh = || {
                    let (w, v) = linalg::eigh(&s).unwrap();
                    vec![w, v]
                };
                let (mut g, mut w) = (run_on(&gpu, &eigh).unwrap(), run_on(&cpu, &eigh).unwrap());
                let scale = w[0].iter().fold(1.0f64, |m, x| m.max(x.abs()));
                assert_close(&g[0], &w[0], tol, tol * scale, &format!("eigh w {what}"));
                signs(&mut g[1], (n, n), true);
                signs(&mut w[1], (n, n), true);
                // Eigenvectors of close eigenvalues are ill-determined:
                // compare them only where the spectrum is well separated.
                let gap = w[0]
                    .windows(2)
                    .map(|p| (p[1] - p[0]).abs())
                    .fold(f64::INFINITY, f64::min);
                if gap > 1e-2 * scale {
                    assert_close(
                        &g[1],
                        &w[1],
                        tol / gap * scale,
                        tol / gap * scale,
                        &format!("eigh V {what}"),
                    );
                }
                assert!(
                    gpu.engine.kernels_run(DeviceKind::Gpu) > before,
                    "{what}: nothing ran on the GPU"
                );
            }
        }
    }
}

#[test]
fn cusolver_failures_are_the_cpus_typed_errors() {
    let Some(gpu) = cuda_engine() else { return };
    let cpu = cpu_engine();
    for dtype in [DType::F32, DType::F64] {
        // A zero column: LU's second pivot is exactly zero.
        let singular = make(&[1.0, 0.0, 2.0, 0.0], &[2, 2], dtype);
        // Symmetric, indefinite: the leading minor of order 2 is -3.
        let indefinite = make(&[1.0, 2.0, 2.0, 1.0], &[2, 2], dtype);
        let b = make(&[1.0, 1.0], &[2], dtype);
        assert_failures_are_the_cpus(&gpu, &cpu, &singular, &indefinite, &b);
        // The determinant of a singular matrix is 0, not an error or NaN.
        let det = run_on(&gpu, &|| vec![linalg::det(&singular).unwrap()]).unwrap();
        assert_eq!(det[0], vec![0.0], "{dtype}");
        // NaN in an input: the CPU's error, from the GPU engine too.
        let nan = make(&[1.0, f64::NAN, 0.0, 1.0], &[2, 2], dtype);
        let g = run_on(&gpu, &|| vec![linalg::inv(&nan).unwrap()]).unwrap_err();
        let w = run_on(&cpu, &|| vec![linalg::inv(&nan).unwrap()]).unwrap_err();
        assert_eq!(g.to_string(), w.to_string(), "NaN {dtype}");
    }
}

/// explain names cuSOLVER's routines for dense ops on the CUDA device.
#[test]
fn explain_names_cusolver_routines() {
    let Some(gpu) = cuda_engine() else { return };
    let a = make(&matrices(1, 8, 3, false), &[8, 8], DType::F64);
    let x = linalg::inv(&a).unwrap();
    let text = gpu
        .engine
        .plan(
            std::slice::from_ref(&x),
            Some(crossover::Policy::Force(DeviceKind::Gpu)),
        )
        .unwrap()
        .to_string();
    assert!(text.contains("cuSOLVER getrf/getrs"), "{text}");
}
