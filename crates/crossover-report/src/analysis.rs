//! From rows to what the tables and plots show: groups of rows (one per
//! workload and variant), speedups over the baseline, and crossover sizes.

use crate::{Report, Row};

/// The rows of one workload variant, indexed by size and system.
#[derive(Clone, Debug)]
pub struct Group {
    pub workload: String,
    pub variant: String,
    /// Systems in order of first appearance.
    pub systems: Vec<String>,
    /// Sizes, ascending.
    pub sizes: Vec<u64>,
    rows: Vec<Row>,
}

impl Group {
    /// `workload` or `workload-variant`.
    pub fn label(&self) -> String {
        crate::label(&self.workload, &self.variant)
    }

    /// The row for `system` at `size`.
    pub fn row(&self, size: u64, system: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.size == size && r.system == system)
    }

    /// Median times of `system`, as (size, ms) in ascending size.
    pub fn series(&self, system: &str) -> Vec<(u64, f64)> {
        self.sizes
            .iter()
            .filter_map(|&n| self.row(n, system).map(|r| (n, r.median_ms)))
            .collect()
    }

    /// The system this group's speedups are measured against: the report's
    /// baseline, else the first fallback baseline the group has.
    pub fn baseline<'r>(&self, report: &'r Report) -> &'r str {
        std::iter::once(&report.baseline)
            .chain(&report.fallback_baselines)
            .find(|b| self.systems.contains(b))
            .unwrap_or(&report.baseline)
    }

    /// The label in summaries: `label (vs fallback)` when the group is
    /// measured against a fallback baseline.
    pub fn summary_label(&self, report: &Report) -> String {
        match self.baseline(report) {
            b if b == report.baseline => self.label(),
            b => format!("{} (vs {b})", self.label()),
        }
    }

    /// Rows at `size` whose check failed.
    pub fn failures(&self, size: u64) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.size == size && !r.ok)
            .collect()
    }

    /// The fastest system at `size` that is not a policy, and the
    /// baseline's time divided by its time (above 1: faster than the
    /// baseline). `None` without a baseline row.
    pub fn best(&self, report: &Report, size: u64) -> Option<(String, f64)> {
        let base = self.row(size, self.baseline(report))?.median_ms;
        self.rows
            .iter()
            .filter(|r| r.size == size && !report.policies.contains(&r.system))
            .min_by(|a, b| a.median_ms.total_cmp(&b.median_ms))
            .map(|r| (r.system.clone(), base / r.median_ms))
    }

    /// The baseline's time divided by `system`'s at `size`.
    pub fn speedup(&self, report: &Report, size: u64, system: &str) -> Option<f64> {
        let base = self.row(size, self.baseline(report))?.median_ms;
        Some(base / self.row(size, system)?.median_ms)
    }

    /// Whether `system`'s speedup over the baseline at `size` is within
    /// measurement noise: it ran on the baseline's own device (auto that
    /// chose the CPU against the CPU), or the ratio lies inside the spread
    /// between the two rows' median and best times.
    pub fn within_noise(&self, report: &Report, size: u64, system: &str) -> bool {
        let base_name = self.baseline(report);
        let (Some(base), Some(r)) = (self.row(size, base_name), self.row(size, system)) else {
            return false;
        };
        if r.chosen.as_deref() == Some(base_name) {
            return true;
        }
        let spread = |row: &Row| {
            if row.min_ms > 0.0 && row.median_ms >= row.min_ms {
                row.median_ms / row.min_ms
            } else {
                1.0
            }
        };
        let band = spread(base).max(spread(r));
        let ratio = base.median_ms / r.median_ms;
        band > 1.0 && ratio <= band && ratio >= 1.0 / band
    }

    /// The summary's figure at `size`: the focus system's speedup over the
    /// baseline, else the best system's speedup and its name.
    pub fn headline(&self, report: &Report, size: u64) -> Option<(Option<String>, f64)> {
        match &report.focus {
            Some(f) => self.speedup(report, size, f).map(|r| (None, r)),
            None => self.best(report, size).map(|(s, r)| (Some(s), r)),
        }
    }

    /// Where `gpu`'s time line crosses the baseline's.
    pub fn crossover(&self, report: &Report, gpu: &str) -> Crossover {
        let base = self.series(self.baseline(report));
        let other = self.series(gpu);
        let pairs: Vec<(u64, f64, f64)> = base
            .iter()
            .filter_map(|&(n, b)| other.iter().find(|o| o.0 == n).map(|o| (n, b, o.1)))
            .collect();
        crossover_size(&pairs)
    }
}

/// Groups the report's rows by workload and variant, in order of first
/// appearance.
pub fn groups(report: &Report) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for r in &report.rows {
        let g = match groups
            .iter_mut()
            .position(|g| g.workload == r.workload && g.variant == r.variant)
        {
            Some(i) => &mut groups[i],
            None => {
                groups.push(Group {
                    workload: r.workload.clone(),
                    variant: r.variant.clone(),
                    systems: Vec::new(),
                    sizes: Vec::new(),
                    rows: Vec::new(),
                });
                groups.last_mut().expect("just pushed")
            }
        };
        if !g.systems.contains(&r.system) {
            g.systems.push(r.system.clone());
        }
        if !g.sizes.contains(&r.size) {
            g.sizes.push(r.size);
        }
        g.rows.push(r.clone());
    }
    for g in &mut groups {
        g.sizes.sort_unstable();
    }
    groups
}

