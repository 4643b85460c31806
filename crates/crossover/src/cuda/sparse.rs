//! cuSPARSE's generic API for the GPU core's sparse products
//! ([`GpuApi::spmm`](crate::gpu::api::GpuApi::spmm),
//! [`GpuApi::spgemm`](crate::gpu::api::GpuApi::spgemm)): one handle per
//! device, created on first use on crossover's stream, from the cuSPARSE
//! that [`super::libs::cusparse`] finds. Without cuSPARSE the core runs
//! its own CSR kernels, so a missing library costs speed, never a result.
//!
//! Every CSR matrix is described with 32-bit row pointers and column
//! indices (`CUSPARSE_INDEX_32I`, which SpMV, SpMM and SpGEMM all take;
//! the core checks the sizes fit), zero-based, float32 or float64 values
//! computed in their own precision.
//!
//! - CSR times a vector: `cusparseSpMV` (`CUSPARSE_SPMV_ALG_DEFAULT`);
//!   CSR times a row-major matrix (any row step): `cusparseSpMM`
//!   (`CUSPARSE_SPMM_ALG_DEFAULT`), each after its `_bufferSize`, the
//!   workspace from crossover's stream-ordered pool.
//! - CSR times CSR: `cusparseSpGEMM` (`CUSPARSE_SPGEMM_DEFAULT`): work
//!   estimation and compute, each asked for its buffer size first, then
//!   the product's size (`cusparseSpMatGetSize`), its column indices and
//!   values allocated, `cusparseCsrSetPointers` and `cusparseSpGEMM_copy`.
//!   The row pointers are allocated before the work estimation (compute
//!   writes them). cuSPARSE keeps entries whose sum is zero and may leave
//!   a row's columns in its own order; the core reads the product back and
//!   makes it a valid [`Csr`](crate::sparse::Csr) (`gpu/sparse.rs`).
//!
//! cuSPARSE sums in its own order: results agree with the CPU's within
//! rounding, not bit for bit (`CROSSOVER_GPU_SPARSE=core` runs the core's
//! kernels, which keep the CPU's order).
//!
//! What has run where: its tests passed on an NVIDIA H200 on 2026-11-26
//! (docs/gpu.md).

use super::{handle, CudaApi, CudaMem, CudaTiming};
use crate::dtype::DType;
use crate::gpu::api::{
    ApiError, CsrOperand, GpuApi, SparseDense, SparseResult, SparseSparse, SpgemmOutcome,
};
use cudarc::cusparse::sys as sp;
use std::ffi::c_void;

/// cuSPARSE's handle of one device, made on first use.
pub(super) type Slot = handle::Slot<sp::cusparseHandle_t>;

/// Makes the cuSPARSE handle on crossover's stream.
const MAKER: handle::Maker<sp::cusparseHandle_t> = handle::Maker {
    call: "cusparseCreate",
    load: super::libs::cusparse,
    make: |api| {
        let mut raw = std::ptr::null_mut();
        // SAFETY: cuSPARSE is loaded and the context bound; `raw` is
        // written by the call.
        status("cusparseCreate", unsafe { sp::cusparseCreate(&mut raw) })?;
        let handle = handle::Owned::new(raw, |h| {
            // SAFETY: made by `cusparseCreate`, destroyed once (by `Owned`).
            let _ = unsafe { sp::cusparseDestroy(h) };
        });
        // SAFETY: a live handle and crossover's stream (which lives as long
        // as this API object, and so the handle).
        status("cusparseSetStream", unsafe {
            sp::cusparseSetStream(raw, api.stream.cu_stream() as sp::cudaStream_t)
        })?;
        Ok(handle)
    },
};

/// A cuSPARSE status as a result, naming the call: allocation failures
/// and exhausted resources (SpGEMM's buffers) are out of memory.
pub(super) fn status(call: &'static str, s: sp::cusparseStatus_t) -> Result<(), ApiError> {
    use sp::cusparseStatus_t as S;
    match s {
        S::CUSPARSE_STATUS_SUCCESS => Ok(()),
        S::CUSPARSE_STATUS_ALLOC_FAILED | S::CUSPARSE_STATUS_INSUFFICIENT_RESOURCES => {
            Err(ApiError::oom(call, format!("{s:?}")))
        }
        other => Err(ApiError::new(call, format!("{other:?}"))),
    }
}

