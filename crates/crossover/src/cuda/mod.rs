//! The CUDA backend: NVIDIA's driver API and NVRTC (through cudarc, loaded
//! at run time) as a [`GpuApi`] of the GPU core. The kernels, caches,
//! memory pooling, residency and planning are the core's (`gpu/`); this
//! module is only the API calls: discovery, one context and stream, NVRTC
//! to a CUBIN, stream-ordered memory, launches and timing events, and
//! cuBLAS for matrix products ([`blas`]), cuFFT ([`fft`]), cuSOLVER's
//! dense routines ([`solver`]) and cuSPARSE's CSR products ([`sparse`]).
//!
//! Nothing here runs at import: the driver is initialised (`cuInit`) when
//! a backend is first opened. A forked child cannot use its parent's
//! context, so every call checks the process id and fails with the reason.
//!
//! What has run where: the NVRTC path compiles every generated kernel in
//! CI (no GPU needed); the driver calls ran on an NVIDIA H200 on
//! 2026-11-26 (docs/gpu.md).

mod blas;
mod fft;
mod handle;
mod lapack;
pub mod libs;
pub mod nvrtc;
mod solver;
mod sparse;
mod staging;

use crate::gpu::api::{
    ApiError, Arg, Compiled, DenseDone, DenseJob, DeviceInfo, FftAxis, Gemm, GpuApi, SparseDense,
    SparseSparse, SpgemmOutcome,
};
use crate::gpu::codegen::{Dialect, GROUP};
use cudarc::driver::result;
use cudarc::driver::safe::{CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream};
use cudarc::driver::sys;
use staging::Staging;
use std::ffi::c_void;
use std::sync::Arc;

/// `CROSSOVER_LOG=debug`: say what was loaded from where, and fallbacks.
pub(crate) fn debug_log() -> bool {
    std::env::var("CROSSOVER_LOG").is_ok_and(|v| v == "debug")
}

/// A driver error as text (the enum's name: formatting a `DriverError`
/// calls into the driver, which may not be loaded).
fn err(call: &'static str, e: result::DriverError) -> ApiError {
    let msg = format!("{:?}", e.0);
    if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
        ApiError::oom(call, msg)
    } else {
        ApiError::new(call, msg)
    }
}

/// One CUDA device: its primary context (shared with CuPy and PyTorch in
/// the same process) and one non-blocking stream.
pub struct CudaApi {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pool: sys::CUmemoryPool,
    info: DeviceInfo,
    /// `sm_<arch>` (or PTX for `compute_<arch>` when NVRTC is older than
    /// the device).
    arch: i32,
    ptx: bool,
    /// Pinned buffers for large copies.
    staging: Staging,
    /// Timing events of finished launches, for the next ones.
    spare_events: Arc<Spares<(CudaEvent, CudaEvent)>>,
    /// The process that opened the device (a forked child must not use it).
    pid: u32,
    /// cuBLAS, made on the first matrix product.
    blas: blas::Slot,
    /// cuFFT plans, made on first use of each shape.
    fft_plans: fft::Plans,
    /// cuSOLVER, made on the first dense factorisation.
    solver: solver::Slot,
    /// cuSPARSE, made on the first sparse product.
    sparse: sparse::Slot,
}

// SAFETY: the raw pool handle is a process-wide driver object; every use
// binds the context first and goes through the driver, which is
// thread-safe.
unsafe impl Send for CudaApi {}
// SAFETY: as above.
unsafe impl Sync for CudaApi {}

/// Device memory from the stream-ordered pool, or lent by another library.
pub struct CudaMem {
    ptr: sys::CUdeviceptr,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pid: u32,
    /// The owner of memory another library lent (a CuPy array, a PyTorch
    /// tensor): kept alive, and the memory is theirs to free.
    lender: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl Drop for CudaMem {
    fn drop(&mut self) {
        if std::process::id() != self.pid || self.lender.is_some() {
            return; // the parent's or a lender's memory: not ours to free
        }
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if self.ctx.bind_to_thread().is_ok() {
                // SAFETY: allocated on this stream by `alloc`, freed once.
                let _ = unsafe { result::free_async(self.ptr, self.stream.cu_stream()) };
            }
        }));
    }
}

/// A loaded module and its entry points, in launch order.
pub struct CudaKernels {
    _module: Arc<CudaModule>,
    functions: Vec<CudaFunction>,
}

