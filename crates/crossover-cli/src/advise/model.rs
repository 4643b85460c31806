//! The decision logic of `crossover advise`: for each workload class
//! ([`super::classes`]) and problem size, the predicted CPU and GPU times
//! from a [`Profile`], and the size from which the GPU is faster.
//!
//! Nothing here measures or prints; everything is a function of the
//! profile, so the unit tests pin it down with [`Profile::synthetic`].

use super::classes::{Class, Keys};
use crossover::cost::{Profile, Source};
use crossover::explain::si;
use crossover::DeviceKind;
use serde::Serialize;

/// Smallest problem size scanned.
pub const N_MIN: usize = 16;
/// Largest problem size scanned.
pub const N_MAX: usize = 65536;
/// Grid points per decade of N.
pub const PER_DECADE: f64 = 40.0;

/// Predicted times of one class at one size.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// All kernels on the CPU (inputs on the host).
    pub cpu_s: f64,
    /// All kernels on the GPU, no copies.
    pub gpu_kernels_s: f64,
    /// Copies of the inputs host -> GPU.
    pub copy_in_s: f64,
    /// Copies of the results GPU -> host.
    pub copy_out_s: f64,
    /// Whether a measured curve (rather than the roofline) gave a CPU time.
    pub cpu_curve: bool,
    /// The same for the GPU.
    pub gpu_curve: bool,
}

impl Prediction {
    /// GPU with the data starting on the host: copies in, kernels, result back.
    pub fn gpu_host_s(&self) -> f64 {
        self.gpu_kernels_s + self.copy_in_s + self.copy_out_s
    }

    /// GPU with the data already there (and the result left there).
    pub fn gpu_resident_s(&self) -> f64 {
        self.gpu_kernels_s
    }
}

/// Where the data starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// On the host: inputs copied to the GPU, the result copied back.
    Host,
    /// Already on the GPU: no input copies; the result stays.
    Resident,
}

/// Predicts `class` at size `n` on both devices with `profile`.
pub fn predict(profile: &Profile, keys: &Keys, class: Class, n: usize) -> Prediction {
    let kernels = class.kernels(n, keys);
    let mut p = Prediction {
        cpu_s: 0.0,
        gpu_kernels_s: 0.0,
        copy_in_s: 0.0,
        copy_out_s: 0.0,
        cpu_curve: false,
        gpu_curve: false,
    };
    for w in &kernels {
        let c = profile.predict_kernel(DeviceKind::Cpu, w);
        let g = profile.predict_kernel(DeviceKind::Gpu, w);
        p.cpu_s += c.seconds;
        p.gpu_kernels_s += g.seconds;
        p.cpu_curve |= c.source == Source::Curve;
        p.gpu_curve |= g.source == Source::Curve;
    }
    let copy = |from, to, bytes: &[f64]| -> f64 {
        bytes
            .iter()
            .map(|&b| profile.predict_copy(from, to, b as usize))
            .sum()
    };
    p.copy_in_s = copy(DeviceKind::Cpu, DeviceKind::Gpu, &class.inputs(n));
    p.copy_out_s = copy(DeviceKind::Gpu, DeviceKind::Cpu, &class.outputs(n));
    p
}

/// Whether the GPU is predicted faster (strictly; ties go to the CPU, as
/// in the planner).
pub fn gpu_faster(p: &Prediction, start: Start) -> bool {
    let gpu = match start {
        Start::Host => p.gpu_host_s(),
        Start::Resident => p.gpu_resident_s(),
    };
    gpu < p.cpu_s
}

/// From which size the GPU is faster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "n", rename_all = "snake_case")]
pub enum Crossover {
    /// Faster already at [`N_MIN`] and at every larger size scanned.
    Always,
    /// Faster from this N on (and not at N - 1).
    From(usize),
    /// Not faster at [`N_MAX`].
    Never,
}

impl Crossover {
    /// The size it names (`N_MIN` for always), if any.
    pub fn n(self) -> Option<usize> {
        match self {
            Crossover::Always => Some(N_MIN),
            Crossover::From(n) => Some(n),
            Crossover::Never => None,
        }
    }
}

/// The scanned sizes: [`N_MIN`]..=[`N_MAX`], [`PER_DECADE`] per decade.
pub fn grid() -> Vec<usize> {
    let decades = (N_MAX as f64 / N_MIN as f64).log10();
    let steps = (decades * PER_DECADE).ceil() as usize;
    let mut v: Vec<usize> = (0..=steps)
        .map(|i| {
            let n = N_MIN as f64 * 10f64.powf(i as f64 / PER_DECADE);
            (n.round() as usize).clamp(N_MIN, N_MAX)
        })
        .collect();
    v.dedup();
    v
}

