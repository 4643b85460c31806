//! Large real SVDs whose bidiagonalisation runs in the loaded OpenBLAS's
//! LAPACK (`?gebrd`, blocked) and whose back-transformations run in faer.
//!
//! Why: faer 0.24 reduces a matrix to bidiagonal form one column at a
//! time. Each column updates the trailing matrix and multiplies by it, so
//! once the matrix outgrows the last-level cache every column streams it
//! from memory three times; at 4096^2 float32 that step was 11.3-12.4 s of
//! faer's 14.8-16.9 s on a 2-core Zen 4 VM, where LAPACK's blocked `sgebrd`
//! took 6.5-7.5 s. faer's back-transformations, on the other hand, beat
//! LAPACK's `?ormbr` (docs/benchmarks.md, "The SVD at 4096 taken apart").
//! So from [`min_dim`] this path runs `?gebrd`, then `?bdsdc` (LAPACK's
//! divide-and-conquer on the bidiagonal, the one `?gesdd` calls), then
//! applies the two reflector sequences with faer's blocked Householder
//! products.
//!
//! The library, its integer width and the thread-count rule are
//! `blas.rs`'s: the path runs only where the process's OpenBLAS runs
//! products and exports both routines.

use super::blas::{blas, symbol, variants};
use super::dense::Thin;
use crate::dtype::DType;
use crate::error::{Error, Result};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder as hh;
use faer::linalg::qr::no_pivoting::factor as qr;
use faer::{Conj, Mat, MatMut, MatRef, Par};
use std::ffi::c_char;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// `?gebrd(m, n, a, lda, d, e, tauq, taup, work, lwork, info)`.
type GebrdFn<T, I> = unsafe extern "C" fn(
    *const I,
    *const I,
    *mut T,
    *const I,
    *mut T,
    *mut T,
    *mut T,
    *mut T,
    *mut T,
    *const I,
    *mut I,
);

/// `?bdsdc(uplo, compq, n, d, e, u, ldu, vt, ldvt, q, iq, work, iwork,
/// info)` and the two character arguments' hidden lengths (gfortran's
/// `size_t`; a C-translated LAPACK ignores them).
type BdsdcFn<T, I> = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const I,
    *mut T,
    *mut T,
    *mut T,
    *const I,
    *mut T,
    *const I,
    *mut T,
    *mut I,
    *mut T,
    *mut I,
    *mut I,
    usize,
    usize,
);

/// LAPACK's integers (`i32` or `i64`).
pub(crate) trait LapackInt:
    TryFrom<usize> + From<i8> + Copy + Default + PartialEq + Into<i64>
{
}
impl<I: TryFrom<usize> + From<i8> + Copy + Default + PartialEq + Into<i64>> LapackInt for I {}

/// One dtype's two routines in one integer width.
#[derive(Clone, Copy)]
pub(crate) struct Routines<T, I> {
    gebrd: GebrdFn<T, I>,
    bdsdc: BdsdcFn<T, I>,
}

/// [`Routines`] in the library's integer width.
#[derive(Clone, Copy)]
pub(crate) enum Bidiag<T> {
    Lp64(Routines<T, i32>),
    Ilp64(Routines<T, i64>),
}

/// The LAPACK routines this path calls, float32 and float64.
pub(crate) struct Lapack {
    single: Bidiag<f32>,
    double: Bidiag<f64>,
}

/// Finds `?gebrd` and `?bdsdc` for both dtypes in `lib` (None if any is
/// missing or named in the other integer width).
///
/// # Safety
/// `lib` must be an OpenBLAS whose LAPACK takes `ilp64`-wide integers.
pub(crate) unsafe fn load(lib: &libloading::Library, ilp64: bool) -> Option<Lapack> {
    // SAFETY: as the caller guarantees; each name is the routine of the
    // signature it is read as.
    unsafe {
        Some(Lapack {
            single: routines(lib, "sgebrd_", "sbdsdc_", ilp64)?,
            double: routines(lib, "dgebrd_", "dbdsdc_", ilp64)?,
        })
    }
}

