//! How each dense op maps onto a column-major LAPACK-style solver
//! (cuSOLVER): the plan [`mapping`] gives `gpu/dense.rs` (which runs it)
//! and its host emulation test (`dense_emulation_tests.rs`, which runs it
//! with faer in place of cuSOLVER), the solver's `info` as the CPU's typed
//! errors, and the determinant from an LU factor.
//!
//! A row-major matrix read column-major is its transpose `A^T`. For real
//! matrices that is all; for complex ones the transpose of a Hermitian
//! matrix is its conjugate, so each op's derivation (comments in
//! [`mapping`]) says where the transpose is harmless (LU: `getrs` takes
//! the transpose; Cholesky: `L = U^T`; QR: packed column-major; SVD: the
//! solver returns `V^H`, whose transpose is `conj(V)`) and where the packing
//! conjugates instead (`solve_spd`, `eigh`: the solver sees `A^H`, the
//! Hermitian matrix of the triangle the CPU reads).

use super::api::DenseCall;
use super::codegen::matcopy::Tri;
use crate::error::Error;
use crate::linalg::{
    eigh_not_converged, not_positive_definite, singular, svd_not_converged, DenseKind as Kind,
};

/// A buffer of a [`DenseJob`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Src {
    A,
    B,
    Values,
    U,
    Vt,
}

/// One output, row-major `rows x cols` per matrix, read from job buffer
/// `src` (one `per`-element block per matrix) through strides `rs`, `cs`,
/// keeping `tri`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Unpack {
    pub(super) src: Src,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) rs: usize,
    pub(super) cs: usize,
    pub(super) per: usize,
    pub(super) tri: Tri,
}

impl Unpack {
    pub(super) fn new(
        src: Src,
        (rows, cols): (usize, usize),
        (rs, cs): (usize, usize),
        per: usize,
    ) -> Self {
        Unpack {
            src,
            rows,
            cols,
            rs,
            cs,
            per,
            tri: Tri::All,
        }
    }

    /// Whether the job buffer already is this output: row-major,
    /// contiguous, nothing masked (no copy needed).
    pub(super) fn as_is(&self) -> bool {
        let rows_ok = self.rows <= 1 || self.rs == self.cols;
        let cols_ok = self.cols <= 1 || self.cs == 1;
        self.tri == Tri::All && rows_ok && cols_ok && self.per == self.rows * self.cols
    }
}

/// An output of a dense op on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Out {
    /// From a job buffer.
    Unpack(Unpack),
    /// A determinant: from the LU factor's diagonal and the pivots.
    Det,
}

/// What `b` of the job holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BFrom {
    None,
    /// The right-hand sides, packed column-major (`n x k`).
    Input,
    /// Identity matrices (`n x n`): the inverse's right-hand sides.
    Identity,
    /// Room for a copy of `a` (QR's factored matrix).
    Scratch,
}

/// How one dense op maps onto the column-major solver: the call, the
/// matrix the solver sees (`m x n`), how `a` is packed, what the other
/// buffers hold (elements per matrix, 0: none) and where each output
/// comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Mapping {
    pub(super) call: DenseCall,
    pub(super) m: usize,
    pub(super) n: usize,
    /// Pack `a` row-major (the solver then sees `A^T`), else column-major.
    pub(super) a_row_major: bool,
    /// Pack `a` conjugated (row-major: the solver sees `A^H`; a no-op for
    /// real dtypes, where `A^H = A^T`).
    pub(super) conj_a: bool,
    pub(super) b: BFrom,
    /// Right-hand sides the solver sees (the inverse's: `n`).
    pub(super) k: usize,
    pub(super) pivots: bool,
    pub(super) values: usize,
    pub(super) u: usize,
    pub(super) vt: usize,
    pub(super) outs: Vec<Out>,
}