/// cuSPARSE's value (and compute) type of `dtype`.
fn value_type(call: &'static str, dtype: DType) -> Result<sp::cudaDataType, ApiError> {
    match dtype {
        DType::F32 => Ok(sp::cudaDataType::CUDA_R_32F),
        DType::F64 => Ok(sp::cudaDataType::CUDA_R_64F),
        d => Err(ApiError::new(
            call,
            format!("crossover sends cuSPARSE float32 or float64, not {d}"),
        )),
    }
}

/// `1` and `0` of the call's dtype, read by cuSPARSE from the host
/// (`CUSPARSE_POINTER_MODE_HOST`, the handle's default).
enum Scalars {
    F32(f32, f32),
    F64(f64, f64),
}

impl Scalars {
    fn of(dtype: DType) -> Scalars {
        match dtype {
            DType::F32 => Scalars::F32(1.0, 0.0),
            _ => Scalars::F64(1.0, 0.0),
        }
    }

    /// Pointers to alpha (1) and beta (0), valid while `self` lives.
    fn ptrs(&self) -> (*const c_void, *const c_void) {
        match self {
            Scalars::F32(a, b) => (a as *const f32 as _, b as *const f32 as _),
            Scalars::F64(a, b) => (a as *const f64 as _, b as *const f64 as _),
        }
    }
}

/// A cuSPARSE descriptor, destroyed on drop by its own call.
struct Descr<T: Copy> {
    raw: T,
    destroy: fn(T),
}

impl<T: Copy> Drop for Descr<T> {
    fn drop(&mut self) {
        (self.destroy)(self.raw);
    }
}

/// The descriptor of a CSR operand (read only).
fn const_csr(
    a: &CsrOperand<'_, CudaMem>,
    vt: sp::cudaDataType,
) -> Result<Descr<sp::cusparseConstSpMatDescr_t>, ApiError> {
    const CALL: &str = "cusparseCreateConstCsr";
    let mut raw: sp::cusparseConstSpMatDescr_t = std::ptr::null();
    // SAFETY: device pointers of live allocations holding `rows + 1` row
    // pointers, `nnz` indices and values (the core sized them); `raw` is
    // written by the call.
    status(CALL, unsafe {
        sp::cusparseCreateConstCsr(
            &mut raw,
            a.rows as i64,
            a.cols as i64,
            a.nnz as i64,
            a.indptr.ptr as *const c_void,
            a.indices.ptr as *const c_void,
            a.values.ptr as *const c_void,
            sp::cusparseIndexType_t::CUSPARSE_INDEX_32I,
            sp::cusparseIndexType_t::CUSPARSE_INDEX_32I,
            sp::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
            vt,
        )
    })?;
    Ok(Descr {
        raw,
        destroy: |d| {
            // SAFETY: made by `cusparseCreateConstCsr`, destroyed once.
            let _ = unsafe { sp::cusparseDestroySpMat(d) };
        },
    })
}

/// The sizes cuSPARSE takes as C `int` (32-bit indices).
fn fits(call: &'static str, v: usize) -> Result<(), ApiError> {
    if i32::try_from(v).is_ok() {
        Ok(())
    } else {
        Err(ApiError::new(
            call,
            format!("{v} exceeds cuSPARSE's 32-bit indices"),
        ))
    }
}

impl CudaApi {
    /// The cuSPARSE handle (made now if needed), or why there is none.
    fn sparse_handle(&self) -> Result<sp::cusparseHandle_t, String> {
        self.library_handle(&self.sparse, &MAKER)
    }

    /// The handle, or `None` (said under `CROSSOVER_LOG=debug`).
    fn sparse_or_none(&self, what: &str) -> Option<sp::cusparseHandle_t> {
        match self.sparse_handle() {
            Ok(h) => Some(h),
            Err(why) => {
                if super::debug_log() {
                    eprintln!(
                        "crossover: cuda: no cuSPARSE ({why}); {what} uses crossover's kernel"
                    );
                }
                None
            }
        }
    }

