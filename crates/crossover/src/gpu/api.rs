//! The small trait each GPU API implements ([`GpuApi`]): devices and their
//! properties, memory, copies, compiling a source, launching, events.
//! Everything else (codegen, caches, memory pooling, residency, timing,
//! planning) is the GPU core's and is written once.

use super::codegen::Dialect;
use std::fmt;

/// A device as an API reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// `"opencl"` or `"cuda"`.
    pub api: &'static str,
    pub name: String,
    pub vendor: String,
    /// Driver (and API) version, part of compiled-kernel cache keys.
    pub driver: String,
    /// A GPU (false for CPU-type OpenCL devices such as pocl's, which
    /// share the cores the CPU backend already uses).
    pub is_gpu: bool,
    pub compute_units: u32,
    /// Core clock, MHz.
    pub clock_mhz: u32,
    /// Global memory, bytes.
    pub memory_bytes: u64,
    /// Largest single allocation, bytes.
    pub max_alloc_bytes: u64,
    /// Double precision support.
    pub fp64: bool,
    /// Largest work-group.
    pub max_group: usize,
    /// Local (shared) memory per work-group, bytes.
    pub local_mem_bytes: u64,
    /// Largest kernel argument list, bytes.
    pub max_param_bytes: usize,
    /// Memory bus width (bits) and memory clock (MHz), where reported.
    pub memory_bus: Option<(u32, u32)>,
}

impl DeviceInfo {
    /// One line for `crossover info`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({}, {} {}, {} compute units at {} MHz, {:.1} GiB, fp64 {}, driver {})",
            self.name,
            self.vendor,
            self.api,
            if self.is_gpu { "GPU" } else { "CPU device" },
            self.compute_units,
            self.clock_mhz,
            self.memory_bytes as f64 / (1u64 << 30) as f64,
            if self.fp64 { "yes" } else { "no" },
            self.driver
        )
    }
}

/// A failed API call.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// The call that failed (`clBuildProgram`, `cuLaunchKernel`...).
    pub call: &'static str,
    /// What went wrong (the API's error name and, for builds, the log).
    pub msg: String,
    /// The device ran out of memory.
    pub out_of_memory: bool,
}

impl ApiError {
    /// An error of `call`.
    pub fn new(call: &'static str, msg: impl Into<String>) -> ApiError {
        ApiError {
            call,
            msg: msg.into(),
            out_of_memory: false,
        }
    }

    /// An out-of-memory error of `call`.
    pub fn oom(call: &'static str, msg: impl Into<String>) -> ApiError {
        ApiError {
            call,
            msg: msg.into(),
            out_of_memory: true,
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.msg)
    }
}

/// An argument of a kernel launch.
pub enum Arg<'a, M> {
    /// A device buffer.
    Mem(&'a M),
    /// A parameter struct passed by value.
    Bytes(&'a [u8]),
}

/// One operand of a [`Gemm`] as BLAS reads it: a matrix starting at
/// `offset` (elements) of `mem`, stored row-major (`column_major` false:
/// element `(i, j)` at `i * ld + j`) or column-major (at `i + j * ld`),
/// and the step between batch entries (elements; 0 repeats one matrix).
pub struct GemmOperand<'a, M> {
    pub mem: &'a M,
    pub offset: usize,
    pub column_major: bool,
    pub ld: usize,
    pub batch_stride: usize,
}

/// A batched matrix product for a vendor library: `c[i] = a[i] @ b[i]`
/// for `i < batch` (all sizes > 0), `a` `m x k`, `b` `k x n`, `c`
/// row-major `m x n` and contiguous (entry `i` at `i * m * n`).
pub struct Gemm<'a, M> {
    pub dtype: crate::dtype::DType,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub batch: usize,
    pub a: GemmOperand<'a, M>,
    pub b: GemmOperand<'a, M>,
    pub c: &'a M,
}

