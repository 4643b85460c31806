//! Large real matrix products through the OpenBLAS this process already
//! has loaded (under Python, the one inside NumPy's wheel), where its
//! hand-tuned kernels beat faer's.
//!
//! Why: on a 2-core AMD EPYC Zen 3 (AVX2) VM, OpenBLAS's sgemm did 90-92
//! GFLOP/s per thread and faer's 77-78, so `a @ b` at 4096 was 0.65x
//! NumPy (docs/benchmarks.md, "Rerun on 2026-12-02"). Nothing is linked
//! at build time and nothing is loaded that the process did not already
//! load, unless `CROSSOVER_BLAS` names a library:
//!
//! - `CROSSOVER_BLAS=none`: never use a BLAS (faer everywhere);
//! - `CROSSOVER_BLAS=/path/libopenblas.so`: load that OpenBLAS;
//! - unset: the first OpenBLAS already mapped into the process, if any.
//!
//! The BLAS runs a product only when its own thread count equals the CPU
//! backend's (`CROSSOVER_NUM_THREADS`): its count is a process-wide
//! setting NumPy shares, so crossover reads it and never changes it.
//!
//! Which is faster depends on the CPU: on a Zen 4 with AVX-512 faer's
//! kernels matched or beat OpenBLAS at every size (float32 1.2-1.7x NumPy
//! at 256-512 where OpenBLAS is 1.0x), on a Zen 3 with AVX2 OpenBLAS was
//! 15% faster from 1024. So a product runs through the BLAS from
//! [`min_mnk`] multiply-adds: `CROSSOVER_BLAS_MIN_MNK` if set, else what
//! `crossover calibrate` measured on this machine (per dtype, stored in
//! the profile's CPU entry), else a default by SIMD level
//! ([`default_min_mnk`]). Mixing the two has a cost: OpenBLAS leaves a
//! thread spinning about 0.1 s after each call, and a faer product in that
//! window ran at half speed on two cores (1024^2 float32 right after a
//! 2048^2 BLAS product: 23-28 ms against 11-14), which is why the default
//! with AVX-512, where faer keeps up, is never.
//!
//! Integer widths (LP64 or ILP64) come from the symbol names and
//! `openblas_get_config`; a library whose width cannot be told is not used.

use crate::dtype::DType;
use faer::MatRef;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Products the BLAS has run in this process (tests check that the path
/// they mean to test is the one that ran).
static PRODUCTS_RUN: AtomicUsize = AtomicUsize::new(0);

#[cfg(test)]
pub(crate) fn products_run() -> usize {
    PRODUCTS_RUN.load(Ordering::Relaxed)
}

/// The calibrated thresholds in force, float32 then float64 (f64 bits;
/// 0: the default).
static MIN_MNK: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

fn min_mnk_slot(dtype: DType) -> Option<&'static AtomicU64> {
    match dtype {
        DType::F32 => Some(&MIN_MNK[0]),
        DType::F64 => Some(&MIN_MNK[1]),
        _ => None,
    }
}

/// The built-in threshold, by SIMD level (measured; docs/benchmarks.md
/// "matmul through NumPy's OpenBLAS"): with AVX-512 never (`f64::MAX`:
/// faer's kernels kept up with OpenBLAS at every size on a Zen 4, within
/// 4-8% on a Zen 5, and a BLAS call slows the faer products right after
/// it), with AVX2 from 768^3 (faer's kernels 15% slower per thread from
/// 1024 on a Zen 3, 1.1-1.3x faster to 512).
pub fn default_min_mnk() -> f64 {
    match crate::cpu::simd::level() {
        crate::cpu::simd::SimdLevel::Avx512 => f64::MAX,
        _ => 768f64.powi(3),
    }
}

/// `CROSSOVER_BLAS_MIN_MNK` (read once): a threshold for both dtypes over
/// the profile's and the default (`inf`: never); invalid values warn.
fn env_min_mnk() -> Option<f64> {
    static ENV: OnceLock<Option<f64>> = OnceLock::new();
    *ENV.get_or_init(|| {
        const VAR: &str = "CROSSOVER_BLAS_MIN_MNK";
        let v = std::env::var(VAR).ok()?;
        match v.trim().parse::<f64>() {
            Ok(x) if x > 0.0 => Some(x.min(f64::MAX)),
            _ => {
                crate::env::warn(VAR, &v, "not a positive number of multiply-adds; ignored");
                None
            }
        }
    })
}

