//! Finding NVIDIA's libraries and loading them by absolute path before
//! cudarc's first call (cudarc only asks the dynamic loader by file name,
//! which knows neither pip wheels nor CUDA toolkits outside its path).
//!
//! Search order: `CROSSOVER_CUDA_LIB_DIR` (`:`-separated), `CUDA_PATH` and
//! `CUDA_HOME`, `/usr/local/cuda*`, then the `nvidia/cu13/lib` (CUDA 13)
//! and `nvidia/cuda_nvrtc/lib` (CUDA 12) folders of Python environments
//! (`VIRTUAL_ENV`, `CONDA_PREFIX`, the folders `CROSSOVER_PYTHON_PATH`
//! lists, which the Python package sets from `sys.path`), and finally the
//! loader's own search. The driver (`libcuda.so.1`) comes only from the
//! system. `CROSSOVER_LOG=debug` prints what was loaded from where.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Folders that may hold NVIDIA's libraries, in search order.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(v) = var("CROSSOVER_CUDA_LIB_DIR") {
        dirs.extend(std::env::split_paths(&v));
    }
    for k in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(v) = var(k) {
            let root = PathBuf::from(v);
            dirs.push(root.join("lib64"));
            dirs.push(root.join("targets/x86_64-linux/lib"));
        }
    }
    let mut toolkits: Vec<PathBuf> = std::fs::read_dir("/usr/local")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("cuda"))
                })
                .collect()
        })
        .unwrap_or_default();
    toolkits.sort();
    toolkits.reverse(); // `cuda` (the current link) and the newest first
    dirs.extend(toolkits.into_iter().map(|t| t.join("lib64")));
    let mut sites: Vec<PathBuf> = Vec::new();
    if let Some(v) = var("CROSSOVER_PYTHON_PATH") {
        sites.extend(std::env::split_paths(&v));
    }
    for k in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = var(k) {
            sites.extend(python_site_dirs(Path::new(&v)));
        }
    }
    for site in sites {
        dirs.push(site.join("nvidia/cu13/lib"));
        dirs.push(site.join("nvidia/cuda_nvrtc/lib"));
        dirs.push(site.join("nvidia/cublas/lib"));
        dirs.push(site.join("nvidia/cufft/lib"));
        dirs.push(site.join("nvidia/cusolver/lib"));
        dirs.push(site.join("nvidia/cusparse/lib"));
        dirs.push(site.join("nvidia/nvjitlink/lib"));
    }
    dirs.retain(|d| d.is_dir());
    dirs.dedup();
    dirs
}

/// `prefix/lib/python3.*/site-packages` folders.
fn python_site_dirs(prefix: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(prefix.join("lib"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path().join("site-packages"))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

/// The first of `names` (`libnvrtc.so.13`) found in `dirs`, in order.
fn find(dirs: &[PathBuf], names: &[&str]) -> Option<PathBuf> {
    dirs.iter()
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
}

fn debug(msg: &str) {
    if super::debug_log() {
        eprintln!("crossover: cuda: {msg}");
    }
}

/// `dlopen(path, RTLD_NOW | RTLD_GLOBAL)`: a later `dlopen` by file name
/// (cudarc's) finds the loaded library by its SONAME.
fn load_global(path: &Path) -> Result<(), String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: a NUL byte in the path", path.display()))?;
    // SAFETY: a valid C string; the handle is kept for the process (never
    // closed), so the library's code stays mapped.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if h.is_null() {
        // SAFETY: dlerror returns a thread-local C string or null.
        let why = unsafe {
            let e = libc::dlerror();
            if e.is_null() {
                "unknown error".to_string()
            } else {
                std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
            }
        };
        return Err(format!("loading {}: {why}", path.display()));
    }
    debug(&format!("loaded {}", path.display()));
    Ok(())
}

/// NVRTC's sonames, newest first (CUDA 13, then 12).
const NVRTC: [(&str, &str); 2] = [
    ("libnvrtc.so.13", "libnvrtc-builtins.so.13.0"),
    ("libnvrtc.so.12", "libnvrtc-builtins.so.12"),
];

