//! `crossover report RESULTS.json --out DIR`: render a report again from
//! its `results.json` (after editing notes, merging runs, or to get the
//! plots of a `python -m crossover.compare --format json` run).

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A `results.json` written by `crossover bench --out` or
    /// `python -m crossover.compare --out` (or their `--format json`).
    pub results: PathBuf,
    /// Directory for report.md, results.json, results.csv and the plots;
    /// without it, the tables are printed.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn run(args: &ReportArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.results)
        .map_err(|e| format!("report: cannot read {}: {e}", args.results.display()))?;
    let report = crossover_report::Report::from_json(&text).map_err(|e| e.to_string())?;
    match &args.out {
        None => print!("{}", crossover_report::tables(&report)),
        Some(dir) => {
            let written = crossover_report::write(&report, dir).map_err(|e| e.to_string())?;
            eprintln!(
                "report: {} files written; open {}",
                written.len(),
                dir.join("report.md").display()
            );
        }
    }
    Ok(())
}