    /// Enqueues `s` through cuSPARSE; `None` when cuSPARSE is unavailable.
    pub(super) fn cusparse_spmm(
        &self,
        s: &SparseDense<'_, CudaMem>,
    ) -> Option<Result<CudaTiming, ApiError>> {
        let handle = self.sparse_or_none("sparse @ dense")?;
        let call = if s.vector {
            "cusparseSpMV"
        } else {
            "cusparseSpMM"
        };
        Some(guarded(call, || self.enqueue_spmm(handle, s)))
    }

    /// Computes `s` through cuSPARSE; `None` when cuSPARSE is unavailable.
    pub(super) fn cusparse_spgemm(&self, s: &SparseSparse<'_, CudaMem>) -> SpgemmOutcome<CudaMem> {
        let handle = self.sparse_or_none("sparse @ sparse")?;
        Some(guarded("cusparseSpGEMM", || self.run_spgemm(handle, s)))
    }

    fn enqueue_spmm(
        &self,
        handle: sp::cusparseHandle_t,
        s: &SparseDense<'_, CudaMem>,
    ) -> Result<CudaTiming, ApiError> {
        let call = if s.vector {
            "cusparseSpMV"
        } else {
            "cusparseSpMM"
        };
        self.enter(call)?;
        for v in [s.a.rows, s.a.cols, s.a.nnz] {
            fits(call, v)?;
        }
        let vt = value_type(call, s.dtype)?;
        let a = const_csr(&s.a, vt)?;
        let scalars = Scalars::of(s.dtype);
        let (alpha, beta) = scalars.ptrs();
        let x_ptr = s.x.ptr + (s.x_offset * s.dtype.size()) as u64;
        let non = sp::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
        let mut bytes = 0usize;
        if s.vector {
            let x = self.dn_vec(s.a.cols, x_ptr, vt)?;
            let y = self.dn_vec_out(s.a.rows, s.c.ptr, vt)?;
            let alg = sp::cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT;
            // SAFETY: live descriptors of memory the core sized for the
            // product; alpha and beta are host scalars of the value type;
            // `bytes` is written by the call.
            status("cusparseSpMV_bufferSize", unsafe {
                sp::cusparseSpMV_bufferSize(
                    handle, non, alpha, a.raw, x.raw, beta, y.raw, vt, alg, &mut bytes,
                )
            })?;
            let work = self.alloc(bytes.max(1))?;
            let timing = self.start_timing()?;
            // SAFETY: as above, with a workspace of the size asked for (freed
            // in stream order after the call).
            status(call, unsafe {
                sp::cusparseSpMV(
                    handle,
                    non,
                    alpha,
                    a.raw,
                    x.raw,
                    beta,
                    y.raw,
                    vt,
                    alg,
                    work.ptr as *mut c_void,
                )
            })?;
            return self.end_timing(timing);
        }
        let order = sp::cusparseOrder_t::CUSPARSE_ORDER_ROW;
        let (x, c) = (
            self.dn_mat(s.a.cols, s.k, s.x_ld, x_ptr, vt, order)?,
            self.dn_mat_out(s.a.rows, s.k, s.c.ptr, vt, order)?,
        );
        let alg = sp::cusparseSpMMAlg_t::CUSPARSE_SPMM_ALG_DEFAULT;
        // SAFETY: live descriptors of memory the core sized for the product
        // (`x` spans `cols` rows of `x_ld`, `c` is `rows x k` contiguous);
        // host scalars; `bytes` is written by the call.
        status("cusparseSpMM_bufferSize", unsafe {
            sp::cusparseSpMM_bufferSize(
                handle, non, non, alpha, a.raw, x.raw, beta, c.raw, vt, alg, &mut bytes,
            )
        })?;
        let work = self.alloc(bytes.max(1))?;
        let timing = self.start_timing()?;
        // SAFETY: as above, with a workspace of the size asked for.
        status(call, unsafe {
            sp::cusparseSpMM(
                handle,
                non,
                non,
                alpha,
                a.raw,
                x.raw,
                beta,
                c.raw,
                vt,
                alg,
                work.ptr as *mut c_void,
            )
        })?;
        self.end_timing(timing)
    }

