//! cuSOLVER's dense API (cusolverDn) for the GPU core's dense linear
//! algebra ([`GpuApi::dense`]): one handle per device, created on first use
//! on crossover's stream, from the cuSOLVER that [`super::libs::cusolver`]
//! finds. Without cuSOLVER the core declines dense ops and the CPU runs
//! them.
//!
//! The core hands over packed column-major matrices (it chose the packing
//! so that the results come out row-major where they can; see
//! `gpu/dense.rs`). Each matrix of the batch is one sequence of calls on
//! the stream (`getrf` then `getrs`, `potrf` then `potrs`, `geqrf` then a
//! copy of the factor then `orgqr`, `gesvd`, `syevd`), float32 (`S`),
//! float64 (`D`), complex64 (`C`) or complex128 (`Z`; there `ungqr` and
//! `heevd`, singular values and eigenvalues real, `vt` holding `V^H`;
//! the core packs complex matrices so that these give its results, see
//! `gpu/dense_plan.rs`):
//! cuSOLVER's batched routines cover only some of these and
//! only small matrices, so the loop keeps one path for every size. One
//! workspace, the largest any step of the call asks for
//! (`*_bufferSize`), serves the whole batch: the stream runs the matrices
//! one after another. Each matrix has two `info` slots (the factorisation's
//! and the second step's, which only reports bad arguments), read back at
//! the end. Inputs are checked for NaN and infinity first with cuBLAS's sum
//! of magnitudes, which propagates both (a sum that overflows reads as not
//! finite: conservative; the core then asks the CPU).
//!
//! What has run where: its tests passed on an NVIDIA H200 on 2026-11-26
//! (docs/gpu.md).

use super::lapack::{Lapack, RealPart, H};
use super::{handle, CudaApi, CudaMem, CudaTiming};
use crate::dtype::DType;
use crate::gpu::api::{ApiError, DenseCall, DenseDone, DenseJob, GpuApi};
use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as sol;
use std::ffi::{c_int, c_schar};

/// cuSOLVER's dense handle of one device, made on first use.
pub(super) type Slot = handle::Slot<sol::cusolverDnHandle_t>;

/// Makes the cuSOLVER handle on crossover's stream.
const MAKER: handle::Maker<sol::cusolverDnHandle_t> = handle::Maker {
    call: "cusolverDnCreate",
    load: super::libs::cusolver,
    make: |api| {
        let mut raw = std::ptr::null_mut();
        // SAFETY: cuSOLVER is loaded and the context bound; `raw` is
        // written by the call.
        status("cusolverDnCreate", unsafe {
            sol::cusolverDnCreate(&mut raw)
        })?;
        let handle = handle::Owned::new(raw, |h| {
            // SAFETY: made by `cusolverDnCreate`, destroyed once (by `Owned`).
            let _ = unsafe { sol::cusolverDnDestroy(h) };
        });
        // SAFETY: a live handle and crossover's stream (which lives as long
        // as this API object, and so the handle).
        status("cusolverDnSetStream", unsafe {
            sol::cusolverDnSetStream(raw, api.stream.cu_stream() as sol::cudaStream_t)
        })?;
        Ok(handle)
    },
};

fn status(call: &'static str, s: sol::cusolverStatus_t) -> Result<(), ApiError> {
    match s {
        sol::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS => Ok(()),
        sol::cusolverStatus_t::CUSOLVER_STATUS_ALLOC_FAILED => {
            Err(ApiError::oom(call, format!("{s:?}")))
        }
        other => Err(ApiError::new(call, format!("{other:?}"))),
    }
}

/// One step of a call on one matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Getrf,
    Getrs,
    Potrf,
    Potrs,
    Geqrf,
    /// Copies the factored `a` (QR's `R`) to `b` before `orgqr`
    /// overwrites it.
    CopyFactor,
    Orgqr,
    Gesvd,
    Syevd,
}

impl Step {
    /// cuSOLVER's name of the step (for errors).
    fn name(self) -> &'static str {
        match self {
            Step::Getrf => "cusolverDnXgetrf",
            Step::Getrs => "cusolverDnXgetrs",
            Step::Potrf => "cusolverDnXpotrf",
            Step::Potrs => "cusolverDnXpotrs",
            Step::Geqrf => "cusolverDnXgeqrf",
            Step::CopyFactor => "cuMemcpyDtoDAsync",
            Step::Orgqr => "cusolverDnXorgqr",
            Step::Gesvd => "cusolverDnXgesvd",
            Step::Syevd => "cusolverDnXsyevd",
        }
    }
}

