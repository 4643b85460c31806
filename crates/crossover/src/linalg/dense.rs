//! Factorisations and solvers: LU (solve, inv, det), Cholesky (solve_spd,
//! cholesky), QR, thin SVD, symmetric eigendecomposition.

use super::{
    batch_offsets, check_finite, compute_dtype, flop_factor, mat_at, mat_strides, nbytes,
    parallel_min_flops, require_matrix, require_square, row_major_mut, run_library, Field,
};
use crate::array::{Array, Value};
use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{broadcast_shapes, numel, Layout};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt;
use faer::linalg::lu::partial_pivoting as lu;
use faer::linalg::svd;
use faer::traits::math_utils::real;
use faer::{Conj, Mat, MatMut, MatRef, Par, Side};
use std::sync::Arc;

/// Which dense routine a [`Dense`] op runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Solve,
    SolveSpd,
    Cholesky,
    Qr,
    Inv,
    Det,
    Svd,
    SvdVals,
    Eigh,
}

impl Kind {
    /// The op's name (`solve`, `qr`...).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Solve => "solve",
            Kind::SolveSpd => "solve_spd",
            Kind::Cholesky => "cholesky",
            Kind::Qr => "qr",
            Kind::Inv => "inv",
            Kind::Det => "det",
            Kind::Svd => "svd",
            Kind::SvdVals => "svdvals",
            Kind::Eigh => "eigh",
        }
    }
}

/// One dense routine over a batch of matrices.
/// One dense factorisation or solver over a batch of matrices
/// ([`crate::op::Library::Dense`]).
#[derive(Debug)]
pub struct Dense {
    kind: Kind,
    /// Batch shape of the outputs.
    batch: Vec<usize>,
    /// Matrix size of `a` (rows, cols).
    m: usize,
    n: usize,
    /// Right-hand-side columns (solves).
    k: usize,
    dtype: DType,
}

impl Dense {
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    pub fn key(&self) -> String {
        format!(
            "{} {:?} {}x{} k={} {}",
            self.kind.name(),
            self.batch,
            self.m,
            self.n,
            self.k,
            self.dtype
        )
    }

    pub fn flops(&self) -> f64 {
        let (m, n, k) = (self.m as f64, self.n as f64, self.k as f64);
        let per = match self.kind {
            Kind::Solve => 2.0 / 3.0 * n * n * n + 2.0 * n * n * k,
            Kind::SolveSpd => n * n * n / 3.0 + 2.0 * n * n * k,
            Kind::Cholesky => n * n * n / 3.0,
            Kind::Det => 2.0 / 3.0 * n * n * n,
            Kind::Inv => 2.0 * n * n * n,
            Kind::Qr => 4.0 * m * n * n.min(m),
            Kind::Svd => 14.0 * m * n * n.min(m),
            Kind::SvdVals => 4.0 * m * n * n.min(m),
            Kind::Eigh => 9.0 * n * n * n,
        };
        per * numel(&self.batch) as f64 * flop_factor(self.dtype)
    }

    pub fn bytes(&self) -> f64 {
        let b = numel(&self.batch);
        nbytes(b * (2 * self.m * self.n + self.n * self.k), self.dtype)
    }

    /// The routine, batch shape, rows and columns of `a`, columns of `b`
    /// (solves) and the compute dtype, for the GPU core.
    pub(crate) fn parts(&self) -> (Kind, &[usize], usize, usize, usize, DType) {
        (self.kind, &self.batch, self.m, self.n, self.k, self.dtype)
    }

    pub fn run_cpu(&self, inputs: &[Value]) -> Result<Vec<Value>> {
        super::with_field!(self.kind.name(), self.dtype, T => self.run::<T>(inputs))
    }
}

/// Output of one matrix of the batch, written by the kernels below.
type Outs<'a, T> = (
    Vec<&'a mut [T]>,
    Vec<&'a mut [<T as faer::traits::ComplexField>::Real]>,
);

