//! NVRTC: CUDA C to a CUBIN for one architecture (PTX only for a device
//! newer than the compiler knows). Needs no GPU, which is how CI compiles
//! every generated kernel for NVIDIA.
//!
//! cudarc's safe API only returns PTX, and PTX from an NVRTC newer than the
//! driver fails to load, so this goes through cudarc's raw `result`/`sys`
//! calls.

use super::libs;
use crate::gpu::api::ApiError;
use cudarc::nvrtc::{result, sys};
use std::ffi::{c_char, CString};

/// What NVRTC made of one source.
#[derive(Clone, Debug)]
pub struct Output {
    /// The CUBIN (an ELF file), or PTX text when `ptx` is set.
    pub binary: Vec<u8>,
    /// The binary is PTX (the driver compiles it when loading).
    pub ptx: bool,
    /// The compile log (with ptxas' verbose report from
    /// [`compile_with_report`]).
    pub log: String,
}

impl Output {
    /// Registers used by each entry point, from ptxas' verbose log
    /// (`Compiling entry function 'x' for 'sm_90'` ... `Used N registers`).
    pub fn registers(&self) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        let mut entry = None;
        for line in self.log.lines() {
            if let Some(rest) = line.split("Compiling entry function '").nth(1) {
                entry = rest.split('\'').next().map(str::to_string);
            }
            if let Some(rest) = line.split("Used ").nth(1) {
                if let (Some(e), Some(n)) = (
                    entry.take(),
                    rest.split_whitespace()
                        .next()
                        .and_then(|n| n.parse::<u32>().ok()),
                ) {
                    out.push((e, n));
                }
            }
        }
        out
    }

    /// Whether ptxas spilled registers to local memory anywhere.
    pub fn spills(&self) -> bool {
        self.log.lines().any(|l| {
            l.contains("Registers are spilled")
                || l.split(" bytes spill stores")
                    .next()
                    .filter(|_| l.contains(" bytes spill stores"))
                    .and_then(|s| s.split_whitespace().last())
                    .and_then(|n| n.parse::<u64>().ok())
                    .is_some_and(|n| n > 0)
        })
    }
}

/// NVRTC's version (major, minor), loading it first.
///
/// # Errors
/// Why NVRTC is not available.
pub fn version() -> Result<(i32, i32), String> {
    libs::nvrtc()?;
    let r = std::panic::catch_unwind(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: the library is loaded (checked above); the out-pointers
        // are valid for writes.
        let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
        (r, major, minor)
    });
    match r {
        Ok((sys::nvrtcResult::NVRTC_SUCCESS, major, minor)) => Ok((major, minor)),
        Ok((e, ..)) => Err(format!("nvrtcVersion failed: {e:?}")),
        Err(_) => Err("NVRTC has no nvrtcVersion".into()),
    }
}

/// The architectures this NVRTC compiles for (`[75, 80, 86, 89, 90, ...]`).
///
/// # Errors
/// Why NVRTC is not available.
pub fn supported_archs() -> Result<Vec<i32>, String> {
    libs::nvrtc()?;
    let r = std::panic::catch_unwind(|| {
        let mut n = 0;
        // SAFETY: the library is loaded; `n` is valid for writes.
        if unsafe { sys::nvrtcGetNumSupportedArchs(&mut n) } != sys::nvrtcResult::NVRTC_SUCCESS {
            return Vec::new();
        }
        let mut archs = vec![0i32; n.max(0) as usize];
        // SAFETY: `archs` holds the `n` entries NVRTC writes.
        if unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
            != sys::nvrtcResult::NVRTC_SUCCESS
        {
            return Vec::new();
        }
        archs
    });
    r.map_err(|_| "NVRTC cannot list its architectures".to_string())
}

/// The architecture to compile for a device of compute capability `cc`
/// (`90` for 9.0): the device's own when NVRTC knows it (a CUBIN), else
/// NVRTC's newest as PTX, which the driver compiles for the device.
pub fn target(cc: i32, supported: &[i32]) -> (i32, bool) {
    if supported.is_empty() || supported.contains(&cc) {
        return (cc, false);
    }
    let newest = supported.iter().copied().filter(|&a| a <= cc).max();
    match newest {
        Some(a) => (a, true),
        None => (cc, false),
    }
}

/// Compiles `source` for `sm_<arch>` (PTX for `compute_<arch>` when `ptx`),
/// as the engine does: the log holds warnings and errors only.
///
/// # Errors
/// NVRTC missing, or the compile error with its log.
pub fn compile(source: &str, arch: i32, ptx: bool) -> Result<Output, ApiError> {
    compile_with(source, arch, ptx, false)
}

