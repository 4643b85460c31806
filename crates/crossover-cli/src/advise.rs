//! `crossover advise`: does a GPU help here? The decision table of
//! benchmark articles, from this machine's profile and the engine's cost
//! model: per workload class, from which problem size the GPU is faster
//! (data starting on the host, and data already on the GPU) and the
//! expected speedup at 10x that size. Without a usable GPU (and no
//! `--profile`), CPU-side advice instead, from quick measurements.
//! See docs/advise.md.

mod classes;
mod cpu;
mod model;
mod render;

use clap::Args;
use classes::Keys;
use cpu::CpuAdvice;
use crossover::cost::{LinkProfile, Profile};
use crossover::{DeviceKind, Engine};
use model::{Advice, N_MAX, N_MIN};
use render::render;
use render::time3 as time;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Arguments of `crossover advise`.
#[derive(Args, Debug)]
pub struct AdviseArgs {
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Use this profile (JSON as written by `crossover calibrate`) instead
    /// of the engine's; the GPU table is printed even when this machine
    /// has no usable GPU.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Skip the quick CPU measurements (CPU advice from the profile only).
    #[arg(long)]
    pub no_measure: bool,
    /// Show the GPU table with a stand-in GPU (the synthetic profile's GPU,
    /// link and curves beside this machine's CPU numbers), as `explain
    /// --synthetic-gpu` plans with it.
    #[arg(long)]
    pub synthetic_gpu: bool,
}

/// What can go wrong.
#[derive(Debug)]
pub enum AdviseError {
    /// The `--profile` file cannot be read.
    ReadProfile {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        msg: String,
    },
    /// The `--profile` file is not a usable profile.
    BadProfile {
        /// The file.
        path: PathBuf,
        /// What is wrong (JSON error with line and column, or the bad field).
        msg: String,
    },
    /// A CPU measurement failed.
    Measure(crossover::Error),
    /// The report could not be written as JSON.
    Json(serde_json::Error),
}

impl fmt::Display for AdviseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdviseError::ReadProfile { path, msg } => {
                write!(f, "--profile {}: cannot read it: {msg}", path.display())
            }
            AdviseError::BadProfile { path, msg } => {
                write!(f, "--profile {}: {msg}", path.display())
            }
            AdviseError::Measure(e) => write!(f, "advise: CPU measurement failed: {e}"),
            AdviseError::Json(e) => write!(f, "advise: cannot write JSON: {e}"),
        }
    }
}

impl std::error::Error for AdviseError {}

/// Reads a profile file without requiring it to belong to this machine or
/// crossover version (the point of `--profile` is to look at another one).
///
/// # Errors
/// [`AdviseError::ReadProfile`] or [`AdviseError::BadProfile`].
pub fn read_profile(path: &Path) -> Result<Profile, AdviseError> {
    let text = std::fs::read_to_string(path).map_err(|e| AdviseError::ReadProfile {
        path: path.to_path_buf(),
        msg: e.to_string(),
    })?;
    Profile::from_json(&text).map_err(|msg| AdviseError::BadProfile {
        path: path.to_path_buf(),
        msg,
    })
}

/// Where the numbers came from.
#[derive(Clone, Debug, Serialize)]
pub struct Sources {
    /// The profile's `source` (`calibrated (quick) on ...`, `synthetic ...`).
    pub profile: String,
    /// The `--profile` file, if one was given.
    pub file: Option<String>,
    /// The CPU entry holds only the built-in defaults (not calibrated).
    pub cpu_defaults: bool,
    /// The profile has no GPU entry: the default GPU constants are used.
    pub gpu_defaults: bool,
    /// The profile has no link entry: a default PCIe 4.0 link is used.
    pub link_defaults: bool,
    /// Library curves in the profile (`op/device/dtype`).
    pub curves: Vec<String>,
}

