//! Python argument conversion: operands, axes, shapes, index keys, and the
//! NumPy ufunc names the engine implements.

use crate::array::PyArr;
use crate::convert::{numpy_to_engine, Intake};
use crossover::{Array, BinaryOp, Operand, Scalar, SliceArg, UnaryOp};
use numpy::PyUntypedArray;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyEllipsis, PyFloat, PyInt, PyList, PySlice, PyTuple, PyType};

static NP_GENERIC: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static NP_NDARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A NumPy type by name, looked up once (an import per call cost about
/// 3,000 instructions: the module lookup, `Py_BuildValue`, string hashing).
fn numpy_type<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<&'py Bound<'py, PyType>> {
    cell.get_or_try_init(py, || -> PyResult<_> {
        Ok(py
            .import("numpy")?
            .getattr(name)?
            .cast_into::<PyType>()?
            .unbind())
    })
    .map(|t| t.bind(py))
}

/// `numpy.generic`, the base class of NumPy scalars.
fn np_generic(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    numpy_type(py, &NP_GENERIC, "generic")
}

/// Converts an operand: crossover arrays as they are, Python scalars as weak
/// scalars (NumPy 2 rules), NumPy arrays and scalars as (strong) arrays.
/// `None` for types crossover does not take (the caller returns
/// `NotImplemented` or falls back to NumPy).
pub fn operand(obj: &Bound<'_, PyAny>, intake: Intake) -> PyResult<Option<Operand>> {
    if let Ok(a) = obj.cast::<PyArr>() {
        return Ok(Some(Operand::Array(a.get().inner())));
    }
    // Python scalars are weak (NEP 50); NumPy scalars (np.float64 is a
    // float subclass) are strong, handled below.
    if obj.is_exact_instance_of::<PyBool>() {
        return Ok(Some(Operand::Scalar(Scalar::Bool(obj.extract()?))));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return Ok(Some(Operand::Scalar(int_scalar(obj)?)));
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        return Ok(Some(Operand::Scalar(Scalar::Float(obj.extract()?))));
    }
    let py = obj.py();
    if obj.cast::<PyUntypedArray>().is_ok() {
        return Ok(Some(Operand::Array(numpy_to_engine(obj, intake)?)));
    }
    if obj.is_instance(np_generic(py)?)? {
        // A NumPy scalar: a fresh 0-d array of its dtype (strong, like NumPy),
        // immutable, so a trace may keep it as a constant.
        let a = numpy_to_engine(obj, Intake::Borrow)?;
        crate::tape::note_constant(&a);
        return Ok(Some(Operand::Array(a)));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some(Operand::Scalar(Scalar::Bool(obj.is_truthy()?))));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Some(Operand::Scalar(int_scalar(obj)?)));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Some(Operand::Scalar(Scalar::Float(obj.extract()?))));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        // Python data: NumPy makes a fresh array of it (a literal in a traced
        // function is a constant of the trace).
        let a = numpy_to_engine(obj, intake)?;
        crate::tape::note_constant(&a);
        return Ok(Some(Operand::Array(a)));
    }
    Ok(None)
}

fn int_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    Ok(match obj.extract::<i64>() {
        Ok(i) => Scalar::Int(i),
        // Beyond int64: the nearest float (NumPy raises for int arrays).
        Err(_) => Scalar::Float(obj.extract()?),
    })
}

/// Whether `obj` is a plain `numpy.ndarray` (not a subclass).
pub fn is_exact_ndarray(obj: &Bound<'_, PyAny>) -> bool {
    numpy_type(obj.py(), &NP_NDARRAY, "ndarray").is_ok_and(|t| obj.get_type().is(t))
}

/// Whether a binary operator should leave `obj` to its own implementation
/// (return `NotImplemented`): NumPy subclasses that outrank crossover's
/// `__array_priority__` (masked arrays, 15), whose meaning a plain
/// conversion would drop (the mask).
pub fn defers(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if obj.cast::<PyUntypedArray>().is_err() {
        return Ok(false);
    }
    let py = obj.py();
    if obj.get_type().is(numpy_type(py, &NP_NDARRAY, "ndarray")?) {
        return Ok(false);
    }
    let priority: f64 = obj
        .getattr("__array_priority__")
        .and_then(|p| p.extract())
        .unwrap_or(0.0);
    Ok(priority > crate::array::ARRAY_PRIORITY)
}

