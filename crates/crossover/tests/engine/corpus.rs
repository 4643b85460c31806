//! Every kernel the GPU codegen makes, compiled at once: for NVIDIA with
//! NVRTC (sm_90 and sm_80; no GPU needed) and for the OpenCL device (pocl
//! in CI). `CROSSOVER_REQUIRE_NVRTC=1` (set in CI) turns a missing NVRTC
//! from a skip into a failure.

use crate::common::*;
use crossover::gpu::codegen::{prelude, Dialect, Features};
use crossover::gpu::corpus;

/// The corpus is large and varied (a shrinking corpus would hide kernels
/// from these checks).
#[test]
fn the_corpus_covers_every_kernel_family() {
    let kernels = corpus::kernels().unwrap();
    let (source, entries) = corpus::source(Dialect::OpenCl).unwrap();
    assert!(kernels.len() >= 400, "{} kernels", kernels.len());
    assert!(entries.len() >= 300, "{} entry points", entries.len());
    for needle in [
        "xo_philox",
        "xo_f64_to_i32",
        "xo_ipow",
        "BARRIER()",
        "_gemm(",
        "_fft_pass(",
        "_fft_unchirp(",
        "_matcopy(",
    ] {
        assert!(source.contains(needle), "no {needle} in the corpus");
    }
}

/// The CUDA and OpenCL sources of every kernel differ only in the prelude:
/// one body, two APIs.
#[test]
fn cuda_and_opencl_sources_differ_only_in_the_prelude() {
    let features = Features { fp64: true };
    for k in corpus::kernels().unwrap().iter().take(200) {
        let (Some(cl), Some(cu)) = (
            crossover::gpu::kernel_source(k, Dialect::OpenCl),
            crossover::gpu::kernel_source(k, Dialect::Cuda),
        ) else {
            continue;
        };
        let body_cl = cl
            .strip_prefix(&prelude(Dialect::OpenCl, features))
            .unwrap();
        let body_cu = cu.strip_prefix(&prelude(Dialect::Cuda, features)).unwrap();
        assert_eq!(body_cl, body_cu, "{}", k.name());
        assert_ne!(cl, cu);
    }
}

#[test]
fn every_kernel_compiles_with_nvrtc_without_spills() {
    let required = std::env::var("CROSSOVER_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    let version = match crossover::cuda::nvrtc::version() {
        Ok(v) => v,
        Err(why) if !required => {
            eprintln!("skipped: {why}");
            return;
        }
        Err(why) => panic!("CROSSOVER_REQUIRE_NVRTC=1 but NVRTC is not available: {why}"),
    };
    let (source, entries) = corpus::source(Dialect::Cuda).unwrap();
    // The two architectures compile side by side: NVRTC is single-threaded
    // and this test is the engine suite's longest.
    let outs: Vec<_> = std::thread::scope(|s| {
        let jobs: Vec<_> = [90, 80]
            .map(|arch| {
                let source = &source;
                s.spawn(move || {
                    (
                        arch,
                        crossover::cuda::nvrtc::compile_with_report(source, arch, false),
                    )
                })
            })
            .into_iter()
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap()).collect()
    });
    for (arch, out) in outs {
        let out = out.unwrap_or_else(|e| panic!("NVRTC {version:?} for sm_{arch}: {e}"));
        assert!(out.binary.len() > 1000, "sm_{arch}: empty CUBIN");
        assert_eq!(&out.binary[..4], b"\x7fELF", "sm_{arch}: not an ELF CUBIN");
        assert!(!out.spills(), "sm_{arch}: register spills:\n{}", out.log);
        let regs = out.registers();
        assert_eq!(
            regs.len(),
            entries.len(),
            "sm_{arch}: ptxas report:\n{}",
            out.log
        );
        for (entry, n) in regs {
            assert!(n <= 128, "sm_{arch}: {entry} uses {n} registers");
        }
    }
}

