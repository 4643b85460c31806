//! The crate's one error type.

use std::path::{Path, PathBuf};

/// What can go wrong while reading or writing a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The report is not valid JSON of the expected shape.
    #[error("report: not a valid report JSON: {0}")]
    Json(String),
    /// The report's contents cannot be rendered.
    #[error("report: {0}")]
    Invalid(String),
    /// A file or directory could not be written.
    #[error("report: cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A plot could not be drawn.
    #[error("report: plot {what}: {msg}")]
    Plot { what: String, msg: String },
}

impl ReportError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> ReportError {
        ReportError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// `Result` with [`ReportError`].
pub type Result<T> = std::result::Result<T, ReportError>;
