//! Module-level functions: array creation, NumPy-style functions that are
//! not methods, `@jit` support (trace, replay, materialise) and `info()`.

use crate::args;
use crate::array::{compute, normalize_perm, ufunc_call, wrap, PyArr};
use crate::convert::{self, Intake};
use crate::errors;
use crate::tape::{self, op, Call, Tape};
use crossover::{Array, DType, Operand, Scalar, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

fn dtype_or(dtype: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    match dtype {
        Some(d) if !d.is_none() => convert::parse_dtype(d),
        _ => Ok(default),
    }
}

fn cast_if(py: Python<'_>, a: Array, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Array> {
    match dtype {
        Some(d) if !d.is_none() => op(
            py,
            Call::Cast(convert::parse_dtype(d)?),
            &[Operand::Array(a)],
        ),
        _ => Ok(a),
    }
}

/// A crossover array from a NumPy array, a crossover array, a list or a
/// scalar. NumPy data is copied in (crossover arrays are immutable values,
/// so later changes to the NumPy array never affect results), except a
/// read-only NumPy view of crossover's own memory (``np.asarray(x)``),
/// which shares it. ``copy=False`` shares any other NumPy array's memory
/// instead ([`convert::share_numpy`]: the array sees later changes, and
/// results made from it are computed at once), or raises ValueError where
/// that needs a copy (a cast, misaligned or byte-swapped memory).
#[pyfunction]
#[pyo3(signature = (obj, dtype = None, copy = None))]
pub fn asarray(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    copy: Option<bool>,
) -> PyResult<Py<PyAny>> {
    if let Ok(a) = obj.cast::<PyArr>() {
        return wrap(py, cast_if(py, a.get().inner(), dtype)?);
    }
    if let (Ok(arr), false) = (obj.cast::<numpy::PyUntypedArray>(), copy == Some(true)) {
        if let Some(shared) = convert::engine_view(arr) {
            return wrap(py, cast_if(py, shared, dtype)?);
        }
    }
    if let (Ok(arr), Some(false)) = (obj.cast::<numpy::PyUntypedArray>(), copy) {
        let shared = convert::share_numpy(arr)?;
        if let Some(d) = dtype.filter(|d| !d.is_none()) {
            if convert::parse_dtype(d)? != shared.dtype() {
                return Err(PyValueError::new_err(format!(
                    "asarray(copy=False): casting {} to another dtype needs a copy",
                    shared.dtype()
                )));
            }
        }
        // Not `wrap`: that would compute and copy an array still reading
        // the NumPy memory, which this one must keep doing.
        return Ok(Py::new(py, PyArr::new(shared))?.into_any());
    }
    let a = args::array_arg(obj, Intake::Copy)?;
    wrap(py, cast_if(py, a, dtype)?)
}

/// Like ``asarray`` (NumPy's ``array``): always a crossover array.
#[pyfunction]
#[pyo3(signature = (obj, dtype = None, copy = true))]
pub fn array(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    copy: bool,
) -> PyResult<Py<PyAny>> {
    let _ = copy; // values are immutable: sharing is never observable
    asarray(py, obj, dtype, None)
}

fn scalar(obj: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    match args::operand(obj, Intake::Borrow)? {
        Some(Operand::Scalar(s)) => Ok(s),
        Some(Operand::Array(a)) if a.numel() == 1 => {
            let v = errors::engine(obj.py(), || a.item())?;
            Ok(if a.dtype().is_float() {
                Scalar::Float(v)
            } else if a.dtype().is_bool() {
                Scalar::Bool(v != 0.0)
            } else {
                Scalar::Int(v as i64)
            })
        }
        _ => Err(PyTypeError::new_err("fill_value must be a scalar")),
    }
}

/// An array filled with ``fill_value`` (costs no memory inside fused work).
#[pyfunction]
#[pyo3(signature = (shape, fill_value, dtype = None))]
pub fn full(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let value = scalar(fill_value)?;
    let d = dtype_or(dtype, value.natural_dtype())?;
    let call = Call::Full {
        shape: args::shape(shape)?,
        value,
        dtype: d,
    };
    wrap(py, op(py, call, &[])?)
}

/// An array of zeros.
#[pyfunction]
#[pyo3(signature = (shape, dtype = None))]
pub fn zeros(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let call = Call::Full {
        shape: args::shape(shape)?,
        value: Scalar::Int(0),
        dtype: dtype_or(dtype, DType::F64)?,
    };
    wrap(py, op(py, call, &[])?)
}

/// An array of ones.
#[pyfunction]
#[pyo3(signature = (shape, dtype = None))]
pub fn ones(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let call = Call::Full {
        shape: args::shape(shape)?,
        value: Scalar::Int(1),
        dtype: dtype_or(dtype, DType::F64)?,
    };
    wrap(py, op(py, call, &[])?)
}

/// Evenly spaced values in ``[start, stop)`` (NumPy's ``arange``).
#[pyfunction]
#[pyo3(signature = (start, stop = None, step = None, dtype = None))]
pub fn arange(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    stop: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let (lo, hi) = match stop.filter(|s| !s.is_none()) {
        Some(s) => (start.clone(), s.clone()),
        None => (0i64.into_pyobject(py)?.into_any(), start.clone()),
    };
    let step = match step.filter(|s| !s.is_none()) {
        Some(s) => s.clone(),
        None => 1i64.into_pyobject(py)?.into_any(),
    };
    let all_int = [&lo, &hi, &step]
        .iter()
        .all(|v| v.is_instance_of::<pyo3::types::PyInt>());
    let default = if all_int { DType::I64 } else { DType::F64 };
    let call = Call::Arange {
        start: lo.extract()?,
        stop: hi.extract()?,
        step: step.extract()?,
        dtype: dtype_or(dtype, default)?,
    };
    wrap(py, op(py, call, &[])?)
}

/// ``num`` evenly spaced values from ``start`` to ``stop``.
#[pyfunction]
#[pyo3(signature = (start, stop, num = 50, endpoint = true, dtype = None))]
pub fn linspace(
    py: Python<'_>,
    start: f64,
    stop: f64,
    num: i64,
    endpoint: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let num = usize::try_from(num).map_err(|_| {
        PyValueError::new_err(format!("Number of samples, {num}, must be non-negative."))
    })?;
    let call = Call::Linspace {
        start,
        stop,
        num,
        endpoint,
        dtype: dtype_or(dtype, DType::F64)?,
    };
    wrap(py, op(py, call, &[])?)
}

/// Elements of ``x`` where ``condition`` is true, else of ``y``.
#[pyfunction]
#[pyo3(name = "where")]
pub fn where_(
    py: Python<'_>,
    condition: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let c = Operand::Array(args::array_arg(condition, Intake::Volatile)?);
    let operand = |o: &Bound<'_, PyAny>| -> PyResult<Operand> {
        match args::operand(o, Intake::Volatile)? {
            Some(v) => Ok(v),
            None => Ok(Operand::Array(args::array_arg(o, Intake::Volatile)?)),
        }
    };
    wrap(py, op(py, Call::Where, &[c, operand(x)?, operand(y)?])?)
}

