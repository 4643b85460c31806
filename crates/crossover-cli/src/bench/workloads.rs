//! The benchmark workloads and their float64 references.
//!
//! Each workload makes its inputs outside the timed region (evaluated, so
//! the timed run does only the work), runs through the engine, and checks
//! the result against a plain-Rust float64 computation on the same inputs.

use crossover::rng::{fill_uniform_f32_portable, RandomKey};
use crossover::sparse::Csr;
use crossover::{Array, DType, Error, Generator, Result};

/// What one run of a case moves and computes, for rates in the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Work {
    /// Minimal bytes read and written.
    pub bytes: f64,
    pub flops: f64,
    /// Samples (Monte Carlo).
    pub samples: f64,
}

/// The outcome of checking a result against its float64 reference.
#[derive(Clone, Debug)]
pub struct Check {
    pub ok: bool,
    pub detail: String,
}

impl Check {
    pub(super) fn within(err: f64, tol: f64, what: &str) -> Check {
        Check {
            ok: err <= tol,
            detail: format!("{what} {err:.1e} (tol {tol:.0e})"),
        }
    }
}

/// A benchmark workload.
pub trait Workload: Sync {
    fn name(&self) -> &'static str;
    /// Ops within the workload (`sum`, `mean`, `std` for reduction).
    fn variants(&self) -> &'static [&'static str] {
        &[]
    }
    /// The largest of [`STANDARD_SIZES`] run by default; larger sizes take
    /// too long or too much memory on a typical machine.
    fn largest_default(&self) -> usize {
        10_000
    }
    /// Why the default sizes stop below 10,000, for the report's notes.
    fn size_note(&self) -> Option<&'static str> {
        None
    }
    /// What a size means, for help text.
    fn size_meaning(&self) -> &'static str;
    fn elements(&self, size: usize) -> usize;
    fn dtype(&self) -> &'static str;
    /// Makes inputs (evaluated) for one size.
    fn prepare(&self, size: usize) -> Result<Box<dyn Case>>;
}

/// Prepared inputs of a workload at one size.
pub trait Case {
    /// Runs `variant` to completion and returns the result.
    fn run(&mut self, variant: &str) -> Result<Output>;
    /// Checks a result of `run` against the float64 reference.
    fn check(&mut self, variant: &str, result: &Output) -> Result<Check>;
    fn work(&self, variant: &str) -> Work;
}

/// What a case's run produced.
pub enum Output {
    Dense(Array),
    /// Several arrays (e.g. U, s, Vt).
    Many(Vec<Array>),
    Sparse(Csr),
}

impl From<Array> for Output {
    fn from(a: Array) -> Output {
        Output::Dense(a)
    }
}

impl Output {
    /// The single dense array, or an error naming what was there.
    pub fn dense(&self) -> Result<&Array> {
        match self {
            Output::Dense(a) => Ok(a),
            Output::Many(_) => Err(Error::InvalidArgument {
                op: "bench",
                msg: "expected one array, got several".into(),
            }),
            Output::Sparse(_) => Err(Error::InvalidArgument {
                op: "bench",
                msg: "expected a dense array, got CSR".into(),
            }),
        }
    }
}

/// The sizes published comparisons use: N for an NxN problem.
pub const STANDARD_SIZES: [usize; 7] = [100, 256, 512, 1024, 2048, 4096, 10_000];

/// `--quick`: three sizes, enough for a line per device.
pub const QUICK_SIZES: [usize; 3] = [100, 300, 1000];

/// All workloads, in report order.
pub fn all() -> Vec<Box<dyn Workload>> {
    use super::library::{Fft2, Matmul, Solve, SparseMatmul, Svd};
    vec![
        Box::new(Elementwise),
        Box::new(Reduction),
        Box::new(Matmul),
        Box::new(Fft2),
        Box::new(Solve),
        Box::new(Svd),
        Box::new(SparseMatmul),
        Box::new(MonteCarloPi),
        Box::new(ConditionalAccumulate),
        Box::new(ImagePipeline),
    ]
}

pub(super) fn uniform(seed: u64, shape: &[usize], dtype: DType) -> Result<Array> {
    let a = Generator::new(seed).uniform(shape, dtype)?;
    a.eval()?;
    Ok(a)
}