/// # Safety
/// As [`load`], with `gebrd`/`bdsdc` the routines over `T`.
unsafe fn routines<T>(
    lib: &libloading::Library,
    gebrd: &str,
    bdsdc: &str,
    ilp64: bool,
) -> Option<Bidiag<T>> {
    // SAFETY: as the caller guarantees.
    unsafe {
        let width_ok = |name: &String| name.ends_with("64_") == ilp64;
        if ilp64 {
            let (g, gn) = symbol::<GebrdFn<T, i64>>(lib, &variants(gebrd))?;
            let (b, bn) = symbol::<BdsdcFn<T, i64>>(lib, &variants(bdsdc))?;
            (width_ok(&gn) && width_ok(&bn))
                .then_some(Bidiag::Ilp64(Routines { gebrd: g, bdsdc: b }))
        } else {
            let (g, gn) = symbol::<GebrdFn<T, i32>>(lib, &variants(gebrd))?;
            let (b, bn) = symbol::<BdsdcFn<T, i32>>(lib, &variants(bdsdc))?;
            (width_ok(&gn) && width_ok(&bn))
                .then_some(Bidiag::Lp64(Routines { gebrd: g, bdsdc: b }))
        }
    }
}

/// Real dtypes with LAPACK routines.
pub(crate) trait LapackReal: faer::traits::RealField + Copy + Default {
    const DTYPE: DType;
    fn routines(lapack: &Lapack) -> Bidiag<Self>;
    fn to_f64(self) -> f64;
    fn from_f64(x: f64) -> Self;
}

