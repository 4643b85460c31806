//! [`OpenClApi`]: the GPU core's [`GpuApi`] over OpenCL, with libOpenCL
//! loaded at run time (the `opencl3` crate's `dynamic` feature), so the
//! binary starts on machines with no OpenCL at all.
//!
//! Every platform and device is listed ([`discover`]); auto placement uses
//! GPU-type devices, and a CPU-type device (pocl) only when named
//! (`CROSSOVER_GPU=opencl:pocl`) or in tests, since it shares the cores the
//! CPU backend already uses. CI executes every generated kernel on pocl.

use crate::gpu::api::{ApiError, Arg, Compiled, DeviceInfo, GpuApi};
use crate::gpu::codegen::{Dialect, GROUP};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{
    Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU, CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT,
};
use opencl3::error_codes::ClError;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use opencl3::types::{cl_device_id, cl_event, cl_mem, CL_BLOCKING};
use std::ffi::c_void;
use std::sync::Mutex;

/// OpenCL's error name for a status code.
fn err(call: &'static str, code: i32) -> ApiError {
    let name = String::from(ClError(code));
    match code {
        // CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES,
        // CL_OUT_OF_HOST_MEMORY, CL_INVALID_BUFFER_SIZE.
        -4 | -5 | -6 | -61 => ApiError::oom(call, name),
        _ => ApiError::new(call, name),
    }
}

/// One OpenCL device found on this machine.
#[derive(Clone, Debug)]
pub struct Found {
    /// The platform's name (`Portable Computing Language`, `NVIDIA CUDA`).
    pub platform: String,
    pub info: DeviceInfo,
    id: usize,
}

// SAFETY-free wrapper: device ids are plain handles valid for the process.
fn device_id(f: &Found) -> cl_device_id {
    f.id as cl_device_id
}

/// Loads the OpenCL library: `CROSSOVER_OPENCL_LIBRARY` (a path) when set,
/// else `libOpenCL.so.1` from the usual search path. The handle stays
/// loaded, so the `opencl3` crate's own load of `libOpenCL.so.1` finds the
/// same library by its soname. It is loaded `RTLD_LOCAL`: a global ICD
/// loader would interpose its symbols on a driver that exports the same
/// names (Oclgrind's runtime does) and send its calls round in circles.
fn load_library() -> Result<(), String> {
    let name = std::env::var("CROSSOVER_OPENCL_LIBRARY")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "libOpenCL.so.1".to_string());
    let c = std::ffi::CString::new(name.clone())
        .map_err(|_| format!("CROSSOVER_OPENCL_LIBRARY={name:?} is not a valid path"))?;
    // SAFETY: dlopen with a valid NUL-terminated name; loading the ICD
    // loader runs its initialisers, which it allows at any time. The handle
    // is deliberately kept for the life of the process.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        return Err(format!("no OpenCL library ({name} cannot be loaded; install an OpenCL ICD loader and a driver, e.g. ocl-icd-libopencl1 and pocl-opencl-icd)"));
    }
    Ok(())
}

/// The ICD loader's variable naming the drivers to load.
const ICD_FILENAMES: &str = "OCL_ICD_FILENAMES";

/// Puts an environment variable back to `saved` when something in this
/// process changed it (nothing to do when it was unset before).
fn restore_env_var(name: &str, saved: Option<std::ffi::OsString>) {
    if let Some(saved) = saved {
        if std::env::var_os(name).as_ref() != Some(&saved) {
            std::env::set_var(name, saved);
        }
    }
}

/// Every OpenCL device, or why there is none (no libOpenCL, no platform).
///
/// An ICD loader may split `OCL_ICD_FILENAMES` in place, in this process's
/// own environment (Khronos' loader writes a NUL over each `:` of the string
/// `getenv` returned), so after the first listing the variable names only
/// its first driver and every process started later (a subprocess, a Dask
/// worker, the kernel-cache test's child) sees one platform: on an H200
/// machine whose loader read `libpocl.so.2:libnvidia-opencl.so.1`, children
/// saw pocl alone (2026-11-28). The value is put back after listing.
/// Setting a variable races with C code reading the environment on another
/// thread, so it is written only when the loader changed it.
pub fn discover() -> Result<Vec<Found>, String> {
    let icd_filenames = std::env::var_os(ICD_FILENAMES);
    let found = discover_platforms();
    restore_env_var(ICD_FILENAMES, icd_filenames);
    found
}

