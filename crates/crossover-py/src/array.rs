//! `crossover.ndarray`: a lazy engine array with NumPy's Python interface.
//!
//! Operators, indexing and methods record engine ops and return pending
//! arrays; NumPy functions reach the same ops through `__array_ufunc__` and
//! `__array_function__`. Reading values (`numpy()`, `np.asarray`, `float()`,
//! `bool()`, printing values) computes what is pending, with the GIL released.

use crate::args;
use crate::convert;
use crate::tape::{self, op, Call};
use crossover::{Array, BinaryOp, ReduceOp, UnaryOp};
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyModule, PyString, PyTuple};
use std::sync::{Mutex, RwLock};

/// A crossover array: an n-dimensional array of one dtype whose value may
/// not be computed yet.
///
/// Operations record work and return at once; the work runs (fused into as
/// few passes over memory as possible, on all cores) when a value is needed:
/// ``numpy()``, ``np.asarray(x)``, ``float(x)``, ``bool(x)``, ``x.eval()``.
/// Arrays are immutable values: there is no in-place assignment.
#[pyclass(name = "ndarray", module = "crossover", frozen, weakref)]
pub struct PyArr {
    /// The current value; item assignment (`x[k] = v`) rebinds it.
    cell: RwLock<Array>,
    /// The private NumPy array that holds the value after an assignment,
    /// written in place by the next one while nothing else can see it
    /// (see `setitem`).
    pub(crate) backing: Mutex<Option<Py<PyAny>>>,
}

impl PyArr {
    pub fn new(a: Array) -> PyArr {
        PyArr {
            cell: RwLock::new(a),
            backing: Mutex::new(None),
        }
    }

    /// The current value (a cheap handle).
    pub fn inner(&self) -> Array {
        self.cell.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether nothing but this object can see the value: no other handle,
    /// view or NumPy array shares it and no device holds a copy.
    pub(crate) fn value_is_private(&self) -> bool {
        let a = self.cell.read().unwrap_or_else(|p| p.into_inner());
        a.is_sole_handle() && a.residency() == Some(crossover::residency::Locations::HOST)
    }

    /// Rebinds the value (item assignment).
    pub(crate) fn rebind(&self, a: Array, backing: Option<Py<PyAny>>) {
        *self.cell.write().unwrap_or_else(|p| p.into_inner()) = a;
        *self.backing.lock().unwrap_or_else(|p| p.into_inner()) = backing;
    }
}

/// Wraps an engine array as a Python object.
pub fn wrap(py: Python<'_>, a: Array) -> PyResult<Py<PyAny>> {
    let a = crate::convert::settle(py, a)?;
    Ok(Py::new(py, PyArr::new(a))?.into_any())
}

static HOOKS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// A function of the pure-Python protocol module `crossover._numpy`
/// (NumPy fallbacks, `__array_function__` dispatch).
pub fn hook<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    HOOKS
        .get_or_try_init(py, || -> PyResult<_> {
            Ok(py.import("crossover._numpy")?.unbind())
        })?
        .bind(py)
        .getattr(name)
}

use crate::array_ops::Arith;
pub use crate::compute::{compute, value_of};
pub use crate::ufunc::ufunc_call;

/// crossover's `__array_priority__` (above NumPy's 0.0).
pub const ARRAY_PRIORITY: f64 = 10.0;