/// One axis of complex FFTs for a vendor library: `outer` groups of
/// `inner` interleaved transforms of `n` points each, unscaled, from `src`
/// to `dst` (both contiguous, element `(o, j, i)` at `(o * n + j) * inner +
/// i`, interleaved re, im in `precision`, f32 or f64).
pub struct FftAxis<'a, M> {
    pub precision: crate::dtype::DType,
    pub outer: usize,
    pub n: usize,
    pub inner: usize,
    pub inverse: bool,
    pub src: &'a M,
    pub dst: &'a M,
}

/// What a vendor dense solver computes for a [`DenseJob`] (LAPACK's
/// routines, as cuSOLVER names them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DenseCall {
    /// LU with partial pivoting of `a` (`n x n`, `getrf`), pivots (1-based
    /// i32, `n` per matrix) to `pivots`; with `solve`, then `b` (`n x k`)
    /// becomes `op(a)^-1 b` (`getrs`, `op` the transpose when `transpose`).
    Lu { solve: bool, transpose: bool },
    /// Cholesky factor of `a` (`potrf`) from its `upper` or lower triangle,
    /// written over that triangle; with `solve`, then `b` becomes
    /// `a^-1 b` (`potrs`).
    Cholesky { upper: bool, solve: bool },
    /// QR of `a` (`m x n`, `geqrf`): `b` (`m x n`) gets the factored
    /// matrix (`R` in its upper triangle), then `a` the thin `Q` in its
    /// first `min(m, n)` columns (`orgqr`).
    Qr,
    /// Thin SVD of `a` (`m x n`, `m >= n`, `gesvd`): `values` gets the
    /// `n` singular values (descending, real); with `vectors`, `u` gets `U`
    /// (`m x n`) and `vt` gets `V^H` (`n x n`; `V^T` when real).
    Svd { vectors: bool },
    /// Eigendecomposition of the symmetric (Hermitian) `a` (`n x n`) read
    /// from its `upper` or lower triangle (`syevd`, `heevd`): `values` gets
    /// the eigenvalues (ascending, real), `a` the eigenvectors as columns.
    Eigh { upper: bool },
}

/// A batch of dense factorisations for a vendor solver
/// ([`GpuApi::dense`]). Every matrix is column-major and packed: entry
/// `i` of a buffer holding `r x c` matrices starts at element `i * r * c`,
/// with leading dimension `r`. `a`, `b` and the outputs are the core's
/// allocations, sized for the call; the API overwrites them.
pub struct DenseJob<'a, M> {
    pub call: DenseCall,
    /// f32, f64, c64 or c128 (complex: `values` real, `vt` is `V^H`,
    /// `getrs`'s `transpose` the plain transpose, not the conjugate one).
    pub dtype: crate::dtype::DType,
    pub batch: usize,
    /// Rows and columns of `a`.
    pub m: usize,
    pub n: usize,
    /// Columns of `b` (solves).
    pub k: usize,
    pub a: &'a M,
    pub b: Option<&'a M>,
    pub pivots: Option<&'a M>,
    pub values: Option<&'a M>,
    pub u: Option<&'a M>,
    pub vt: Option<&'a M>,
}

/// A finished [`DenseJob`]: its timing and what the device reported.
pub struct DenseDone<E> {
    /// Start and end of the calls.
    pub event: E,
    /// The solver's `info` per matrix (0: success; > 0: the routine's
    /// failure, such as the 1-based index of a zero pivot).
    pub info: Vec<i32>,
    /// Whether every input element (`a`, and `b` when solving) was finite.
    /// When not, nothing was computed (the core asks the CPU why).
    pub finite_input: bool,
    /// Whether the solution (`b`) or factor (`a`) of a solve, inverse or
    /// Cholesky factorisation is finite (may be conservative: a sum of
    /// magnitudes that overflows reads as not finite).
    pub finite_result: bool,
}

/// A CSR matrix in device memory for a vendor sparse library: `rows x
/// cols` with `nnz` stored entries, row pointers `indptr` (`rows + 1`
/// int32), column indices `indices` (`nnz` int32, sorted within each row)
/// and `values` (`nnz` of the call's dtype), all zero-based.
pub struct CsrOperand<'a, M> {
    pub rows: usize,
    pub cols: usize,
    pub nnz: usize,
    pub indptr: &'a M,
    pub indices: &'a M,
    pub values: &'a M,
}