fn discover_platforms() -> Result<Vec<Found>, String> {
    load_library()?;
    let guarded = std::panic::catch_unwind(|| -> Result<Vec<Found>, String> {
        let platforms = opencl3::platform::get_platforms().map_err(|e| {
            if e.0 == -2000 {
                "no OpenCL library (libOpenCL.so.1 cannot be loaded)".to_string()
            } else if e.0 == -1001 {
                "no OpenCL platform installed (the ICD loader found none)".to_string()
            } else {
                format!("OpenCL platforms cannot be listed: {}", String::from(e))
            }
        })?;
        let mut found = Vec::new();
        for p in platforms {
            let pname = p.name().unwrap_or_else(|_| "unknown platform".into());
            let Ok(ids) = p.get_devices(CL_DEVICE_TYPE_ALL) else {
                continue;
            };
            for id in ids {
                if let Ok(info) = describe(Device::new(id)) {
                    found.push(Found {
                        platform: pname.clone(),
                        info,
                        id: id as usize,
                    });
                }
            }
        }
        if found.is_empty() {
            return Err("OpenCL is installed but reports no device".into());
        }
        Ok(found)
    });
    guarded.unwrap_or_else(|_| Err("OpenCL discovery panicked".into()))
}

fn describe(d: Device) -> Result<DeviceInfo, ClError> {
    let is_gpu = d.dev_type()? & CL_DEVICE_TYPE_GPU != 0;
    let version = d.version().unwrap_or_default();
    Ok(DeviceInfo {
        api: "opencl",
        name: d.name()?.trim().to_string(),
        vendor: d.vendor()?.trim().to_string(),
        driver: format!("{} ({})", d.driver_version()?.trim(), version.trim()),
        is_gpu,
        compute_units: d.max_compute_units()?,
        clock_mhz: d.max_clock_frequency().unwrap_or(0),
        memory_bytes: d.global_mem_size()?,
        max_alloc_bytes: d.max_mem_alloc_size()?,
        fp64: d.double_fp_config().unwrap_or(0) != 0,
        max_group: d.max_work_group_size()?,
        local_mem_bytes: d.local_mem_size()?,
        max_param_bytes: d.max_parameter_size().unwrap_or(256),
        memory_bus: None,
    })
}

/// A device allocation (released without panicking on drop).
pub struct ClMem(cl_mem);

// SAFETY: an OpenCL memory object is a reference-counted handle usable from
// any thread (OpenCL API calls are thread-safe except clSetKernelArg).
unsafe impl Send for ClMem {}
// SAFETY: see Send.
unsafe impl Sync for ClMem {}

impl Drop for ClMem {
    fn drop(&mut self) {
        // SAFETY: the handle came from clCreateBuffer and is released once.
        let _ = unsafe { opencl3::memory::release_mem_object(self.0) };
    }
}

/// A launch's event (released without panicking on drop).
pub struct ClEvent(cl_event);

// SAFETY: events are thread-safe reference-counted handles.
unsafe impl Send for ClEvent {}
// SAFETY: see Send.
unsafe impl Sync for ClEvent {}

impl Drop for ClEvent {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the event came from an enqueue call and is released once.
            let _ = unsafe { opencl3::event::release_event(self.0) };
        }
    }
}

/// A built program and its kernels (kernel arguments are set under the
/// lock: clSetKernelArg is not thread-safe).
pub struct ClModule {
    _program: Program,
    kernels: Mutex<Vec<Kernel>>,
}

