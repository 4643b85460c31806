//! NumPy ufuncs called on crossover arrays (`np.sin(x)`, `np.add(x, 1)`):
//! the engine's op when it has one for these operands.

use crate::args::{self, UfuncOp};
use crate::array::wrap;
use crate::convert::Intake;
use crate::tape::{op, Call};
use crossover::Operand;
use pyo3::prelude::*;
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