/// The first size from which `faster` holds at every larger grid point,
/// refined to the exact integer between the two grid points around it.
pub fn find_crossover(grid: &[usize], faster: impl Fn(usize) -> bool) -> Crossover {
    let mut first = None;
    for (i, &n) in grid.iter().enumerate().rev() {
        if !faster(n) {
            break;
        }
        first = Some(i);
    }
    match first {
        None => Crossover::Never,
        Some(0) => Crossover::Always,
        Some(i) => {
            // faster(hi) and !faster(lo): bisect to adjacent integers.
            let (mut lo, mut hi) = (grid[i - 1], grid[i]);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if faster(mid) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            Crossover::From(hi)
        }
    }
}

/// The answer for one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Helps {
    /// Even with the copies to and from the GPU.
    Yes,
    /// Only when the data is already on the GPU.
    IfResident,
    /// Not at any size scanned.
    No,
}

/// One row of the decision table.
#[derive(Clone, Debug, Serialize)]
pub struct Advice {
    /// Workload class (`crossover bench` name).
    pub workload: &'static str,
    /// What it computes.
    pub computes: &'static str,
    /// Element type of the data (`float32`...).
    pub dtype: &'static str,
    /// The answer.
    pub helps: Helps,
    /// From which N the GPU is faster with the data starting on the host.
    pub from_host: Crossover,
    /// From which N the GPU is faster with the data already on the GPU.
    pub from_resident: Crossover,
    /// The size of the predictions below: 10x the elements of the first
    /// crossover found (host, else resident), else [`N_MAX`].
    pub at_n: usize,
    /// Elements at `at_n`.
    pub at_elements: f64,
    /// Predicted seconds on the CPU at `at_n`.
    pub cpu_s: f64,
    /// Predicted seconds on the GPU at `at_n`, copies in and out included.
    pub gpu_host_s: f64,
    /// Predicted seconds on the GPU at `at_n`, data already there.
    pub gpu_resident_s: f64,
    /// `cpu_s / gpu_host_s`.
    pub speedup_host: f64,
    /// `cpu_s / gpu_resident_s`.
    pub speedup_resident: f64,
    /// How the CPU kernel times were modelled: `curve` (a library curve
    /// of the profile) or `roofline`.
    pub cpu_model: &'static str,
    /// The same for the GPU.
    pub gpu_model: &'static str,
    /// Why this row's numbers deserve caution, if they do.
    pub caveats: Vec<String>,
}

/// The size with 10x the elements of an NxN problem (N * sqrt(10)).
pub fn ten_x(n: usize) -> usize {
    (n as f64 * 10f64.sqrt()).round() as usize
}

/// A library curve counts as wildly extrapolated where the rate it implies
/// exceeds this multiple of the rate at its largest measured point.
pub const EXTRAPOLATION_LIMIT: f64 = 2.0;

/// Warnings for the library curves of `class` whose fit, extrapolated past
/// their measured points, would imply rates far above any they measured (a
/// fit exponent well below 1 from small sizes only). The engine caps such
/// predictions at the last measured rate, so large-N times are
/// conservative guesses; the caveat says from which N that applies.
pub fn curve_caveats(profile: &Profile, keys: &Keys, class: Class, grid: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    for device in [DeviceKind::Cpu, DeviceKind::Gpu] {
        let first_bad = grid.iter().find_map(|&n| {
            class.kernels(n, keys).iter().find_map(|w| {
                let (op, dtype) = w.library?;
                let c = profile.curve(op, device, dtype.name())?;
                let last = c.points.last()?;
                let f = w.flops();
                // The uncapped fit (`LibraryCurve::seconds` caps it).
                let rate = f / (c.a * f.powf(c.b) + c.c).max(f64::MIN_POSITIVE);
                let measured = last[0] / last[1];
                (f > last[0] && rate > EXTRAPOLATION_LIMIT * measured)
                    .then(|| (n, op, c.b, last[0], rate, measured))
            })
        });
        if let Some((n, op, b, last, rate, measured)) = first_bad {
            out.push(format!(
                "{device} {op}: from N={n} on, the profile's curve (measured up to {}flop, fit \
                 exponent {b:.2}) would extrapolate to rates above {}FLOP/s, {:.0}x the {}FLOP/s it \
                 measured; predictions are capped at that measured rate, so large-N times are \
                 conservative guesses: a full `crossover calibrate` measures larger sizes",
                si(last),
                si(rate),
                rate / measured,
                si(measured),
            ));
        }
    }
    out
}

