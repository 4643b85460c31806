//! Running a kernel's tasks on the calling thread and the pool together.
//!
//! `pool().install(|| (0..n).into_par_iter()...)` from a thread outside the
//! pool (Python's, a user's) parks the caller, wakes a worker, lets it wake
//! the next, and wakes the caller at the end: three cross-thread wake-ups,
//! 15-20 us on this project's VMs, against 13 us for NumPy's whole `a + b`
//! on 1e5 float32. Here the caller starts on its own share at once and only
//! the helpers are woken; a helper that wakes late finds its share already
//! taken and returns, and the caller does not wait for it to wake (nor
//! sleep itself, to be woken at the end).
//!
//! The tasks are split into one contiguous block per participant (the
//! caller first), each claimed task by task through the block's counter, so
//! when all participants run at the same speed consecutive kernels see the
//! same points on the same core (warm caches), and any participant that
//! finishes its block takes tasks from the others. Which thread runs a task
//! never changes what it computes: callers index results by task.
//!
//! A pool worker asleep between calls costs a futex wake across cores,
//! microseconds on a VM: at 10,000 points of a heavy function the caller
//! had done most of the helper's block before it arrived. So a helper that
//! has run its share keeps polling for the next call's for [`HOT_SPIN`]
//! (a bounded spin, as OpenMP runtimes do), and a caller that finds one
//! polling hands its share over directly ([`HOT`]); only otherwise does it
//! go through the pool.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a helper keeps polling for the next call's share after its
/// last one before it returns to the pool.
const HOT_SPIN: Duration = Duration::from_micros(50);