/// The `m*n*k` from which a real `dtype` product runs through the BLAS
/// (infinite for other dtypes).
pub fn min_mnk(dtype: DType) -> f64 {
    let Some(slot) = min_mnk_slot(dtype) else {
        return f64::INFINITY;
    };
    if let Some(v) = env_min_mnk() {
        return v;
    }
    match slot.load(Ordering::Relaxed) {
        0 => default_min_mnk(),
        bits => f64::from_bits(bits),
    }
}

/// Sets [`min_mnk`] for `dtype` in this process (`None`: the default).
/// The engine applies a calibrated profile's values; results differ only
/// in rounding (both paths are checked against float64 in the tests).
pub fn set_min_mnk(dtype: DType, mnk: Option<f64>) {
    if let Some(slot) = min_mnk_slot(dtype) {
        let bits = mnk
            .filter(|w| !w.is_nan() && *w > 0.0)
            .map_or(0, |w| w.min(f64::MAX).to_bits());
        slot.store(bits, Ordering::Relaxed);
    }
}

/// `CBLAS_ORDER::CblasRowMajor` and `CBLAS_TRANSPOSE` values (cblas.h).
const ROW_MAJOR: c_int = 101;
const NO_TRANS: c_int = 111;
const TRANS: c_int = 112;

/// One of `?gemm`'s two integer widths.
#[derive(Clone, Copy)]
pub(crate) enum Gemm<T> {
    Lp64(GemmFn<T, i32>),
    Ilp64(GemmFn<T, i64>),
}

type GemmFn<T, I> =
    unsafe extern "C" fn(c_int, c_int, c_int, I, I, I, T, *const T, I, *const T, I, T, *mut T, I);

/// A loaded OpenBLAS with its real `gemm`s.
pub(crate) struct Blas {
    /// Where it was loaded from (for `crossover info`).
    pub path: String,
    /// `openblas_get_config()`, e.g. "OpenBLAS 0.3.31 USE64BITINT DYNAMIC_ARCH ... Haswell".
    pub config: String,
    sgemm: Gemm<f32>,
    dgemm: Gemm<f64>,
    threads: unsafe extern "C" fn() -> c_int,
    /// `?gebrd` and `?bdsdc`, where the library exports them (large SVDs;
    /// `lapack_svd.rs`).
    pub(super) lapack: Option<super::lapack_svd::Lapack>,
    // Keeps the library mapped for as long as the pointers above live.
    _lib: libloading::Library,
}

static BLAS: OnceLock<Option<Blas>> = OnceLock::new();

/// The process's BLAS, found once (None: faer runs every product).
pub(crate) fn blas() -> Option<&'static Blas> {
    BLAS.get_or_init(find).as_ref()
}

/// Loads the OpenBLAS at `path` as the process's BLAS, before anything
/// looked for one (`crossover calibrate` passes NumPy's, so that the
/// thresholds it measures are those Python processes will use).
///
/// # Errors
/// The library cannot be loaded or is not an OpenBLAS, or the process's
/// BLAS was already settled (the first large product or
/// [`crate::linalg::blas_library`] settles it).
pub fn use_library(path: &str) -> Result<(), String> {
    if BLAS.get().is_some() {
        return Err("the process's BLAS is already settled".into());
    }
    let blas = load(path)?;
    BLAS.set(Some(blas))
        .map_err(|_| "the process's BLAS is already settled".to_string())
}

fn find() -> Option<Blas> {
    const VAR: &str = "CROSSOVER_BLAS";
    match std::env::var(VAR).ok().filter(|v| !v.trim().is_empty()) {
        Some(v) if v.trim().eq_ignore_ascii_case("none") => None,
        Some(path) => {
            let found = load(path.trim());
            if let Err(why) = &found {
                crate::env::warn(VAR, &path, &format!("{why}; using faer"));
            }
            found.ok()
        }
        None => loaded_openblas().and_then(|p| load(&p).ok()),
    }
}