impl Dense {
    fn op(&self) -> &'static str {
        self.kind.name()
    }

    /// Shapes and dtypes of the outputs.
    pub(crate) fn outputs(&self) -> Vec<(Vec<usize>, DType)> {
        let (m, n, k, d) = (self.m, self.n, self.k, self.dtype);
        let r = m.min(n);
        let with = |tail: &[usize]| {
            let mut s = self.batch.clone();
            s.extend_from_slice(tail);
            s
        };
        let real = d.real_part();
        match self.kind {
            Kind::Solve | Kind::SolveSpd => vec![(with(&[n, k]), d)],
            Kind::Cholesky | Kind::Inv => vec![(with(&[n, n]), d)],
            Kind::Det => vec![(with(&[]), d)],
            Kind::Qr => vec![(with(&[m, r]), d), (with(&[r, n]), d)],
            Kind::Svd => vec![(with(&[m, r]), d), (with(&[r]), real), (with(&[r, n]), d)],
            Kind::SvdVals => vec![(with(&[r]), real)],
            Kind::Eigh => vec![(with(&[n]), real), (with(&[n, n]), d)],
        }
    }

    fn run<T: Field>(&self, inputs: &[Value]) -> Result<Vec<Value>> {
        let a = &inputs[0];
        let a_offs = batch_offsets(&a.layout, 2, &self.batch);
        let (_, _, ars, acs) = mat_strides(&a.layout);
        let b_info = inputs.get(1).map(|b| {
            let (_, _, brs, bcs) = mat_strides(&b.layout);
            (batch_offsets(&b.layout, 2, &self.batch), brs, bcs)
        });
        let outs = self.outputs();
        let nb = numel(&self.batch);
        // Complex outputs are of T, real ones (singular values,
        // eigenvalues) of T::Real; allocate both kinds.
        let mut bufs: Vec<Buffer> = outs
            .iter()
            .map(|(s, d)| Buffer::alloc(*d, numel(s)))
            .collect::<Result<_>>()?;
        // Singular values and eigenvalues are real.
        let real_out: Vec<bool> = (0..outs.len())
            .map(|i| match self.kind {
                Kind::Svd => i == 1,
                Kind::SvdVals | Kind::Eigh => i == 0,
                _ => false,
            })
            .collect();
        let sizes: Vec<usize> = outs.iter().map(|(s, _)| numel(s) / nb.max(1)).collect();
        let parallel = self.flops() >= parallel_min_flops();
        run_library(self.op(), parallel, |par| {
            let (mut full, mut reals): (Vec<&mut [T]>, Vec<&mut [T::Real]>) = (vec![], vec![]);
            for (buf, &is_real) in bufs.iter_mut().zip(&real_out) {
                if is_real {
                    reals.push(real_slice::<T>(buf));
                } else {
                    full.push(buf.as_mut_slice::<T>());
                }
            }
            for bi in 0..nb {
                // SAFETY: offsets and strides come from the input layouts.
                let a_mat = unsafe {
                    mat_at(
                        a.buffer.as_slice::<T>(),
                        a_offs[bi],
                        self.m,
                        self.n,
                        ars,
                        acs,
                    )
                };
                let b_mat = match (&b_info, inputs.get(1)) {
                    (Some((offs, brs, bcs)), Some(b)) => Some(unsafe {
                        mat_at(
                            b.buffer.as_slice::<T>(),
                            offs[bi],
                            self.n,
                            self.k,
                            *brs,
                            *bcs,
                        )
                    }),
                    _ => None,
                };
                let mut fi = full.iter_mut();
                let mut ri = reals.iter_mut();
                let mut one: Outs<'_, T> = (vec![], vec![]);
                for (&is_real, &size) in real_out.iter().zip(&sizes) {
                    if is_real {
                        let s = ri.next().expect("one slice per real output");
                        one.1.push(&mut s[bi * size..(bi + 1) * size]);
                    } else {
                        let s = fi.next().expect("one slice per output");
                        one.0.push(&mut s[bi * size..(bi + 1) * size]);
                    }
                }
                self.one::<T>(a_mat, b_mat, one, par)?;
            }
            Ok(())
        })?;
        Ok(bufs
            .into_iter()
            .zip(outs)
            .map(|(b, (s, _))| Value {
                buffer: Arc::new(b),
                layout: Layout::contiguous(&s),
            })
            .collect())
    }

    /// Runs the routine on one matrix of the batch.
    fn one<T: Field>(
        &self,
        a: MatRef<'_, T>,
        b: Option<MatRef<'_, T>>,
        outs: Outs<'_, T>,
        par: Par,
    ) -> Result<()> {
        let op = self.op();
        let (mut full, mut reals) = outs;
        check_finite(op, a)?;
        if let Some(b) = b {
            check_finite(op, b)?;
        }
        let (m, n, k) = (self.m, self.n, self.k);
        match self.kind {
            Kind::Solve | Kind::Inv | Kind::Det => {
                // Factor M = A^T (a plain copy when A is row-major), so that
                // P M = L U; then A = M^T.
                let mut lu_mat = a.transpose().to_owned();
                let mut fwd = vec![0usize; n];
                let mut bwd = vec![0usize; n];
                let mut mem = MemBuffer::new(
                    lu::factor::lu_in_place_scratch::<usize, T>(n, n, par, Default::default())
                        .or(lu::solve::solve_transpose_in_place_scratch::<usize, T>(
                            n,
                            k.max(n),
                            par,
                        ))
                        .or(lu::inverse::inverse_scratch::<usize, T>(n, par)),
                );
                let stack = MemStack::new(&mut mem);
                let (info, perm) = lu::factor::lu_in_place(
                    lu_mat.as_mut(),
                    &mut fwd,
                    &mut bwd,
                    par,
                    stack,
                    Default::default(),
                );
                let lu_ref = lu_mat.as_ref();
                if self.kind == Kind::Det {
                    // The pivots' product in double, rounded once: a
                    // determinant past float32's range is then +-inf as
                    // NumPy's (a complex64 product overflowing in complex64
                    // arithmetic gives NaN parts instead).
                    let mut d = num_complex::Complex64::new(1.0, 0.0);
                    for i in 0..n {
                        let u = lu_ref[(i, i)];
                        if u == T::zero_() {
                            // Singular: exactly 0 like NumPy (the pivots
                            // after a zero one are 0/0 = NaN).
                            d = num_complex::Complex64::new(0.0, 0.0);
                            break;
                        }
                        d *= u.widen();
                    }
                    if info.transposition_count % 2 == 1 {
                        d = -d;
                    }
                    full[0][0] = T::narrow(d);
                    return Ok(());
                }
                if let Some(i) = (0..n).find(|&i| lu_ref[(i, i)] == T::zero_()) {
                    return Err(singular(op, i));
                }
                match self.kind {
                    Kind::Solve => {
                        let b = b.ok_or_else(|| Error::internal(op, "missing right-hand side"))?;
                        let mut x = b.to_owned();
                        lu::solve::solve_transpose_in_place_with_conj(
                            lu_ref,
                            lu_ref,
                            perm,
                            Conj::No,
                            x.as_mut(),
                            par,
                            stack,
                        );
                        row_major_mut(full[0], n, k).copy_from(x.as_ref());
                    }
                    _ => {
                        // inv(A) = inv(M)^T: write inv(M) column-major, which
                        // reads as its transpose row-major.
                        let dst = col_major_mut(full[0], n, n);
                        lu::inverse::inverse(dst, lu_ref, lu_ref, perm, par, stack);
                    }
                }
                check_result(op, full[0])
            }
            Kind::SolveSpd => {
                // M = A^T holds A's upper triangle in its lower one; for a
                // Hermitian A, M = conj(A) = L L^H, so A = conj(L) conj(L)^H.
                let mut l = a.transpose().to_owned();
                let mut mem = MemBuffer::new(llt::factor::cholesky_in_place_scratch::<T>(
                    n,
                    par,
                    Default::default(),
                ));
                llt_in_place(op, l.as_mut(), par, MemStack::new(&mut mem))?;
                let b = b.ok_or_else(|| Error::internal(op, "missing right-hand side"))?;
                let mut x = b.to_owned();
                llt::solve::solve_in_place_with_conj(
                    l.as_ref(),
                    Conj::Yes,
                    x.as_mut(),
                    par,
                    MemStack::new(&mut MemBuffer::new(
                        llt::solve::solve_in_place_scratch::<T>(n, k, par),
                    )),
                );
                row_major_mut(full[0], n, k).copy_from(x.as_ref());
                check_result(op, full[0])
            }
            Kind::Cholesky => {
                let mut l = a.to_owned();
                let mut mem = MemBuffer::new(llt::factor::cholesky_in_place_scratch::<T>(
                    n,
                    par,
                    Default::default(),
                ));
                llt_in_place(op, l.as_mut(), par, MemStack::new(&mut mem))?;
                let mut dst = row_major_mut(full[0], n, n);
                for i in 0..n {
                    for j in 0..n {
                        dst[(i, j)] = if j <= i { l[(i, j)] } else { T::zero_() };
                    }
                }
                check_result(op, full[0])
            }
            Kind::Qr => {
                let qr = a.qr();
                let r = m.min(n);
                let (q_out, rest) = full.split_at_mut(1);
                row_major_mut(q_out[0], m, r).copy_from(qr.compute_thin_Q().as_ref());
                let mut rd = row_major_mut(rest[0], r, n);
                let thin_r = qr.thin_R();
                for i in 0..r {
                    for j in 0..n {
                        rd[(i, j)] = if j >= i { thin_r[(i, j)] } else { T::zero_() };
                    }
                }
                Ok(())
            }
            Kind::Svd | Kind::SvdVals => {
                let r = m.min(n);
                let vectors = self.kind == Kind::Svd;
                let thin = match T::lapack_svd(op, a, vectors, par) {
                    Some(thin) => thin?,
                    None => faer_svd(op, a, vectors, par)?,
                };
                for (o, x) in reals[0].iter_mut().zip(&thin.s) {
                    *o = real(x);
                }
                if let Some((u, v)) = thin.uv {
                    let (u_out, vt_out) = full.split_at_mut(1);
                    row_major_mut(u_out[0], m, r).copy_from(u.as_ref());
                    // Vt = V^H, written through a row-major view.
                    row_major_mut(vt_out[0], r, n).copy_from(v.adjoint());
                }
                Ok(())
            }
            Kind::Eigh => {
                let e = a
                    .self_adjoint_eigen(Side::Lower)
                    .map_err(|_| eigh_not_converged(op))?;
                row_major_mut(full[0], n, n).copy_from(e.U());
                let s = e.S().column_vector();
                for (o, i) in reals[0].iter_mut().zip(0..n) {
                    *o = real(&s[i]);
                }
                Ok(())
            }
        }
    }
}