impl LapackReal for f32 {
    const DTYPE: DType = DType::F32;
    fn routines(lapack: &Lapack) -> Bidiag<f32> {
        lapack.single
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}

impl LapackReal for f64 {
    const DTYPE: DType = DType::F64;
    fn routines(lapack: &Lapack) -> Bidiag<f64> {
        lapack.double
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
}

/// The smaller side from which a real SVD takes this path, float32 then
/// float64 (0: the default).
static MIN_DIM: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

fn min_dim_slot(dtype: DType) -> Option<&'static AtomicUsize> {
    match dtype {
        DType::F32 => Some(&MIN_DIM[0]),
        DType::F64 => Some(&MIN_DIM[1]),
        _ => None,
    }
}

/// The built-in smaller side from which `dtype`'s SVDs take this path,
/// about where the matrix outgrows a 32 MiB last-level cache. Measured on
/// a 2-core Zen 4 VM (docs/benchmarks.md, session 55): float32 0.9-1.1x
/// faer at 2048 and 2560, 1.15-1.2x at 3072, 1.15-1.25x at 4096; float64
/// 0.8x at 1024, 1.15-1.25x at 1536, 1.5x at 2048.
pub fn default_min_dim(dtype: DType) -> usize {
    match dtype {
        DType::F64 => 1536,
        _ => 2560,
    }
}

/// `CROSSOVER_SVD_LAPACK_MIN_DIM` (read once), over the defaults for both
/// dtypes (`0`: never); invalid values warn.
fn env_min_dim() -> Option<usize> {
    static ENV: OnceLock<Option<usize>> = OnceLock::new();
    *ENV.get_or_init(|| {
        const VAR: &str = "CROSSOVER_SVD_LAPACK_MIN_DIM";
        let v = std::env::var(VAR).ok()?;
        match v.trim().parse::<usize>() {
            Ok(0) => Some(usize::MAX),
            Ok(x) => Some(x),
            Err(_) => {
                crate::env::warn(VAR, &v, "not a matrix side (0: never); ignored");
                None
            }
        }
    })
}

/// The smaller side from which a real `dtype` SVD runs its
/// bidiagonalisation in the process's LAPACK (`usize::MAX`: never; always
/// for other dtypes).
pub fn min_dim(dtype: DType) -> usize {
    let Some(slot) = min_dim_slot(dtype) else {
        return usize::MAX;
    };
    if let Some(v) = env_min_dim() {
        return v;
    }
    match slot.load(Ordering::Relaxed) {
        0 => default_min_dim(dtype),
        v => v,
    }
}

/// Sets [`min_dim`] for `dtype` in this process (`None`: the default).
pub fn set_min_dim(dtype: DType, dim: Option<usize>) {
    if let Some(slot) = min_dim_slot(dtype) {
        slot.store(dim.unwrap_or(0), Ordering::Relaxed);
    }
}

/// SVDs this path has run in this process (tests check that the path they
/// mean to test is the one that ran).
static SVDS_RUN: AtomicUsize = AtomicUsize::new(0);

#[cfg(test)]
pub(crate) fn svds_run() -> usize {
    SVDS_RUN.load(Ordering::Relaxed)
}

/// The SVD of `a` through LAPACK's bidiagonalisation, or None where this
/// path does not take it: no BLAS with both routines, its thread count not
/// the engine's, a side below [`min_dim`], or a size past the library's
/// integers. A matrix more than 11/6 as long as wide is first factored
/// `A = Q R` by faer (its own SVD's `qr_ratio_threshold`), and R reduced.
///
/// # Errors
/// `?bdsdc` did not converge, or LAPACK refused an argument.
pub(crate) fn svd<T: LapackReal>(
    op: &'static str,
    a: MatRef<'_, T>,
    vectors: bool,
    par: Par,
) -> Option<Result<Thin<T>>> {
    let n = a.nrows().min(a.ncols());
    if n < min_dim(T::DTYPE) {
        return None;
    }
    let blas = blas()?;
    if !blas.matches_threads(crate::cpu::threads()) {
        return None;
    }
    let routines = T::routines(blas.lapack.as_ref()?);
    // Reduce the tall orientation: A^T = V S U^T when A is wide.
    let wide = a.nrows() < a.ncols();
    let tall = if wide { a.transpose() } else { a };
    let result = match routines {
        Bidiag::Lp64(r) => qr_first::<T, i32>(op, r, tall, vectors, par)?,
        Bidiag::Ilp64(r) => qr_first::<T, i64>(op, r, tall, vectors, par)?,
    };
    SVDS_RUN.fetch_add(1, Ordering::Relaxed);
    Some(result.map(|thin| Thin {
        s: thin.s,
        uv: thin.uv.map(|(u, v)| if wide { (v, u) } else { (u, v) }),
    }))
}

/// `a` (m x n, m >= n) through `r`, after a QR where m > 11/6 n (as faer
/// does: the reduction then works on the n x n R, and U = Q [U_R; 0]).
fn qr_first<T: LapackReal, I>(
    op: &'static str,
    r: Routines<T, I>,
    a: MatRef<'_, T>,
    vectors: bool,
    par: Par,
) -> Option<Result<Thin<T>>>
where
    I: LapackInt,
{
    let (m, n) = (a.nrows(), a.ncols());
    if 6 * m <= 11 * n {
        return tall_svd(op, r, a, vectors, par);
    }
    let block = qr::recommended_block_size::<T>(m, n);
    let mut factored = a.to_owned();
    let mut factor = Mat::<T>::zeros(block, n);
    let mut mem = MemBuffer::new(qr::qr_in_place_scratch::<T>(
        m,
        n,
        block,
        par,
        Default::default(),
    ));
    qr::qr_in_place(
        factored.as_mut(),
        factor.as_mut(),
        par,
        MemStack::new(&mut mem),
        Default::default(),
    );
    let upper = Mat::<T>::from_fn(n, n, |i, j| {
        if i <= j {
            factored[(i, j)]
        } else {
            T::default()
        }
    });
    let thin = match tall_svd(op, r, upper.as_ref(), vectors, par)? {
        Ok(thin) => thin,
        Err(e) => return Some(Err(e)),
    };
    let uv = thin.uv.map(|(u_r, v)| {
        let mut u = Mat::<T>::zeros(m, n);
        u.as_mut().subrows_mut(0, n).copy_from(&u_r);
        let mut mem = MemBuffer::new(
            hh::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, block, n),
        );
        hh::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            factored.as_ref(),
            factor.as_ref(),
            Conj::No,
            u.as_mut(),
            par,
            MemStack::new(&mut mem),
        );
        (u, v)
    });
    Some(Ok(Thin { s: thin.s, uv }))
}