/// One OpenCL device with its context and in-order, profiling queue.
pub struct OpenClApi {
    info: DeviceInfo,
    platform: String,
    options: String,
    // Dropped in this order: queue before context.
    queue: CommandQueue,
    context: Context,
}

impl std::fmt::Debug for OpenClApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenClApi({} on {})", self.info.name, self.platform)
    }
}

impl OpenClApi {
    /// Opens `device`: a context and a command queue with profiling.
    ///
    /// # Errors
    /// The OpenCL call that failed.
    pub fn open(device: &Found) -> Result<OpenClApi, ApiError> {
        let dev = Device::new(device_id(device));
        let context = Context::from_device(&dev).map_err(|e| err("clCreateContext", e.0))?;
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .or_else(|_| {
                    // OpenCL 1.x platforms lack clCreateCommandQueueWithProperties.
                    #[allow(deprecated)]
                    // SAFETY: a valid context and one of its devices.
                    unsafe {
                        CommandQueue::create(&context, dev.id(), CL_QUEUE_PROFILING_ENABLE)
                    }
                })
                .map_err(|e| err("clCreateCommandQueue", e.0))?;
        let mut options = String::from("-cl-std=CL1.2");
        if dev.single_fp_config().unwrap_or(0) & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0 {
            // The CPU's float32 division and sqrt are correctly rounded.
            options.push_str(" -cl-fp32-correctly-rounded-divide-sqrt");
        }
        Ok(OpenClApi {
            info: device.info.clone(),
            platform: device.platform.clone(),
            options,
            queue,
            context,
        })
    }

    /// The platform's name.
    pub fn platform(&self) -> &str {
        &self.platform
    }

    fn kernels(&self, program: &Program, entries: &[String]) -> Result<Vec<Kernel>, ApiError> {
        entries
            .iter()
            .map(|e| Kernel::create(program, e).map_err(|x| err("clCreateKernel", x.0)))
            .collect()
    }
}

impl GpuApi for OpenClApi {
    type Mem = ClMem;
    type Module = ClModule;
    type Event = ClEvent;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn dialect(&self) -> Dialect {
        Dialect::OpenCl
    }

    fn options(&self) -> String {
        self.options.clone()
    }