/// The path of the first shared object mapped into this process whose
/// file name contains "openblas" (threadpoolctl finds NumPy's the same way).
fn loaded_openblas() -> Option<String> {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> c_int {
        // SAFETY: the loader passes a valid info whose name is null or a C
        // string; `data` is the `Option<String>` passed below.
        unsafe {
            let name = (*info).dlpi_name;
            if name.is_null() {
                return 0;
            }
            let path = CStr::from_ptr(name).to_string_lossy();
            let file = path.rsplit('/').next().unwrap_or("");
            if file.to_ascii_lowercase().contains("openblas") {
                *(data as *mut Option<String>) = Some(path.into_owned());
                return 1;
            }
        }
        0
    }
    let mut found: Option<String> = None;
    // SAFETY: `visit` only reads the loader's records and writes `found`,
    // which outlives the call.
    unsafe {
        libc::dl_iterate_phdr(Some(visit), &mut found as *mut _ as *mut libc::c_void);
    }
    found
}

/// The first of `names` the library exports.
///
/// # Safety
/// `F` must be the C signature of every name listed.
pub(super) unsafe fn symbol<F: Copy>(
    lib: &libloading::Library,
    names: &[String],
) -> Option<(F, String)> {
    names.iter().find_map(|n| {
        // SAFETY: the caller guarantees `F` is the symbol's signature.
        unsafe { lib.get::<F>(n.as_bytes()).ok().map(|s| (*s, n.clone())) }
    })
}

/// Name variants, widest integers first: scipy-openblas (`scipy_` prefix,
/// `64_` suffix), a plain ILP64 build (`64_` suffix), then unsuffixed.
pub(super) fn variants(base: &str) -> Vec<String> {
    vec![
        format!("scipy_{base}64_"),
        format!("{base}64_"),
        base.to_string(),
    ]
}

fn load(path: &str) -> Result<Blas, String> {
    // SAFETY: loading a shared library runs its initialisers; an OpenBLAS's
    // start its thread pool and nothing else. Already-mapped libraries
    // (the usual case) only gain a reference.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
    // SAFETY: each type below is the symbol's cblas.h / OpenBLAS signature.
    unsafe {
        let (config_fn, config_name) = symbol::<unsafe extern "C" fn() -> *const c_char>(
            &lib,
            &variants("openblas_get_config"),
        )
        .ok_or("no openblas_get_config (not an OpenBLAS)")?;
        let config_ptr = config_fn();
        let config = if config_ptr.is_null() {
            String::new()
        } else {
            CStr::from_ptr(config_ptr)
                .to_string_lossy()
                .trim()
                .to_string()
        };
        // The integer width of the library's interface: a `64_` suffix is
        // ILP64 by convention; an unsuffixed name is whatever the build
        // says.
        let ilp64 = config_name.ends_with("64_") || config.contains("USE64BITINT");
        let (threads, _) =
            symbol::<unsafe extern "C" fn() -> c_int>(&lib, &variants("openblas_get_num_threads"))
                .ok_or("no openblas_get_num_threads")?;
        let exported = |base: &str| {
            symbol::<*mut std::ffi::c_void>(&lib, &variants(base)).map(|(_, name)| name)
        };
        let s_name = exported("cblas_sgemm").ok_or("no cblas_sgemm")?;
        let d_name = exported("cblas_dgemm").ok_or("no cblas_dgemm")?;
        if s_name.ends_with("64_") != ilp64 || d_name.ends_with("64_") != ilp64 {
            return Err(format!(
                "cannot tell its integer width ({config_name}, {s_name}, {d_name})"
            ));
        }
        let sgemm = typed_gemm::<f32>(&lib, &s_name, ilp64)?;
        let dgemm = typed_gemm::<f64>(&lib, &d_name, ilp64)?;
        let lapack = super::lapack_svd::load(&lib, ilp64);
        Ok(Blas {
            path: path.to_string(),
            config,
            sgemm,
            dgemm,
            threads,
            lapack,
            _lib: lib,
        })
    }
}

