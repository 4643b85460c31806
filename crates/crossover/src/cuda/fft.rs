//! cuFFT for the GPU core's FFT steps ([`GpuApi::fft_axis`]): one axis of
//! batched complex transforms, any length, unscaled (the core's `finish`
//! scales). Plans are cached per (precision, length, layout, batch), at
//! most [`PLANS`] of them, on crossover's stream. Without cuFFT the core
//! runs its own radix-2 passes (Bluestein's algorithm for other lengths).
//!
//! What has run where: its tests passed on an NVIDIA H200 on 2026-11-26
//! (docs/gpu.md).

use super::{handle, CudaApi, CudaMem, CudaTiming};
use crate::dtype::DType;
use crate::gpu::api::{ApiError, FftAxis};
use cudarc::cufft::{result as cufft, sys as fft_sys};
use std::ffi::c_int;
use std::sync::Mutex;

/// Most plans kept (each may hold device work memory).
pub(super) const PLANS: usize = 16;

/// What a plan depends on: precision, length, batch, stride and distance.
type Key = (DType, usize, usize, usize, usize);

/// A cuFFT plan (destroyed on drop, in the process that made it).
type Plan = handle::Owned<fft_sys::cufftHandle>;

/// The device's plans, least recently used first.
#[derive(Default)]
pub(super) struct Plans(Mutex<Vec<(Key, Plan)>>);

fn status(call: &'static str, e: cufft::CufftError) -> ApiError {
    match e.0 {
        fft_sys::cufftResult::CUFFT_ALLOC_FAILED => ApiError::oom(call, format!("{e}")),
        _ => ApiError::new(call, format!("{e}")),
    }
}

impl CudaApi {
    /// Enqueues `f` through cuFFT; `None` when cuFFT is unavailable.
    pub(super) fn cufft_axis(
        &self,
        f: &FftAxis<'_, CudaMem>,
    ) -> Option<Result<CudaTiming, ApiError>> {
        if let Err(why) = super::libs::cufft() {
            if super::debug_log() {
                eprintln!("crossover: cuda: no cuFFT ({why}); FFTs use crossover's kernels");
            }
            return None;
        }
        Some(
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.enqueue_fft(f)))
                .unwrap_or_else(|_| Err(ApiError::new("cufftExec", "cuFFT is missing a function"))),
        )
    }

    fn enqueue_fft(&self, f: &FftAxis<'_, CudaMem>) -> Result<CudaTiming, ApiError> {
        const CALL: &str = "cufftExec";
        self.enter(CALL)?;
        let int = |v: usize| {
            c_int::try_from(v).map_err(|_| ApiError::new(CALL, format!("{v} exceeds a C int")))
        };
        // Rows of a last axis are one batch; otherwise each outer group is
        // a batch of `inner` interleaved transforms.
        let (batch, stride, dist, groups) = if f.inner == 1 {
            (f.outer, 1, f.n, 1)
        } else {
            (f.inner, f.inner, 1, f.outer)
        };
        let key = (f.precision, f.n, batch, stride, dist);
        let mut plans = self.fft_plans.0.lock().unwrap_or_else(|p| p.into_inner());
        let at = match plans.iter().position(|(k, _)| *k == key) {
            Some(i) => {
                let entry = plans.remove(i);
                plans.push(entry);
                plans.len() - 1
            }
            None => {
                let kind = if f.precision == DType::F64 {
                    fft_sys::cufftType::CUFFT_Z2Z
                } else {
                    fft_sys::cufftType::CUFFT_C2C
                };
                let mut n = [int(f.n)?];
                let mut embed = [int(f.n)?];
                let (stride, dist, batch) = (int(stride)?, int(dist)?, int(batch)?);
                // SAFETY: `n` and `embed` hold `rank` (1) entries, read
                // during the call.
                let raw = unsafe {
                    cufft::plan_many(
                        1,
                        n.as_mut_ptr(),
                        embed.as_mut_ptr(),
                        stride,
                        dist,
                        embed.as_mut_ptr(),
                        stride,
                        dist,
                        kind,
                        batch,
                    )
                }
                .map_err(|e| status("cufftPlanMany", e))?;
                let plan = Plan::new(raw, |p| {
                    // SAFETY: made by `cufftPlanMany`, destroyed once (by
                    // `Owned`).
                    let _ = unsafe { cufft::destroy(p) };
                });
                // SAFETY: a live plan and crossover's stream (which lives as
                // long as this API object and so the plan cache).
                unsafe { cufft::set_stream(raw, self.stream.cu_stream() as fft_sys::cudaStream_t) }
                    .map_err(|e| status("cufftSetStream", e))?;
                if plans.len() >= PLANS {
                    plans.remove(0);
                }
                plans.push((key, plan));
                plans.len() - 1
            }
        };
        let plan = plans[at].1.raw;
        let timing = self.start_timing()?;
        // cuFFT's CUFFT_INVERSE and CUFFT_FORWARD.
        let direction: c_int = if f.inverse { 1 } else { -1 };
        let group_bytes = (f.n * f.inner * 2 * f.precision.size()) as u64;
        for g in 0..groups as u64 {
            let (src, dst) = (f.src.ptr + g * group_bytes, f.dst.ptr + g * group_bytes);
            // SAFETY: `src` and `dst` are live device allocations holding
            // `outer * n * inner` complex elements of the plan's precision
            // (the core sizes them), and group `g` lies inside them.
            let r = unsafe {
                if f.precision == DType::F64 {
                    cufft::exec_z2z(plan, src as *mut _, dst as *mut _, direction)
                } else {
                    cufft::exec_c2c(plan, src as *mut _, dst as *mut _, direction)
                }
            };
            r.map_err(|e| status(CALL, e))?;
        }
        self.end_timing(timing)
    }
}
