//! `evaluate("a*b + sin(a) + cos(b)", a=a, b=b)`, like numexpr's.
//!
//! Parsed expressions are cached by their text. Variables come from the
//! keyword arguments, then `local_dict`/`global_dict`, which default to the
//! caller's locals and globals. NumPy inputs are read in place (no copy) and
//! the result comes back as a NumPy array that owns the engine's buffer (no
//! copy); with any crossover array among the inputs the result is a lazy
//! crossover array instead, so it can fuse with later work.

use crate::array::{compute, wrap, PyArr};
use crate::convert::{self, Intake};
use crate::errors;
use crate::tape::{op, Call};
use crossover::expr::parse::Expr;
use crossover::{Array, Operand};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A parsed expression and the variable names it reads.
pub struct Parsed {
    pub expr: Arc<Expr>,
    pub names: Arc<Vec<String>>,
}

/// Distinct expression strings kept; the cache is cleared when it fills.
const CACHE_SIZE: usize = 1024;

fn cache() -> &'static Mutex<HashMap<String, Arc<Parsed>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Parsed>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The parsed form of `src`, from the cache when possible.
pub fn parsed(py: Python<'_>, src: &str) -> PyResult<Arc<Parsed>> {
    if let Some(p) = cache().lock().ok().and_then(|c| c.get(src).cloned()) {
        return Ok(p);
    }
    let expr = errors::engine(py, || crossover::expr::parse(src))?;
    let p = Arc::new(Parsed {
        names: Arc::new(expr.names()),
        expr: Arc::new(expr),
    });
    if let Ok(mut c) = cache().lock() {
        if c.len() >= CACHE_SIZE {
            c.clear();
        }
        c.insert(src.to_string(), p.clone());
    }
    Ok(p)
}

fn lookup<'py>(map: &Bound<'py, PyAny>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    if let Ok(d) = map.cast::<PyDict>() {
        return d.get_item(name);
    }
    match map.get_item(name) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(map.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Where names are looked up after the keyword arguments: locals, globals.
type Scopes<'py> = (Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>);

/// The caller's locals and globals (the frame that called `evaluate`).
fn caller_scopes(py: Python<'_>) -> Scopes<'_> {
    // SAFETY: both return borrowed references to the current frame's
    // mappings (or NULL); they are alive while this call runs.
    unsafe {
        let l = pyo3::ffi::PyEval_GetLocals();
        let locals = if l.is_null() {
            let _ = PyErr::take(py);
            None
        } else {
            Some(Bound::from_borrowed_ptr(py, l))
        };
        let g = pyo3::ffi::PyEval_GetGlobals();
        let globals = (!g.is_null()).then(|| Bound::from_borrowed_ptr(py, g));
        (locals, globals)
    }
}

/// Evaluates an expression string over arrays, like ``numexpr.evaluate``.
///
/// Variables are taken from the keyword arguments, else from ``local_dict``
/// and ``global_dict``, which default to the caller's locals and globals.
/// NumPy inputs give a NumPy result (computed now, in one fused pass, with no
/// copies of inputs or result); if any input is a crossover array the result
/// is a lazy crossover array.
///
/// ``out=`` (a NumPy array, when the expression has no variable named
/// ``out``) receives the result, as in numexpr.
///
/// Raises ExpressionError (a ValueError) with ``.position`` for a malformed
/// string or an unknown name.
#[pyfunction]
#[pyo3(signature = (expression, local_dict = None, global_dict = None, **kwargs))]
pub fn evaluate(
    py: Python<'_>,
    expression: &Bound<'_, PyString>,
    local_dict: Option<&Bound<'_, PyAny>>,
    global_dict: Option<&Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let p = parsed(py, &expression.to_cow()?)?;
    let mut scopes: Option<Scopes<'_>> = None;
    let mut found: Vec<(usize, Bound<'_, PyAny>)> = Vec::with_capacity(p.names.len());
    for (i, name) in p.names.iter().enumerate() {
        let mut obj = match kwargs {
            Some(k) => k.get_item(name)?,
            None => None,
        };
        if obj.is_none() {
            let (l, g) = scopes.get_or_insert_with(|| {
                if local_dict.is_none() && global_dict.is_none() {
                    caller_scopes(py)
                } else {
                    (local_dict.cloned(), global_dict.cloned())
                }
            });
            if let Some(l) = l.as_ref() {
                obj = lookup(l, name)?;
            }
            if obj.is_none() {
                if let Some(g) = g.as_ref() {
                    obj = lookup(g, name)?;
                }
            }
        }
        if let Some(o) = obj {
            found.push((i, o));
        }
    }
    // Lazy crossover inputs make a lazy result, which may outlive this call:
    // NumPy inputs are then copied in.
    let lazy = found.iter().any(|(_, o)| o.cast::<PyArr>().is_ok());
    let intake = if lazy { Intake::Copy } else { Intake::Borrow };
    let mut operands = Vec::with_capacity(found.len());
    for (_, o) in &found {
        operands.push(Operand::Array(crate::args::array_arg(o, intake)?));
    }
    let names = if found.len() == p.names.len() {
        p.names.clone()
    } else {
        Arc::new(found.iter().map(|(i, _)| p.names[*i].clone()).collect())
    };
    let call = Call::Expr {
        expr: p.expr.clone(),
        names,
    };
    let result: Array = op(py, call, &operands)?;
    drop(operands);
    if lazy {
        return wrap(py, result);
    }
    compute(py, std::slice::from_ref(&result))?;
    let value = errors::engine(py, || result.value())?;
    drop(result);
    let out = convert::owned_numpy(py, value)?;
    // numexpr's `out=`: write into the caller's array and return it.
    if let Some(dst) = kwargs
        .filter(|_| !p.names.iter().any(|n| n == "out"))
        .map(|k| k.get_item("out"))
        .transpose()?
        .flatten()
    {
        py.import("numpy")?.getattr("copyto")?.call1((&dst, out))?;
        return Ok(dst.unbind());
    }
    Ok(out.unbind())
}

/// Number of cached parsed expressions.
#[pyfunction]
pub fn _expression_cache_size() -> usize {
    cache().lock().map_or(0, |c| c.len())
}