/// Start and end of one launch. Its events go back to the API's spares
/// when it is dropped.
pub struct CudaTiming {
    events: Option<(CudaEvent, CudaEvent)>,
    spares: Arc<Spares<(CudaEvent, CudaEvent)>>,
}

impl CudaTiming {
    fn pair(&self) -> &(CudaEvent, CudaEvent) {
        self.events
            .as_ref()
            .expect("a timing's events are taken only when it is dropped")
    }
}

impl Drop for CudaTiming {
    fn drop(&mut self) {
        if let Some(pair) = self.events.take() {
            self.spares.put(pair);
        }
    }
}

/// Objects kept for reuse, at most [`Spares::MAX`] (more are dropped).
///
/// Timing events are kept so: a small kernel's launch takes a few
/// microseconds, and creating and destroying its two events each time
/// added four driver calls to it. A spare event is recorded again, which
/// replaces what it captured before (its timing was read or dropped).
struct Spares<T>(std::sync::Mutex<Vec<T>>);

impl<T> Default for Spares<T> {
    fn default() -> Self {
        Self(std::sync::Mutex::new(Vec::new()))
    }
}

impl<T> Spares<T> {
    /// Objects kept at most.
    const MAX: usize = 64;

    fn take(&self) -> Option<T> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).pop()
    }

    fn put(&self, item: T) {
        let mut spares = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if spares.len() < Self::MAX {
            spares.push(item);
        }
    }
}

impl CudaApi {
    /// Records the start of timed work on crossover's stream.
    fn start_timing(&self) -> Result<CudaTiming, ApiError> {
        let pair = match self.spare_events.take() {
            Some(pair) => pair,
            None => {
                let event = || {
                    self.ctx
                        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                        .map_err(|e| err("cuEventCreate", e))
                };
                (event()?, event()?)
            }
        };
        let timing = CudaTiming {
            events: Some(pair),
            spares: Arc::clone(&self.spare_events),
        };
        timing
            .pair()
            .0
            .record(&self.stream)
            .map_err(|e| err("cuEventRecord", e))?;
        Ok(timing)
    }

    /// Records the end of the work [`CudaApi::start_timing`] began.
    fn end_timing(&self, timing: CudaTiming) -> Result<CudaTiming, ApiError> {
        timing
            .pair()
            .1
            .record(&self.stream)
            .map_err(|e| err("cuEventRecord", e))?;
        Ok(timing)
    }
}

/// Whether the NVIDIA driver is installed (without initialising it).
///
/// # Errors
/// Why CUDA cannot be used.
pub fn available() -> Result<(), String> {
    libs::driver()
}

/// The oldest driver crossover's driver calls exist in (CUDA 12.8 added
/// `cuEventElapsedTime_v2`, which cudarc's CUDA 13 bindings call).
pub const MIN_DRIVER: i32 = 12080;

/// Whether a driver of version `driver` (`12080` for 12.8) can run what
/// NVRTC `nvrtc` makes: a CUBIN needs a driver of the same major version
/// or newer (minor-version compatibility), PTX a driver at least as new as
/// the compiler.
///
/// # Errors
/// Which version is too old, and what to install.
pub fn check_versions(driver: i32, nvrtc: (i32, i32), ptx: bool) -> Result<(), String> {
    let v = |x: i32| format!("{}.{}", x / 1000, (x % 1000) / 10);
    if driver < MIN_DRIVER {
        return Err(format!(
            "the NVIDIA driver supports CUDA {}; crossover needs CUDA {} or newer (driver 570+)",
            v(driver),
            v(MIN_DRIVER)
        ));
    }
    let compiler = nvrtc.0 * 1000 + nvrtc.1 * 10;
    let too_new = if ptx {
        compiler > driver
    } else {
        nvrtc.0 > driver / 1000
    };
    if too_new {
        return Err(format!(
            "NVRTC {}.{} makes code the driver (CUDA {}) cannot load: update the driver, or install the NVRTC of CUDA {} (pip install nvidia-cuda-nvrtc-cu{})",
            nvrtc.0,
            nvrtc.1,
            v(driver),
            driver / 1000,
            driver / 1000
        ));
    }
    Ok(())
}

