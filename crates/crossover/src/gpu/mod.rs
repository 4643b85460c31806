//! The GPU backend, written once for every GPU API.
//!
//! [`GpuBackend<A>`] implements [`Backend`] over any [`GpuApi`] (OpenCL in
//! [`crate::opencl`], CUDA next): it plans each fused kernel's launch
//! ([`launch`]), renders and compiles its variant once ([`codegen`],
//! [`cache`]), keeps results in device memory from a caching allocator
//! ([`memory`]) until the host asks for them, and reports device-measured
//! kernel times from events after one synchronisation per evaluation.
//! Matrix products run here too ([`library`]: the API's BLAS where it has
//! one, else the core's own kernel), and dense linear algebra through the
//! API's dense solver ([`dense`], cuSOLVER); complex kernels and what an
//! API has no library for stay on the CPU.

pub mod api;
pub mod cache;
pub mod codegen;
pub mod corpus;
mod dense;
mod dense_plan;
pub mod discover;
mod fft;
pub mod launch;
mod library;
pub mod memory;
mod sparse;
mod sparse_vendor;

pub use api::{DeviceInfo, GpuApi};

use crate::array::Value;
use crate::buffer::Buffer;
use crate::cost::{DeviceProfile, LinkProfile, Rates, Transfer};
use crate::device::{
    Backend, BoundBody, BoundKernel, BoundSource, DeviceKind, KernelTiming, Preparation,
};
use crate::error::{Error, Result};
use crate::expr::ir::SourceKind;
use crate::fuse::{Kernel, KernelBody, KernelSource};
use crate::residency::DeviceMemory;
use crate::shape::Layout;
use api::{ApiError, Arg};
use codegen::{Features, GROUP};
use launch::Launch;
use memory::{Block, Pool};
use std::sync::{Arc, Mutex};

/// Everything a backend's buffers need to reach their device.
struct Shared<A: GpuApi> {
    api: Arc<A>,
    pool: Arc<Pool<A>>,
    cache: cache::KernelCache<A>,
    features: Features,
    /// `opencl:<device>` or `cuda:<device>`.
    label: String,
    /// Serialises launches (argument setting and enqueue order).
    launch: Mutex<()>,
    /// How each run since the last `finish` is timed, one entry per run.
    pending: Mutex<Vec<RunTime<A::Event>>>,
    /// Variants being compiled in the background.
    compiling: Mutex<std::collections::HashSet<codegen::Variant>>,
    /// The process that opened the device (a forked child must not use it).
    pid: u32,
    max_groups: usize,
    /// Device copies of sparse matrices.
    csr: library::CsrCache<A>,
}

/// How one run's time is taken: its device events, or, for an op that
/// finishes on the host (a sparse product read back and made a CSR), the
/// host's time for the whole run. Such an op's events cover only the
/// device's part: on an H200 a 4096 sparse product took 27-37 ms a run
/// while the planner, learning from its events, predicted 1.3 ms for the
/// next (2026-11-28). A host time includes waiting for kernels queued
/// before the run, which a plan's earlier kernels then share with it.
enum RunTime<E> {
    Events(Vec<E>),
    Host(f64),
}

impl<A: GpuApi> Shared<A> {
    /// Records how the run just made is timed (read by `finish`).
    fn ran(&self, time: RunTime<A::Event>) {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(time);
    }
}

/// Device memory of one buffer on a [`GpuBackend`].
pub struct GpuMemory<A: GpuApi> {
    block: Block<A>,
    bytes: usize,
    shared: Arc<Shared<A>>,
}

impl<A: GpuApi> std::fmt::Debug for GpuMemory<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GpuMemory({} bytes on {})",
            self.bytes, self.shared.label
        )
    }
}

fn api_error(op: &'static str, label: &str, e: ApiError) -> Error {
    if e.out_of_memory {
        Error::OutOfDeviceMemory {
            op,
            device: label.to_string(),
            msg: e.to_string(),
        }
    } else {
        Error::Device {
            op,
            device: label.to_string(),
            msg: e.to_string(),
        }
    }
}