/// # Safety
/// `name` must be a cblas `?gemm` over `T` with `ilp64`-wide integers.
unsafe fn typed_gemm<T>(
    lib: &libloading::Library,
    name: &str,
    ilp64: bool,
) -> Result<Gemm<T>, String> {
    let c = CString::new(name).map_err(|e| e.to_string())?;
    // SAFETY: as the caller guarantees.
    unsafe {
        Ok(if ilp64 {
            Gemm::Ilp64(
                *lib.get::<GemmFn<T, i64>>(c.as_bytes_with_nul())
                    .map_err(|e| e.to_string())?,
            )
        } else {
            Gemm::Lp64(
                *lib.get::<GemmFn<T, i32>>(c.as_bytes_with_nul())
                    .map_err(|e| e.to_string())?,
            )
        })
    }
}

/// `out (row-major, contiguous) = a @ b` through the process's BLAS,
/// true when it ran; false (nothing written) when there is none, its thread
/// count differs from the CPU backend's, or the operands' strides do not
/// fit the BLAS interface (faer then runs the product).
pub(crate) fn product<T: BlasReal>(out: &mut [T], a: MatRef<'_, T>, b: MatRef<'_, T>) -> bool {
    let Some(blas) = blas() else {
        return false;
    };
    if !blas.matches_threads(crate::cpu::threads()) {
        return false;
    }
    let operand = |x: MatRef<'_, T>| Operand {
        ptr: x.as_ptr(),
        rs: x.row_stride(),
        cs: x.col_stride(),
    };
    // SAFETY: faer's views address elements of live buffers; `gemm`
    // checks `out`'s length.
    let ran = unsafe {
        blas.gemm(
            out,
            operand(a),
            operand(b),
            (a.nrows(), a.ncols(), b.ncols()),
        )
    };
    if ran {
        PRODUCTS_RUN.fetch_add(1, Ordering::Relaxed);
    }
    ran
}

/// One operand as the BLAS sees it: its first element and strides.
#[derive(Clone, Copy)]
struct Operand<T> {
    ptr: *const T,
    /// Row and column strides in elements.
    rs: isize,
    cs: isize,
}

/// `(transpose flag, leading dimension)` of an `rows x cols` operand, or
/// None where neither stride is 1 (faer then reads the strides itself).
fn blas_layout(rows: usize, cols: usize, rs: isize, cs: isize) -> Option<(c_int, usize)> {
    if cs == 1 && (rows <= 1 || rs >= cols.max(1) as isize) {
        Some((NO_TRANS, (rs.max(1) as usize).max(cols.max(1))))
    } else if rs == 1 && (cols <= 1 || cs >= rows.max(1) as isize) {
        Some((TRANS, (cs.max(1) as usize).max(rows.max(1))))
    } else {
        None
    }
}

/// Element types with a BLAS `gemm`.
pub(crate) trait BlasReal: Copy + From<u8> {
    fn gemm(blas: &Blas) -> Gemm<Self>;
}

impl BlasReal for f32 {
    fn gemm(blas: &Blas) -> Gemm<f32> {
        blas.sgemm
    }
}

impl BlasReal for f64 {
    fn gemm(blas: &Blas) -> Gemm<f64> {
        blas.dgemm
    }
}

impl Blas {
    /// Whether the BLAS would run a product on `threads` threads (its own
    /// count must match; see the module docs).
    pub fn matches_threads(&self, threads: usize) -> bool {
        // SAFETY: a getter without arguments.
        let own = unsafe { (self.threads)() };
        own > 0 && own as usize == threads
    }

