//! Dense linear algebra on arrays: matrix products, factorisations and
//! solvers, backed by [faer](https://docs.rs/faer).
//!
//! Every function records a library call and returns lazy arrays at once;
//! nothing runs until a result is read. Shapes and dtypes are checked when
//! the call is recorded; numerical problems (a singular matrix, a matrix
//! that is not positive definite, NaN or infinity in the input) are
//! reported as [`Error::Numerical`](crate::Error::Numerical) when it runs.
//!
//! All functions accept stacks of matrices: the last two axes are the
//! matrix, leading axes are a batch (broadcast where two operands meet, like
//! NumPy). Inputs may be any view (transposed, sliced): faer reads strides,
//! so a transposed operand is not copied first.
//!
//! Supported dtypes: float32, float64, complex64, complex128. Integer and
//! bool inputs are converted to float64, as NumPy does for everything but
//! `matmul`, which keeps integers (wrapping) and bools, like NumPy.
//!
//! ```
//! use crossover::{Array, linalg};
//! let a = Array::from_vec(vec![4.0f64, 1.0, 1.0, 3.0], &[2, 2])?;
//! let b = Array::from_vec(vec![1.0f64, 2.0], &[2])?;
//! let x = linalg::solve(&a, &b)?;
//! let ax = a.matmul(&x)?.to_vec::<f64>()?;
//! assert!((ax[0] - 1.0).abs() < 1e-12 && (ax[1] - 2.0).abs() < 1e-12);
//! # Ok::<(), crossover::Error>(())
//! ```

mod blas;
mod dense;
mod int_matmul;
mod lapack_svd;
mod matmul;
#[cfg(test)]
mod test_support;

pub use dense::Dense;
pub use dense::Kind as DenseKind;
pub use dense::{cholesky, det, eigh, inv, qr, solve, solve_spd, svd, svdvals};
pub(crate) use dense::{eigh_not_converged, not_positive_definite, singular, svd_not_converged};
pub(crate) use matmul::matmul;

/// The BLAS that large real matrix products run through, if this process
/// has one (`CROSSOVER_BLAS`; under Python, NumPy's OpenBLAS): its path and
/// its `openblas_get_config()` line. None: faer runs every product.
///
/// ```
/// use crossover::linalg::{blas_library, blas_min_mnk};
/// use crossover::DType;
///
/// if let Some((path, config)) = blas_library() {
///     let from = blas_min_mnk(DType::F32).cbrt();
///     println!("float32 matmul from {from:.0}^3 multiply-adds: {config} ({path})");
/// }
/// ```
pub fn blas_library() -> Option<(&'static str, &'static str)> {
    blas::blas().map(|b| (b.path.as_str(), b.config.as_str()))
}
/// Whether the process's BLAS would run products on an engine of
/// `threads` threads (there is one, and its own thread count is that).
pub fn blas_runs_on(threads: usize) -> bool {
    blas::blas().is_some_and(|b| b.matches_threads(threads))
}
/// Whether the process's BLAS exports the LAPACK routines that large real
/// SVDs reduce with (`?gebrd`, `?bdsdc`), from a matrix side of
/// [`svd_lapack_min_dim`].
///
/// ```
/// use crossover::linalg::{svd_lapack_available, svd_lapack_min_dim};
/// use crossover::DType;
///
/// if svd_lapack_available() {
///     println!("float32 SVDs reduce in LAPACK from {}", svd_lapack_min_dim(DType::F32));
/// }
/// ```
pub fn svd_lapack_available() -> bool {
    blas::blas().is_some_and(|b| b.lapack.is_some())
}
pub use blas::set_min_mnk as set_blas_min_mnk;
pub use blas::use_library as use_blas_library;
pub use blas::{default_min_mnk as blas_default_min_mnk, min_mnk as blas_min_mnk};
pub use lapack_svd::{
    default_min_dim as svd_lapack_default_min_dim, min_dim as svd_lapack_min_dim,
    set_min_dim as set_svd_lapack_min_dim,
};
pub use matmul::MatMul;
#[doc(hidden)]
pub use matmul::{bench_product_rows_f32, bench_product_rows_f64};

use crate::array::{Array, Value};
use crate::buffer::{Buffer, Storage};
use crate::dtype::DType;
use crate::error::{catch_panic, Error, Result};
use crate::shape::{numel, Layout};
use faer::traits::ComplexField;
use faer::{MatMut, MatRef, Par};
use num_complex::{Complex32, Complex64};
use std::sync::{Arc, Once};

