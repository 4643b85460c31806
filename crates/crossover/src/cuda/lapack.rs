//! cuSOLVER's dense routines (and cuBLAS's sum of magnitudes) of one
//! precision as one table of function pointers, so `solver.rs` writes each
//! call sequence once for float32 and float64. The signatures are
//! cuSOLVER's own (cudarc's declarations), leading dimensions included.

use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as sol;
use std::ffi::{c_int, c_schar};

pub(super) type H = sol::cusolverDnHandle_t;
pub(super) type St = sol::cusolverStatus_t;
pub(super) type Fill = sol::cublasFillMode_t;
type Eig = sol::cusolverEigMode_t;
type Op = sol::cublasOperation_t;
type Int = c_int;

/// cuSOLVER's `S` or `D` routines (and cuBLAS's `asum`) for element type
/// `T`; each field is the function of the same name without its prefix.
/// Calling one is calling cuSOLVER: the caller meets its contract (live
/// handles, device pointers holding what the sizes address).
#[allow(clippy::type_complexity)]
pub(super) struct Routines<T> {
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
        *mut T,
        *mut T,
        Int,
        *mut T,
        Int,
        *mut T,
        Int,
        *mut T,
        *mut Int,
    ) -> St,
    pub syevd_size: unsafe fn(H, Eig, Fill, Int, *const T, Int, *const T, *mut Int) -> St,
    pub syevd: unsafe fn(H, Eig, Fill, Int, *mut T, Int, *mut T, *mut T, Int, *mut Int) -> St,
    pub asum: unsafe fn(blas::cublasHandle_t, Int, *const T, Int, *mut T) -> blas::cublasStatus_t,
}

/// An element type cuSOLVER factors: its routines.
pub(super) trait Lapack: Copy + 'static {
    const ROUTINES: Routines<Self>;
    fn zero() -> Self;
    fn finite(self) -> bool;
}

impl Lapack for f32 {
    const ROUTINES: Routines<f32> = Routines {
        getrf_size: sol::cusolverDnSgetrf_bufferSize,
        getrf: sol::cusolverDnSgetrf,
        getrs: sol::cusolverDnSgetrs,
        potrf_size: sol::cusolverDnSpotrf_bufferSize,
        potrf: sol::cusolverDnSpotrf,
        potrs: sol::cusolverDnSpotrs,
        geqrf_size: sol::cusolverDnSgeqrf_bufferSize,
        geqrf: sol::cusolverDnSgeqrf,
        orgqr_size: sol::cusolverDnSorgqr_bufferSize,
        orgqr: sol::cusolverDnSorgqr,
        gesvd_size: sol::cusolverDnSgesvd_bufferSize,
        gesvd: sol::cusolverDnSgesvd,
        syevd_size: sol::cusolverDnSsyevd_bufferSize,
        syevd: sol::cusolverDnSsyevd,
        asum: blas::cublasSasum_v2,
    };
    fn zero() -> Self {
        0.0
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl Lapack for f64 {
    const ROUTINES: Routines<f64> = Routines {
        getrf_size: sol::cusolverDnDgetrf_bufferSize,
        getrf: sol::cusolverDnDgetrf,
        getrs: sol::cusolverDnDgetrs,
        potrf_size: sol::cusolverDnDpotrf_bufferSize,
        potrf: sol::cusolverDnDpotrf,
        potrs: sol::cusolverDnDpotrs,
        geqrf_size: sol::cusolverDnDgeqrf_bufferSize,
        geqrf: sol::cusolverDnDgeqrf,
        orgqr_size: sol::cusolverDnDorgqr_bufferSize,
        orgqr: sol::cusolverDnDorgqr,
        gesvd_size: sol::cusolverDnDgesvd_bufferSize,
        gesvd: sol::cusolverDnDgesvd,
        syevd_size: sol::cusolverDnDsyevd_bufferSize,
        syevd: sol::cusolverDnDsyevd,
        asum: blas::cublasDasum_v2,
    };
    fn zero() -> Self {
        0.0
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
}