/// Loads NVRTC once per process: the builtins first (NVRTC opens them by
/// name when it compiles), then NVRTC itself. Returns where it came from.
///
/// # Errors
/// Why NVRTC is not available (the folders searched).
pub fn nvrtc() -> Result<&'static str, String> {
    static LOADED: OnceLock<Result<String, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let dirs = search_dirs();
            for (lib, builtins) in NVRTC {
                if let Some(path) = find(&dirs, &[lib]) {
                    let dir = path.parent().unwrap_or(Path::new("."));
                    // CUDA 12 wheels name the builtins with a minor version.
                    let b = find(&[dir.to_path_buf()], &[builtins]).or_else(|| {
                        std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).find(|p| {
                            p.file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(|n| n.starts_with(builtins) && !n.contains(".alt."))
                        })
                    });
                    if let Some(b) = b {
                        load_global(&b)?;
                    }
                    load_global(&path)?;
                    return Ok(path.display().to_string());
                }
            }
            // The loader's own search (LD_LIBRARY_PATH, ld.so.cache).
            // SAFETY: cudarc's probe only opens the library.
            let present = std::panic::catch_unwind(|| unsafe {
                cudarc::nvrtc::sys::is_culib_present()
            })
            .unwrap_or(false);
            if present {
                debug("NVRTC from the loader's search path");
                Ok("the loader's search path".to_string())
            } else {
                Err(format!(
                    "NVRTC (libnvrtc.so.13) not found: searched CROSSOVER_CUDA_LIB_DIR, CUDA_PATH, CUDA_HOME, /usr/local/cuda*, Python environments ({}) and the loader's path; `pip install nvidia-cuda-nvrtc==13.0.*` provides it",
                    if dirs.is_empty() {
                        "no candidate folders".to_string()
                    } else {
                        dirs.iter()
                            .map(|d| d.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ))
            }
        })
        .as_ref()
        .map(String::as_str)
        .map_err(Clone::clone)
}

/// cuBLAS's sonames with the libraries it needs first, newest first.
const CUBLAS: [[&str; 2]; 2] = [
    ["libcublasLt.so.13", "libcublas.so.13"],
    ["libcublasLt.so.12", "libcublas.so.12"],
];

/// Loads cuBLAS once per process (cuBLASLt first: cuBLAS opens it by
/// name). Returns where it came from.
///
/// # Errors
/// Why cuBLAS is not available.
pub fn cublas() -> Result<&'static str, String> {
    static LOADED: OnceLock<Result<String, String>> = OnceLock::new();
    load_library(
        &LOADED,
        &CUBLAS,
        // SAFETY: cudarc's probe only opens the library.
        || unsafe { cudarc::cublas::sys::is_culib_present() },
        "cuBLAS (libcublas.so.13) not found; `pip install nvidia-cublas` provides it (matrix products use crossover's own kernel meanwhile)",
    )
}

/// cuFFT's sonames (CUDA 13's cuFFT 12, CUDA 12's cuFFT 11), newest first.
const CUFFT: [[&str; 1]; 2] = [["libcufft.so.12"], ["libcufft.so.11"]];

/// Loads cuFFT once per process. Returns where it came from.
///
/// # Errors
/// Why cuFFT is not available.
pub fn cufft() -> Result<&'static str, String> {
    static LOADED: OnceLock<Result<String, String>> = OnceLock::new();
    load_library(
        &LOADED,
        &CUFFT,
        // SAFETY: cudarc's probe only opens the library.
        || unsafe { cudarc::cufft::sys::is_culib_present() },
        "cuFFT (libcufft.so.12) not found; `pip install nvidia-cufft` provides it (FFTs use crossover's own kernels meanwhile)",
    )
}

/// cuSOLVER's sonames, each after the libraries it opens by name (NVIDIA's
/// catalog: cusolver needs nvJitLink, cuSPARSE, cuBLASLt and cuBLAS), newest
/// first: CUDA 13's cuSOLVER 12 (the `nvidia-cusolver` 12.x wheel, which
/// pulls `nvidia-cublas`, `nvidia-cusparse` and `nvidia-nvjitlink` into the
/// same `nvidia/cu13/lib`), then CUDA 12's cuSOLVER 11 (split wheels).
const CUSOLVER: [[&str; 5]; 2] = [
    [
        "libnvJitLink.so.13",
        "libcublasLt.so.13",
        "libcublas.so.13",
        "libcusparse.so.12",
        "libcusolver.so.12",
    ],
    [
        "libnvJitLink.so.12",
        "libcublasLt.so.12",
        "libcublas.so.12",
        "libcusparse.so.12",
        "libcusolver.so.11",
    ],
];

/// Loads cuSOLVER (and what it needs) once per process. Returns where it
/// came from.
///
/// # Errors
/// Why cuSOLVER is not available.
pub fn cusolver() -> Result<&'static str, String> {
    static LOADED: OnceLock<Result<String, String>> = OnceLock::new();
    load_library(
        &LOADED,
        &CUSOLVER,
        // SAFETY: cudarc's probe only opens the library.
        || unsafe { cudarc::cusolver::sys::is_culib_present() },
        "cuSOLVER (libcusolver.so.12) not found; `pip install nvidia-cusolver` provides it (dense linear algebra runs on the CPU meanwhile)",
    )
}