    fn alloc(&self, bytes: usize) -> Result<ClMem, ApiError> {
        // SAFETY: a valid context; no host pointer.
        let m = unsafe {
            opencl3::memory::create_buffer(
                self.context.get(),
                opencl3::memory::CL_MEM_READ_WRITE,
                bytes.max(1),
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| err("clCreateBuffer", e))?;
        Ok(ClMem(m))
    }

    fn write(&self, dst: &ClMem, src: &[u8]) -> Result<(), ApiError> {
        if src.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking write of src.len() bytes from a live slice into a
        // buffer at least that large (the pool sizes it).
        let ev = unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                self.queue.get(),
                dst.0,
                CL_BLOCKING,
                0,
                src.len(),
                src.as_ptr() as *const c_void,
                0,
                std::ptr::null(),
            )
        }
        .map_err(|e| err("clEnqueueWriteBuffer", e))?;
        drop(ClEvent(ev));
        Ok(())
    }

    fn read(&self, src: &ClMem, dst: &mut [u8]) -> Result<(), ApiError> {
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking read of dst.len() bytes into a live slice; the
        // in-order queue runs it after every kernel enqueued before.
        let ev = unsafe {
            opencl3::command_queue::enqueue_read_buffer(
                self.queue.get(),
                src.0,
                CL_BLOCKING,
                0,
                dst.len(),
                dst.as_mut_ptr() as *mut c_void,
                0,
                std::ptr::null(),
            )
        }
        .map_err(|e| err("clEnqueueReadBuffer", e))?;
        drop(ClEvent(ev));
        Ok(())
    }

    fn compile(
        &self,
        source: &str,
        entries: &[String],
        keep_binary: bool,
    ) -> Result<Compiled<ClModule>, ApiError> {
        let program = Program::create_and_build_from_source(&self.context, source, &self.options)
            .map_err(|log| ApiError::new("clBuildProgram", log))?;
        let binary = if keep_binary {
            program.get_binaries().ok().and_then(|mut b| b.pop())
        } else {
            None
        };
        let kernels = self.kernels(&program, entries)?;
        Ok(Compiled {
            module: ClModule {
                _program: program,
                kernels: Mutex::new(kernels),
            },
            binary: binary.filter(|b| !b.is_empty()),
        })
    }

    fn load(&self, binary: &[u8], entries: &[String]) -> Result<ClModule, ApiError> {
        let program =
            Program::create_and_build_from_binary(&self.context, &[binary], &self.options)
                .map_err(|e| err("clBuildProgram (binary)", e.0))?;
        let kernels = self.kernels(&program, entries)?;
        Ok(ClModule {
            _program: program,
            kernels: Mutex::new(kernels),
        })
    }

    fn launch(
        &self,
        module: &ClModule,
        entry: usize,
        groups: usize,
        args: &[Arg<'_, ClMem>],
    ) -> Result<ClEvent, ApiError> {
        let kernels = module.kernels.lock().unwrap_or_else(|p| p.into_inner());
        let k = kernels
            .get(entry)
            .ok_or_else(|| ApiError::new("clEnqueueNDRangeKernel", "no such entry point"))?;
        for (i, a) in args.iter().enumerate() {
            let (size, ptr) = match a {
                Arg::Mem(m) => (
                    std::mem::size_of::<cl_mem>(),
                    &m.0 as *const cl_mem as *const c_void,
                ),
                Arg::Bytes(b) => (b.len(), b.as_ptr() as *const c_void),
            };
            // SAFETY: `ptr` points to `size` readable bytes (a cl_mem handle
            // or the parameter struct) for the duration of the call; the
            // kernel lock serialises argument setting.
            unsafe { opencl3::kernel::set_kernel_arg(k.get(), i as u32, size, ptr) }
                .map_err(|e| err("clSetKernelArg", e))?;
        }
        let global = groups * GROUP;
        let local = GROUP;
        // SAFETY: a built kernel with every argument set, one dimension,
        // sizes that live across the call.
        let ev = unsafe {
            opencl3::command_queue::enqueue_nd_range_kernel(
                self.queue.get(),
                k.get(),
                1,
                std::ptr::null(),
                &global,
                &local,
                0,
                std::ptr::null(),
            )
        }
        .map_err(|e| err("clEnqueueNDRangeKernel", e))?;
        Ok(ClEvent(ev))
    }

    fn synchronize(&self) -> Result<(), ApiError> {
        self.queue.finish().map_err(|e| err("clFinish", e.0))
    }

    fn elapsed(&self, event: &ClEvent) -> Result<Option<f64>, ApiError> {
        let ev = opencl3::event::Event::new(event.0);
        let times = (ev.profiling_command_start(), ev.profiling_command_end());
        // The wrapper must not release the handle ClEvent owns.
        std::mem::forget(ev);
        match times {
            (Ok(a), Ok(b)) if b >= a => Ok(Some((b - a) as f64 * 1e-9)),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::restore_env_var;

    #[test]
    fn a_variable_changed_during_listing_is_put_back() {
        // A name of its own: tests share the process's environment.
        let name = "CROSSOVER_TEST_ICD_FILENAMES_RESTORE";
        std::env::set_var(name, "libpocl.so.2:libnvidia-opencl.so.1");
        let saved = std::env::var_os(name);
        // What the ICD loader left behind on an H200 machine.
        std::env::set_var(name, "libpocl.so.2");
        restore_env_var(name, saved);
        assert_eq!(
            std::env::var(name).as_deref(),
            Ok("libpocl.so.2:libnvidia-opencl.so.1")
        );
        // Unset before: left as it is.
        std::env::set_var(name, "set by someone later");
        restore_env_var(name, None);
        assert_eq!(std::env::var(name).as_deref(), Ok("set by someone later"));
        std::env::remove_var(name);
    }
}