/// What the caller and its helpers share; owned by all (an `Arc`), so a
/// helper that starts after the caller returned touches only this.
struct Shared {
    /// Per block: the next unclaimed task.
    next: Vec<AtomicUsize>,
    tasks: usize,
    /// Set by the caller once every task is claimed and its own are done:
    /// a helper that starts later must not touch the task.
    closed: AtomicBool,
    /// Helpers between their start and their end.
    inflight: AtomicUsize,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Shared {
    fn start(&self, p: usize) -> usize {
        p * self.tasks / self.next.len()
    }

    /// Claims and runs tasks, own block first, then the others'.
    fn work(&self, me: usize, task: &(dyn Fn(usize) + Sync)) {
        let parts = self.next.len();
        for k in 0..parts {
            let p = (me + k) % parts;
            let end = self.start(p + 1);
            loop {
                let t = self.next[p].fetch_add(1, Ordering::Relaxed);
                if t >= end {
                    break;
                }
                task(t);
            }
        }
    }
}

/// The task's address with its lifetime erased, for a helper job.
struct TaskPtr(*const (dyn Fn(usize) + Sync + 'static));
// SAFETY: the pointee is `Sync` and only dereferenced under the protocol
// in `for_each_task`, while the caller keeps it alive.
unsafe impl Send for TaskPtr {}

/// Runs `task(t)` once for every `t` in `0..tasks`, on the calling thread
/// and up to `threads() - 1` of the pool's threads, returning when all have
/// run. A panic in a task reaches the caller (after the others finish).
///
/// The caller never sleeps: it runs tasks until none is left, then waits
/// (spinning) only for helpers that are inside a task; a helper that has
/// not started by then never touches the task. So a slow wake-up costs
/// the caller nothing beyond doing the work itself.
pub(crate) fn for_each_task(tasks: usize, task: impl Fn(usize) + Sync) {
    let helpers = super::threads()
        .saturating_sub(1)
        .min(tasks.saturating_sub(1));
    if helpers == 0 {
        (0..tasks).for_each(task);
        return;
    }
    let parts = helpers + 1;
    let shared = Arc::new(Shared {
        next: (0..parts)
            .map(|p| AtomicUsize::new(p * tasks / parts))
            .collect(),
        tasks,
        closed: AtomicBool::new(false),
        inflight: AtomicUsize::new(0),
        panic: Mutex::new(None),
    });
    let task: &(dyn Fn(usize) + Sync) = &task;
    // SAFETY: only the lifetime is erased (same fat pointer). Helpers
    // dereference it only after registering in `inflight` and seeing
    // `closed` unset; the caller sets `closed` and then waits for
    // `inflight` to reach zero before returning, so every dereference
    // happens while `task` is alive.
    let erased = TaskPtr(unsafe {
        std::mem::transmute::<
            *const (dyn Fn(usize) + Sync + '_),
            *const (dyn Fn(usize) + Sync + 'static),
        >(task)
    });
    for index in 1..parts {
        hand_off(HelperJob {
            shared: shared.clone(),
            task: TaskPtr(erased.0),
            index,
        });
    }
    let mine = catch_unwind(AssertUnwindSafe(|| shared.work(0, task)));
    shared.closed.store(true, Ordering::SeqCst);
    // A helper inside a task finishes it soon; spin, then yield, in case
    // it was descheduled on a busy machine.
    let mut spins = 0u32;
    while shared.inflight.load(Ordering::SeqCst) != 0 {
        if spins < 4096 {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
    if let Err(p) = mine {
        resume_unwind(p);
    }
    let helper_panic = shared
        .panic
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(p) = helper_panic {
        resume_unwind(p);
    }
}

/// One helper's share of one call.
struct HelperJob {
    shared: Arc<Shared>,
    task: TaskPtr,
    index: usize,
}

impl HelperJob {
    fn run(self) {
        let sh = &self.shared;
        sh.inflight.fetch_add(1, Ordering::SeqCst);
        if !sh.closed.load(Ordering::SeqCst) {
            // SAFETY: registered in `inflight` before `closed` was set
            // (SeqCst on both sides), so the caller is still waiting and
            // `task` is alive (see `for_each_task`).
            let task = unsafe { &*self.task.0 };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| sh.work(self.index, task))) {
                *sh.panic.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
            }
        }
        sh.inflight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The hand-off to a helper still polling after its last share.
struct Hot {
    /// A helper is polling. A caller that swaps it from true to false owns
    /// the hand-off and must post its job; a polling helper that swaps it
    /// back itself has left.
    waiting: AtomicBool,
    /// Set once `job` holds the posted share.
    posted: AtomicBool,
    job: Mutex<Option<HelperJob>>,
}

static HOT: Hot = Hot {
    waiting: AtomicBool::new(false),
    posted: AtomicBool::new(false),
    job: Mutex::new(None),
};

/// Gives a helper its share: to the polling helper if there is one, else
/// as a job of the pool.
fn hand_off(job: HelperJob) {
    if HOT
        .waiting
        .compare_exchange(true, false, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        *HOT.job.lock().unwrap_or_else(|e| e.into_inner()) = Some(job);
        HOT.posted.store(true, Ordering::Release);
    } else {
        super::pool().spawn(move || helper(job));
    }
}

/// A pool job: runs its share, then polls for the next call's for
/// [`HOT_SPIN`] after each one (one helper at a time; the others return).
fn helper(first: HelperJob) {
    first.run();
    loop {
        if HOT
            .waiting
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return;
        }
        let start = Instant::now();
        let mut spins = 0u32;
        while !HOT.posted.load(Ordering::Acquire) {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) && start.elapsed() > HOT_SPIN {
                if HOT
                    .waiting
                    .compare_exchange(true, false, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    return;
                }
                // A caller claimed this helper: its job is being posted.
                while !HOT.posted.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                break;
            }
            std::hint::spin_loop();
        }
        HOT.posted.store(false, Ordering::Relaxed);
        let job = HOT.job.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(job) = job {
            job.run();
        }
    }
}

/// `f(t)` for every `t` in `0..tasks`, in task order, computed as
/// [`for_each_task`] runs them.
pub(crate) fn map_tasks<R: Send>(tasks: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    // A mutex per slot (uncontended: each task runs once) keeps `R: Send`
    // enough; a task's result is large next to its locking.
    let slots: Vec<Mutex<Option<R>>> = (0..tasks).map(|_| Mutex::new(None)).collect();
    for_each_task(tasks, |t| {
        let r = f(t);
        *slots[t].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
    });
    slots
        .into_iter()
        .map(|s| {
            s.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .expect("for_each_task runs every task")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_task_runs_exactly_once_at_any_count() {
        for tasks in [0, 1, 2, 3, 7, 64, 1001] {
            let runs: Vec<AtomicU32> = (0..tasks).map(|_| AtomicU32::new(0)).collect();
            for_each_task(tasks, |t| {
                runs[t].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                runs.iter().all(|r| r.load(Ordering::Relaxed) == 1),
                "{tasks} tasks"
            );
        }
    }

    #[test]
    fn short_calls_back_to_back_each_run_every_task_once() {
        // Tiny tasks: helpers often start after the caller is done, and
        // must then leave this call's (dead) stack alone.
        for round in 0..3000 {
            let tasks = 2 + round % 3;
            let runs: Vec<AtomicU32> = (0..tasks).map(|_| AtomicU32::new(0)).collect();
            for_each_task(tasks, |t| {
                runs[t].fetch_add(1, Ordering::Relaxed);
            });
            assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn hand_offs_to_a_polling_helper_and_through_the_pool_run_every_task_once() {
        // Back to back, a helper is usually still polling (a direct
        // hand-off); after a pause longer than HOT_SPIN it has returned to
        // the pool (a pool job). Both, in every order, and a panic in
        // either kind of share reaching the caller.
        for round in 0..600 {
            if round % 5 == 0 {
                std::thread::sleep(HOT_SPIN * 3);
            }
            let tasks = 2 + round % 7;
            let runs: Vec<AtomicU32> = (0..tasks).map(|_| AtomicU32::new(0)).collect();
            for_each_task(tasks, |t| {
                // Long enough that the helper usually takes a share.
                std::hint::black_box((0..2_000u32).sum::<u32>());
                runs[t].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                runs.iter().all(|r| r.load(Ordering::Relaxed) == 1),
                "round {round}"
            );
            if round % 50 == 1 {
                let r = std::panic::catch_unwind(|| {
                    for_each_task(tasks, |t| {
                        if t == tasks - 1 {
                            panic!("last task");
                        }
                    })
                });
                assert!(r.is_err(), "round {round}");
            }
        }
    }

    #[test]
    fn map_tasks_keeps_task_order() {
        for tasks in [0, 1, 5, 333] {
            let got = map_tasks(tasks, |t| t * t + 1);
            let want: Vec<usize> = (0..tasks).map(|t| t * t + 1).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn a_panicking_task_reaches_the_caller() {
        let r = std::panic::catch_unwind(|| {
            for_each_task(16, |t| {
                if t == 11 {
                    panic!("task 11");
                }
            })
        });
        assert!(r.is_err());
    }
}