impl<A: GpuApi> DeviceMemory for GpuMemory<A> {
    fn device(&self) -> DeviceKind {
        DeviceKind::Gpu
    }

    fn copy_to_host(&self, host: &Buffer) -> Result<()> {
        let n = host.nbytes().min(self.bytes);
        if n == 0 {
            return Ok(());
        }
        // SAFETY: `host_ptr_for_fill` gives nbytes writable bytes that no one
        // reads until the host is marked valid (ensure_host serialises).
        let dst = unsafe { std::slice::from_raw_parts_mut(host.host_ptr_for_fill()?, n) };
        let shared = &self.shared;
        guard("copy to host", &shared.label, || {
            shared.api.read(self.block.mem(), dst)
        })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn address(&self) -> Option<crate::residency::DeviceAddress> {
        let sh = &self.shared;
        sh.api
            .address(self.block.mem())
            .map(|(ordinal, ptr)| crate::residency::DeviceAddress {
                api: sh.api.info().api,
                ordinal,
                ptr,
            })
    }
}

/// Runs an API call, turning a panic inside it into an error.
fn guard<T>(
    op: &'static str,
    label: &str,
    f: impl FnOnce() -> std::result::Result<T, ApiError>,
) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(|e| api_error(op, label, e)),
        Err(_) => Err(Error::Device {
            op,
            device: label.to_string(),
            msg: "the GPU API panicked".into(),
        }),
    }
}

/// A GPU as a [`Backend`], over one device of one API.
pub struct GpuBackend<A: GpuApi> {
    shared: Arc<Shared<A>>,
}

impl<A: GpuApi> std::fmt::Debug for GpuBackend<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuBackend({})", self.shared.label)
    }
}

