//! Lowering, step 3: run the kernels in order and store their results.
//!
//! The executor itself is [`Engine::evaluate`](crate::Engine::evaluate): it
//! plans each kernel's device ([`crate::plan`]), copies inputs that are not
//! valid there, runs the kernel on that backend, and records measured
//! beside predicted times. These are the process-wide entry points.

use crate::array::Array;
use crate::engine::Engine;
use crate::error::{catch_panic, Result};
use crate::fuse::{fuse, Kernel};
use crate::graph::Graph;

/// What one kernel did in a run.
#[derive(Clone, Debug)]
pub struct KernelRun {
    /// Short name, e.g. `fused(mul,sin,cos,add,add)`.
    pub name: String,
    /// Structural key (program text without constants).
    pub key: String,
    /// Points in the iteration space.
    pub points: usize,
    /// Bytes read and written.
    pub bytes: usize,
    /// Estimated flops.
    pub flops: f64,
    /// Where it ran (`cpu`, `gpu`).
    pub device: &'static str,
    /// Measured wall time in seconds (the kernel, without copies).
    pub seconds: f64,
    /// Predicted kernel seconds on that device.
    pub predicted: f64,
    /// Measured seconds of the copies its inputs needed.
    pub copy_seconds: f64,
    /// Why the device was chosen.
    pub reason: String,
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

/// Computes `outputs` (and what they need) now, placed by the process-wide
/// [`Engine`](crate::Engine).
pub fn evaluate(outputs: &[Array]) -> Result<()> {
    Engine::global().evaluate(outputs, None).map(|_| ())
}

/// Like [`evaluate`], returning what each kernel did.
pub fn evaluate_with_report(outputs: &[Array]) -> Result<Vec<KernelRun>> {
    let plan = Engine::global().evaluate(outputs, None)?;
    Ok(plan
        .kernels
        .into_iter()
        .map(|k| KernelRun {
            predicted: k.predicted().map_or(0.0, |p| p.kernel.seconds),
            name: k.name,
            key: k.key,
            points: k.work.points,
            bytes: k.work.bytes as usize,
            flops: k.work.flops(),
            device: k.device.name(),
            seconds: k.measured_s.unwrap_or(0.0),
            copy_seconds: k.measured_copy_s.unwrap_or(0.0),
            reason: k.reason,
        })
        .collect())
}