/// Element types the dense routines work on (faer's fields that are also
/// buffer storage types).
pub(crate) trait Field: ComplexField + Storage + Copy {
    /// The dtype of `Self::Real` (singular values, eigenvalues).
    const REAL_DTYPE: DType;
    /// Whether the value is finite (both parts for complex).
    fn finite(self) -> bool;
    /// Zero.
    fn zero_() -> Self;
    /// As a complex128 (a determinant's product is accumulated there, as
    /// NumPy computes float32 and complex64 determinants in double).
    fn widen(self) -> Complex64;
    /// Back from a complex128 (the real part for real types).
    fn narrow(c: Complex64) -> Self;
    /// `out (row-major) = a @ b` through the process's BLAS where it runs
    /// this product (real dtypes; `blas.rs`), false where faer should.
    fn blas_product(_out: &mut [Self], _a: MatRef<'_, Self>, _b: MatRef<'_, Self>) -> bool {
        false
    }
    /// `a`'s thin SVD with its bidiagonalisation in the process's LAPACK
    /// where that path takes it (large real matrices; `lapack_svd.rs`),
    /// None where faer should run it.
    fn lapack_svd(
        _op: &'static str,
        _a: MatRef<'_, Self>,
        _vectors: bool,
        _par: Par,
    ) -> Option<Result<dense::Thin<Self>>> {
        None
    }
}

macro_rules! real_field {
    ($t:ty, $d:expr) => {
        impl Field for $t {
            const REAL_DTYPE: DType = $d;
            #[inline(always)]
            fn finite(self) -> bool {
                self.is_finite()
            }
            #[inline(always)]
            fn zero_() -> Self {
                0.0
            }
            #[inline(always)]
            fn widen(self) -> Complex64 {
                Complex64::new(self as f64, 0.0)
            }
            #[inline(always)]
            fn narrow(c: Complex64) -> Self {
                c.re as $t
            }
            fn blas_product(out: &mut [Self], a: MatRef<'_, Self>, b: MatRef<'_, Self>) -> bool {
                blas::product(out, a, b)
            }
            fn lapack_svd(
                op: &'static str,
                a: MatRef<'_, Self>,
                vectors: bool,
                par: Par,
            ) -> Option<Result<dense::Thin<Self>>> {
                lapack_svd::svd(op, a, vectors, par)
            }
        }
    };
}
real_field!(f32, DType::F32);
real_field!(f64, DType::F64);

macro_rules! complex_field {
    ($t:ty, $d:expr) => {
        impl Field for $t {
            const REAL_DTYPE: DType = $d;
            #[inline(always)]
            fn finite(self) -> bool {
                self.re.is_finite() && self.im.is_finite()
            }
            #[inline(always)]
            fn zero_() -> Self {
                <$t>::new(0.0, 0.0)
            }
            #[inline(always)]
            fn widen(self) -> Complex64 {
                Complex64::new(self.re as f64, self.im as f64)
            }
            #[inline(always)]
            fn narrow(c: Complex64) -> Self {
                <$t>::new(c.re as _, c.im as _)
            }
        }
    };
}
complex_field!(Complex32, DType::F32);
complex_field!(Complex64, DType::F64);

/// Runs `$body` with `$T` bound to the element type of a float or complex
/// dtype (the caller has checked the dtype when recording).
macro_rules! with_field {
    ($op:expr, $d:expr, $T:ident => $body:expr) => {
        match $d {
            $crate::dtype::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::dtype::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::dtype::DType::C64 => {
                type $T = num_complex::Complex32;
                $body
            }
            $crate::dtype::DType::C128 => {
                type $T = num_complex::Complex64;
                $body
            }
            d => Err($crate::error::Error::internal(
                $op,
                format!("dtype {d} reached a dense kernel"),
            )),
        }
    };
}
pub(crate) use with_field;

/// faer's parallelism for the engine's thread setting.
pub(crate) fn par() -> Par {
    let t = crate::cpu::threads();
    if t > 1 {
        Par::rayon(t)
    } else {
        Par::Seq
    }
}

/// Dense routines (solve, svd, ...) of fewer flops than this run on the
/// calling thread ([`run_library`]); `CROSSOVER_LIB_SEQ_FLOPS`, read once.
pub(crate) fn parallel_min_flops() -> f64 {
    static MIN: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| {
        std::env::var("CROSSOVER_LIB_SEQ_FLOPS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2e5)
    })
}

/// Runs a faer (or other library) call, turning a panic into
/// [`Error::Internal`]: on the engine's pool with the engine's parallelism
/// when `parallel` and the engine has more than one thread, else on the
/// calling thread with [`Par::Seq`] (handing a
/// call to the pool and waiting for it costs about 15 us here, more than a
/// 32x32 solve or a 256-point FFT takes). `f` must not use rayon when
/// given [`Par::Seq`]: outside the pool that would wake rayon's global one.
pub(crate) fn run_library<R: Send>(
    op: &'static str,
    parallel: bool,
    f: impl FnOnce(Par) -> Result<R> + Send,
) -> Result<R> {
    if !parallel || crate::cpu::threads() == 1 {
        return catch_panic(op, || f(Par::Seq));
    }
    static GLOBAL: Once = Once::new();
    GLOBAL.call_once(|| faer::set_global_parallelism(par()));
    catch_panic(op, || crate::cpu::pool().install(|| f(par())))
}

