//! `crossover calibrate [--quick]`: measure this machine and write its
//! profile (see `crossover::cost::calibrate`).

use clap::Args;
use crossover::cost::{calibrate, profile_path, CalibrateOptions};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Fewer sizes and shorter runs (under 30 s).
    #[arg(long)]
    pub quick: bool,
    /// Write the profile here instead of the default location
    /// (CROSSOVER_PROFILE, else the user cache directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: &CalibrateArgs) -> Result<(), String> {
    let path = args.out.clone().or_else(profile_path).ok_or(
        "no place for the profile: neither XDG_CACHE_HOME nor HOME is set; \
         pass --out FILE or set CROSSOVER_PROFILE",
    )?;
    let mode = if args.quick { "quick" } else { "full" };
    eprintln!("crossover calibrate ({mode}): measuring this machine...");
    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::new(1);
        b.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let start = Instant::now();
    let numpy_blas = use_numpys_blas();
    let mut cal = calibrate(
        &CalibrateOptions { quick: args.quick },
        &mut |done, total, what| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(what.to_string());
        },
    )
    .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    if let Some(line) = numpy_blas {
        cal.lines.insert(0, line);
    }
    let took = start.elapsed().as_secs_f64();
    println!("measured in {took:.1} s ({mode}):");
    for l in &cal.lines {
        println!("  {l}");
    }
    cal.profile.save(&path).map_err(|e| e.to_string())?;
    println!("profile written to {}", path.display());
    Ok(())
}

/// Python processes run large matmuls through NumPy's OpenBLAS (found
/// among their loaded libraries), so calibration measures where that
/// library beats faer with the same library: unless `CROSSOVER_BLAS` says
/// otherwise, asks `$PYTHON` (else `python3`) which OpenBLAS NumPy loads
/// and loads it here. Returns a line for the report (None when
/// `CROSSOVER_BLAS` is set).
fn use_numpys_blas() -> Option<String> {
    if std::env::var_os("CROSSOVER_BLAS").is_some() {
        return None;
    }
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let Some(path) = numpys_openblas(&python) else {
        return Some(format!(
            "cpu matmul BLAS          : {python} with NumPy's OpenBLAS not found (CROSSOVER_BLAS=<path> names one)"
        ));
    };
    Some(match crossover::linalg::use_blas_library(&path) {
        Ok(()) => format!("cpu matmul BLAS          : NumPy's, {path} (from {python})"),
        Err(why) => format!("cpu matmul BLAS          : NumPy's {path} not used: {why}"),
    })
}

/// The OpenBLAS that `python`'s NumPy loads (Linux: the mapped file whose
/// name says OpenBLAS, after `import numpy`), or None.
fn numpys_openblas(python: &str) -> Option<String> {
    const FIND: &str = r#"
import os, numpy
for line in open("/proc/self/maps"):
    p = line.split()[-1]
    if "openblas" in os.path.basename(p).lower():
        print(p)
        break
"#;
    let out = std::process::Command::new(python)
        .args(["-c", FIND])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!path.is_empty()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_numpys_openblas_or_nothing() {
        assert_eq!(numpys_openblas("/nonexistent/python3"), None);
        match numpys_openblas("python3") {
            Some(path) => {
                assert!(path.to_lowercase().contains("openblas"), "{path}");
                assert!(std::path::Path::new(&path).exists(), "{path}");
            }
            None => {
                assert!(
                    std::env::var_os("CROSSOVER_REQUIRE_BLAS").is_none(),
                    "CROSSOVER_REQUIRE_BLAS is set but python3's NumPy loads no OpenBLAS"
                );
                eprintln!("skipped: python3 has no NumPy with OpenBLAS");
            }
        }
    }
}
