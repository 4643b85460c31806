//! `crossover.explain(...)`: the kernels that run for some arrays, what was
//! fused into each, why each boundary exists, bytes and flops, and after a
//! run the measured time of each kernel.
//!
//! The kernels come from `crossover::lower` (and `evaluate_with_report`
//! when it runs); the engine's placement report (predicted time per device,
//! copies, choice and reason) is `e.placement`, and `str(e)` is that report
//! (each kernel once) with the CPU's SIMD level and threads.

use crate::array::PyArr;
use crate::errors;
use crossover::Array;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

struct KernelInfo {
    name: String,
    fused: Vec<&'static str>,
    reasons: Vec<&'static str>,
    shape: Vec<usize>,
    points: usize,
    bytes: usize,
    flops: f64,
    device: &'static str,
    seconds: Option<f64>,
}

/// What crossover does (or did) to compute some arrays.
///
/// ``str(e)`` is a readable report; ``e.kernels`` the same as dicts.
#[pyclass(frozen, module = "crossover")]
pub struct Explanation {
    kernels: Vec<KernelInfo>,
    ran: bool,
    placement: String,
}

#[pymethods]
impl Explanation {
    /// One dict per kernel: name, fused (op names), reasons (why each output
    /// is written to memory), shape, points, bytes, flops, device, seconds
    /// (measured; None when it did not run).
    #[getter]
    fn kernels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for k in &self.kernels {
            let d = PyDict::new(py);
            d.set_item("name", &k.name)?;
            d.set_item("fused", &k.fused)?;
            d.set_item("reasons", &k.reasons)?;
            d.set_item("shape", pyo3::types::PyTuple::new(py, &k.shape)?)?;
            d.set_item("points", k.points)?;
            d.set_item("bytes", k.bytes)?;
            d.set_item("flops", k.flops)?;
            d.set_item("device", k.device)?;
            d.set_item("seconds", k.seconds)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// The engine's placement report: per kernel the predicted time on each
    /// device (kernel and copies, or why a device cannot run it), the choice
    /// and the reason, and measured times after a run.
    #[getter]
    fn placement(&self) -> &str {
        &self.placement
    }

    /// Whether the kernels ran (and ``seconds`` are measured).
    #[getter]
    fn ran(&self) -> bool {
        self.ran
    }

    /// Sum of the measured kernel times (None when nothing ran).
    #[getter]
    fn seconds(&self) -> Option<f64> {
        self.ran.then(|| {
            self.kernels
                .iter()
                .filter_map(|k| k.seconds)
                .fold(0.0, |a, b| a + b)
        })
    }

    fn __len__(&self) -> usize {
        self.kernels.len()
    }

    /// The engine's plan, each kernel once: fused ops, points, traffic,
    /// why each result is written, predicted time per device, the choice,
    /// and measured times after a run.
    fn __str__(&self) -> String {
        let level = crossover::cpu::simd::level();
        let cpu = format!(
            " (cpu: {}, {} threads)",
            level.name(),
            crossover::cpu::threads()
        );
        match self.placement.split_once('\n') {
            Some((head, rest)) => format!("{head}{cpu}\n{rest}"),
            None => format!("{}{cpu}\n", self.placement),
        }
    }

    fn __repr__(&self) -> String {
        self.__str__()
    }
}

/// Lists the kernels that compute `arrays`; with `run`, runs them and
/// records each kernel's time.
#[pyfunction]
#[pyo3(signature = (arrays, run = true))]
pub fn _explain(py: Python<'_>, arrays: Vec<Bound<'_, PyArr>>, run: bool) -> PyResult<Explanation> {
    let arrays: Vec<Array> = arrays.iter().map(|a| a.get().inner()).collect();
    crate::tape::note_read("explain()");
    let kernels = errors::engine(py, || crossover::lower(&arrays))?;
    let mut infos: Vec<KernelInfo> = kernels
        .iter()
        .map(|k| KernelInfo {
            name: k.name(),
            fused: k.fused.clone(),
            reasons: k.reasons.iter().map(|r| r.describe()).collect(),
            shape: k.shape.clone(),
            points: k.numel(),
            bytes: k.bytes(),
            flops: k.flops(),
            device: "cpu",
            seconds: None,
        })
        .collect();
    drop(kernels);
    let mut placement = errors::engine(py, || crossover::Engine::global().plan(&arrays, None))?;
    // Unrun kernels carry the planner's choice (a run reports where each
    // kernel did run, which can differ: a GPU kernel still compiling runs
    // on the CPU meanwhile).
    if placement.kernels.len() == infos.len() {
        for (p, k) in placement.kernels.iter().zip(infos.iter_mut()) {
            k.device = p.device.name();
        }
    }
    if run {
        crate::device::check(py)?;
        let runs = errors::detached(py, || crossover::evaluate_with_report(&arrays))?;
        if runs.len() == infos.len() && runs.iter().zip(&infos).all(|(r, k)| r.name == k.name) {
            for (r, k) in runs.iter().zip(infos.iter_mut()) {
                k.seconds = Some(r.seconds);
                k.device = r.device;
            }
            for (r, k) in runs.iter().zip(placement.kernels.iter_mut()) {
                k.measured_s = Some(r.seconds);
                k.measured_copy_s = Some(r.copy_seconds);
            }
            placement.ran = true;
        } else {
            // The engine ran a different plan than it listed: report the run.
            infos = runs
                .iter()
                .map(|r| KernelInfo {
                    name: r.name.clone(),
                    fused: vec![],
                    reasons: vec![],
                    shape: vec![r.points],
                    points: r.points,
                    bytes: r.bytes,
                    flops: r.flops,
                    device: r.device,
                    seconds: Some(r.seconds),
                })
                .collect();
        }
    }
    Ok(Explanation {
        kernels: infos,
        ran: run,
        placement: placement.to_string(),
    })
}
