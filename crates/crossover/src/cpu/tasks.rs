//! Running a kernel's tasks on the calling thread and the pool together.
//!
//! `pool().install(|| (0..n).into_par_iter()...)` from a thread outside the
//! pool (Python's, a user's) parks the caller, wakes a worker, lets it wake
//! the next, and wakes the caller at the end: three cross-thread wake-ups,
//! 15-20 us on this project's VMs, against 13 us for NumPy's whole `a + b`
//! on 1e5 float32. Here the caller starts on its own share at once and only
//! the helpers are woken; a helper that wakes late finds its share already
//! taken and returns.
//!
//! The tasks are split into one contiguous block per participant (the
//! caller first), each claimed task by task through the block's counter, so
//! when all participants run at the same speed consecutive kernels see the
//! same points on the same core (warm caches), and any participant that
//! finishes its block takes tasks from the others. Which thread runs a task
//! never changes what it computes: callers index results by task.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `task(t)` once for every `t` in `0..tasks`, on the calling thread
/// and up to `threads() - 1` of the pool's threads, returning when all have
/// run. A panic in a task reaches the caller (after the others finish).
pub(crate) fn for_each_task(tasks: usize, task: impl Fn(usize) + Sync) {
    let helpers = super::threads()
        .saturating_sub(1)
        .min(tasks.saturating_sub(1));
    if helpers == 0 {
        (0..tasks).for_each(task);
        return;
    }
    let parts = helpers + 1;
    let start = |p: usize| p * tasks / parts;
    let next: Vec<AtomicUsize> = (0..parts).map(|p| AtomicUsize::new(start(p))).collect();
    let work = |me: usize| {
        for k in 0..parts {
            let p = (me + k) % parts;
            let end = start(p + 1);
            loop {
                let t = next[p].fetch_add(1, Ordering::Relaxed);
                if t >= end {
                    break;
                }
                task(t);
            }
        }
    };
    super::pool().in_place_scope(|s| {
        for h in 1..parts {
            let work = &work;
            s.spawn(move |_| work(h));
        }
        work(0);
    });
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