/// A Python int beyond int64 (NumPy's NEP 50: no integer dtype holds it).
fn huge_int(obj: &Bound<'_, PyAny>) -> Option<bool> {
    if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return None;
    }
    if obj.extract::<i64>().is_ok() {
        return None;
    }
    Some(obj.gt(0i64).unwrap_or(true))
}

/// `x op y` (the Python objects, `None` for a crossover array) where one
/// side is a Python int beyond int64 and the other an
/// integer or bool array: arithmetic is NumPy's `OverflowError`; a
/// comparison has the same answer for every element (exactly, where a float
/// conversion would round). `None` when the rule does not apply.
pub fn huge_int_binary(
    py: Python<'_>,
    b: BinaryOp,
    x: Option<&Bound<'_, PyAny>>,
    y: Option<&Bound<'_, PyAny>>,
    ops: &[Operand; 2],
) -> PyResult<Option<Array>> {
    let (hx, hy) = (x.and_then(huge_int), y.and_then(huge_int));
    let (huge_left, positive, arr) = match (hx, hy, ops) {
        (Some(p), None, [_, Operand::Array(a)]) => (true, p, a),
        (None, Some(p), [Operand::Array(a), _]) => (false, p, a),
        _ => return Ok(None),
    };
    // NumPy's logical ops convert the int to int64 whatever the array.
    let logical = matches!(b, BinaryOp::And | BinaryOp::Or);
    if (arr.dtype().is_float() || arr.dtype().is_complex()) && !logical {
        return Ok(None);
    }
    let Some(big) = (if huge_left { x } else { y }) else {
        return Ok(None);
    };
    // uint64 holds ints from 2^63 to 2^64 - 1 (NEP 50: the result stays
    // uint64): the value becomes a 0-d uint64 array of the same dtype.
    if arr.dtype() == crossover::DType::U64 && !logical {
        if let Ok(v) = big.extract::<u64>() {
            let c = Operand::Array(crate::errors::engine(py, || Array::from_vec(vec![v], &[]))?);
            let pair = if huge_left {
                [c, ops[1].clone()]
            } else {
                [ops[0].clone(), c]
            };
            return crate::tape::op(py, crate::tape::Call::Binary(b), &pair).map(Some);
        }
    }
    // NumPy answers comparisons of integer arrays exactly, but a bool
    // array meets the int as int64 and overflows like arithmetic.
    if b == BinaryOp::Div {
        return Ok(None); // true division is in float64, where it fits
    }
    if !b.is_comparison() || arr.dtype().is_bool() {
        return Err(crate::errors::overflow_error(
            py,
            format!(
                "Python integer {} out of bounds for {}",
                big.str()?,
                if logical {
                    crossover::DType::I64
                } else {
                    arr.dtype()
                }
            ),
        ));
    }
    // As `array op big`: flip the comparison when the int is on the left.
    let b = match (huge_left, b) {
        (true, BinaryOp::Lt) => BinaryOp::Gt,
        (true, BinaryOp::Le) => BinaryOp::Ge,
        (true, BinaryOp::Gt) => BinaryOp::Lt,
        (true, BinaryOp::Ge) => BinaryOp::Le,
        (_, b) => b,
    };
    let value = match b {
        BinaryOp::Lt | BinaryOp::Le => positive,
        BinaryOp::Gt | BinaryOp::Ge => !positive,
        BinaryOp::Ne => true,
        _ => false,
    };
    let call = crate::tape::Call::Full {
        shape: arr.shape().to_vec(),
        value: Scalar::Bool(value),
        dtype: crossover::DType::Bool,
    };
    crate::tape::op(py, call, &[]).map(Some)
}

/// Like [`operand`] but an array is required (scalars become 0-d arrays).
pub fn array_arg(obj: &Bound<'_, PyAny>, intake: Intake) -> PyResult<Array> {
    match operand(obj, intake)? {
        Some(Operand::Array(a)) => Ok(a),
        Some(Operand::Scalar(s)) => {
            crate::errors::engine(obj.py(), || Array::scalar(s, s.natural_dtype()))
        }
        None => Ok(numpy_to_engine(obj, intake)?),
    }
}

