//! Item assignment (`x[key] = value`) on crossover arrays.
//!
//! A crossover array is a value in a lazy graph, but NumPy code (and
//! array-API code in SciPy and scikit-learn) assigns into arrays:
//! `x[mask] = 0`, `out[:, 0] = col`, `X[i] = row`. An assignment computes
//! the array, lets NumPy apply the key and value to a private host copy (so
//! every kind of key, broadcasting and cast is NumPy's own), and rebinds the
//! Python object to that copy: every name bound to the object sees the
//! change. The next assignment writes the copy in place when nothing else
//! can see it (no pending result reads it, no view or NumPy array shares
//! it, no device holds a copy), so a loop of assignments costs what NumPy's
//! does, plus the first copy.
//!
//! Arrays computed from `x` before the assignment, views such as `x[1:3]`
//! included, keep the values they had (as JAX's `x.at[k].set(v)` does);
//! a NumPy view would change with its base.

use crate::array::PyArr;
use crate::compute::value_of;
use crate::convert;
use pyo3::prelude::*;
use pyo3::types::PyAny;

/// `slf[key] = value`.
pub fn assign(
    slf: &Bound<'_, PyArr>,
    key: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let py = slf.py();
    let me = slf.get();
    if let Some(backing) = writable_in_place(py, me) {
        return backing.bind(py).set_item(key, value);
    }
    let current = me.inner();
    let host = convert::owned_numpy(py, value_of(py, &current, "item assignment")?)?;
    // `owned_numpy` hands over the engine's buffer when nothing else holds
    // it, else copies: either way the array is ours alone.
    let host = if host
        .getattr("flags")?
        .getattr("writeable")?
        .extract::<bool>()?
    {
        host
    } else {
        host.call_method1("copy", ("C",))?
    };
    host.set_item(key, value)?;
    let rebound = convert::borrow_numpy(host.cast()?)?;
    me.rebind(rebound, Some(host.unbind()));
    Ok(())
}

/// The private NumPy array behind `me`, when writing it cannot change
/// anything another object sees.
fn writable_in_place(py: Python<'_>, me: &PyArr) -> Option<Py<PyAny>> {
    let backing = me.backing.lock().ok()?.as_ref()?.clone_ref(py);
    me.value_is_private().then_some(backing)
}