impl CudaApi {
    /// Opens device `ordinal` (initialising the driver).
    ///
    /// # Errors
    /// No driver, no device, NVRTC missing, or a driver call failing.
    pub fn open(ordinal: usize) -> Result<CudaApi, String> {
        libs::driver()?;
        let nvrtc_at = libs::nvrtc()?;
        let (major, minor) = nvrtc::version()?;
        let open = || -> Result<CudaApi, String> {
            let e = |what: &str, e: result::DriverError| format!("{what}: {:?}", e.0);
            let mut driver = 0;
            // SAFETY: the driver is loaded; `driver` is valid for writes
            // (the one call that needs no cuInit).
            unsafe { sys::cuDriverGetVersion(&mut driver) }
                .result()
                .map_err(|x| e("cuDriverGetVersion", x))?;
            check_versions(driver, (major, minor), false)?;
            let ctx =
                CudaContext::new(ordinal).map_err(|x| e("cuInit/cuDevicePrimaryCtxRetain", x))?;
            // SAFETY: before any allocation or stream: crossover orders its
            // work on one stream itself.
            unsafe { ctx.disable_event_tracking() };
            let stream = ctx.new_stream().map_err(|x| e("cuStreamCreate", x))?;
            let attr = |a| ctx.attribute(a).unwrap_or(0);
            use sys::CUdevice_attribute_enum as A;
            let (cc_major, cc_minor) = ctx
                .compute_capability()
                .map_err(|x| e("cuDeviceGetAttribute", x))?;
            let cc = cc_major * 10 + cc_minor;
            let (arch, ptx) = nvrtc::target(cc, &nvrtc::supported_archs().unwrap_or_default());
            check_versions(driver, (major, minor), ptx)?;
            // SAFETY: a device from the context; memory released only by
            // `trim_to` (a threshold of 0 returns it at every synchronise).
            let pool = unsafe {
                let pool = result::device::get_default_mem_pool(ctx.cu_device())
                    .map_err(|x| e("cuDeviceGetDefaultMemPool", x))?;
                let mut threshold = u64::MAX;
                result::mem_pool::set_attribute(
                    pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    &mut threshold as *mut u64 as *mut c_void,
                )
                .map_err(|x| e("cuMemPoolSetAttribute", x))?;
                pool
            };
            let info = DeviceInfo {
                api: "cuda",
                name: ctx.name().unwrap_or_else(|_| "NVIDIA GPU".into()),
                vendor: "NVIDIA".into(),
                driver: format!(
                    "CUDA {}.{}, NVRTC {major}.{minor}, sm_{cc} ({})",
                    driver / 1000,
                    (driver % 1000) / 10,
                    if ptx {
                        format!("PTX for compute_{arch}")
                    } else {
                        format!("CUBIN sm_{arch}")
                    }
                ),
                is_gpu: true,
                compute_units: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).max(0) as u32,
                clock_mhz: (attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000).max(0) as u32,
                memory_bytes: ctx.total_mem().unwrap_or(0) as u64,
                max_alloc_bytes: ctx.total_mem().unwrap_or(0) as u64,
                fp64: true,
                max_group: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK).max(0) as usize,
                local_mem_bytes: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK).max(0)
                    as u64,
                // 4 KB is the classic limit (CUDA 12.1 allows 32 KB on Volta+).
                max_param_bytes: 4096,
                memory_bus: Some((
                    attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).max(0) as u32,
                    (attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000).max(0) as u32,
                )),
            };
            if debug_log() {
                eprintln!(
                    "crossover: cuda: {} (NVRTC from {nvrtc_at})",
                    info.describe()
                );
            }
            Ok(CudaApi {
                staging: Staging::new(Arc::clone(&ctx)),
                spare_events: Arc::default(),
                ctx,
                stream,
                pool,
                info,
                arch,
                ptx,
                pid: std::process::id(),
                blas: blas::Slot::new(),
                fft_plans: fft::Plans::default(),
                solver: solver::Slot::new(),
                sparse: sparse::Slot::new(),
            })
        };
        std::panic::catch_unwind(open)
            .unwrap_or_else(|_| Err("the CUDA driver is missing a function".into()))
    }

    /// Binds the context to this thread; refuses a forked child.
    fn enter(&self, call: &'static str) -> Result<(), ApiError> {
        if std::process::id() != self.pid {
            return Err(ApiError::new(
                call,
                "CUDA was initialised in the parent process; a forked child cannot use the GPU (use the 'spawn' start method)",
            ));
        }
        self.ctx.bind_to_thread().map_err(|e| err(call, e))
    }
}

impl GpuApi for CudaApi {
    type Mem = CudaMem;
    type Module = CudaKernels;
    type Event = CudaTiming;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn dialect(&self) -> Dialect {
        Dialect::Cuda
    }