/// An `axis` argument: `None`, an int, or a sequence of ints.
pub fn axes(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<isize>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => {
            if let Ok(i) = o.extract::<isize>() {
                return Ok(Some(vec![i]));
            }
            o.extract::<Vec<isize>>()
                .map(Some)
                .map_err(|_| PyTypeError::new_err("axis must be None, an int or a tuple of ints"))
        }
    }
}

/// A shape given as ints (`reshape(2, 3)`) or one sequence (`reshape((2, 3))`).
pub fn shape_args(args: &Bound<'_, PyTuple>) -> PyResult<Vec<isize>> {
    if args.len() == 1 {
        let a = args.get_item(0)?;
        if let Ok(i) = a.extract::<isize>() {
            return Ok(vec![i]);
        }
        return a
            .extract::<Vec<isize>>()
            .map_err(|_| PyTypeError::new_err("shape must be ints or a tuple of ints"));
    }
    args.extract::<Vec<isize>>()
        .map_err(|_| PyTypeError::new_err("shape must be ints or a tuple of ints"))
}

/// A non-negative shape (`zeros((2, 3))`, `zeros(5)`).
pub fn shape(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    if obj.is_instance_of::<PyInt>() {
        return to_usize(&[dim(obj)?]);
    }
    let items: Vec<Bound<'_, PyAny>> = obj
        .try_iter()
        .and_then(|it| it.collect())
        .map_err(|_| PyTypeError::new_err("shape must be an int or a tuple of ints"))?;
    let v: Vec<isize> = items.iter().map(dim).collect::<PyResult<_>>()?;
    to_usize(&v)
}

/// One dimension: an int (or `__index__`); beyond the address space it is
/// NumPy's `ValueError`, not an `OverflowError` of the conversion.
fn dim(obj: &Bound<'_, PyAny>) -> PyResult<isize> {
    let i = obj
        .call_method0("__index__")
        .map_err(|_| PyTypeError::new_err("shape must be an int or a tuple of ints"))?;
    match i.extract::<isize>() {
        Ok(v) => Ok(v),
        Err(_) if i.lt(0i64)? => Err(PyValueError::new_err("negative dimensions are not allowed")),
        Err(_) => Err(PyValueError::new_err(
            "array is too big: a dimension does not fit the address space",
        )),
    }
}

/// A count that must not be negative (`linspace(num=)`, sparse sizes):
/// NumPy's `ValueError` rather than a failed unsigned conversion.
pub fn count(value: i64, what: &str) -> PyResult<usize> {
    usize::try_from(value)
        .map_err(|_| PyValueError::new_err(format!("{what} must be non-negative, got {value}")))
}

fn to_usize(v: &[isize]) -> PyResult<Vec<usize>> {
    v.iter()
        .map(|&d| {
            usize::try_from(d)
                .map_err(|_| PyValueError::new_err("negative dimensions are not allowed"))
        })
        .collect()
}

/// A basic-indexing key as slice arguments, or `None` when it needs
/// advanced indexing (integer or boolean arrays), which the engine lacks.
pub fn index_key(key: &Bound<'_, PyAny>, shape: &[usize]) -> PyResult<Option<Vec<SliceArg>>> {
    let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    let mut out = Vec::with_capacity(items.len());
    let mut ellipsis = None;
    for item in &items {
        if item.is_none() {
            out.push(SliceArg::NewAxis);
        } else if item.is_instance_of::<PyEllipsis>() {
            if ellipsis.is_some() {
                return Err(PyIndexError::new_err(
                    "an index can only have a single ellipsis ('...')",
                ));
            }
            ellipsis = Some(out.len());
        } else if let Ok(s) = item.cast::<PySlice>() {
            let get = |n: &str| -> PyResult<Option<isize>> { s.getattr(n)?.extract() };
            let step = get("step")?.unwrap_or(1);
            if step == 0 {
                return Err(PyValueError::new_err("slice step cannot be zero"));
            }
            out.push(SliceArg::Range {
                start: get("start")?,
                stop: get("stop")?,
                step,
            });
        } else if item.is_instance_of::<PyBool>() {
            return Ok(None);
        } else if let Ok(i) = item
            .call_method0("__index__")
            .and_then(|i| i.extract::<isize>())
        {
            out.push(SliceArg::Index(i));
        } else {
            return Ok(None);
        }
    }
    let consumed = out
        .iter()
        .filter(|k| !matches!(k, SliceArg::NewAxis))
        .count();
    if consumed > shape.len() {
        return Err(PyIndexError::new_err(format!(
            "too many indices for array: array is {}-dimensional, but {consumed} were indexed",
            shape.len()
        )));
    }
    if let Some(at) = ellipsis {
        let fill = shape.len() - consumed;
        out.splice(at..at, std::iter::repeat_n(SliceArg::full(), fill));
    }
    // Bounds of integer indices (NumPy raises IndexError).
    let mut d = 0;
    for k in &out {
        match *k {
            SliceArg::NewAxis => {}
            SliceArg::Index(i) => {
                let n = shape[d] as isize;
                if i < -n || i >= n {
                    return Err(PyIndexError::new_err(format!(
                        "index {i} is out of bounds for axis {d} with size {n}"
                    )));
                }
                d += 1;
            }
            SliceArg::Range { .. } => d += 1,
        }
    }
    Ok(Some(out))
}