/// The mapping of op `kind` on an `m x n` matrix (`k` right-hand sides).
pub(super) fn mapping(kind: Kind, m: usize, n: usize, k: usize) -> Mapping {
    let r = m.min(n);
    let base = Mapping {
        call: DenseCall::Lu {
            solve: false,
            transpose: false,
        },
        m: n,
        n,
        a_row_major: true,
        conj_a: false,
        b: BFrom::None,
        k,
        pivots: false,
        values: 0,
        u: 0,
        vt: 0,
        outs: Vec::new(),
    };
    // X (n x k) column-major, read row-major.
    let solution = Out::Unpack(Unpack::new(Src::B, (n, k), (1, n), n * k));
    match kind {
        // getrs with op = transpose (not conjugate): (A^T)^T = A.
        Kind::Solve => Mapping {
            call: DenseCall::Lu {
                solve: true,
                transpose: true,
            },
            b: BFrom::Input,
            pivots: true,
            outs: vec![solution],
            ..base
        },
        // The solver sees M = A^H (conjugating pack), whose lower triangle
        // is the conjugate transpose of A's upper one (read, as on the
        // CPU): the Hermitian matrix A's upper triangle defines. potrs then
        // solves with it. (A^T would be its conjugate: wrong for complex.)
        Kind::SolveSpd => Mapping {
            conj_a: true,
            call: DenseCall::Cholesky {
                upper: false,
                solve: true,
            },
            b: BFrom::Input,
            outs: vec![solution],
            ..base
        },
        // M = A^T's upper triangle is A's lower one: the solver sees
        // conj(H), H the Hermitian matrix of A's lower triangle, and
        // factors conj(H) = U^H U; then H = U^T conj(U) = L L^H with
        // L = U^T, which is U column-major read row-major (no conjugation,
        // complex or real).
        Kind::Cholesky => Mapping {
            call: DenseCall::Cholesky {
                upper: true,
                solve: false,
            },
            outs: vec![Out::Unpack(Unpack {
                tri: Tri::Lower,
                ..Unpack::new(Src::A, (n, n), (n, 1), n * n)
            })],
            ..base
        },
        // inv(M) column-major = inv(A)^T column-major = inv(A) row-major
        // (transposes only: the same for complex).
        Kind::Inv => Mapping {
            call: DenseCall::Lu {
                solve: true,
                transpose: false,
            },
            b: BFrom::Identity,
            k: n,
            pivots: true,
            outs: vec![Out::Unpack(Unpack::new(Src::B, (n, n), (n, 1), n * n))],
            ..base
        },
        // det(M) = det(A) (a transpose, not a conjugate).
        Kind::Det => Mapping {
            pivots: true,
            outs: vec![Out::Det],
            ..base
        },
        Kind::Qr => Mapping {
            call: DenseCall::Qr,
            m,
            n,
            a_row_major: false,
            b: BFrom::Scratch,
            outs: vec![
                Out::Unpack(Unpack::new(Src::A, (m, r), (1, m), m * n)),
                Out::Unpack(Unpack {
                    tri: Tri::Upper,
                    ..Unpack::new(Src::B, (r, n), (1, m), m * n)
                }),
            ],
            ..base
        },
        Kind::Svd | Kind::SvdVals => {
            let vectors = kind == Kind::Svd;
            let s = Out::Unpack(Unpack::new(Src::Values, (1, r), (r, 1), r));
            // The solver needs rows >= columns.
            if n >= m {
                // A^T = U' S V'^H (V'^T when real), so A = conj(V') S
                // U'^T: U = conj(V') is the solver's V'^H (r x r)
                // column-major read row-major, and V^H = U'^T is U'
                // (n x r) column-major read row-major. No copies, no
                // conjugation.
                Mapping {
                    call: DenseCall::Svd { vectors },
                    m: n,
                    n: m,
                    values: r,
                    u: if vectors { n * r } else { 0 },
                    vt: if vectors { r * r } else { 0 },
                    outs: if vectors {
                        vec![
                            Out::Unpack(Unpack::new(Src::Vt, (m, r), (r, 1), r * r)),
                            s,
                            Out::Unpack(Unpack::new(Src::U, (r, n), (n, 1), n * r)),
                        ]
                    } else {
                        vec![s]
                    },
                    ..base
                }
            } else {
                Mapping {
                    call: DenseCall::Svd { vectors },
                    m,
                    n,
                    a_row_major: false,
                    values: r,
                    u: if vectors { m * r } else { 0 },
                    vt: if vectors { r * n } else { 0 },
                    outs: if vectors {
                        vec![
                            Out::Unpack(Unpack::new(Src::U, (m, r), (1, m), m * r)),
                            s,
                            Out::Unpack(Unpack::new(Src::Vt, (r, n), (1, r), r * n)),
                        ]
                    } else {
                        vec![s]
                    },
                    ..base
                }
            }
        }
        // M = A^H (conjugating pack): its upper triangle is the conjugate
        // transpose of A's lower one (read, as NumPy's UPLO="L"), so the
        // solver sees the Hermitian matrix A's lower triangle defines (A^T
        // would be its conjugate, whose eigenvectors are the conjugates);
        // eigenvectors come back as columns, column-major.
        Kind::Eigh => Mapping {
            conj_a: true,
            call: DenseCall::Eigh { upper: true },
            values: n,
            outs: vec![
                Out::Unpack(Unpack::new(Src::Values, (1, n), (n, 1), n)),
                Out::Unpack(Unpack::new(Src::A, (n, n), (1, n), n * n)),
            ],
            ..base
        },
    }
}