impl<A: GpuApi> GpuBackend<A> {
    /// A backend over `api`, caching kernels in `kernel_dir` (`None`:
    /// memory only), holding at most `memory_cap` bytes of device memory
    /// (`None`: `CROSSOVER_GPU_MEMORY`, else the device's).
    ///
    /// # Errors
    /// An invalid `CROSSOVER_GPU_MEMORY`.
    pub fn new(
        api: A,
        kernel_dir: Option<std::path::PathBuf>,
        memory_cap: Option<u64>,
    ) -> Result<Self> {
        let info = api.info().clone();
        let cap = match memory_cap {
            Some(c) => c,
            None => match std::env::var("CROSSOVER_GPU_MEMORY") {
                Ok(s) if !s.trim().is_empty() => memory::parse_cap(&s, info.memory_bytes)
                    .map_err(|m| Error::invalid("gpu memory", m))?,
                _ => info.memory_bytes,
            },
        };
        let api = Arc::new(api);
        let label = format!("{}:{}", info.api, info.name);
        Ok(GpuBackend {
            shared: Arc::new(Shared {
                pool: Pool::new(Arc::clone(&api), cap.min(info.memory_bytes.max(1))),
                api,
                cache: cache::KernelCache::new(kernel_dir),
                features: Features { fp64: info.fp64 },
                label,
                launch: Mutex::new(()),
                pending: Mutex::new(Vec::new()),
                compiling: Mutex::new(std::collections::HashSet::new()),
                pid: std::process::id(),
                max_groups: (info.compute_units.max(1) as usize * 64).clamp(64, 65_535),
                csr: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The device.
    pub fn info(&self) -> &DeviceInfo {
        self.shared.api.info()
    }

    /// The API object.
    pub fn api(&self) -> &A {
        &self.shared.api
    }

    /// The compiled-kernel cache.
    pub fn cache(&self) -> &cache::KernelCache<A> {
        &self.shared.cache
    }

    /// Bytes of device memory crossover holds (in use and cached).
    pub fn memory_pool_held(&self) -> u64 {
        self.shared.pool.held()
    }

    /// The launch of a fused kernel (its variant, grid and parameters).
    fn plan_kernel(&self, k: &Kernel) -> Option<Launch> {
        plan_kernel(k, self.shared.max_groups)
    }

    /// The full source (prelude included) of the kernel's variant as this
    /// device compiles it, for `explain --source` and tests.
    pub fn source_of(&self, k: &Kernel) -> Option<String> {
        let launch = self.plan_kernel(k)?;
        let rendered = launch.variant.render(k.program()?);
        Some(cache::KernelCache::<A>::source(
            &self.shared.api,
            self.shared.features,
            &rendered,
        ))
    }

    /// Our device memory for `buffer`, uploading it first when the buffer
    /// is not valid here (or its device copy belongs to another backend).
    fn resident(&self, buffer: &Buffer) -> Result<Arc<dyn DeviceMemory>> {
        let r = buffer.residency();
        if r.is_valid_on(DeviceKind::Gpu) {
            if let Some(m) = r.device_memory() {
                if self.owns(m.as_ref()) {
                    return Ok(m);
                }
            }
        }
        self.upload(buffer)
    }

    fn owns(&self, m: &dyn DeviceMemory) -> bool {
        m.as_any()
            .downcast_ref::<GpuMemory<A>>()
            .is_some_and(|g| Arc::ptr_eq(&g.shared, &self.shared))
    }

    fn upload(&self, buffer: &Buffer) -> Result<Arc<dyn DeviceMemory>> {
        crate::residency::ensure_buffer_on_host(buffer)?;
        let sh = &self.shared;
        let bytes = buffer.nbytes();
        let block = guard("copy to device", &sh.label, || sh.pool.alloc(bytes))?;
        guard("copy to device", &sh.label, || {
            sh.api.write(block.mem(), buffer.host_bytes())
        })?;
        let m: Arc<dyn DeviceMemory> = Arc::new(GpuMemory {
            block,
            bytes,
            shared: Arc::clone(sh),
        });
        let r = buffer.residency();
        r.set_device_memory(Some(Arc::clone(&m)));
        r.add(DeviceKind::Gpu);
        Ok(m)
    }

    /// The API memory behind device memory of this backend.
    fn mem_of<'m>(&self, m: &'m dyn DeviceMemory) -> Result<&'m A::Mem> {
        m.as_any()
            .downcast_ref::<GpuMemory<A>>()
            .map(|g| g.block.mem())
            .ok_or_else(|| Error::internal("gpu run", "input memory of another device"))
    }

    /// A result: `block` (`bytes` long) as a row-major `shape` array valid
    /// only on this device.
    fn output_value(
        &self,
        block: Block<A>,
        bytes: usize,
        shape: &[usize],
        dtype: crate::dtype::DType,
    ) -> Result<Value> {
        let mem = Arc::new(GpuMemory {
            block,
            bytes,
            shared: Arc::clone(&self.shared),
        });
        Ok(Value {
            buffer: Arc::new(Buffer::device_only(dtype, crate::shape::numel(shape), mem)?),
            layout: Layout::contiguous(shape),
        })
    }

    fn alloc(&self, bytes: usize) -> Result<Block<A>> {
        let sh = &self.shared;
        guard("allocate", &sh.label, || sh.pool.alloc(bytes))
    }

    /// Why this device cannot run a fused kernel, if it cannot.
    fn refuse(&self, k: &Kernel) -> std::result::Result<Launch, String> {
        let info = self.info();
        if let Some(o) = k.outputs.iter().find(|o| o.dtype().is_complex()) {
            return Err(format!("{} kernels run on the CPU only", o.dtype()));
        }
        let program = k.program().ok_or("not a fused kernel")?;
        if program
            .sources
            .iter()
            .any(|s| matches!(s, SourceKind::Buffer(d) if d.is_complex()))
            || program.insts.iter().any(|i| i.dtype.is_complex())
        {
            return Err("complex kernels run on the CPU only".into());
        }
        let narrow = |d: crate::dtype::DType| d.is_cpu_only_int();
        if let Some(d) = program
            .sources
            .iter()
            .find_map(|s| match s {
                SourceKind::Buffer(d) if narrow(*d) => Some(*d),
                _ => None,
            })
            .or_else(|| program.insts.iter().map(|i| i.dtype).find(|d| narrow(*d)))
            .or_else(|| k.outputs.iter().map(|o| o.dtype()).find(|d| narrow(*d)))
        {
            return Err(format!(
                "{d} kernels run on the CPU only (GPU kernels have no int8, int16 or unsigned integers)"
            ));
        }
        let launch = self.plan_kernel(k).ok_or("not a fused kernel")?;
        if launch.variant.needs_fp64(program) && !info.fp64 {
            return Err(format!(
                "{} has no double precision (this kernel uses float64{})",
                info.name,
                if k.reduce().is_some() {
                    ", as every reduction's accumulator does"
                } else {
                    ""
                }
            ));
        }
        if info.max_group < GROUP {
            return Err(format!(
                "{} runs work-groups of at most {} work-items; crossover's kernels use {GROUP}",
                info.name, info.max_group
            ));
        }
        let params = launch.variant.params(program).size();
        let flag = usize::from(codegen::expr::reports_errors(program));
        let args = 8 * (program.sources.len() + k.outputs.len() + 1 + flag);
        if params + args > info.max_param_bytes {
            return Err(format!(
                "its {} bytes of kernel arguments exceed the device's limit of {}",
                params + args,
                info.max_param_bytes
            ));
        }
        Ok(launch)
    }
}

impl<A: GpuApi> Backend for GpuBackend<A> {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Gpu
    }

    fn name(&self) -> String {
        let i = self.info();
        format!(
            "{} ({}{})",
            i.name,
            i.api,
            if i.is_gpu { "" } else { ", CPU device" }
        )
    }

    fn library_route(&self, op: &crate::op::Library) -> Option<String> {
        GpuBackend::library_route(self, op)
    }

    fn check(&self, kernel: &Kernel) -> std::result::Result<(), String> {
        if std::process::id() != self.shared.pid {
            // A GPU context does not survive fork (CUDA refuses it; OpenCL
            // drivers hang or crash): a forked child (Dask, multiprocessing)
            // plans everything on its CPU.
            return Err(format!(
                "{} was opened by the parent process; a forked child computes on the CPU (start workers with 'spawn' to use the GPU)",
                self.shared.label
            ));
        }
        match &kernel.body {
            KernelBody::Library { call, .. } => self.refuse_library(&call.op),
            KernelBody::Fused { .. } => self.refuse(kernel).map(|_| ()),
        }
    }

    fn memory_bytes(&self) -> Option<u64> {
        Some(self.shared.pool.cap())
    }

    fn memory_held(&self) -> u64 {
        self.shared.pool.in_use()
    }

    fn preparation(&self, kernel: &Kernel) -> Preparation {
        let (Some(launch), Some(program)) = (self.plan_kernel(kernel), kernel.program()) else {
            return Preparation::Ready;
        };
        let sh = &self.shared;
        if sh.cache.in_memory(&launch.variant) {
            Preparation::Ready
        } else if sh
            .cache
            .is_cached(&sh.api, sh.features, &launch.variant, program)
        {
            Preparation::Load
        } else {
            Preparation::Compile
        }
    }

    fn measure_compile_s(&self, kernel: &Kernel) -> Result<Option<f64>> {
        let sh = &self.shared;
        let (Some(launch), Some(program)) = (self.plan_kernel(kernel), kernel.program()) else {
            return Ok(None);
        };
        let rendered = launch.variant.render(program);
        // A source no cache has seen (the driver's own caches included).
        let mut source = cache::KernelCache::<A>::source(&sh.api, sh.features, &rendered);
        let salt = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        source.push_str(&format!("\n// calibration {salt}\n"));
        let start = std::time::Instant::now();
        guard("compile", &sh.label, || {
            // With the binary, as a cached compile pays it.
            sh.api.compile(&source, &rendered.entries, true).map(|_| ())
        })?;
        Ok(Some(start.elapsed().as_secs_f64()))
    }

    fn prepare_in_background(&self, kernel: &Kernel) {
        let (Some(launch), Some(program)) = (self.plan_kernel(kernel), kernel.program()) else {
            return;
        };
        let sh = Arc::clone(&self.shared);
        if sh.cache.in_memory(&launch.variant)
            || !sh
                .compiling
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(launch.variant.clone())
        {
            return;
        }
        let program = program.clone();
        let spawned = std::thread::Builder::new()
            .name("crossover-gpu-compile".into())
            .spawn(move || {
                let v = launch.variant;
                // A failure here shows again (as an error) when the kernel
                // is first run on the device; CROSSOVER_LOG=debug says it
                // now.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    sh.cache.get(&sh.api, sh.features, &v, &program).map(|_| ())
                }));
                if std::env::var("CROSSOVER_LOG").is_ok_and(|l| l == "debug") {
                    match r {
                        Ok(Err(e)) => {
                            eprintln!("crossover: {}: background compile failed: {e}", sh.label)
                        }
                        Err(_) => eprintln!("crossover: {}: background compile panicked", sh.label),
                        Ok(Ok(())) => {}
                    }
                }
                sh.compiling
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&v);
            });
        drop(spawned);
    }

    fn run(&self, k: &BoundKernel<'_>) -> Result<Vec<Value>> {
        let (program, sources, reduce) = match &k.body {
            BoundBody::Fused {
                program,
                sources,
                reduce,
            } => (program, sources, reduce),
            BoundBody::Library { op, inputs } => return self.run_library(op, inputs, &k.outputs),
        };
        let sh = &self.shared;
        let layouts: Vec<&Layout> = sources.iter().map(BoundSource::layout).collect();
        let out_dtypes: Vec<_> = k.outputs.iter().map(|o| o.1).collect();
        let launch = Launch::plan(
            program,
            &layouts,
            k.shape,
            *reduce,
            &out_dtypes,
            sh.max_groups,
        );
        let entry = guard("compile", &sh.label, || {
            sh.cache.get(&sh.api, sh.features, &launch.variant, program)
        })?;
        // Inputs (kept alive until the launches are enqueued).
        let mut inputs = Vec::new();
        for s in sources.iter() {
            if let BoundSource::Buffer { buffer, .. } = s {
                inputs.push(self.resident(buffer)?);
            }
        }
        let input_mems: Vec<&A::Mem> = inputs
            .iter()
            .map(|m| self.mem_of(m.as_ref()))
            .collect::<Result<_>>()?;
        let mut outs = Vec::with_capacity(k.outputs.len());
        for (shape, dtype) in k.outputs.iter() {
            let bytes = crate::shape::numel(shape) * dtype.size();
            outs.push((self.alloc(bytes)?, bytes, shape, *dtype));
        }
        let partials = self.alloc(launch.partial_states.max(1))?;
        // Invalid float-to-int casts and negative integer exponents set
        // these flags (read back below).
        let flags = if codegen::expr::reports_errors(program) {
            Some(self.upload_bytes(&[0; codegen::expr::ERROR_FLAG_BYTES])?)
        } else {
            None
        };
        let params = entry
            .rendered
            .params
            .pack(|p| launch.value(program, p))
            .map_err(|m| Error::internal("gpu params", m))?;
        let mut events = Vec::new();
        {
            let _serial = sh.launch.lock().unwrap_or_else(|p| p.into_inner());
            for (i, &groups) in launch
                .groups
                .iter()
                .enumerate()
                .take(entry.rendered.entries.len())
            {
                if groups == 0 {
                    continue;
                }
                let mut args: Vec<Arg<'_, A::Mem>> = vec![Arg::Bytes(&params)];
                // Both merge entries (1 and 2) read the partial states only.
                let merge = reduce.is_some() && i >= 1;
                if !merge {
                    args.extend(input_mems.iter().map(|m| Arg::Mem(*m)));
                }
                if reduce.is_some() {
                    args.push(Arg::Mem(partials.mem()));
                }
                args.extend(outs.iter().map(|o| Arg::Mem(o.0.mem())));
                if let (Some(flags), false) = (&flags, merge) {
                    args.push(Arg::Mem(flags.mem()));
                }
                let ev = guard("launch", &sh.label, || {
                    sh.api.launch(&entry.module, i, groups, &args)
                })?;
                events.push(ev);
            }
        }
        sh.ran(RunTime::Events(events));
        // NumPy warns and raises at the call, so the flags are read now:
        // this waits for the kernel (only kernels that cast floats to
        // integers or raise integers to array exponents have them).
        if let Some(flags) = &flags {
            let words = self.read_back(flags, codegen::expr::ERROR_FLAG_BYTES)?;
            if words[..4].iter().any(|&b| b != 0) {
                crate::cpu::num::note_invalid_cast();
            }
            if words[4..].iter().any(|&b| b != 0) {
                return Err(crate::cpu::interp::negative_int_power());
            }
        }
        // The partial states stay alive until the queue has run them.
        drop(inputs);
        let keep = partials;
        let values = outs
            .into_iter()
            .map(|(block, bytes, shape, dtype)| self.output_value(block, bytes, shape, dtype))
            .collect::<Result<Vec<_>>>();
        // Blocks return to the pool only after the queue is done with them:
        // the pool hands a freed block to a later kernel of the same
        // in-order queue, so reuse is ordered after this kernel.
        drop(keep);
        values
    }

    fn copy_in(&self, buffer: &Buffer) -> Result<()> {
        self.resident(buffer).map(|_| ())
    }

    fn import_memory(
        &self,
        ptr: u64,
        bytes: usize,
        keep: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Result<Arc<dyn DeviceMemory>> {
        let sh = &self.shared;
        let mem = guard("import", &sh.label, || sh.api.import(ptr, keep))?;
        Ok(Arc::new(GpuMemory {
            block: Block::lent(mem, bytes),
            bytes,
            shared: Arc::clone(sh),
        }))
    }

    fn prior(&self) -> Option<(DeviceProfile, Vec<LinkProfile>)> {
        Some(prior(self.info()))
    }

    fn finish(&self) -> Result<KernelTiming> {
        let sh = &self.shared;
        guard("synchronize", &sh.label, || sh.api.synchronize())?;
        let runs = std::mem::take(&mut *sh.pending.lock().unwrap_or_else(|p| p.into_inner()));
        run_times(runs, |e| guard("timing", &sh.label, || sh.api.elapsed(e)))
    }
}

