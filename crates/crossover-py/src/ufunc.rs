//! NumPy ufuncs called on crossover arrays (`np.sin(x)`, `np.add(x, 1)`):
//! the engine's op when it has one for these operands.

use crate::args::{self, UfuncOp};
use crate::array::{wrap, PyArr};
use crate::convert::Intake;
use crate::tape::{op, Call};
use crossover::Operand;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

/// Runs a ufunc the engine has; `None` when it must go to NumPy.
pub fn ufunc_call(
    py: Python<'_>,
    name: &str,
    inputs: &Bound<'_, PyTuple>,
) -> PyResult<Option<Py<PyAny>>> {
    let Some(u) = args::ufunc_op(name) else {
        return Ok(None);
    };
    let mut ops = Vec::with_capacity(inputs.len());
    for x in inputs.iter() {
        if args::defers(&x)? {
            return Ok(None); // NumPy's own machinery keeps the mask
        }
        match args::operand(&x, Intake::Volatile) {
            Ok(Some(o)) => ops.push(o),
            // An unsupported operand (another dtype, an object): NumPy's turn.
            Ok(None) => return Ok(None),
            Err(e) if e.is_instance(py, crate::errors::classes(py)?.dtype.bind(py)) => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        }
    }
    let call = match (u, ops.len()) {
        (UfuncOp::Identity, 1) => {
            return Ok(Some(match &ops[0] {
                Operand::Array(a) => wrap(py, a.clone())?,
                Operand::Scalar(_) => return Ok(None),
            }))
        }
        (UfuncOp::Unary(u), 1) => Call::Unary(u),
        (UfuncOp::Binary(b), 2) => {
            let pair = [ops[0].clone(), ops[1].clone()];
            let (x, y) = (inputs.get_item(0)?, inputs.get_item(1)?);
            if let Some(r) = args::huge_int_binary(py, b, Some(&x), Some(&y), &pair)? {
                return Ok(Some(wrap(py, r)?));
            }
            Call::Binary(b)
        }
        _ => return Ok(None),
    };
    if matches!(call, Call::Unary(_)) {
        if let Operand::Scalar(s) = ops[0] {
            let a = crate::errors::engine(py, || crossover::Array::scalar(s, s.natural_dtype()))?;
            ops[0] = Operand::Array(a);
        }
    }
    if numpy_dtype_missing(&call, &ops) {
        return Ok(None);
    }
    Ok(Some(wrap(py, op(py, call, &ops)?)?))
}

/// Whether NumPy's result has a dtype the engine lacks: bool operands of
/// transcendental functions (float16), of square and of bool ** bool
/// (int8), and sign of bool or complex. NumPy runs those (a fallback) rather than the engine refusing.
fn numpy_dtype_missing(call: &Call, ops: &[Operand]) -> bool {
    let is_bool = |o: &Operand| match o {
        Operand::Array(a) => a.dtype().is_bool(),
        Operand::Scalar(s) => matches!(s, crossover::Scalar::Bool(_)),
    };
    match call {
        // NumPy has no bool sign (its TypeError) and its complex sign is
        // x / |x|: NumPy's turn for both.
        Call::Unary(crossover::UnaryOp::Sign) => ops
            .iter()
            .any(|o| is_bool(o) || matches!(o, Operand::Array(a) if a.dtype().is_complex())),
        Call::Unary(u) => {
            (u.is_transcendental() || *u == crossover::UnaryOp::Square) && ops.iter().all(is_bool)
        }
        Call::Binary(crossover::BinaryOp::Pow) => ops.iter().all(is_bool),
        _ => false,
    }
}

/// `crossover.<name>(x)` for a ufunc of one operand: a crossover or plain
/// NumPy array goes straight to the engine's op, resolved once per
/// function (through [`functions::ufunc`](crate::functions::ufunc), the
/// name matched on every call and a tuple of operands built, a 1,000-point
/// call took 0.12 us longer); anything else takes that general path, with
/// its answers.
fn unary_call(
    py: Python<'_>,
    name: &'static str,
    resolved: &PyOnceLock<Option<UfuncOp>>,
    x: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    if let Some(Operand::Array(a)) = direct_operand(x) {
        match resolved.get_or_init(py, || args::ufunc_op(name)) {
            Some(UfuncOp::Identity) => return wrap(py, a),
            Some(UfuncOp::Unary(u)) => {
                let ops = [Operand::Array(a)];
                let call = Call::Unary(*u);
                if !numpy_dtype_missing(&call, &ops) {
                    return wrap(py, op(py, call, &ops)?);
                }
            }
            _ => {}
        }
    }
    crate::functions::ufunc(py, name, &PyTuple::new(py, [x])?)
}