/// `a` (m x n, m >= n) through `r`; None where a size does not fit `I`.
fn tall_svd<T: LapackReal, I>(
    op: &'static str,
    r: Routines<T, I>,
    a: MatRef<'_, T>,
    vectors: bool,
    par: Par,
) -> Option<Result<Thin<T>>>
where
    I: LapackInt,
{
    let (m, n) = (a.nrows(), a.ncols());
    let int = |x: usize| I::try_from(x).ok();
    let (mi, ni) = (int(m)?, int(n)?);
    // The column-major copy LAPACK reduces in place; its lower part then
    // holds Q's reflectors and its part right of the superdiagonal P's.
    let mut b = vec![T::default(); m * n];
    MatMut::from_column_major_slice_mut(&mut b, m, n).copy_from(a);
    let (mut d, mut e) = (vec![T::default(); n], vec![T::default(); n]);
    let (mut tauq, mut taup) = (vec![T::default(); n], vec![T::default(); n]);
    // `?gebrd` with `work` of `lwork` (-1: a query, the size it wants
    // written to `work[0]`); its `info`.
    let mut gebrd = |work: &mut [T], lwork: I| {
        let mut info = I::default();
        // SAFETY: `b` is m x n with leading dimension m; `d`, `e`, `tauq`
        // and `taup` hold n each (min(m, n) = n); `work` holds `lwork`
        // elements, or one for a query.
        unsafe {
            (r.gebrd)(
                &mi,
                &ni,
                b.as_mut_ptr(),
                &mi,
                d.as_mut_ptr(),
                e.as_mut_ptr(),
                tauq.as_mut_ptr(),
                taup.as_mut_ptr(),
                work.as_mut_ptr(),
                &lwork,
                &mut info,
            )
        };
        info
    };
    let mut query = [T::default()];
    let info = gebrd(&mut query, I::from(-1));
    if info != I::default() {
        return Some(Err(refused(op, "gebrd", info)));
    }
    let lwork = (query[0].to_f64() as usize).max(m + n);
    let mut info = gebrd(&mut vec![T::default(); lwork], int(lwork)?);
    if info != I::default() {
        return Some(Err(refused(op, "gebrd", info)));
    }
    // The bidiagonal's SVD: B = Ub S Vb^T (upper, since m >= n).
    let (compq, side) = if vectors { (b"I", n) } else { (b"N", 1) };
    let mut ub = vec![T::default(); side * side];
    let mut vbt = vec![T::default(); side * side];
    let work_len = if vectors { 3 * n * n + 4 * n } else { 4 * n };
    let mut work = vec![T::default(); work_len];
    let mut iwork = vec![I::default(); 8 * n];
    let ld = int(side)?;
    // SAFETY: `d` and `e` hold n (e's last unused), `ub` and `vbt` are
    // `side x side` with leading dimension `side` (n when vectors are
    // computed, unread otherwise), `work` and `iwork` have the sizes
    // ?bdsdc documents for `compq`; `q`/`iq` are unread for 'N' and 'I'.
    unsafe {
        (r.bdsdc)(
            b"U".as_ptr().cast(),
            compq.as_ptr().cast(),
            &ni,
            d.as_mut_ptr(),
            e.as_mut_ptr(),
            ub.as_mut_ptr(),
            &ld,
            vbt.as_mut_ptr(),
            &ld,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            work.as_mut_ptr(),
            iwork.as_mut_ptr(),
            &mut info,
            1,
            1,
        )
    };
    drop((work, iwork));
    let code: i64 = info.into();
    if code > 0 {
        return Some(Err(super::svd_not_converged(op)));
    }
    if code < 0 {
        return Some(Err(refused(op, "bdsdc", info)));
    }
    if !vectors {
        return Some(Ok(Thin { s: d, uv: None }));
    }
    // U = Q [Ub; 0] and V = P Vb, Vb = (Vb^T)^T.
    let reduced = MatRef::from_column_major_slice(&b, m, n);
    let mut u = Mat::<T>::zeros(m, n);
    u.as_mut()
        .subrows_mut(0, n)
        .copy_from(MatRef::from_column_major_slice(&ub, n, n));
    apply_reflectors(reduced, &tauq, u.as_mut(), par);
    let mut v = MatRef::from_column_major_slice(&vbt, n, n)
        .transpose()
        .to_owned();
    if n > 1 {
        // P's i-th reflector is row i of the reduced matrix right of the
        // superdiagonal (its unit at column i + 1): the transpose of
        // columns 1..n, acting on rows 1..n of V.
        let p_basis = reduced.submatrix(0, 1, n - 1, n - 1).transpose();
        apply_reflectors(
            p_basis,
            &taup[..n - 1],
            v.as_mut().subrows_mut(1, n - 1),
            par,
        );
    }
    Some(Ok(Thin {
        s: d,
        uv: Some((u, v)),
    }))
}

