//! `evaluate("a*b + sin(a) + cos(b)", a=a, b=b)`, like numexpr's.
//!
//! Parsed expressions are cached by their text. Variables come from the
//! keyword arguments, then `local_dict`/`global_dict`, which default to the
//! caller's locals and globals. NumPy inputs are read in place (no copy) and
//! the result comes back as a NumPy array that owns the engine's buffer (no
//! copy); with any crossover array among the inputs the result is a lazy
//! crossover array instead, so it can fuse with later work.
//!
//! With NumPy inputs the expression's fused kernels are captured once
//! ([`CompiledGraph`]) and later calls with inputs of the same dtypes and
//! layouts run them straight on the new inputs: no graph is built,
//! collected or looked up (for 1,000 points that was about a third of the
//! call), and the inputs are handed to them as values, without making
//! engine arrays of them. Anything the captured kernels decline takes the
//! general path.

use crate::array::{compute, wrap, PyArr};
use crate::convert::{self, Intake};
use crate::errors;
use crate::kwcall::{Args, PARAMETERS};
use crate::tape::{op, Call};
use crossover::compiled::CompiledGraph;
use crossover::expr::parse::Expr;
use crossover::{Array, Operand, Value};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A parsed expression and the variable names it reads.
pub struct Parsed {
    pub expr: Arc<Expr>,
    pub names: Arc<Vec<String>>,
    /// The names as interned Python strings, for the dictionary lookups of
    /// every call (a new string per lookup cost an allocation and a hash).
    py_names: Vec<Py<PyString>>,
    /// Its kernels captured for NumPy inputs, one per input signature
    /// (dtypes, layouts) seen, newest first.
    compiled: Mutex<Vec<Arc<CompiledGraph>>>,
    /// Captures made since a captured run last succeeded; capturing stops
    /// at [`MAX_CAPTURES`] (an engine that can place work on a GPU declines
    /// every captured run, and a caller cycling through more signatures
    /// than are kept should not pay a capture a call).
    captures: AtomicU32,
    /// Calls that ran captured kernels (for tests).
    compiled_runs: AtomicU64,
}

/// Input signatures kept per expression.
const SIGNATURES: usize = 4;

/// Captures tried in a row without a captured run.
const MAX_CAPTURES: u32 = 8;

