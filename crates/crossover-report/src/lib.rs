//! Benchmark reports for crossover: one format shared by `crossover bench
//! --out DIR` (Rust) and `python -m crossover.compare --out DIR` (Python).
//!
//! A [`Report`] is the header (machine, versions, environment, method,
//! notes) plus one [`Row`] per measured case. From it this crate renders:
//!
//! - [`tables`]: per workload, a markdown table of time per system by size,
//!   the speedup of the best system (and of the focus system, e.g. `auto`)
//!   over the baseline, and the check results; then a summary table;
//! - [`write`]: `report.md`, `results.json`, `results.csv` and PNG plots
//!   (time vs size on log-log axes per workload, with the GPU crossover
//!   marked; speedup vs size for all workloads). Text in the plots uses an
//!   embedded DejaVu Sans, so no system fonts are needed.
//!
//! ```
//! use crossover_report::{Report, Row};
//! let mut report = Report::new("crossover bench", "cpu");
//! for (system, ms) in [("cpu", 2.0), ("gpu", 0.5)] {
//!     report.rows.push(Row::new("elementwise", "", 1000, system, ms));
//! }
//! report.gpu_systems = vec!["gpu".into()];
//! let md = crossover_report::tables(&report);
//! assert!(md.contains("gpu 4.00x"));
//! ```

mod analysis;
mod error;
mod plot;
mod render;

pub use analysis::{crossover_size, groups, Crossover, Group};
pub use error::{ReportError, Result};
pub use render::{group_tables, report_markdown, summary, tables};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One measured case: a workload (and variant) at one size on one system.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub workload: String,
    /// `""` for workloads with a single variant (`sum`, `mean`, `std` for
    /// reduction).
    #[serde(default)]
    pub variant: String,
    /// The problem size N (an NxN problem for every workload).
    pub size: u64,
    #[serde(default)]
    pub elements: u64,
    #[serde(default)]
    pub dtype: String,
    /// A device (`cpu`, `gpu`), a policy (`auto`) or a peer library.
    pub system: String,
    pub median_ms: f64,
    #[serde(default)]
    pub min_ms: f64,
    #[serde(default)]
    pub reps: u64,
    /// Whether the result matched its float64 reference.
    pub ok: bool,
    /// The check's detail, e.g. `max err 3.1e-07 (tol 1e-06)`.
    #[serde(default)]
    pub check: String,
    /// The device the system ran on when that is its choice (auto).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
    /// Minimal memory traffic per second, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gflops: Option<f64>,
    /// Millions of samples per second (Monte Carlo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msamples_per_s: Option<f64>,
}

impl Row {
    /// A passing row with the essentials (the other fields empty).
    pub fn new(workload: &str, variant: &str, size: u64, system: &str, median_ms: f64) -> Row {
        Row {
            workload: workload.into(),
            variant: variant.into(),
            size,
            elements: size * size,
            dtype: String::new(),
            system: system.into(),
            median_ms,
            min_ms: median_ms,
            reps: 1,
            ok: true,
            check: "ok".into(),
            chosen: None,
            gbps: None,
            gflops: None,
            msamples_per_s: None,
        }
    }

    /// `workload` or `workload-variant`, as used in titles and file names.
    pub fn label(&self) -> String {
        label(&self.workload, &self.variant)
    }
}

pub(crate) fn label(workload: &str, variant: &str) -> String {
    if variant.is_empty() || variant == workload {
        workload.to_string()
    } else {
        format!("{workload}-{variant}")
    }
}

/// What a workload computes, for table headings and plot titles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadInfo {
    pub name: String,
    pub dtype: String,
    /// What the size N means, e.g. `N for NxN float32 matrices`.
    pub size_meaning: String,
}

