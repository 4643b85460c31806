//! cuBLAS for the GPU core's matrix products ([`GpuApi::gemm`]): one
//! handle per device, created on first use on crossover's stream, from the
//! cuBLAS that [`super::libs::cublas`] finds. Without cuBLAS the core runs
//! its own kernel, so a missing library costs speed, never a result.
//!
//! cuBLAS is column-major: the row-major product `C = A B` is the
//! column-major `Cᵀ = Bᵀ Aᵀ`, and an operand stored the other way round
//! (a transposed view) is read with `CUBLAS_OP_T`, without a copy.
//! float32 and complex64 run in full float32 unless `CROSSOVER_GPU_TF32=1`
//! allows TF32 tensor cores (about 10 bits of mantissa in the products);
//! complex products are `cublas{C,Z}gemmStridedBatched` over the same
//! interleaved (re, im) layout crossover stores.
//!
//! What has run where: its tests passed on an NVIDIA H200 on 2026-11-26
//! (docs/gpu.md).

use super::{handle, CudaApi, CudaMem, CudaTiming};
use crate::dtype::DType;
use crate::gpu::api::{ApiError, Gemm, GemmOperand};
use cudarc::cublas::sys as blas;

/// cuBLAS's handle of one device, made on first use.
pub(super) type Slot = handle::Slot<blas::cublasHandle_t>;

/// Makes the cuBLAS handle: on crossover's stream, TF32 when allowed.
const MAKER: handle::Maker<blas::cublasHandle_t> = handle::Maker {
    call: "cublasCreate",
    load: super::libs::cublas,
    make: |api| {
        let mut raw = std::ptr::null_mut();
        // SAFETY: cuBLAS is loaded and the context bound; `raw` is written
        // by the call.
        status("cublasCreate", unsafe { blas::cublasCreate_v2(&mut raw) })?;
        let handle = handle::Owned::new(raw, |h| {
            // SAFETY: made by `cublasCreate`, destroyed once (by `Owned`).
            let _ = unsafe { blas::cublasDestroy_v2(h) };
        });
        // SAFETY: a live handle and crossover's stream (which lives as long
        // as this API object, and so the handle).
        status("cublasSetStream", unsafe {
            blas::cublasSetStream_v2(raw, api.stream.cu_stream() as blas::cudaStream_t)
        })?;
        if tf32() {
            // SAFETY: a live handle.
            status("cublasSetMathMode", unsafe {
                blas::cublasSetMathMode(raw, blas::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH)
            })?;
        }
        Ok(handle)
    },
};

/// Whether `CROSSOVER_GPU_TF32=1` lets float32 products use TF32.
fn tf32() -> bool {
    std::env::var("CROSSOVER_GPU_TF32").is_ok_and(|v| v == "1")
}

/// cuBLAS and its float32 mode, for explain.
pub(super) fn describe() -> String {
    if tf32() {
        "cuBLAS (float32 products on TF32 tensor cores: CROSSOVER_GPU_TF32=1)".into()
    } else {
        "cuBLAS (full float32; TF32 only with CROSSOVER_GPU_TF32=1)".into()
    }
}

/// A cuBLAS status as a result (allocation failures are out of memory).
pub(super) fn status(call: &'static str, s: blas::cublasStatus_t) -> Result<(), ApiError> {
    match s {
        blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS => Ok(()),
        blas::cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED => {
            Err(ApiError::oom(call, format!("{s:?}")))
        }
        other => Err(ApiError::new(call, format!("{other:?}"))),
    }
}

impl CudaApi {
    /// The cuBLAS handle (made now if needed), or why there is none.
    pub(super) fn blas_handle(&self) -> Result<blas::cublasHandle_t, String> {
        self.library_handle(&self.blas, &MAKER)
    }

