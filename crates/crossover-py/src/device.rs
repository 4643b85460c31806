//! Device policy: `set_device("auto"|"cpu"|"gpu")` and `with device(...)`.
//!
//! Every evaluation the Python layer starts goes through [`check`], the one
//! place that will hand the policy to the engine's planner once it places
//! work on devices. This build has only the CPU backend, so forcing the GPU
//! is a `DeviceError` at once (never a silent CPU run).

use crate::errors::device_error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Policy {
    Auto = 0,
    Cpu = 1,
    Gpu = 2,
}

impl Policy {
    fn name(self) -> &'static str {
        match self {
            Policy::Auto => "auto",
            Policy::Cpu => "cpu",
            Policy::Gpu => "gpu",
        }
    }

    fn from_u8(v: u8) -> Policy {
        match v {
            1 => Policy::Cpu,
            2 => Policy::Gpu,
            _ => Policy::Auto,
        }
    }
}

static GLOBAL: AtomicU8 = AtomicU8::new(Policy::Auto as u8);

thread_local! {
    /// `with device(...)` blocks active on this thread, innermost last.
    static SCOPED: RefCell<Vec<Policy>> = const { RefCell::new(Vec::new()) };
}

/// Why the GPU cannot be used in this build.
pub const NO_GPU: &str =
    "no GPU backend in this build of crossover (only the CPU backend exists so far)";

fn parse(py: Python<'_>, name: &str) -> PyResult<Policy> {
    let p = match name.to_ascii_lowercase().as_str() {
        "auto" => Policy::Auto,
        "cpu" => Policy::Cpu,
        "gpu" | "cuda" => Policy::Gpu,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown device '{other}': expected 'auto', 'cpu' or 'gpu'"
            )))
        }
    };
    if p == Policy::Gpu {
        return Err(device_error(py, format!("set_device('{name}'): {NO_GPU}")));
    }
    Ok(p)
}

/// The policy in force on this thread.
pub fn current() -> Policy {
    SCOPED
        .with(|s| s.borrow().last().copied())
        .unwrap_or_else(|| Policy::from_u8(GLOBAL.load(Ordering::Relaxed)))
}

/// Checks that the policy can be honoured before work runs.
pub fn check(py: Python<'_>) -> PyResult<()> {
    match current() {
        Policy::Gpu => Err(device_error(py, NO_GPU)),
        Policy::Auto | Policy::Cpu => Ok(()),
    }
}

/// Sets where work runs: "auto" (the engine decides), "cpu", or "gpu".
///
/// Raises DeviceError for "gpu" in this build (no GPU backend yet).
#[pyfunction]
pub fn set_device(py: Python<'_>, name: &str) -> PyResult<()> {
    GLOBAL.store(parse(py, name)? as u8, Ordering::Relaxed);
    Ok(())
}

/// The device policy in force on this thread ("auto", "cpu" or "gpu").
#[pyfunction]
pub fn get_device() -> &'static str {
    current().name()
}

/// Context manager: `with crossover.device("cpu"): ...` sets the policy for
/// the block on this thread.
#[pyclass(name = "device", module = "crossover")]
pub struct DeviceScope {
    policy: Policy,
    depth: Option<usize>,
}

#[pymethods]
impl DeviceScope {
    #[new]
    fn new(py: Python<'_>, name: &str) -> PyResult<Self> {
        Ok(DeviceScope {
            policy: parse(py, name)?,
            depth: None,
        })
    }

    fn __enter__(mut slf: PyRefMut<'_, Self>) -> PyRefMut<'_, Self> {
        let p = slf.policy;
        slf.depth = Some(SCOPED.with(|s| {
            let mut s = s.borrow_mut();
            s.push(p);
            s.len()
        }));
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        if let Some(d) = self.depth.take() {
            SCOPED.with(|s| s.borrow_mut().truncate(d - 1));
        }
        false
    }

    fn __repr__(&self) -> String {
        format!("crossover.device('{}')", self.policy.name())
    }
}
