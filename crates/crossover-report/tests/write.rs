//! `write` produces every file of a report, and they hold what was given.

use crossover_report::{write, Report, ReportError, Row, WorkloadInfo};
use std::path::PathBuf;

fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!(
        "crossover-report-{name}-{}-{nanos}",
        std::process::id()
    ))
}

/// A GPU that loses below N ~ 1000 and wins above, for two workloads.
fn sample() -> Report {
    let mut r = Report::new("crossover bench", "cpu");
    r.date = "2026-11-22T10:00:00Z".into();
    r.command = "crossover bench --quick --out DIR".into();
    r.focus = Some("auto".into());
    r.policies = vec!["auto".into()];
    r.gpu_systems = vec!["gpu".into()];
    r.method = "median of at least 5 runs and 1 s".into();
    r.notes = vec!["OPENBLAS_CORETYPE=Haswell is set".into()];
    r.machine.insert("cores".into(), 2.into());
    r.machine.insert("cpu".into(), "test cpu".into());
    r.versions.insert("crossover".into(), "0.1.0".into());
    for (w, variant) in [("elementwise", ""), ("reduction", "sum")] {
        r.workloads.push(WorkloadInfo {
            name: w.into(),
            dtype: "float32".into(),
            size_meaning: "N for NxN float32 arrays".into(),
        });
        for n in [100u64, 316, 1000, 3162, 10000] {
            let cpu = 1e-6 * (n * n) as f64;
            let gpu = 0.02 + 1e-8 * (n * n) as f64;
            r.rows.push(Row::new(w, variant, n, "cpu", cpu));
            r.rows.push(Row::new(w, variant, n, "gpu", gpu));
            let mut auto = Row::new(w, variant, n, "auto", cpu.min(gpu) * 1.05);
            auto.chosen = Some(if cpu < gpu { "cpu" } else { "gpu" }.into());
            r.rows.push(auto);
        }
    }
    r
}

#[test]
fn writes_markdown_json_csv_and_plots() {
    let dir = temp_dir("all");
    let report = sample();
    let written = write(&report, &dir).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    for want in [
        "results.json",
        "results.csv",
        "report.md",
        "plots/summary.png",
        "plots/elementwise.png",
        "plots/reduction-sum.png",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    // JSON round-trips to the same report.
    let back =
        Report::from_json(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(back, report);
    // CSV: a header and one line per row.
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + report.rows.len());
    // The markdown has the header, the summary, the crossover and the plots.
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for want in [
        "# crossover bench",
        "Command: `crossover bench --quick --out DIR`",
        "- cores: 2",
        "- cpu: test cpu",
        "OPENBLAS_CORETYPE=Haswell is set",
        "## Summary",
        "GPU crossover (gpu vs cpu): from N ~ ",
        "![speedup vs size](plots/summary.png)",
        "(plots/reduction-sum.png)",
    ] {
        assert!(md.contains(want), "{want:?} not in report.md:\n{md}");
    }
    // PNGs: real images of a plausible size (text and lines drawn).
    for p in written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
    {
        let bytes = std::fs::read(p).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", p.display());
        assert!(
            bytes.len() > 20_000,
            "{} is only {} bytes",
            p.display(),
            bytes.len()
        );
    }
    // Keep the files to look at when asked (CROSSOVER_KEEP_REPORT=1).
    if std::env::var_os("CROSSOVER_KEEP_REPORT").is_some() {
        eprintln!("report kept in {}", dir.display());
    } else {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn bad_reports_are_typed_errors() {
    let mut r = sample();
    r.rows[0].median_ms = f64::NAN;
    let err = write(&r, &temp_dir("bad")).unwrap_err();
    assert!(matches!(err, ReportError::Invalid(_)), "{err}");
    assert!(
        err.to_string().contains("elementwise size 100 on cpu"),
        "{err}"
    );
    let err = Report::from_json("{\"title\": 3}").unwrap_err();
    assert!(matches!(err, ReportError::Json(_)), "{err}");
    let mut r = sample();
    r.baseline.clear();
    assert!(matches!(r.validate(), Err(ReportError::Invalid(_))));
}

#[test]
fn an_unwritable_directory_names_the_path() {
    // A file where the directory should be.
    let file = temp_dir("file");
    std::fs::write(&file, b"x").unwrap();
    let err = write(&sample(), &file).unwrap_err();
    assert!(matches!(err, ReportError::Io { .. }), "{err}");
    assert!(err.to_string().contains("cannot write"), "{err}");
    std::fs::remove_file(&file).unwrap();
}