/// The real part type's slice of a buffer holding `T::Real` elements.
fn real_slice<T: Field>(buf: &mut Buffer) -> &mut [T::Real] {
    assert_eq!(buf.dtype(), T::REAL_DTYPE, "real output dtype");
    let len = buf.len();
    // SAFETY: the buffer's dtype is T::REAL_DTYPE, whose storage type is
    // T::Real (f32 or f64: checked by the assertion and the Field impls),
    // and it holds `len` of them.
    match T::REAL_DTYPE {
        DType::F32 => unsafe {
            std::slice::from_raw_parts_mut(buf.as_mut_slice::<f32>().as_mut_ptr().cast(), len)
        },
        _ => unsafe {
            std::slice::from_raw_parts_mut(buf.as_mut_slice::<f64>().as_mut_ptr().cast(), len)
        },
    }
}

/// A column-major `m x n` view over `out` (exactly `m*n` long).
fn col_major_mut<T>(out: &mut [T], m: usize, n: usize) -> MatMut<'_, T> {
    assert_eq!(out.len(), m * n, "output slice has the wrong length");
    // SAFETY: `out` holds exactly m*n elements addressed column-major.
    unsafe { MatMut::from_raw_parts_mut(out.as_mut_ptr(), m, n, 1, m.max(1) as isize) }
}