/// The CPU's error for the solver's `info` of one matrix of op `kind`
/// (`None`: success, or a value that is no failure for the op, such as a
/// zero pivot for a determinant).
pub(super) fn info_error(kind: Kind, info: i32) -> Option<Error> {
    let op = kind.name();
    if info < 0 {
        return Some(Error::internal(
            op,
            format!("the dense solver rejected its argument {}", -info),
        ));
    }
    let at = usize::try_from(info).ok().filter(|&i| i > 0)?;
    match kind {
        Kind::Solve | Kind::Inv => Some(singular(op, at - 1)),
        Kind::SolveSpd | Kind::Cholesky => Some(not_positive_definite(op, at)),
        Kind::Svd | Kind::SvdVals => Some(svd_not_converged(op)),
        Kind::Eigh => Some(eigh_not_converged(op)),
        Kind::Det | Kind::Qr => None,
    }
}

/// The determinant from an LU factor's diagonal and LAPACK's 1-based
/// pivots, as the CPU computes it: the diagonal's product (0 from the first
/// zero pivot on: a singular matrix, NumPy's 0 rather than NaN), negated
/// for an odd number of row swaps.
pub(super) fn det_from_lu<T>(diag: &[T], pivots: &[i32], one: T) -> T
where
    T: Copy + PartialEq + Default + std::ops::MulAssign + std::ops::Neg<Output = T>,
{
    let mut d = one;
    for &u in diag {
        if u == T::default() {
            d = T::default();
            break;
        }
        d *= u;
    }
    let swaps = pivots
        .iter()
        .enumerate()
        .filter(|&(i, &p)| p as i64 != i as i64 + 1)
        .count();
    if swaps % 2 == 1 {
        -d
    } else {
        d
    }
}

/// How `a` (`m x n` per matrix, element strides `rs`, `cs`) is packed for
/// `map`: the row-major shape and strides the matrix copy reads it through.
pub(super) fn a_pack(
    map: &Mapping,
    (m, n): (usize, usize),
    (rs, cs): (isize, isize),
) -> ((usize, usize), (isize, isize)) {
    if map.a_row_major {
        ((m, n), (rs, cs))
    } else {
        ((n, m), (cs, rs))
    }
}

/// The matrix copy's semantics on the host (the tests' reference and the
/// host emulation's copy): `rows x cols` per offset, read through strides
/// `rs`, `cs`, keeping `tri`, `conj` applied to what is read.
#[cfg(test)]
pub(super) fn host_matcopy<T: Copy>(
    x: &[T],
    offs: &[isize],
    ((rows, cols), (rs, cs)): ((usize, usize), (isize, isize)),
    tri: Tri,
    (zero, one): (T, T),
    conj: impl Fn(T) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(offs.len() * rows * cols);
    for &o in offs {
        for i in 0..rows {
            for j in 0..cols {
                out.push(match tri {
                    Tri::Identity if i == j => one,
                    Tri::Identity => zero,
                    Tri::Lower if j > i => zero,
                    Tri::Upper if j < i => zero,
                    _ => conj(x[(o + i as isize * rs + j as isize * cs) as usize]),
                });
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "dense_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "dense_emulation_tests.rs"]
mod emulation;