#[pymethods]
impl PyArr {
    /// Tuple of array dimensions.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner().shape())
    }

    /// The NumPy dtype of the elements.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArrayDescr> {
        convert::numpy_dtype(py, self.inner().dtype())
    }

    /// Number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.inner().ndim()
    }

    /// Number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.inner().numel()
    }

    /// Bytes per element.
    #[getter]
    fn itemsize(&self) -> usize {
        self.inner().dtype().size()
    }

    /// Bytes of the elements (as if contiguous).
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner().numel() * self.inner().dtype().size()
    }

    /// The transposed array (a view, no copy).
    #[getter(T)]
    fn transposed(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap(
            py,
            op(
                py,
                Call::Permute(rev(self.inner().ndim())),
                &[self.operand()],
            )?,
        )
    }

    /// Where the value lives: ``"gpu"`` when a computed value has a valid
    /// copy in GPU memory (a GPU kernel made it, or ``to_device`` moved
    /// it), else ``"cpu"``.
    #[getter]
    fn device(&self) -> &'static str {
        match self.inner().residency() {
            Some(l) if l.contains(crossover::DeviceKind::Gpu) => "gpu",
            _ => "cpu",
        }
    }

    /// Whether the value has been computed.
    #[getter]
    fn is_ready(&self) -> bool {
        self.inner().is_ready()
    }

    fn __len__(&self) -> PyResult<usize> {
        self.inner()
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of unsized object"))
    }

    /// NumPy's text of the values (computing them), e.g. `array([1., 2.])`.
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::display::text(py, self, "__repr__")
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        crate::display::text(py, self, "__str__")
    }

    fn __format__<'py>(&self, py: Python<'py>, spec: &str) -> PyResult<Bound<'py, PyAny>> {
        self.readonly(py, "format()")?
            .call_method1("__format__", (spec,))
    }

    /// Computes the value now (if pending) and returns the array itself.
    fn eval(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        tape::note_read("eval()");
        compute(slf.py(), std::slice::from_ref(&slf.get().inner()))?;
        Ok(slf)
    }

    /// The value as a NumPy array. Without ``copy=True`` it views
    /// crossover's memory (no copy) and is read-only, since crossover arrays
    /// are immutable.
    #[pyo3(signature = (copy = false))]
    fn numpy<'py>(&self, py: Python<'py>, copy: bool) -> PyResult<Bound<'py, PyAny>> {
        let v = self.readonly(py, "numpy()")?;
        if copy {
            v.call_method1("copy", ("C",))
        } else {
            Ok(v)
        }
    }

    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut v = self.readonly(py, "conversion to NumPy")?;
        if let Some(d) = dtype.filter(|d| !d.is_none()) {
            if copy == Some(false) && convert::parse_dtype(d).ok() != Some(self.inner().dtype()) {
                return Err(PyValueError::new_err(
                    "converting to another dtype needs a copy, but copy=False",
                ));
            }
            v = v.call_method1("astype", (d,))?;
        } else if copy == Some(true) {
            v = v.call_method1("copy", ("C",))?;
        }
        Ok(v)
    }

    /// The single element as a Python scalar.
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.readonly(py, "item()")?.call_method0("item")
    }

    /// The values as nested Python lists.
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.readonly(py, "tolist()")?.call_method0("tolist")
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        self.readonly(py, "bool()")?.is_truthy()
    }

    fn __float__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.readonly(py, "float()")?.call_method0("__float__")
    }

    fn __int__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.readonly(py, "int()")?.call_method0("__int__")
    }

    fn __index__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.readonly(py, "index")?.call_method0("__index__")
    }

    /// Pickling sends the values (computed) and rebuilds with `asarray`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let values = self
            .readonly(py, "pickling")?
            .call_method1("copy", ("C",))?;
        let asarray = py.import("crossover")?.getattr("asarray")?;
        PyTuple::new(py, [asarray, PyTuple::new(py, [values])?.into_any()])
    }

    /// A new object with the same value (values are immutable; a later
    /// assignment to either object rebinds only that one).
    fn __copy__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap(py, self.inner())
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        wrap(py, self.inner())
    }

    fn __hash__(&self) -> PyResult<isize> {
        Err(PyTypeError::new_err("unhashable type: 'crossover.ndarray'"))
    }

    fn __getitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let me = slf.get();
        match args::index_key(key, me.inner().shape())? {
            Some(k) => wrap(py, op(py, Call::Slice(k), &[me.operand()])?),
            // Integer/boolean array indexing: NumPy does it on host arrays.
            None => Ok(hook(py, "getitem")?.call1((slf, key))?.unbind()),
        }
    }

    /// `x[key] = value`, with NumPy's keys, broadcasting and casts (see
    /// `setitem` for what other arrays see).
    fn __setitem__(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::setitem::assign(slf, key, value)
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let n = slf.get().__len__()?;
        let items = PyList::empty(py);
        for i in 0..n {
            items.append(Self::__getitem__(slf, &i.into_pyobject(py)?.into_any())?)?;
        }
        Ok(items.call_method0("__iter__")?.unbind())
    }

    // ---- arithmetic ------------------------------------------------------

    fn __add__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Engine(BinaryOp::Add), false)
    }
    fn __radd__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Engine(BinaryOp::Add), true)
    }
    fn __sub__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Engine(BinaryOp::Sub), false)
    }
    fn __rsub__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Engine(BinaryOp::Sub), true)
    }
    fn __mul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Engine(BinaryOp::Mul), false)
    }
    fn __rmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Engine(BinaryOp::Mul), true)
    }
    fn __truediv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Engine(BinaryOp::Div), false)
    }
    fn __rtruediv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Engine(BinaryOp::Div), true)
    }
    fn __pow__(&self, o: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if !modulo.is_none() {
            return Ok(o.py().NotImplemented());
        }
        // Constant exponents (`x**2`, `x**0.5`...) are rewritten by the
        // engine (`Array::binary`), for every caller. NumPy's operator
        // makes `bool ** 2` `square(bool)`, int8, a dtype the engine lacks:
        // NumPy's turn (`bool ** 3` is int64, as the engine gives).
        if self.inner().dtype().is_bool()
            && o.is_exact_instance_of::<pyo3::types::PyInt>()
            && o.extract::<i64>().is_ok_and(|v| v == 2)
        {
            let me = Py::new(o.py(), PyArr::new(self.inner()))?;
            let square = o.py().import("numpy")?.getattr("square")?;
            return Ok(square.call1((me,))?.unbind());
        }
        self.binary(o, BinaryOp::Pow, false)
    }
    fn __rpow__(&self, o: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if !modulo.is_none() {
            return Ok(o.py().NotImplemented());
        }
        self.binary(o, BinaryOp::Pow, true)
    }
    fn __floordiv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::NumPy("floor_divide"), false)
    }
    fn __rfloordiv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::NumPy("floor_divide"), true)
    }
    fn __mod__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::NumPy("remainder"), false)
    }
    fn __rmod__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::NumPy("remainder"), true)
    }
    fn __matmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::NumPy("matmul"), false)
    }
    fn __rmatmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::NumPy("matmul"), true)
    }
    fn __and__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Logical(BinaryOp::And, "bitwise_and"), false)
    }
    fn __rand__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Logical(BinaryOp::And, "bitwise_and"), true)
    }
    fn __or__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Logical(BinaryOp::Or, "bitwise_or"), false)
    }
    fn __ror__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::arith(slf, o, Arith::Logical(BinaryOp::Or, "bitwise_or"), true)
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.unary(py, UnaryOp::Neg)
    }
    fn __pos__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap(py, self.inner())
    }
    fn __abs__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.unary(py, UnaryOp::Abs)
    }
    fn __invert__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if slf.get().inner().dtype().is_bool() {
            return slf.get().unary(py, UnaryOp::Not);
        }
        Ok(py
            .import("numpy")?
            .getattr("invert")?
            .call1((slf,))?
            .unbind())
    }

    fn __richcmp__(&self, o: &Bound<'_, PyAny>, cmp: CompareOp) -> PyResult<Py<PyAny>> {
        let b = match cmp {
            CompareOp::Lt => BinaryOp::Lt,
            CompareOp::Le => BinaryOp::Le,
            CompareOp::Gt => BinaryOp::Gt,
            CompareOp::Ge => BinaryOp::Ge,
            CompareOp::Eq => BinaryOp::Eq,
            CompareOp::Ne => BinaryOp::Ne,
        };
        if o.is_none() && matches!(b, BinaryOp::Eq | BinaryOp::Ne) {
            // NumPy compares with None elementwise: all False for ==.
            let call = Call::Full {
                shape: self.inner().shape().to_vec(),
                value: crossover::Scalar::Bool(b == BinaryOp::Ne),
                dtype: crossover::DType::Bool,
            };
            return wrap(o.py(), op(o.py(), call, &[])?);
        }
        self.binary(o, b, false)
    }

    // ---- NumPy protocols -------------------------------------------------

    /// Above NumPy's 0.0: libraries that pick the implementation of a
    /// mixed NumPy/crossover operation by priority (Dask's ``tensordot``,
    /// ``divide``) pick crossover's.
    #[classattr]
    #[allow(non_upper_case_globals)]
    const __array_priority__: f64 = ARRAY_PRIORITY;

    #[pyo3(signature = (ufunc, method, *inputs, **kwargs))]
    fn __array_ufunc__(
        &self,
        ufunc: &Bound<'_, PyAny>,
        method: &Bound<'_, PyString>,
        inputs: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let py = ufunc.py();
        if method.to_cow()? == "__call__" && kwargs.is_none_or(|k| k.is_empty()) {
            let name = ufunc.getattr(pyo3::intern!(py, "__name__"))?;
            if let Some(r) = ufunc_call(py, &name.cast::<PyString>()?.to_cow()?, inputs)? {
                return Ok(r);
            }
        }
        let kwargs = match kwargs {
            Some(k) => k.clone(),
            None => PyDict::new(py),
        };
        Ok(hook(py, "array_ufunc")?
            .call1((ufunc, method, inputs, kwargs))?
            .unbind())
    }

    fn __array_function__(
        &self,
        func: &Bound<'_, PyAny>,
        types: &Bound<'_, PyAny>,
        args: &Bound<'_, PyAny>,
        kwargs: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let py = func.py();
        Ok(hook(py, "array_function")?
            .call1((func, types, args, kwargs))?
            .unbind())
    }

    // ---- methods -----------------------------------------------------------

    /// The array converted to ``dtype``.
    #[pyo3(signature = (dtype, copy = true))]
    fn astype(&self, py: Python<'_>, dtype: &Bound<'_, PyAny>, copy: bool) -> PyResult<Py<PyAny>> {
        let _ = copy; // values are immutable: a copy is never observable
        let d = convert::parse_dtype(dtype)?;
        wrap(py, op(py, Call::Cast(d), &[self.operand()])?)
    }

    /// A new array with the same values in fresh memory.
    fn copy(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap(py, op(py, Call::Copy, &[self.operand()])?)
    }

    /// The same values with a new shape (one dimension may be -1).
    #[pyo3(signature = (*shape, order = "C"))]
    fn reshape(
        &self,
        py: Python<'_>,
        shape: &Bound<'_, PyTuple>,
        order: &str,
    ) -> PyResult<Py<PyAny>> {
        if order != "C" {
            return Err(PyValueError::new_err("only order='C' is supported"));
        }
        let s = args::shape_args(shape)?;
        wrap(py, op(py, Call::Reshape(s), &[self.operand()])?)
    }

    /// Permutes the axes (reverses them when none are given).
    #[pyo3(signature = (*axes))]
    fn transpose(&self, py: Python<'_>, axes: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let perm = if axes.is_empty() || (axes.len() == 1 && axes.get_item(0)?.is_none()) {
            rev(self.inner().ndim())
        } else {
            let v = args::shape_args(axes)?;
            normalize_perm(axes.py(), &v, self.inner().ndim())?
        };
        wrap(py, op(py, Call::Permute(perm), &[self.operand()])?)
    }

    /// Interchanges two axes.
    fn swapaxes(&self, py: Python<'_>, axis1: isize, axis2: isize) -> PyResult<Py<PyAny>> {
        wrap(py, op(py, Call::SwapAxes(axis1, axis2), &[self.operand()])?)
    }

    /// The elements as a 1-d array.
    #[pyo3(signature = (order = "C"))]
    fn ravel(&self, py: Python<'_>, order: &str) -> PyResult<Py<PyAny>> {
        self.reshape(py, &PyTuple::new(py, [-1isize])?, order)
    }

    /// A 1-d copy of the elements.
    #[pyo3(signature = (order = "C"))]
    fn flatten(&self, py: Python<'_>, order: &str) -> PyResult<Py<PyAny>> {
        self.reshape(py, &PyTuple::new(py, [-1isize])?, order)
    }

    /// Removes axes of length one.
    #[pyo3(signature = (axis = None))]
    fn squeeze(&self, py: Python<'_>, axis: Option<isize>) -> PyResult<Py<PyAny>> {
        wrap(py, op(py, Call::Squeeze(axis), &[self.operand()])?)
    }

    /// Sum of elements over the given axes (floats accumulate in float64).
    #[pyo3(signature = (axis = None, dtype = None, out = None, keepdims = false))]
    fn sum(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        self.reduce(py, ReduceOp::Sum, axis, keepdims, dtype, out)
    }

    /// Product over the given axes (ints wrap in int64; floats in float64).
    #[pyo3(signature = (axis = None, dtype = None, out = None, keepdims = false))]
    fn prod(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        self.reduce(py, ReduceOp::Prod, axis, keepdims, dtype, out)
    }

    /// Arithmetic mean over the given axes.
    #[pyo3(signature = (axis = None, dtype = None, out = None, keepdims = false))]
    fn mean(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        self.reduce(py, ReduceOp::Mean, axis, keepdims, dtype, out)
    }

    /// Variance (one stable pass).
    #[pyo3(signature = (axis = None, dtype = None, out = None, ddof = 0, keepdims = false))]
    fn var(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        ddof: i64,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        self.reduce(
            py,
            ReduceOp::Var {
                ddof: Self::ddof(ddof)?,
            },
            axis,
            keepdims,
            dtype,
            out,
        )
    }

    /// Standard deviation.
    #[pyo3(signature = (axis = None, dtype = None, out = None, ddof = 0, keepdims = false))]
    fn std(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        ddof: i64,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        self.reduce(
            py,
            ReduceOp::Std {
                ddof: Self::ddof(ddof)?,
            },
            axis,
            keepdims,
            dtype,
            out,
        )
    }

    /// Minimum (NaN if any element is NaN).
    #[pyo3(signature = (axis = None, out = None, keepdims = false))]
    fn min(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        self.reduce(py, ReduceOp::Min, axis, keepdims, None, out)
    }

    /// Maximum (NaN if any element is NaN).
    #[pyo3(signature = (axis = None, out = None, keepdims = false))]
    fn max(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        self.reduce(py, ReduceOp::Max, axis, keepdims, None, out)
    }

    /// Index of the first minimum (flat index when ``axis`` is None).
    #[pyo3(signature = (axis = None))]
    fn argmin(&self, py: Python<'_>, axis: Option<isize>) -> PyResult<Py<PyAny>> {
        wrap(
            py,
            op(py, Call::ArgReduce { max: false, axis }, &[self.operand()])?,
        )
    }

    /// Index of the first maximum (flat index when ``axis`` is None).
    #[pyo3(signature = (axis = None))]
    fn argmax(&self, py: Python<'_>, axis: Option<isize>) -> PyResult<Py<PyAny>> {
        wrap(
            py,
            op(py, Call::ArgReduce { max: true, axis }, &[self.operand()])?,
        )
    }
}

fn rev(n: usize) -> Vec<usize> {
    (0..n).rev().collect()
}

/// Resolves negative axes of a permutation (the engine checks the rest).
pub fn normalize_perm(py: Python<'_>, axes: &[isize], ndim: usize) -> PyResult<Vec<usize>> {
    axes.iter()
        .map(|&a| {
            let b = if a < 0 { a + ndim as isize } else { a };
            usize::try_from(b).map_err(|_| {
                crate::errors::axis_error(
                    py,
                    format!("axis {a} is out of bounds for array of dimension {ndim}"),
                )
            })
        })
        .collect()
}
