//! Complex dense linear algebra through cuSOLVER on the CUDA device,
//! against the CPU's results: solve, solve_spd, cholesky, qr, inv, det,
//! svd, svdvals and eigh of complex64 and complex128, both parts of every
//! element non-zero, batches of 1 and 3, sizes across 32 and 64, square,
//! tall and wide; Hermitian positive definite matrices (with junk in the
//! triangle the op does not read) for cholesky, solve_spd and eigh;
//! singular and indefinite matrices give the CPU's typed errors. Factors
//! unique up to a unit phase per column (Q, U, V, eigenvectors) are
//! compared through `|X^H X_cpu| = I` and the products they rebuild.
//! Skipped, with the reason, where there is no CUDA device (the plans'
//! conjugations are checked without one by the host emulation,
//! `src/gpu/dense_emulation_tests.rs`).

use crate::common::*;
use crate::cuda_dense::{assert_failures_are_the_cpus, cpu_engine, cuda_engine, Case};
use crossover::{linalg, Array, DType, DeviceKind, Error};
use num_complex::Complex64 as C;

/// `len` seeded complex values in [-1, 1) + i [-1, 1).
fn complexes(len: usize, seed: u64) -> Vec<C> {
    let v = values(2 * len, seed, -1.0, 1.0);
    (0..len).map(|i| C::new(v[2 * i], v[2 * i + 1])).collect()
}

/// `batch` seeded row-major `m x n` matrices: `R + max(m, n) I`, or with
/// `hermitian` (square), `R R^H + n I` whose triangle above the diagonal
/// (`junk_upper`) or below it is replaced by junk.
fn matrices(batch: usize, (m, n): (usize, usize), seed: u64, herm: Option<bool>) -> Vec<C> {
    let r = complexes(batch * m * n, seed);
    let junk = complexes(batch * m * n, seed + 7919);
    let mut out = vec![C::new(0.0, 0.0); batch * m * n];
    for q in 0..batch {
        let at = |i: usize, j: usize| q * m * n + i * n + j;
        for i in 0..m {
            for j in 0..n {
                let d = if i == j { m.max(n) as f64 } else { 0.0 };
                out[at(i, j)] = match herm {
                    None => r[at(i, j)] + d,
                    Some(up) if (up && j > i) || (!up && j < i) => junk[at(i, j)],
                    Some(_) => {
                        let h: C = (0..n).map(|p| r[at(i, p)] * r[at(j, p)].conj()).sum();
                        if i == j {
                            C::new(h.re + d, 0.0)
                        } else {
                            h
                        }
                    }
                };
            }
        }
    }
    out
}

fn make(v: &[C], shape: &[usize], dtype: DType) -> Array {
    Array::from_vec(v.to_vec(), shape)
        .unwrap()
        .cast(dtype)
        .unwrap()
}

/// The op's outputs on `engine`, as complex128 values (real outputs with
/// imaginary parts 0).
fn run_on(engine: &TestEngine, f: &dyn Fn() -> Vec<Array>) -> Result<Vec<Vec<C>>, Error> {
    engine.run(|| {
        f().iter()
            .map(|a| {
                if a.dtype().is_complex() {
                    a.cast(DType::C128)?.to_vec::<C>()
                } else {
                    Ok(a.to_vec_f64()?
                        .into_iter()
                        .map(|x| C::new(x, 0.0))
                        .collect())
                }
            })
            .collect()
    })
}

/// `|g - w| <= tol * scale` elementwise, `scale` the largest finite `|w|`
/// (at least 1). Where the CPU overflowed (a complex64 determinant of
/// 33 x 33 matrices with diagonal 33 is about 33^33, past float32's
/// range: NaN on both devices on an H200, 2026-11-26; +-inf parts as
/// NumPy's since), the GPU must overflow too.
#[track_caller]
fn close(g: &[C], w: &[C], tol: f64, what: &str) {
    assert_eq!(g.len(), w.len(), "{what}: length");
    let scale = w
        .iter()
        .map(|z| z.norm())
        .filter(|x| x.is_finite())
        .fold(1.0, f64::max);
    for (i, (g, w)) in g.iter().zip(w).enumerate() {
        if !w.is_finite() {
            assert!(!g.is_finite(), "{what}[{i}]: got {g}, want {w} (overflow)");
            continue;
        }
        assert!(
            (g - w).norm() <= tol * scale,
            "{what}[{i}]: got {g}, want {w} (tol {:e})",
            tol * scale
        );
    }
}

