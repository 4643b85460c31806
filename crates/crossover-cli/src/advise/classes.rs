//! The workload classes of `crossover advise`: for each, the kernels the
//! engine would run at a problem size (as [`Work`], built by hand with the
//! engine's flop and byte formulas), the arrays copied in and out, and the
//! lazy graph itself (to check the hand-built work against the engine's
//! plan, and to read the engine's kernel keys).

use crossover::cost::{Profile, Work};
use crossover::fft::{self, Norm};
use crossover::{linalg, Array, DType, DeviceKind, Engine, Generator, Policy, Result};

/// Density of the sparse operands (as `crossover bench sparse_matmul`).
pub const SPARSE_DENSITY: f64 = 0.01;
/// Images in the image pipeline class.
pub const IMAGES: usize = 8;

/// A workload class of the decision table. `N` is always the side of an
/// NxN problem (see [`Class::elements`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// `a*b + sin(a) + cos(b)`, two NxN float32 inputs.
    Elementwise,
    /// `sum(x)`, NxN float32.
    Reduction,
    /// `A @ B`, NxN float32.
    Matmul,
    /// `fft2(x)`, real NxN float32 input, complex64 output.
    Fft2,
    /// `solve_spd(A, b)`, NxN float32, one right-hand side.
    SolveSpd,
    /// Thin SVD of an NxN float32 matrix.
    Svd,
    /// CSR @ CSR, NxN float32, density 0.01.
    SparseMatmul,
    /// `4 * mean(x*x + y*y <= 1)` over N^2 random float32 samples.
    MonteCarloPi,
    /// `sum(where(x > 0.5, x*x, -x))` over N^2 float64 elements.
    ConditionalAccumulate,
    /// 8 NxN float32 images: per-image mean/std, then `sin(z)*0.5 + 0.5`.
    ImagePipeline,
}

impl Class {
    /// Every class, in table order.
    pub const ALL: [Class; 10] = [
        Class::Elementwise,
        Class::Reduction,
        Class::Matmul,
        Class::Fft2,
        Class::SolveSpd,
        Class::Svd,
        Class::SparseMatmul,
        Class::MonteCarloPi,
        Class::ConditionalAccumulate,
        Class::ImagePipeline,
    ];

    /// The `crossover bench` workload name.
    pub fn name(self) -> &'static str {
        match self {
            Class::Elementwise => "elementwise",
            Class::Reduction => "reduction",
            Class::Matmul => "matmul",
            Class::Fft2 => "fft2",
            Class::SolveSpd => "solve",
            Class::Svd => "svd",
            Class::SparseMatmul => "sparse_matmul",
            Class::MonteCarloPi => "monte_carlo_pi",
            Class::ConditionalAccumulate => "conditional_accumulate",
            Class::ImagePipeline => "image_pipeline",
        }
    }

    /// What it computes, for the legend.
    pub fn computes(self) -> &'static str {
        match self {
            Class::Elementwise => "a*b + sin(a) + cos(b), a and b NxN",
            Class::Reduction => "sum(x), x NxN",
            Class::Matmul => "A @ B, NxN",
            Class::Fft2 => "fft2(x), x real NxN, complex64 result",
            Class::SolveSpd => "solve_spd(A, b), A NxN SPD, one right-hand side",
            Class::Svd => "U, s, Vt = svd(A), A NxN",
            Class::SparseMatmul => "A @ B, CSR NxN of density 0.01",
            Class::MonteCarloPi => "4*mean(x*x + y*y <= 1), N^2 random samples, no inputs",
            Class::ConditionalAccumulate => "sum(where(x > 0.5, x*x, -x)), N^2 elements",
            Class::ImagePipeline => "8 NxN images: (x - mean)/std per image, sin(.)*0.5 + 0.5",
        }
    }

    /// Element type of the data (`float32`...).
    pub fn dtype(self) -> DType {
        match self {
            Class::Fft2 => DType::C64,
            Class::ConditionalAccumulate => DType::F64,
            _ => DType::F32,
        }
    }

    /// Elements of the problem at size `n` (N^2; 8 N^2 for the images).
    pub fn elements(self, n: usize) -> f64 {
        let e = n as f64 * n as f64;
        if self == Class::ImagePipeline {
            e * IMAGES as f64
        } else {
            e
        }
    }

    /// Why the numbers of this class deserve a caveat, if they do.
    pub fn caveat(self) -> Option<&'static str> {
        match self {
            Class::SparseMatmul => Some(
                "sparse_matmul: both sides are roofline figures, optimistic for a \
                 latency-bound kernel (an H200 and an H100 ran a 4096 product 5-12x slower \
                 than 16 CPU cores, 2026-11-26/27; measured curves place it)",
            ),
            Class::MonteCarloPi => Some(
                "monte_carlo_pi is costed at float64 rates: the engine's mean of a comparison \
                 casts to float64, and Work marks the whole kernel double",
            ),
            _ => None,
        }
    }
}