fn llt_in_place<T: Field>(
    op: &'static str,
    a: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) -> Result<()> {
    llt::factor::cholesky_in_place(a, Default::default(), par, stack, Default::default())
        .map(|_| ())
        .map_err(|e| match e {
            llt::factor::LltError::NonPositivePivot { index } => {
                not_positive_definite(op, index + 1)
            }
        })
}

/// A thin SVD: singular values (decreasing) and, if asked, `U` (m x r) and
/// `V` (n x r), r = min(m, n).
pub(crate) struct Thin<T> {
    pub s: Vec<T>,
    pub uv: Option<(Mat<T>, Mat<T>)>,
}

/// `a`'s thin SVD by faer.
fn faer_svd<T: Field>(
    op: &'static str,
    a: MatRef<'_, T>,
    vectors: bool,
    par: Par,
) -> Result<Thin<T>> {
    let (m, n) = (a.nrows(), a.ncols());
    let r = m.min(n);
    let mut s = faer::diag::Diag::<T>::zeros(r);
    let mut uv = vectors.then(|| (Mat::<T>::zeros(m, r), Mat::<T>::zeros(n, r)));
    let compute = if vectors {
        svd::ComputeSvdVectors::Thin
    } else {
        svd::ComputeSvdVectors::No
    };
    let params = svd_params::<T>();
    let mut mem = MemBuffer::new(svd::svd_scratch::<T>(m, n, compute, compute, par, params));
    let (u, v) = match &mut uv {
        Some((u, v)) => (Some(u.as_mut()), Some(v.as_mut())),
        None => (None, None),
    };
    svd::svd(a, s.as_mut(), u, v, par, MemStack::new(&mut mem), params)
        .map_err(|e| svd_error(op, e))?;
    let s = s.column_vector();
    Ok(Thin {
        s: (0..r).map(|i| s[i]).collect(),
        uv,
    })
}