    /// `out (m x n, row-major, contiguous) = a (m x k) @ b (k x n)`, true
    /// when it ran; false (nothing written) when an operand's strides or a
    /// dimension do not fit the BLAS interface.
    ///
    /// # Safety
    /// Every element `ptr + i*rs + j*cs` of each operand lies in one live
    /// allocation, and `out` holds `m*n` elements.
    unsafe fn gemm<T: BlasReal>(
        &self,
        out: &mut [T],
        a: Operand<T>,
        b: Operand<T>,
        (m, k, n): (usize, usize, usize),
    ) -> bool {
        if m == 0 || n == 0 || k == 0 || out.len() != m * n {
            return false;
        }
        let (Some((ta, lda)), Some((tb, ldb))) =
            (blas_layout(m, k, a.rs, a.cs), blas_layout(k, n, b.rs, b.cs))
        else {
            return false;
        };
        let dims = [m, n, k, lda, ldb, n];
        let (pa, pb, pc) = (a.ptr, b.ptr, out.as_mut_ptr());
        // SAFETY: the operands and `out` cover the elements named (caller),
        // with the leading dimensions checked above.
        unsafe {
            match T::gemm(self) {
                Gemm::Ilp64(f) => call_gemm(f, (ta, tb), dims, pa, pb, pc),
                Gemm::Lp64(f) => call_gemm(f, (ta, tb), dims, pa, pb, pc),
            }
        }
    }
}

/// `c = a @ b` through `f` with `dims` (`m, n, k, lda, ldb, ldc`) in its
/// integer width; false (nothing called) where one does not fit.
///
/// # Safety
/// As [`Blas::gemm`]: the pointers address the elements `dims` name.
unsafe fn call_gemm<T: BlasReal, I: TryFrom<usize> + Copy + Default>(
    f: GemmFn<T, I>,
    (ta, tb): (c_int, c_int),
    dims: [usize; 6],
    a: *const T,
    b: *const T,
    c: *mut T,
) -> bool {
    let Ok([m, n, k, lda, ldb, ldc]) = dims.map(I::try_from).transpose_all() else {
        return false;
    };
    let (one, zero) = (T::from(1), T::from(0));
    // SAFETY: as the caller guarantees.
    unsafe {
        f(
            ROW_MAJOR, ta, tb, m, n, k, one, a, lda, b, ldb, zero, c, ldc,
        )
    };
    true
}

/// `[Result<I, E>; 6]` to `Result<[I; 6], ()>`.
trait TransposeAll<I> {
    fn transpose_all(self) -> Result<[I; 6], ()>;
}