/// Applies the engine's version of a NumPy ufunc by name (``"sin"``,
/// ``"add"``...) to crossover arrays, NumPy arrays or scalars.
#[pyfunction]
#[pyo3(signature = (name, *inputs))]
pub fn ufunc(py: Python<'_>, name: &str, inputs: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    ufunc_call(py, name, inputs)?.ok_or_else(|| {
        errors::dtype_error(
            py,
            format!("{name}: not an engine ufunc, or unsupported operand types/count"),
        )
    })
}

/// Broadcasts ``x`` to ``shape`` (a view, no copy).
#[pyfunction]
pub fn broadcast_to(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let a = args::array_arg(x, Intake::Copy)?;
    wrap(
        py,
        op(
            py,
            Call::BroadcastTo(args::shape(shape)?),
            &[Operand::Array(a)],
        )?,
    )
}

/// Inserts a length-one axis at ``axis``.
#[pyfunction]
pub fn expand_dims(py: Python<'_>, x: &Bound<'_, PyAny>, axis: isize) -> PyResult<Py<PyAny>> {
    let a = args::array_arg(x, Intake::Copy)?;
    wrap(py, op(py, Call::ExpandDims(axis), &[Operand::Array(a)])?)
}

/// Permutes axes (NumPy's ``transpose``); ``axes=None`` reverses them.
#[pyfunction]
#[pyo3(signature = (x, axes = None))]
pub fn transpose(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axes: Option<Vec<isize>>,
) -> PyResult<Py<PyAny>> {
    let a = args::array_arg(x, Intake::Copy)?;
    let perm = match axes {
        Some(v) => normalize_perm(py, &v, a.ndim())?,
        None => (0..a.ndim()).rev().collect(),
    };
    wrap(py, op(py, Call::Permute(perm), &[Operand::Array(a)])?)
}