/// A sparse times dense product for a vendor library
/// ([`GpuApi::spmm`]): `c = a @ x`, `x` `a.cols x k` read row-major from
/// element `x_offset` of `x` with `x_ld` elements between rows (`x_ld >=
/// k`); `c` contiguous row-major `a.rows x k`, overwritten. `vector`: `k`
/// is 1 and `x` is contiguous (`x_ld` 1), a matrix-vector product. Sizes
/// are above zero and `a.nnz` too.
pub struct SparseDense<'a, M> {
    /// f32 or f64 (the matrix, `x` and `c` alike).
    pub dtype: crate::dtype::DType,
    pub a: CsrOperand<'a, M>,
    pub k: usize,
    pub vector: bool,
    pub x: &'a M,
    pub x_offset: usize,
    pub x_ld: usize,
    pub c: &'a M,
}

/// A sparse times sparse product for a vendor library
/// ([`GpuApi::spgemm`]): `c = a @ b`, both operands CSR of one dtype (f32
/// or f64, every size above zero).
pub struct SparseSparse<'a, M> {
    pub dtype: crate::dtype::DType,
    pub a: CsrOperand<'a, M>,
    pub b: CsrOperand<'a, M>,
}

/// A [`SparseSparse`] product as the vendor library left it, in memory it
/// allocated: `nnz` entries, row pointers (`rows + 1` int32), column
/// indices (int32) and values, in the library's order within rows and
/// possibly holding entries whose sum is zero (the core reads it back and
/// checks it). `indices` and `values` are `None` when `nnz` is 0. Not
/// timed by events: the core times the whole product on the host.
pub struct SparseResult<M> {
    pub nnz: usize,
    pub indptr: M,
    pub indices: Option<M>,
    pub values: Option<M>,
}

/// What [`GpuApi::spgemm`] returns: `None` when the API has no sparse
/// library here, else the product or the call that failed.
pub type SpgemmOutcome<M> = Option<Result<SparseResult<M>, ApiError>>;

/// A compiled module and, where the API can give it, the binary to cache.
pub struct Compiled<M> {
    pub module: M,
    pub binary: Option<Vec<u8>>,
}

