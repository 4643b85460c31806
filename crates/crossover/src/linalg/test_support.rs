//! Helpers shared by the matrix-product unit tests (`matmul.rs`,
//! `blas.rs`).

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
