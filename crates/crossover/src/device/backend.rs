//! The contract between the executor and a device: kernels arrive bound
//! (inputs resolved to buffers and layouts, outputs described), so no
//! backend walks the lazy graph.

use super::DeviceKind;
use crate::array::Value;
use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::expr::ir::Program;
use crate::fuse::{Kernel, ReducePlan};
use crate::op::Library;
use crate::shape::Layout;
use std::fmt;
use std::sync::Arc;

/// A program source bound to data.
#[derive(Clone, Debug)]
pub enum BoundSource<'k> {
    /// Elements of `buffer` read through `layout` over the iteration space
    /// (the layout indexes the buffer directly: offset and strides in
    /// elements). The layout is the kernel's, borrowed: binding allocates
    /// nothing per source.
    Buffer {
        buffer: Arc<Buffer>,
        layout: &'k Layout,
    },
    /// Flat indices, through `layout` over the iteration space.
    Index { layout: &'k Layout },
}

impl BoundSource<'_> {
    /// The layout over the iteration space.
    pub fn layout(&self) -> &Layout {
        match self {
            BoundSource::Buffer { layout, .. } | BoundSource::Index { layout } => layout,
        }
    }
}

/// What a bound kernel does.
#[derive(Debug)]
pub enum BoundBody<'k> {
    /// A fused elementwise program over bound sources, optionally closed by
    /// reductions. One output per `program.outputs` entry (reductions: one
    /// per op), each row-major contiguous.
    Fused {
        program: &'k Program,
        sources: Vec<BoundSource<'k>>,
        reduce: Option<&'k ReducePlan>,
    },
    /// One library call: returns one value per output of the call, each
    /// row-major contiguous with the declared shape and dtype.
    Library { op: &'k Library, inputs: Vec<Value> },
}

/// A kernel ready to run: what a [`Backend`] receives.
#[derive(Debug)]
pub struct BoundKernel<'k> {
    /// Iteration space (library kernels: the first output's shape).
    pub shape: &'k [usize],
    /// Shape and dtype of each value the backend returns (borrowed where
    /// the caller keeps them: a replay's kernel would otherwise copy them on
    /// every run).
    pub outputs: std::borrow::Cow<'k, [(Vec<usize>, DType)]>,
    pub body: BoundBody<'k>,
}

impl BoundKernel<'_> {
    /// Points in the iteration space.
    pub fn numel(&self) -> usize {
        crate::shape::numel(self.shape)
    }
}

/// Device-measured seconds of the kernels a backend ran since the last
/// [`Backend::finish`], in launch order (`None`: not measured).
pub type KernelTiming = Vec<Option<f64>>;

/// What a kernel needs before its first run on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preparation {
    /// Nothing: ready (or nothing to compile).
    Ready,
    /// Loading a compiled binary from the disk cache.
    Load,
    /// Compiling it.
    Compile,
}

impl Preparation {
    /// Predicted seconds, for a device that compiles a kernel in
    /// `compile_s` (a cached binary loads in a fifth of that).
    pub fn seconds(self, compile_s: f64) -> f64 {
        match self {
            Preparation::Ready => 0.0,
            Preparation::Load => compile_s / 5.0,
            Preparation::Compile => compile_s,
        }
    }
}

/// Something that runs kernels on one device.
///
/// The planner asks [`Backend::check`] before considering the device for a
/// kernel, so `run` is only called with kernels the backend accepts.
pub trait Backend: Send + Sync + fmt::Debug {
    /// The device this backend runs on.
    fn kind(&self) -> DeviceKind;
    /// Human name (`"AMD EPYC 9B45 (2 threads, AVX-512)"`, `"NVIDIA H100 (cuda)"`).
    fn name(&self) -> String;
    /// `Err(reason)` when this device cannot run `kernel` (an op without an
    /// implementation here, a dtype it does not support).
    fn check(&self, kernel: &Kernel) -> std::result::Result<(), String>;
    /// How this device runs library op `op`, for explain (`"cuBLAS"`,
    /// `"crossover's tiled kernel"`...); `None`: nothing worth saying.
    fn library_route(&self, _op: &crate::op::Library) -> Option<String> {
        None
    }
    /// Bytes of memory kernels may use on the device (`None`: host memory,
    /// not limited by the planner).
    fn memory_bytes(&self) -> Option<u64>;
    /// Bytes of device memory this backend holds now (the planner counts
    /// them against [`Backend::memory_bytes`]).
    fn memory_held(&self) -> u64 {
        0
    }
    /// What must happen before `kernel` can first run here (the planner
    /// prices it with the device profile's compile time).
    fn preparation(&self, _kernel: &Kernel) -> Preparation {
        Preparation::Ready
    }
    /// Compiles `kernel` once, bypassing every cache, and returns the
    /// seconds it took (`crossover calibrate`); `None` where nothing is
    /// compiled.
    ///
    /// # Errors
    /// The compiler's error.
    fn measure_compile_s(&self, _kernel: &Kernel) -> Result<Option<f64>> {
        Ok(None)
    }
    /// Starts preparing `kernel` in the background (compiling it into the
    /// kernel cache) without running it, so a later evaluation finds it
    /// ready. The executor calls it for kernels the planner placed
    /// elsewhere only because preparing them would have cost too much now.
    fn prepare_in_background(&self, _kernel: &Kernel) {}
    /// Runs (or enqueues) the kernel. Outputs are valid on this device only
    /// (see [`Residency::set_only`](crate::residency::Residency::set_only)).
    fn run(&self, kernel: &BoundKernel<'_>) -> Result<Vec<Value>>;
    /// Makes `buffer` valid on this device too (a host<->device copy).
    fn copy_in(&self, buffer: &Buffer) -> Result<()>;
    /// `bytes` of this device's memory at `ptr` that another library
    /// allocated (a CuPy array, a PyTorch tensor), used without a copy;
    /// `keep` (their owner) lives as long as the memory is used.
    ///
    /// # Errors
    /// This device cannot use other libraries' memory.
    fn import_memory(
        &self,
        _ptr: u64,
        _bytes: usize,
        _keep: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Result<Arc<dyn crate::residency::DeviceMemory>> {
        Err(crate::error::Error::Device {
            op: "import",
            device: self.name(),
            msg: "this device cannot use memory of other libraries".into(),
        })
    }
    /// Waits for everything enqueued and returns the device-measured times
    /// of the kernels run since the last call (empty: the executor's wall
    /// times are the measurements).
    fn finish(&self) -> Result<KernelTiming> {
        Ok(Vec::new())
    }
    /// The profile numbers to plan with before calibration measures this
    /// device (from what it reports), with its host links.
    fn prior(&self) -> Option<(crate::cost::DeviceProfile, Vec<crate::cost::LinkProfile>)> {
        None
    }
    /// Whether timings of this backend are real measurements of the device
    /// it stands for (false for the synthetic GPU); only real ones refine
    /// the profile.
    fn measures(&self) -> bool {
        true
    }
}
