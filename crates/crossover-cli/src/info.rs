//! `crossover info`: what this machine offers and what crossover uses.

use crossover::cpu::{self, simd};

/// The CPU model name from /proc/cpuinfo (or "unknown").
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// Logical cores the OS reports.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub fn run() -> Result<(), String> {
    println!("crossover {}", crossover::VERSION);
    println!("cpu:       {} ({} cores)", cpu_model(), cores());
    println!("simd:      {}", simd::level().name());
    println!(
        "threads:   {} (set CROSSOVER_NUM_THREADS to change)",
        cpu::threads()
    );
    println!("gpu:       no GPU backend in this build (CPU only)");
    Ok(())
}
