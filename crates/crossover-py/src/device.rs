//! Device policy: `set_device("auto"|"cpu"|"gpu"|"gpu-prefer")` and
//! `with device(...)`.
//!
//! One device state, the engine's: `set_device` sets the process-wide
//! policy of the engine's planner, `with device(...)` pushes a policy for
//! the block on this thread, and `get_device`, `explain` and every
//! evaluation read the same state. Forcing the GPU where none is usable
//! is a `DeviceError` at once, naming why.

use crate::errors::device_error;
use crossover::{DeviceKind, Engine, Policy};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Why no GPU is usable here, or `None` when one is.
pub fn gpu_unusable() -> Option<String> {
    Engine::global()
        .devices()
        .into_iter()
        .find(|d| d.device == DeviceKind::Gpu)
        .and_then(|d| d.usable.err())
}

/// The GPU's name, or why there is none.
pub fn gpu_status() -> String {
    Engine::global()
        .devices()
        .into_iter()
        .find(|d| d.device == DeviceKind::Gpu)
        .map(|d| match (d.name, d.usable) {
            (Some(n), Ok(())) => n,
            (_, Err(why)) => why,
            (None, Ok(())) => "unknown".into(),
        })
        .unwrap_or_default()
}

fn parse(py: Python<'_>, name: &str) -> PyResult<Policy> {
    let p: Policy = name
        .parse()
        .map_err(|e: crossover::Error| PyValueError::new_err(e.to_string()))?;
    if p == Policy::Force(DeviceKind::Gpu) {
        if let Some(why) = gpu_unusable() {
            return Err(device_error(
                py,
                format!("device('{name}'): no GPU can be used: {why}"),
            ));
        }
    }
    Ok(p)
}

/// Checks that the policy in force can be honoured before work runs.
pub fn check(py: Python<'_>) -> PyResult<()> {
    if crossover::effective_policy() == Policy::Force(DeviceKind::Gpu) {
        if let Some(why) = gpu_unusable() {
            return Err(device_error(
                py,
                format!("the device policy is 'gpu' but no GPU can be used: {why}; use the policy 'auto' or 'cpu'"),
            ));
        }
    }
    Ok(())
}

/// Sets where work runs: "auto" (the engine decides by its cost model),
/// "cpu", "gpu" (forced: an error when the GPU cannot run something), or
/// "gpu-prefer" (the GPU where it can, else the fastest device).
///
/// Raises DeviceError for "gpu" when no GPU is usable.
#[pyfunction]
pub fn set_device(py: Python<'_>, name: &str) -> PyResult<()> {
    Engine::global().set_policy(parse(py, name)?);
    Ok(())
}

/// The device policy in force on this thread ("auto", "cpu", "gpu"...).
#[pyfunction]
pub fn get_device() -> &'static str {
    crossover::effective_policy().name()
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
        slf.depth = Some(crossover::engine::push_thread_policy(p));
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        if let Some(d) = self.depth.take() {
            crossover::engine::pop_thread_policies(d);
        }
        false
    }

    fn __repr__(&self) -> String {
        format!("crossover.device('{}')", self.policy.name())
    }
}