/// `target = H_0 H_1 ... H_{k-1} target`, where `H_j = I - tau_j v_j v_j^T`
/// with `v_j` column j of `basis` below its (unit) diagonal: LAPACK's
/// reflectors, applied in blocks by faer. faer's factor holds `1 / tau`
/// on its diagonal (LAPACK's `tau = 0`, an identity, becomes infinity,
/// which faer reads the same way).
fn apply_reflectors<T: LapackReal>(
    basis: MatRef<'_, T>,
    taus: &[T],
    target: MatMut<'_, T>,
    par: Par,
) {
    let k = basis.ncols();
    let block = qr::recommended_block_size::<T>(basis.nrows(), k);
    let mut factor = Mat::<T>::zeros(block, k);
    let mut j = 0;
    while j < k {
        let width = block.min(k - j);
        for t in 0..width {
            factor[(t, j + t)] = T::from_f64(taus[j + t].to_f64().recip());
        }
        hh::upgrade_householder_factor(
            factor.as_mut().submatrix_mut(0, j, width, width),
            basis.submatrix(j, j, basis.nrows() - j, width),
            width,
            1,
            par,
        );
        j += width;
    }
    let mut mem = MemBuffer::new(
        hh::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
            basis.nrows(),
            block,
            target.ncols(),
        ),
    );
    hh::apply_block_householder_sequence_on_the_left_in_place_with_conj(
        basis,
        factor.as_ref(),
        Conj::No,
        target,
        par,
        MemStack::new(&mut mem),
    );
}

