//! Timeline of kernels and copies per device, exported as Chrome-trace JSON
//! (open it in Perfetto or `chrome://tracing`).
//!
//! Recording is off until [`start`] is called or `CROSSOVER_TRACE=file.json`
//! is set (the file is written when the process exits, or by
//! [`write_chrome`] at any time). When off, recording an event costs one
//! relaxed atomic load.
//!
//! ```
//! use crossover::{trace, Array};
//! trace::start();
//! let a = Array::from_vec(vec![1.0f32; 1000], &[1000])?;
//! a.mul(&a)?.add(1.0)?.eval()?;
//! let events = trace::stop();
//! assert!(events.iter().any(|e| e.category == "kernel"));
//! let json = trace::to_chrome_json(&events);
//! assert!(json.contains("traceEvents"));
//! # Ok::<(), crossover::Error>(())
//! ```

use crate::device::DeviceKind;
use crate::error::{Error, Result};
use serde_json::{json, Value as Json};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// Events kept at most (older ones are kept; newer ones dropped and counted).
const MAX_EVENTS: usize = 1 << 20;

/// One span on the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Kernel name, or `copy host->gpu`.
    pub name: String,
    /// `"kernel"` or `"copy"`.
    pub category: &'static str,
    /// Timeline row: `cpu`, `gpu`, `copy host->gpu`, `copy gpu->host`.
    pub track: &'static str,
    /// Start, microseconds since the process's first traced event.
    pub start_us: f64,
    /// Duration in microseconds.
    pub duration_us: f64,
    /// Extra fields shown on click (bytes, predicted time, reason...).
    pub args: Vec<(&'static str, Json)>,
}

static ON: AtomicBool = AtomicBool::new(false);
static EVENTS: Mutex<Vec<Event>> = Mutex::new(Vec::new());
static DROPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// The current instant (start of an event).
pub fn now() -> Instant {
    // Make sure the epoch is not later than any start we hand out.
    let _ = epoch();
    Instant::now()
}

/// Starts recording (clearing earlier events).
pub fn start() {
    let _ = epoch();
    lock().clear();
    DROPPED.store(0, Ordering::Relaxed);
    ON.store(true, Ordering::Release);
}

/// Stops recording and returns the events.
pub fn stop() -> Vec<Event> {
    ON.store(false, Ordering::Release);
    std::mem::take(&mut *lock())
}

/// Whether events are being recorded.
pub fn is_recording() -> bool {
    ON.load(Ordering::Relaxed)
}

/// A copy of the events recorded so far (recording goes on).
pub fn events() -> Vec<Event> {
    lock().clone()
}

fn lock() -> std::sync::MutexGuard<'static, Vec<Event>> {
    EVENTS.lock().unwrap_or_else(|p| p.into_inner())
}

fn push(e: Event) {
    let mut ev = lock();
    if ev.len() < MAX_EVENTS {
        ev.push(e);
    } else {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

fn span(start: Instant) -> (f64, f64) {
    let s = start.saturating_duration_since(epoch()).as_secs_f64() * 1e6;
    (s, start.elapsed().as_secs_f64() * 1e6)
}

/// Records a kernel that started at `start` and ends now.
pub(crate) fn kernel_event(
    device: DeviceKind,
    name: &str,
    start: Instant,
    args: Vec<(&'static str, Json)>,
) {
    if !is_recording() {
        return;
    }
    let (start_us, duration_us) = span(start);
    push(Event {
        name: name.to_string(),
        category: "kernel",
        track: device.name(),
        start_us,
        duration_us,
        args,
    });
}

/// Records a copy of `bytes` from one device to another, started at `start`
/// and ending now; `input` names what was copied, if known.
pub(crate) fn copy_event(
    from: DeviceKind,
    to: DeviceKind,
    bytes: usize,
    start: Instant,
    input: Option<&str>,
) {
    if !is_recording() {
        return;
    }
    let (start_us, duration_us) = span(start);
    let track = match (from, to) {
        (DeviceKind::Cpu, _) => "copy host->gpu",
        _ => "copy gpu->host",
    };
    let mut args = vec![("bytes", json!(bytes))];
    if let Some(i) = input {
        args.push(("for", json!(i)));
    }
    push(Event {
        name: format!("copy {}->{}", location_name(from), location_name(to)),
        category: "copy",
        track,
        start_us,
        duration_us,
        args,
    });
}

fn location_name(d: DeviceKind) -> &'static str {
    match d {
        DeviceKind::Cpu => "host",
        DeviceKind::Gpu => "gpu",
    }
}

const TRACKS: [&str; 4] = ["cpu", "gpu", "copy host->gpu", "copy gpu->host"];

/// The events as Chrome-trace JSON (`{"traceEvents": [...]}`), one row
/// (thread) per device and copy direction.
pub fn to_chrome_json(events: &[Event]) -> String {
    let mut out: Vec<Json> = TRACKS
        .iter()
        .enumerate()
        .map(|(tid, name)| {
            json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}})
        })
        .collect();
    out.push(json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "crossover"}}));
    for e in events {
        let tid = TRACKS.iter().position(|t| *t == e.track).unwrap_or(0);
        let args: serde_json::Map<String, Json> = e
            .args
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        out.push(json!({
            "name": e.name,
            "cat": e.category,
            "ph": "X",
            "ts": e.start_us,
            "dur": e.duration_us,
            "pid": 1,
            "tid": tid,
            "args": args,
        }));
    }
    let dropped = DROPPED.load(Ordering::Relaxed);
    json!({
        "traceEvents": out,
        "displayTimeUnit": "ms",
        "otherData": {"crossover": crate::VERSION, "dropped_events": dropped},
    })
    .to_string()
}

/// Writes `events` as Chrome-trace JSON to `path`.
///
/// # Errors
/// [`Error::Io`] when the file cannot be written.
pub fn write_chrome(path: &Path, events: &[Event]) -> Result<()> {
    std::fs::write(path, to_chrome_json(events)).map_err(|e| Error::Io {
        op: "write trace",
        path: path.display().to_string(),
        msg: e.to_string(),
    })
}

/// The file named by `CROSSOVER_TRACE`, if set.
pub fn env_path() -> Option<std::path::PathBuf> {
    std::env::var_os("CROSSOVER_TRACE")
        .filter(|s| !s.is_empty())
        .map(Into::into)
}

/// Writes the events recorded so far to the `CROSSOVER_TRACE` file (at exit).
pub(crate) fn flush_env() {
    if let Some(p) = env_path() {
        if let Err(e) = write_chrome(&p, &events()) {
            eprintln!("crossover: {e}");
        }
    }
}
