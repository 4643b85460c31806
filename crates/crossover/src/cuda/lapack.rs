//! cuSOLVER's dense routines (and cuBLAS's sum of magnitudes) of one
//! element type as one table of function pointers, so `solver.rs` writes
//! each call sequence once for float32, float64, complex64 and complex128
//! (`S`, `D`, `C`, `Z`). The signatures are cuSOLVER's own (cudarc's
//! declarations), leading dimensions included. The complex table holds
//! the Hermitian and unitary twins of the real routines (`ungqr` for
//! `orgqr`, `heevd` for `syevd`); singular values, eigenvalues and sums of
//! magnitudes are real (`R`), and cuBLAS declares its own complex types
//! (`B`), which have the same layout as cuSOLVER's.

use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as sol;
use std::ffi::{c_int, c_schar};

pub(super) type H = sol::cusolverDnHandle_t;
pub(super) type St = sol::cusolverStatus_t;
pub(super) type Fill = sol::cublasFillMode_t;
type Eig = sol::cusolverEigMode_t;
type Op = sol::cublasOperation_t;
type Int = c_int;

/// cuSOLVER's `S`, `D`, `C` or `Z` routines (and cuBLAS's `asum`) for
/// element type `T` (cuBLAS's name for it: `B`) whose real part is `R`;
/// each field is the function of the same name without its prefix (the
/// complex `orgqr` and `syevd` are `ungqr` and `heevd`). Calling one is
/// calling cuSOLVER: the caller meets its contract (live handles, device
/// pointers holding what the sizes address).
#[allow(clippy::type_complexity)]
pub(super) struct Routines<T, R, B> {
    pub getrf_size: unsafe fn(H, Int, Int, *mut T, Int, *mut Int) -> St,
    pub getrf: unsafe fn(H, Int, Int, *mut T, Int, *mut T, *mut Int, *mut Int) -> St,
    pub getrs: unsafe fn(H, Op, Int, Int, *const T, Int, *const Int, *mut T, Int, *mut Int) -> St,
    pub potrf_size: unsafe fn(H, Fill, Int, *mut T, Int, *mut Int) -> St,
    pub potrf: unsafe fn(H, Fill, Int, *mut T, Int, *mut T, Int, *mut Int) -> St,
    pub potrs: unsafe fn(H, Fill, Int, Int, *const T, Int, *mut T, Int, *mut Int) -> St,
    pub geqrf_size: unsafe fn(H, Int, Int, *mut T, Int, *mut Int) -> St,
    pub geqrf: unsafe fn(H, Int, Int, *mut T, Int, *mut T, *mut T, Int, *mut Int) -> St,
    pub orgqr_size: unsafe fn(H, Int, Int, Int, *const T, Int, *const T, *mut Int) -> St,
    pub orgqr: unsafe fn(H, Int, Int, Int, *mut T, Int, *const T, *mut T, Int, *mut Int) -> St,
    pub gesvd_size: unsafe fn(H, Int, Int, *mut Int) -> St,
    pub gesvd: unsafe fn(
        H,
        c_schar,
        c_schar,
        Int,
        Int,
        *mut T,
        Int,
        *mut R,
        *mut T,
        Int,
        *mut T,
        Int,
        *mut T,
        Int,
        *mut R,
        *mut Int,
    ) -> St,
    pub syevd_size: unsafe fn(H, Eig, Fill, Int, *const T, Int, *const R, *mut Int) -> St,
    pub syevd: unsafe fn(H, Eig, Fill, Int, *mut T, Int, *mut R, *mut T, Int, *mut Int) -> St,
    pub asum: unsafe fn(blas::cublasHandle_t, Int, *const B, Int, *mut R) -> blas::cublasStatus_t,
}

/// An element type cuSOLVER factors: its routines.
pub(super) trait Lapack: Copy + 'static {
    /// The type of its magnitudes, singular values and eigenvalues.
    type Real: RealPart;
    /// The same element as cuBLAS declares it.
    type Blas;
    const ROUTINES: Routines<Self, Self::Real, Self::Blas>;
}

/// float32 or float64: a sum of magnitudes read back on the host.
pub(super) trait RealPart: Copy + 'static {
    fn zero() -> Self;
    fn finite(self) -> bool;
}