/// [`compile`] with ptxas' verbose report (registers, spills) in the log,
/// for [`Output::registers`] and [`Output::spills`].
///
/// With a driver installed, NVRTC keeps what ptxas made in the CUDA
/// compute cache, and a second compile of the same PTX (in any process)
/// skips ptxas and its report: an H100 gave empty reports to every process
/// after the first (2026-11-27; NVIDIA/cuda-python#1124 describes the
/// same). So the source gets a device variable named uniquely per compile,
/// which makes its PTX new to the cache.
///
/// # Errors
/// As [`compile`].
pub fn compile_with_report(source: &str, arch: i32, ptx: bool) -> Result<Output, ApiError> {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let salted = format!(
        "{source}\nextern \"C\" __device__ int {REPORT_SALT}{}_{nanos}_{n};\n",
        std::process::id()
    );
    compile_with(&salted, arch, ptx, true)
}

/// The name prefix of the device variable [`compile_with_report`] adds.
pub const REPORT_SALT: &str = "xo_report_salt_";

fn compile_with(source: &str, arch: i32, ptx: bool, report: bool) -> Result<Output, ApiError> {
    libs::nvrtc().map_err(|e| ApiError::new("nvrtc", e))?;
    let src = CString::new(source)
        .map_err(|_| ApiError::new("nvrtcCreateProgram", "the source contains a NUL byte"))?;
    let mut options = vec![
        if ptx {
            format!("--gpu-architecture=compute_{arch}")
        } else {
            format!("--gpu-architecture=sm_{arch}")
        },
        "--std=c++17".to_string(),
        // NumPy's results: no fused multiply-add contraction, IEEE division
        // and square roots, no flush to zero.
        "--fmad=false".to_string(),
        "--prec-div=true".to_string(),
        "--prec-sqrt=true".to_string(),
        "--ftz=false".to_string(),
        // Unused helpers of the prelude (#177) are not worth a warning.
        "-diag-suppress=177".to_string(),
    ];
    if report {
        options.push("--ptxas-options=--verbose".to_string());
        options.push("--ptxas-options=--warn-on-spills".to_string());
    }
    let run = || -> Result<Output, ApiError> {
        let prog = result::create_program(&src, None)
            .map_err(|e| ApiError::new("nvrtcCreateProgram", format!("{e:?}")))?;
        // SAFETY: `prog` was just created and is destroyed below, once.
        let compiled = unsafe { result::compile_program(prog, &options) };
        // SAFETY: as above; the log is read before the program is destroyed.
        let log = unsafe { result::get_program_log(prog) }
            .map(|l| c_chars_to_string(&l))
            .unwrap_or_default();
        let binary =
            compiled.map_err(|e| ApiError::new("nvrtcCompileProgram", format!("{e:?}\n{log}")));
        let binary = binary.and_then(|()| {
            if ptx {
                // SAFETY: the program compiled.
                unsafe { result::get_ptx(prog) }
                    .map(|p| c_chars_to_string(&p).into_bytes())
                    .map_err(|e| ApiError::new("nvrtcGetPTX", format!("{e:?}")))
            } else {
                cubin(prog)
            }
        });
        // SAFETY: created above, not destroyed before.
        let _ = unsafe { result::destroy_program(prog) };
        Ok(Output {
            binary: binary?,
            ptx,
            log,
        })
    };
    std::panic::catch_unwind(run)
        .unwrap_or_else(|_| Err(ApiError::new("nvrtc", "NVRTC is missing a function")))
}

/// The CUBIN of a compiled program.
fn cubin(prog: sys::nvrtcProgram) -> Result<Vec<u8>, ApiError> {
    let mut n = 0usize;
    // SAFETY: `prog` compiled; `n` is valid for writes.
    let r = unsafe { sys::nvrtcGetCUBINSize(prog, &mut n) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS || n == 0 {
        return Err(ApiError::new(
            "nvrtcGetCUBINSize",
            format!("no CUBIN ({r:?}, {n} bytes)"),
        ));
    }
    let mut buf = vec![0u8; n];
    // SAFETY: `buf` holds the `n` bytes NVRTC writes.
    let r = unsafe { sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(ApiError::new("nvrtcGetCUBIN", format!("{r:?}")));
    }
    Ok(buf)
}

fn c_chars_to_string(v: &[c_char]) -> String {
    let bytes: Vec<u8> = v.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_logs_are_read() {
        let out = Output {
            binary: Vec::new(),
            ptx: false,
            log: "ptxas info    : Compiling entry function 'k1' for 'sm_90'\n\
                  ptxas info    : Function properties for k1\n\
                  0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                  ptxas info    : Used 30 registers, used 0 barriers\n\
                  ptxas info    : Compiling entry function 'k2' for 'sm_90'\n\
                  8 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads\n\
                  ptxas info    : Used 255 registers\n"
                .into(),
        };
        assert_eq!(
            out.registers(),
            vec![("k1".to_string(), 30), ("k2".to_string(), 255)]
        );
        assert!(out.spills());
        let clean = Output {
            log: out.log.replace("16 bytes spill", "0 bytes spill"),
            ..out
        };
        assert!(!clean.spills());
    }

    #[test]
    fn targets_cap_at_what_nvrtc_knows() {
        let known = [75, 80, 86, 89, 90, 100, 120];
        assert_eq!(target(90, &known), (90, false));
        assert_eq!(target(121, &known), (120, true));
        assert_eq!(target(90, &[]), (90, false));
    }
}
