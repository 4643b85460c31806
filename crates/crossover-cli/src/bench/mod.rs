//! `crossover bench`: run every workload at the standard sizes on every
//! usable device and under `auto`, check each result against float64,
//! print per-workload tables and a summary, and (`--out DIR`) write a
//! report with plots.

mod header;
mod library;
mod measure;
pub mod workloads;

use clap::{Args, ValueEnum};
use crossover_report::{Report, Row, WorkloadInfo};
use indicatif::{ProgressBar, ProgressStyle};
use measure::{measure, Method};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use workloads::{Workload, QUICK_SIZES, STANDARD_SIZES};

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
    /// Workloads to run (default: all): elementwise, reduction, matmul,
    /// fft2, solve, svd, sparse_matmul, monte_carlo_pi,
    /// conditional_accumulate, image_pipeline.
    pub workloads: Vec<String>,
    /// Problem sizes N (an NxN problem), comma separated. Default: 100, 256,
    /// 512, 1024, 2048, 4096 and 10000 (svd stops at 2048, image_pipeline
    /// at 4096).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Sizes 100, 300 and 1000 with short timings: under a minute.
    #[arg(long)]
    pub quick: bool,
    /// Device(s) to run on.
    #[arg(long, value_enum, default_value_t = DeviceArg::All)]
    pub device: DeviceArg,
    /// Minimum timed runs per case (default 5; 3 with --quick).
    #[arg(long)]
    pub reps: Option<usize>,
    /// Minimum seconds of timed runs per case (default 1; 0.05 with --quick).
    #[arg(long)]
    pub min_time: Option<f64>,
    /// Output on stdout: tables, or one JSON object per case.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write a report into this directory: report.md, results.json,
    /// results.csv and PNG plots.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
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

/// The timing method for the arguments.
fn method(args: &BenchArgs) -> Method {
    let (reps, min_time) = if args.quick { (3, 0.05) } else { (5, 1.0) };
    let min_time = args.min_time.unwrap_or(min_time).max(0.0);
    Method {
        min_reps: args.reps.unwrap_or(reps).max(1),
        min_time,
        max_time: (min_time * 30.0).max(if args.quick { 5.0 } else { 30.0 }),
    }
}

/// The sizes to run `w` at.
fn sizes(args: &BenchArgs, w: &dyn Workload) -> Vec<usize> {
    if !args.sizes.is_empty() {
        return args.sizes.clone();
    }
    if args.quick {
        return QUICK_SIZES.to_vec();
    }
    STANDARD_SIZES
        .into_iter()
        .filter(|&n| n <= w.largest_default())
        .collect()
}

pub fn run(args: &BenchArgs) -> Result<(), String> {
    let workloads = select(&args.workloads)?;
    if args.sizes.contains(&0) {
        return Err("--sizes: a size must be at least 1, got 0".into());
    }
    let devices = devices(args.device)?;
    let method = method(args);
    let mut report = header::report(method, &devices);
    if !devices.contains(&"gpu") {
        report.notes.push(format!(
            "No gpu column: the GPU is {}.",
            header::gpu_description()
        ));
    }
    let plan: Vec<(&dyn Workload, Vec<usize>)> = workloads
        .iter()
        .map(|w| (w.as_ref(), sizes(args, w.as_ref())))
        .collect();
    for (w, _) in &plan {
        report.workloads.push(WorkloadInfo {
            name: w.name().into(),
            dtype: w.dtype().into(),
            size_meaning: w.size_meaning().into(),
        });
        if args.sizes.is_empty() && !args.quick {
            report.notes.extend(w.size_note().map(String::from));
        }
    }
    let total_cases: usize = plan
        .iter()
        .map(|(w, sizes)| sizes.len() * w.variants().len().max(1) * devices.len())
        .sum();
    let bar = progress(total_cases as u64);
    let previous = crossover::policy();
    let result = run_all(args, &plan, &devices, method, &bar, &mut report);
    crossover::set_policy(previous);
    bar.finish_and_clear();
    result?;
    if args.format == Format::Table && !report.rows.is_empty() {
        println!("\n### Summary\n\n{}", crossover_report::summary(&report));
        for n in &report.notes {
            println!("note: {n}");
        }
    }
    if let Some(dir) = &args.out {
        let written = crossover_report::write(&report, dir).map_err(|e| e.to_string())?;
        eprintln!(
            "report: {} files written; open {}",
            written.len(),
            dir.join("report.md").display()
        );
    }
    let failures = report.rows.iter().filter(|r| !r.ok).count();
    if failures > 0 {
        return Err(format!("{failures} case(s) failed their float64 check"));
    }
    Ok(())
}

