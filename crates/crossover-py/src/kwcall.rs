//! `xo.evaluate`'s calling convention: vectorcall's keywords, read where
//! the call left them.
//!
//! PyO3 gives a function that takes `**kwargs` the tuple-and-dict
//! convention: Python packs the call's keywords into a dict, and PyO3
//! copies that dict into another for the function. For `xo.evaluate` on
//! 1,000 points that was about 2,500 of 26,000 instructions a call
//! (callgrind). `evaluate`'s keywords are its data (numexpr's
//! `evaluate("a*b", a=a, b=b)`), so it alone is registered by hand with
//! `METH_FASTCALL | METH_KEYWORDS` ([`add_evaluate`]) and reads names and
//! values in place ([`Args`]). Its variable names are interned strings, as
//! the call site's keyword names are, so a name usually matches by
//! identity.

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::panic::AssertUnwindSafe;

/// One call's arguments, borrowed from the caller's argument vector.
pub struct Args<'a, 'py> {
    py: Python<'py>,
    positional: &'a [*mut ffi::PyObject],
    keyword_values: &'a [*mut ffi::PyObject],
    keyword_names: Option<Bound<'py, PyTuple>>,
}

impl<'a, 'py> Args<'a, 'py> {
    /// Positional argument `i`, if given.
    pub fn positional(&self, i: usize) -> Option<Bound<'py, PyAny>> {
        // SAFETY: the vector's entries are live objects for the call.
        self.positional
            .get(i)
            .map(|&p| unsafe { Bound::from_borrowed_ptr(self.py, p) })
    }

    /// Number of positional arguments.
    pub fn positional_len(&self) -> usize {
        self.positional.len()
    }

    /// The keyword arguments, in call order.
    pub fn keywords(&self) -> impl Iterator<Item = (Bound<'py, PyString>, Bound<'py, PyAny>)> + '_ {
        let names = self.keyword_names.iter().flat_map(|t| t.iter());
        names.zip(self.keyword_values).filter_map(|(name, &value)| {
            // SAFETY: as in `positional`; keyword names are strings
            // (CPython checks them before the call).
            let value = unsafe { Bound::from_borrowed_ptr(self.py, value) };
            Some((name.cast_into::<PyString>().ok()?, value))
        })
    }

    /// The keyword argument called `name`.
    pub fn keyword(&self, name: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
        // Identity first: interned names, as almost every call passes.
        for (k, v) in self.keywords() {
            if k.is(name) {
                return Ok(Some(v));
            }
        }
        for (k, v) in self.keywords() {
            if PyAnyMethods::eq(k.as_any(), name)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }
}

/// Signature line (for `inspect.signature`) and docstring of `evaluate`.
const EVALUATE_DOC: &std::ffi::CStr =
    c"evaluate(expression, local_dict=None, global_dict=None, **kwargs)
--

Evaluates an expression string over arrays, like ``numexpr.evaluate``.

Variables are taken from the keyword arguments, else from ``local_dict``
and ``global_dict``, which default to the caller's locals and globals.
NumPy inputs give a NumPy result (computed now, in one fused pass, with no
copies of inputs or result); if any input is a crossover array the result
is a lazy crossover array.

``out=`` (a NumPy array, when the expression has no variable named
``out``) receives the result, as in numexpr.

Raises ExpressionError (a ValueError) with ``.position`` for a malformed
string or an unknown name.";

static mut EVALUATE_DEF: ffi::PyMethodDef = ffi::PyMethodDef {
    ml_name: c"evaluate".as_ptr(),
    ml_meth: ffi::PyMethodDefPointer {
        PyCFunctionFastWithKeywords: evaluate_entry,
    },
    ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
    ml_doc: EVALUATE_DOC.as_ptr(),
};

/// Adds `evaluate` to the module.
pub fn add_evaluate(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let name = m.name()?;
    // SAFETY: the definition is a static that nothing writes, as CPython
    // requires of a function's `PyMethodDef`; the module name is a live
    // string (CPython keeps its own reference).
    let f = unsafe {
        let f = ffi::PyCFunction_NewEx(&raw mut EVALUATE_DEF, std::ptr::null_mut(), name.as_ptr());
        Bound::from_owned_ptr_or_err(py, f)?
    };
    m.add("evaluate", f)
}

/// What CPython calls for `evaluate(...)`.
unsafe extern "C" fn evaluate_entry(
    _module: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls a METH_FASTCALL | METH_KEYWORDS function
    // attached to the interpreter, with `nargs` positional arguments and
    // then one value per name of the `kwnames` tuple (or NULL) in `args`,
    // all alive for the call; nothing borrowed outlives it.
    let py = unsafe { Python::assume_attached() };
    let call = unsafe {
        let names = Bound::from_borrowed_ptr_or_opt(py, kwnames);
        let positional = nargs.max(0) as usize;
        let keywords = names
            .as_ref()
            .map_or(0, |n| ffi::PyTuple_Size(n.as_ptr()).max(0) as usize);
        let all = match args.is_null() {
            true => &[][..],
            false => std::slice::from_raw_parts(args, positional + keywords),
        };
        Args {
            py,
            positional: &all[..positional],
            keyword_values: &all[positional..],
            keyword_names: names.map(|n| n.cast_into_unchecked()),
        }
    };
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| evaluate_call(py, &call)));
    let err = match outcome {
        Ok(Ok(result)) => return result.into_ptr(),
        Ok(Err(e)) => e,
        Err(payload) => {
            let what = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic from Rust code".to_string());
            PanicException::new_err((what,))
        }
    };
    err.restore(py);
    std::ptr::null_mut()
}

/// The parameters bound to names: `evaluate`'s own, not variables.
pub const PARAMETERS: [&str; 3] = ["expression", "local_dict", "global_dict"];

/// Binds `evaluate`'s parameters as `def evaluate(expression,
/// local_dict=None, global_dict=None, **kwargs)` would, and calls it.
fn evaluate_call(py: Python<'_>, call: &Args<'_, '_>) -> PyResult<Py<PyAny>> {
    if call.positional_len() > PARAMETERS.len() {
        return Err(PyTypeError::new_err(format!(
            "evaluate() takes from 1 to 3 positional arguments but {} were given",
            call.positional_len()
        )));
    }
    let mut bound: [Option<Bound<'_, PyAny>>; 3] = std::array::from_fn(|i| call.positional(i));
    for (name, value) in call.keywords() {
        let name = name.to_cow()?;
        if let Some(i) = PARAMETERS.iter().position(|p| *p == name) {
            if bound[i].is_some() {
                return Err(PyTypeError::new_err(format!(
                    "evaluate() got multiple values for argument '{name}'"
                )));
            }
            bound[i] = Some(value);
        }
    }
    let [expression, local_dict, global_dict] = bound;
    let expression = expression.ok_or_else(|| {
        PyTypeError::new_err("evaluate() missing 1 required positional argument: 'expression'")
    })?;
    let expression = expression.cast_into::<PyString>().map_err(|e| {
        let got = e.into_inner().get_type().name().map(|n| n.to_string());
        PyTypeError::new_err(format!(
            "evaluate() argument 'expression' must be str, not {}",
            got.unwrap_or_default()
        ))
    })?;
    let local_dict = local_dict.filter(|o| !o.is_none());
    let global_dict = global_dict.filter(|o| !o.is_none());
    crate::evaluate::evaluate(py, &expression, local_dict, global_dict, call)
}
