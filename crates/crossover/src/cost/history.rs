//! Online refinement (StarPU-style history): every measured kernel run
//! updates a correction factor for its (device, size bucket, kernel key), so
//! a model that is wrong for some kernel corrects itself over repeated runs.
//!
//! The factor is a running average of `ln(measured / modelled)`; the first
//! run of each entry is a warm-up (page faults, thread start) and is not
//! averaged. Predictions use the factor from the second run on.
//!
//! ```
//! use crossover::cost::History;
//! use crossover::DeviceKind;
//! let mut h = History::default();
//! let key = History::key(DeviceKind::Cpu, "x*2", 1 << 20);
//! for _ in 0..10 {
//!     h.record(&key, 1e-3, 4e-3); // the model says 1 ms, runs take 4 ms
//! }
//! let (factor, _) = h.correction(&key).unwrap();
//! assert!((factor - 4.0).abs() < 1e-9);
//! ```

use crate::device::DeviceKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Entries kept at most; the least-run entry is dropped first.
pub const MAX_ENTRIES: usize = 4096;
/// Runs averaged at most (older runs fade out).
const WINDOW: f64 = 8.0;

/// Whether a run competed for the CPU: a time measured while other threads
/// (another process's, or this one's other work) took the cores says
/// nothing about the kernel, and learning from it skews predictions (a
/// Dask worker sharing its cores learned x16).
///
/// The sign is involuntary context switches of this process during the
/// run: alone, a thread keeps its core; under contention the scheduler
/// preempts it every few milliseconds.
#[derive(Clone, Copy, Debug)]
pub struct Contention {
    start: i64,
}

impl Contention {
    /// Starts watching (one `getrusage` call).
    pub fn start() -> Contention {
        Contention {
            start: involuntary_switches(),
        }
    }

    /// Whether the run, which took `seconds`, was preempted more than once
    /// per 4 ms (plus two for noise).
    pub fn contended(&self, seconds: f64) -> bool {
        preempted_often(involuntary_switches().saturating_sub(self.start), seconds)
    }
}

/// The rule of [`Contention::contended`].
fn preempted_often(switches: i64, seconds: f64) -> bool {
    switches as f64 > 2.0 + seconds * 250.0
}

fn involuntary_switches() -> i64 {
    // SAFETY: getrusage writes the struct it is given; zeroed is a valid
    // initial value for it.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut u) != 0 {
            return 0;
        }
        u.ru_nivcsw as i64
    }
}

/// One (device, size bucket, kernel) history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Runs seen (the first is a warm-up).
    pub runs: u64,
    /// Running average of `ln(measured / modelled)` over runs after the
    /// first.
    pub log_ratio: f64,
    /// The last measured time, seconds.
    pub last_s: f64,
}

/// Measured kernel times, keyed by [`History::key`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct History {
    entries: BTreeMap<String, Entry>,
}

impl History {
    /// The key of a kernel run: device, power-of-two size bucket of its
    /// points, and its structural key.
    pub fn key(device: DeviceKind, kernel_key: &str, points: usize) -> String {
        let bucket = usize::BITS - points.max(1).leading_zeros();
        format!("{device}|2^{bucket}|{kernel_key}")
    }

    /// Records a run that the model (without correction) predicted at
    /// `model_s` and that took `measured_s`.
    pub fn record(&mut self, key: &str, model_s: f64, measured_s: f64) {
        if !(model_s > 0.0 && measured_s > 0.0 && model_s.is_finite() && measured_s.is_finite()) {
            return;
        }
        if !self.entries.contains_key(key) && self.entries.len() >= MAX_ENTRIES {
            if let Some(k) = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.runs)
                .map(|(k, _)| k.clone())
            {
                self.entries.remove(&k);
            }
        }
        let e = self.entries.entry(key.to_string()).or_insert(Entry {
            runs: 0,
            log_ratio: 0.0,
            last_s: measured_s,
        });
        e.runs += 1;
        e.last_s = measured_s;
        if e.runs >= 2 {
            let n = (e.runs - 1) as f64;
            let alpha = 1.0 / n.min(WINDOW);
            let r = (measured_s / model_s).ln().clamp(-14.0, 14.0);
            e.log_ratio += alpha * (r - e.log_ratio);
        }
    }

    /// The correction factor (measured / modelled) and the runs behind it,
    /// once an entry has more than its warm-up run.
    pub fn correction(&self, key: &str) -> Option<(f64, u64)> {
        self.entries
            .get(key)
            .filter(|e| e.runs >= 2)
            .map(|e| (e.log_ratio.exp(), e.runs - 1))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, by key.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries.iter().map(|(k, e)| (k.as_str(), e))
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod contention_tests {
    #[test]
    fn runs_preempted_every_few_ms_are_contended() {
        assert!(!super::preempted_often(0, 0.035));
        assert!(!super::preempted_often(2, 1e-4));
        assert!(super::preempted_often(20, 0.035));
        assert!(super::preempted_often(400, 1.0));
    }
}
