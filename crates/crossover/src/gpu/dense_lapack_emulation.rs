//! cuSOLVER's routines as the host emulation of the dense plans
//! (`dense_emulation_tests.rs`) runs them: LAPACK's semantics written out
//! on column-major complex128 matrices (reading only the triangle named,
//! `getrs` with the plain transpose, `gesvd` returning `V^H`, junk where
//! LAPACK leaves reflectors or scratch), the decompositions by faer.

// LAPACK's loops, written as LAPACK writes them.
#![allow(clippy::needless_range_loop)]

use faer::{Mat, Side};
use num_complex::Complex64 as C;

/// What LAPACK leaves in buffers the outputs must not read.
pub(super) const JUNK: C = C::new(777.0, -555.0);
pub(super) const ZO: (C, C) = (C::new(0.0, 0.0), C::new(1.0, 0.0));

fn abs1(z: C) -> f64 {
    z.re.abs() + z.im.abs()
}

/// `getrf`: `P A = L U` in place (`n x n`, column-major), LAPACK's 1-based
/// pivots (the first largest `|re| + |im|`); the first zero pivot (1-based)
/// or 0.
pub(super) fn getrf(a: &mut [C], n: usize, piv: &mut [i32]) -> i32 {
    let at = |i: usize, j: usize| i + j * n;
    let mut info = 0;
    for j in 0..n {
        let mut p = j;
        for i in j + 1..n {
            if abs1(a[at(i, j)]) > abs1(a[at(p, j)]) {
                p = i;
            }
        }
        piv[j] = p as i32 + 1;
        if a[at(p, j)] == ZO.0 {
            if info == 0 {
                info = j as i32 + 1;
            }
            continue;
        }
        for c in 0..n {
            a.swap(at(j, c), at(p, c));
        }
        let d = a[at(j, j)];
        for i in j + 1..n {
            a[at(i, j)] /= d;
        }
        for c in j + 1..n {
            let f = a[at(j, c)];
            for i in j + 1..n {
                let l = a[at(i, j)];
                a[at(i, c)] -= l * f;
            }
        }
    }
    info
}

/// `getrs`: `b` (`n x k`) becomes `op(A)^-1 b` from `getrf`'s factor, `op`
/// the transpose (not the conjugate transpose) when `transpose`.
pub(super) fn getrs(transpose: bool, n: usize, k: usize, lu: &[C], piv: &[i32], b: &mut [C]) {
    let a = |i: usize, j: usize| lu[i + j * n];
    for c in 0..k {
        let x = &mut b[c * n..(c + 1) * n];
        if !transpose {
            for i in 0..n {
                x.swap(i, piv[i] as usize - 1);
            }
            for i in 0..n {
                for p in 0..i {
                    let v = x[p];
                    x[i] -= a(i, p) * v;
                }
            }
            for i in (0..n).rev() {
                for p in i + 1..n {
                    let v = x[p];
                    x[i] -= a(i, p) * v;
                }
                x[i] /= a(i, i);
            }
        } else {
            // A^T = U^T L^T P: U^T y = b, L^T z = y, x = P^T z.
            for i in 0..n {
                for p in 0..i {
                    let v = x[p];
                    x[i] -= a(p, i) * v;
                }
                x[i] /= a(i, i);
            }
            for i in (0..n).rev() {
                for p in i + 1..n {
                    let v = x[p];
                    x[i] -= a(p, i) * v;
                }
            }
            for i in (0..n).rev() {
                x.swap(i, piv[i] as usize - 1);
            }
        }
    }
}

/// The Hermitian matrix LAPACK reads from the `upper` or lower triangle
/// of `a` (`n x n`, column-major; the diagonal's real part), column-major.
fn hermitian(a: &[C], n: usize, upper: bool) -> Vec<C> {
    let mut h = vec![ZO.0; n * n];
    for j in 0..n {
        for i in 0..n {
            let stored = if upper { i <= j } else { i >= j };
            h[i + j * n] = if i == j {
                C::new(a[i + i * n].re, 0.0)
            } else if stored {
                a[i + j * n]
            } else {
                a[j + i * n].conj()
            };
        }
    }
    h
}

