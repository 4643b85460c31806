//! Devices: what can run kernels, whether it is usable, and where a
//! buffer's contents are valid.
//!
//! A [`Backend`] runs kernels on one [`DeviceKind`] and moves buffers onto
//! it. The CPU backend ([`CpuBackend`]) is always there. The GPU's real
//! backend (CUDA: cudarc, NVRTC code from the same IR, device buffers) is a
//! later addition; until then [`gpu_unavailable_reason`] says why there is
//! none, and [`SyntheticGpu`] stands in for tests and demonstrations: it is
//! planned for like a GPU (from a profile's numbers), keeps residency like a
//! GPU (results live "on the device" until copied back), and runs kernels
//! with the CPU interpreter so results stay correct.
//!
//! Every [`Buffer`](crate::buffer::Buffer) carries a [`Residency`]: the set
//! of devices on which its contents are valid, plus the device-side memory
//! when a device holds a copy. A kernel's outputs are valid only where it
//! ran; a copy adds a location (an array may be valid on host and device).

use crate::array::Value;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::fuse::{Kernel, KernelBody};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

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

    fn bit(self) -> u8 {
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

    /// `"auto"`, `"cpu"` or `"gpu"`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Auto => "auto",
            Policy::Force(d) => d.name(),
        }
    }

    fn to_u8(self) -> u8 {
        match self {
            Policy::Auto => 0,
            Policy::Force(d) => d.bit(),
        }
    }

    fn from_u8(v: u8) -> Policy {
        match v {
            1 => Policy::Force(DeviceKind::Cpu),
            2 => Policy::Force(DeviceKind::Gpu),
            _ => Policy::Auto,
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
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(Policy::Auto),
            other => other.parse().map(Policy::Force).map_err(|_| {
                Error::invalid(
                    "policy",
                    format!("unknown device policy '{other}': expected 'auto', 'cpu' or 'gpu'"),
                )
            }),
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

/// A set of devices (where a buffer is valid).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Locations(u8);

impl Locations {
    /// Valid on the host only.
    pub const HOST: Locations = Locations(1);

    /// Valid on `d` only.
    pub fn only(d: DeviceKind) -> Locations {
        Locations(d.bit())
    }
    /// Whether valid on `d`.
    pub fn contains(self, d: DeviceKind) -> bool {
        self.0 & d.bit() != 0
    }
    /// Also valid on `d`.
    pub fn with(self, d: DeviceKind) -> Locations {
        Locations(self.0 | d.bit())
    }
    /// Valid nowhere.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The devices in the set, in [`DeviceKind::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = DeviceKind> {
        DeviceKind::ALL
            .into_iter()
            .filter(move |d| self.contains(*d))
    }
}

impl fmt::Debug for Locations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Locations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self
            .iter()
            .map(|d| match d {
                DeviceKind::Cpu => "host",
                DeviceKind::Gpu => "gpu",
            })
            .collect();
        if names.is_empty() {
            f.write_str("nowhere")
        } else {
            f.write_str(&names.join("+"))
        }
    }
}

/// Memory a device holds for one buffer (a device backend's own type).
pub trait DeviceMemory: Send + Sync + fmt::Debug {
    /// The device holding it.
    fn device(&self) -> DeviceKind;
    /// Makes the owning buffer's host memory hold the device's contents.
    /// The caller then marks the host valid.
    fn copy_to_host(&self, host: &Buffer) -> Result<()>;
    /// Downcasting hook for the backend that made it.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Where a buffer's contents are valid (host and/or device), with the
/// device-side memory if any. Every buffer starts valid on the host.
#[derive(Debug)]
pub struct Residency {
    valid: AtomicU8,
    device: Mutex<Option<Arc<dyn DeviceMemory>>>,
}

impl Default for Residency {
    fn default() -> Self {
        Residency {
            valid: AtomicU8::new(Locations::HOST.0),
            device: Mutex::new(None),
        }
    }
}

impl Residency {
    /// The devices holding valid contents.
    pub fn locations(&self) -> Locations {
        Locations(self.valid.load(Ordering::Acquire))
    }

    /// Whether the contents are valid on `d`.
    pub fn is_valid_on(&self, d: DeviceKind) -> bool {
        self.locations().contains(d)
    }

    /// After a kernel on `d` wrote the buffer: valid there only.
    pub fn set_only(&self, d: DeviceKind) {
        self.valid.store(d.bit(), Ordering::Release);
    }

    /// After a copy to `d`: valid there too.
    pub fn add(&self, d: DeviceKind) {
        self.valid.fetch_or(d.bit(), Ordering::AcqRel);
    }

