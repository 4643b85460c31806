//! The Python exception hierarchy and the mapping from engine errors.
//!
//! Every class derives from `CrossoverError` and from the exception a NumPy
//! user would catch: shapes and argument values `ValueError`, axes
//! `numpy.exceptions.AxisError`, dtypes `TypeError`, memory `MemoryError`,
//! Python ints out of range `OverflowError`, devices `RuntimeError`,
//! malformed expressions `ValueError` (with `.position`), numerical failures
//! `numpy.linalg.LinAlgError`. A stopped computation is a plain
//! `KeyboardInterrupt`. Panics never cross into Python as anything but
//! `InternalError`.

use crossover::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The exception classes, created once per interpreter.
pub struct Classes {
    pub base: Py<PyType>,
    pub shape: Py<PyType>,
    pub axis: Py<PyType>,
    pub argument: Py<PyType>,
    pub memory: Py<PyType>,
    pub overflow: Py<PyType>,
    pub dtype: Py<PyType>,
    pub expression: Py<PyType>,
    pub numerical: Py<PyType>,
    pub device: Py<PyType>,
    pub file: Py<PyType>,
    pub internal: Py<PyType>,
    pub fallback: Py<PyType>,
    pub fallback_warning: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn make(
    py: Python<'_>,
    name: &str,
    bases: Vec<Bound<'_, PyAny>>,
    doc: &str,
) -> PyResult<Py<PyType>> {
    let dict = PyDict::new(py);
    dict.set_item("__doc__", doc)?;
    dict.set_item("__module__", "crossover")?;
    let ty =
        py.import("builtins")?
            .getattr("type")?
            .call1((name, PyTuple::new(py, bases)?, dict))?;
    Ok(ty.cast_into::<PyType>()?.unbind())
}

fn build(py: Python<'_>) -> PyResult<Classes> {
    let b = py.import("builtins")?;
    let builtin = |n: &str| b.getattr(n);
    let base = make(
        py,
        "CrossoverError",
        vec![builtin("Exception")?],
        "Base class of every error raised by crossover.",
    )?;
    let sub = |name: &str, other: Bound<'_, PyAny>, doc: &str| {
        make(py, name, vec![base.bind(py).clone().into_any(), other], doc)
    };
    let linalg = py.import("numpy.linalg")?.getattr("LinAlgError")?;
    let shape = sub(
        "ShapeError",
        builtin("ValueError")?,
        "Shapes that do not fit the operation (broadcasting, reshape, data length, too big).",
    )?;
    let axis_error = py.import("numpy.exceptions")?.getattr("AxisError")?;
    Ok(Classes {
        axis: make(
            py,
            "AxisError",
            vec![shape.bind(py).clone().into_any(), axis_error],
            "An axis out of range for the array's rank (a numpy.exceptions.AxisError).",
        )?,
        shape,
        memory: sub(
            "OutOfMemoryError",
            builtin("MemoryError")?,
            "An array that cannot fit in this machine's memory, refused before any work.",
        )?,
        overflow: sub(
            "IntegerOverflowError",
            builtin("OverflowError")?,
            "A Python int out of range for an integer array's dtype (NumPy's NEP 50 rule).",
        )?,
        argument: sub(
            "ArgumentError",
            builtin("ValueError")?,
            "An invalid argument value (zero step, negative scale, unknown option...).",
        )?,
        dtype: sub(
            "DTypeError",
            builtin("TypeError")?,
            "A dtype the operation does not support.",
        )?,
        expression: sub(
            "ExpressionError",
            builtin("ValueError")?,
            "A malformed expression string or an unknown name in it.\n\n\
             Attributes: ``position`` (character index of the problem) and ``expression``.",
        )?,
        numerical: sub(
            "NumericalError",
            linalg,
            "A numerical failure (singular matrix, not positive definite, non-finite input).",
        )?,
        device: sub(
            "DeviceError",
            builtin("RuntimeError")?,
            "A device cannot run the work (absent, unusable, out of memory, forced but unavailable).",
        )?,
        file: sub(
            "FileError",
            builtin("OSError")?,
            "Reading or writing a file (profile, trace, report) failed.",
        )?,
        internal: sub(
            "InternalError",
            builtin("RuntimeError")?,
            "A bug in crossover (a caught panic or a broken invariant). Please report it.",
        )?,
        fallback: sub(
            "FallbackError",
            builtin("NotImplementedError")?,
            "Raised instead of falling back to NumPy when set_fallback('raise') is active.",
        )?,
        fallback_warning: make(
            py,
            "FallbackWarning",
            vec![builtin("UserWarning")?],
            "Warned (once per function) when crossover runs a NumPy function on host arrays \
             because the engine does not have it.",
        )?,
        base,
    })
}