/// Largest |got - want| / (atol/rtol + |want|) style error: max over i of
/// |g - w| / (1 + |w|).
fn max_mixed_err(got: &[f64], want: &[f64]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            if g.is_nan() != w.is_nan() {
                f64::INFINITY
            } else {
                (g - w).abs() / (1.0 + w.abs())
            }
        })
        .fold(0.0, f64::max)
}

/// ||got - want|| / ||want|| (Euclidean norms).
pub(super) fn rel_norm_err(got: &[f64], want: &[f64]) -> f64 {
    let diff: f64 = got.iter().zip(want).map(|(g, w)| (g - w).powi(2)).sum();
    let norm: f64 = want.iter().map(|w| w * w).sum();
    if got.len() != want.len() || diff.is_nan() {
        return f64::INFINITY;
    }
    (diff / norm.max(f64::MIN_POSITIVE)).sqrt()
}

pub(super) fn rel_err(got: f64, want: f64) -> f64 {
    (got - want).abs() / want.abs().max(f64::MIN_POSITIVE)
}

// ---- elementwise: a*b + sin(a) + cos(b), f32 NxN -------------------------

struct Elementwise;

struct ElementwiseCase {
    a: Array,
    b: Array,
}

impl Workload for Elementwise {
    fn name(&self) -> &'static str {
        "elementwise"
    }
    fn size_meaning(&self) -> &'static str {
        "side of an NxN f32 array"
    }
    fn elements(&self, n: usize) -> usize {
        n * n
    }
    fn dtype(&self) -> &'static str {
        "float32"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        Ok(Box::new(ElementwiseCase {
            a: uniform(1, &[n, n], DType::F32)?,
            b: uniform(2, &[n, n], DType::F32)?,
        }))
    }
}

impl Case for ElementwiseCase {
    fn run(&mut self, _: &str) -> Result<Output> {
        let (a, b) = (&self.a, &self.b);
        let y = a.mul(b)?.add(&a.sin()?)?.add(&b.cos()?)?;
        y.eval()?;
        Ok(y.into())
    }
    fn check(&mut self, _: &str, out: &Output) -> Result<Check> {
        let y = out.dense()?;
        let (a, b) = (self.a.to_vec::<f32>()?, self.b.to_vec::<f32>()?);
        let want: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(&x, &z)| {
                let (x, z) = (x as f64, z as f64);
                x * z + x.sin() + z.cos()
            })
            .collect();
        Ok(Check::within(
            max_mixed_err(&y.to_vec_f64()?, &want),
            1e-6,
            "max err",
        ))
    }
    fn work(&self, _: &str) -> Work {
        let n = self.a.numel() as f64;
        Work {
            bytes: 12.0 * n,
            flops: 43.0 * n,
            samples: 0.0,
        }
    }
}

// ---- reduction: sum, mean, std of one f32 NxN array ------------------------

struct Reduction;

struct ReductionCase {
    x: Array,
    host: Option<Vec<f32>>,
}

impl Workload for Reduction {
    fn name(&self) -> &'static str {
        "reduction"
    }
    fn variants(&self) -> &'static [&'static str] {
        &["sum", "mean", "std"]
    }
    fn size_meaning(&self) -> &'static str {
        "side of an NxN f32 array"
    }
    fn elements(&self, n: usize) -> usize {
        n * n
    }
    fn dtype(&self) -> &'static str {
        "float32"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        Ok(Box::new(ReductionCase {
            x: uniform(3, &[n, n], DType::F32)?,
            host: None,
        }))
    }
}

