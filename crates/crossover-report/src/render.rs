//! Text renderings of a report: markdown tables, `report.md`, CSV.

use crate::analysis::{groups, Group};
use crate::{Report, ReportError, Result};
use std::fmt::Write as _;

/// Milliseconds with three significant digits (`0.0123`, `4.56`, `789`).
pub(crate) fn fmt_ms(ms: f64) -> String {
    if !ms.is_finite() || ms <= 0.0 {
        return "-".into();
    }
    let decimals = (2 - ms.log10().floor() as i32).clamp(0, 6) as usize;
    format!("{ms:.decimals$}")
}

/// A ratio as `2.31x` (never negative; below 1 means slower).
pub(crate) fn fmt_ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}x")
    } else {
        format!("{r:.2}x")
    }
}

/// The focus system's ratio, marked when it is only noise (`1.41x
/// (noise)`): auto that chose the CPU timed against the CPU is the same
/// work twice.
fn focus_ratio(report: &Report, g: &Group, n: u64, f: &str, r: f64) -> String {
    if g.within_noise(report, n, f) {
        format!("{} (noise)", fmt_ratio(r))
    } else {
        fmt_ratio(r)
    }
}

/// A number for an axis label: at most three decimals, trailing zeros cut
/// (`0.01`, `2.5`, `100`).
pub(crate) fn fmt_axis(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// A markdown table whose columns are padded to equal width, so it reads
/// the same in a terminal and in a rendered page.
struct Table {
    head: Vec<String>,
    /// Right-align (numbers) or left-align each column.
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(columns: &[(String, bool)]) -> Table {
        Table {
            head: columns.iter().map(|c| c.0.clone()).collect(),
            right: columns.iter().map(|c| c.1).collect(),
            rows: Vec::new(),
        }
    }

    fn render(&self, out: &mut String) {
        let width = |i: usize| {
            self.rows
                .iter()
                .map(|r| r[i].chars().count())
                .chain([self.head[i].chars().count(), 3])
                .max()
                .unwrap_or(3)
        };
        let widths: Vec<usize> = (0..self.head.len()).map(width).collect();
        let line = |cells: &[String]| {
            let mut l = String::from("|");
            for (i, c) in cells.iter().enumerate() {
                let w = widths[i];
                if self.right[i] {
                    let _ = write!(l, " {c:>w$} |");
                } else {
                    let _ = write!(l, " {c:<w$} |");
                }
            }
            l
        };
        let _ = writeln!(out, "{}", line(&self.head));
        let mut rule = String::from("|");
        for (i, w) in widths.iter().enumerate() {
            let dashes = "-".repeat(*w);
            if self.right[i] {
                let _ = write!(rule, " {}: |", &dashes[1..]);
            } else {
                let _ = write!(rule, " {dashes} |");
            }
        }
        let _ = writeln!(out, "{rule}");
        for r in &self.rows {
            let _ = writeln!(out, "{}", line(r));
        }
    }
}

/// Columns: the baseline first, then the other systems in order.
fn ordered_systems(report: &Report, g: &Group) -> Vec<String> {
    let mut s: Vec<String> = g
        .systems
        .iter()
        .filter(|s| *s == g.baseline(report))
        .cloned()
        .collect();
    s.extend(
        g.systems
            .iter()
            .filter(|s| *s != g.baseline(report))
            .cloned(),
    );
    s
}

fn heading(report: &Report, g: &Group) -> String {
    match report.workload(&g.workload) {
        Some(w) => format!("{} ({}; {})", g.label(), w.dtype, w.size_meaning),
        None => g.label(),
    }
}

/// One group's markdown table, followed by its GPU crossover lines.
fn group_table(report: &Report, g: &Group, out: &mut String) {
    let systems = ordered_systems(report, g);
    let focus = report
        .focus
        .as_ref()
        .filter(|f| *f != g.baseline(report) && g.systems.contains(f));
    let mut columns = vec![("N".to_string(), true)];
    columns.extend(systems.iter().map(|s| (format!("{s} ms"), true)));
    let base = g.baseline(report);
    columns.push((format!("best vs {base}"), false));
    if let Some(f) = focus {
        columns.push((format!("{f} vs {base}"), true));
    }
    columns.push(("check".to_string(), false));
    let mut table = Table::new(&columns);
    for &n in &g.sizes {
        let mut row = vec![n.to_string()];
        for s in &systems {
            row.push(match g.row(n, s) {
                Some(r) => match &r.chosen {
                    Some(d) => format!("{} ({d})", fmt_ms(r.median_ms)),
                    None => fmt_ms(r.median_ms),
                },
                None => "-".into(),
            });
        }
        row.push(
            g.best(report, n)
                .map_or("-".into(), |(s, r)| format!("{s} {}", fmt_ratio(r))),
        );
        if let Some(f) = focus {
            row.push(
                g.speedup(report, n, f)
                    .map_or("-".into(), |r| focus_ratio(report, g, n, f, r)),
            );
        }
        let failures = g.failures(n);
        row.push(if failures.is_empty() {
            "ok".to_string()
        } else {
            let what: Vec<String> = failures
                .iter()
                .map(|r| format!("{}: {}", r.system, r.check))
                .collect();
            format!("FAIL {}", what.join("; "))
        });
        table.rows.push(row);
    }
    table.render(out);
    for gpu in report.gpu_systems.iter().filter(|s| g.systems.contains(s)) {
        let _ = writeln!(
            out,
            "\nGPU crossover ({gpu} vs {}): {}",
            g.baseline(report),
            g.crossover(report, gpu)
        );
    }
}

/// The summary: per workload variant and size, the headline speedup over
/// the baseline (the focus system's, else the best system's), and the GPU
/// crossover sizes.
fn summary_table(report: &Report, groups: &[Group], out: &mut String) {
    let mut sizes: Vec<u64> = groups.iter().flat_map(|g| g.sizes.clone()).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let what = report.headline();
    let _ = writeln!(
        out,
        "Speedup of {what} by size N (above 1: faster; below 1: slower).\n"
    );
    let mut columns = vec![("workload".to_string(), false)];
    columns.extend(sizes.iter().map(|n| (n.to_string(), true)));
    columns.extend(
        report
            .gpu_systems
            .iter()
            .map(|g| (format!("{g} crossover"), false)),
    );
    let mut table = Table::new(&columns);
    for g in groups {
        let mut row = vec![g.summary_label(report)];
        for &n in &sizes {
            let cell = g
                .headline(report, n)
                .map(|(s, r)| match (s, &report.focus) {
                    (Some(s), _) => format!("{s} {}", fmt_ratio(r)),
                    (None, Some(f)) => focus_ratio(report, g, n, f, r),
                    (None, None) => fmt_ratio(r),
                });
            row.push(cell.unwrap_or_else(|| "-".into()));
        }
        for gpu in &report.gpu_systems {
            row.push(if g.systems.contains(gpu) {
                g.crossover(report, gpu).to_string()
            } else {
                "-".into()
            });
        }
        table.rows.push(row);
    }
    table.render(out);
}

/// The tables of every workload variant (no summary): per size the time
/// on each system, the best system's and the focus system's speedup over
/// the baseline, and the check.
pub fn group_tables(report: &Report) -> String {
    let mut out = String::new();
    for g in &groups(report) {
        let _ = writeln!(out, "\n### {}\n", heading(report, g));
        group_table(report, g, &mut out);
    }
    out
}

/// The summary table alone (headline speedup by workload and size, GPU
/// crossovers).
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    let groups = groups(report);
    if !groups.is_empty() {
        summary_table(report, &groups, &mut out);
    }
    out
}