/// Each run's seconds: its events' durations summed (`None` when it has
/// none, or one was not measured), or the host's time it recorded.
fn run_times<E>(
    runs: Vec<RunTime<E>>,
    elapsed: impl Fn(&E) -> Result<Option<f64>>,
) -> Result<KernelTiming> {
    let mut times = Vec::with_capacity(runs.len());
    for run in runs {
        times.push(match run {
            RunTime::Host(seconds) => Some(seconds),
            RunTime::Events(events) => {
                let mut total = Some(0.0);
                for e in &events {
                    total = match (total, elapsed(e)?) {
                        (Some(a), Some(b)) => Some(a + b),
                        _ => None,
                    };
                }
                total.filter(|_| !events.is_empty())
            }
        });
    }
    Ok(times)
}

/// The launch of a fused kernel (`None` for library kernels).
fn plan_kernel(k: &Kernel, max_groups: usize) -> Option<Launch> {
    let KernelBody::Fused {
        program,
        sources,
        reduce,
    } = &k.body
    else {
        return None;
    };
    let layouts: Vec<&Layout> = sources
        .iter()
        .map(|s| match s {
            KernelSource::Buffer { layout, .. } | KernelSource::Index { layout } => layout,
        })
        .collect();
    let outputs: Vec<_> = k.outputs.iter().map(|o| o.dtype()).collect();
    Some(Launch::plan(
        program,
        &layouts,
        &k.shape,
        reduce.as_ref(),
        &outputs,
        max_groups,
    ))
}