/// The exception classes (created on first use).
pub fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || build(py))
}

/// Adds the classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let c = classes(m.py())?;
    for (name, t) in [
        ("CrossoverError", &c.base),
        ("ShapeError", &c.shape),
        ("AxisError", &c.axis),
        ("ArgumentError", &c.argument),
        ("OutOfMemoryError", &c.memory),
        ("IntegerOverflowError", &c.overflow),
        ("DTypeError", &c.dtype),
        ("ExpressionError", &c.expression),
        ("NumericalError", &c.numerical),
        ("DeviceError", &c.device),
        ("FileError", &c.file),
        ("InternalError", &c.internal),
        ("FallbackError", &c.fallback),
        ("FallbackWarning", &c.fallback_warning),
    ] {
        m.add(name, t.clone_ref(m.py()))?;
    }
    Ok(())
}

fn raise(py: Python<'_>, ty: &Py<PyType>, msg: String) -> PyErr {
    PyErr::from_type(ty.bind(py).clone(), msg)
}

/// Converts an engine error into the matching Python exception.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let c = match classes(py) {
        Ok(c) => c,
        Err(err) => return err,
    };
    let msg = e.to_string();
    match &e {
        Error::Axis { .. } => raise(py, &c.axis, msg),
        Error::Broadcast { .. }
        | Error::Shape { .. }
        | Error::TooBig { .. }
        | Error::DataLength { .. } => raise(py, &c.shape, msg),
        Error::Interrupted { .. } => PyErr::new::<pyo3::exceptions::PyKeyboardInterrupt, _>(msg),
        Error::InvalidArgument { .. } => raise(py, &c.argument, msg),
        Error::Parse { pos, expr, .. } => expression_error(py, c, msg, *pos, Some(expr.clone())),
        Error::UnknownName { pos, .. } => expression_error(py, c, msg, *pos, None),
        _ => match e.kind() {
            ErrorKind::Value => raise(py, &c.argument, msg),
            ErrorKind::Type => raise(py, &c.dtype, msg),
            ErrorKind::Parse => raise(py, &c.expression, msg),
            ErrorKind::Numerical => raise(py, &c.numerical, msg),
            ErrorKind::Device => raise(py, &c.device, msg),
            ErrorKind::Io => raise(py, &c.file, msg),
            ErrorKind::Internal => raise(py, &c.internal, msg),
            ErrorKind::Memory => raise(py, &c.memory, msg),
            ErrorKind::Overflow => raise(py, &c.overflow, msg),
            ErrorKind::Interrupted => PyErr::new::<pyo3::exceptions::PyKeyboardInterrupt, _>(msg),
        },
    }
}

fn expression_error(
    py: Python<'_>,
    c: &Classes,
    msg: String,
    pos: usize,
    expr: Option<String>,
) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let inst = c.expression.bind(py).call1((msg.clone(),))?;
        inst.setattr("position", pos)?;
        inst.setattr("expression", expr.clone())?;
        Ok(PyErr::from_value(inst))
    };
    make().unwrap_or_else(|e| e)
}

/// A `DTypeError` with a message.
pub fn dtype_error(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    match classes(py) {
        Ok(c) => raise(py, &c.dtype, msg.into()),
        Err(e) => e,
    }
}

/// An `AxisError` (a `numpy.exceptions.AxisError`) with a message.
pub fn axis_error(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    match classes(py) {
        Ok(c) => raise(py, &c.axis, msg.into()),
        Err(e) => e,
    }
}

/// An `IntegerOverflowError` (an `OverflowError`) with a message.
pub fn overflow_error(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    match classes(py) {
        Ok(c) => raise(py, &c.overflow, msg.into()),
        Err(e) => e,
    }
}

/// A `DeviceError` with a message.
pub fn device_error(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    match classes(py) {
        Ok(c) => raise(py, &c.device, msg.into()),
        Err(e) => e,
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs engine code with the GIL held, mapping its errors and panics.
pub fn engine<T>(py: Python<'_>, f: impl FnOnce() -> crossover::Result<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(|e| to_py(py, e)),
        Err(p) => Err(to_py(
            py,
            Error::Internal {
                op: "python binding",
                msg: panic_message(p),
            },
        )),
    }
}

/// Runs engine code with the GIL released (other Python threads run
/// meanwhile), mapping its errors and panics.
pub fn detached<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> crossover::Result<T> + Send,
) -> PyResult<T> {
    let r = py.detach(move || catch_unwind(AssertUnwindSafe(f)).map_err(panic_message));
    match r {
        Ok(r) => r.map_err(|e| to_py(py, e)),
        Err(msg) => Err(to_py(
            py,
            Error::Internal {
                op: "python binding",
                msg,
            },
        )),
    }
}