impl Case for ReductionCase {
    fn run(&mut self, variant: &str) -> Result<Output> {
        let r = match variant {
            "sum" => self.x.sum(None, false)?,
            "mean" => self.x.mean(None, false)?,
            _ => self.x.std(None, false, 0)?,
        };
        r.eval()?;
        Ok(r.into())
    }
    fn check(&mut self, variant: &str, out: &Output) -> Result<Check> {
        let r = out.dense()?;
        if self.host.is_none() {
            self.host = Some(self.x.to_vec::<f32>()?);
        }
        let x = self.host.as_deref().unwrap_or_default();
        let n = x.len() as f64;
        let sum: f64 = x.iter().map(|&v| v as f64).sum();
        let mean = sum / n;
        let want = match variant {
            "sum" => sum,
            "mean" => mean,
            _ => (x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n).sqrt(),
        };
        let tol = if variant == "std" { 1e-5 } else { 1e-6 };
        Ok(Check::within(rel_err(r.item()?, want), tol, "rel err"))
    }
    fn work(&self, _: &str) -> Work {
        Work {
            bytes: 4.0 * self.x.numel() as f64,
            flops: self.x.numel() as f64,
            samples: 0.0,
        }
    }
}

// ---- monte_carlo_pi: mean(x*x + y*y <= 1) * 4 -------------------------------

struct MonteCarloPi;

struct MonteCarloCase {
    n: usize,
}

const MC_SEED: u64 = 2024;

impl Workload for MonteCarloPi {
    fn name(&self) -> &'static str {
        "monte_carlo_pi"
    }
    fn size_meaning(&self) -> &'static str {
        "N*N samples"
    }
    fn elements(&self, n: usize) -> usize {
        n * n
    }
    fn dtype(&self) -> &'static str {
        "float32"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        Ok(Box::new(MonteCarloCase { n: n * n }))
    }
}

impl Case for MonteCarloCase {
    fn run(&mut self, _: &str) -> Result<Output> {
        // The random numbers are generated inside the timed region (that is
        // the workload); they fuse into the reduction, so no N-element array
        // is ever written.
        let mut rng = Generator::new(MC_SEED);
        let x = rng.uniform(&[self.n], DType::F32)?;
        let y = rng.uniform(&[self.n], DType::F32)?;
        let pi = x
            .mul(&x)?
            .add(&y.mul(&y)?)?
            .le(1.0)?
            .mean(None, false)?
            .mul(4.0)?;
        pi.eval()?;
        Ok(pi.into())
    }
    fn check(&mut self, _: &str, out: &Output) -> Result<Check> {
        let pi = out.dense()?;
        // Same Philox numbers (streams 0 and 1), counted in f64.
        let mut inside = 0u64;
        let mut xs = vec![0f32; 1 << 16];
        let mut ys = vec![0f32; 1 << 16];
        let mut start = 0usize;
        while start < self.n {
            let len = (self.n - start).min(xs.len());
            fill_uniform_f32_portable(
                RandomKey {
                    seed: MC_SEED,
                    stream: 0,
                },
                start as u64,
                &mut xs[..len],
            );
            fill_uniform_f32_portable(
                RandomKey {
                    seed: MC_SEED,
                    stream: 1,
                },
                start as u64,
                &mut ys[..len],
            );
            inside += xs[..len]
                .iter()
                .zip(&ys[..len])
                .filter(|(&x, &y)| (x as f64).powi(2) + (y as f64).powi(2) <= 1.0)
                .count() as u64;
            start += len;
        }
        let want = 4.0 * inside as f64 / self.n as f64;
        let got = pi.item()?;
        // f32 vs f64 rounding can flip points on the circle's edge: allow a
        // few per hundred million.
        let c = Check::within(rel_err(got, want), 1e-6, "rel err vs f64 count");
        let sigma = 4.0
            * (0.25 * std::f64::consts::PI * (1.0 - 0.25 * std::f64::consts::PI) / self.n as f64)
                .sqrt();
        let stat_ok = (got - std::f64::consts::PI).abs() <= 6.0 * sigma;
        Ok(Check {
            ok: c.ok && stat_ok,
            detail: format!("{}; pi={got:.6}", c.detail),
        })
    }
    fn work(&self, _: &str) -> Work {
        Work {
            bytes: 0.0,
            flops: 65.0 * self.n as f64,
            samples: self.n as f64,
        }
    }
}

// ---- conditional_accumulate: sum(where(x > 0.5, x*x, -x)), f64 --------------

struct ConditionalAccumulate;

struct ConditionalCase {
    x: Array,
}

