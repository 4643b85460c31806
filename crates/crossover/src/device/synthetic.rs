//! The synthetic GPU: a device for planner and residency tests on
//! machines without a GPU.

use super::{Backend, BoundKernel, DeviceKind, DeviceMemory};
use crate::array::Value;
use crate::buffer::Buffer;
use crate::error::Result;
use crate::fuse::{Kernel, KernelBody};
use std::sync::Arc;

/// A stand-in GPU for planning tests and demonstrations without hardware.
///
/// The planner treats it as a GPU whose speed the profile describes (see
/// [`crate::cost::Profile::synthetic`]); residency is kept as a GPU's would
/// be. Kernels "run" with the CPU interpreter so results are correct, and
/// their timings are not fed back into the profile.
///
/// ```
/// use crossover::device::{Backend, SyntheticGpu};
/// let gpu = SyntheticGpu::new().with_memory(16 << 30).with_library(&["matmul"]);
/// assert_eq!(gpu.memory_bytes(), Some(16 << 30));
/// ```
#[derive(Clone, Debug)]
pub struct SyntheticGpu {
    memory: Option<u64>,
    library: Vec<String>,
}

impl Default for SyntheticGpu {
    fn default() -> Self {
        Self::new()
    }
}

impl SyntheticGpu {
    /// 80 GB of memory; no library ops (add them with
    /// [`SyntheticGpu::with_library`]).
    pub fn new() -> Self {
        SyntheticGpu {
            memory: Some(80 << 30),
            library: Vec::new(),
        }
    }

    /// Sets the device memory size.
    pub fn with_memory(mut self, bytes: u64) -> Self {
        self.memory = Some(bytes);
        self
    }

    /// Library ops (by name) this GPU implements.
    pub fn with_library(mut self, names: &[&str]) -> Self {
        self.library.extend(names.iter().map(|s| s.to_string()));
        self
    }
}

/// Device memory of the synthetic GPU: a marker (the data stays in the
/// host buffer).
#[derive(Debug)]
struct SyntheticMemory;

impl DeviceMemory for SyntheticMemory {
    fn device(&self) -> DeviceKind {
        DeviceKind::Gpu
    }
    fn copy_to_host(&self, _: &Buffer) -> Result<()> {
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Backend for SyntheticGpu {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Gpu
    }
    fn name(&self) -> String {
        "synthetic GPU (planned from the profile, run on the host)".to_string()
    }
    fn check(&self, kernel: &Kernel) -> std::result::Result<(), String> {
        match &kernel.body {
            KernelBody::Library { call, .. } => {
                let name = call.op.name();
                if self.library.iter().any(|n| n == name) {
                    Ok(())
                } else {
                    Err(format!("{name} has no GPU implementation"))
                }
            }
            KernelBody::Fused { .. } => {
                match kernel.outputs.iter().find(|o| o.dtype().is_complex()) {
                    Some(o) => Err(format!(
                        "{} kernels are not supported on the GPU",
                        o.dtype()
                    )),
                    None => Ok(()),
                }
            }
        }
    }
    fn memory_bytes(&self) -> Option<u64> {
        self.memory
    }
    fn run(&self, kernel: &BoundKernel<'_>) -> Result<Vec<Value>> {
        // Inputs may be valid on another engine's GPU only (tests mix
        // engines); this device computes from host memory.
        if let crate::device::BoundBody::Fused { sources, .. } = &kernel.body {
            for s in sources {
                if let crate::device::BoundSource::Buffer { buffer, .. } = s {
                    crate::residency::ensure_buffer_on_host(buffer)?;
                }
            }
        }
        let values = crate::cpu::run(kernel)?;
        for v in &values {
            let r = v.buffer.residency();
            r.set_device_memory(Some(Arc::new(SyntheticMemory)));
            r.set_only(DeviceKind::Gpu);
        }
        Ok(values)
    }
    fn copy_in(&self, buffer: &Buffer) -> Result<()> {
        let r = buffer.residency();
        if r.device_memory().is_none() {
            r.set_device_memory(Some(Arc::new(SyntheticMemory)));
        }
        r.add(DeviceKind::Gpu);
        Ok(())
    }
    fn measures(&self) -> bool {
        false
    }
}