impl Parsed {
    /// The result of captured kernels run on the found inputs when they
    /// are all NumPy arrays read in place (`None`: they are not, or no
    /// kept kernels accept them, for their signatures or the device
    /// policy; nothing ran).
    fn run_compiled(
        &self,
        py: Python<'_>,
        found: &[(usize, Bound<'_, PyAny>)],
    ) -> PyResult<Option<Value>> {
        let kept: Vec<Arc<CompiledGraph>> = match self.compiled.lock() {
            Ok(c) if !c.is_empty() => c.clone(),
            _ => return Ok(None),
        };
        let Some(inputs) = numpy_values(found) else {
            return Ok(None);
        };
        let inputs = &inputs[..];
        for c in kept {
            // Kept graphs are short enough for the calling thread (`Some`).
            if let Some(Some(mut outs)) =
                crate::compute::run_short(py, c.points(), || c.run_values(inputs))?
            {
                if outs.len() == 1 {
                    self.compiled_runs.fetch_add(1, Ordering::Relaxed);
                    self.captures.store(0, Ordering::Relaxed);
                    return Ok(outs.pop());
                }
            }
        }
        Ok(None)
    }

    /// Captures the kernels computing `result` (pending) from `inputs`.
    fn capture(&self, inputs: &[Array], result: &Array) {
        if self.captures.fetch_add(1, Ordering::Relaxed) >= MAX_CAPTURES {
            return;
        }
        // Work too long for the calling thread goes to the evaluation
        // thread by the general path (Ctrl-C stays live); its capture saves
        // nothing worth a kept slot.
        let capture = CompiledGraph::capture(inputs, &[], std::slice::from_ref(result))
            .filter(|c| c.points() <= crate::compute::INTERRUPTIBLE_POINTS);
        if let Some(c) = capture {
            if let Ok(mut kept) = self.compiled.lock() {
                kept.insert(0, Arc::new(c));
                kept.truncate(SIGNATURES);
            }
        }
    }
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
    let names = expr.names();
    let p = Arc::new(Parsed {
        py_names: names
            .iter()
            .map(|n| PyString::intern(py, n).unbind())
            .collect(),
        names: Arc::new(names),
        expr: Arc::new(expr),
        compiled: Mutex::new(Vec::new()),
        captures: AtomicU32::new(0),
        compiled_runs: AtomicU64::new(0),
    });
    if let Ok(mut c) = cache().lock() {
        if c.len() >= CACHE_SIZE {
            c.clear();
        }
        c.insert(src.to_string(), p.clone());
    }
    Ok(p)
}

fn lookup<'py>(
    map: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
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

/// `xo.evaluate(expression, local_dict=None, global_dict=None, **kwargs)`
/// (its docstring and argument binding: [`crate::kwcall`]): `kwargs` are
/// the call's other keyword arguments.
pub fn evaluate<'py>(
    py: Python<'py>,
    expression: &Bound<'py, PyString>,
    local_dict: Option<Bound<'py, PyAny>>,
    global_dict: Option<Bound<'py, PyAny>>,
    kwargs: &Args<'_, 'py>,
) -> PyResult<Py<PyAny>> {
    let p = parsed(py, &expression.to_cow()?)?;
    let mut scopes: Option<Scopes<'_>> = None;
    let mut found: Vec<(usize, Bound<'_, PyAny>)> = Vec::with_capacity(p.names.len());
    for (i, name) in p.py_names.iter().enumerate() {
        let name = name.bind(py);
        let mut obj = match PARAMETERS.contains(&p.names[i].as_str()) {
            true => None,
            false => kwargs.keyword(name)?,
        };
        if obj.is_none() {
            let (l, g) = scopes.get_or_insert_with(|| {
                if local_dict.is_none() && global_dict.is_none() {
                    caller_scopes(py)
                } else {
                    (local_dict.clone(), global_dict.clone())
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
    // Kernels captured for NumPy inputs (not inside a `@jit` trace, which
    // must record the call), run on the inputs' values.
    let replayable = found.len() == p.names.len() && !crate::tape::tracing();
    if replayable {
        if let Some(value) = p.run_compiled(py, &found)? {
            return finish(py, &p, kwargs, value);
        }
    }
    // Lazy crossover inputs make a lazy result, which may outlive this call:
    // NumPy inputs are then copied in.
    let lazy = found.iter().any(|(_, o)| o.cast::<PyArr>().is_ok());
    let intake = if lazy { Intake::Copy } else { Intake::Borrow };
    let mut inputs = Vec::with_capacity(found.len());
    for (_, o) in &found {
        inputs.push(crate::args::array_arg(o, intake)?);
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
    let operands: Vec<Operand> = inputs.iter().cloned().map(Operand::Array).collect();
    let result: Array = op(py, call, &operands)?;
    drop(operands);
    if lazy {
        return wrap(py, result);
    }
    if replayable {
        p.capture(&inputs, &result);
    }
    compute(py, std::slice::from_ref(&result))?;
    drop(inputs);
    let value = errors::engine(py, || result.value())?;
    drop(result);
    finish(py, &p, kwargs, value)
}

/// The inputs' values when every one is a NumPy array read in place
/// (`None`: one is something else, or an error the general path raises).
fn numpy_values(found: &[(usize, Bound<'_, PyAny>)]) -> Option<Vec<Value>> {
    found
        .iter()
        .map(|(_, o)| {
            let arr = o.cast::<numpy::PyUntypedArray>().ok()?;
            convert::numpy_value(arr).ok().flatten()
        })
        .collect()
}

/// The computed result as NumPy returns it: a new array, or numexpr's
/// `out=` written and returned.
fn finish<'py>(
    py: Python<'py>,
    p: &Parsed,
    kwargs: &Args<'_, 'py>,
    value: Value,
) -> PyResult<Py<PyAny>> {
    let out = convert::owned_numpy(py, value)?;
    // numexpr's `out=`: write into the caller's array and return it.
    let named_out = p.names.iter().any(|n| n == "out");
    if let Some(dst) = match named_out {
        true => None,
        false => kwargs.keyword(pyo3::intern!(py, "out"))?,
    } {
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

/// Calls of `expression` (as cached) that ran its captured kernels.
#[pyfunction]
pub fn _expression_compiled_runs(py: Python<'_>, expression: &str) -> PyResult<u64> {
    Ok(parsed(py, expression)?
        .compiled_runs
        .load(Ordering::Relaxed))
}
