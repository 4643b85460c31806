//! Running pending work from Python: with the GIL released, interruptible
//! by Ctrl-C, and with NumPy's cast warning.
//!
//! Python runs signal handlers only on the main thread, between bytecodes;
//! a computation in Rust would never give it the chance. So a long
//! evaluation started on the main thread runs on a helper thread while the
//! main thread waits in slices of [`POLL`], calling `PyErr_CheckSignals`
//! between them. When a handler raises (`KeyboardInterrupt`), the engine is
//! asked to stop (its kernels check between chunks), the helper returns, and
//! the handler's exception propagates. Shorter evaluations (and those on
//! other threads, where Python never delivers signals) run on the calling
//! thread: the helper's start and hand-back cost about 0.1 ms.

use crate::errors;
use crossover::{Array, Value};
use pyo3::exceptions::PyRuntimeWarning;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::sync::mpsc;
use std::time::Duration;

/// Evaluations with more pending elements than this run on a helper thread
/// while the main thread handles signals: tens of milliseconds of the
/// lightest work and more, where Ctrl-C matters. Below it they run on the
/// calling thread: the helper's start and the hand-back cost about 0.1 ms a
/// call (`np.asarray(xa * xb)` on 2M float32 elements took 0.55 ms on one
/// thread against NumPy's 0.4 with it, the same loop inline as fast as
/// NumPy's).
const INTERRUPTIBLE_POINTS: usize = 1 << 25;

/// The same for work with a library call (matmul, a solver, an FFT), whose
/// time its output's size does not tell: from a million elements.
const INTERRUPTIBLE_LIBRARY_POINTS: usize = 1 << 20;

/// Evaluations with fewer pending elements than this, and no library call,
/// keep the GIL: they take microseconds, about what handing the GIL over
/// and back costs (NumPy keeps it for small loops too).
const KEEP_GIL_POINTS: usize = 1 << 15;

/// How often the waiting main thread lets Python handle signals.
const POLL: Duration = Duration::from_millis(20);

/// Computes the arrays (together, so shared work runs once) with the GIL
/// released.
pub fn compute(py: Python<'_>, arrays: &[Array]) -> PyResult<()> {
    crate::device::check(py)?;
    // The bound recorded with the nodes tells a small evaluation without
    // walking the graph (about 1,100 instructions of a small fused call);
    // the walk counts exactly when the bound is too high to tell. It is 0
    // exactly when everything is computed.
    let bound = crossover::graph::pending_bound(arrays);
    if bound.points == 0 {
        return Ok(());
    }
    let work = if bound.points < KEEP_GIL_POINTS && !bound.library {
        bound
    } else {
        crossover::graph::pending_work(arrays, INTERRUPTIBLE_POINTS)
    };
    let points = work.points;
    let long =
        points > INTERRUPTIBLE_POINTS || (work.library && points > INTERRUPTIBLE_LIBRARY_POINTS);
    let r = if points < KEEP_GIL_POINTS && !work.library {
        errors::engine(py, || Array::eval_all(arrays))
    } else if long && on_main_thread(py) {
        interruptible(py, arrays)
    } else {
        errors::detached(py, || Array::eval_all(arrays))
    };
    let warned = warn_invalid_cast(py);
    r?;
    warned
}

/// Runs `f`, work of `points` elements (no library call) that makes its
/// results itself, as [`compute`] would run an evaluation of that size:
/// with the GIL below [`KEEP_GIL_POINTS`], released above. `Ok(None)`
/// (nothing ran) for work long enough to need Ctrl-C: that takes
/// [`compute`].
pub fn run_short<T: Send>(
    py: Python<'_>,
    points: usize,
    f: impl FnOnce() -> crossover::Result<T> + Send,
) -> PyResult<Option<T>> {
    if points > INTERRUPTIBLE_POINTS {
        return Ok(None);
    }
    crate::device::check(py)?;
    let r = if points < KEEP_GIL_POINTS {
        errors::engine(py, f)
    } else {
        errors::detached(py, f)
    };
    let warned = warn_invalid_cast(py);
    let v = r?;
    warned.map(|_| Some(v))
}

/// The value of an array, computing it if needed. Notes the read for `@jit`.
pub fn value_of(py: Python<'_>, a: &Array, what: &str) -> PyResult<Value> {
    crate::tape::note_read(what);
    compute(py, std::slice::from_ref(a))?;
    errors::engine(py, || a.value())
}

/// `f` of an array's value, as [`value_of`] reads it, without copying the
/// value's layout (`f` runs under the node's lock: no Python, no arrays).
pub fn with_value_of<R>(
    py: Python<'_>,
    a: &Array,
    what: &str,
    f: impl FnOnce(&Value) -> R,
) -> PyResult<R> {
    crate::tape::note_read(what);
    compute(py, std::slice::from_ref(a))?;
    errors::engine(py, || a.with_value(f))
}

/// NumPy's `RuntimeWarning` when a float-to-int conversion met NaN, an
/// infinity or a value out of range (the engine gives NumPy's values).
pub fn warn_invalid_cast(py: Python<'_>) -> PyResult<()> {
    if crossover::cpu::num::take_invalid_cast() {
        let ty = py.get_type::<PyRuntimeWarning>();
        PyErr::warn(py, &ty, c"invalid value encountered in cast", 1)?;
    }
    Ok(())
}

static MAIN_THREAD: PyOnceLock<u64> = PyOnceLock::new();

fn on_main_thread(py: Python<'_>) -> bool {
    let main = MAIN_THREAD.get_or_try_init(py, || -> PyResult<u64> {
        py.import("threading")?
            .call_method0("main_thread")?
            .getattr("ident")?
            .extract()
    });
    // SAFETY: PyThread_get_thread_ident has no preconditions.
    let me = unsafe { pyo3::ffi::PyThread_get_thread_ident() } as u64;
    main.is_ok_and(|m| *m == me)
}

/// Evaluates on a helper thread while this (main) thread handles signals.
fn interruptible(py: Python<'_>, arrays: &[Array]) -> PyResult<()> {
    let outcome: Result<crossover::Result<()>, PyErr> = py.detach(|| {
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            let worker = s.spawn(move || {
                // The engine turns panics into errors itself.
                let r = Array::eval_all(arrays);
                let _ = tx.send(());
                r
            });
            // Until the helper finishes (or is gone: its result decides).
            while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(POLL) {
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    crossover::interrupt::request();
                    let _ = worker.join();
                    crossover::interrupt::clear();
                    return Err(e);
                }
            }
            Ok(worker.join().unwrap_or_else(|_| {
                Err(crossover::Error::Internal {
                    op: "python binding",
                    msg: "the evaluation thread panicked".into(),
                })
            }))
        })
    });
    outcome?.map_err(|e| errors::to_py(py, e))
}
