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
    let cal = calibrate(
        &CalibrateOptions { quick: args.quick },
        &mut |done, total, what| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(what.to_string());
        },
    )
    .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    let took = start.elapsed().as_secs_f64();
    println!("measured in {took:.1} s ({mode}):");
    for l in &cal.lines {
        println!("  {l}");
    }
    cal.profile.save(&path).map_err(|e| e.to_string())?;
    println!("profile written to {}", path.display());
    Ok(())
}
