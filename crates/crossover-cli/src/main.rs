//! The `crossover` command: benchmarks, calibration, explain, machine info.

mod advise;
mod bench;
mod calibrate;
mod explain;
mod info;
mod report;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// The Python module's allocator too, so the CLI's figures match what
/// Python users get (small evaluations allocate a few dozen blocks each).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// crossover: NumPy-style array math, fused and placed where it is fastest.
#[derive(Parser)]
#[command(name = "crossover", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Does a GPU help here? Per workload, the size from which it does.
    Advise(advise::AdviseArgs),
    /// Run benchmark workloads, checked against float64 references.
    Bench(bench::BenchArgs),
    /// Measure this machine and write its profile (used for placement).
    Calibrate(calibrate::CalibrateArgs),
    /// Show where each kernel of an expression would run, and why.
    Explain(explain::ExplainArgs),
    /// Show the devices found (and why a GPU is not usable), the policy and
    /// the profile file.
    Info,
    /// Render a report (tables, report.md, CSV, plots) from its results.json.
    Report(report::ReportArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Advise(args) => advise::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Calibrate(args) => calibrate::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Info => info::run(),
        Command::Report(args) => report::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn help_lists_every_subcommand() {
        let mut cmd = Cli::command();
        let help = cmd.render_help().to_string();
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        assert!(names.len() >= 6, "{names:?}");
        for n in names.iter().filter(|n| *n != "help") {
            assert!(help.contains(n.as_str()), "{n} missing from:\n{help}");
        }
    }
}
