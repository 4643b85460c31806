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

/// Tableau's ten colours, then four of their light variants: distinct, and
/// readable on white.
const COLORS: [RGBColor; 14] = [
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
    RGBColor(0, 0, 128),
    RGBColor(255, 187, 120),
    RGBColor(128, 128, 0),
    RGBColor(255, 152, 150),
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

/// `text` for ticks whose leading digit is 1, 2 or 5, else nothing (log
/// axes put ticks at every integer multiple, which crowd near a decade).
fn one_two_five(v: f64, text: String) -> String {
    let lead = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0].iter().any(|d| (lead - d).abs() < 1e-6) {
        text
    } else {
        String::new()
    }
}

/// An x-axis label: the size, on 1-2-5 ticks.
fn size_label(v: f64) -> String {
    one_two_five(v, format!("{}", v.round()))
}

/// A legend beside the chart (many lines would hide the data under an
/// inset legend): one coloured stroke and label per entry.
fn side_legend(area: &Area, entries: &[(String, ShapeStyle)]) -> DrawResult {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    for (i, (label, style)) in entries.iter().enumerate() {
        let y = 70 + 26 * i as i32;
        area.draw(&PathElement::new(vec![(8, y), (38, y)], *style))
            .map_err(|x| e(&x))?;
        area.draw(&Text::new(label.clone(), (46, y - 9), (FAMILY, 15)))
            .map_err(|x| e(&x))?;
    }
    Ok(())
}

type LogChart<'a, 'b> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// A chart with log-log axes over `[x range, y range]`, problem size on x,
/// its caption, axis descriptions and 1-2-5 tick labels drawn.
fn log_chart<'a, 'b>(
    area: &'a Area<'b>,
    caption: String,
    [(x0, x1), (y0, y1)]: [(f64, f64); 2],
    y_desc: String,
    y_label: &dyn Fn(&f64) -> String,
) -> std::result::Result<LogChart<'a, 'b>, String> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FAMILY, 22))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("problem size N (log scale)")
        .y_desc(y_desc)
        .light_line_style(RGBColor(238, 238, 238))
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .x_label_formatter(&|v| size_label(*v))
        .y_label_formatter(y_label)
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
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
    let mut chart = log_chart(
        root,
        title(report, g),
        [(x0, x1), (y0, y1)],
        "median time per run, ms (log scale)".into(),
        &|v| one_two_five(*v, fmt_axis(*v)),
    )?;
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
    let what = format!("Speedup of {}", report.headline());
    let lines: Vec<Line> = groups
        .iter()
        .map(|g| {
            let pts = g
                .sizes
                .iter()
                .filter_map(|&n| g.headline(report, n).map(|(_, r)| (n as f64, r)));
            (g.summary_label(report), pts.collect())
        })
        .collect();
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
    let (plot_area, legend_area) = root.split_horizontally(SIZE.0 - 250);
    let mut chart = log_chart(
        &plot_area,
        format!("{what} by problem size (above 1 = faster)"),
        [(x0, x1), (y0, y1)],
        format!("{} time / system time (log scale)", report.baseline),
        &|v| one_two_five(*v, format!("{}x", fmt_axis(*v))),
    )?;
    chart
        .draw_series(DashedLineSeries::new(
            vec![(x0, 1.0), (x1, 1.0)],
            8,
            6,
            BLACK.stroke_width(2),
        ))
        .map_err(|x| e(&x))?;
    let mut legend = vec![(format!("1x = {}", report.baseline), BLACK.stroke_width(2))];
    for (i, (label, pts)) in lines.iter().enumerate() {
        let style = color(i).stroke_width(3);
        chart
            .draw_series(LineSeries::new(pts.clone(), style))
            .map_err(|x| e(&x))?;
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, color(i).filled())))
            .map_err(|x| e(&x))?;
        legend.push((label.clone(), style));
    }
    side_legend(&legend_area, &legend)
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