/// A report compile's PTX carries a device variable named uniquely per
/// compile, so the CUDA compute cache never holds it and ptxas runs.
#[test]
fn report_compiles_make_ptx_new_to_the_compute_cache() {
    use crossover::cuda::nvrtc::{compile, compile_with_report, REPORT_SALT};
    if crossover::cuda::nvrtc::version().is_err() {
        return; // the corpus test fails when NVRTC is required
    }
    let src = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }";
    let salt_of = |ptx: &[u8]| -> String {
        let text = String::from_utf8_lossy(ptx);
        let at = text
            .find(REPORT_SALT)
            .unwrap_or_else(|| panic!("no salt in:\n{text}"));
        text[at..]
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap()
            .to_string()
    };
    let a = salt_of(&compile_with_report(src, 90, true).unwrap().binary);
    let b = salt_of(&compile_with_report(src, 90, true).unwrap().binary);
    assert_ne!(a, b, "two report compiles, one PTX");
    let plain = compile(src, 90, true).unwrap();
    assert!(!String::from_utf8_lossy(&plain.binary).contains(REPORT_SALT));
}

#[test]
fn a_bad_kernel_is_an_nvrtc_error_with_its_log() {
    if crossover::cuda::nvrtc::version().is_err() {
        return; // covered by the test above when NVRTC is required
    }
    let e = crossover::cuda::nvrtc::compile(
        "extern \"C\" __global__ void k() { undefined_thing(); }",
        90,
        false,
    )
    .unwrap_err();
    assert!(e.msg.contains("undefined_thing"), "{e}");
}

/// Compiles running at the same time, half of them plain (as the engine
/// compiles): each reporting one gets its own ptxas report, a plain one
/// none. The sources repeat between processes: a report compile must not
/// be served by the CUDA compute cache (where a driver is installed), which
/// skips ptxas and its report (an H100, 2026-11-27).
#[test]
fn concurrent_nvrtc_compiles_each_get_their_own_ptxas_report() {
    if crossover::cuda::nvrtc::version().is_err() {
        return; // the corpus test fails when NVRTC is required
    }
    let outs: Vec<_> = std::thread::scope(|s| {
        let jobs: Vec<_> = (0..8)
            .map(|t| {
                s.spawn(move || {
                    (0..6)
                        .map(|r| {
                            let entry = format!("k{t}_{r}");
                            let src = format!(
                                "extern \"C\" __global__ void {entry}(float* x, int n) {{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = sinf(x[i]) * {t}.5f + {r}; }}"
                            );
                            let out = if t % 2 == 0 {
                                crossover::cuda::nvrtc::compile_with_report(&src, 90, false)
                            } else {
                                crossover::cuda::nvrtc::compile(&src, 90, false)
                            };
                            (entry, t % 2 == 0, out)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        jobs.into_iter().flat_map(|j| j.join().unwrap()).collect()
    });
    for (entry, report, out) in outs {
        let out = out.unwrap_or_else(|e| panic!("{entry}: {e}"));
        assert_eq!(&out.binary[..4], b"\x7fELF", "{entry}: not an ELF CUBIN");
        let regs = out.registers();
        if !report {
            assert!(
                regs.is_empty(),
                "{entry}: a plain compile's log:\n{}",
                out.log
            );
            continue;
        }
        assert_eq!(regs.len(), 1, "{entry}: ptxas report:\n{}", out.log);
        assert_eq!(
            regs[0].0, entry,
            "{entry}: another compile's report:\n{}",
            out.log
        );
    }
}

#[test]
fn every_kernel_builds_on_the_opencl_device_in_one_program() {
    use crossover::gpu::api::GpuApi;
    if opencl_or_skip().is_none() {
        return;
    }
    let name = std::env::var("CROSSOVER_TEST_OPENCL").ok();
    let found = crossover::gpu::discover::find_opencl(Some(name.as_deref().unwrap_or(""))).unwrap();
    let api = crossover::opencl::OpenClApi::open(found).unwrap();
    let (source, entries) = corpus::source(Dialect::OpenCl).unwrap();
    // Without the binary: pocl would compile every kernel for it (minutes),
    // which the build does not need.
    let built = api.compile(&source, &entries, false);
    assert!(
        built.is_ok(),
        "{}",
        built.err().map(|e| e.to_string()).unwrap_or_default()
    );
}