/// Runs every case, printing each workload's table (or JSON lines) as it
/// completes and collecting the rows into `report`.
fn run_all(
    args: &BenchArgs,
    plan: &[(&dyn Workload, Vec<usize>)],
    devices: &[&str],
    method: Method,
    bar: &ProgressBar,
    report: &mut Report,
) -> Result<(), String> {
    let mut out = std::io::stdout();
    for (w, sizes) in plan {
        let first = report.rows.len();
        let variants: Vec<&str> = if w.variants().is_empty() {
            vec![""]
        } else {
            w.variants().to_vec()
        };
        for &size in sizes {
            bar.set_message(format!("{} {size}: preparing inputs", w.name()));
            let mut case = w
                .prepare(size)
                .map_err(|e| format!("{} {size}: {e}", w.name()))?;
            for &device in devices {
                crossover::set_policy(policy_of(device));
                for &variant in &variants {
                    let what = format!("{} {variant} {size} on {device}", w.name());
                    bar.set_message(what.clone());
                    let row = match run_case(*w, case.as_mut(), variant, size, device, method) {
                        Ok(row) => row,
                        // A device that cannot run this workload (a GPU
                        // without library ops yet): noted, not fatal.
                        Err(e) if device == "gpu" && e.kind() == crossover::ErrorKind::Device => {
                            let note = format!("{what}: skipped: {e}");
                            if !report.notes.iter().any(|n| {
                                n.starts_with(&format!("{} ", w.name())) && n.contains("skipped")
                            }) {
                                bar.suspend(|| eprintln!("{note}"));
                            }
                            report.notes.push(note);
                            bar.inc(1);
                            continue;
                        }
                        Err(e) => return Err(format!("{what}: {e}")),
                    };
                    if args.format == Format::Json {
                        let line = serde_json::to_string(&row).map_err(|e| e.to_string())?;
                        bar.suspend(|| writeln!(out, "{line}"))
                            .map_err(|e| e.to_string())?;
                    }
                    report.rows.push(row);
                    bar.inc(1);
                }
            }
        }
        if args.format == Format::Table {
            let mut part = report.clone();
            part.rows = report.rows[first..].to_vec();
            let text = crossover_report::group_tables(&part);
            bar.suspend(|| write!(out, "{text}"))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn run_case(
    w: &dyn Workload,
    case: &mut dyn workloads::Case,
    variant: &str,
    size: usize,
    device: &str,
    method: Method,
) -> crossover::Result<Row> {
    // Warm-up, checked against the float64 reference. Under auto, the
    // trace of this run says where the planner put the kernels.
    let watch = device == "auto" && !crossover::trace::is_recording();
    if watch {
        crossover::trace::start();
    }
    let result = case.run(variant);
    let chosen = watch.then(|| chosen_devices(&crossover::trace::stop()));
    let result = result?;
    let check = case.check(variant, &result)?;
    drop(result);
    let timing = measure(method, || case.run(variant).map(drop))?;
    let work = case.work(variant);
    let per_s = |x: f64| (x > 0.0).then(|| x / timing.median_s);
    Ok(Row {
        workload: w.name().to_string(),
        variant: variant.to_string(),
        size: size as u64,
        elements: w.elements(size) as u64,
        dtype: w.dtype().to_string(),
        system: device.to_string(),
        median_ms: timing.median_s * 1e3,
        min_ms: timing.min_s * 1e3,
        reps: timing.reps as u64,
        ok: check.ok,
        check: check.detail,
        chosen,
        gbps: per_s(work.bytes).map(|b| b / 1e9),
        gflops: per_s(work.flops).map(|f| f / 1e9),
        msamples_per_s: per_s(work.samples).map(|s| s / 1e6),
    })
}

/// The devices the kernels of a traced run went to (`cpu`, `gpu`, or
/// `cpu+gpu`); `cpu` when no kernel went through the planner (direct
/// library calls such as sparse products run on the host).
fn chosen_devices(events: &[crossover::trace::Event]) -> String {
    let mut tracks: Vec<&str> = events
        .iter()
        .filter(|e| e.category == "kernel")
        .map(|e| e.track)
        .collect();
    tracks.sort_unstable();
    tracks.dedup();
    if tracks.is_empty() {
        "cpu".into()
    } else {
        tracks.join("+")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(workloads: &[&str], sizes: &[usize], quick: bool) -> BenchArgs {
        BenchArgs {
            workloads: workloads.iter().map(|s| s.to_string()).collect(),
            sizes: sizes.to_vec(),
            quick,
            device: DeviceArg::Cpu,
            reps: None,
            min_time: None,
            format: Format::Json,
            out: None,
        }
    }

    #[test]
    fn bad_arguments_are_errors_naming_the_problem() {
        let e = run(&args(&["nonesuch"], &[], true)).unwrap_err();
        assert!(
            e.contains("unknown workload 'nonesuch'") && e.contains("matmul"),
            "{e}"
        );
        let e = run(&args(&["matmul"], &[0], true)).unwrap_err();
        assert!(e.contains("--sizes") && e.contains("at least 1"), "{e}");
    }

    #[test]
    fn sizes_that_cannot_fit_are_errors_not_aborts() {
        // Was SIGABRT: 1e16 samples asked for a 12 PB allocation.
        for (w, n) in [("monte_carlo_pi", 100_000_000), ("fft2", 10_000_000)] {
            let e = run(&args(&[w], &[n], true)).unwrap_err();
            assert!(
                e.contains(w) && e.contains("unable to allocate") && e.contains("memory"),
                "{e}"
            );
        }
    }

    #[test]
    fn default_sizes_stop_where_each_workload_says() {
        let all = workloads::all();
        let find = |n: &str| all.iter().find(|w| w.name() == n).unwrap().as_ref();
        let a = args(&[], &[], false);
        assert_eq!(sizes(&a, find("matmul")), STANDARD_SIZES.to_vec());
        assert_eq!(*sizes(&a, find("svd")).last().unwrap(), 2048);
        assert_eq!(*sizes(&a, find("image_pipeline")).last().unwrap(), 4096);
        assert_eq!(
            sizes(&args(&[], &[], true), find("svd")),
            QUICK_SIZES.to_vec()
        );
        assert_eq!(sizes(&args(&[], &[7, 9], true), find("svd")), vec![7, 9]);
    }
}