/// faer's SVD parameters with the bidiagonal's divide-and-conquer split down
/// to 32 columns (faer's default stops at 128 and runs QR sweeps below):
/// 100 x 100 on one core, float32 0.82 against 0.96 ms, float64 1.11
/// against 1.43, residuals alike (a standalone faer 0.24 build).
fn svd_params<T: Field>() -> faer::Spec<svd::SvdParams, T> {
    let mut p: svd::SvdParams = <svd::SvdParams as faer::Auto<T>>::auto();
    p.recursion_threshold = 32;
    p.into()
}

fn svd_error(op: &'static str, _e: svd::SvdError) -> Error {
    svd_not_converged(op)
}

// The failures every backend reports alike (the GPU core maps a vendor
// solver's `info` to these).

/// `op`'s matrix is singular: the LU factor's pivot `index` (0-based) is
/// exactly zero.
pub(crate) fn singular(op: &'static str, index: usize) -> Error {
    Error::Numerical {
        op,
        msg: format!("matrix is singular (zero pivot at index {index})"),
    }
}

/// `op`'s matrix is not positive definite: its leading minor of `order`
/// (1-based) is not positive.
pub(crate) fn not_positive_definite(op: &'static str, order: usize) -> Error {
    Error::Numerical {
        op,
        msg: format!(
            "matrix is not positive definite (the leading minor of order {order} is not positive)"
        ),
    }
}

/// `op`'s SVD iteration did not converge.
pub(crate) fn svd_not_converged(op: &'static str) -> Error {
    Error::Numerical {
        op,
        msg: "the SVD iteration did not converge".into(),
    }
}

/// `op`'s symmetric eigenvalue iteration did not converge.
pub(crate) fn eigh_not_converged(op: &'static str) -> Error {
    Error::Numerical {
        op,
        msg: "the eigenvalue iteration did not converge".into(),
    }
}

/// A factorisation that succeeded can still overflow (a nearly singular
/// matrix): report that instead of returning infinities.
fn check_result<T: Field>(op: &'static str, x: &[T]) -> Result<()> {
    if let Some(i) = x.iter().position(|v| !v.finite()) {
        return Err(Error::Numerical {
            op,
            msg: format!(
                "the result is not finite (element {i}): the matrix is singular to working precision"
            ),
        });
    }
    Ok(())
}

// ---- recording --------------------------------------------------------------

fn record(kind: Kind, a: &Array, b: Option<&Array>) -> Result<Vec<Array>> {
    let op = kind.name();
    let dtype = match b {
        Some(b) => compute_dtype(op, DType::promote(a.dtype(), b.dtype()))?,
        None => compute_dtype(op, a.dtype())?,
    };
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let a = a.cast(dtype)?;
    let mut batch = a.shape()[..nd - 2].to_vec();
    let mut inputs = vec![a];
    let mut k = 0;
    if let Some(b) = b {
        let bn = b.ndim();
        k = b.shape()[bn - 1];
        batch = broadcast_shapes(op, &batch, &b.shape()[..bn - 2])?;
        inputs.push(b.cast(dtype)?);
    }
    let dense = Dense {
        kind,
        batch,
        m,
        n,
        k,
        dtype,
    };
    let outs = dense.outputs();
    Array::library(crate::op::Library::Dense(dense), outs, inputs)
}

