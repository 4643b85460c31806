//! The benchmark report writer (`crates/crossover-report`), for
//! `python -m crossover.compare`: one writer serves the CLI and Python.

use crate::errors::classes;
use crossover_report::{Report, ReportError};
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::path::PathBuf;

fn to_py(py: Python<'_>, e: ReportError) -> PyErr {
    let c = match classes(py) {
        Ok(c) => c,
        Err(err) => return err,
    };
    let ty: &Py<PyType> = match e {
        ReportError::Io { .. } => &c.file,
        ReportError::Plot { .. } => &c.internal,
        ReportError::Json(_) | ReportError::Invalid(_) => &c.argument,
    };
    PyErr::from_type(ty.bind(py).clone(), e.to_string())
}

fn parse(py: Python<'_>, json: &str) -> PyResult<Report> {
    Report::from_json(json).map_err(|e| to_py(py, e))
}

/// The per-workload markdown tables and the summary of a report given as
/// JSON (the format of `results.json`).
#[pyfunction]
pub fn report_tables(py: Python<'_>, report_json: &str) -> PyResult<String> {
    Ok(crossover_report::tables(&parse(py, report_json)?))
}

/// Writes report.md, results.json, results.csv and PNG plots into
/// `out_dir`; returns the paths written.
#[pyfunction]
pub fn report_write(py: Python<'_>, report_json: &str, out_dir: PathBuf) -> PyResult<Vec<String>> {
    let report = parse(py, report_json)?;
    let written = py
        .detach(|| crossover_report::write(&report, &out_dir))
        .map_err(|e| to_py(py, e))?;
    Ok(written.iter().map(|p| p.display().to_string()).collect())
}
