//! Library-op workloads: matmul, fft2, solve, svd, sparse_matmul.
//!
//! Their float64 references avoid a second O(n^3) computation: products
//! and factorisations are checked through random probe vectors (Freivalds'
//! check: `C x` against `A (B x)`), which catches any wrong entry with high
//! probability at O(n^2) cost; the FFT is checked by Parseval's identity
//! and a few bins computed directly.

use super::workloads::{rel_err, rel_norm_err, uniform, Case, Check, Output, Work, Workload};
use crossover::fft::{self, Norm};
use crossover::linalg;
use crossover::sparse::{Csr, Values};
use crossover::{Array, DType, Error, Generator, Result};
use num_complex::Complex32;

/// `y = M x` for a row-major `rows x cols` f32 matrix, in f64.
fn matvec(m: &[f32], cols: usize, x: &[f64]) -> Vec<f64> {
    m.chunks(cols)
        .map(|row| row.iter().zip(x).map(|(&a, &b)| a as f64 * b).sum())
        .collect()
}

/// A seeded probe vector with entries in [-1, 1).
fn probe(n: usize, seed: u64) -> Result<Vec<f64>> {
    let v = Generator::new(seed).uniform(&[n], DType::F64)?;
    Ok(v.to_vec::<f64>()?.iter().map(|x| 2.0 * x - 1.0).collect())
}

// ---- matmul: A @ B, f32 NxN ------------------------------------------------

pub struct Matmul;

struct MatmulCase {
    a: Array,
    b: Array,
}

impl Workload for Matmul {
    fn name(&self) -> &'static str {
        "matmul"
    }
    fn size_meaning(&self) -> &'static str {
        "N for NxN f32 matrices"
    }
    fn elements(&self, n: usize) -> usize {
        n * n
    }
    fn dtype(&self) -> &'static str {
        "float32"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        Ok(Box::new(MatmulCase {
            a: uniform(11, &[n, n], DType::F32)?,
            b: uniform(12, &[n, n], DType::F32)?,
        }))
    }
}

impl Case for MatmulCase {
    fn run(&mut self, _: &str) -> Result<Output> {
        let c = self.a.matmul(&self.b)?;
        c.eval()?;
        Ok(Output::Dense(c))
    }
    fn check(&mut self, _: &str, out: &Output) -> Result<Check> {
        let n = self.a.shape()[0];
        let x = probe(n, 13)?;
        let (a, b) = (self.a.to_vec::<f32>()?, self.b.to_vec::<f32>()?);
        let got = matvec(&out.dense()?.to_vec::<f32>()?, n, &x);
        let want = matvec(&a, n, &matvec(&b, n, &x));
        // Rounding in C = AB is bounded entrywise by a multiple of
        // |A||B| (not of |C|, which cancels), so measure the error of Cx
        // against |A|(|B||x|): f32 summation of K terms gives about
        // sqrt(K) units of roundoff (measured: 10-100x below this).
        let abs = |m: &[f32]| m.iter().map(|v| v.abs()).collect::<Vec<f32>>();
        let abs_x: Vec<f64> = x.iter().map(|v| v.abs()).collect();
        let scale = matvec(&abs(&a), n, &matvec(&abs(&b), n, &abs_x));
        let err = got
            .iter()
            .zip(&want)
            .zip(&scale)
            .map(|((g, w), s)| (g - w).abs() / s.max(f64::MIN_POSITIVE))
            .fold(0.0, f64::max);
        let tol = (n as f64).sqrt() * f32::EPSILON as f64 / 2.0;
        Ok(Check::within(err, tol, "probe err / |A||B||x|"))
    }
    fn work(&self, _: &str) -> Work {
        let n = self.a.shape()[0] as f64;
        Work {
            bytes: 12.0 * n * n,
            flops: 2.0 * n * n * n,
            samples: 0.0,
        }
    }
}

// ---- fft2: complex FFT of a real f32 NxN image ------------------------------

pub struct Fft2;

struct Fft2Case {
    x: Array,
}

impl Workload for Fft2 {
    fn name(&self) -> &'static str {
        "fft2"
    }
    fn size_meaning(&self) -> &'static str {
        "N for an NxN real f32 input (complex64 output)"
    }
    fn elements(&self, n: usize) -> usize {
        n * n
    }
    fn dtype(&self) -> &'static str {
        "float32"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        Ok(Box::new(Fft2Case {
            x: uniform(14, &[n, n], DType::F32)?,
        }))
    }
}

