//! The one error type of the engine.
//!
//! Every variant names the operation that failed (`op`), so a message read far
//! from its cause still says where it came from. Front ends (the CLI, the
//! Python package) map variants to their own exception kinds by [`ErrorKind`].

use crate::dtype::DType;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in crossover, each naming the operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two shapes cannot be broadcast against each other.
    #[error("{op}: shapes {lhs:?} and {rhs:?} cannot be broadcast together")]
    Broadcast {
        op: &'static str,
        lhs: Vec<usize>,
        rhs: Vec<usize>,
    },
    /// A shape is not acceptable for this operation.
    #[error("{op}: {msg} (shape {shape:?})")]
    Shape {
        op: &'static str,
        shape: Vec<usize>,
        msg: String,
    },
    /// An axis argument is outside the array's rank, or repeated.
    #[error("{op}: axis {axis} is out of bounds for an array of rank {ndim}")]
    Axis {
        op: &'static str,
        axis: isize,
        ndim: usize,
    },
    /// The dtype is not supported by this operation.
    #[error("{op}: dtype {dtype} is not supported: {msg}")]
    DType {
        op: &'static str,
        dtype: DType,
        msg: String,
    },
    /// Host data does not fit the shape it was given with.
    #[error("{op}: data has {len} elements but shape {shape:?} needs {expected}")]
    DataLength {
        op: &'static str,
        len: usize,
        shape: Vec<usize>,
        expected: usize,
    },
    /// An argument value is invalid (a zero slice step, a negative count...).
    #[error("{op}: {msg}")]
    InvalidArgument { op: &'static str, msg: String },
    /// A numerical failure that makes the result meaningless (singular matrix,
    /// matrix not positive definite, non-finite input to a factorisation).
    #[error("{op}: {msg}")]
    Numerical { op: &'static str, msg: String },
    /// A malformed expression string.
    #[error("expression error at position {pos}: {msg}\n  {expr}\n  {caret}")]
    Parse {
        pos: usize,
        msg: String,
        expr: String,
        caret: String,
    },
    /// An expression names a variable or function that does not exist.
    #[error("expression error at position {pos}: unknown {what} '{name}'; known: {known}")]
    UnknownName {
        pos: usize,
        what: &'static str,
        name: String,
        known: String,
    },
    /// A device cannot run the work (absent, unusable, out of memory, forced
    /// policy that cannot be honoured).
    #[error("{op}: device {device}: {msg}")]
    Device {
        op: &'static str,
        device: String,
        msg: String,
    },
    /// A device ran out of memory (under the `auto` policy the kernel then
    /// runs on the CPU instead, and explain says so).
    #[error("{op}: device {device} is out of memory: {msg}")]
    OutOfDeviceMemory {
        op: &'static str,
        device: String,
        msg: String,
    },
    /// Reading or writing a file (profile, trace, report) failed.
    #[error("{op}: {path}: {msg}")]
    Io {
        op: &'static str,
        path: String,
        msg: String,
    },
    /// A bug in crossover itself (a caught panic, a broken invariant).
    /// Please report it.
    #[error("internal error in {op}: {msg}")]
    Internal { op: &'static str, msg: String },
    /// The element or byte count of a shape does not fit the address space
    /// (NumPy: `ValueError: array is too big`).
    #[error("{op}: array is too big; shape {shape:?} of {dtype} has more than isize::MAX bytes")]
    TooBig {
        op: &'static str,
        shape: Vec<usize>,
        dtype: DType,
    },
    /// An array would not fit in this machine's memory (refused before any
    /// allocation or work; NumPy: `MemoryError`).
    #[error(
        "{op}: unable to allocate {} for an array with shape {shape:?} and data type {dtype} \
         (this machine has {} of memory)",
        crate::limits::bytes_text(*.bytes),
        crate::limits::bytes_text(*.limit as f64)
    )]
    OutOfMemory {
        op: &'static str,
        /// Bytes asked for (a float: may exceed u64 for absurd shapes).
        bytes: f64,
        shape: Vec<usize>,
        dtype: DType,
        /// Bytes this machine can hold ([`crate::limits::memory_limit`]).
        limit: u64,
    },
    /// A value does not fit the dtype it must take (a Python integer out of
    /// range for an integer array, NumPy's NEP 50 `OverflowError`).
    #[error("{op}: {msg}")]
    Overflow { op: &'static str, msg: String },
    /// The computation was stopped by [`crate::interrupt::request`] (Ctrl-C
    /// in the Python package).
    #[error("{op}: interrupted")]
    Interrupted { op: &'static str },
}

/// Coarse classification of errors, for front ends that map them to their
/// own exception types (Python: ValueError, TypeError, RuntimeError...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Shapes, axes, argument values, data length.
    Value,
    /// Unsupported or mismatched dtypes.
    Type,
    /// Expression strings.
    Parse,
    /// Numerical failure (singular, not positive definite, non-finite).
    Numerical,
    /// Device problems.
    Device,
    /// File problems.
    Io,
    /// Bugs.
    Internal,
    /// Out of memory (refused up front).
    Memory,
    /// A value out of range for its dtype.
    Overflow,
    /// Stopped on request (Ctrl-C).
    Interrupted,
}

impl Error {
    /// The error's class, for mapping to front-end exception types.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Broadcast { .. }
            | Error::Shape { .. }
            | Error::Axis { .. }
            | Error::DataLength { .. }
            | Error::InvalidArgument { .. }
            | Error::TooBig { .. } => ErrorKind::Value,
            Error::DType { .. } => ErrorKind::Type,
            Error::Parse { .. } | Error::UnknownName { .. } => ErrorKind::Parse,
            Error::Numerical { .. } => ErrorKind::Numerical,
            Error::Device { .. } | Error::OutOfDeviceMemory { .. } => ErrorKind::Device,
            Error::Io { .. } => ErrorKind::Io,
            Error::Internal { .. } => ErrorKind::Internal,
            Error::OutOfMemory { .. } => ErrorKind::Memory,
            Error::Overflow { .. } => ErrorKind::Overflow,
            Error::Interrupted { .. } => ErrorKind::Interrupted,
        }
    }

    pub(crate) fn invalid(op: &'static str, msg: impl Into<String>) -> Self {
        Error::InvalidArgument {
            op,
            msg: msg.into(),
        }
    }

    pub(crate) fn dtype(op: &'static str, dtype: DType, msg: impl Into<String>) -> Self {
        Error::DType {
            op,
            dtype,
            msg: msg.into(),
        }
    }

    pub(crate) fn shape(op: &'static str, shape: &[usize], msg: impl Into<String>) -> Self {
        Error::Shape {
            op,
            shape: shape.to_vec(),
            msg: msg.into(),
        }
    }

    pub(crate) fn internal(op: &'static str, msg: impl Into<String>) -> Self {
        Error::Internal {
            op,
            msg: msg.into(),
        }
    }

    /// Builds a parse error with a caret line pointing at `pos` (a char index).
    pub(crate) fn parse(expr: &str, pos: usize, msg: impl Into<String>) -> Self {
        Error::Parse {
            pos,
            msg: msg.into(),
            expr: expr.to_string(),
            caret: format!("{}^", " ".repeat(pos)),
        }
    }
}

/// Runs `f`, turning a panic inside it into [`Error::Internal`] so that no
/// panic crosses the public API.
pub(crate) fn catch_panic<T>(op: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = if let Some(s) = payload.downcast_ref::<&str>() {
                (*s).to_string()
            } else if let Some(s) = payload.downcast_ref::<String>() {
                s.clone()
            } else {
                "unknown panic".to_string()
            };
            Err(Error::internal(op, msg))
        }
    }
}
