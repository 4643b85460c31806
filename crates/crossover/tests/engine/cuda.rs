//! The CUDA backend where there is no GPU (CI): discovery says why, a
//! forced GPU policy is a typed error naming CUDA's reason, and a missing
//! NVRTC names where it was looked for. With a GPU, the numeric suites run
//! on the `cuda` engine (`common::engines`).

use crate::common::*;
use crate::gpu::output_within;
use crossover::{DType, DeviceKind};

#[test]
#[ignore = "run in a child process by a_forced_cuda_policy_without_a_gpu_is_a_device_error"]
fn forced_cuda_child() {
    use crossover::{Error, Policy};
    let why = crossover::gpu::discover::cuda_device(0).unwrap_err();
    let (a, x) = array(&[100], DType::F32, 3, 0.0, 1.0);
    match a.cos().unwrap().eval_with(Policy::Force(DeviceKind::Gpu)) {
        Err(Error::Device { msg, .. }) => {
            assert!(msg.contains("CUDA") && msg.contains(&why), "{msg}")
        }
        other => panic!("expected a device error, got {other:?}"),
    }
    // Under auto the same work runs on the CPU.
    let y = a.cos().unwrap().to_vec_f64().unwrap();
    let want: Vec<f64> = x.iter().map(|v| v.cos()).collect();
    assert_close(&y, &want, 1e-6, 0.0, "cpu");
    println!("FORCED_CUDA_OK");
}

#[test]
fn a_forced_cuda_policy_without_a_gpu_is_a_device_error() {
    if crossover::cuda::libs::driver().is_ok() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    let why = crossover::gpu::discover::cuda_device(0).unwrap_err();
    assert!(why.contains("libcuda"), "{why}");
    let out = output_within(
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "cuda::forced_cuda_child",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env("CROSSOVER_GPU", "cuda"),
        300,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("FORCED_CUDA_OK"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "run in a child process by a_missing_nvrtc_says_where_it_looked"]
fn missing_nvrtc_child() {
    match crossover::cuda::nvrtc::version() {
        Err(why) => {
            assert!(why.contains("nvidia-cuda-nvrtc"), "{why}");
            assert!(
                why.contains("/nonexistent-nvrtc") || why.contains("searched"),
                "{why}"
            );
            println!("NO_NVRTC_OK");
        }
        // A toolkit or loader path outside the variables cleared below.
        Ok(v) => println!("NVRTC {v:?} found elsewhere: NO_NVRTC_OK"),
    }
}

#[test]
fn a_missing_nvrtc_says_where_it_looked() {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "cuda::missing_nvrtc_child",
        "--exact",
        "--ignored",
        "--nocapture",
    ])
    .env("CROSSOVER_CUDA_LIB_DIR", "/nonexistent-nvrtc");
    for k in [
        "LD_LIBRARY_PATH",
        "CUDA_PATH",
        "CUDA_HOME",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CROSSOVER_PYTHON_PATH",
    ] {
        cmd.env_remove(k);
    }
    let out = output_within(&mut cmd, 300);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("NO_NVRTC_OK"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
