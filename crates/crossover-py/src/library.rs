//! Library operations (matmul, dense linear algebra, FFT, sparse CSR) for
//! the Python namespaces `crossover.linalg`, `crossover.fft` and
//! `crossover.sparse`, and for NumPy's `np.matmul`/`np.linalg`/`np.fft`
//! called on crossover arrays.
//!
//! Single-output ops go through [`tape::op`] as [`Call::Library`] so `@jit`
//! can replay them; multi-output ops (svd, qr, eigh) run directly, and a
//! trace that uses their results falls back to running Python (the recorder
//! sees arrays made outside the recorded ops).

use crate::args;
use crate::array::wrap;
use crate::convert::{self, Intake};
use crate::errors;
use crate::tape::{op, Call};
use crossover::fft::{self, Norm};
use crossover::sparse::{Csr, Values};
use crossover::{linalg, Array, DType, Operand};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A library op with one array result, and its non-array arguments.
#[derive(Clone, Debug)]
pub enum LibCall {
    Matmul,
    Solve,
    SolveSpd,
    Cholesky,
    Inv,
    Det,
    SvdVals,
    /// `fft`, `ifft`, `rfft`, `irfft` along one axis.
    Fft1 {
        kind: Transform,
        n: Option<usize>,
        axis: isize,
        norm: Norm,
    },
    /// `cumsum` (`prod: false`) or `cumprod` along `axis` (`None`: the
    /// flattened array).
    Scan {
        prod: bool,
        axis: Option<isize>,
    },
    /// `fft2`, `ifft2`, `rfft2`, `irfft2` over the last two axes.
    Fft2 {
        kind: Transform,
        s: Option<[usize; 2]>,
        norm: Norm,
    },
}

/// Which transform of a family: complex forward/inverse, real-input
/// forward, or its inverse (real output).
#[derive(Clone, Copy, Debug)]
pub enum Transform {
    Forward,
    Inverse,
    Real,
    InverseReal,
}

/// Applies a library call to its array arguments (records nothing).
pub fn apply(call: &LibCall, a: &[Array]) -> crossover::Result<Array> {
    match call {
        LibCall::Matmul => a[0].matmul(&a[1]),
        LibCall::Solve => linalg::solve(&a[0], &a[1]),
        LibCall::SolveSpd => linalg::solve_spd(&a[0], &a[1]),
        LibCall::Cholesky => linalg::cholesky(&a[0]),
        LibCall::Inv => linalg::inv(&a[0]),
        LibCall::Det => linalg::det(&a[0]),
        LibCall::SvdVals => linalg::svdvals(&a[0]),
        LibCall::Scan { prod: false, axis } => a[0].cumsum(*axis),
        LibCall::Scan { prod: true, axis } => a[0].cumprod(*axis),
        LibCall::Fft1 {
            kind,
            n,
            axis,
            norm,
        } => {
            let f = match kind {
                Transform::Forward => fft::fft,
                Transform::Inverse => fft::ifft,
                Transform::Real => fft::rfft,
                Transform::InverseReal => fft::irfft,
            };
            f(&a[0], *n, *axis, *norm)
        }
        LibCall::Fft2 { kind, s, norm } => match kind {
            Transform::Forward => fft::fft2(&a[0], *norm),
            Transform::Inverse => fft::ifft2(&a[0], *norm),
            Transform::Real => fft::rfft2(&a[0], *norm),
            Transform::InverseReal => fft::irfft2(&a[0], *s, *norm),
        },
    }
}

/// The operands of one library call: NumPy arrays are read in place
/// (volatile), as [`call`]'s `wrap` computes the result before returning.
fn arrays(objs: &[&Bound<'_, PyAny>]) -> PyResult<Vec<Operand>> {
    objs.iter()
        .map(|o| Ok(Operand::Array(args::array_arg(o, Intake::Volatile)?)))
        .collect()
}

fn call(py: Python<'_>, lib: LibCall, objs: &[&Bound<'_, PyAny>]) -> PyResult<Py<PyAny>> {
    wrap(py, op(py, Call::Library(lib), &arrays(objs)?)?)
}