fn f(n: usize) -> f64 {
    n as f64
}

/// Nonzeros of an NxN CSR matrix of density [`SPARSE_DENSITY`] (as
/// `Csr::random` rounds them).
pub fn sparse_nnz(n: usize) -> f64 {
    (SPARSE_DENSITY * f(n) * f(n)).round()
}

/// Expected nonzeros of the product of two such matrices: an entry is
/// nonzero unless all N products miss.
pub fn sparse_product_nnz(n: usize) -> f64 {
    let d2 = SPARSE_DENSITY * SPARSE_DENSITY;
    f(n) * f(n) * (1.0 - (f(n) * (-d2).ln_1p()).exp())
}

/// Kernel keys of the engine for the fused kernels of each class (their
/// history entries), read off a tiny plan; library keys are formatted per
/// size in [`Class::kernels`].
#[derive(Clone, Debug, Default)]
pub struct Keys(Vec<(Class, Vec<String>)>);

impl Keys {
    /// Plans every class at a tiny size and keeps the fused kernels' keys.
    /// A class that cannot be planned keeps placeholder keys (its
    /// predictions then get no history correction).
    pub fn from_engine() -> Keys {
        let engine = Engine::new(Profile::synthetic());
        engine.set_refine(false);
        Keys(
            Class::ALL
                .iter()
                .map(|&c| {
                    let keys = graph(&engine, c, 8)
                        .and_then(|outs| {
                            if outs.is_empty() {
                                return Ok(vec![]);
                            }
                            engine
                                .plan(&outs, Some(Policy::Force(DeviceKind::Cpu)))
                                .map(|p| p.kernels.into_iter().map(|k| k.key).collect())
                        })
                        .unwrap_or_default();
                    (c, keys)
                })
                .collect(),
        )
    }

    fn get(&self, class: Class, i: usize) -> String {
        self.0
            .iter()
            .find(|(c, _)| *c == class)
            .and_then(|(_, k)| k.get(i).cloned())
            .unwrap_or_else(|| format!("advise {} kernel {i}", class.name()))
    }
}

/// A fused kernel's work: `arith`/`trans` flops per point.
fn fused(points: f64, bytes: f64, arith: f64, trans: f64, double: bool, key: String) -> Work {
    Work {
        points: points as usize,
        bytes,
        arith: arith * points,
        transcendental: trans * points,
        double,
        library: None,
        key,
    }
}

fn library(
    name: &'static str,
    dtype: DType,
    points: f64,
    bytes: f64,
    flops: f64,
    key: String,
) -> Work {
    Work {
        points: points as usize,
        bytes,
        arith: flops,
        transcendental: 0.0,
        double: matches!(dtype, DType::F64 | DType::C128),
        library: Some((name, dtype)),
        key,
    }
}

