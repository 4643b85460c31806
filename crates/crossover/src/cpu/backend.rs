//! [`CpuBackend`]: the CPU as a [`Backend`] (the chunked SIMD interpreter
//! on all cores, and faer/rustfft for library ops).

use crate::array::Value;
use crate::buffer::Buffer;
use crate::device::{cpu_model, Backend, BoundKernel, DeviceKind};
use crate::error::Result;
use crate::fuse::Kernel;

/// The CPU backend: the chunked SIMD interpreter on all cores.
#[derive(Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Cpu
    }
    fn name(&self) -> String {
        format!(
            "{} ({} threads, {})",
            cpu_model(),
            super::threads(),
            super::simd::level().name()
        )
    }
    fn check(&self, _: &Kernel) -> std::result::Result<(), String> {
        Ok(())
    }
    fn memory_bytes(&self) -> Option<u64> {
        None
    }
    fn run(&self, kernel: &BoundKernel<'_>) -> Result<Vec<Value>> {
        // Fresh host buffers start valid on the host only.
        super::run(kernel)
    }
    fn copy_in(&self, buffer: &Buffer) -> Result<()> {
        crate::residency::ensure_buffer_on_host(buffer)
    }
}