fn parse_norm(norm: Option<&str>) -> PyResult<Norm> {
    match norm {
        None => Ok(Norm::Backward),
        Some(s) => Norm::parse(s).ok_or_else(|| {
            PyValueError::new_err(format!(
                "fft: norm must be 'backward', 'ortho', 'forward' or None, not {s:?}"
            ))
        }),
    }
}

/// Cumulative sum (``prod=False``) or product along ``axis`` (``None``:
/// over the flattened array), as NumPy's ``cumsum``/``cumprod``.
#[pyfunction]
#[pyo3(signature = (a, axis = None, prod = false))]
pub fn scan(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    axis: Option<isize>,
    prod: bool,
) -> PyResult<Py<PyAny>> {
    call(py, LibCall::Scan { prod, axis }, &[a])
}

/// Matrix product with NumPy's ``@`` semantics (1-D operands, broadcast
/// batch axes).
#[pyfunction]
pub fn matmul(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    call(py, LibCall::Matmul, &[a, b])
}

/// Solves ``a @ x = b``: LU with partial pivoting, or Cholesky with
/// ``assume_a="pos"`` (symmetric positive definite).
#[pyfunction]
#[pyo3(signature = (a, b, assume_a = "gen"))]
pub fn solve(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    assume_a: &str,
) -> PyResult<Py<PyAny>> {
    let lib = match assume_a {
        "gen" | "general" => LibCall::Solve,
        "pos" | "positive definite" => LibCall::SolveSpd,
        other => {
            return Err(PyValueError::new_err(format!(
                "solve: assume_a must be 'gen' or 'pos', not {other:?}"
            )))
        }
    };
    call(py, lib, &[a, b])
}

/// A one-array linear-algebra op by name: ``cholesky``, ``inv``, ``det``,
/// ``svdvals``.
#[pyfunction]
pub fn linalg_unary(py: Python<'_>, name: &str, a: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let lib = match name {
        "cholesky" => LibCall::Cholesky,
        "inv" => LibCall::Inv,
        "det" => LibCall::Det,
        "svdvals" => LibCall::SvdVals,
        other => {
            return Err(PyValueError::new_err(format!(
                "linalg: unknown op {other:?}"
            )))
        }
    };
    call(py, lib, &[a])
}

/// The multi-output factorisations by name: ``svd`` (thin: U, s, Vt),
/// ``qr`` (reduced: Q, R), ``eigh`` (ascending eigenvalues, eigenvectors).
#[pyfunction]
pub fn linalg_multi<'py>(
    py: Python<'py>,
    name: &str,
    a: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let x = args::array_arg(a, Intake::Copy)?;
    let parts: Vec<Array> = errors::engine(py, || match name {
        "svd" => linalg::svd(&x).map(|(u, s, vt)| vec![u, s, vt]),
        "qr" => linalg::qr(&x).map(|(q, r)| vec![q, r]),
        "eigh" => linalg::eigh(&x).map(|(w, v)| vec![w, v]),
        other => Err(crossover::Error::InvalidArgument {
            op: "linalg",
            msg: format!("unknown factorisation {other:?}"),
        }),
    })?;
    let objs = parts
        .into_iter()
        .map(|p| wrap(py, p))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, objs)
}

/// A 1-D transform by name (``fft``, ``ifft``, ``rfft``, ``irfft``) along
/// ``axis``, NumPy's arguments.
#[pyfunction]
#[pyo3(signature = (kind, x, n = None, axis = -1, norm = None))]
pub fn fft1(
    py: Python<'_>,
    kind: &str,
    x: &Bound<'_, PyAny>,
    n: Option<usize>,
    axis: isize,
    norm: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let kind = match kind {
        "fft" => Transform::Forward,
        "ifft" => Transform::Inverse,
        "rfft" => Transform::Real,
        "irfft" => Transform::InverseReal,
        other => {
            return Err(PyValueError::new_err(format!(
                "fft: unknown transform {other:?}"
            )))
        }
    };
    let norm = parse_norm(norm)?;
    call(
        py,
        LibCall::Fft1 {
            kind,
            n,
            axis,
            norm,
        },
        &[x],
    )
}