impl Case for Fft2Case {
    fn run(&mut self, _: &str) -> Result<Output> {
        let y = fft::fft2(&self.x, Norm::Backward)?;
        y.eval()?;
        Ok(Output::Dense(y))
    }
    fn check(&mut self, _: &str, out: &Output) -> Result<Check> {
        let n = self.x.shape()[0];
        let x = self.x.to_vec::<f32>()?;
        let y = out.dense()?.to_vec::<Complex32>()?;
        // Parseval: sum |Y|^2 = N^2 sum |x|^2.
        let ex: f64 = x.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() * (n * n) as f64;
        let ey: f64 = y.iter().map(|c| (c.norm_sqr()) as f64).sum();
        let mut err = rel_err(ey, ex);
        // A few bins directly: Y[k, l] = sum x[r, c] e^{-2 pi i (kr + lc)/N}.
        let scale = x.iter().map(|&v| v.abs() as f64).sum::<f64>();
        for (k, l) in [(0, 0), (1, 0), (0, 1), (3, n / 2), (n - 1, n / 3 + 1)] {
            let (mut re, mut im) = (0f64, 0f64);
            for r in 0..n {
                for c in 0..n {
                    let ph =
                        -2.0 * std::f64::consts::PI * (((k * r + l * c) % n) as f64) / n as f64;
                    let v = x[r * n + c] as f64;
                    re += v * ph.cos();
                    im += v * ph.sin();
                }
            }
            let g = y[k * n + l];
            let e = ((g.re as f64 - re).hypot(g.im as f64 - im)) / scale;
            err = err.max(e);
        }
        Ok(Check::within(err, 1e-5, "parseval/bin rel err"))
    }
    fn work(&self, _: &str) -> Work {
        let n = self.x.shape()[0] as f64;
        Work {
            bytes: 4.0 * n * n + 8.0 * n * n,
            // The usual 5 N log2 N convention for complex transforms.
            flops: 5.0 * n * n * (n * n).log2(),
            samples: 0.0,
        }
    }
}

// ---- solve: SPD f32 NxN system, one right-hand side -------------------------

pub struct Solve;

struct SolveCase {
    a: Array,
    b: Array,
}

impl Workload for Solve {
    fn name(&self) -> &'static str {
        "solve"
    }
    fn size_meaning(&self) -> &'static str {
        "N for an NxN symmetric positive definite f32 system"
    }
    fn elements(&self, n: usize) -> usize {
        n * n
    }
    fn dtype(&self) -> &'static str {
        "float32"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        // A = R R^T / n + I: symmetric positive definite, well conditioned.
        let r = uniform(15, &[n, n], DType::F32)?.sub(0.5)?;
        let eye = Array::from_vec(
            (0..n * n)
                .map(|i| if i % (n + 1) == 0 { 1.0f32 } else { 0.0 })
                .collect(),
            &[n, n],
        )?;
        let a = r.matmul(&r.transpose()?)?.div(n as f64)?.add(&eye)?;
        a.eval()?;
        Ok(Box::new(SolveCase {
            a,
            b: uniform(16, &[n], DType::F32)?,
        }))
    }
}

impl Case for SolveCase {
    fn run(&mut self, _: &str) -> Result<Output> {
        let x = linalg::solve_spd(&self.a, &self.b)?;
        x.eval()?;
        Ok(Output::Dense(x))
    }
    fn check(&mut self, _: &str, out: &Output) -> Result<Check> {
        let n = self.a.shape()[0];
        let x: Vec<f64> = out
            .dense()?
            .to_vec::<f32>()?
            .iter()
            .map(|&v| v as f64)
            .collect();
        let ax = matvec(&self.a.to_vec::<f32>()?, n, &x);
        let b: Vec<f64> = self.b.to_vec::<f32>()?.iter().map(|&v| v as f64).collect();
        Ok(Check::within(
            rel_norm_err(&ax, &b),
            1e-4,
            "residual ||Ax-b||/||b||",
        ))
    }
    fn work(&self, _: &str) -> Work {
        let n = self.a.shape()[0] as f64;
        Work {
            bytes: 4.0 * n * n,
            // Cholesky n^3/3 plus two triangular solves.
            flops: n * n * n / 3.0 + 2.0 * n * n,
            samples: 0.0,
        }
    }
}

// ---- svd: thin SVD of an f32 NxN matrix -------------------------------------

pub struct Svd;

struct SvdCase {
    a: Array,
}

impl Workload for Svd {
    fn name(&self) -> &'static str {
        "svd"
    }
    fn largest_default(&self) -> usize {
        2048
    }
    fn size_note(&self) -> Option<&'static str> {
        Some("svd stops at 2048 by default: its time grows as N^3, and one 4096 SVD takes about a minute on a 2-core machine (pass --sizes to go further)")
    }
    fn size_meaning(&self) -> &'static str {
        "N for an NxN f32 matrix (thin U, s, Vt)"
    }
    fn elements(&self, n: usize) -> usize {
        n * n
    }
    fn dtype(&self) -> &'static str {
        "float32"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        Ok(Box::new(SvdCase {
            a: uniform(17, &[n, n], DType::F32)?.sub(0.5)?,
        }))
    }
}