/// Per workload variant a markdown table (time per system by size, best
/// and focus speedups over the baseline, check), then the summary table.
/// Readable in a terminal as it is.
pub fn tables(report: &Report) -> String {
    let mut out = group_tables(report);
    if !report.rows.is_empty() {
        let _ = writeln!(out, "\n### Summary\n");
        out.push_str(&summary(report));
    }
    out
}

/// The whole `report.md`: header, summary, then per workload its table and
/// plot. `plots` are paths relative to the report's directory.
pub fn report_markdown(report: &Report, plots: &[String]) -> String {
    let groups = groups(report);
    let mut out = format!("# {}\n\n", report.title);
    if !report.date.is_empty() {
        let _ = writeln!(out, "Date: {}  ", report.date);
    }
    if !report.command.is_empty() {
        let _ = writeln!(out, "Command: `{}`", report.command);
    }
    let lists = [
        (
            "Machine",
            report
                .machine
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().map_or(v.to_string(), str::to_string)))
                .collect::<Vec<_>>(),
        ),
        (
            "Versions",
            report
                .versions
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        (
            "Environment",
            report
                .environment
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
    ];
    for (title, items) in lists {
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n## {title}\n");
        for (k, v) in items {
            let _ = writeln!(out, "- {k}: {v}");
        }
    }
    if !report.method.is_empty() {
        let _ = writeln!(out, "\n## Method\n\n{}", report.method);
    }
    if !report.notes.is_empty() {
        let _ = writeln!(out, "\n## Notes\n");
        for n in &report.notes {
            let _ = writeln!(out, "- {n}");
        }
    }
    let plot_for = |name: &str| plots.iter().find(|p| p.ends_with(&format!("/{name}.png")));
    if !groups.is_empty() {
        let _ = writeln!(out, "\n## Summary\n");
        summary_table(report, &groups, &mut out);
        if let Some(p) = plot_for("summary") {
            let _ = writeln!(out, "\n![speedup vs size]({p})");
        }
    }
    for g in &groups {
        let _ = writeln!(out, "\n## {}\n", heading(report, g));
        group_table(report, g, &mut out);
        if let Some(p) = plot_for(&crate::plot::file_stem(&g.label())) {
            let _ = writeln!(out, "\n![{} time vs size]({p})", g.label());
        }
    }
    out
}