/// `x^H y` per batch entry (`x`, `y` row-major `rows x cols`), as
/// magnitudes: the identity when the columns agree up to unit phases.
fn gram_abs(x: &[C], y: &[C], batch: usize, rows: usize, cols: usize) -> Vec<C> {
    let mut g = Vec::new();
    for q in 0..batch {
        let o = q * rows * cols;
        for i in 0..cols {
            for j in 0..cols {
                let s: C = (0..rows)
                    .map(|p| x[o + p * cols + i].conj() * y[o + p * cols + j])
                    .sum();
                g.push(C::new(s.norm(), 0.0));
            }
        }
    }
    g
}

fn identities(batch: usize, n: usize) -> Vec<C> {
    (0..batch * n * n)
        .map(|e| {
            C::new(
                f64::from(u8::from((e % (n * n)).is_multiple_of(n + 1))),
                0.0,
            )
        })
        .collect()
}

/// `(m x k) @ (k x n)` per batch entry, row-major.
fn mm(a: &[C], b: &[C], batch: usize, (m, k, n): (usize, usize, usize)) -> Vec<C> {
    let mut c = Vec::with_capacity(batch * m * n);
    for q in 0..batch {
        for i in 0..m {
            for j in 0..n {
                c.push(
                    (0..k)
                        .map(|p| a[q * m * k + i * k + p] * b[q * k * n + p * n + j])
                        .sum(),
                );
            }
        }
    }
    c
}

/// Row-major `x` (`rows x cols` per entry) conjugate-transposed.
fn adjoint(x: &[C], batch: usize, rows: usize, cols: usize) -> Vec<C> {
    let mut t = vec![C::new(0.0, 0.0); x.len()];
    for q in 0..batch {
        for i in 0..rows {
            for j in 0..cols {
                t[q * rows * cols + j * rows + i] = x[q * rows * cols + i * cols + j].conj();
            }
        }
    }
    t
}

#[test]
fn cusolver_matches_the_cpu_on_complex_batches() {
    let Some(gpu) = cuda_engine() else { return };
    let cpu = cpu_engine();
    for dtype in [DType::C64, DType::C128] {
        let eps = if dtype == DType::C64 {
            f32::EPSILON as f64
        } else {
            f64::EPSILON
        };
        for batch in [1usize, 3] {
            for n in [1usize, 17, 33, 65] {
                let what = format!("{dtype} batch {batch} n {n}");
                let tol = 64.0 * n as f64 * eps;
                let shape = [batch, n, n];
                let av = matrices(batch, (n, n), 40 + n as u64, None);
                // Junk above the diagonal: cholesky and eigh read the lower
                // triangle; solve_spd the upper one (junk below).
                let lv = matrices(batch, (n, n), 50 + n as u64, Some(true));
                let uv = matrices(batch, (n, n), 50 + n as u64, Some(false));
                let bv = complexes(batch * n * 3, 60 + n as u64);
                let (a, l, u, b) = (
                    make(&av, &shape, dtype),
                    make(&lv, &shape, dtype),
                    make(&uv, &shape, dtype),
                    make(&bv, &[batch, n, 3], dtype),
                );
                let before = gpu.engine.kernels_run(DeviceKind::Gpu);
                let ops: Vec<Case<'_>> = vec![
                    ("solve", Box::new(|| vec![linalg::solve(&a, &b).unwrap()])),
                    (
                        "solve_spd",
                        Box::new(|| vec![linalg::solve_spd(&u, &b).unwrap()]),
                    ),
                    ("cholesky", Box::new(|| vec![linalg::cholesky(&l).unwrap()])),
                    ("inv", Box::new(|| vec![linalg::inv(&a).unwrap()])),
                    ("det", Box::new(|| vec![linalg::det(&a).unwrap()])),
                    ("svdvals", Box::new(|| vec![linalg::svdvals(&a).unwrap()])),
                ];
                for (name, f) in &ops {
                    let got = run_on(&gpu, f.as_ref()).unwrap();
                    let want = run_on(&cpu, f.as_ref()).unwrap();
                    for (g, w) in got.iter().zip(&want) {
                        close(g, w, tol, &format!("{name} {what}"));
                    }
                }
                // eigh: eigenvalues; eigenvectors up to phase where the
                // spectrum is well separated.
                let eigh = || {
                    let (w, v) = linalg::eigh(&l).unwrap();
                    vec![w, v]
                };
                let (g, w) = (run_on(&gpu, &eigh).unwrap(), run_on(&cpu, &eigh).unwrap());
                close(&g[0], &w[0], tol, &format!("eigh w {what}"));
                let scale = w[0].iter().map(|z| z.norm()).fold(1.0, f64::max);
                let gap = w[0]
                    .windows(2)
                    .map(|p| (p[1].re - p[0].re).abs())
                    .fold(f64::INFINITY, f64::min);
                if gap > 1e-2 * scale {
                    close(
                        &gram_abs(&g[1], &w[1], batch, n, n),
                        &identities(batch, n),
                        tol / gap * scale,
                        &format!("eigh |V^H V_cpu| {what}"),
                    );
                }
                assert!(
                    gpu.engine.kernels_run(DeviceKind::Gpu) > before,
                    "{what}: nothing ran on the GPU"
                );
            }
            // QR and SVD: square, tall and wide.
            for (m, n) in [(33, 33), (65, 17), (17, 65)] {
                let what = format!("{dtype} batch {batch} {m}x{n}");
                let tol = 64.0 * m.max(n) as f64 * eps;
                let r = m.min(n);
                let av = matrices(batch, (m, n), 70 + m as u64 + n as u64, None);
                let a = make(&av, &[batch, m, n], dtype);
                let a_seen = run_on(&cpu, &|| vec![a.clone()]).unwrap().remove(0);
                let qr = || {
                    let (q, r) = linalg::qr(&a).unwrap();
                    vec![q, r]
                };
                let (g, w) = (run_on(&gpu, &qr).unwrap(), run_on(&cpu, &qr).unwrap());
                close(
                    &gram_abs(&g[0], &w[0], batch, m, r),
                    &identities(batch, r),
                    tol,
                    &format!("qr |Q^H Q_cpu| {what}"),
                );
                close(
                    &mm(&g[0], &g[1], batch, (m, r, n)),
                    &a_seen,
                    tol,
                    &format!("qr Q R {what}"),
                );
                let svd = || {
                    let (u, s, vt) = linalg::svd(&a).unwrap();
                    vec![u, s, vt]
                };
                let (g, w) = (run_on(&gpu, &svd).unwrap(), run_on(&cpu, &svd).unwrap());
                close(&g[1], &w[1], tol, &format!("svd s {what}"));
                let us: Vec<C> = g[0]
                    .iter()
                    .enumerate()
                    .map(|(e, z)| z * g[1][(e / (m * r)) * r + e % r].re)
                    .collect();
                close(
                    &mm(&us, &g[2], batch, (m, r, n)),
                    &a_seen,
                    tol,
                    &format!("svd U S Vh {what}"),
                );
                // The rows of Vh agree with the CPU's up to phase (distinct
                // singular values of a random matrix).
                close(
                    &gram_abs(
                        &adjoint(&g[2], batch, r, n),
                        &adjoint(&w[2], batch, r, n),
                        batch,
                        n,
                        r,
                    ),
                    &identities(batch, r),
                    1e3 * tol,
                    &format!("svd |V^H V_cpu| {what}"),
                );
            }
        }
    }
}

