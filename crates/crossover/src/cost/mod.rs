//! The cost model: what a kernel costs (flops by class, bytes), the machine
//! [`Profile`] that turns costs into seconds, [`calibrate`] routines that
//! measure it, and the [`History`] of measured runs that refines it.
//!
//! A fused kernel on a device is predicted at
//! `launch + max(arith / arith_rate + transcendental / transcendental_rate,
//! bytes / bandwidth)`; a library op by its measured curve when the profile
//! has one (else the same roofline). Both are then scaled by the history's
//! correction for that kernel, size bucket and device.

pub mod calibrate;
pub mod calibrate_gpu;
pub mod history;
pub mod profile;

pub use calibrate::{calibrate, CalibrateOptions};
pub use history::{Contention, History};
pub use profile::{
    fingerprint, profile_path, DeviceProfile, LibraryCurve, LinkProfile, Profile, Rates, Transfer,
    PROFILE_FORMAT,
};

use crate::device::DeviceKind;
use crate::dtype::DType;
use crate::expr::ir::{InstKind, Program};
use crate::fuse::{Kernel, KernelBody};
use crate::op::BinaryOp;
use crate::rng::Distribution;

/// What a kernel costs, independent of the device.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    /// Points in the iteration space.
    pub points: usize,
    /// Bytes read and written.
    pub bytes: f64,
    /// Plain arithmetic flops.
    pub arith: f64,
    /// Flops in transcendental functions (a `sin` counts 20, a `pow` 40,
    /// a random number 30-70).
    pub transcendental: f64,
    /// Whether the kernel computes in float64 (or complex128).
    pub double: bool,
    /// For a library kernel: the op's name and its first output's dtype.
    pub library: Option<(&'static str, DType)>,
    /// Structural key (history).
    pub key: String,
}

fn is_double(d: DType) -> bool {
    matches!(d, DType::F64 | DType::C128)
}

/// Splits a program's flops per point into (arithmetic, transcendental).
pub fn program_flops(program: &Program) -> (f64, f64) {
    let (mut arith, mut trans) = (0.0, 0.0);
    for i in &program.insts {
        match i.kind {
            InstKind::Unary(u, _) if u.is_transcendental() => trans += u.flops(),
            InstKind::Binary(BinaryOp::Pow, _, _) => trans += BinaryOp::Pow.flops(),
            InstKind::Random { dist, .. } => {
                trans += match dist {
                    Distribution::Uniform => 30.0,
                    Distribution::Normal => 70.0,
                }
            }
            InstKind::Load(_) | InstKind::Const(_) => {}
            InstKind::Unary(u, _) => arith += u.flops(),
            InstKind::Binary(b, _, _) => arith += b.flops(),
            InstKind::Where(..) | InstKind::Cast(_) | InstKind::Arange { .. } => arith += 1.0,
        }
    }
    (arith, trans)
}

impl Work {
    /// The cost of `kernel`.
    pub fn of(kernel: &Kernel) -> Work {
        let points = kernel.numel();
        let bytes = kernel.bytes() as f64;
        let key = kernel.key();
        match &kernel.body {
            KernelBody::Fused {
                program, reduce, ..
            } => {
                let (a, t) = program_flops(program);
                let r: f64 = reduce
                    .as_ref()
                    .map_or(0.0, |r| r.ops.iter().map(|o| o.flops()).sum());
                let double = program.insts.iter().any(|i| is_double(i.dtype))
                    || kernel.outputs.iter().any(|o| is_double(o.dtype()));
                Work {
                    points,
                    bytes,
                    arith: (a + r) * points as f64,
                    transcendental: t * points as f64,
                    double,
                    library: None,
                    key,
                }
            }
            KernelBody::Library { call, .. } => {
                // The dtype it computes in: its first output's, except a
                // sparse product's, whose output is its int64 row pointers.
                let dtype = match &call.op {
                    crate::op::Library::SparseSparse(sp) => sp.dtype(),
                    _ => call.outputs.first().map_or(DType::F32, |o| o.1),
                };
                Work {
                    points,
                    bytes,
                    arith: call.op.flops(),
                    transcendental: 0.0,
                    double: is_double(dtype),
                    library: Some((call.op.name(), dtype)),
                    key,
                }
            }
        }
    }

    /// All flops.
    pub fn flops(&self) -> f64 {
        self.arith + self.transcendental
    }
}

/// Where a kernel-time prediction came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    /// `launch + max(compute, memory)` from the device's rates.
    Roofline,
    /// The library op's measured curve.
    Curve,
}

/// Predicted time of one kernel on one device (copies not included).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelEstimate {
    /// Launch/dispatch overhead, seconds.
    pub launch_s: f64,
    /// Arithmetic time (roofline), seconds.
    pub compute_s: f64,
    /// Memory time (roofline), seconds.
    pub memory_s: f64,
    /// The model's prediction before history correction.
    pub model_s: f64,
    /// The prediction used: `model_s` times the history correction.
    pub seconds: f64,
    pub source: Source,
    /// History correction factor and the runs behind it, if applied.
    pub correction: Option<(f64, u64)>,
}

impl Profile {
    /// The entry for `device`, or a default one when the profile has none
    /// (a GPU entry is missing until calibrated on a machine with a GPU).
    pub fn device_or_default(&self, device: DeviceKind) -> DeviceProfile {
        self.device(device)
            .cloned()
            .unwrap_or_else(|| match device {
                DeviceKind::Cpu => DeviceProfile::cpu_default(),
                // A mid-range data-centre GPU, until one is measured.
                DeviceKind::Gpu => {
                    DeviceProfile::gpu_default("gpu (defaults)", 108, 1.4, 5120, 1.2)
                }
            })
    }

    /// Predicted time of `work` on `device`, without copies.
    pub fn predict_kernel(&self, device: DeviceKind, work: &Work) -> KernelEstimate {
        let owned;
        let d = match self.device(device) {
            Some(d) => d,
            None => {
                owned = self.device_or_default(device);
                &owned
            }
        };
        let (arith_rate, trans_rate) = if work.double {
            (d.rates.f64_arith, d.rates.f64_transcendental)
        } else {
            (d.rates.f32_arith, d.rates.f32_transcendental)
        };
        let compute_s = work.arith / arith_rate + work.transcendental / trans_rate;
        let memory_s = work.bytes / d.bandwidth;
        let curve = work
            .library
            .and_then(|(op, dt)| self.curve(op, device, dt.name()));
        let (model_s, source) = match curve {
            Some(c) => (c.seconds(work.flops()).max(d.launch_s), Source::Curve),
            None => (d.launch_s + compute_s.max(memory_s), Source::Roofline),
        };
        let correction = self
            .history
            .correction(&History::key(device, &work.key, work.points));
        KernelEstimate {
            launch_s: d.launch_s,
            compute_s,
            memory_s,
            model_s,
            seconds: model_s * correction.map_or(1.0, |c| c.0),
            source,
            correction,
        }
    }

    /// Predicted seconds to copy `bytes` of pageable host memory from one
    /// device to another (0 for the same device).
    pub fn predict_copy(&self, from: DeviceKind, to: DeviceKind, bytes: usize) -> f64 {
        if from == to || bytes == 0 {
            return 0.0;
        }
        match self.link(from, to) {
            Some(l) => l.pageable.seconds(bytes),
            None => LinkProfile::pcie_default()[0].pageable.seconds(bytes),
        }
    }
}