/// syevd computes eigenvectors as well as eigenvalues.
const VECTORS: sol::cusolverEigMode_t = sol::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR;

/// The steps of `call` on each matrix, in order.
fn steps(call: DenseCall) -> Vec<Step> {
    match call {
        DenseCall::Lu { solve, .. } => {
            let mut s = vec![Step::Getrf];
            if solve {
                s.push(Step::Getrs);
            }
            s
        }
        DenseCall::Cholesky { solve, .. } => {
            let mut s = vec![Step::Potrf];
            if solve {
                s.push(Step::Potrs);
            }
            s
        }
        DenseCall::Qr => vec![Step::Geqrf, Step::CopyFactor, Step::Orgqr],
        DenseCall::Svd { .. } => vec![Step::Gesvd],
        DenseCall::Eigh { .. } => vec![Step::Syevd],
    }
}

/// Elements (pivots: i32s) of each buffer per matrix of a job (0: unused).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Strides {
    a: usize,
    b: usize,
    pivots: usize,
    values: usize,
    u: usize,
    vt: usize,
}

/// The per-matrix sizes of `call` on an `m x n` matrix, `k` right-hand
/// sides (the layout [`DenseJob`] documents).
fn strides(call: DenseCall, m: usize, n: usize, k: usize) -> Strides {
    match call {
        DenseCall::Lu { solve, .. } => Strides {
            a: n * n,
            b: if solve { n * k } else { 0 },
            pivots: n,
            ..Strides::default()
        },
        DenseCall::Cholesky { solve, .. } => Strides {
            a: n * n,
            b: if solve { n * k } else { 0 },
            ..Strides::default()
        },
        DenseCall::Qr => Strides {
            a: m * n,
            b: m * n,
            ..Strides::default()
        },
        DenseCall::Svd { vectors } => Strides {
            a: m * n,
            values: n,
            u: if vectors { m * n } else { 0 },
            vt: if vectors { n * n } else { 0 },
            ..Strides::default()
        },
        DenseCall::Eigh { .. } => Strides {
            a: n * n,
            values: n,
            ..Strides::default()
        },
    }
}

/// `(start, len)` pieces of at most `max` elements covering `len`
/// (cuBLAS counts in C ints).
fn chunks(len: usize, max: usize) -> Vec<(usize, usize)> {
    (0..len)
        .step_by(max.max(1))
        .map(|s| (s, max.max(1).min(len - s)))
        .collect()
}

/// Each matrix's `info`: the factorisation's when it failed, else the
/// second step's (negative only: a rejected argument).
fn combine_info(first: &[i32], second: &[i32]) -> Vec<i32> {
    first
        .iter()
        .zip(second)
        .map(|(&f, &s)| if f != 0 { f } else { s })
        .collect()
}

/// Whether a step's triangle is the upper one.
fn fill(upper: bool) -> sol::cublasFillMode_t {
    if upper {
        sol::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER
    } else {
        sol::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER
    }
}

impl CudaApi {
    /// The cuSOLVER handle (made now if needed), or why there is none.
    fn solver_handle(&self) -> Result<H, String> {
        self.library_handle(&self.solver, &MAKER)
    }