    /// The device-side memory, if a device holds a copy.
    pub fn device_memory(&self) -> Option<Arc<dyn DeviceMemory>> {
        self.device
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sets (or clears) the device-side memory.
    pub fn set_device_memory(&self, m: Option<Arc<dyn DeviceMemory>>) {
        *self.device.lock().unwrap_or_else(|p| p.into_inner()) = m;
    }
}

/// Something that runs kernels on one device.
///
/// The planner asks [`Backend::check`] before considering the device for a
/// kernel, so `run_kernel` is only called with kernels the backend accepts.
pub trait Backend: Send + Sync + fmt::Debug {
    /// The device this backend runs on.
    fn kind(&self) -> DeviceKind;
    /// Human name (`"AMD EPYC 9B45 (2 cores, AVX-512)"`, `"NVIDIA H100"`).
    fn name(&self) -> String;
    /// `Err(reason)` when this device cannot run `kernel` (an op without an
    /// implementation here, a dtype it does not support).
    fn check(&self, kernel: &Kernel) -> std::result::Result<(), String>;
    /// Bytes of memory kernels may use on the device (`None`: host memory,
    /// not limited by the planner).
    fn memory_bytes(&self) -> Option<u64>;
    /// Runs the kernel; its outputs' buffers must be marked valid on this
    /// device only (see [`Residency::set_only`]).
    fn run_kernel(&self, kernel: &Kernel) -> Result<Vec<Value>>;
    /// Makes `buffer` valid on this device too (a host<->device copy).
    fn copy_in(&self, buffer: &Buffer) -> Result<()>;
    /// Whether timings of this backend are real measurements of the device
    /// it stands for (false for the synthetic GPU); only real ones refine
    /// the profile.
    fn measures(&self) -> bool {
        true
    }
}

/// The CPU model name (from `/proc/cpuinfo`; `"unknown"` elsewhere).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// Logical cores the OS reports.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

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
            crate::cpu::threads(),
            crate::cpu::simd::level().name()
        )
    }
    fn check(&self, _: &Kernel) -> std::result::Result<(), String> {
        Ok(())
    }
    fn memory_bytes(&self) -> Option<u64> {
        None
    }
    fn run_kernel(&self, kernel: &Kernel) -> Result<Vec<Value>> {
        // Fresh host buffers start valid on the host only.
        crate::cpu::run_kernel(kernel)
    }
    fn copy_in(&self, buffer: &Buffer) -> Result<()> {
        let r = buffer.residency();
        if r.is_valid_on(DeviceKind::Cpu) {
            return Ok(());
        }
        let mem = r.device_memory().ok_or_else(|| {
            Error::internal(
                "copy to host",
                "buffer valid nowhere on the host or a device",
            )
        })?;
        mem.copy_to_host(buffer)?;
        r.add(DeviceKind::Cpu);
        Ok(())
    }
}

/// Why no GPU can be used in this build: there is no GPU backend yet, and
/// whether a CUDA driver is installed (checked once).
pub fn gpu_unavailable_reason() -> String {
    static REASON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    REASON.get_or_init(gpu_reason_now).clone()
}

fn gpu_reason_now() -> String {
    let driver = if cuda_driver_present() {
        "a CUDA driver is installed (libcuda.so.1), but"
    } else {
        "no CUDA driver found (libcuda.so.1 cannot be loaded), and"
    };
    format!("{driver} no GPU backend in this build (the CUDA backend is not implemented yet)")
}

/// The GPU part of the machine fingerprint: `none` without a CUDA driver.
/// (With a GPU backend this names the GPU and the driver version.)
pub fn gpu_fingerprint() -> String {
    if cuda_driver_present() {
        "cuda driver present, no GPU backend".to_string()
    } else {
        "none".to_string()
    }
}

/// Whether the CUDA driver library can be loaded (checked once).
pub fn cuda_driver_present() -> bool {
    static PRESENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PRESENT.get_or_init(probe_cuda_driver)
}

fn probe_cuda_driver() -> bool {
    #[cfg(unix)]
    {
        let name = c"libcuda.so.1";
        // SAFETY: dlopen with a valid NUL-terminated name; a non-null handle
        // is released at once with dlclose. Loading runs the library's
        // initialisers, which the CUDA driver allows at any time.
        unsafe {
            let h = libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL);
            if h.is_null() {
                return false;
            }
            libc::dlclose(h);
        }
        true
    }
    #[cfg(not(unix))]
    {
        false
    }
}

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
    fn run_kernel(&self, kernel: &Kernel) -> Result<Vec<Value>> {
        let values = crate::cpu::run_kernel(kernel)?;
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

/// Makes `value` valid on the host (copying it back from a device if it
/// lives only there). Cheap when it already is.
pub fn ensure_host(value: &Value) -> Result<()> {
    let r = value.buffer.residency();
    if r.is_valid_on(DeviceKind::Cpu) {
        return Ok(());
    }
    let start = crate::trace::now();
    let mem = r.device_memory().ok_or_else(|| Error::Device {
        op: "copy to host",
        device: "gpu".into(),
        msg: "the buffer is valid on no device".into(),
    })?;
    let from = mem.device();
    mem.copy_to_host(&value.buffer)?;
    r.add(DeviceKind::Cpu);
    crate::trace::copy_event(from, DeviceKind::Cpu, value.buffer.nbytes(), start, None);
    Ok(())
}
