//! The `crossover` command: benchmarks (the main job) and machine info.

mod bench;
mod info;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// crossover: NumPy-style array math, fused and placed where it is fastest.
#[derive(Parser)]
#[command(name = "crossover", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run benchmark workloads, checked against float64 references.
    Bench(bench::BenchArgs),
    /// Show the version, CPU, SIMD level and threads in use.
    Info,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => bench::run(&args),
        Command::Info => info::run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
