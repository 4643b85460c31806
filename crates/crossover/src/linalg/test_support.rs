//! Helpers shared by the matrix-product and SVD unit tests (`matmul.rs`,
//! `blas.rs`, `lapack_svd.rs`).

use super::blas::{blas, Blas};

/// Held by the tests that read or move the process's BLAS and LAPACK
/// thresholds.
pub(super) static THRESHOLDS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The process's BLAS, or None with the reason printed: a skip, except
/// where `CROSSOVER_REQUIRE_BLAS` is set (CI), which makes it a failure.
pub(super) fn blas_or_skip() -> Option<&'static Blas> {
    let found = blas();
    if found.is_none() {
        let var = std::env::var("CROSSOVER_BLAS").ok();
        assert!(
            std::env::var_os("CROSSOVER_REQUIRE_BLAS").is_none(),
            "CROSSOVER_REQUIRE_BLAS is set but no OpenBLAS was loaded (CROSSOVER_BLAS={var:?})"
        );
        eprintln!("skipped: no OpenBLAS in this process (CROSSOVER_BLAS={var:?})");
    }
    found
}

/// Deterministic values in [-1, 1).
pub(super) fn rand(seed: u64, len: usize) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005) ^ 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// Asserts that `got(i, j)` lies within the rounding bound
/// `(k + 2) u sum_p |a(i, p) b(p, j)|` of the float64 product, for every
/// `j` and the rows `0, row_step, 2 row_step, ...`; `what` names the case.
pub(super) fn assert_product_within_bound(
    (m, k, n): (usize, usize, usize),
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
    got: impl Fn(usize, usize) -> f64,
    u: f64,
    row_step: usize,
    what: &str,
) {
    for i in (0..m).step_by(row_step.max(1)) {
        for j in 0..n {
            let (mut want, mut mag) = (0.0, 0.0);
            for p in 0..k {
                let t = a(i, p) * b(p, j);
                want += t;
                mag += t.abs();
            }
            let (got, tol) = (got(i, j), (k + 2) as f64 * u * mag);
            assert!(
                (got - want).abs() <= tol,
                "{what}: c[{i},{j}] = {got}, want {want} (tol {tol:e})"
            );
        }
    }
}