    /// Runs `job` through cuSOLVER; `None` when cuSOLVER (or the cuBLAS it
    /// needs) is unavailable.
    pub(super) fn cusolver_dense(
        &self,
        job: &DenseJob<'_, CudaMem>,
    ) -> Option<Result<DenseDone<CudaTiming>, ApiError>> {
        let handles = self
            .solver_handle()
            .and_then(|s| Ok((s, self.blas_handle()?)));
        let (solver, blas) = match handles {
            Ok(h) => h,
            Err(why) => {
                if super::debug_log() {
                    eprintln!("crossover: cuda: no cuSOLVER ({why}); dense linear algebra runs on the CPU");
                }
                return None;
            }
        };
        let run = || match job.dtype {
            DType::F32 => self.enqueue_dense::<f32>(solver, blas, job),
            DType::F64 => self.enqueue_dense::<f64>(solver, blas, job),
            DType::C64 => self.enqueue_dense::<sol::cuComplex>(solver, blas, job),
            DType::C128 => self.enqueue_dense::<sol::cuDoubleComplex>(solver, blas, job),
            d => Err(ApiError::new(
                "cusolverDn",
                format!("no dense solver for {d}"),
            )),
        };
        Some(
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|_| {
                Err(ApiError::new(
                    "cusolverDn",
                    "cuSOLVER is missing a function",
                ))
            }),
        )
    }

    /// Whether the `len` elements of `T` at `ptr` are all finite (cuBLAS's
    /// sum of magnitudes, which returns to the host when done).
    fn all_finite<T: Lapack>(
        &self,
        blas: blas::cublasHandle_t,
        ptr: u64,
        len: usize,
    ) -> Result<bool, ApiError> {
        let size = std::mem::size_of::<T>() as u64;
        for (start, n) in chunks(len, c_int::MAX as usize) {
            let mut sum = T::Real::zero();
            // SAFETY: `ptr` holds `len` elements of `T` (the job's sizes);
            // the result is a host scalar written before the call returns.
            super::blas::status("cublasAsum", unsafe {
                (T::ROUTINES.asum)(
                    blas,
                    n as c_int,
                    (ptr + start as u64 * size) as *const T::Blas,
                    1,
                    &mut sum,
                )
            })?;
            if !sum.finite() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn enqueue_dense<T: Lapack>(
        &self,
        h: H,
        blas: blas::cublasHandle_t,
        job: &DenseJob<'_, CudaMem>,
    ) -> Result<DenseDone<CudaTiming>, ApiError> {
        const CALL: &str = "cusolverDn";
        self.enter(CALL)?;
        let int = |v: usize| {
            c_int::try_from(v).map_err(|_| ApiError::new(CALL, format!("{v} exceeds a C int")))
        };
        let (batch, call) = (job.batch, job.call);
        let st = strides(call, job.m, job.n, job.k);
        // `k_r`: the reflectors of a QR (min(m, n)).
        let (m, n, k, k_r) = (
            int(job.m)?,
            int(job.n)?,
            int(job.k)?,
            int(job.m.min(job.n))?,
        );
        let r = &T::ROUTINES;
        let size = std::mem::size_of::<T>() as u64;
        // Singular values and eigenvalues are real.
        let real_size = std::mem::size_of::<T::Real>() as u64;
        let need = |mem: Option<&CudaMem>, len: usize, what: &str| match mem {
            Some(x) => Ok(x.ptr),
            None if len == 0 => Ok(0),
            None => Err(ApiError::new(CALL, format!("the job has no {what} buffer"))),
        };
        let a = job.a.ptr;
        let b = need(job.b, st.b, "b")?;
        let piv = need(job.pivots, st.pivots, "pivot")?;
        let vals = need(job.values, st.values, "values")?;
        let u = need(job.u, st.u, "u")?;
        let vt = need(job.vt, st.vt, "vt")?;
        let (upper, solves) = match call {
            DenseCall::Lu { solve, .. } => (false, solve),
            DenseCall::Cholesky { upper, solve } => (upper, solve),
            DenseCall::Eigh { upper } => (upper, false),
            DenseCall::Qr | DenseCall::Svd { .. } => (false, false),
        };
        let timing = self.start_timing()?;
        let mut finite = self.all_finite::<T>(blas, a, batch * st.a)?;
        if finite && solves {
            finite = self.all_finite::<T>(blas, b, batch * st.b)?;
        }
        if !finite {
            return Ok(DenseDone {
                event: self.end_timing(timing)?,
                info: vec![0; batch],
                finite_input: false,
                finite_result: true,
            });
        }
        // QR's Householder scalars, reused by every matrix (in stream order).
        let tau = if call == DenseCall::Qr {
            Some(self.alloc(job.m.min(job.n).max(1) * size as usize)?)
        } else {
            None
        };
        let tau_ptr = tau.as_ref().map_or(0, |t| t.ptr) as *mut T;
        let mut lwork: c_int = 0;
        for step in steps(call) {
            let mut l: c_int = 0;
            // SAFETY: size queries read no elements; the pointers are the
            // job's live allocations of the sizes given.
            let s = unsafe {
                match step {
                    Step::Getrf => (r.getrf_size)(h, n, n, a as *mut T, n, &mut l),
                    Step::Potrf => (r.potrf_size)(h, fill(upper), n, a as *mut T, n, &mut l),
                    Step::Geqrf => (r.geqrf_size)(h, m, n, a as *mut T, m, &mut l),
                    Step::Orgqr => {
                        (r.orgqr_size)(h, m, k_r, k_r, a as *const T, m, tau_ptr, &mut l)
                    }
                    Step::Gesvd => (r.gesvd_size)(h, m, n, &mut l),
                    Step::Syevd => (r.syevd_size)(
                        h,
                        VECTORS,
                        fill(upper),
                        n,
                        a as *const T,
                        n,
                        vals as *const T::Real,
                        &mut l,
                    ),
                    Step::Getrs | Step::Potrs | Step::CopyFactor => {
                        sol::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS
                    }
                }
            };
            status(step.name(), s)?;
            lwork = lwork.max(l);
        }
        let work = self.alloc(lwork.max(1) as usize * size as usize)?;
        let w = work.ptr as *mut T;
        // Two info slots per matrix, zeroed (a step that does not run
        // leaves its slot 0).
        let infos = self.alloc(2 * batch * 4)?;
        self.write(&infos, &vec![0u8; 2 * batch * 4])?;
        let at = |base: u64, per: usize, i: usize, bytes: u64| base + (i * per) as u64 * bytes;
        for i in 0..batch {
            let ai = at(a, st.a, i, size) as *mut T;
            let bi = at(b, st.b, i, size) as *mut T;
            let pi = at(piv, st.pivots, i, 4) as *mut c_int;
            let vi = at(vals, st.values, i, real_size) as *mut T::Real;
            let ui = at(u, st.u, i, size) as *mut T;
            let vti = at(vt, st.vt, i, size) as *mut T;
            let info1 = (infos.ptr + 4 * i as u64) as *mut c_int;
            let info2 = (infos.ptr + 4 * (batch + i) as u64) as *mut c_int;
            for step in steps(call) {
                if step == Step::CopyFactor {
                    // SAFETY: both hold `st.a` elements of matrix `i`; the
                    // copy is ordered on crossover's stream.
                    unsafe {
                        cudarc::driver::result::memcpy_dtod_async(
                            bi as u64,
                            ai as u64,
                            st.a * size as usize,
                            self.stream.cu_stream(),
                        )
                    }
                    .map_err(|e| super::err(step.name(), e))?;
                    continue;
                }
                // SAFETY: every pointer addresses matrix `i` of a live
                // device allocation holding `batch` blocks of the sizes in
                // `st` (the core allocated them from the same sizes), the
                // workspace holds `lwork` elements and the info slots one
                // int each; leading dimensions are the packed rows.
                let s = unsafe {
                    match step {
                        Step::Getrf => (r.getrf)(h, n, n, ai, n, w, pi, info1),
                        Step::Getrs => {
                            let op = match call {
                                DenseCall::Lu {
                                    transpose: true, ..
                                } => sol::cublasOperation_t::CUBLAS_OP_T,
                                _ => sol::cublasOperation_t::CUBLAS_OP_N,
                            };
                            (r.getrs)(h, op, n, k, ai, n, pi, bi, n, info2)
                        }
                        Step::Potrf => (r.potrf)(h, fill(upper), n, ai, n, w, lwork, info1),
                        Step::Potrs => (r.potrs)(h, fill(upper), n, k, ai, n, bi, n, info2),
                        Step::Geqrf => (r.geqrf)(h, m, n, ai, m, tau_ptr, w, lwork, info1),
                        Step::Orgqr => (r.orgqr)(h, m, k_r, k_r, ai, m, tau_ptr, w, lwork, info2),
                        Step::Gesvd => {
                            let vectors = matches!(call, DenseCall::Svd { vectors: true });
                            let (job, uu, vv) = if vectors {
                                (b'S' as c_schar, ui, vti)
                            } else {
                                (b'N' as c_schar, std::ptr::null_mut(), std::ptr::null_mut())
                            };
                            // rwork (unconverged superdiagonals) is optional: null.
                            (r.gesvd)(
                                h,
                                job,
                                job,
                                m,
                                n,
                                ai,
                                m,
                                vi,
                                uu,
                                m,
                                vv,
                                n,
                                w,
                                lwork,
                                std::ptr::null_mut(),
                                info1,
                            )
                        }
                        Step::Syevd => {
                            (r.syevd)(h, VECTORS, fill(upper), n, ai, n, vi, w, lwork, info1)
                        }
                        Step::CopyFactor => sol::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS,
                    }
                };
                status(step.name(), s)?;
            }
        }
        let finite_result = match call {
            DenseCall::Lu { solve: true, .. } | DenseCall::Cholesky { solve: true, .. } => {
                self.all_finite::<T>(blas, b, batch * st.b)?
            }
            DenseCall::Cholesky { solve: false, .. } => {
                self.all_finite::<T>(blas, a, batch * st.a)?
            }
            _ => true,
        };
        let event = self.end_timing(timing)?;
        let mut raw = vec![0u8; 2 * batch * 4];
        self.read(&infos, &mut raw)?;
        let ints: Vec<i32> = raw
            .chunks_exact(4)
            .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // Work, tau and infos are freed in stream order when dropped.
        Ok(DenseDone {
            event,
            info: combine_info(&ints[..batch], &ints[batch..]),
            finite_input: true,
            finite_result,
        })
    }
}

#[cfg(test)]
#[path = "solver_tests.rs"]
mod tests;