/// Where a GPU line crosses the CPU (baseline) line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Crossover {
    /// The GPU is faster at every size measured.
    Always,
    /// The GPU is slower at every size measured (or is faster only at
    /// sizes followed by a larger size where it is slower again).
    Never,
    /// The GPU is faster from about this size on (interpolated in log-log
    /// between the last size where it was slower and the first where it
    /// was faster and stays faster).
    At(f64),
    /// No size has both times.
    Unknown,
}

impl std::fmt::Display for Crossover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Crossover::Always => write!(f, "faster at every size"),
            Crossover::Never => write!(f, "slower at every size"),
            Crossover::At(n) => write!(f, "from N ~ {}", n.round()),
            Crossover::Unknown => write!(f, "not measured"),
        }
    }
}

/// The crossover of `(size, baseline_ms, gpu_ms)` points in ascending
/// size: the size from which the GPU is faster and stays faster.
///
/// ```
/// use crossover_report::{crossover_size, Crossover};
/// // slower at 100, faster at 1000: the lines cross in between.
/// let c = crossover_size(&[(100, 1.0, 2.0), (1000, 10.0, 5.0)]);
/// let Crossover::At(n) = c else { panic!() };
/// assert!(n > 100.0 && n < 1000.0);
/// ```
pub fn crossover_size(points: &[(u64, f64, f64)]) -> Crossover {
    if points.is_empty() {
        return Crossover::Unknown;
    }
    // The first index from which the GPU is faster at every later size.
    let mut from = points.len();
    for i in (0..points.len()).rev() {
        if points[i].2 < points[i].1 {
            from = i;
        } else {
            break;
        }
    }
    if from == points.len() {
        return Crossover::Never;
    }
    if from == 0 {
        return Crossover::Always;
    }
    // log(gpu/base) goes from >= 0 at `from - 1` to < 0 at `from`.
    let (n0, b0, g0) = points[from - 1];
    let (n1, b1, g1) = points[from];
    let d0 = (g0 / b0).ln();
    let d1 = (g1 / b1).ln();
    let t = if d0 - d1 > 0.0 { d0 / (d0 - d1) } else { 1.0 };
    let (l0, l1) = ((n0 as f64).ln(), (n1 as f64).ln());
    Crossover::At((l0 + t * (l1 - l0)).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossover_is_where_the_log_lines_meet() {
        // base ~ n, gpu = constant 10: equal at n = 10 (log-linear exact).
        let pts = [(1, 1.0, 10.0), (100, 100.0, 10.0)];
        let Crossover::At(n) = crossover_size(&pts) else {
            panic!("expected a crossing")
        };
        assert!((n - 10.0).abs() < 1e-9, "{n}");
    }

    #[test]
    fn a_gpu_that_wins_then_loses_again_has_no_crossover_there() {
        let pts = [(1, 1.0, 2.0), (10, 2.0, 1.0), (100, 3.0, 4.0)];
        assert_eq!(crossover_size(&pts), Crossover::Never);
        let pts = [(1, 1.0, 0.5), (10, 2.0, 1.0)];
        assert_eq!(crossover_size(&pts), Crossover::Always);
        assert_eq!(crossover_size(&[]), Crossover::Unknown);
        // Wins at 10, loses at 100, wins again from 1000: crossing in 100..1000.
        let pts = [(10, 1.0, 0.5), (100, 2.0, 4.0), (1000, 20.0, 5.0)];
        let Crossover::At(n) = crossover_size(&pts) else {
            panic!()
        };
        assert!(n > 100.0 && n < 1000.0, "{n}");
    }

    #[test]
    fn best_skips_policies_and_divides_the_baseline() {
        let mut r = Report::new("t", "cpu");
        r.policies = vec!["auto".into()];
        for (s, ms) in [("cpu", 4.0), ("gpu", 2.0), ("auto", 1.0)] {
            r.rows.push(Row::new("w", "", 10, s, ms));
        }
        let g = &groups(&r)[0];
        assert_eq!(g.best(&r, 10), Some(("gpu".to_string(), 2.0)));
        assert_eq!(g.speedup(&r, 10, "auto"), Some(4.0));
        assert_eq!(g.best(&r, 11), None);
    }

    #[test]
    fn a_group_without_the_baseline_uses_the_fallback() {
        let mut r = Report::new("t", "numpy");
        r.fallback_baselines = vec!["scipy".into()];
        r.rows.push(Row::new("sparse", "", 10, "scipy", 3.0));
        r.rows.push(Row::new("sparse", "", 10, "crossover", 1.0));
        r.rows.push(Row::new("dense", "", 10, "numpy", 2.0));
        r.rows.push(Row::new("dense", "", 10, "scipy", 1.0));
        let g = groups(&r);
        assert_eq!(g[0].baseline(&r), "scipy");
        assert_eq!(g[0].speedup(&r, 10, "crossover"), Some(3.0));
        assert_eq!(g[1].baseline(&r), "numpy");
        assert_eq!(g[1].speedup(&r, 10, "scipy"), Some(2.0));
    }

    #[test]
    fn groups_keep_variants_apart_and_sort_sizes() {
        let mut r = Report::new("t", "cpu");
        r.rows.push(Row::new("reduction", "sum", 1000, "cpu", 1.0));
        r.rows.push(Row::new("reduction", "std", 100, "cpu", 1.0));
        r.rows.push(Row::new("reduction", "sum", 100, "cpu", 1.0));
        let g = groups(&r);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].label(), "reduction-sum");
        assert_eq!(g[0].sizes, vec![100, 1000]);
    }
}