/// `potrf`: the Cholesky factor over the `upper` (`U = L^H`) or lower
/// (`L`) triangle, the other left as it is; the order of the first
/// leading minor that is not positive, or 0.
pub(super) fn potrf(upper: bool, n: usize, a: &mut [C]) -> i32 {
    let h = hermitian(a, n, upper);
    let mut l = vec![ZO.0; n * n];
    for j in 0..n {
        let d = h[j + j * n].re - (0..j).map(|p| l[j + p * n].norm_sqr()).sum::<f64>();
        if d.is_nan() || d <= 0.0 {
            return j as i32 + 1;
        }
        let d = d.sqrt();
        l[j + j * n] = C::new(d, 0.0);
        for i in j + 1..n {
            let s: C = (0..j).map(|p| l[i + p * n] * l[j + p * n].conj()).sum();
            l[i + j * n] = (h[i + j * n] - s) / d;
        }
    }
    for j in 0..n {
        for i in j..n {
            if upper {
                a[j + i * n] = l[i + j * n].conj();
            } else {
                a[i + j * n] = l[i + j * n];
            }
        }
    }
    0
}

/// `potrs`: `b` (`n x k`) becomes `H^-1 b` from `potrf`'s factor.
pub(super) fn potrs(upper: bool, n: usize, k: usize, f: &[C], b: &mut [C]) {
    let l = |i: usize, j: usize| {
        if upper {
            f[j + i * n].conj()
        } else {
            f[i + j * n]
        }
    };
    for c in 0..k {
        let x = &mut b[c * n..(c + 1) * n];
        for i in 0..n {
            for p in 0..i {
                let v = x[p];
                x[i] -= l(i, p) * v;
            }
            x[i] /= l(i, i);
        }
        for i in (0..n).rev() {
            for p in i + 1..n {
                let v = x[p];
                x[i] -= l(p, i).conj() * v;
            }
            x[i] /= l(i, i).conj();
        }
    }
}

fn mat(a: &[C], m: usize, n: usize) -> Mat<C> {
    Mat::from_fn(m, n, |i, j| a[i + j * m])
}

/// `geqrf`, copy, `ungqr`: `b` gets `R` in its upper triangle (junk below,
/// where LAPACK keeps the reflectors), `a` the thin `Q` in its first
/// `min(m, n)` columns (junk after).
pub(super) fn qr(m: usize, n: usize, a: &mut [C], b: &mut [C]) {
    let f = mat(a, m, n).qr();
    let (q, r) = (f.compute_thin_Q(), f.thin_R());
    let k = m.min(n);
    for j in 0..n {
        for i in 0..m {
            b[i + j * m] = if i <= j && i < k { r[(i, j)] } else { JUNK };
            a[i + j * m] = if j < k { q[(i, j)] } else { JUNK };
        }
    }
}

/// `gesvd` with jobs `S` (or `N`): `m >= n`; `values` the singular values,
/// `u` `U` (`m x n`), `vt` `V^H` (`n x n`); `a` destroyed.
pub(super) fn gesvd(
    vectors: bool,
    m: usize,
    n: usize,
    a: &mut [C],
    s: &mut [C],
    u: &mut [C],
    vt: &mut [C],
) {
    assert!(m >= n, "gesvd needs rows >= columns");
    let x = mat(a, m, n);
    if vectors {
        let d = x.thin_svd().expect("svd");
        let (uu, vv, ss) = (d.U(), d.V(), d.S().column_vector());
        for j in 0..n {
            s[j] = C::new(ss[j].re, 0.0);
            for i in 0..m {
                u[i + j * m] = uu[(i, j)];
            }
            for i in 0..n {
                vt[i + j * n] = vv[(j, i)].conj();
            }
        }
    } else {
        for (o, v) in s.iter_mut().zip(x.singular_values().expect("svd")) {
            *o = C::new(v, 0.0);
        }
    }
    a.fill(JUNK);
}

/// `heevd` with vectors: eigenvalues ascending, `a` the eigenvectors
/// (columns) of the Hermitian matrix of `a`'s `upper` or lower triangle.
pub(super) fn heevd(upper: bool, n: usize, a: &mut [C], w: &mut [C]) {
    let e = mat(&hermitian(a, n, upper), n, n)
        .self_adjoint_eigen(Side::Lower)
        .expect("eigh");
    let (v, s) = (e.U(), e.S().column_vector());
    for j in 0..n {
        w[j] = C::new(s[j].re, 0.0);
        for i in 0..n {
            a[i + j * n] = v[(i, j)];
        }
    }
}
