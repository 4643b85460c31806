//! Lowering, step 3: run the kernels in order and store their results.

use crate::array::Array;
use crate::error::{catch_panic, Result};
use crate::fuse::{fuse, Kernel};
use crate::graph::{resolve_ready_view, Graph};
use std::time::Instant;

/// What one kernel did in a run.
#[derive(Clone, Debug)]
pub struct KernelRun {
    /// Short name, e.g. `fused(mul,sin,cos,add,add)`.
    pub name: String,
    /// Structural key (program text without constants).
    pub key: String,
    pub points: usize,
    pub bytes: usize,
    pub flops: f64,
    pub device: &'static str,
    /// Measured wall time in seconds.
    pub seconds: f64,
}

/// The kernels that would run to compute `outputs`, without running them.
///
/// ```
/// use crossover::{Array, DType, Generator};
/// let mut rng = Generator::new(0);
/// let a = rng.uniform(&[1000], DType::F32)?;
/// let b = rng.uniform(&[1000], DType::F32)?;
/// let y = a.mul(&b)?.add(&a.sin()?)?.add(&b.cos()?)?;
/// assert_eq!(crossover::lower(&[y])?.len(), 1); // one fused kernel
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn lower(outputs: &[Array]) -> Result<Vec<Kernel>> {
    catch_panic("lower", || fuse(&Graph::collect(outputs)))
}

/// Computes `outputs` (and what they need) now.
pub fn evaluate(outputs: &[Array]) -> Result<()> {
    evaluate_with_report(outputs).map(|_| ())
}

/// Like [`evaluate`], returning what each kernel did.
pub fn evaluate_with_report(outputs: &[Array]) -> Result<Vec<KernelRun>> {
    catch_panic("eval", || {
        let graph = Graph::collect(outputs);
        let mut runs = Vec::new();
        if !graph.is_empty() {
            let kernels = fuse(&graph)?;
            for k in &kernels {
                let t = Instant::now();
                let values = crate::cpu::run_kernel(k)?;
                let seconds = t.elapsed().as_secs_f64();
                for (node, v) in k.outputs.iter().zip(values) {
                    node.set_value(v);
                }
                runs.push(KernelRun {
                    name: k.name(),
                    key: k.key(),
                    points: k.numel(),
                    bytes: k.bytes(),
                    flops: k.flops(),
                    device: "cpu",
                    seconds,
                });
            }
        }
        for o in outputs {
            if !resolve_ready_view(o) {
                return Err(crate::Error::internal(
                    "eval",
                    format!("{o:?} was not computed"),
                ));
            }
        }
        Ok(runs)
    })
}
