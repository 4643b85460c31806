//! `crossover bench`: run workloads, check them, report timings.

mod library;
mod measure;
pub mod workloads;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use measure::{measure, Method};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use workloads::Workload;

/// Which devices to run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DeviceArg {
    Cpu,
    Gpu,
    Auto,
    /// Every usable device, plus auto.
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Workloads to run (default: all): elementwise, reduction,
    /// monte_carlo_pi, conditional_accumulate, image_pipeline.
    pub workloads: Vec<String>,
    /// Sizes, comma separated (meaning depends on the workload; default: its
    /// standard size).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Device(s) to run on.
    #[arg(long, value_enum, default_value_t = DeviceArg::All)]
    pub device: DeviceArg,
    /// Minimum timed runs per case.
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Minimum seconds of timed runs per case.
    #[arg(long, default_value_t = 1.0)]
    pub min_time: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the output to this file instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// One measured case (one JSON line).
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub workload: String,
    pub variant: String,
    pub size: usize,
    pub elements: usize,
    pub dtype: String,
    pub device: String,
    pub median_ms: f64,
    pub min_ms: f64,
    pub reps: usize,
    /// Bytes per second of the minimal memory traffic (GB/s).
    pub gbps: Option<f64>,
    pub gflops: Option<f64>,
    /// Millions of samples per second (Monte Carlo).
    pub msamples_per_s: Option<f64>,
    pub check: String,
}

fn devices(arg: DeviceArg) -> Result<Vec<&'static str>, String> {
    let gpu = crossover::Engine::global()
        .devices()
        .into_iter()
        .find(|d| d.device == crossover::DeviceKind::Gpu)
        .map_or(Err("no GPU".to_string()), |d| d.usable);
    match arg {
        DeviceArg::Gpu => match gpu {
            Ok(()) => Ok(vec!["gpu"]),
            Err(why) => Err(format!(
                "--device gpu: the GPU cannot be used: {why}; use --device cpu or auto"
            )),
        },
        DeviceArg::Cpu => Ok(vec!["cpu"]),
        // `auto` goes through the planner (each kernel placed by the cost model).
        DeviceArg::Auto => Ok(vec!["auto"]),
        DeviceArg::All => Ok(if gpu.is_ok() {
            vec!["cpu", "gpu", "auto"]
        } else {
            vec!["cpu", "auto"]
        }),
    }
}

/// The engine policy a `--device` value stands for.
fn policy_of(device: &str) -> crossover::Policy {
    device.parse().unwrap_or_default()
}

fn select(names: &[String]) -> Result<Vec<Box<dyn Workload>>, String> {
    let all = workloads::all();
    if names.is_empty() {
        return Ok(all);
    }
    let known: Vec<&str> = all.iter().map(|w| w.name()).collect();
    for n in names {
        if !known.contains(&n.as_str()) {
            return Err(format!(
                "unknown workload '{n}'; known: {}",
                known.join(", ")
            ));
        }
    }
    Ok(all
        .into_iter()
        .filter(|w| names.iter().any(|n| n == w.name()))
        .collect())
}