/// A whole benchmark run: header and rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub title: String,
    /// ISO 8601, UTC.
    #[serde(default)]
    pub date: String,
    /// The command line that produced it (to reproduce the figures).
    #[serde(default)]
    pub command: String,
    /// CPU, cores, memory, OS, GPU.
    #[serde(default)]
    pub machine: BTreeMap<String, serde_json::Value>,
    /// Versions of crossover and of every peer library used.
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// Environment variables that change performance (e.g. the BLAS core
    /// type), as found; nothing is unset behind the user's back.
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
    /// Warnings, skipped systems, errors.
    #[serde(default)]
    pub notes: Vec<String>,
    /// How the times were taken.
    #[serde(default)]
    pub method: String,
    /// The system speedups are measured against (`cpu`, `numpy`).
    pub baseline: String,
    /// Baselines for workloads the baseline does not run, in order of
    /// preference (`scipy` for sparse products, which NumPy lacks).
    #[serde(default)]
    pub fallback_baselines: Vec<String>,
    /// The system whose speedup is the headline (`auto`, `crossover`).
    #[serde(default)]
    pub focus: Option<String>,
    /// Systems that choose among the others (`auto`): not candidates for
    /// "best", since they are not a device of their own.
    #[serde(default)]
    pub policies: Vec<String>,
    /// Systems that ran on a GPU: their crossing of the baseline is marked.
    #[serde(default)]
    pub gpu_systems: Vec<String>,
    #[serde(default)]
    pub workloads: Vec<WorkloadInfo>,
    #[serde(default)]
    pub rows: Vec<Row>,
}

impl Report {
    /// An empty report against `baseline`.
    pub fn new(title: &str, baseline: &str) -> Report {
        Report {
            title: title.into(),
            baseline: baseline.into(),
            ..Report::default()
        }
    }

    /// Parses a report from JSON (as written by [`Report::to_json`]).
    ///
    /// # Errors
    /// [`ReportError::Json`] when the text is not a report.
    pub fn from_json(text: &str) -> Result<Report> {
        let r: Report = serde_json::from_str(text).map_err(|e| ReportError::Json(e.to_string()))?;
        r.validate()?;
        Ok(r)
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // A report holds only strings, numbers and maps: it always serialises.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Checks what the renderers rely on: a baseline, finite positive times.
    ///
    /// # Errors
    /// [`ReportError::Invalid`] naming the first bad field.
    pub fn validate(&self) -> Result<()> {
        if self.baseline.is_empty() {
            return Err(ReportError::Invalid("baseline is empty".into()));
        }
        for r in &self.rows {
            if !(r.median_ms.is_finite() && r.median_ms > 0.0) {
                return Err(ReportError::Invalid(format!(
                    "{} size {} on {}: median_ms must be a positive number, got {}",
                    r.label(),
                    r.size,
                    r.system,
                    r.median_ms
                )));
            }
            if r.workload.is_empty() || r.system.is_empty() {
                return Err(ReportError::Invalid(
                    "a row has an empty workload or system".into(),
                ));
            }
        }
        Ok(())
    }

    /// What the summary shows: `auto over cpu`, or `the best system over
    /// numpy` when there is no focus system.
    pub fn headline(&self) -> String {
        match &self.focus {
            Some(f) => format!("{f} over {}", self.baseline),
            None => format!("the best system over {}", self.baseline),
        }
    }

    /// The description of `workload`, if the report has one.
    pub fn workload(&self, name: &str) -> Option<&WorkloadInfo> {
        self.workloads.iter().find(|w| w.name == name)
    }
}

/// Writes `report.md`, `results.json`, `results.csv` and the PNG plots
/// (`plots/<workload>.png`, `plots/summary.png`) into `dir` (created if
/// missing); returns the paths written.
///
/// # Errors
/// An invalid report, or a file that cannot be written.
pub fn write(report: &Report, dir: &Path) -> Result<Vec<PathBuf>> {
    report.validate()?;
    let plots_dir = dir.join("plots");
    std::fs::create_dir_all(&plots_dir).map_err(|e| ReportError::io(&plots_dir, e))?;
    let mut written = Vec::new();
    let json = dir.join("results.json");
    write_file(&json, report.to_json().as_bytes())?;
    written.push(json);
    let csv = dir.join("results.csv");
    write_file(&csv, &render::csv(report)?)?;
    written.push(csv);
    // Plotting is third-party drawing code: a panic there becomes an error.
    let plots = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        plot::all(report, &plots_dir)
    }))
    .map_err(|p| ReportError::Plot {
        what: "plots".into(),
        msg: p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panicked".into()),
    })??;
    let md = dir.join("report.md");
    let rel: Vec<String> = plots
        .iter()
        .filter_map(|p| p.strip_prefix(dir).ok())
        .map(|p| p.display().to_string())
        .collect();
    write_file(&md, report_markdown(report, &rel).as_bytes())?;
    written.push(md);
    written.extend(plots);
    Ok(written)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| ReportError::io(path, e))
}