    /// A dense vector descriptor of `n` values at `ptr`.
    fn dn_vec(
        &self,
        n: usize,
        ptr: u64,
        vt: sp::cudaDataType,
    ) -> Result<Descr<sp::cusparseConstDnVecDescr_t>, ApiError> {
        let mut raw: sp::cusparseConstDnVecDescr_t = std::ptr::null();
        // SAFETY: `ptr` addresses `n` values of a live allocation; `raw` is
        // written by the call.
        status("cusparseCreateConstDnVec", unsafe {
            sp::cusparseCreateConstDnVec(&mut raw, n as i64, ptr as *const c_void, vt)
        })?;
        Ok(Descr {
            raw,
            destroy: |d| {
                // SAFETY: made above, destroyed once.
                let _ = unsafe { sp::cusparseDestroyDnVec(d) };
            },
        })
    }

    /// A dense vector descriptor of `n` values at `ptr` that cuSPARSE
    /// writes.
    fn dn_vec_out(
        &self,
        n: usize,
        ptr: u64,
        vt: sp::cudaDataType,
    ) -> Result<Descr<sp::cusparseDnVecDescr_t>, ApiError> {
        let mut raw: sp::cusparseDnVecDescr_t = std::ptr::null_mut();
        // SAFETY: `ptr` addresses `n` values of a live allocation; `raw` is
        // written by the call.
        status("cusparseCreateDnVec", unsafe {
            sp::cusparseCreateDnVec(&mut raw, n as i64, ptr as *mut c_void, vt)
        })?;
        Ok(Descr {
            raw,
            destroy: |d| {
                // SAFETY: made above, destroyed once.
                let _ = unsafe { sp::cusparseDestroyDnVec(d as sp::cusparseConstDnVecDescr_t) };
            },
        })
    }

    /// A contiguous row-major (or column-major) `rows x cols` matrix
    /// descriptor at `ptr` that cuSPARSE writes.
    fn dn_mat_out(
        &self,
        rows: usize,
        cols: usize,
        ptr: u64,
        vt: sp::cudaDataType,
        order: sp::cusparseOrder_t,
    ) -> Result<Descr<sp::cusparseDnMatDescr_t>, ApiError> {
        let ld = match order {
            sp::cusparseOrder_t::CUSPARSE_ORDER_ROW => cols,
            _ => rows,
        };
        let mut raw: sp::cusparseDnMatDescr_t = std::ptr::null_mut();
        // SAFETY: `ptr` addresses `rows * cols` values of a live
        // allocation; `raw` is written by the call.
        status("cusparseCreateDnMat", unsafe {
            sp::cusparseCreateDnMat(
                &mut raw,
                rows as i64,
                cols as i64,
                ld as i64,
                ptr as *mut c_void,
                vt,
                order,
            )
        })?;
        Ok(Descr {
            raw,
            destroy: |d| {
                // SAFETY: made above, destroyed once.
                let _ = unsafe { sp::cusparseDestroyDnMat(d as sp::cusparseConstDnMatDescr_t) };
            },
        })
    }

    /// A dense `rows x cols` matrix descriptor at `ptr`, `ld` between rows
    /// (row-major) or columns (column-major).
    fn dn_mat(
        &self,
        rows: usize,
        cols: usize,
        ld: usize,
        ptr: u64,
        vt: sp::cudaDataType,
        order: sp::cusparseOrder_t,
    ) -> Result<Descr<sp::cusparseConstDnMatDescr_t>, ApiError> {
        let mut raw: sp::cusparseConstDnMatDescr_t = std::ptr::null();
        // SAFETY: `ptr` addresses the matrix in a live allocation (the core
        // checked its strides); `raw` is written by the call.
        status("cusparseCreateConstDnMat", unsafe {
            sp::cusparseCreateConstDnMat(
                &mut raw,
                rows as i64,
                cols as i64,
                ld as i64,
                ptr as *const c_void,
                vt,
                order,
            )
        })?;
        Ok(Descr {
            raw,
            destroy: |d| {
                // SAFETY: made above, destroyed once.
                let _ = unsafe { sp::cusparseDestroyDnMat(d) };
            },
        })
    }

