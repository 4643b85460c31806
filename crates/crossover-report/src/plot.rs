//! PNG plots (plotters, bitmap backend, embedded DejaVu Sans).
//!
//! Per workload variant: median time vs size on log-log axes, one line per
//! system (policies such as `auto` dashed), the GPU crossover marked. One
//! summary: the headline speedup over the baseline vs size, all workloads.

use crate::analysis::{groups, Crossover, Group};
use crate::render::fmt_axis;
use crate::{Report, ReportError, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// DejaVu Sans (Bitstream Vera license, see assets/): embedded so plots
/// render the same on a machine without fonts or fontconfig.
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";
const SIZE: (u32, u32) = (1000, 640);

/// Tableau's ten colours: distinct, and readable on white.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

fn register_font() -> Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err(ReportError::Plot {
            what: "font".into(),
            msg: "the embedded DejaVu Sans could not be loaded".into(),
        })
    }
}

/// A file name for a label: lowercase letters, digits, `-` and `_` only.
pub(crate) fn file_stem(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes every plot into `dir`; returns their paths (summary first).
pub(crate) fn all(report: &Report, dir: &Path) -> Result<Vec<PathBuf>> {
    register_font()?;
    let groups = groups(report);
    let mut written = Vec::new();
    if groups.is_empty() {
        return Ok(written);
    }
    let summary = dir.join("summary.png");
    draw(&summary, |root| summary_plot(report, &groups, root))?;
    written.push(summary);
    for g in &groups {
        let path = dir.join(format!("{}.png", file_stem(&g.label())));
        draw(&path, |root| time_plot(report, g, root))?;
        written.push(path);
    }
    Ok(written)
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;
type DrawResult = std::result::Result<(), String>;
/// A labelled line of (x, y) points.
type Line = (String, Vec<(f64, f64)>);

fn draw(path: &Path, f: impl FnOnce(&Area) -> DrawResult) -> Result<()> {
    let what = path.display().to_string();
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    let plot_err = |msg: String| ReportError::Plot {
        what: what.clone(),
        msg,
    };
    root.fill(&WHITE).map_err(|e| plot_err(e.to_string()))?;
    f(&root).map_err(plot_err)?;
    root.present().map_err(|e| plot_err(e.to_string()))
}

/// A log axis range that holds `values` with a margin (and is never empty).
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0.1, 10.0);
    }
    (lo / 1.5, (hi * 1.5).max(lo * 3.0))
}

/// An x-axis label: sizes whose leading digit is 1, 2 or 5 (log axes put
/// ticks at every integer multiple, which crowd together near a decade).
fn size_label(v: f64) -> String {
    let lead = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0].iter().any(|d| (lead - d).abs() < 1e-6) {
        format!("{}", v.round())
    } else {
        String::new()
    }
}

fn title(report: &Report, g: &Group) -> String {
    let what = report
        .workload(&g.workload)
        .map(|w| format!(" ({}, {})", w.dtype, w.size_meaning))
        .unwrap_or_default();
    format!("{}: time vs size{what}", g.label())
}