/// The source of a fused kernel in `dialect`, prelude included, as a device
/// with double precision compiles it (`None` for library kernels). Works
/// on machines without a GPU: `crossover explain --source opencl`.
pub fn kernel_source(k: &Kernel, dialect: codegen::Dialect) -> Option<String> {
    let launch = plan_kernel(k, 1024)?;
    let rendered = launch.variant.render(k.program()?);
    let mut s = codegen::prelude(dialect, Features { fp64: true });
    s.push_str(&rendered.body);
    Some(s)
}

/// The profile prior of a device and its link, from what it reports (used
/// until `crossover calibrate` measures it).
pub fn prior(info: &DeviceInfo) -> (DeviceProfile, Vec<LinkProfile>) {
    let cus = info.compute_units.max(1) as f64;
    let ghz = (info.clock_mhz.max(100) as f64) / 1000.0;
    if !info.is_gpu {
        // A CPU-type OpenCL device (pocl): the cores' own numbers, a slow
        // launch (an OpenCL command through a thread pool) and memcpy-speed
        // "copies".
        let f32_arith = cus * 8.0 * ghz * 1e9;
        let dev = DeviceProfile {
            device: DeviceKind::Gpu,
            name: info.name.clone(),
            launch_s: 50e-6,
            bandwidth: (cus * 8e9).min(100e9),
            rates: Rates {
                f32_arith,
                f32_transcendental: f32_arith / 4.0,
                f64_arith: f32_arith / 2.0,
                f64_transcendental: f32_arith / 8.0,
            },
            // pocl compiles through LLVM for the host: about 0.5 s a kernel.
            compile_s: 0.5,
            parallel_min_work: None,
            blas_min_mnk: Default::default(),
        };
        let t = Transfer {
            latency_s: 10e-6,
            bandwidth: 5e9,
        };
        return (dev, LinkProfile::pair(t.clone(), t));
    }
    let (bus, mem_mhz) = info.memory_bus.unwrap_or((256, 7000));
    let name = format!("{} ({})", info.name, info.api);
    let mut dev =
        DeviceProfile::gpu_default(&name, info.compute_units, ghz, bus, mem_mhz as f64 / 1000.0);
    if !info.fp64 {
        dev.rates.f64_arith = dev.rates.f32_arith / 1e3;
        dev.rates.f64_transcendental = dev.rates.f32_transcendental / 1e3;
    }
    (dev, LinkProfile::pcie_default())
}

#[cfg(test)]
mod tests {
    use super::{run_times, RunTime};

    #[test]
    fn runs_are_timed_by_their_events_or_by_the_host() {
        // Events stand for their durations; a negative one was not measured.
        let elapsed = |e: &f64| Ok((*e >= 0.0).then_some(*e));
        let runs = vec![
            RunTime::Events(vec![0.25, 0.5]),
            // A sparse product: its events would say 1 ms, the host 28 ms.
            RunTime::Host(0.028),
            RunTime::Events(vec![]),
            RunTime::Events(vec![0.125, -1.0]),
        ];
        let times = run_times(runs, elapsed).unwrap();
        assert_eq!(times, vec![Some(0.75), Some(0.028), None, None]);
    }
}