    fn options(&self) -> String {
        format!(
            "{} sm_{} fmad=false",
            if self.ptx { "ptx" } else { "cubin" },
            self.arch
        )
    }

    fn alloc(&self, bytes: usize) -> Result<CudaMem, ApiError> {
        self.enter("cuMemAllocFromPoolAsync")?;
        // SAFETY: a valid pool and stream; the memory is written before it
        // is read (the core copies or a kernel fills it).
        let ptr = unsafe {
            result::mem_pool::alloc_async(self.pool, bytes.max(1), self.stream.cu_stream())
        }
        .map_err(|e| err("cuMemAllocFromPoolAsync", e))?;
        Ok(CudaMem {
            ptr,
            ctx: Arc::clone(&self.ctx),
            stream: Arc::clone(&self.stream),
            pid: self.pid,
            lender: None,
        })
    }

    fn address(&self, mem: &CudaMem) -> Option<(usize, u64)> {
        Some((self.ctx.ordinal(), mem.ptr))
    }

    fn import(
        &self,
        ptr: u64,
        keep: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Result<CudaMem, ApiError> {
        self.enter("cuCtxSynchronize")?;
        // The lender may still be writing on a stream of its own: wait for
        // everything queued in the (shared primary) context once, so our
        // stream's later reads see its results.
        self.ctx
            .synchronize()
            .map_err(|e| err("cuCtxSynchronize", e))?;
        Ok(CudaMem {
            ptr,
            ctx: Arc::clone(&self.ctx),
            stream: Arc::clone(&self.stream),
            pid: self.pid,
            lender: Some(keep),
        })
    }

    fn write(&self, dst: &CudaMem, src: &[u8]) -> Result<(), ApiError> {
        if src.is_empty() {
            return Ok(());
        }
        self.enter("cuMemcpyHtoDAsync")?;
        // `dst` holds at least `src.len()` bytes (the pool sizes it).
        self.staging
            .write(&self.stream, dst.ptr, src)
            .map_err(|e| err("cuMemcpyHtoDAsync", e))
    }

    fn read(&self, src: &CudaMem, dst: &mut [u8]) -> Result<(), ApiError> {
        if dst.is_empty() {
            return Ok(());
        }
        self.enter("cuMemcpyDtoHAsync")?;
        // `src` holds at least `dst.len()` bytes; the stream orders the
        // copy after every kernel before it.
        self.staging
            .read(&self.stream, src.ptr, dst)
            .map_err(|e| err("cuMemcpyDtoHAsync", e))
    }

    fn compile(
        &self,
        source: &str,
        entries: &[String],
        _keep_binary: bool,
    ) -> Result<Compiled<CudaKernels>, ApiError> {
        // The CUBIN is what the driver loads: keeping it costs nothing.
        let out = nvrtc::compile(source, self.arch, self.ptx)?;
        let module = self.load(&out.binary, entries)?;
        Ok(Compiled {
            module,
            binary: Some(out.binary),
        })
    }

    fn load(&self, binary: &[u8], entries: &[String]) -> Result<CudaKernels, ApiError> {
        self.enter("cuModuleLoadData")?;
        let mut image = binary.to_vec();
        if self.ptx {
            image.push(0); // PTX text is read as a C string
        }
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(image))
            .map_err(|e| err("cuModuleLoadData", e))?;
        let functions = entries
            .iter()
            .map(|name| {
                module
                    .load_function(name)
                    .map_err(|e| err("cuModuleGetFunction", e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CudaKernels {
            _module: module,
            functions,
        })
    }

    fn launch(
        &self,
        module: &CudaKernels,
        entry: usize,
        groups: usize,
        args: &[Arg<'_, CudaMem>],
    ) -> Result<CudaTiming, ApiError> {
        self.enter("cuLaunchKernel")?;
        let f = module
            .functions
            .get(entry)
            .ok_or_else(|| ApiError::new("cuLaunchKernel", "no such entry point"))?;
        let grid = u32::try_from(groups)
            .ok()
            .filter(|&g| g >= 1)
            .ok_or_else(|| ApiError::new("cuLaunchKernel", format!("{groups} blocks")))?;
        // Kernel parameters are pointers to each argument's value: a device
        // address, or the parameter struct's bytes (copied at launch).
        let mut params: Vec<*mut c_void> = args
            .iter()
            .map(|a| match a {
                Arg::Mem(m) => &m.ptr as *const sys::CUdeviceptr as *mut c_void,
                Arg::Bytes(b) => b.as_ptr() as *mut c_void,
            })
            .collect();
        let timing = self.start_timing()?;
        // SAFETY: a function of a loaded module; `params` has one pointer per
        // kernel parameter, each valid for the duration of the call (the
        // driver copies the values); the memory lives until the stream
        // finishes (the core holds the buffers until `synchronize`).
        unsafe {
            result::launch_kernel(
                f.cu_function(),
                (grid, 1, 1),
                (GROUP as u32, 1, 1),
                0,
                self.stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(|e| err("cuLaunchKernel", e))?;
        self.end_timing(timing)
    }

    fn synchronize(&self) -> Result<(), ApiError> {
        self.enter("cuStreamSynchronize")?;
        self.stream
            .synchronize()
            .map_err(|e| err("cuStreamSynchronize", e))
    }

    fn gemm(&self, g: &Gemm<'_, CudaMem>) -> Option<Result<CudaTiming, ApiError>> {
        self.cublas_gemm(g)
    }

    fn fft_axis(&self, f: &FftAxis<'_, CudaMem>) -> Option<Result<CudaTiming, ApiError>> {
        self.cufft_axis(f)
    }

    fn dense(
        &self,
        job: &DenseJob<'_, CudaMem>,
    ) -> Option<Result<DenseDone<CudaTiming>, ApiError>> {
        self.cusolver_dense(job)
    }

    fn spmm(&self, s: &SparseDense<'_, CudaMem>) -> Option<Result<CudaTiming, ApiError>> {
        self.cusparse_spmm(s)
    }

    fn spgemm(&self, s: &SparseSparse<'_, CudaMem>) -> SpgemmOutcome<CudaMem> {
        self.cusparse_spgemm(s)
    }

    fn sparse_name(&self) -> Option<&'static str> {
        sparse::name()
    }

    fn solver_name(&self) -> Option<&'static str> {
        libs::cusolver().ok().map(|_| "cuSOLVER")
    }

    fn fft_any_length(&self) -> bool {
        libs::cufft().is_ok()
    }

    fn blas_name(&self) -> Option<String> {
        libs::cublas().ok().map(|_| blas::describe())
    }

    fn fft_name(&self) -> Option<&'static str> {
        libs::cufft().ok().map(|_| "cuFFT")
    }

    fn elapsed(&self, event: &CudaTiming) -> Result<Option<f64>, ApiError> {
        self.enter("cuEventElapsedTime")?;
        let (start, end) = event.pair();
        let ms = start
            .elapsed_ms(end)
            .map_err(|e| err("cuEventElapsedTime", e))?;
        Ok(Some(ms as f64 / 1e3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spares_are_reused_last_in_first_out_and_bounded() {
        let spares = Spares::<usize>::default();
        assert_eq!(spares.take(), None);
        for i in 0..Spares::<usize>::MAX + 5 {
            spares.put(i);
        }
        // The first MAX were kept, the rest dropped; the newest comes first.
        assert_eq!(spares.take(), Some(Spares::<usize>::MAX - 1));
        let mut left = 1;
        while spares.take().is_some() {
            left += 1;
        }
        assert_eq!(left, Spares::<usize>::MAX);
    }

    #[test]
    fn versions_are_checked_before_a_driver_call_fails() {
        // CUDA 13.0 driver, NVRTC 13.0 wheel: fine either way.
        assert!(check_versions(13000, (13, 0), false).is_ok());
        assert!(check_versions(13000, (13, 0), true).is_ok());
        // A CUBIN from NVRTC 12.9 loads on a 12.8 driver; PTX does not.
        assert!(check_versions(12080, (12, 9), false).is_ok());
        let e = check_versions(12080, (12, 9), true).unwrap_err();
        assert!(e.contains("NVRTC 12.9") && e.contains("CUDA 12.8"), "{e}");
        // NVRTC 13 on a CUDA 12 driver: says which NVRTC to install.
        let e = check_versions(12090, (13, 0), false).unwrap_err();
        assert!(e.contains("nvidia-cuda-nvrtc-cu12"), "{e}");
        // Too old for the driver calls at all.
        let e = check_versions(12040, (12, 4), false).unwrap_err();
        assert!(
            e.contains("supports CUDA 12.4") && e.contains("12.8"),
            "{e}"
        );
    }
}