/// cuSPARSE's soname (CUDA 13 and CUDA 12 both ship cuSPARSE 12), after
/// the nvJitLink it opens by name, newest first.
const CUSPARSE: [[&str; 2]; 2] = [
    ["libnvJitLink.so.13", "libcusparse.so.12"],
    ["libnvJitLink.so.12", "libcusparse.so.12"],
];

/// Loads cuSPARSE (and nvJitLink) once per process. Returns where it came
/// from.
///
/// # Errors
/// Why cuSPARSE is not available.
pub fn cusparse() -> Result<&'static str, String> {
    static LOADED: OnceLock<Result<String, String>> = OnceLock::new();
    load_library(
        &LOADED,
        &CUSPARSE,
        // SAFETY: cudarc's probe only opens the library.
        || unsafe { cudarc::cusparse::sys::is_culib_present() },
        "cuSPARSE (libcusparse.so.12) not found; `pip install nvidia-cusparse` provides it (sparse products use crossover's own kernels meanwhile)",
    )
}

/// Loads the first set of `sets` found (each library of a set in order,
/// the last one the library itself, the others what it opens by name),
/// else accepts what the loader's own search finds (`probe`), else fails
/// with `missing`. Once per process (`slot`).
fn load_library<const N: usize>(
    slot: &'static OnceLock<Result<String, String>>,
    sets: &[[&str; N]],
    probe: fn() -> bool,
    missing: &str,
) -> Result<&'static str, String> {
    slot.get_or_init(|| load_first(&search_dirs(), sets, probe, missing))
        .as_ref()
        .map(String::as_str)
        .map_err(Clone::clone)
}

/// [`load_library`]'s search in `dirs`, uncached: where the library was
/// loaded from, or why it was not (a file that does not load is an error
/// naming it, never a panic).
fn load_first<const N: usize>(
    dirs: &[PathBuf],
    sets: &[[&str; N]],
    probe: fn() -> bool,
    missing: &str,
) -> Result<String, String> {
    for set in sets {
        let Some(main) = find(dirs, &[set[N - 1]]) else {
            continue;
        };
        let dir = main.parent().unwrap_or(Path::new(".")).to_path_buf();
        for dep in &set[..N - 1] {
            if let Some(d) = find(std::slice::from_ref(&dir), &[dep]).or_else(|| find(dirs, &[dep]))
            {
                load_global(&d)?;
            }
        }
        load_global(&main)?;
        return Ok(main.display().to_string());
    }
    if std::panic::catch_unwind(probe).unwrap_or(false) {
        Ok("the loader's search path".to_string())
    } else {
        Err(missing.to_string())
    }
}

/// Whether the NVIDIA driver library is installed (without initialising
/// it: `cuInit` waits for the first real use).
///
/// # Errors
/// Why there is no driver.
pub fn driver() -> Result<(), String> {
    static PRESENT: OnceLock<Result<(), String>> = OnceLock::new();
    PRESENT
        .get_or_init(|| {
            // SAFETY: cudarc's probe only opens the library (libcuda.so.1 from
            // the system search path).
            let present =
                std::panic::catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() })
                    .unwrap_or(false);
            if present {
                debug("driver library found");
                Ok(())
            } else {
                Err("no NVIDIA driver (libcuda.so.1 is not installed)".to_string())
            }
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh empty folder under the system's temporary one.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("crossover-libs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_missing_library_is_a_reason_not_a_panic() {
        let dir = scratch("missing");
        let got = load_first(
            std::slice::from_ref(&dir),
            &CUSPARSE,
            || false,
            "cuSPARSE not found",
        );
        assert_eq!(got, Err("cuSPARSE not found".to_string()));
        // A probe that panics (cudarc's loader can) is a missing library.
        let got = load_first(
            std::slice::from_ref(&dir),
            &CUSPARSE,
            || panic!("no library"),
            "gone",
        );
        assert_eq!(got, Err("gone".to_string()));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_library_that_does_not_load_is_named_in_the_error() {
        let dir = scratch("broken");
        std::fs::write(dir.join("libcusparse.so.12"), b"not a shared object").unwrap();
        let e = load_first(std::slice::from_ref(&dir), &CUSPARSE, || true, "missing").unwrap_err();
        assert!(e.contains("libcusparse.so.12"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn cusparse_loads_or_says_why() {
        // No panic either way; without the library the reason names it and
        // the wheel that provides it.
        match cusparse() {
            Ok(at) => assert!(!at.is_empty()),
            Err(why) => assert!(
                why.contains("libcusparse.so.12") && why.contains("nvidia-cusparse"),
                "{why}"
            ),
        }
    }
}