impl Case for SvdCase {
    fn run(&mut self, _: &str) -> Result<Output> {
        let (u, s, vt) = linalg::svd(&self.a)?;
        Array::eval_all(&[u.clone(), s.clone(), vt.clone()])?;
        Ok(Output::Many(vec![u, s, vt]))
    }
    fn check(&mut self, _: &str, out: &Output) -> Result<Check> {
        let Output::Many(parts) = out else {
            return Err(Error::InvalidArgument {
                op: "bench",
                msg: "expected U, s, Vt".into(),
            });
        };
        let n = self.a.shape()[0];
        let (u, s, vt) = (
            parts[0].to_vec::<f32>()?,
            parts[1].to_vec::<f32>()?,
            parts[2].to_vec::<f32>()?,
        );
        let k = s.len();
        // A x against U diag(s) Vt x, and U^T U w against w (orthogonality).
        let x = probe(n, 18)?;
        let want = matvec(&self.a.to_vec::<f32>()?, n, &x);
        let mut t = matvec(&vt, n, &x);
        t.iter_mut().zip(&s).for_each(|(v, &si)| *v *= si as f64);
        let got = matvec(&u, k, &t);
        let recon = rel_norm_err(&got, &want);
        let w = probe(k, 19)?;
        let uw = matvec(&u, k, &w);
        let mut utuw = vec![0f64; k];
        for (row, &c) in u.chunks(k).zip(&uw) {
            utuw.iter_mut()
                .zip(row)
                .for_each(|(o, &r)| *o += r as f64 * c);
        }
        let orth = rel_norm_err(&utuw, &w);
        let sorted = s.windows(2).all(|p| p[0] >= p[1]);
        let mut c = Check::within(recon.max(orth), 1e-4, "recon/orth rel err");
        if !sorted {
            c.ok = false;
            c.detail.push_str("; singular values not descending");
        }
        Ok(c)
    }
    fn work(&self, _: &str) -> Work {
        let n = self.a.shape()[0] as f64;
        Work {
            bytes: 12.0 * n * n,
            // LAPACK's gesdd estimate for square thin SVD with vectors.
            flops: 22.0 * n * n * n,
            samples: 0.0,
        }
    }
}

// ---- sparse_matmul: CSR A @ CSR B, f32 NxN, density 0.01 ---------------------

pub struct SparseMatmul;

/// Density of the sparse operands.
pub const SPARSE_DENSITY: f64 = 0.01;

struct SparseCase {
    a: Csr,
    b: Csr,
}

impl Workload for SparseMatmul {
    fn name(&self) -> &'static str {
        "sparse_matmul"
    }
    fn size_meaning(&self) -> &'static str {
        "N for NxN f32 CSR matrices of density 0.01"
    }
    fn elements(&self, n: usize) -> usize {
        n * n
    }
    fn dtype(&self) -> &'static str {
        "float32"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        Ok(Box::new(SparseCase {
            a: Csr::random(n, n, SPARSE_DENSITY, 20, DType::F32)?,
            b: Csr::random(n, n, SPARSE_DENSITY, 21, DType::F32)?,
        }))
    }
}

/// `y = M x` for a CSR matrix, in f64.
fn spmv(m: &Csr, x: &[f64]) -> Result<Vec<f64>> {
    let Values::F32(vals) = m.values() else {
        return Err(Error::InvalidArgument {
            op: "bench",
            msg: "expected f32 CSR values".into(),
        });
    };
    let (ptr, idx) = (m.indptr(), m.indices());
    Ok((0..m.nrows())
        .map(|r| {
            (ptr[r]..ptr[r + 1])
                .map(|j| vals[j] as f64 * x[idx[j] as usize])
                .sum()
        })
        .collect())
}

impl Case for SparseCase {
    fn run(&mut self, _: &str) -> Result<Output> {
        Ok(Output::Sparse(self.a.matmul(&self.b)?))
    }
    fn check(&mut self, _: &str, out: &Output) -> Result<Check> {
        let Output::Sparse(c) = out else {
            return Err(Error::InvalidArgument {
                op: "bench",
                msg: "expected a sparse result".into(),
            });
        };
        let x = probe(self.b.ncols(), 22)?;
        let got = spmv(c, &x)?;
        let want = spmv(&self.a, &spmv(&self.b, &x)?)?;
        Ok(Check::within(
            rel_norm_err(&got, &want),
            1e-5,
            "probe rel err",
        ))
    }
    fn work(&self, _: &str) -> Work {
        let nnz = (self.a.nnz() + self.b.nnz()) as f64;
        let n = self.a.nrows() as f64;
        Work {
            bytes: 8.0 * nnz,
            // Expected multiply-adds: nnz(A) * (nnz per row of B).
            flops: 2.0 * self.a.nnz() as f64 * (self.b.nnz() as f64 / n),
            samples: 0.0,
        }
    }
}