// ---- @jit support ---------------------------------------------------------

fn engine_arrays(objs: &Bound<'_, PyList>, lazy: bool) -> PyResult<Vec<Array>> {
    let intake = if lazy { Intake::Copy } else { Intake::Borrow };
    objs.iter().map(|o| args::array_arg(&o, intake)).collect()
}

/// Converts `@jit` array arguments: NumPy arrays are borrowed (the call
/// computes before returning) or, for ``lazy=True``, copied.
#[pyfunction]
pub fn _to_inputs(
    py: Python<'_>,
    objs: &Bound<'_, PyList>,
    lazy: bool,
) -> PyResult<Vec<Py<PyAny>>> {
    engine_arrays(objs, lazy)?
        .into_iter()
        .map(|a| wrap(py, a))
        .collect()
}

/// Whether a trace is being recorded on this thread.
#[pyfunction]
pub fn _tracing() -> bool {
    tape::tracing()
}

/// Starts recording a trace whose inputs are `inputs`.
#[pyfunction]
pub fn _trace_begin(inputs: Vec<Bound<'_, PyArr>>) -> PyResult<()> {
    let arrays: Vec<Array> = inputs.iter().map(|a| a.get().inner()).collect();
    tape::begin(&arrays).map_err(pyo3::exceptions::PyRuntimeError::new_err)
}

/// Stops recording; returns the tape, or a string saying why the trace
/// cannot be replayed.
#[pyfunction]
pub fn _trace_end(py: Python<'_>, outputs: Vec<Bound<'_, PyArr>>) -> PyResult<Py<PyAny>> {
    let arrays: Vec<Array> = outputs.iter().map(|a| a.get().inner()).collect();
    match tape::end(&arrays) {
        Ok(t) => Ok(Py::new(py, t)?.into_any()),
        Err(why) => Ok(why.into_pyobject(py)?.into_any().unbind()),
    }
}

/// Drops an unfinished trace (the function raised).
#[pyfunction]
pub fn _trace_abort() {
    tape::abort()
}

/// Computes engine arrays and returns them as writeable NumPy arrays
/// (zero-copy for buffers nothing else references).
fn to_numpy_owned(py: Python<'_>, arrays: Vec<Array>) -> PyResult<Vec<Py<PyAny>>> {
    compute(py, &arrays)?;
    let values: Vec<Value> = arrays
        .iter()
        .map(|a| errors::engine(py, || a.value()))
        .collect::<PyResult<_>>()?;
    drop(arrays);
    values
        .into_iter()
        .map(|v| Ok(convert::owned_numpy(py, v)?.unbind()))
        .collect()
}

/// Replays a tape on `inputs`: lazy crossover arrays with ``lazy``, else
/// computed NumPy arrays.
#[pyfunction]
pub fn _replay(
    py: Python<'_>,
    tape: &Bound<'_, Tape>,
    inputs: &Bound<'_, PyList>,
    lazy: bool,
) -> PyResult<Vec<Py<PyAny>>> {
    let arrays = engine_arrays(inputs, lazy)?;
    let tape = tape.get();
    if lazy {
        let outs = errors::engine(py, || tape.replay(arrays))?;
        return outs.into_iter().map(|a| wrap(py, a)).collect();
    }
    let points = tape.compiled_points();
    if points > 0 {
        if let Some(Some(outs)) =
            crate::compute::run_short(py, points, || tape.run_compiled(&arrays))?
        {
            return to_numpy_owned(py, outs);
        }
    }
    let outs = errors::engine(py, || tape.replay(arrays.clone()))?;
    // Catches its own panics: a capture that fails leaves the tape as it was.
    tape.capture(&arrays, &outs);
    to_numpy_owned(py, outs)
}

