//! `repr`/`str` of a crossover array: NumPy's text of its values, computed
//! on demand (a summary of the pending array only when it cannot be).

use crate::array::PyArr;
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

/// `method` (`"__repr__"` or `"__str__"`) of the NumPy view of the values.
pub fn text(py: Python<'_>, a: &PyArr, method: &str) -> PyResult<String> {
    match a
        .readonly(py, "printing")
        .and_then(|v| v.call_method0(method))
    {
        Ok(t) => t.extract(),
        // Ctrl-C while computing stops printing too.
        Err(e) if e.is_instance_of::<PyKeyboardInterrupt>(py) => Err(e),
        // A value that cannot be computed (too big for memory, a singular
        // matrix...) still prints, with the reason: a failing repr hides
        // everything else in a traceback or a debugger.
        Err(e) => Ok(summary(a, &e.to_string())),
    }
}

fn summary(a: &PyArr, why: &str) -> String {
    let shape: Vec<String> = a.inner().shape().iter().map(|d| d.to_string()).collect();
    let shape = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.join(", ")),
    };
    format!(
        "crossover.ndarray(shape={shape}, dtype={}, {}: {why})",
        a.inner().dtype(),
        if a.inner().is_ready() {
            "computed, unreadable"
        } else {
            "not computed"
        }
    )
}
