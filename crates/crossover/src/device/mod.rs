//! Devices: the kinds that can run kernels, the policy that picks one,
//! and the contract every backend implements.
//!
//! A [`Backend`] runs bound kernels ([`BoundKernel`]) on one [`DeviceKind`]
//! and moves buffers onto it. The CPU backend
//! ([`CpuBackend`](crate::cpu::CpuBackend)) is always there; GPU backends
//! are written once in [`crate::gpu`] over an API (OpenCL, CUDA);
//! [`SyntheticGpu`] stands in for planner tests (run on the host, planned
//! like a GPU). [`probe`] says what the machine has, and why a GPU is or is
//! not usable. Where a buffer's contents are valid is
//! [`crate::residency`].

mod backend;
pub mod probe;
mod synthetic;

pub use crate::residency::{ensure_host, DeviceMemory, Locations, Residency};
pub use backend::{Backend, BoundBody, BoundKernel, BoundSource, KernelTiming, Preparation};
pub use probe::{cores, cpu_model, cuda_driver_present};
pub use synthetic::SyntheticGpu;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

/// A kind of device that can run kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// The host's CPU cores (host memory).
    Cpu,
    /// An NVIDIA GPU (device memory behind a host link).
    Gpu,
}

impl DeviceKind {
    /// Every kind, in planning order (ties go to the earlier one).
    pub const ALL: [DeviceKind; 2] = [DeviceKind::Cpu, DeviceKind::Gpu];

    /// `"cpu"` or `"gpu"`.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Gpu => "gpu",
        }
    }

    pub(crate) fn bit(self) -> u8 {
        match self {
            DeviceKind::Cpu => 1,
            DeviceKind::Gpu => 2,
        }
    }

    /// Index into per-device tables.
    pub fn index(self) -> usize {
        match self {
            DeviceKind::Cpu => 0,
            DeviceKind::Gpu => 1,
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DeviceKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cpu" | "host" => Ok(DeviceKind::Cpu),
            "gpu" | "cuda" => Ok(DeviceKind::Gpu),
            other => Err(Error::invalid(
                "device",
                format!("unknown device '{other}': expected 'cpu' or 'gpu'"),
            )),
        }
    }
}

/// Where kernels may run.
///
/// ```
/// use crossover::{DeviceKind, Policy};
/// assert_eq!("auto".parse::<Policy>()?, Policy::Auto);
/// assert_eq!("gpu".parse::<Policy>()?, Policy::Force(DeviceKind::Gpu));
/// assert!("tpu".parse::<Policy>().is_err());
/// # Ok::<(), crossover::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Policy {
    /// Each kernel goes where its predicted completion time is smallest.
    #[default]
    Auto,
    /// Every kernel runs on this device; a kernel it cannot run is an error
    /// naming why (never a silent run elsewhere).
    Force(DeviceKind),
    /// Every kernel this device can run runs there; the others go where
    /// they are fastest, and explain says why (`gpu-prefer`).
    Prefer(DeviceKind),
}

impl Policy {
    /// The policy named by `CROSSOVER_DEVICE` (`auto`, `cpu`, `gpu`), if set.
    ///
    /// # Errors
    /// An unknown value (the caller reports it and uses `auto`).
    pub fn from_env() -> Result<Option<Policy>> {
        match std::env::var("CROSSOVER_DEVICE") {
            Ok(s) if !s.trim().is_empty() => s.parse().map(Some),
            _ => Ok(None),
        }
    }

    /// `"auto"`, `"cpu"`, `"gpu"`, `"cpu-prefer"` or `"gpu-prefer"`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Auto => "auto",
            Policy::Force(d) => d.name(),
            Policy::Prefer(DeviceKind::Cpu) => "cpu-prefer",
            Policy::Prefer(DeviceKind::Gpu) => "gpu-prefer",
        }
    }

    fn to_u8(self) -> u8 {
        match self {
            Policy::Auto => 0,
            Policy::Force(d) => d.bit(),
            Policy::Prefer(d) => 0x10 | d.bit(),
        }
    }

    fn from_u8(v: u8) -> Policy {
        let d = if v & 2 != 0 {
            DeviceKind::Gpu
        } else {
            DeviceKind::Cpu
        };
        match v {
            0 => Policy::Auto,
            v if v & 0x10 != 0 => Policy::Prefer(d),
            _ => Policy::Force(d),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Policy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim().to_ascii_lowercase();
        let bad = |other: &str| {
            Error::invalid(
                "policy",
                format!(
                    "unknown device policy '{other}': expected 'auto', 'cpu', 'gpu', 'cpu-prefer' or 'gpu-prefer'"
                ),
            )
        };
        match s.as_str() {
            "auto" | "" => Ok(Policy::Auto),
            other => match other.strip_suffix("-prefer") {
                Some(d) => d.parse().map(Policy::Prefer).map_err(|_| bad(other)),
                None => other.parse().map(Policy::Force).map_err(|_| bad(other)),
            },
        }
    }
}

/// A policy that can be read and changed from several threads.
#[derive(Debug, Default)]
pub(crate) struct AtomicPolicy(AtomicU8);

impl AtomicPolicy {
    pub(crate) fn new(p: Policy) -> Self {
        AtomicPolicy(AtomicU8::new(p.to_u8()))
    }
    pub(crate) fn get(&self) -> Policy {
        Policy::from_u8(self.0.load(Ordering::Relaxed))
    }
    pub(crate) fn set(&self, p: Policy) {
        self.0.store(p.to_u8(), Ordering::Relaxed)
    }
}