/// Every row as CSV (one header line; empty cells for missing values).
pub(crate) fn csv(report: &Report) -> Result<Vec<u8>> {
    let err = |e: csv::Error| ReportError::Invalid(format!("csv: {e}"));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "workload",
        "variant",
        "size",
        "elements",
        "dtype",
        "system",
        "median_ms",
        "min_ms",
        "reps",
        "ok",
        "check",
        "chosen",
        "gbps",
        "gflops",
        "msamples_per_s",
    ])
    .map_err(err)?;
    let opt = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    for r in &report.rows {
        w.write_record([
            r.workload.clone(),
            r.variant.clone(),
            r.size.to_string(),
            r.elements.to_string(),
            r.dtype.clone(),
            r.system.clone(),
            r.median_ms.to_string(),
            r.min_ms.to_string(),
            r.reps.to_string(),
            r.ok.to_string(),
            r.check.clone(),
            r.chosen.clone().unwrap_or_default(),
            opt(r.gbps),
            opt(r.gflops),
            opt(r.msamples_per_s),
        ])
        .map_err(err)?;
    }
    w.into_inner()
        .map_err(|e| ReportError::Invalid(format!("csv: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Row;

    fn sample() -> Report {
        let mut r = Report::new("t", "cpu");
        r.focus = Some("auto".into());
        r.policies = vec!["auto".into()];
        r.gpu_systems = vec!["gpu".into()];
        for (n, c, g) in [(100, 0.01, 0.05), (1000, 1.0, 0.2)] {
            r.rows.push(Row::new("elementwise", "", n, "cpu", c));
            r.rows.push(Row::new("elementwise", "", n, "gpu", g));
            let mut a = Row::new("elementwise", "", n, "auto", c.min(g));
            a.chosen = Some(if c < g { "cpu" } else { "gpu" }.into());
            r.rows.push(a);
        }
        r
    }

    #[test]
    fn tables_show_times_choices_speedups_and_the_crossover() {
        let t = tables(&sample());
        let squeeze = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
        let lines: Vec<String> = t.lines().map(squeeze).collect();
        let has = |want: &str| lines.iter().any(|l| l == want);
        assert!(
            has("| 100 | 0.0100 | 0.0500 | 0.0100 (cpu) | cpu 1.00x | 1.00x (noise) | ok |"),
            "{t}"
        );
        assert!(
            has("| 1000 | 1.00 | 0.200 | 0.200 (gpu) | gpu 5.00x | 5.00x | ok |"),
            "{t}"
        );
        assert!(t.contains("GPU crossover (gpu vs cpu): from N ~ "), "{t}");
        assert!(
            has("| elementwise | 1.00x (noise) | 5.00x | from N ~ 316 |"),
            "{t}"
        );
        // Columns line up: every line of a table has the same length.
        let table: Vec<&str> = t.lines().filter(|l| l.starts_with("| ")).take(4).collect();
        assert!(table.iter().all(|l| l.len() == table[0].len()), "{t}");
    }

    #[test]
    fn auto_against_cpu_on_the_cpu_is_marked_as_noise() {
        // Issue 19: `crossover bench --quick` printed "auto vs cpu 1.41x"
        // with both on the CPU.
        let mut r = sample();
        r.rows[2].median_ms = 0.01 / 1.41; // auto (on cpu) at N = 100
        let t = tables(&r);
        assert!(t.contains("1.41x (noise)"), "{t}");
        // A real difference (auto on the GPU, tight timings) is not noise.
        assert!(t.contains("| 5.00x |") || t.contains(" 5.00x |"), "{t}");
        assert!(!t.contains("5.00x (noise)"), "{t}");
        // Within the spread of the timings is noise too, whatever ran.
        let mut r = sample();
        r.rows[5].median_ms = 0.95; // auto on gpu at N = 1000 vs cpu 1.00
        r.rows[5].chosen = Some("gpu".into());
        r.rows[3].min_ms = 0.8; // cpu's best run: a 25% spread
        let t = tables(&r);
        assert!(t.contains("1.05x (noise)"), "{t}");
    }

    #[test]
    fn a_failed_check_is_named_in_the_table() {
        let mut r = sample();
        r.rows[1].ok = false;
        r.rows[1].check = "max err 1e-2 (tol 1e-6)".into();
        let t = tables(&r);
        assert!(t.contains("FAIL gpu: max err 1e-2 (tol 1e-6)"), "{t}");
    }

    #[test]
    fn csv_has_a_header_and_one_line_per_row_with_quoting() {
        let mut r = sample();
        r.rows[0].check = "a, \"quoted\" detail".into();
        let text = String::from_utf8(csv(&r).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + r.rows.len());
        assert!(lines[0].starts_with("workload,variant,size"));
        assert!(
            lines[1].contains("\"a, \"\"quoted\"\" detail\""),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn times_keep_three_significant_digits() {
        assert_eq!(fmt_ms(0.012345), "0.0123");
        assert_eq!(fmt_ms(4.567), "4.57");
        assert_eq!(fmt_ms(789.4), "789");
        assert_eq!(fmt_ms(12345.6), "12346");
        assert_eq!(fmt_ratio(0.5), "0.50x");
        assert_eq!(fmt_axis(0.01), "0.01");
        assert_eq!(fmt_axis(100.0), "100");
        assert_eq!(fmt_axis(2.5), "2.5");
    }
}