/// The dtype dense routines compute in for an input dtype.
pub(crate) fn compute_dtype(op: &'static str, d: DType) -> Result<DType> {
    match d {
        DType::F32 | DType::F64 | DType::C64 | DType::C128 => Ok(d),
        DType::Bool => Err(Error::dtype(op, d, "needs a numeric matrix")),
        // Every integer dtype, as NumPy.
        _ => Ok(DType::F64),
    }
}

/// Offsets (in elements) of each matrix of `layout` (whose last `core`
/// axes are the matrix) for every index of the output batch `out_batch`,
/// with NumPy broadcasting of the layout's own batch axes.
pub(crate) fn batch_offsets(layout: &Layout, core: usize, out_batch: &[usize]) -> Vec<isize> {
    let nb = layout.ndim() - core;
    let mut strides = vec![0isize; out_batch.len()];
    for i in 0..nb {
        let o = out_batch.len() - nb + i;
        if layout.shape[i] != 1 {
            strides[o] = layout.strides[i];
        }
    }
    let total = numel(out_batch);
    let mut offs = Vec::with_capacity(total);
    for b in 0..total {
        let mut rem = b;
        let mut off = layout.offset as isize;
        for d in (0..out_batch.len()).rev() {
            let i = rem % out_batch[d];
            rem /= out_batch[d];
            off += i as isize * strides[d];
        }
        offs.push(off);
    }
    offs
}

/// Row and column strides of the matrix in the last two axes of a layout.
pub(crate) fn mat_strides(layout: &Layout) -> (usize, usize, isize, isize) {
    let nd = layout.ndim();
    (
        layout.shape[nd - 2],
        layout.shape[nd - 1],
        layout.strides[nd - 2],
        layout.strides[nd - 1],
    )
}

/// The matrix of `data` at element offset `off` with the given strides.
///
/// # Safety
/// Every element `off + i*rs + j*cs` for `i < m`, `j < n` lies in `data`.
pub(crate) unsafe fn mat_at<T>(
    data: &[T],
    off: isize,
    m: usize,
    n: usize,
    rs: isize,
    cs: isize,
) -> MatRef<'_, T> {
    if m == 0 || n == 0 {
        return MatRef::from_raw_parts(data.as_ptr(), m, n, 1, m.max(1) as isize);
    }
    MatRef::from_raw_parts(data.as_ptr().offset(off), m, n, rs, cs)
}

/// A row-major `m x n` mutable matrix over `out` (exactly `m*n` long).
pub(crate) fn row_major_mut<T>(out: &mut [T], m: usize, n: usize) -> MatMut<'_, T> {
    assert_eq!(out.len(), m * n, "output slice has the wrong length");
    // SAFETY: `out` holds exactly m*n elements addressed row-major.
    unsafe { MatMut::from_raw_parts_mut(out.as_mut_ptr(), m, n, n.max(1) as isize, 1) }
}

/// Checks that every element of a matrix is finite.
pub(crate) fn check_finite<T: Field>(op: &'static str, a: MatRef<'_, T>) -> Result<()> {
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            if !a[(i, j)].finite() {
                return Err(Error::Numerical {
                    op,
                    msg: format!("input contains NaN or infinity (at row {i}, column {j})"),
                });
            }
        }
    }
    Ok(())
}

/// A fresh output value of `shape` filled by `fill` (row-major).
pub(crate) fn output<T: Storage>(
    dtype: DType,
    shape: &[usize],
    fill: impl FnOnce(&mut [T]) -> Result<()>,
) -> Result<Value> {
    let mut buf = Buffer::alloc(dtype, numel(shape))?;
    fill(buf.as_mut_slice::<T>())?;
    Ok(Value {
        buffer: Arc::new(buf),
        layout: Layout::contiguous(shape),
    })
}

/// Checks that `a` is a (stack of) matrices.
pub(crate) fn require_matrix(op: &'static str, a: &Array) -> Result<()> {
    if a.ndim() < 2 {
        return Err(Error::shape(
            op,
            a.shape(),
            format!(
                "needs a matrix (at least 2 dimensions), got {} dimension(s)",
                a.ndim()
            ),
        ));
    }
    Ok(())
}

/// Checks that `a` is a (stack of) square matrices.
pub(crate) fn require_square(op: &'static str, a: &Array) -> Result<()> {
    require_matrix(op, a)?;
    let nd = a.ndim();
    if a.shape()[nd - 1] != a.shape()[nd - 2] {
        return Err(Error::shape(
            op,
            a.shape(),
            "needs square matrices in the last two dimensions",
        ));
    }
    Ok(())
}

/// Bytes of `n` elements of `d`, as f64 (cost model).
pub(crate) fn nbytes(n: usize, d: DType) -> f64 {
    (n * d.size()) as f64
}

/// A real-valued flop multiplier for complex arithmetic.
pub(crate) fn flop_factor(d: DType) -> f64 {
    if d.is_complex() {
        4.0
    } else {
        1.0
    }
}

/// A value's data as a typed slice (the value's dtype must be `T`'s).
pub(crate) fn data<T: Storage>(v: &Value) -> &[T] {
    v.buffer.as_slice::<T>()
}
