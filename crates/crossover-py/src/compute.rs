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
//! thread: the hand-over to the helper costs tens of microseconds.

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
/// calling thread: the hand-over costs tens of microseconds a call (15-50
/// us measured for the conditional sum over 8M float32 points, against
/// about 190 when a thread was spawned per call; `np.asarray(xa * xb)` on
/// 2M float32 elements took 0.55 ms that way against NumPy's 0.4, the same
/// loop inline as fast as NumPy's). Pending elements count every pending
/// node's: five fused ops over 8M points count 40M.
pub const INTERRUPTIBLE_POINTS: usize = 1 << 25;

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

/// An evaluation handed to the helper thread, and where its result goes.
struct Job {
    arrays: Vec<Array>,
    /// The caller's `with crossover.device(...)` scope: a thread's own, so
    /// the helper takes it on for the job.
    policy: Option<crossover::Policy>,
    done: mpsc::Sender<crossover::Result<()>>,
}

impl Job {
    /// Evaluates under the caller's scope; a panic that escapes the engine
    /// becomes an error and leaves the thread alive.
    fn run(self) {
        let Job {
            arrays,
            policy,
            done,
        } = self;
        let depth = policy.map(crossover::engine::push_thread_policy);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Array::eval_all(&arrays)))
            .unwrap_or_else(|_| Err(internal("the evaluation thread panicked")));
        if let Some(depth) = depth {
            crossover::engine::pop_thread_policies(depth);
        }
        // Everything of the job is let go before the caller hears back, so
        // nothing of it is still running when the caller goes on (and,
        // say, forks).
        drop(arrays);
        let _ = done.send(r);
    }
}

/// The binding's internal error.
fn internal(msg: impl Into<String>) -> crossover::Error {
    crossover::Error::Internal {
        op: "python binding",
        msg: msg.into(),
    }
}

/// The helper thread of long evaluations, and the process that started it
/// (a forked child has the sender but not the thread).
static HELPER: std::sync::Mutex<Option<(u32, mpsc::Sender<Job>)>> = std::sync::Mutex::new(None);

/// Sends `job` to the helper thread, starting one if this process has
/// none. One thread for the process, kept between calls: a thread spawned
/// per evaluation started with a cold allocator heap and cold kernel
/// scratch, and faulted them in on every call (the conditional sum over
/// 16.8M float32 took 4.74 ms that way against 4.01 evaluated by the
/// caller, one engine thread).
fn send_to_helper(job: Job) -> crossover::Result<()> {
    let mut helper = HELPER.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    let job = match helper.as_ref().filter(|(owner, _)| *owner == pid) {
        Some((_, tx)) => match tx.send(job) {
            Ok(()) => return Ok(()),
            Err(mpsc::SendError(job)) => job, // the thread is gone: start another
        },
        None => job,
    };
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("crossover-eval".into())
        .spawn(move || rx.into_iter().for_each(Job::run))
        .map_err(|e| internal(format!("cannot start the evaluation thread: {e}")))?;
    tx.send(job)
        .map_err(|_| internal("the evaluation thread ended at start"))?;
    *helper = Some((pid, tx));
    Ok(())
}

/// Evaluates on the helper thread while this (main) thread handles signals.
fn interruptible(py: Python<'_>, arrays: &[Array]) -> PyResult<()> {
    let outcome: Result<crossover::Result<()>, PyErr> = py.detach(|| {
        let (done, rx) = mpsc::channel();
        if let Err(e) = send_to_helper(Job {
            arrays: arrays.to_vec(),
            policy: crossover::engine::thread_policy(),
            done,
        }) {
            return Ok(Err(e));
        }
        // Until the helper answers.
        loop {
            match rx.recv_timeout(POLL) {
                Ok(r) => return Ok(r),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Ok(Err(internal(
                        "the evaluation thread ended without a result",
                    )))
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                // Stop the engine and wait for the helper to finish.
                crossover::interrupt::request();
                let _ = rx.recv();
                crossover::interrupt::clear();
                return Err(e);
            }
        }
    });
    outcome?.map_err(|e| errors::to_py(py, e))
}