/// `crossover.<name>(x1, x2)` for a ufunc of two operands: crossover and
/// plain NumPy arrays and Python scalars go straight to the engine's op (as
/// an operator does); a Python complex scalar becomes a 0-d array of NEP
/// 50's precision first (`crossover._complex_scalar`: the engine's scalars
/// are real); anything else takes
/// [`functions::ufunc`](crate::functions::ufunc).
fn binary_call(
    py: Python<'_>,
    name: &'static str,
    resolved: &PyOnceLock<Option<UfuncOp>>,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    // Arrays and Python scalars (at least one array): the
    // general path's steps for them, without its tuple and name look-up.
    // (An operand it cannot read goes to the general path, which reports it.)
    if let (Some(o1), Some(o2)) = (direct_operand(x1), direct_operand(x2)) {
        let any_array = matches!(o1, Operand::Array(_)) || matches!(o2, Operand::Array(_));
        if let (true, Some(UfuncOp::Binary(bop))) =
            (any_array, resolved.get_or_init(py, || args::ufunc_op(name)))
        {
            let ops = [o1, o2];
            if let Some(r) = args::huge_int_binary(py, *bop, Some(x1), Some(x2), &ops)? {
                return wrap(py, r);
            }
            let call = Call::Binary(*bop);
            if !numpy_dtype_missing(&call, &ops) {
                return wrap(py, op(py, call, &ops)?);
            }
        }
    }
    let complex = |x: &Bound<'_, PyAny>| x.is_instance_of::<pyo3::types::PyComplex>();
    if complex(x1) || complex(x2) {
        let as_array = py.import("crossover")?.getattr("_complex_scalar")?;
        let (y1, y2) = (as_array.call1((x1, x2))?, as_array.call1((x2, x1))?);
        return crate::functions::ufunc(py, name, &PyTuple::new(py, [y1, y2])?);
    }
    crate::functions::ufunc(py, name, &PyTuple::new(py, [x1, x2])?)
}

/// A crossover array, a plain NumPy array (read in place, as the general
/// path reads it), or a Python float, int or bool (weak scalars, NEP 50),
/// as [`args::operand`] reads them; `None` for anything else or what it
/// cannot read.
fn direct_operand(x: &Bound<'_, PyAny>) -> Option<Operand> {
    use pyo3::types::{PyBool, PyFloat, PyInt};
    if let Ok(a) = x.cast::<PyArr>() {
        return Some(Operand::Array(a.get().inner()));
    }
    let plain = x.is_exact_instance_of::<PyFloat>()
        || x.is_exact_instance_of::<PyInt>()
        || x.is_exact_instance_of::<PyBool>()
        || args::is_exact_ndarray(x);
    if plain {
        args::operand(x, Intake::Volatile).ok().flatten()
    } else {
        None
    }
}

/// One Python function of `$args`: `$call` with its name and its op,
/// resolved once.
macro_rules! ufunc_function {
    ($call:ident, $name:ident, ($($arg:ident),+)) => {
        #[doc = concat!(
            "Elementwise ``", stringify!($name), "`` in crossover (like ``numpy.",
            stringify!($name), "``); takes crossover arrays, NumPy arrays or ",
            "scalars and returns a lazy crossover array."
        )]
        #[pyfunction]
        #[pyo3(signature = ($($arg),+, /))]
        pub fn $name(py: Python<'_>, $($arg: &Bound<'_, PyAny>),+) -> PyResult<Py<PyAny>> {
            static OP: PyOnceLock<Option<super::UfuncOp>> = PyOnceLock::new();
            super::$call(py, stringify!($name), &OP, $($arg),+)
        }
    };
}

/// The Python functions of the ufuncs `$names` of `$args` in the module
/// `$module` (`crossover.sin`, `crossover.add`...), and `$add` to register
/// them.
macro_rules! ufunc_functions {
    ($module:ident, $add:ident, $call:ident, $takes:literal, $args:tt,
     [$($name:ident),* $(,)?]) => {
        #[doc = concat!("The ufuncs of ", $takes, " as module functions.")]
        pub mod $module {
            use pyo3::prelude::*;
            use pyo3::sync::PyOnceLock;
            $( ufunc_function!($call, $name, $args); )*
        }

        #[doc = concat!("Adds the functions of [`", stringify!($module), "`] to the module.")]
        pub fn $add(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_function(wrap_pyfunction!($module::$name, m)?)?; )*
            Ok(())
        }
    };
}

ufunc_functions!(
    binary,
    add_binary,
    binary_call,
    "two operands",
    (x1, x2),
    [
        add,
        subtract,
        multiply,
        divide,
        power,
        minimum,
        maximum,
        less,
        less_equal,
        greater,
        greater_equal,
        equal,
        not_equal,
        logical_and,
        logical_or,
        arctan2,
        hypot,
    ]
);

ufunc_functions!(
    unary,
    add_unary,
    unary_call,
    "one operand",
    (x),
    [
        negative,
        positive,
        absolute,
        sqrt,
        exp,
        log,
        sin,
        cos,
        tan,
        tanh,
        square,
        floor,
        ceil,
        logical_not,
        log1p,
        expm1,
        log10,
        log2,
        exp2,
        arcsin,
        arccos,
        arctan,
        sinh,
        cosh,
        arcsinh,
        arccosh,
        arctanh,
    ]
);