fn solve_impl(kind: Kind, a: &Array, b: &Array) -> Result<Array> {
    let op = kind.name();
    require_square(op, a)?;
    let n = a.shape()[a.ndim() - 1];
    let vector = b.ndim() == 1;
    let b2 = if vector {
        b.reshape(&[b.shape()[0] as isize, 1])?
    } else {
        require_matrix(op, b)?;
        b.clone()
    };
    let rows = b2.shape()[b2.ndim() - 2];
    if rows != n {
        return Err(Error::Shape {
            op,
            shape: b.shape().to_vec(),
            msg: format!("b has {rows} rows but a {:?} is {n} x {n}", a.shape()),
        });
    }
    let x = record(kind, a, Some(&b2))?.remove(0);
    if vector {
        let mut shape: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
        shape.pop();
        x.reshape(&shape)
    } else {
        Ok(x)
    }
}

/// Solves `a @ x = b` for `x` by LU factorisation with partial pivoting.
///
/// `a` is `(..., n, n)`; `b` is `(n,)` (a vector: `x` is `(..., n)`) or
/// `(..., n, k)`. Batch axes broadcast.
///
/// # Errors
/// [`Error::Shape`] when `a` is not square or `b`'s rows do not match;
/// [`Error::Broadcast`] when the batch axes do not broadcast;
/// [`Error::Numerical`] (when run) when `a` is singular or an input holds
/// NaN or infinity.
///
/// ```
/// use crossover::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 0.0, 0.0, 4.0], &[2, 2])?;
/// let b = Array::from_vec(vec![2.0f64, 8.0], &[2])?;
/// assert_eq!(linalg::solve(&a, &b)?.to_vec::<f64>()?, vec![1.0, 2.0]);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn solve(a: &Array, b: &Array) -> Result<Array> {
    solve_impl(Kind::Solve, a, b)
}

/// Solves `a @ x = b` for a symmetric (Hermitian) positive definite `a`, by
/// Cholesky factorisation; about twice as fast as [`solve`].
///
/// Only the upper triangle of `a` is read (SciPy's
/// `solve(assume_a="pos")` default). Shapes as in [`solve`].
///
/// # Errors
/// As [`solve`]; [`Error::Numerical`] when `a` is not positive definite.
///
/// ```
/// use crossover::{Array, linalg};
/// let a = Array::from_vec(vec![4.0f64, 2.0, 2.0, 3.0], &[2, 2])?;
/// let b = Array::from_vec(vec![6.0f64, 5.0], &[2])?;
/// let x = linalg::solve_spd(&a, &b)?.to_vec::<f64>()?;
/// assert!((x[0] - 1.0).abs() < 1e-12 && (x[1] - 1.0).abs() < 1e-12);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn solve_spd(a: &Array, b: &Array) -> Result<Array> {
    solve_impl(Kind::SolveSpd, a, b)
}

/// The Cholesky factor `L` (lower triangular, `a = L @ L^H`) of a symmetric
/// (Hermitian) positive definite `a`; only the lower triangle of `a` is
/// read, like NumPy.
///
/// # Errors
/// [`Error::Shape`] when `a` is not square; [`Error::Numerical`] when `a`
/// is not positive definite or holds NaN or infinity.
///
/// ```
/// use crossover::{Array, linalg};
/// let a = Array::from_vec(vec![4.0f64, 2.0, 2.0, 5.0], &[2, 2])?;
/// assert_eq!(linalg::cholesky(&a)?.to_vec::<f64>()?, vec![2.0, 0.0, 1.0, 2.0]);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn cholesky(a: &Array) -> Result<Array> {
    require_square("cholesky", a)?;
    Ok(record(Kind::Cholesky, a, None)?.remove(0))
}

/// The reduced QR factorisation `a = q @ r` of an `(..., m, n)` matrix:
/// `q` is `(..., m, min(m, n))` with orthonormal columns, `r` is
/// `(..., min(m, n), n)` upper triangular (NumPy's `mode="reduced"`).
///
/// # Errors
/// [`Error::Shape`] for fewer than 2 dimensions; [`Error::Numerical`] for
/// NaN or infinity in `a`.
///
/// ```
/// use crossover::{Array, linalg};
/// let a = Array::from_vec(vec![3.0f64, 0.0, 4.0, 5.0], &[2, 2])?;
/// let (q, r) = linalg::qr(&a)?;
/// let back = q.matmul(&r)?.to_vec::<f64>()?;
/// assert!((back[2] - 4.0).abs() < 1e-12);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn qr(a: &Array) -> Result<(Array, Array)> {
    require_matrix("qr", a)?;
    let mut v = record(Kind::Qr, a, None)?;
    let r = v.pop().expect("two outputs");
    let q = v.pop().expect("two outputs");
    Ok((q, r))
}