impl Sources {
    fn of(p: &Profile, file: Option<&Path>) -> Sources {
        Sources {
            profile: p.source.clone(),
            file: file.map(|f| f.display().to_string()),
            cpu_defaults: p.source.starts_with("defaults"),
            gpu_defaults: p.device(DeviceKind::Gpu).is_none(),
            link_defaults: p.link(DeviceKind::Cpu, DeviceKind::Gpu).is_none(),
            curves: p
                .library
                .iter()
                .map(|c| format!("{}/{}/{}", c.op, c.device, c.dtype))
                .collect(),
        }
    }
}

/// Whether this machine's GPU is usable.
#[derive(Clone, Debug, Serialize)]
pub struct GpuStatus {
    /// Whether the engine can run kernels on it.
    pub usable: bool,
    /// The backend's name, or why it cannot be used.
    pub detail: String,
}

/// Everything `advise` reports (the `--json` document).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The crossover version that made the report.
    pub crossover_version: &'static str,
    /// This machine's GPU.
    pub gpu: GpuStatus,
    /// Where the numbers came from.
    pub sources: Sources,
    /// Smallest size scanned.
    pub n_min: usize,
    /// Largest size scanned.
    pub n_max: usize,
    /// The decision table (absent without a usable GPU and `--profile`).
    pub table: Option<Vec<Advice>>,
    /// CPU-side advice (only without a usable GPU and `--profile`).
    pub cpu: Option<CpuAdvice>,
    /// Remarks on where the numbers come from.
    pub notes: Vec<String>,
}

fn gpu_status(engine: &Engine) -> GpuStatus {
    let d = engine
        .devices()
        .into_iter()
        .find(|d| d.device == DeviceKind::Gpu);
    match d {
        Some(d) => match d.usable {
            Ok(()) => GpuStatus {
                usable: true,
                detail: d.name.unwrap_or_else(|| "gpu".into()),
            },
            Err(why) => GpuStatus {
                usable: false,
                detail: why,
            },
        },
        None => GpuStatus {
            usable: false,
            detail: "the engine lists no GPU".into(),
        },
    }
}

/// Notes on the numbers behind the table.
fn table_notes(s: &Sources, gpu: &GpuStatus) -> Vec<String> {
    let mut notes = Vec::new();
    if s.file.is_some() && !gpu.usable {
        notes.push(format!(
            "this machine has no usable GPU (see above): the table shows what the profile \
             predicts for the machine it describes ({})",
            s.profile
        ));
    }
    if s.gpu_defaults {
        let g = Profile::defaults().device_or_default(DeviceKind::Gpu);
        notes.push(format!(
            "the profile has no GPU entry: GPU numbers are the default constants ({}: launch {}, \
             {:.0} GB/s, {:.1} TFLOP/s float32); run `crossover calibrate` on the GPU machine",
            g.name,
            time(g.launch_s),
            g.bandwidth / 1e9,
            g.rates.f32_arith / 1e12
        ));
    }
    if s.link_defaults {
        let l = &LinkProfile::pcie_default()[0].pageable;
        notes.push(format!(
            "no measured host<->GPU link: copies use a PCIe 4.0 x16 default ({:.0} GB/s, {} latency)",
            l.bandwidth / 1e9,
            time(l.latency_s)
        ));
    }
    if s.cpu_defaults {
        notes.push(
            "the CPU numbers are the built-in defaults, not measured: run `crossover calibrate \
             --quick` for a profile of this machine"
                .into(),
        );
    }
    notes.push(
        "library ops without a measured curve use the roofline model (see the legend); \
         `calibrate` measures curves for matmul and 1-D fft only (fft2 is a different op)"
            .into(),
    );
    notes
}

/// Runs `crossover advise`.
///
/// # Errors
/// A message for the user (bad `--profile`, a failed measurement).
pub fn run(args: &AdviseArgs) -> Result<(), String> {
    let report = report(args).map_err(|e| e.to_string())?;
    if args.json {
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| AdviseError::Json(e).to_string())?;
        println!("{text}");
    } else {
        print!("{}", render(&report));
    }
    Ok(())
}