/// A 2-D transform over the last two axes by name (``fft2``, ``ifft2``,
/// ``rfft2``, ``irfft2``); ``s`` is the output shape, for ``irfft2`` only.
#[pyfunction]
#[pyo3(signature = (kind, x, s = None, norm = None))]
pub fn fft2(
    py: Python<'_>,
    kind: &str,
    x: &Bound<'_, PyAny>,
    s: Option<[usize; 2]>,
    norm: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let kind = match kind {
        "fft2" => Transform::Forward,
        "ifft2" => Transform::Inverse,
        "rfft2" => Transform::Real,
        "irfft2" => Transform::InverseReal,
        other => {
            return Err(PyValueError::new_err(format!(
                "fft: unknown transform {other:?}"
            )))
        }
    };
    if s.is_some() && !matches!(kind, Transform::InverseReal) {
        return Err(PyValueError::new_err(
            "fft2: s is supported for irfft2 only (pad or crop the input instead)",
        ));
    }
    let norm = parse_norm(norm)?;
    call(py, LibCall::Fft2 { kind, s, norm }, &[x])
}

/// A sparse matrix in compressed sparse row form (float32 or float64),
/// immutable. Build it with ``crossover.sparse.csr_matrix`` or
/// ``crossover.sparse.random``.
#[pyclass(name = "csr_matrix", module = "crossover.sparse", frozen)]
pub struct PyCsr {
    pub inner: Csr,
}

fn values_array<'py>(py: Python<'py>, v: &Values) -> Bound<'py, PyAny> {
    match v {
        Values::F32(x) => PyArray1::from_slice(py, x).into_any(),
        Values::F64(x) => PyArray1::from_slice(py, x).into_any(),
    }
}