impl<I: Copy + Default, E> TransposeAll<I> for [Result<I, E>; 6] {
    fn transpose_all(self) -> Result<[I; 6], ()> {
        let mut out = [I::default(); 6];
        for (o, r) in out.iter_mut().zip(self) {
            *o = r.map_err(|_| ())?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_product_within_bound, blas_or_skip, rand, THRESHOLDS};
    use super::*;
    use crate::Array;

    /// Stores the logical `rows x cols` matrix `v` (row-major) at the
    /// given strides in a buffer of `len` elements (the rest NaN, so a read
    /// outside the matrix shows in the result).
    fn store<T: Copy>(v: &[T], cols: usize, rs: isize, cs: isize, len: usize, nan: T) -> Vec<T> {
        let mut buf = vec![nan; len];
        for (t, &x) in v.iter().enumerate() {
            let (i, j) = ((t / cols) as isize, (t % cols) as isize);
            buf[(i * rs + j * cs) as usize] = x;
        }
        buf
    }

    /// `a @ b` through `gemm` with A and B at the given strides (None:
    /// the BLAS must refuse them), against an f64 product, element by
    /// element, within `(k + 2) u sum_p |a_ip b_pj|`.
    #[allow(clippy::too_many_arguments)]
    fn check<T: BlasReal + Into<f64>>(
        blas: &Blas,
        (m, k, n): (usize, usize, usize),
        (ars, acs): (isize, isize),
        (brs, bcs): (isize, isize),
        expect_run: bool,
        u: f64,
        cvt: fn(f64) -> T,
    ) {
        let av: Vec<T> = rand((m * 31 + k) as u64, m * k)
            .into_iter()
            .map(cvt)
            .collect();
        let bv: Vec<T> = rand((n * 37 + k) as u64, k * n)
            .into_iter()
            .map(cvt)
            .collect();
        let span = |r: usize, c: usize, rs: isize, cs: isize| {
            (r - 1) * rs as usize + (c - 1) * cs as usize + 1
        };
        let a = store(&av, k, ars, acs, span(m, k, ars, acs), cvt(f64::NAN));
        let b = store(&bv, n, brs, bcs, span(k, n, brs, bcs), cvt(f64::NAN));
        let mut c = vec![cvt(f64::NAN); m * n];
        let (oa, ob) = (
            Operand {
                ptr: a.as_ptr(),
                rs: ars,
                cs: acs,
            },
            Operand {
                ptr: b.as_ptr(),
                rs: brs,
                cs: bcs,
            },
        );
        // SAFETY: `store` sized each buffer to hold every element its
        // strides address.
        let ran = unsafe { blas.gemm(&mut c, oa, ob, (m, k, n)) };
        assert_eq!(
            ran, expect_run,
            "{m}x{k}x{n} a ({ars},{acs}) b ({brs},{bcs})"
        );
        if !ran {
            return;
        }
        assert_product_within_bound(
            (m, k, n),
            |i, p| av[i * k + p].into(),
            |p, j| bv[p * n + j].into(),
            |i, j| c[i * n + j].into(),
            u,
            1,
            &format!("{m}x{k}x{n} a ({ars},{acs}) b ({brs},{bcs})"),
        );
    }

    #[test]
    fn gemm_matches_f64_reference_in_every_layout() {
        let Some(blas) = blas_or_skip() else { return };
        // Sizes across OpenBLAS's block edges (its Haswell sgemm unrolls
        // 16 x 4 and packs 256/512-deep panels), with the operands stored
        // row-major, transposed, with padded rows, and at a stride the
        // interface cannot take.
        for (m, k, n) in [(1, 1, 1), (17, 33, 5), (70, 300, 129), (257, 513, 65)] {
            let (mi, ki, ni) = (m as isize, k as isize, n as isize);
            let layouts = [
                ((ki, 1), (ni, 1), true),
                ((1, mi), (ni, 1), true),
                ((ki, 1), (1, ki), true),
                ((ki + 3, 1), (1, ki + 5), true),
                ((2 * ki, 2), (ni, 1), false),
            ];
            for (a, b, runs) in layouts {
                check::<f32>(
                    blas,
                    (m, k, n),
                    a,
                    b,
                    runs,
                    f32::EPSILON as f64 / 2.0,
                    |v| v as f32,
                );
                check::<f64>(blas, (m, k, n), a, b, runs, f64::EPSILON / 2.0, |v| v);
            }
        }
    }

    /// The products above the threshold run through the BLAS, correctly
    /// (a transposed operand included), and none below it: the threshold is
    /// lowered to this product's size and raised past it in turn (the only
    /// test that moves it, so no other test's product runs through the BLAS
    /// meanwhile).
    #[test]
    fn products_from_the_threshold_run_through_the_blas() {
        let _moving = THRESHOLDS.lock().unwrap_or_else(|e| e.into_inner());
        let Some(blas) = blas_or_skip() else { return };
        if env_min_mnk().is_some() {
            eprintln!("skipped: CROSSOVER_BLAS_MIN_MNK is set, over the thresholds moved here");
            return;
        }
        let (m, k, n) = (300, 260, 280);
        let mnk = (m * k * n) as f64;
        for dtype in [DType::F32, DType::F64] {
            let a = Array::from_vec(rand(1, m * k), &[m, k])
                .and_then(|a| a.cast(dtype))
                .unwrap();
            // B given transposed: a view the BLAS reads with its flag.
            let bt = Array::from_vec(rand(2, n * k), &[n, k])
                .and_then(|b| b.cast(dtype))
                .unwrap();
            let product = |threshold: f64| {
                let before = min_mnk(dtype);
                set_min_mnk(dtype, Some(threshold));
                let runs = products_run();
                let c = a
                    .matmul(&bt.transpose().unwrap())
                    .and_then(|c| c.cast(DType::F64))
                    .and_then(|c| c.to_vec::<f64>())
                    .unwrap();
                let ran = products_run() > runs;
                set_min_mnk(dtype, Some(before));
                (c, ran)
            };
            let (above, ran) = product(mnk);
            if blas.matches_threads(crate::cpu::threads()) {
                assert!(ran, "{dtype}: the BLAS did not run at its threshold");
            }
            let (below, ran) = product(mnk + 1.0);
            assert!(!ran, "{dtype}: the BLAS ran below its threshold");
            let (av, bv) = (
                a.cast(DType::F64).unwrap().to_vec::<f64>().unwrap(),
                bt.cast(DType::F64).unwrap().to_vec::<f64>().unwrap(),
            );
            let u = if dtype == DType::F32 {
                f32::EPSILON as f64
            } else {
                f64::EPSILON
            } / 2.0;
            for (got, path) in [(&above, "BLAS"), (&below, "faer")] {
                assert_product_within_bound(
                    (m, k, n),
                    |i, p| av[i * k + p],
                    |p, j| bv[j * k + p],
                    |i, j| got[i * n + j],
                    u,
                    7,
                    &format!("{dtype} through {path}"),
                );
            }
        }
    }

    #[test]
    fn thresholds_default_by_simd_level_and_reset() {
        let _moving = THRESHOLDS.lock().unwrap_or_else(|e| e.into_inner());
        if env_min_mnk().is_some() {
            eprintln!("skipped: CROSSOVER_BLAS_MIN_MNK is set, over the thresholds read here");
            return;
        }
        for dtype in [DType::F32, DType::F64] {
            assert_eq!(min_mnk(dtype), default_min_mnk());
        }
        assert!(default_min_mnk() >= 512f64.powi(3));
        // Complex and integer products never go to the BLAS.
        assert_eq!(min_mnk(DType::C64), f64::INFINITY);
        assert_eq!(min_mnk(DType::I32), f64::INFINITY);
        set_min_mnk(DType::C64, Some(1.0));
        assert_eq!(min_mnk(DType::C64), f64::INFINITY);
        // Set, "never" kept finite (profiles store it), bad values and
        // None back to the default.
        set_min_mnk(DType::F64, Some(5.0e8));
        assert_eq!(min_mnk(DType::F64), 5.0e8);
        assert_eq!(min_mnk(DType::F32), default_min_mnk());
        set_min_mnk(DType::F64, Some(f64::INFINITY));
        assert_eq!(min_mnk(DType::F64), f64::MAX);
        for bad in [Some(f64::NAN), Some(-1.0), Some(0.0), None] {
            set_min_mnk(DType::F64, Some(5.0e8));
            set_min_mnk(DType::F64, bad);
            assert_eq!(min_mnk(DType::F64), default_min_mnk(), "{bad:?}");
        }
    }

    #[test]
    fn use_library_refuses_what_is_not_an_openblas() {
        // Settled already (another test looked) or not an OpenBLAS: an
        // error either way, and the process's BLAS is unchanged.
        let before = blas().map(|b| b.path.clone());
        assert!(use_library("/nonexistent/libopenblas.so").is_err());
        assert!(use_library("libc.so.6").is_err());
        assert_eq!(blas().map(|b| b.path.clone()), before);
    }

    #[test]
    fn layouts_map_to_transpose_flags() {
        // Row-major 3x4 (row stride 4), its transpose view, a padded row
        // stride, and a strided view that the BLAS cannot read.
        assert_eq!(blas_layout(3, 4, 4, 1), Some((NO_TRANS, 4)));
        assert_eq!(blas_layout(4, 3, 1, 4), Some((TRANS, 4)));
        assert_eq!(blas_layout(3, 4, 10, 1), Some((NO_TRANS, 10)));
        assert_eq!(blas_layout(3, 4, 8, 2), None);
        // Overlapping rows (a broadcast view) are not a BLAS matrix.
        assert_eq!(blas_layout(3, 4, 0, 1), None);
        assert_eq!(blas_layout(1, 4, 0, 1), Some((NO_TRANS, 4)));
    }

    #[test]
    fn name_variants_put_ilp64_first() {
        assert_eq!(
            variants("cblas_sgemm"),
            ["scipy_cblas_sgemm64_", "cblas_sgemm64_", "cblas_sgemm"]
        );
    }
}
