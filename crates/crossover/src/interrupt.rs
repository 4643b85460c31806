//! Stopping a long computation from outside (Ctrl-C in the Python package).
//!
//! One process-wide flag: [`request`] sets it, the CPU kernels check it
//! between chunks of work (and the engine between kernels) and return
//! [`Error::Interrupted`]; whoever requested clears it with [`clear`] once
//! the evaluation has returned. A check is one relaxed atomic load.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every running evaluation to stop at its next check.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Clears a request (before the next evaluation should run normally).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Whether a stop was requested.
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// [`Error::Interrupted`] when a stop was requested.
#[inline]
pub fn check(op: &'static str) -> Result<()> {
    if requested() {
        return Err(Error::Interrupted { op });
    }
    Ok(())
}