/// One GPU API over one device.
///
/// Calls may come from several threads; the core serialises launches (see
/// [`super::GpuBackend`]), so implementations need not lock kernels.
pub trait GpuApi: Send + Sync + 'static {
    /// A device allocation (freed on drop).
    type Mem: Send + Sync + 'static;
    /// A compiled program holding the entry points it was built for.
    type Module: Send + Sync + 'static;
    /// A completed-launch marker with its device time.
    type Event: Send + Sync + 'static;

    /// The device.
    fn info(&self) -> &DeviceInfo;
    /// The kernel language this API compiles.
    fn dialect(&self) -> Dialect;
    /// Compiler options (part of cache keys).
    fn options(&self) -> String;
    /// Allocates `bytes` (> 0) of device memory.
    fn alloc(&self, bytes: usize) -> Result<Self::Mem, ApiError>;
    /// Copies `src` to the start of `dst` (returns when the host data may
    /// be reused).
    fn write(&self, dst: &Self::Mem, src: &[u8]) -> Result<(), ApiError>;
    /// Copies the start of `src` into `dst`, after all queued work.
    fn read(&self, src: &Self::Mem, dst: &mut [u8]) -> Result<(), ApiError>;
    /// Builds `source` with entry points `entries` (the error carries the
    /// build log). `keep_binary`: also return the binary for
    /// [`GpuApi::load`] (the kernel cache stores it). Some drivers pay
    /// for it: pocl compiles every kernel of the program for its binary,
    /// which takes 20 times as long as the build, so callers that store
    /// nothing ask for none.
    fn compile(
        &self,
        source: &str,
        entries: &[String],
        keep_binary: bool,
    ) -> Result<Compiled<Self::Module>, ApiError>;
    /// Loads a binary that [`GpuApi::compile`] returned earlier.
    fn load(&self, binary: &[u8], entries: &[String]) -> Result<Self::Module, ApiError>;
    /// Enqueues entry `entry` of `module` on `groups` work-groups of
    /// [`GROUP`](super::codegen::GROUP) work-items.
    fn launch(
        &self,
        module: &Self::Module,
        entry: usize,
        groups: usize,
        args: &[Arg<'_, Self::Mem>],
    ) -> Result<Self::Event, ApiError>;
    /// Waits for all queued work.
    fn synchronize(&self) -> Result<(), ApiError>;
    /// Device seconds of a finished launch (`None` when not measurable).
    fn elapsed(&self, event: &Self::Event) -> Result<Option<f64>, ApiError>;
    /// Enqueues `g` through the vendor's BLAS (cuBLAS on CUDA). `None`:
    /// this API has none here (the core runs its own kernel instead).
    fn gemm(&self, _g: &Gemm<'_, Self::Mem>) -> Option<Result<Self::Event, ApiError>> {
        None
    }
    /// Enqueues `f` through the vendor's FFT library (cuFFT on CUDA).
    /// `None`: this API has none here (the core runs its own passes).
    fn fft_axis(&self, _f: &FftAxis<'_, Self::Mem>) -> Option<Result<Self::Event, ApiError>> {
        None
    }
    /// Whether [`GpuApi::fft_axis`] takes every length (else the core runs
    /// lengths other than powers of two by Bluestein's algorithm).
    fn fft_any_length(&self) -> bool {
        false
    }
    /// Runs `job` through the vendor's dense solver (cuSOLVER on CUDA)
    /// and waits for its `info`. `None`: this API has none here.
    fn dense(
        &self,
        _job: &DenseJob<'_, Self::Mem>,
    ) -> Option<Result<DenseDone<Self::Event>, ApiError>> {
        None
    }
    /// Enqueues `s` through the vendor's sparse library (cuSPARSE's SpMV or
    /// SpMM on CUDA). `None`: this API has none here (the core runs its own
    /// CSR kernel).
    fn spmm(&self, _s: &SparseDense<'_, Self::Mem>) -> Option<Result<Self::Event, ApiError>> {
        None
    }
    /// Computes `s` through the vendor's sparse library (cuSPARSE's SpGEMM
    /// on CUDA), waiting for the product's size. `None`: this API has none
    /// here (the core runs its own merge kernel).
    fn spgemm(&self, _s: &SparseSparse<'_, Self::Mem>) -> SpgemmOutcome<Self::Mem> {
        None
    }
    /// The vendor sparse library [`GpuApi::spmm`] and [`GpuApi::spgemm`]
    /// use, for explain and the choice of path (`None`: none here).
    fn sparse_name(&self) -> Option<&'static str> {
        None
    }
    /// The vendor dense solver [`GpuApi::dense`] uses, for explain and the
    /// planner (`None`: none here, dense linear algebra runs on the CPU).
    fn solver_name(&self) -> Option<&'static str> {
        None
    }
    /// The vendor BLAS [`GpuApi::gemm`] uses and its float32 mode, for
    /// explain (`None`: none here).
    fn blas_name(&self) -> Option<String> {
        None
    }
    /// The vendor FFT library [`GpuApi::fft_axis`] uses, for explain.
    fn fft_name(&self) -> Option<&'static str> {
        None
    }
    /// The device ordinal and pointer of `mem` for other libraries (`None`:
    /// this API's memory has no such address).
    fn address(&self, _mem: &Self::Mem) -> Option<(usize, u64)> {
        None
    }
    /// Memory at device pointer `ptr` that another library allocated,
    /// usable once that library's queued work is done; `keep` (its owner)
    /// lives as long as the returned memory, which is never freed here.
    fn import(
        &self,
        _ptr: u64,
        _keep: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Result<Self::Mem, ApiError> {
        Err(ApiError::new(
            "import",
            format!(
                "CUDA memory of another library needs crossover's CUDA backend; this GPU is used through {}",
                self.info().api
            ),
        ))
    }
}