impl Workload for ConditionalAccumulate {
    fn name(&self) -> &'static str {
        "conditional_accumulate"
    }
    fn size_meaning(&self) -> &'static str {
        "N*N float64 elements"
    }
    fn elements(&self, n: usize) -> usize {
        n * n
    }
    fn dtype(&self) -> &'static str {
        "float64"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        Ok(Box::new(ConditionalCase {
            x: uniform(4, &[n * n], DType::F64)?,
        }))
    }
}

impl Case for ConditionalCase {
    fn run(&mut self, _: &str) -> Result<Output> {
        let x = &self.x;
        let r = Array::where_(&x.gt(0.5)?, &x.mul(x)?, &x.neg()?)?.sum(None, false)?;
        r.eval()?;
        Ok(r.into())
    }
    fn check(&mut self, _: &str, out: &Output) -> Result<Check> {
        let r = out.dense()?;
        let want: f64 = self
            .x
            .to_vec::<f64>()?
            .iter()
            .map(|&v| if v > 0.5 { v * v } else { -v })
            .sum();
        Ok(Check::within(rel_err(r.item()?, want), 1e-12, "rel err"))
    }
    fn work(&self, _: &str) -> Work {
        Work {
            bytes: 8.0 * self.x.numel() as f64,
            flops: 3.0 * self.x.numel() as f64,
            samples: 0.0,
        }
    }
}

// ---- image_pipeline: per-image standardise, then sin(x)*0.5 + 0.5 ----------

struct ImagePipeline;

struct ImageCase {
    x: Array,
}

/// Images per batch in the pipeline workload.
pub const IMAGES: usize = 8;

impl Workload for ImagePipeline {
    fn name(&self) -> &'static str {
        "image_pipeline"
    }
    fn largest_default(&self) -> usize {
        4096
    }
    fn size_note(&self) -> Option<&'static str> {
        Some("image_pipeline stops at 4096 by default: 8 images of 10000x10000 need 6.4 GB for input and output, and the float64 check as much again")
    }
    fn size_meaning(&self) -> &'static str {
        "8 NxN float32 images"
    }
    fn elements(&self, n: usize) -> usize {
        IMAGES * n * n
    }
    fn dtype(&self) -> &'static str {
        "float32"
    }
    fn prepare(&self, n: usize) -> Result<Box<dyn Case>> {
        Ok(Box::new(ImageCase {
            x: uniform(5, &[IMAGES, n, n], DType::F32)?,
        }))
    }
}

/// The pipeline as lazy ops (shared with the Python comparison's shape).
pub fn image_pipeline(x: &Array) -> Result<Array> {
    let m = x.mean(Some(&[1, 2]), true)?;
    let s = x.std(Some(&[1, 2]), true, 0)?;
    let y = x.sub(&m)?.div(&s.add(1e-8)?)?;
    y.sin()?.mul(0.5)?.add(0.5)
}

impl Case for ImageCase {
    fn run(&mut self, _: &str) -> Result<Output> {
        let z = image_pipeline(&self.x)?;
        z.eval()?;
        Ok(z.into())
    }
    fn check(&mut self, _: &str, out: &Output) -> Result<Check> {
        let z = out.dense()?;
        let x = self.x.to_vec::<f32>()?;
        let got = z.to_vec::<f32>()?;
        let per = z.shape()[1] * z.shape()[2];
        let mut err = 0f64;
        for (img, out) in x.chunks(per).zip(got.chunks(per)) {
            let mean = img.iter().map(|&v| v as f64).sum::<f64>() / per as f64;
            let std =
                (img.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / per as f64).sqrt();
            for (&v, &o) in img.iter().zip(out) {
                let want = ((v as f64 - mean) / (std + 1e-8)).sin() * 0.5 + 0.5;
                err = err.max((o as f64 - want).abs());
            }
        }
        Ok(Check::within(err, 1e-5, "max abs err"))
    }
    fn work(&self, _: &str) -> Work {
        let n = self.x.numel() as f64;
        Work {
            // Minimal two-pass algorithm: read for the statistics, read again
            // and write the result.
            bytes: 12.0 * n,
            flops: 30.0 * n,
            samples: 0.0,
        }
    }
}