impl Class {
    /// The kernels the engine runs for this class at size `n`, in order,
    /// with the flop and byte counts of `Work::of` (sin/cos 20 flops, a
    /// uniform random number 30, a division 4, std 4; matmul 2N^3, SPD
    /// solve N^3/3 + 2N^2, svd 14N^3, fft 5 n log2 n with n = N^2).
    pub fn kernels(self, n: usize, keys: &Keys) -> Vec<Work> {
        let e = self.elements(n);
        let nn = f(n);
        let key = |i| keys.get(self, i);
        match self {
            // load a, load b, mul, sin, add, cos, add.
            Class::Elementwise => vec![fused(e, 12.0 * e, 3.0, 40.0, false, key(0))],
            Class::Reduction => vec![fused(e, 4.0 * e + 4.0, 1.0, 0.0, false, key(0))],
            Class::Matmul => vec![library(
                "matmul",
                DType::F32,
                e,
                12.0 * e,
                2.0 * nn * nn * nn,
                format!("matmul [{n}, {n}]x[{n}, {n}] float32"),
            )],
            // The engine counts the real input at the output's 8 bytes.
            Class::Fft2 => vec![library(
                "fft2",
                DType::C64,
                e,
                16.0 * e,
                5.0 * e * e.log2().max(1.0),
                format!("fft2 [{n}, {n}]->[{n}, {n}] complex64 backward"),
            )],
            Class::SolveSpd => vec![library(
                "solve_spd",
                DType::F32,
                nn,
                4.0 * (2.0 * e + nn),
                nn * nn * nn / 3.0 + 2.0 * nn * nn,
                format!("solve_spd [] {n}x{n} k=1 float32"),
            )],
            Class::Svd => vec![library(
                "svd",
                DType::F32,
                e,
                8.0 * e,
                14.0 * nn * nn * nn,
                format!("svd [] {n}x{n} k=0 float32"),
            )],
            Class::SparseMatmul => {
                let nnz = sparse_nnz(n);
                let csr = |nz: f64| 8.0 * nz + 8.0 * (nn + 1.0);
                vec![library(
                    "sparse_matmul",
                    DType::F32,
                    e,
                    2.0 * csr(nnz) + csr(sparse_product_nnz(n)),
                    2.0 * nnz * nnz / nn,
                    key(0),
                )]
            }
            // uniform x2 (30 each), mul, mul, add, le, cast, mean; then *4.
            Class::MonteCarloPi => vec![
                fused(e, 8.0, 6.0, 60.0, true, key(0)),
                fused(1.0, 16.0, 1.0, 0.0, true, key(1)),
            ],
            // gt, mul, neg, where, sum.
            Class::ConditionalAccumulate => vec![fused(e, 8.0 * e + 8.0, 5.0, 0.0, true, key(0))],
            Class::ImagePipeline => {
                let imgs = IMAGES as f64;
                vec![
                    // mean and std share one pass (1 + 4 flops), two float32 results per image.
                    fused(e, 4.0 * e + 8.0 * imgs, 5.0, 0.0, false, key(0)),
                    // std + 1e-8 per image.
                    fused(imgs, 8.0 * imgs, 1.0, 0.0, false, key(1)),
                    // sub, div (4), sin (20), mul, add.
                    fused(e, 8.0 * e + 8.0 * imgs, 7.0, 20.0, false, key(2)),
                ]
            }
        }
    }

    /// Bytes of each input array copied to the device when the data starts
    /// on the host.
    pub fn inputs(self, n: usize) -> Vec<f64> {
        let e = self.elements(n);
        let nn = f(n);
        match self {
            Class::Elementwise | Class::Matmul => vec![4.0 * e, 4.0 * e],
            Class::Reduction | Class::Fft2 | Class::Svd | Class::ImagePipeline => vec![4.0 * e],
            Class::SolveSpd => vec![4.0 * e, 4.0 * nn],
            Class::SparseMatmul => {
                let nnz = sparse_nnz(n);
                let one = [8.0 * (nn + 1.0), 4.0 * nnz, 4.0 * nnz];
                one.iter().chain(&one).copied().collect()
            }
            Class::MonteCarloPi => vec![],
            Class::ConditionalAccumulate => vec![8.0 * e],
        }
    }

    /// Bytes of each result array copied back to the host.
    pub fn outputs(self, n: usize) -> Vec<f64> {
        let e = self.elements(n);
        let nn = f(n);
        match self {
            Class::Elementwise | Class::Matmul | Class::ImagePipeline => vec![4.0 * e],
            Class::Reduction => vec![4.0],
            Class::Fft2 => vec![8.0 * e],
            Class::SolveSpd => vec![4.0 * nn],
            Class::Svd => vec![4.0 * e, 4.0 * nn, 4.0 * e],
            Class::SparseMatmul => {
                let nz = sparse_product_nnz(n);
                vec![8.0 * (nn + 1.0), 4.0 * nz, 4.0 * nz]
            }
            Class::MonteCarloPi | Class::ConditionalAccumulate => vec![8.0],
        }
    }
}

