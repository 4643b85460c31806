//! The report header of `crossover bench`: machine, versions, environment,
//! method and notes, so a figure can be reproduced and understood later.

use super::measure::Method;
use crossover::device::{cores, cpu_model};
use crossover::{DeviceKind, Engine};
use crossover_report::Report;
use serde_json::json;

/// Environment variables that change what the bench measures.
const ENVIRONMENT: [&str; 6] = [
    "CROSSOVER_DEVICE",
    "CROSSOVER_NUM_THREADS",
    "CROSSOVER_PROFILE",
    "RAYON_NUM_THREADS",
    "OPENBLAS_CORETYPE",
    "OMP_NUM_THREADS",
];

/// Total memory in GiB, from /proc/meminfo where there is one.
fn memory_gib() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: f64 = text
        .lines()
        .find(|l| l.starts_with("MemTotal:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((kib / 1024.0 / 1024.0 * 10.0).round() / 10.0)
}

fn os() -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!(" {}", s.trim()))
        .unwrap_or_default();
    format!(
        "{}{release} ({})",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// The GPU's name, or `none` with the reason it cannot be used.
pub fn gpu_description() -> String {
    let gpu = Engine::global()
        .devices()
        .into_iter()
        .find(|d| d.device == DeviceKind::Gpu);
    match gpu {
        Some(d) => match (d.usable, d.name) {
            (Ok(()), Some(name)) => name,
            (Ok(()), None) => "usable".into(),
            (Err(why), _) => format!("none usable ({why})"),
        },
        None => "none".into(),
    }
}

/// An empty report with the header filled in.
pub fn report(method: Method, devices: &[&str]) -> Report {
    let mut r = Report::new("crossover bench", "cpu");
    r.date = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    r.command = std::env::args()
        .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
        .collect::<Vec<_>>()
        .join(" ");
    r.machine.insert("cpu".into(), json!(cpu_model()));
    r.machine.insert("cores".into(), json!(cores()));
    r.machine
        .insert("threads used".into(), json!(crossover::cpu::threads()));
    r.machine
        .insert("simd".into(), json!(crossover::cpu::simd::level().name()));
    if let Some(m) = memory_gib() {
        r.machine.insert("memory_gib".into(), json!(m));
    }
    r.machine.insert("os".into(), json!(os()));
    r.machine.insert("gpu".into(), json!(gpu_description()));
    r.versions
        .insert("crossover".into(), crossover::VERSION.to_string());
    r.versions.insert(
        "placement profile".into(),
        Engine::global().profile_note().to_string(),
    );
    for var in ENVIRONMENT {
        if let Ok(v) = std::env::var(var) {
            r.environment.insert(var.into(), v);
        }
    }
    r.method = format!(
        "Inputs are made and evaluated outside the timed region. Each case runs once as a \
         warm-up, checked against a float64 reference computed from the same inputs; then \
         timed runs repeat until at least {} runs and {} s (stopping at {} s); the median and \
         minimum are reported. Devices: {}. `cpu` and `gpu` force every kernel onto that \
         device; `auto` lets the planner place each kernel by the cost model, and the device \
         it chose is shown in brackets. Speedups are the cpu time divided by the other time \
         (above 1: faster).",
        method.min_reps,
        method.min_time,
        method.max_time,
        devices.join(", ")
    );
    r.focus = devices.contains(&"auto").then(|| "auto".to_string());
    r.policies = vec!["auto".into()];
    if devices.contains(&"gpu") {
        r.gpu_systems = vec!["gpu".into()];
    }
    r
}