/// Computes crossover arrays together and returns writeable NumPy arrays.
#[pyfunction]
pub fn _materialize(py: Python<'_>, arrays: Vec<Bound<'_, PyArr>>) -> PyResult<Vec<Py<PyAny>>> {
    tape::note_read("materialize");
    let arrays: Vec<Array> = arrays.iter().map(|a| a.get().inner()).collect();
    to_numpy_owned(py, arrays)
}

/// A crossover array reading `obj` in place, for `crossover._numpy`'s
/// reductions (`xo.sum(numpy_array)`): a crossover array is returned as
/// is; NumPy memory is borrowed as volatile, so every result made from it
/// is computed (and copied if it still views `obj`) before Python sees it
/// (see `convert::settle`). The borrowing array itself must not reach user
/// code: it would change when the NumPy array does.
#[pyfunction]
pub fn _borrow_volatile(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if obj.cast::<PyArr>().is_ok() {
        return Ok(obj.clone().unbind());
    }
    let a = args::array_arg(obj, Intake::Volatile)?;
    Ok(Py::new(py, PyArr::new(a))?.into_any())
}

/// Wraps a NumPy array that nothing else references (a fresh result of a
/// NumPy fallback) without copying it.
#[pyfunction]
pub fn _adopt(py: Python<'_>, arr: &Bound<'_, numpy::PyUntypedArray>) -> PyResult<Py<PyAny>> {
    wrap(py, convert::borrow_numpy(arr)?)
}

/// Panics inside the engine guard (with the GIL held, or released): for
/// tests that panics reach Python only as `InternalError`.
#[pyfunction]
pub fn _test_panic(py: Python<'_>, detached: bool) -> PyResult<()> {
    if detached {
        errors::detached(py, || -> crossover::Result<()> {
            panic!("test panic (detached)")
        })
    } else {
        errors::engine(py, || -> crossover::Result<()> { panic!("test panic") })
    }
}

/// Version, SIMD level, threads and devices of this build.
#[pyfunction]
pub fn info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("version", crossover::VERSION)?;
    d.set_item("simd", crossover::cpu::simd::level().name())?;
    d.set_item("threads", crossover::cpu::threads())?;
    d.set_item(
        "blas",
        crossover::linalg::blas_library().map(|(path, config)| format!("{config} ({path})")),
    )?;
    // The m*n*k from which float32/float64 products run through it.
    let from = PyDict::new(py);
    for dtype in [crossover::DType::F32, crossover::DType::F64] {
        from.set_item(dtype.name(), crossover::linalg::blas_min_mnk(dtype))?;
    }
    d.set_item("blas_min_mnk", from)?;
    // The matrix side from which real SVDs reduce in the BLAS's LAPACK
    // (None: never).
    let lapack = crossover::linalg::svd_lapack_available();
    d.set_item(
        "svd_lapack",
        lapack.then_some("?gebrd + ?bdsdc, faer's back-transformations"),
    )?;
    let from = PyDict::new(py);
    for dtype in [crossover::DType::F32, crossover::DType::F64] {
        let side = crossover::linalg::svd_lapack_min_dim(dtype);
        from.set_item(dtype.name(), (side != usize::MAX).then_some(side))?;
    }
    d.set_item("svd_lapack_min_dim", from)?;
    let mut devices = vec!["cpu"];
    if crate::device::gpu_unusable().is_none() {
        devices.push("gpu");
    }
    d.set_item("devices", devices)?;
    d.set_item("gpu", crate::device::gpu_status())?;
    let e = crossover::Engine::global();
    let runs = PyDict::new(py);
    for k in [crossover::DeviceKind::Cpu, crossover::DeviceKind::Gpu] {
        runs.set_item(k.name(), e.kernels_run(k))?;
    }
    d.set_item("kernels_run", runs)?;
    d.set_item("device_policy", crate::device::get_device())?;
    d.set_item("ufuncs", args::UFUNCS.to_vec())?;
    Ok(d)
}