/// The decision table for `profile`.
pub fn advise(profile: &Profile, keys: &Keys) -> Vec<Advice> {
    let grid = grid();
    Class::ALL
        .iter()
        .map(|&class| {
            let at = |n| predict(profile, keys, class, n);
            let from_host = find_crossover(&grid, |n| gpu_faster(&at(n), Start::Host));
            let from_resident = find_crossover(&grid, |n| gpu_faster(&at(n), Start::Resident));
            let helps = match (from_host, from_resident) {
                (Crossover::Never, Crossover::Never) => Helps::No,
                (Crossover::Never, _) => Helps::IfResident,
                _ => Helps::Yes,
            };
            let at_n = from_host.n().or(from_resident.n()).map_or(N_MAX, ten_x);
            let p = at(at_n);
            let model = |curve| if curve { "curve" } else { "roofline" };
            Advice {
                workload: class.name(),
                computes: class.computes(),
                dtype: class.dtype().name(),
                helps,
                from_host,
                from_resident,
                at_n,
                at_elements: class.elements(at_n),
                cpu_s: p.cpu_s,
                gpu_host_s: p.gpu_host_s(),
                gpu_resident_s: p.gpu_resident_s(),
                speedup_host: p.cpu_s / p.gpu_host_s(),
                speedup_resident: p.cpu_s / p.gpu_resident_s(),
                cpu_model: model(p.cpu_curve),
                gpu_model: model(p.gpu_curve),
                caveats: class
                    .caveat()
                    .map(String::from)
                    .into_iter()
                    .chain(curve_caveats(profile, keys, class, &grid))
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossover::cost::DeviceProfile;

    fn row(rows: &[Advice], class: Class) -> &Advice {
        rows.iter().find(|r| r.workload == class.name()).unwrap()
    }

    /// A profile whose GPU is slower than its CPU in every respect.
    fn slow_gpu() -> Profile {
        let mut p = Profile::synthetic();
        let cpu = p.device(DeviceKind::Cpu).unwrap().clone();
        let mut gpu: DeviceProfile = p.device(DeviceKind::Gpu).unwrap().clone();
        gpu.launch_s = cpu.launch_s * 4.0;
        gpu.bandwidth = cpu.bandwidth / 4.0;
        gpu.rates.f32_arith = cpu.rates.f32_arith / 4.0;
        gpu.rates.f32_transcendental = cpu.rates.f32_transcendental / 4.0;
        gpu.rates.f64_arith = cpu.rates.f64_arith / 4.0;
        gpu.rates.f64_transcendental = cpu.rates.f64_transcendental / 4.0;
        p.set_device(gpu);
        // Its matmul curve too: slower than the CPU's.
        p.library.retain(|c| c.device != DeviceKind::Gpu);
        p
    }

    #[test]
    fn grid_spans_the_range_densely_and_ascending() {
        let g = grid();
        assert_eq!(g[0], N_MIN);
        assert_eq!(*g.last().unwrap(), N_MAX);
        assert!(g.windows(2).all(|w| w[0] < w[1]));
        // ~40 per decade over 3.6 decades.
        assert!((130..=150).contains(&g.len()), "{}", g.len());
        // One grid step apart, give or take the rounding to integers.
        let step = 10f64.powf(1.0 / PER_DECADE);
        assert!(g
            .windows(2)
            .all(|w| w[1] as f64 <= w[0] as f64 * step + 1.5));
    }

    #[test]
    fn find_crossover_cases() {
        let g = grid();
        assert_eq!(find_crossover(&g, |_| true), Crossover::Always);
        assert_eq!(find_crossover(&g, |_| false), Crossover::Never);
        assert_eq!(find_crossover(&g, |n| n >= 1000), Crossover::From(1000));
        // Faster at small sizes only: never from the top.
        assert_eq!(find_crossover(&g, |n| n < 100), Crossover::Never);
        // Faster at the smallest, slower in the middle, faster from 5000.
        assert_eq!(
            find_crossover(&g, |n| !(20..5000).contains(&n)),
            Crossover::From(5000)
        );
    }

    #[test]
    fn synthetic_elementwise_helps_from_host_and_earlier_when_resident() {
        let rows = advise(&Profile::synthetic(), &Keys::from_engine());
        let r = row(&rows, Class::Elementwise);
        assert_eq!(r.helps, Helps::Yes);
        let host = r.from_host.n().expect("host crossover");
        let res = r.from_resident.n().expect("resident crossover");
        assert!(host > N_MIN, "host crossover {host}");
        assert!(res < host, "resident {res} vs host {host}");
        assert!(r.speedup_host > 1.0 && r.speedup_resident > r.speedup_host);
        assert_eq!(r.at_n, ten_x(host));
    }

    #[test]
    fn synthetic_speedups_at_ten_x_exceed_one_where_the_gpu_helps() {
        let rows = advise(&Profile::synthetic(), &Keys::from_engine());
        for r in &rows {
            if r.helps == Helps::Yes {
                assert!(r.speedup_host > 1.0, "{}: {}", r.workload, r.speedup_host);
            }
            if r.from_resident != Crossover::Never {
                assert!(r.speedup_resident > 1.0, "{}", r.workload);
            }
        }
    }

    #[test]
    fn synthetic_matmul_crossover_uses_the_curves() {
        let rows = advise(&Profile::synthetic(), &Keys::from_engine());
        let r = row(&rows, Class::Matmul);
        assert!(
            matches!(r.from_host, Crossover::From(_)),
            "{:?}",
            r.from_host
        );
        assert_eq!((r.cpu_model, r.gpu_model), ("curve", "curve"));
        // 200 GFLOP/s vs 40 TFLOP/s: nearly 200x once the copies are paid.
        assert!(r.speedup_resident > 50.0, "{}", r.speedup_resident);
    }

    #[test]
    fn slower_gpu_never_helps() {
        let rows = advise(&slow_gpu(), &Keys::from_engine());
        for r in &rows {
            assert_eq!(r.helps, Helps::No, "{}", r.workload);
            assert_eq!(r.from_host, Crossover::Never);
            assert_eq!(r.from_resident, Crossover::Never);
            assert_eq!(r.at_n, N_MAX);
            assert!(r.speedup_resident < 1.0);
        }
    }

    #[test]
    fn crossovers_are_where_the_predictions_cross() {
        let p = Profile::synthetic();
        let keys = Keys::from_engine();
        let rows = advise(&p, &keys);
        let mut checked = 0;
        for (class, r) in Class::ALL.iter().zip(&rows) {
            for (start, c) in [
                (Start::Host, r.from_host),
                (Start::Resident, r.from_resident),
            ] {
                if let Crossover::From(n) = c {
                    let below = predict(&p, &keys, *class, n - 1);
                    let at = predict(&p, &keys, *class, n);
                    assert!(
                        !gpu_faster(&below, start),
                        "{} {start:?} at {}",
                        r.workload,
                        n - 1
                    );
                    assert!(gpu_faster(&at, start), "{} {start:?} at {n}", r.workload);
                    checked += 1;
                }
            }
        }
        assert!(checked >= 5, "only {checked} crossovers found");
    }

    #[test]
    fn synthetic_curves_extrapolate_sanely() {
        let rows = advise(&Profile::synthetic(), &Keys::from_engine());
        let curve_warnings: Vec<&String> = rows
            .iter()
            .flat_map(|r| &r.caveats)
            .filter(|c| c.contains("extrapolated"))
            .collect();
        assert!(curve_warnings.is_empty(), "{curve_warnings:?}");
    }

    /// A quick calibration's matmul curve (32..256, overhead-dominated)
    /// fits an exponent near 0.5: extrapolated, it makes a 2-core CPU
    /// faster than any GPU. The row must say so.
    #[test]
    fn wild_curve_extrapolation_is_flagged() {
        let mut p = Profile::synthetic();
        let pts = vec![
            [65_536.0, 13.9e-6],
            [524_288.0, 31.0e-6],
            [4_194_304.0, 53.8e-6],
            [33_554_432.0, 179.6e-6],
        ];
        p.set_curve(crossover::cost::LibraryCurve::fit(
            "matmul",
            DeviceKind::Cpu,
            "float32",
            pts,
        ));
        let rows = advise(&p, &Keys::from_engine());
        let m = row(&rows, Class::Matmul);
        assert!(
            m.caveats
                .iter()
                .any(|c| c.starts_with("cpu matmul: from N=")),
            "{:?}",
            m.caveats
        );
        assert!(row(&rows, Class::Elementwise).caveats.is_empty());
    }

    #[test]
    fn missing_gpu_entry_uses_default_constants() {
        let mut p = Profile::synthetic();
        p.devices.retain(|d| d.device == DeviceKind::Cpu);
        p.links.clear();
        p.library.retain(|c| c.device == DeviceKind::Cpu);
        let rows = advise(&p, &Keys::from_engine());
        // The default GPU (~35 TFLOP/s, ~1.2 TB/s) still beats a 200 GFLOP/s CPU at matmul.
        assert_eq!(row(&rows, Class::Matmul).helps, Helps::Yes);
        assert_eq!(row(&rows, Class::Matmul).gpu_model, "roofline");
    }

    #[test]
    fn copies_count_every_input_and_result() {
        let p = Profile::synthetic();
        let keys = Keys::from_engine();
        let mc = predict(&p, &keys, Class::MonteCarloPi, 1000);
        assert_eq!(mc.copy_in_s, 0.0, "no inputs");
        assert!(mc.copy_out_s > 0.0);
        let ew = predict(&p, &keys, Class::Elementwise, 1000);
        // Two inputs in, one result back, 4 MB each at 10 GB/s + 20 us.
        assert!((ew.copy_in_s - 2.0 * (20e-6 + 4e6 / 10e9)).abs() < 1e-9);
        assert!((ew.copy_out_s - (20e-6 + 4e6 / 10e9)).abs() < 1e-9);
    }
}