fn time_plot(report: &Report, g: &Group, root: &Area) -> DrawResult {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (x0, x1) = log_range(g.sizes.iter().map(|&n| n as f64));
    let series: Vec<Line> = g
        .systems
        .iter()
        .map(|s| {
            let pts = g.series(s).into_iter().map(|(n, t)| (n as f64, t));
            (s.clone(), pts.collect())
        })
        .collect();
    let (y0, y1) = log_range(series.iter().flat_map(|s| s.1.iter().map(|p| p.1)));
    let mut chart = ChartBuilder::on(root)
        .caption(title(report, g), (FAMILY, 22))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc("problem size N (log scale)")
        .y_desc("median time per run, ms (log scale)")
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .x_label_formatter(&|v| size_label(*v))
        .y_label_formatter(&|v| fmt_axis(*v))
        .draw()
        .map_err(|x| e(&x))?;
    for (i, (system, pts)) in series.iter().enumerate() {
        let c = color(i);
        let style = c.stroke_width(3);
        let label = match report.focus.as_ref() == Some(system) || report.policies.contains(system)
        {
            true => format!("{system} (dashed)"),
            false => system.clone(),
        };
        let anno = if label.ends_with("(dashed)") {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 10, 6, style))
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), style))
        }
        .map_err(|x| e(&x))?;
        anno.label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))
            .map_err(|x| e(&x))?;
    }
    for gpu in report.gpu_systems.iter().filter(|s| g.systems.contains(s)) {
        if let Crossover::At(n) = g.crossover(report, gpu) {
            let grey = RGBColor(60, 60, 60).stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(vec![(n, y0), (n, y1)], 6, 6, grey))
                .map_err(|x| e(&x))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{gpu} crossover: N ~ {}", n.round()),
                    (n * 1.05, y0 * 1.6),
                    (FAMILY, 16),
                )))
                .map_err(|x| e(&x))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 16))
        .draw()
        .map_err(|x| e(&x))
}

fn summary_plot(report: &Report, groups: &[Group], root: &Area) -> DrawResult {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (what, lines): (String, Vec<Line>) = match &report.focus {
        Some(f) => (
            format!("Speedup of {f} over {}", report.baseline),
            groups
                .iter()
                .map(|g| {
                    let pts = g
                        .sizes
                        .iter()
                        .filter_map(|&n| g.speedup(report, n, f).map(|s| (n as f64, s)));
                    (g.summary_label(report), pts.collect())
                })
                .collect(),
        ),
        None => (
            format!("Speedup of the best system over {}", report.baseline),
            groups
                .iter()
                .map(|g| {
                    let pts = g
                        .sizes
                        .iter()
                        .filter_map(|&n| g.best(report, n).map(|(_, s)| (n as f64, s)));
                    (g.summary_label(report), pts.collect())
                })
                .collect(),
        ),
    };
    let (x0, x1) = log_range(
        groups
            .iter()
            .flat_map(|g| g.sizes.iter().map(|&n| n as f64)),
    );
    let (y0, y1) = log_range(
        lines
            .iter()
            .flat_map(|l| l.1.iter().map(|p| p.1))
            .chain([0.5, 2.0]),
    );
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("{what} by problem size (above 1 = faster)"),
            (FAMILY, 22),
        )
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc("problem size N (log scale)")
        .y_desc(format!(
            "{} time / system time (log scale)",
            report.baseline
        ))
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .x_label_formatter(&|v| size_label(*v))
        .y_label_formatter(&|v| format!("{}x", fmt_axis(*v)))
        .draw()
        .map_err(|x| e(&x))?;
    chart
        .draw_series(DashedLineSeries::new(
            vec![(x0, 1.0), (x1, 1.0)],
            8,
            6,
            BLACK.stroke_width(2),
        ))
        .map_err(|x| e(&x))?
        .label(format!("1x = {}", report.baseline))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK.stroke_width(2)));
    for (i, (label, pts)) in lines.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(3)))
            .map_err(|x| e(&x))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))
            .map_err(|x| e(&x))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 15))
        .draw()
        .map_err(|x| e(&x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_safe_file_names() {
        assert_eq!(file_stem("reduction-sum"), "reduction-sum");
        assert_eq!(file_stem("a b/c"), "a_b_c");
    }

    #[test]
    fn size_labels_keep_one_two_five() {
        assert_eq!(size_label(1000.0), "1000");
        assert_eq!(size_label(200.0), "200");
        assert_eq!(size_label(900.0), "");
        assert_eq!(size_label(5e3), "5000");
    }

    #[test]
    fn log_ranges_hold_the_values_and_are_never_empty() {
        let (lo, hi) = log_range([1.0, 10.0].into_iter());
        assert!(lo < 1.0 && hi > 10.0);
        let (lo, hi) = log_range([5.0].into_iter());
        assert!(lo < 5.0 && hi > 5.0);
        assert_eq!(log_range(std::iter::empty()), (0.1, 10.0));
    }
}