/// The inverse of a square matrix (stack), by LU factorisation.
///
/// # Errors
/// [`Error::Shape`] when not square; [`Error::Numerical`] when singular or
/// holding NaN or infinity.
///
/// ```
/// use crossover::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 0.0, 0.0, 4.0], &[2, 2])?;
/// assert_eq!(linalg::inv(&a)?.to_vec::<f64>()?, vec![0.5, 0.0, 0.0, 0.25]);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn inv(a: &Array) -> Result<Array> {
    require_square("inv", a)?;
    Ok(record(Kind::Inv, a, None)?.remove(0))
}

/// The determinant of a square matrix (stack): shape `a.shape()[..-2]`.
/// A singular matrix has determinant 0 (no error).
///
/// # Errors
/// [`Error::Shape`] when not square; [`Error::Numerical`] for NaN or
/// infinity in `a`.
///
/// ```
/// use crossover::{Array, linalg};
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
/// assert!((linalg::det(&a)?.item()? + 2.0).abs() < 1e-12);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn det(a: &Array) -> Result<Array> {
    require_square("det", a)?;
    Ok(record(Kind::Det, a, None)?.remove(0))
}

/// The thin singular value decomposition `a = u @ diag(s) @ vt`: for an
/// `(..., m, n)` matrix and `r = min(m, n)`, `u` is `(..., m, r)`, `s` is
/// `(..., r)` (real, non-increasing) and `vt` is `(..., r, n)`; NumPy's
/// `svd(a, full_matrices=False)`.
///
/// # Errors
/// [`Error::Shape`] for fewer than 2 dimensions; [`Error::Numerical`] for
/// NaN or infinity in `a`, or if the iteration does not converge.
///
/// ```
/// use crossover::{Array, linalg};
/// let a = Array::from_vec(vec![3.0f64, 0.0, 0.0, -2.0], &[2, 2])?;
/// let (_u, s, _vt) = linalg::svd(&a)?;
/// assert_eq!(s.to_vec::<f64>()?, vec![3.0, 2.0]);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn svd(a: &Array) -> Result<(Array, Array, Array)> {
    require_matrix("svd", a)?;
    let mut v = record(Kind::Svd, a, None)?;
    let vt = v.pop().expect("three outputs");
    let s = v.pop().expect("three outputs");
    let u = v.pop().expect("three outputs");
    Ok((u, s, vt))
}

/// The singular values of `a` only (cheaper than [`svd`]): `(..., r)`,
/// real, non-increasing.
///
/// # Errors
/// As [`svd`].
///
/// ```
/// use crossover::{Array, linalg};
/// let a = Array::from_vec(vec![0.0f32, 2.0, 1.0, 0.0], &[2, 2])?;
/// assert_eq!(linalg::svdvals(&a)?.to_vec::<f32>()?, vec![2.0, 1.0]);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn svdvals(a: &Array) -> Result<Array> {
    require_matrix("svdvals", a)?;
    Ok(record(Kind::SvdVals, a, None)?.remove(0))
}

/// Eigenvalues (real, ascending) and eigenvectors (columns) of a symmetric
/// (Hermitian) matrix: `a @ v = v @ diag(w)`. Only the lower triangle is
/// read, like NumPy's `eigh(a, UPLO="L")`.
///
/// # Errors
/// [`Error::Shape`] when not square; [`Error::Numerical`] for NaN or
/// infinity in `a`, or if the iteration does not converge.
///
/// ```
/// use crossover::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 1.0, 1.0, 2.0], &[2, 2])?;
/// let (w, _v) = linalg::eigh(&a)?;
/// let w = w.to_vec::<f64>()?;
/// assert!((w[0] - 1.0).abs() < 1e-12 && (w[1] - 3.0).abs() < 1e-12);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn eigh(a: &Array) -> Result<(Array, Array)> {
    require_square("eigh", a)?;
    let mut v = record(Kind::Eigh, a, None)?;
    let vecs = v.pop().expect("two outputs");
    let w = v.pop().expect("two outputs");
    Ok((w, vecs))
}