    /// SpGEMM's protocol (see the module's notes), waiting for the
    /// product's size after compute.
    fn run_spgemm(
        &self,
        handle: sp::cusparseHandle_t,
        s: &SparseSparse<'_, CudaMem>,
    ) -> Result<SparseResult<CudaMem>, ApiError> {
        const CALL: &str = "cusparseSpGEMM";
        self.enter(CALL)?;
        for v in [s.a.rows, s.a.cols, s.a.nnz, s.b.cols, s.b.nnz] {
            fits(CALL, v)?;
        }
        let vt = value_type(CALL, s.dtype)?;
        let (m, n) = (s.a.rows, s.b.cols);
        let (a, b) = (const_csr(&s.a, vt)?, const_csr(&s.b, vt)?);
        let indptr = self.alloc((m + 1) * 4)?;
        let mut raw_c: sp::cusparseSpMatDescr_t = std::ptr::null_mut();
        // SAFETY: `indptr` holds `m + 1` int32s (written by compute); no
        // indices or values yet (set before the copy); `raw_c` is written
        // by the call.
        status("cusparseCreateCsr", unsafe {
            sp::cusparseCreateCsr(
                &mut raw_c,
                m as i64,
                n as i64,
                0,
                indptr.ptr as *mut c_void,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                sp::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                sp::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                sp::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                vt,
            )
        })?;
        let c = Descr {
            raw: raw_c,
            destroy: |d| {
                // SAFETY: made above, destroyed once.
                let _ = unsafe { sp::cusparseDestroySpMat(d as sp::cusparseConstSpMatDescr_t) };
            },
        };
        let mut raw_g: sp::cusparseSpGEMMDescr_t = std::ptr::null_mut();
        // SAFETY: `raw_g` is written by the call.
        status("cusparseSpGEMM_createDescr", unsafe {
            sp::cusparseSpGEMM_createDescr(&mut raw_g)
        })?;
        let g = Descr {
            raw: raw_g,
            destroy: |d| {
                // SAFETY: made above, destroyed once.
                let _ = unsafe { sp::cusparseSpGEMM_destroyDescr(d) };
            },
        };
        let scalars = Scalars::of(s.dtype);
        let (alpha, beta) = scalars.ptrs();
        let non = sp::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
        let alg = sp::cusparseSpGEMMAlg_t::CUSPARSE_SPGEMM_DEFAULT;
        // Work estimation, then compute: each asked for its buffer's size
        // (a null buffer), then run with a buffer of that size. The
        // buffers stay alive until the copy. The two phases take the same
        // arguments but the size and buffer.
        type Phase = unsafe fn(
            sp::cusparseHandle_t,
            sp::cusparseOperation_t,
            sp::cusparseOperation_t,
            *const c_void,
            sp::cusparseConstSpMatDescr_t,
            sp::cusparseConstSpMatDescr_t,
            *const c_void,
            sp::cusparseSpMatDescr_t,
            sp::cudaDataType,
            sp::cusparseSpGEMMAlg_t,
            sp::cusparseSpGEMMDescr_t,
            *mut usize,
            *mut c_void,
        ) -> sp::cusparseStatus_t;
        let mut buffers = Vec::with_capacity(2);
        for (call, phase) in [
            (
                "cusparseSpGEMM_workEstimation",
                sp::cusparseSpGEMM_workEstimation as Phase,
            ),
            (
                "cusparseSpGEMM_compute",
                sp::cusparseSpGEMM_compute as Phase,
            ),
        ] {
            let run = |size: &mut usize, buffer: *mut c_void| {
                // SAFETY: live descriptors of the operands' device arrays
                // and of C, host scalars, a size written by the call, and
                // a null buffer (the size query) or one of the size
                // cuSPARSE asked for, kept alive (in `buffers`) until the
                // last call that uses it (the copy) is queued; frees are
                // stream-ordered after it.
                status(call, unsafe {
                    phase(
                        handle, non, non, alpha, a.raw, b.raw, beta, c.raw, vt, alg, g.raw, size,
                        buffer,
                    )
                })
            };
            let mut size = 0usize;
            run(&mut size, std::ptr::null_mut())?;
            let buffer = self.alloc(size.max(1))?;
            run(&mut size, buffer.ptr as *mut c_void)?;
            buffers.push(buffer);
        }
        let (mut rows, mut cols, mut nnz) = (0i64, 0i64, 0i64);
        // SAFETY: a live descriptor; the sizes are written by the call
        // (cuSPARSE knows C's size once compute returns).
        status("cusparseSpMatGetSize", unsafe {
            sp::cusparseSpMatGetSize(
                c.raw as sp::cusparseConstSpMatDescr_t,
                &mut rows,
                &mut cols,
                &mut nnz,
            )
        })?;
        let nnz = checked_nnz(nnz, m, n)?;
        let (indices, values) = if nnz > 0 {
            let (idx, val) = (self.alloc(nnz * 4)?, self.alloc(nnz * s.dtype.size())?);
            // SAFETY: a live descriptor; `idx` and `val` hold `nnz` int32s
            // and values, `indptr` `m + 1` int32s.
            status("cusparseCsrSetPointers", unsafe {
                sp::cusparseCsrSetPointers(
                    c.raw,
                    indptr.ptr as *mut c_void,
                    idx.ptr as *mut c_void,
                    val.ptr as *mut c_void,
                )
            })?;
            // SAFETY: as for compute; C's arrays are set and sized above.
            status("cusparseSpGEMM_copy", unsafe {
                sp::cusparseSpGEMM_copy(
                    handle, non, non, alpha, a.raw, b.raw, beta, c.raw, vt, alg, g.raw,
                )
            })?;
            (Some(idx), Some(val))
        } else {
            (None, None)
        };
        drop(buffers);
        Ok(SparseResult {
            nnz,
            indptr,
            indices,
            values,
        })
    }
}