/// The engine op of a NumPy ufunc name (`np.sin.__name__` is `"sin"`).
#[derive(Clone, Copy, Debug)]
pub enum UfuncOp {
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// `np.positive`: the value itself.
    Identity,
}

pub fn ufunc_op(name: &str) -> Option<UfuncOp> {
    use BinaryOp as B;
    use UnaryOp as U;
    Some(match name {
        "negative" => UfuncOp::Unary(U::Neg),
        "positive" => UfuncOp::Identity,
        "absolute" | "abs" => UfuncOp::Unary(U::Abs),
        "sqrt" => UfuncOp::Unary(U::Sqrt),
        "exp" => UfuncOp::Unary(U::Exp),
        "log" => UfuncOp::Unary(U::Log),
        "sin" => UfuncOp::Unary(U::Sin),
        "cos" => UfuncOp::Unary(U::Cos),
        "tan" => UfuncOp::Unary(U::Tan),
        "tanh" => UfuncOp::Unary(U::Tanh),
        "square" => UfuncOp::Unary(U::Square),
        "floor" => UfuncOp::Unary(U::Floor),
        "ceil" => UfuncOp::Unary(U::Ceil),
        "logical_not" => UfuncOp::Unary(U::Not),
        "add" => UfuncOp::Binary(B::Add),
        "subtract" => UfuncOp::Binary(B::Sub),
        "multiply" => UfuncOp::Binary(B::Mul),
        "divide" | "true_divide" => UfuncOp::Binary(B::Div),
        "power" => UfuncOp::Binary(B::Pow),
        "minimum" => UfuncOp::Binary(B::Minimum),
        "maximum" => UfuncOp::Binary(B::Maximum),
        "less" => UfuncOp::Binary(B::Lt),
        "less_equal" => UfuncOp::Binary(B::Le),
        "greater" => UfuncOp::Binary(B::Gt),
        "greater_equal" => UfuncOp::Binary(B::Ge),
        "equal" => UfuncOp::Binary(B::Eq),
        "not_equal" => UfuncOp::Binary(B::Ne),
        "logical_and" => UfuncOp::Binary(B::And),
        "logical_or" => UfuncOp::Binary(B::Or),
        "arctan2" => UfuncOp::Binary(B::Atan2),
        "hypot" => UfuncOp::Binary(B::Hypot),
        "sign" => UfuncOp::Unary(U::Sign),
        "conjugate" | "conj" => UfuncOp::Unary(U::Conj),
        // Not ufuncs in NumPy (`np.real` is a function); crossover's
        // `real`/`imag` reach the engine through `ufunc`.
        "real" => UfuncOp::Unary(U::Real),
        "imag" => UfuncOp::Unary(U::Imag),
        // The float functions named as in NumPy.
        _ => UfuncOp::Unary(
            *UnaryOp::ALL
                .iter()
                .find(|u| u.is_transcendental() && u.name() == name)?,
        ),
    })
}

/// Names of the ufuncs the engine implements (for docs and tests).
pub const UFUNCS: &[&str] = &[
    "negative",
    "positive",
    "absolute",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "tanh",
    "square",
    "floor",
    "ceil",
    "logical_not",
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "minimum",
    "maximum",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "conjugate",
    "log1p",
    "expm1",
    "log10",
    "log2",
    "exp2",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "arctan2",
    "hypot",
    "sign",
];