/// LAPACK refused an argument (`info < 0`: a bug here, not bad input).
fn refused<I: Into<i64>>(op: &'static str, routine: &str, info: I) -> Error {
    Error::internal(
        op,
        format!("LAPACK ?{routine} refused argument {}", -info.into()),
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{blas_or_skip, rand, THRESHOLDS};
    use super::*;
    use crate::Array;

    /// Runs `f` with both dtypes' thresholds at `dim`, then back to the
    /// defaults (under `THRESHOLDS`, so no other test moves them meanwhile).
    fn with_min_dim<R>(dim: usize, f: impl FnOnce() -> R) -> R {
        /// Puts the defaults back, on a failed assertion too.
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                set_min_dim(DType::F32, None);
                set_min_dim(DType::F64, None);
            }
        }
        let _moving = THRESHOLDS.lock().unwrap_or_else(|e| e.into_inner());
        let _reset = Reset;
        set_min_dim(DType::F32, Some(dim));
        set_min_dim(DType::F64, Some(dim));
        f()
    }

    /// `xo.linalg.svd` and `svdvals` of `a` (`shape`, the last two axes a
    /// batch of m x n matrices) in `dtype`, checked against float64: the
    /// singular values decreasing, non-negative and within `8 max(m, n) u
    /// s_0` of faer's float64 ones; `U diag(s) Vt` within `8 max(m, n) u`
    /// of A (relative, Frobenius); `U^T U` and `Vt Vt^T` within as much of
    /// the identity. Returns how many matrices went through LAPACK.
    fn check(a: &[f64], shape: &[usize], dtype: DType, what: &str) -> usize {
        let (m, n) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let (r, batch) = (m.min(n), a.len() / (m * n));
        let u_round = if dtype == DType::F32 {
            f32::EPSILON as f64
        } else {
            f64::EPSILON
        } / 2.0;
        let tol = 8.0 * m.max(n) as f64 * u_round;
        let x = Array::from_vec(a.to_vec(), shape)
            .and_then(|x| x.cast(dtype))
            .unwrap();
        // The values the routine sees (rounded to `dtype`).
        let seen = x.cast(DType::F64).and_then(|x| x.to_vec::<f64>()).unwrap();
        let before = svds_run();
        let (u, s, vt) = crate::linalg::svd(&x).unwrap();
        let vals = crate::linalg::svdvals(&x).unwrap();
        // (Lazy arrays: the routines run here.)
        let f64s = |x: &Array| x.cast(DType::F64).and_then(|x| x.to_vec::<f64>()).unwrap();
        let (u, s, vt, vals) = (f64s(&u), f64s(&s), f64s(&vt), f64s(&vals));
        let ran = svds_run() - before;
        for bi in 0..batch {
            let at = |i: usize, j: usize| seen[bi * m * n + i * n + j];
            let uu = |i: usize, k: usize| u[bi * m * r + i * r + k];
            let vv = |k: usize, j: usize| vt[bi * r * n + k * n + j];
            let sv = &s[bi * r..(bi + 1) * r];
            let reference = faer::Mat::<f64>::from_fn(m, n, at)
                .singular_values()
                .unwrap();
            let scale = reference[0].max(f64::MIN_POSITIVE);
            for (k, &want) in reference.iter().enumerate() {
                for (got, which) in [(sv[k], "svd"), (vals[bi * r + k], "svdvals")] {
                    assert!(
                        (got - want).abs() <= tol * scale,
                        "{what} {dtype} #{bi}: {which} s[{k}] = {got}, want {want}"
                    );
                }
                assert!(
                    sv[k] >= 0.0 && (k == 0 || sv[k] <= sv[k - 1]),
                    "{what}: order {sv:?}"
                );
            }
            let (mut err, mut norm) = (0.0f64, 0.0f64);
            for i in 0..m {
                for j in 0..n {
                    let got: f64 = (0..r).map(|k| uu(i, k) * sv[k] * vv(k, j)).sum();
                    err += (got - at(i, j)).powi(2);
                    norm += at(i, j).powi(2);
                }
            }
            let rel = (err / norm.max(f64::MIN_POSITIVE)).sqrt();
            assert!(
                rel <= tol,
                "{what} {dtype} #{bi}: reconstruction {rel:e} > {tol:e}"
            );
            for p in 0..r {
                for q in 0..r {
                    let eye = if p == q { 1.0 } else { 0.0 };
                    let utu: f64 = (0..m).map(|i| uu(i, p) * uu(i, q)).sum();
                    let vvt: f64 = (0..n).map(|j| vv(p, j) * vv(q, j)).sum();
                    assert!(
                        (utu - eye).abs() <= tol && (vvt - eye).abs() <= tol,
                        "{what} {dtype} #{bi}: U^T U[{p},{q}] = {utu}, V^T V = {vvt}"
                    );
                }
            }
        }
        ran
    }

    #[test]
    fn svds_through_lapack_match_f64_in_every_shape() {
        let Some(blas) = blas_or_skip() else { return };
        if blas.lapack.is_none() {
            assert!(
                std::env::var_os("CROSSOVER_REQUIRE_BLAS").is_none(),
                "CROSSOVER_REQUIRE_BLAS is set but {} exports no ?gebrd/?bdsdc",
                blas.path
            );
            eprintln!("skipped: {} exports no ?gebrd/?bdsdc", blas.path);
            return;
        }
        if env_min_dim().is_some() {
            eprintln!(
                "skipped: CROSSOVER_SVD_LAPACK_MIN_DIM is set, over the thresholds moved here"
            );
            return;
        }
        let runs = blas.matches_threads(crate::cpu::threads());
        // Square, tall and wide, across ?gebrd's 32-column blocks and
        // faer's reflector blocks, down to 1 x 1; a batch; past 11/6 (a QR
        // first) both ways.
        let shapes: [&[usize]; 9] = [
            &[230, 90],
            &[40, 150],
            &[70, 70],
            &[129, 100],
            &[100, 150],
            &[3, 2],
            &[1, 1],
            &[2, 33, 40],
            &[97, 97],
        ];
        with_min_dim(1, || {
            for (seed, shape) in shapes.iter().enumerate() {
                let a = rand(seed as u64 + 7, shape.iter().product());
                for dtype in [DType::F32, DType::F64] {
                    let ran = check(&a, shape, dtype, &format!("{shape:?}"));
                    let batch = a.len() / (shape[shape.len() - 1] * shape[shape.len() - 2]);
                    // svd and svdvals of each matrix.
                    assert_eq!(ran, if runs { 2 * batch } else { 0 }, "{shape:?} {dtype}");
                }
            }
        });
    }

    #[test]
    fn structured_matrices_through_lapack() {
        let Some(blas) = blas_or_skip() else { return };
        if blas.lapack.is_none() || env_min_dim().is_some() {
            return; // reported by the test above
        }
        let n = 60;
        // Diagonal: every reflector is the identity (LAPACK's tau = 0).
        let diagonal: Vec<f64> = (0..n * n)
            .map(|t| {
                if t / n == t % n {
                    1.0 + (t % 7) as f64
                } else {
                    0.0
                }
            })
            .collect();
        // Rank-deficient: zero and repeated columns.
        let base = rand(99, n * n);
        let deficient: Vec<f64> = (0..n * n)
            .map(|t| match t % n {
                0 | 17 => 0.0,
                c if c % 3 == 0 => base[(t / n) * n + 1],
                _ => base[t],
            })
            .collect();
        with_min_dim(1, || {
            for (a, what) in [(&diagonal, "diagonal"), (&deficient, "rank-deficient")] {
                for dtype in [DType::F32, DType::F64] {
                    check(a, &[n, n], dtype, what);
                }
            }
        });
    }

    #[test]
    fn below_the_threshold_faer_runs() {
        if blas_or_skip().is_none() || env_min_dim().is_some() {
            return;
        }
        with_min_dim(50, || {
            // The smaller side below 50: square, wide and tall.
            for shape in [[49usize, 49], [40, 60], [300, 45]] {
                let a = rand(5, shape[0] * shape[1]);
                assert_eq!(check(&a, &shape, DType::F32, "faer"), 0, "{shape:?}");
            }
        });
    }

    #[test]
    fn thresholds_default_by_dtype_and_reset() {
        let _moving = THRESHOLDS.lock().unwrap_or_else(|e| e.into_inner());
        if env_min_dim().is_some() {
            return;
        }
        assert_eq!(min_dim(DType::F32), default_min_dim(DType::F32));
        assert_eq!(min_dim(DType::F64), default_min_dim(DType::F64));
        assert_eq!(min_dim(DType::C64), usize::MAX);
        set_min_dim(DType::F32, Some(300));
        assert_eq!(min_dim(DType::F32), 300);
        assert_eq!(min_dim(DType::F64), default_min_dim(DType::F64));
        set_min_dim(DType::F32, None);
        assert_eq!(min_dim(DType::F32), default_min_dim(DType::F32));
    }
}