    /// Enqueues `g` through cuBLAS; `None` when cuBLAS is unavailable.
    pub(super) fn cublas_gemm(
        &self,
        g: &Gemm<'_, CudaMem>,
    ) -> Option<Result<CudaTiming, ApiError>> {
        let handle = match self.blas_handle() {
            Ok(h) => h,
            Err(why) => {
                if super::debug_log() {
                    eprintln!("crossover: cuda: no cuBLAS ({why}); matmul uses crossover's kernel");
                }
                return None;
            }
        };
        Some(self.enqueue_gemm(handle, g))
    }

    fn enqueue_gemm(
        &self,
        handle: blas::cublasHandle_t,
        g: &Gemm<'_, CudaMem>,
    ) -> Result<CudaTiming, ApiError> {
        const CALL: &str = "cublasGemmStridedBatched";
        self.enter(CALL)?;
        let int = |v: usize| {
            i32::try_from(v).map_err(|_| ApiError::new(CALL, format!("{v} exceeds a C int")))
        };
        let size = g.dtype.size() as u64;
        let ptr = |o: &GemmOperand<'_, CudaMem>| o.mem.ptr + o.offset as u64 * size;
        let op = |o: &GemmOperand<'_, CudaMem>| {
            if o.column_major {
                blas::cublasOperation_t::CUBLAS_OP_T
            } else {
                blas::cublasOperation_t::CUBLAS_OP_N
            }
        };
        // Column-major Cᵀ (n x m) = Bᵀ (n x k) · Aᵀ (k x m).
        let (m, n, k, batch) = (int(g.n)?, int(g.m)?, int(g.k)?, int(g.batch)?);
        let (lda, ldb, ldc) = (int(g.b.ld)?, int(g.a.ld)?, m);
        let (sa, sb, sc) = (
            g.b.batch_stride as i64,
            g.a.batch_stride as i64,
            (g.m * g.n) as i64,
        );
        let timing = self.start_timing()?;
        let (a, b, c) = (ptr(&g.b), ptr(&g.a), g.c.ptr);
        // One call per dtype: `$f` is cuBLAS's function, `$t` the element
        // type, `$one` and `$zero` alpha and beta.
        macro_rules! gemm {
            ($f:ident, $t:ty, $one:expr, $zero:expr) => {{
                let (one, zero): ($t, $t) = ($one, $zero);
                // SAFETY: device pointers of live allocations that hold
                // every element the sizes, leading dimensions and batch
                // strides address (the core derives them from the
                // operands' layouts); alpha and beta are host scalars read
                // during the call.
                unsafe {
                    blas::$f(
                        handle,
                        op(&g.b),
                        op(&g.a),
                        m,
                        n,
                        k,
                        &one,
                        a as *const $t,
                        lda,
                        sa,
                        b as *const $t,
                        ldb,
                        sb,
                        &zero,
                        c as *mut $t,
                        ldc,
                        sc,
                        batch,
                    )
                }
            }};
        }
        let run = || match g.dtype {
            DType::F32 => gemm!(cublasSgemmStridedBatched, f32, 1.0, 0.0),
            DType::F64 => gemm!(cublasDgemmStridedBatched, f64, 1.0, 0.0),
            // Interleaved (re, im) pairs: the layout of cuComplex and
            // cuDoubleComplex, and of crossover's complex buffers.
            DType::C64 => gemm!(
                cublasCgemmStridedBatched,
                blas::cuComplex,
                blas::cuComplex { x: 1.0, y: 0.0 },
                blas::cuComplex { x: 0.0, y: 0.0 }
            ),
            DType::C128 => gemm!(
                cublasZgemmStridedBatched,
                blas::cuDoubleComplex,
                blas::cuDoubleComplex { x: 1.0, y: 0.0 },
                blas::cuDoubleComplex { x: 0.0, y: 0.0 }
            ),
            _ => blas::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED,
        };
        let s = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
            .map_err(|_| ApiError::new(CALL, "cuBLAS is missing a function"))?;
        status(CALL, s)?;
        self.end_timing(timing)
    }
}
