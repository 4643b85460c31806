//! cuSOLVER's dense routines (and cuBLAS's sum of magnitudes) of one
//! precision behind one trait, so `solver.rs` writes each call sequence
//! once for float32 and float64.

use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as sol;
use std::ffi::{c_int, c_schar};

pub(super) type H = sol::cusolverDnHandle_t;
pub(super) type St = sol::cusolverStatus_t;
pub(super) type Fill = sol::cublasFillMode_t;

/// cuSOLVER's (and cuBLAS's sum of magnitudes) routines of one precision.
///
/// # Safety
/// Every method is the cuSOLVER/cuBLAS function of the same name: the
/// caller meets its contract (live handles, device pointers holding what
/// the sizes address, host pointers valid for the call).
#[allow(clippy::too_many_arguments)]
pub(super) trait Lapack: Copy + 'static {
    fn zero() -> Self;
    fn finite(self) -> bool;
    unsafe fn getrf_size(h: H, n: c_int, a: *mut Self, lwork: *mut c_int) -> St;
    unsafe fn getrf(
        h: H,
        n: c_int,
        a: *mut Self,
        w: *mut Self,
        piv: *mut c_int,
        info: *mut c_int,
    ) -> St;
    unsafe fn getrs(
        h: H,
        op: sol::cublasOperation_t,
        n: c_int,
        k: c_int,
        a: *const Self,
        piv: *const c_int,
        b: *mut Self,
        info: *mut c_int,
    ) -> St;
    unsafe fn potrf_size(h: H, uplo: Fill, n: c_int, a: *mut Self, lwork: *mut c_int) -> St;
    unsafe fn potrf(
        h: H,
        uplo: Fill,
        n: c_int,
        a: *mut Self,
        w: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> St;
    unsafe fn potrs(
        h: H,
        uplo: Fill,
        n: c_int,
        k: c_int,
        a: *const Self,
        b: *mut Self,
        info: *mut c_int,
    ) -> St;
    unsafe fn geqrf_size(h: H, m: c_int, n: c_int, a: *mut Self, lwork: *mut c_int) -> St;
    unsafe fn geqrf(
        h: H,
        m: c_int,
        n: c_int,
        a: *mut Self,
        tau: *mut Self,
        w: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> St;
    unsafe fn orgqr_size(
        h: H,
        m: c_int,
        r: c_int,
        a: *const Self,
        tau: *const Self,
        lwork: *mut c_int,
    ) -> St;
    unsafe fn orgqr(
        h: H,
        m: c_int,
        r: c_int,
        a: *mut Self,
        tau: *const Self,
        w: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> St;
    unsafe fn gesvd_size(h: H, m: c_int, n: c_int, lwork: *mut c_int) -> St;
    unsafe fn gesvd(
        h: H,
        job: c_schar,
        m: c_int,
        n: c_int,
        a: *mut Self,
        s: *mut Self,
        u: *mut Self,
        vt: *mut Self,
        w: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> St;
    unsafe fn syevd_size(
        h: H,
        uplo: Fill,
        n: c_int,
        a: *const Self,
        vals: *const Self,
        lwork: *mut c_int,
    ) -> St;
    unsafe fn syevd(
        h: H,
        uplo: Fill,
        n: c_int,
        a: *mut Self,
        vals: *mut Self,
        w: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> St;
    unsafe fn asum(
        h: blas::cublasHandle_t,
        n: c_int,
        x: *const Self,
        out: *mut Self,
    ) -> blas::cublasStatus_t;
}

/// Implements [`Lapack`] for `$t` with cuSOLVER's `$p` (S or D) routines.
macro_rules! lapack {
    ($t:ty, $getrf_size:ident, $getrf:ident, $getrs:ident, $potrf_size:ident, $potrf:ident,
     $potrs:ident, $geqrf_size:ident, $geqrf:ident, $orgqr_size:ident, $orgqr:ident,
     $gesvd_size:ident, $gesvd:ident, $syevd_size:ident, $syevd:ident, $asum:ident) => {
        #[allow(clippy::too_many_arguments)]
        impl Lapack for $t {
            fn zero() -> Self {
                0.0
            }
            fn finite(self) -> bool {
                self.is_finite()
            }
            unsafe fn getrf_size(h: H, n: c_int, a: *mut Self, lwork: *mut c_int) -> St {
                sol::$getrf_size(h, n, n, a, n, lwork)
            }
            unsafe fn getrf(
                h: H,
                n: c_int,
                a: *mut Self,
                w: *mut Self,
                piv: *mut c_int,
                info: *mut c_int,
            ) -> St {
                sol::$getrf(h, n, n, a, n, w, piv, info)
            }
            unsafe fn getrs(
                h: H,
                op: sol::cublasOperation_t,
                n: c_int,
                k: c_int,
                a: *const Self,
                piv: *const c_int,
                b: *mut Self,
                info: *mut c_int,
            ) -> St {
                sol::$getrs(h, op, n, k, a, n, piv, b, n, info)
            }
            unsafe fn potrf_size(
                h: H,
                uplo: Fill,
                n: c_int,
                a: *mut Self,
                lwork: *mut c_int,
            ) -> St {
                sol::$potrf_size(h, uplo, n, a, n, lwork)
            }
            unsafe fn potrf(
                h: H,
                uplo: Fill,
                n: c_int,
                a: *mut Self,
                w: *mut Self,
                lwork: c_int,
                info: *mut c_int,
            ) -> St {
                sol::$potrf(h, uplo, n, a, n, w, lwork, info)
            }
            unsafe fn potrs(
                h: H,
                uplo: Fill,
                n: c_int,
                k: c_int,
                a: *const Self,
                b: *mut Self,
                info: *mut c_int,
            ) -> St {
                sol::$potrs(h, uplo, n, k, a, n, b, n, info)
            }
            unsafe fn geqrf_size(h: H, m: c_int, n: c_int, a: *mut Self, lwork: *mut c_int) -> St {
                sol::$geqrf_size(h, m, n, a, m, lwork)
            }
            unsafe fn geqrf(
                h: H,
                m: c_int,
                n: c_int,
                a: *mut Self,
                tau: *mut Self,
                w: *mut Self,
                lwork: c_int,
                info: *mut c_int,
            ) -> St {
                sol::$geqrf(h, m, n, a, m, tau, w, lwork, info)
            }
            unsafe fn orgqr_size(
                h: H,
                m: c_int,
                r: c_int,
                a: *const Self,
                tau: *const Self,
                lwork: *mut c_int,
            ) -> St {
                sol::$orgqr_size(h, m, r, r, a, m, tau, lwork)
            }
            unsafe fn orgqr(
                h: H,
                m: c_int,
                r: c_int,
                a: *mut Self,
                tau: *const Self,
                w: *mut Self,
                lwork: c_int,
                info: *mut c_int,
            ) -> St {
                sol::$orgqr(h, m, r, r, a, m, tau, w, lwork, info)
            }
            unsafe fn gesvd_size(h: H, m: c_int, n: c_int, lwork: *mut c_int) -> St {
                sol::$gesvd_size(h, m, n, lwork)
            }
            unsafe fn gesvd(
                h: H,
                job: c_schar,
                m: c_int,
                n: c_int,
                a: *mut Self,
                s: *mut Self,
                u: *mut Self,
                vt: *mut Self,
                w: *mut Self,
                lwork: c_int,
                info: *mut c_int,
            ) -> St {
                // rwork (unconverged superdiagonals) is optional: null.
                sol::$gesvd(
                    h,
                    job,
                    job,
                    m,
                    n,
                    a,
                    m,
                    s,
                    u,
                    m,
                    vt,
                    n,
                    w,
                    lwork,
                    std::ptr::null_mut(),
                    info,
                )
            }
            unsafe fn syevd_size(
                h: H,
                uplo: Fill,
                n: c_int,
                a: *const Self,
                vals: *const Self,
                lwork: *mut c_int,
            ) -> St {
                sol::$syevd_size(
                    h,
                    sol::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR,
                    uplo,
                    n,
                    a,
                    n,
                    vals,
                    lwork,
                )
            }
            unsafe fn syevd(
                h: H,
                uplo: Fill,
                n: c_int,
                a: *mut Self,
                vals: *mut Self,
                w: *mut Self,
                lwork: c_int,
                info: *mut c_int,
            ) -> St {
                sol::$syevd(
                    h,
                    sol::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR,
                    uplo,
                    n,
                    a,
                    n,
                    vals,
                    w,
                    lwork,
                    info,
                )
            }
            unsafe fn asum(
                h: blas::cublasHandle_t,
                n: c_int,
                x: *const Self,
                out: *mut Self,
            ) -> blas::cublasStatus_t {
                blas::$asum(h, n, x, 1, out)
            }
        }
    };
}

lapack!(
    f32,
    cusolverDnSgetrf_bufferSize,
    cusolverDnSgetrf,
    cusolverDnSgetrs,
    cusolverDnSpotrf_bufferSize,
    cusolverDnSpotrf,
    cusolverDnSpotrs,
    cusolverDnSgeqrf_bufferSize,
    cusolverDnSgeqrf,
    cusolverDnSorgqr_bufferSize,
    cusolverDnSorgqr,
    cusolverDnSgesvd_bufferSize,
    cusolverDnSgesvd,
    cusolverDnSsyevd_bufferSize,
    cusolverDnSsyevd,
    cublasSasum_v2
);
lapack!(
    f64,
    cusolverDnDgetrf_bufferSize,
    cusolverDnDgetrf,
    cusolverDnDgetrs,
    cusolverDnDpotrf_bufferSize,
    cusolverDnDpotrf,
    cusolverDnDpotrs,
    cusolverDnDgeqrf_bufferSize,
    cusolverDnDgeqrf,
    cusolverDnDorgqr_bufferSize,
    cusolverDnDorgqr,
    cusolverDnDgesvd_bufferSize,
    cusolverDnDgesvd,
    cusolverDnDsyevd_bufferSize,
    cusolverDnDsyevd,
    cublasDasum_v2
);