#[test]
fn cusolver_complex_failures_are_the_cpus_typed_errors() {
    let Some(gpu) = cuda_engine() else { return };
    let cpu = cpu_engine();
    let c = |re: f64, im: f64| C::new(re, im);
    for dtype in [DType::C64, DType::C128] {
        // Column 1 zero: LU's second pivot is exactly zero.
        let singular = make(
            &[c(1.0, 1.0), c(0.0, 0.0), c(2.0, -1.0), c(0.0, 0.0)],
            &[2, 2],
            dtype,
        );
        // Hermitian, indefinite: the leading minor of order 2 is 1 - 5 = -4.
        let indefinite = make(
            &[c(1.0, 0.0), c(2.0, 1.0), c(2.0, -1.0), c(1.0, 0.0)],
            &[2, 2],
            dtype,
        );
        let b = make(&[c(1.0, 1.0), c(1.0, -1.0)], &[2], dtype);
        assert_failures_are_the_cpus(&gpu, &cpu, &singular, &indefinite, &b);
        let det = run_on(&gpu, &|| vec![linalg::det(&singular).unwrap()]).unwrap();
        assert_eq!(det[0], vec![c(0.0, 0.0)], "{dtype}");
    }
}

/// explain names the complex routines (and the conjugating pack).
#[test]
fn explain_names_the_complex_routines() {
    let Some(gpu) = cuda_engine() else { return };
    let a = make(&matrices(1, (8, 8), 3, Some(true)), &[8, 8], DType::C128);
    let (w, _) = linalg::eigh(&a).unwrap();
    let text = gpu
        .engine
        .plan(
            std::slice::from_ref(&w),
            Some(crossover::Policy::Force(DeviceKind::Gpu)),
        )
        .unwrap()
        .to_string();
    assert!(text.contains("cuSOLVER heevd"), "{text}");
    assert!(text.contains("(conjugating)"), "{text}");
}