impl RealPart for f32 {
    fn zero() -> Self {
        0.0
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl RealPart for f64 {
    fn zero() -> Self {
        0.0
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
}

/// One precision's table: `$p` is cuSOLVER's letter (`S` in
/// `cusolverDnSgetrf`), `$q` the unitary QR routine (`orgqr` or `ungqr`),
/// `$e` the symmetric or Hermitian eigensolver (`syevd` or `heevd`),
/// `$asum` cuBLAS's sum of magnitudes.
macro_rules! lapack {
    ($t:ty, $r:ty, $b:ty, $asum:ident, $($field:ident: $f:ident),* $(,)?) => {
        impl Lapack for $t {
            type Real = $r;
            type Blas = $b;
            const ROUTINES: Routines<$t, $r, $b> = Routines {
                $($field: sol::$f,)*
                asum: blas::$asum,
            };
        }
    };
}

lapack!(f32, f32, f32, cublasSasum_v2,
    getrf_size: cusolverDnSgetrf_bufferSize,
    getrf: cusolverDnSgetrf,
    getrs: cusolverDnSgetrs,
    potrf_size: cusolverDnSpotrf_bufferSize,
    potrf: cusolverDnSpotrf,
    potrs: cusolverDnSpotrs,
    geqrf_size: cusolverDnSgeqrf_bufferSize,
    geqrf: cusolverDnSgeqrf,
    orgqr_size: cusolverDnSorgqr_bufferSize,
    orgqr: cusolverDnSorgqr,
    gesvd_size: cusolverDnSgesvd_bufferSize,
    gesvd: cusolverDnSgesvd,
    syevd_size: cusolverDnSsyevd_bufferSize,
    syevd: cusolverDnSsyevd,
);

lapack!(f64, f64, f64, cublasDasum_v2,
    getrf_size: cusolverDnDgetrf_bufferSize,
    getrf: cusolverDnDgetrf,
    getrs: cusolverDnDgetrs,
    potrf_size: cusolverDnDpotrf_bufferSize,
    potrf: cusolverDnDpotrf,
    potrs: cusolverDnDpotrs,
    geqrf_size: cusolverDnDgeqrf_bufferSize,
    geqrf: cusolverDnDgeqrf,
    orgqr_size: cusolverDnDorgqr_bufferSize,
    orgqr: cusolverDnDorgqr,
    gesvd_size: cusolverDnDgesvd_bufferSize,
    gesvd: cusolverDnDgesvd,
    syevd_size: cusolverDnDsyevd_bufferSize,
    syevd: cusolverDnDsyevd,
);

lapack!(sol::cuComplex, f32, blas::cuComplex, cublasScasum_v2,
    getrf_size: cusolverDnCgetrf_bufferSize,
    getrf: cusolverDnCgetrf,
    getrs: cusolverDnCgetrs,
    potrf_size: cusolverDnCpotrf_bufferSize,
    potrf: cusolverDnCpotrf,
    potrs: cusolverDnCpotrs,
    geqrf_size: cusolverDnCgeqrf_bufferSize,
    geqrf: cusolverDnCgeqrf,
    orgqr_size: cusolverDnCungqr_bufferSize,
    orgqr: cusolverDnCungqr,
    gesvd_size: cusolverDnCgesvd_bufferSize,
    gesvd: cusolverDnCgesvd,
    syevd_size: cusolverDnCheevd_bufferSize,
    syevd: cusolverDnCheevd,
);

lapack!(sol::cuDoubleComplex, f64, blas::cuDoubleComplex, cublasDzasum_v2,
    getrf_size: cusolverDnZgetrf_bufferSize,
    getrf: cusolverDnZgetrf,
    getrs: cusolverDnZgetrs,
    potrf_size: cusolverDnZpotrf_bufferSize,
    potrf: cusolverDnZpotrf,
    potrs: cusolverDnZpotrs,
    geqrf_size: cusolverDnZgeqrf_bufferSize,
    geqrf: cusolverDnZgeqrf,
    orgqr_size: cusolverDnZungqr_bufferSize,
    orgqr: cusolverDnZungqr,
    gesvd_size: cusolverDnZgesvd_bufferSize,
    gesvd: cusolverDnZgesvd,
    syevd_size: cusolverDnZheevd_bufferSize,
    syevd: cusolverDnZheevd,
);