fn report(args: &AdviseArgs) -> Result<Report, AdviseError> {
    let engine = Engine::global();
    let gpu = gpu_status(engine);
    let profile = match &args.profile {
        Some(path) => read_profile(path)?,
        None => engine.profile(),
    };
    let profile = if args.synthetic_gpu {
        crate::explain::with_synthetic_gpu(profile)
    } else {
        profile
    };
    let sources = Sources::of(&profile, args.profile.as_deref());
    let (table, cpu, notes) = if gpu.usable || args.profile.is_some() || args.synthetic_gpu {
        let rows = model::advise(&profile, &Keys::from_engine());
        let mut notes = table_notes(&sources, &gpu);
        if args.synthetic_gpu {
            notes.insert(
                0,
                "--synthetic-gpu: the GPU columns are a stand-in (the synthetic profile's fast \
                 GPU behind a slow link), not a device of this machine"
                    .into(),
            );
        }
        (Some(rows), None, notes)
    } else {
        let cpu = cpu::cpu_advice(&profile, sources.cpu_defaults, !args.no_measure)
            .map_err(AdviseError::Measure)?;
        let mut notes = vec![
            "to see what a GPU would change, run `crossover advise --profile FILE` with the \
             profile of a GPU machine (docs/advise.md)"
                .to_string(),
        ];
        if sources.cpu_defaults && args.no_measure {
            notes.push(
                "the CPU numbers are the built-in defaults: run `crossover calibrate --quick`"
                    .into(),
            );
        }
        (None, Some(cpu), notes)
    };
    Ok(Report {
        crossover_version: crossover::VERSION,
        gpu,
        sources,
        n_min: N_MIN,
        n_max: N_MAX,
        table,
        cpu,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_profile_files_give_clear_errors() {
        let dir = std::env::temp_dir().join(format!("crossover-advise-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        let e = read_profile(&missing).unwrap_err();
        assert!(matches!(e, AdviseError::ReadProfile { .. }), "{e}");
        assert!(e.to_string().contains("missing.json"));
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{ not json").unwrap();
        let e = read_profile(&bad).unwrap_err();
        assert!(matches!(e, AdviseError::BadProfile { .. }), "{e}");
        assert!(e.to_string().contains("not a valid profile"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn synthetic_gpu_shows_the_gpu_table_as_explain_can() {
        let args = AdviseArgs {
            json: false,
            profile: None,
            no_measure: true,
            synthetic_gpu: true,
        };
        let r = report(&args).unwrap();
        let table = r.table.as_ref().expect("a GPU table with the stand-in GPU");
        assert_eq!(table.len(), 10);
        assert!(r.cpu.is_none());
        assert!(r.notes[0].contains("--synthetic-gpu"), "{:?}", r.notes);
        assert!(render(&r).contains("elementwise f32"));
    }

    /// Writes the synthetic profile to `$TMPDIR/crossover-synthetic-profile.json`
    /// (left there: docs/advise.md runs `crossover advise --profile` on it)
    /// and renders the synthetic report from the file.
    #[test]
    fn synthetic_profile_file_round_trips_and_renders() {
        let path = std::env::temp_dir().join("crossover-synthetic-profile.json");
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, Profile::synthetic().to_json()).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        let p = read_profile(&path).unwrap();
        let sources = Sources::of(&p, Some(&path));
        assert!(!sources.gpu_defaults && !sources.link_defaults && !sources.cpu_defaults);
        let gpu = GpuStatus {
            usable: false,
            detail: "test".into(),
        };
        let report = Report {
            crossover_version: crossover::VERSION,
            notes: table_notes(&sources, &gpu),
            gpu,
            sources,
            n_min: N_MIN,
            n_max: N_MAX,
            table: Some(model::advise(&p, &Keys::from_engine())),
            cpu: None,
        };
        let text = render(&report);
        assert!(text.contains("elementwise f32"), "{text}");
        assert!(text.contains("matmul f32"));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["table"].as_array().map(Vec::len), Some(10));
        assert_eq!(json["table"][0]["from_host"]["kind"], "from");
    }
}