pub fn run(args: &BenchArgs) -> Result<(), String> {
    let workloads = select(&args.workloads)?;
    let devices = devices(args.device)?;
    let previous = crossover::policy();
    let method = Method {
        min_reps: args.reps.max(1),
        min_time: args.min_time.max(0.0),
        max_time: (args.min_time * 30.0).max(30.0),
    };
    // The cases to run, for the progress bar.
    let mut plan = Vec::new();
    for w in &workloads {
        let sizes = if args.sizes.is_empty() {
            w.default_sizes()
        } else {
            args.sizes.clone()
        };
        for size in sizes {
            plan.push((w.as_ref(), size));
        }
    }
    let total_cases: usize = plan
        .iter()
        .map(|(w, _)| w.variants().len().max(1) * devices.len())
        .sum();
    let bar = progress(total_cases as u64);
    let mut out: Box<dyn Write> = match &args.out {
        Some(p) => Box::new(std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?),
        None => Box::new(std::io::stdout()),
    };
    let mut failures = 0;
    for (w, size) in plan {
        bar.set_message(format!("{} {size}: preparing inputs", w.name()));
        let mut case = w
            .prepare(size)
            .map_err(|e| format!("{} {size}: {e}", w.name()))?;
        let variants: Vec<&str> = if w.variants().is_empty() {
            vec![w.name()]
        } else {
            w.variants().to_vec()
        };
        let mut rows = Vec::new();
        for &device in &devices {
            crossover::set_policy(policy_of(device));
            for &variant in &variants {
                bar.set_message(format!("{} {variant} {size} on {device}", w.name()));
                let row = run_case(w, case.as_mut(), variant, size, device, method)
                    .map_err(|e| format!("{} {variant} {size}: {e}", w.name()))?;
                if !row.check.starts_with("ok") {
                    failures += 1;
                }
                if args.format == Format::Json {
                    let line = serde_json::to_string(&row).map_err(|e| e.to_string())?;
                    bar.suspend(|| writeln!(out, "{line}"))
                        .map_err(|e| e.to_string())?;
                }
                rows.push(row);
                bar.inc(1);
            }
        }
        if args.format == Format::Table {
            bar.suspend(|| print_table(&mut out, w, &rows))
                .map_err(|e| e.to_string())?;
        }
    }
    bar.finish_and_clear();
    crossover::set_policy(previous);
    if failures > 0 {
        return Err(format!("{failures} case(s) failed their float64 check"));
    }
    Ok(())
}

fn progress(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

fn run_case(
    w: &dyn Workload,
    case: &mut dyn workloads::Case,
    variant: &str,
    size: usize,
    device: &str,
    method: Method,
) -> crossover::Result<Row> {
    // Warm-up, checked against the float64 reference.
    let result = case.run(variant)?;
    let check = case.check(variant, &result)?;
    drop(result);
    let timing = measure(method, || case.run(variant).map(drop))?;
    let work = case.work(variant);
    let per_s = |x: f64| (x > 0.0).then(|| x / timing.median_s);
    Ok(Row {
        workload: w.name().to_string(),
        variant: variant.to_string(),
        size,
        elements: w.elements(size),
        dtype: w.dtype().to_string(),
        device: device.to_string(),
        median_ms: timing.median_s * 1e3,
        min_ms: timing.min_s * 1e3,
        reps: timing.reps,
        gbps: per_s(work.bytes).map(|b| b / 1e9),
        gflops: per_s(work.flops).map(|f| f / 1e9),
        msamples_per_s: per_s(work.samples).map(|s| s / 1e6),
        check: format!(
            "{} ({})",
            if check.ok { "ok" } else { "FAIL" },
            check.detail
        ),
    })
}

fn print_table(out: &mut dyn Write, w: &dyn Workload, rows: &[Row]) -> std::io::Result<()> {
    writeln!(
        out,
        "\n{} ({}; size = {})",
        w.name(),
        w.dtype(),
        w.size_meaning()
    )?;
    writeln!(
        out,
        "{:>12} {:>8} {:>7} {:>11} {:>11} {:>14}  check",
        "size", "variant", "device", "median ms", "min ms", "rate"
    )?;
    for r in rows {
        let rate = match (r.gbps, r.msamples_per_s, r.gflops) {
            (Some(g), _, _) => format!("{g:.1} GB/s"),
            (_, Some(s), _) => format!("{s:.0} Msample/s"),
            (_, _, Some(f)) => format!("{f:.1} GFLOP/s"),
            _ => String::new(),
        };
        writeln!(
            out,
            "{:>12} {:>8} {:>7} {:>11.3} {:>11.3} {:>14}  {}",
            r.size, r.variant, r.device, r.median_ms, r.min_ms, rate, r.check
        )?;
    }
    Ok(())
}