/// The product's entry count as cuSPARSE reported it, checked against
/// its shape (at most `m * n`; anything else is a fault, never a size).
fn checked_nnz(nnz: i64, m: usize, n: usize) -> Result<usize, ApiError> {
    let most = (m as u128) * (n as u128);
    if nnz < 0 || nnz as u128 > most {
        return Err(ApiError::new(
            "cusparseSpMatGetSize",
            format!("cuSPARSE reported {nnz} entries for a {m} x {n} product"),
        ));
    }
    Ok(nnz as usize)
}

/// Runs `f`, a missing function of an old cuSPARSE (cudarc's loader
/// panics) becoming an error of `call`.
fn guarded<T>(call: &'static str, f: impl FnOnce() -> Result<T, ApiError>) -> Result<T, ApiError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(ApiError::new(call, "cuSPARSE is missing a function")))
}

/// `"cuSPARSE"` when it loads (for explain and the choice of path).
pub(super) fn name() -> Option<&'static str> {
    super::libs::cusparse().ok().map(|_| "cuSPARSE")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sp::cusparseStatus_t as S;

    #[test]
    fn statuses_map_to_typed_errors_naming_the_call() {
        assert_eq!(status("cusparseSpMM", S::CUSPARSE_STATUS_SUCCESS), Ok(()));
        let e = status("cusparseSpGEMM_compute", S::CUSPARSE_STATUS_ALLOC_FAILED).unwrap_err();
        assert!(
            e.out_of_memory && e.call == "cusparseSpGEMM_compute",
            "{e:?}"
        );
        let e = status(
            "cusparseSpGEMM_compute",
            S::CUSPARSE_STATUS_INSUFFICIENT_RESOURCES,
        )
        .unwrap_err();
        assert!(e.out_of_memory, "{e:?}");
        let e = status("cusparseSpMV", S::CUSPARSE_STATUS_NOT_SUPPORTED).unwrap_err();
        assert!(!e.out_of_memory, "{e:?}");
        assert_eq!(e.to_string(), "cusparseSpMV: CUSPARSE_STATUS_NOT_SUPPORTED");
    }

    #[test]
    fn only_float32_and_float64_go_to_cusparse() {
        assert_eq!(
            value_type("x", DType::F32),
            Ok(sp::cudaDataType::CUDA_R_32F)
        );
        assert_eq!(
            value_type("x", DType::F64),
            Ok(sp::cudaDataType::CUDA_R_64F)
        );
        assert!(value_type("x", DType::I64).is_err());
    }

    #[test]
    fn sizes_past_32_bit_indices_are_refused() {
        assert!(fits("x", i32::MAX as usize).is_ok());
        let e = fits("cusparseSpMM", i32::MAX as usize + 1).unwrap_err();
        assert!(e.msg.contains("32-bit"), "{e}");
    }

    #[test]
    fn a_product_size_past_its_shape_is_a_fault() {
        assert_eq!(checked_nnz(6, 2, 3), Ok(6));
        assert_eq!(checked_nnz(0, 0, 3), Ok(0));
        assert!(checked_nnz(7, 2, 3).is_err());
        assert!(checked_nnz(-1, 2, 3).is_err());
    }
}