/// The lazy graph of `class` at size `n` over evaluated inputs (for the
/// key harvest and the tests that compare [`Class::kernels`] with the
/// engine's own plan). Sparse @ sparse is eager: no graph (empty).
///
/// # Errors
/// Whatever recording or evaluating the inputs reports.
pub fn graph(engine: &Engine, class: Class, n: usize) -> Result<Vec<Array>> {
    let cpu = Some(Policy::Force(DeviceKind::Cpu));
    let ready = |seed: u64, shape: &[usize], d: DType| -> Result<Array> {
        let a = Generator::new(seed).uniform(shape, d)?;
        engine.evaluate(std::slice::from_ref(&a), cpu)?;
        Ok(a)
    };
    let sq = [n, n];
    Ok(match class {
        Class::Elementwise => {
            let (a, b) = (ready(1, &sq, DType::F32)?, ready(2, &sq, DType::F32)?);
            vec![a.mul(&b)?.add(&a.sin()?)?.add(&b.cos()?)?]
        }
        Class::Reduction => vec![ready(3, &sq, DType::F32)?.sum(None, false)?],
        Class::Matmul => vec![ready(4, &sq, DType::F32)?.matmul(&ready(5, &sq, DType::F32)?)?],
        Class::Fft2 => vec![fft::fft2(&ready(6, &sq, DType::F32)?, Norm::Backward)?],
        Class::SolveSpd => vec![linalg::solve_spd(
            &ready(7, &sq, DType::F32)?,
            &ready(8, &[n], DType::F32)?,
        )?],
        Class::Svd => {
            let (u, s, vt) = linalg::svd(&ready(9, &sq, DType::F32)?)?;
            vec![u, s, vt]
        }
        Class::SparseMatmul => vec![],
        Class::MonteCarloPi => {
            let mut g = Generator::new(10);
            let x = g.uniform(&[n * n], DType::F32)?;
            let y = g.uniform(&[n * n], DType::F32)?;
            vec![x
                .mul(&x)?
                .add(&y.mul(&y)?)?
                .le(1.0)?
                .mean(None, false)?
                .mul(4.0)?]
        }
        Class::ConditionalAccumulate => {
            let x = ready(11, &[n * n], DType::F64)?;
            vec![Array::where_(&x.gt(0.5)?, &x.mul(&x)?, &x.neg()?)?.sum(None, false)?]
        }
        Class::ImagePipeline => {
            let x = ready(12, &[IMAGES, n, n], DType::F32)?;
            let m = x.mean(Some(&[1, 2]), true)?;
            let s = x.std(Some(&[1, 2]), true, 0)?;
            vec![x.sub(&m)?.div(&s.add(1e-8)?)?.sin()?.mul(0.5)?.add(0.5)?]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-built work matches the engine's own plan: same kernels,
    /// bytes, flops by class, dtype class, library name and key.
    #[test]
    fn kernels_match_the_engine_plan() {
        let engine = Engine::new(Profile::synthetic());
        engine.set_refine(false);
        let keys = Keys::from_engine();
        for n in [16, 48] {
            for class in Class::ALL {
                let outs = graph(&engine, class, n).unwrap();
                if outs.is_empty() {
                    continue;
                }
                let plan = engine
                    .plan(&outs, Some(Policy::Force(DeviceKind::Cpu)))
                    .unwrap();
                let ours = class.kernels(n, &keys);
                let theirs: Vec<&Work> = plan.kernels.iter().map(|k| &k.work).collect();
                assert_eq!(ours.len(), theirs.len(), "{} kernels", class.name());
                for (a, b) in ours.iter().zip(theirs) {
                    let what = format!("{} n={n} {}", class.name(), b.key);
                    assert_eq!(a.points, b.points, "{what}: points");
                    assert!(
                        (a.bytes - b.bytes).abs() < 1e-6,
                        "{what}: bytes {} vs {}",
                        a.bytes,
                        b.bytes
                    );
                    assert!(
                        (a.arith - b.arith).abs() <= 1e-9 * b.arith,
                        "{what}: arith {} vs {}",
                        a.arith,
                        b.arith
                    );
                    assert_eq!(a.transcendental, b.transcendental, "{what}: transcendental");
                    assert_eq!(a.double, b.double, "{what}: double");
                    assert_eq!(a.library, b.library, "{what}: library");
                    assert_eq!(a.key, b.key, "{what}: key");
                }
            }
        }
    }
}