fn index_vec(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<usize>> {
    let np = obj.py().import("numpy")?;
    let arr = np.call_method1("asarray", (obj, "int64"))?;
    let arr = arr.cast_into::<numpy::PyArray1<i64>>().map_err(|_| {
        PyValueError::new_err(format!("csr_matrix: {what} must be a 1-D integer array"))
    })?;
    let ro = arr.readonly();
    ro.as_slice()?
        .iter()
        .map(|&i| {
            usize::try_from(i).map_err(|_| {
                PyValueError::new_err(format!("csr_matrix: {what} holds a negative entry {i}"))
            })
        })
        .collect()
}

#[pymethods]
impl PyCsr {
    /// From CSR parts (like ``scipy.sparse.csr_matrix((data, indices,
    /// indptr), shape)``); indices must be sorted within rows, without
    /// duplicates.
    #[staticmethod]
    fn from_parts(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        indices: &Bound<'_, PyAny>,
        indptr: &Bound<'_, PyAny>,
        shape: (usize, usize),
    ) -> PyResult<Self> {
        let (indptr, indices) = (index_vec(indptr, "indptr")?, index_vec(indices, "indices")?);
        let values = args::array_arg(data, Intake::Copy)?;
        let (m, n) = shape;
        let inner = errors::engine(py, || match values.dtype() {
            DType::F32 => Csr::from_parts(m, n, indptr, indices, values.to_vec::<f32>()?),
            DType::F64 => Csr::from_parts(m, n, indptr, indices, values.to_vec::<f64>()?),
            d => Err(crossover::Error::DType {
                op: "csr_matrix",
                dtype: d,
                msg: "sparse values must be float32 or float64".into(),
            }),
        })?;
        Ok(PyCsr { inner })
    }

    /// From a dense 2-D array (zeros dropped).
    #[staticmethod]
    fn from_dense(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<Self> {
        let a = args::array_arg(a, Intake::Copy)?;
        Ok(PyCsr {
            inner: errors::engine(py, || Csr::from_dense(&a))?,
        })
    }

    /// A random ``m x n`` matrix with ``round(density*m*n)`` entries
    /// uniform in [0, 1) at distinct random positions (like
    /// ``scipy.sparse.random``; different numbers, from ``seed``).
    #[staticmethod]
    #[pyo3(signature = (m, n, density = 0.01, seed = 0, dtype = None))]
    fn random(
        py: Python<'_>,
        m: i64,
        n: i64,
        density: f64,
        seed: i128,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (m, n) = (
            crate::args::count(m, "number of rows")?,
            crate::args::count(n, "number of columns")?,
        );
        let seed = u64::try_from(seed)
            .map_err(|_| PyValueError::new_err("seed must be between 0 and 2**64 - 1"))?;
        let dtype = match dtype {
            Some(d) if !d.is_none() => convert::parse_dtype(d)?,
            _ => DType::F64,
        };
        Ok(PyCsr {
            inner: errors::engine(py, || Csr::random(m, n, density, seed, dtype))?,
        })
    }

    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.inner.nrows(), self.inner.ncols())
    }

    #[getter]
    fn nnz(&self) -> usize {
        self.inner.nnz()
    }

    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        convert::numpy_dtype(py, self.inner.dtype()).into_any()
    }

    /// The values (a NumPy array, a copy).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        values_array(py, self.inner.values())
    }

    /// Column indices (int32, a copy).
    #[getter]
    fn indices<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        let v: Vec<i32> = self.inner.indices().iter().map(|&i| i as i32).collect();
        PyArray1::from_vec(py, v)
    }

    /// Row pointers (int64, a copy).
    #[getter]
    fn indptr<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let v: Vec<i64> = self.inner.indptr().iter().map(|&i| i as i64).collect();
        PyArray1::from_vec(py, v)
    }

    /// The transpose (a new CSR matrix).
    #[getter(T)]
    fn transpose(&self) -> Self {
        PyCsr {
            inner: self.inner.transpose(),
        }
    }

    /// The dense matrix as a crossover array.
    fn toarray(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap(py, errors::engine(py, || self.inner.to_dense())?)
    }

    /// Sum over all entries (``axis=None``), columns (0) or rows (1).
    #[pyo3(signature = (axis = None))]
    fn sum(&self, py: Python<'_>, axis: Option<isize>) -> PyResult<Py<PyAny>> {
        let axis = match axis {
            None => None,
            Some(a @ (0 | 1)) => Some(a as usize),
            Some(-1) => Some(1),
            Some(-2) => Some(0),
            Some(a) => {
                return Err(PyValueError::new_err(format!(
                    "csr_matrix.sum: axis {a} is out of range for a 2-D matrix"
                )))
            }
        };
        wrap(py, errors::engine(py, || self.inner.sum(axis))?)
    }

    /// ``self @ other``: a CSR matrix for a CSR operand, else a dense
    /// crossover array (vector or matrix operand).
    fn __matmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(o) = other.cast::<PyCsr>() {
            let (a, b) = (&self.inner, &o.get().inner);
            let c = errors::detached(py, || a.matmul(b))?;
            return Ok(Py::new(py, PyCsr { inner: c })?.into_any());
        }
        let x = args::array_arg(other, Intake::Copy).map_err(|_| {
            PyTypeError::new_err("csr_matrix @: operand must be a csr_matrix or an array")
        })?;
        wrap(py, errors::engine(py, || self.inner.matmul_dense(&x))?)
    }

    /// Where ``self @ other`` (both CSR) runs and why, as the report
    /// ``crossover.explain`` prints for arrays: each device's predicted
    /// time or why it cannot run it, the choice and its reason. With
    /// ``run`` the product is computed as well and measured times added.
    #[pyo3(signature = (other, run = true))]
    fn explain_matmul(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        run: bool,
    ) -> PyResult<String> {
        let o = other.cast::<PyCsr>().map_err(|_| {
            PyTypeError::new_err("csr_matrix.explain_matmul: the operand must be a csr_matrix")
        })?;
        let (a, b) = (&self.inner, &o.get().inner);
        let plan = if run {
            crate::device::check(py)?;
            errors::detached(py, || a.matmul_explained(b).map(|(_, plan)| plan))?
        } else {
            errors::engine(py, || a.matmul_plan(b))?
        };
        Ok(plan.to_string())
    }

    fn __repr__(&self) -> String {
        format!(
            "<crossover.sparse.csr_matrix {}x{}, {} stored {}>",
            self.inner.nrows(),
            self.inner.ncols(),
            self.inner.nnz(),
            self.inner.dtype().name()
        )
    }
}
