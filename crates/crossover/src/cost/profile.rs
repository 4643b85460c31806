//! The machine profile: what was measured on this machine, stored as JSON.
//!
//! Location: `CROSSOVER_PROFILE` if set, else
//! `$XDG_CACHE_HOME/crossover/profile-<fingerprint hash>.json` (default
//! `~/.cache/crossover/`). A file made by another crossover version or for
//! another machine is *stale*; one that does not parse or holds impossible
//! numbers is *damaged*. Both are reported and ignored (defaults are used),
//! never fatal.

use super::history::History;
use crate::device::{self, DeviceKind};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest profile file [`Profile::load`] reads.
pub const MAX_PROFILE_BYTES: usize = 8 << 20;

/// Version of the file layout; a different one is stale.
pub const PROFILE_FORMAT: u32 = 1;

/// Arithmetic rates of one device, in flop/s (see [`super::Work`] for how
/// flops are counted: a `sin` counts 20).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// Plain arithmetic (add, mul, compare, where...) on float32.
    pub f32_arith: f64,
    /// Transcendental functions (sin, exp, pow, random...) on float32.
    pub f32_transcendental: f64,
    /// Plain arithmetic on float64.
    pub f64_arith: f64,
    /// Transcendental functions on float64.
    pub f64_transcendental: f64,
}

/// Measured constants of one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceProfile {
    pub device: DeviceKind,
    /// What was measured (CPU model, GPU name).
    pub name: String,
    /// Fixed cost of starting one kernel (dispatch to the thread pool, or a
    /// GPU launch), seconds.
    pub launch_s: f64,
    /// Memory bandwidth, bytes/s.
    pub bandwidth: f64,
    pub rates: Rates,
    /// Seconds to compile one kernel variant (GPUs: the driver's compiler;
    /// 0 for the CPU, whose interpreter compiles nothing). Loading a
    /// compiled kernel from the disk cache costs a fifth of it.
    #[serde(default = "default_compile_s")]
    pub compile_s: f64,
    /// CPU only: the kernel work (points weighted by `1 + flops/4`) from
    /// which splitting a kernel across threads pays on this machine, as
    /// `crossover calibrate` measured it (`None`: the built-in default,
    /// [`crate::cpu::PARALLEL_MIN_WORK`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_min_work: Option<f64>,
    /// CPU only: per float dtype name ("float32", "float64"), the `m*n*k`
    /// from which a matrix product runs through the process's BLAS rather
    /// than faer, as `crossover calibrate` measured it with a BLAS loaded
    /// (`f64::MAX`: never paid; absent: the built-in default,
    /// [`crate::linalg::blas_default_min_mnk`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub blas_min_mnk: BTreeMap<String, f64>,
}

/// [`DeviceProfile::compile_s`] of profiles written before it existed.
fn default_compile_s() -> f64 {
    0.1
}

/// Latency and bandwidth of one kind of transfer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    pub latency_s: f64,
    /// Bytes/s.
    pub bandwidth: f64,
}

impl Transfer {
    /// Predicted seconds to move `bytes`.
    pub fn seconds(&self, bytes: usize) -> f64 {
        if bytes == 0 {
            0.0
        } else {
            self.latency_s + bytes as f64 / self.bandwidth
        }
    }
}

/// One direction of a host<->device link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkProfile {
    pub from: DeviceKind,
    pub to: DeviceKind,
    /// From/to ordinary (pageable) host memory.
    pub pageable: Transfer,
    /// From/to pinned (page-locked) host memory.
    pub pinned: Transfer,
}

/// Time of one library op on one device as a function of its flops:
/// measured points, and the fit `a * flops^b + c` used outside them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LibraryCurve {
    /// The op's name (`matmul`, `fft`, `solve`...).
    pub op: String,
    pub device: DeviceKind,
    /// The dtype the op computes in (`float32`...): its first output's,
    /// a sparse product's values'.
    pub dtype: String,
    /// Measured `[flops, seconds]`, ascending in flops.
    pub points: Vec<[f64; 2]>,
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

impl LibraryCurve {
    /// Builds a curve from measured points, fitting `a * n^b + c`.
    ///
    /// A point slower than a larger one is lowered to that larger one's
    /// time: more work never takes less time, and noise (preemption on a
    /// shared machine) only ever makes a measurement slower, so the curve
    /// never predicts a smaller op to cost more than a bigger one.
    pub fn fit(op: &str, device: DeviceKind, dtype: &str, mut points: Vec<[f64; 2]>) -> Self {
        points.retain(|p| p[0] > 0.0 && p[1] > 0.0 && p[0].is_finite() && p[1].is_finite());
        points.sort_by(|x, y| x[0].total_cmp(&y[0]));
        let mut fastest_above = f64::INFINITY;
        for p in points.iter_mut().rev() {
            p[1] = p[1].min(fastest_above);
            fastest_above = p[1];
        }
        let (a, b, c) = fit_power(&points);
        LibraryCurve {
            op: op.to_string(),
            device,
            dtype: dtype.to_string(),
            points,
            a,
            b,
            c,
        }
    }

    /// Predicted seconds for `flops`: log-log interpolation between measured
    /// points, the fit outside them. Beyond the largest measured point the
    /// prediction never implies a faster rate than was measured there: a
    /// power law fitted on small sizes (a quick calibration) can otherwise
    /// promise hundreds of TFLOP/s at large ones.
    pub fn seconds(&self, flops: f64) -> f64 {
        let p = &self.points;
        if p.len() >= 2 && flops >= p[0][0] && flops <= p[p.len() - 1][0] {
            let i = p.partition_point(|q| q[0] <= flops).clamp(1, p.len() - 1);
            let (x0, y0, x1, y1) = (p[i - 1][0], p[i - 1][1], p[i][0], p[i][1]);
            if x1 > x0 {
                let t = (flops.ln() - x0.ln()) / (x1.ln() - x0.ln());
                return (y0.ln() + t * (y1.ln() - y0.ln())).exp();
            }
            return y0;
        }
        let fit = (self.a * flops.max(1.0).powf(self.b) + self.c).max(0.0);
        match p.last() {
            Some(&[f_last, t_last]) if flops > f_last => fit.max(flops * t_last / f_last),
            _ => fit,
        }
    }
}

/// Least-squares fit of `t = a n^b + c` (relative error, `a > 0`, `c >= 0`)
/// by scanning `b`, solving `(a, c)` linearly for each.
fn fit_power(points: &[[f64; 2]]) -> (f64, f64, f64) {
    if points.is_empty() {
        return (0.0, 1.0, 0.0);
    }
    if points.len() == 1 {
        return (points[0][1] / points[0][0], 1.0, 0.0);
    }
    let mut best = (f64::INFINITY, 0.0, 1.0, 0.0);
    for step in 0..=150 {
        let b = 0.5 + step as f64 * 0.01;
        // Rows (n^b / t, 1 / t) . (a, c) = 1.
        let (mut s11, mut s12, mut s22, mut r1, mut r2) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for p in points {
            let u = p[0].powf(b) / p[1];
            let v = 1.0 / p[1];
            s11 += u * u;
            s12 += u * v;
            s22 += v * v;
            r1 += u;
            r2 += v;
        }
        let det = s11 * s22 - s12 * s12;
        let (mut a, mut c) = if det.abs() > 1e-300 {
            ((r1 * s22 - r2 * s12) / det, (s11 * r2 - s12 * r1) / det)
        } else {
            (r1 / s11, 0.0)
        };
        if c < 0.0 || a <= 0.0 {
            c = 0.0;
            a = r1 / s11;
        }
        let err: f64 = points
            .iter()
            .map(|p| ((a * p[0].powf(b) + c) / p[1] - 1.0).powi(2))
            .sum();
        if err < best.0 {
            best = (err, a, b, c);
        }
    }
    (best.1, best.2, best.3)
}

/// Everything measured on one machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// [`PROFILE_FORMAT`].
    pub format: u32,
    /// The crossover version that wrote it.
    pub crossover_version: String,
    /// CPU model, core count and GPU of the machine it describes.
    pub fingerprint: String,
    /// When it was made (seconds since the Unix epoch).
    pub created_unix: u64,
    /// How it was made: `defaults`, `calibrated (quick)`, `synthetic`...
    pub source: String,
    pub devices: Vec<DeviceProfile>,
    pub links: Vec<LinkProfile>,
    pub library: Vec<LibraryCurve>,
    /// Measured kernel times (online refinement).
    #[serde(default)]
    pub history: History,
}

/// The fingerprint of this machine: CPU model, core count and GPU.
pub fn fingerprint() -> String {
    format!(
        "{}; {} cores; gpu: {}",
        device::cpu_model(),
        device::cores(),
        crate::gpu::discover::fingerprint()
    )
}

fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// Where this machine's profile lives: `CROSSOVER_PROFILE`, else the user
/// cache directory (`None` when neither it nor `HOME` is known).
pub fn profile_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CROSSOVER_PROFILE").filter(|s| !s.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let dir = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|s| !s.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(
        dir.join("crossover")
            .join(format!("profile-{:016x}.json", fnv1a(&fingerprint()))),
    )
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn io_err(op: &'static str, path: &Path, msg: impl Into<String>) -> Error {
    Error::Io {
        op,
        path: path.display().to_string(),
        msg: msg.into(),
    }
}

impl Profile {
    /// A profile of this machine's CPU from what it reports (cores, SIMD
    /// width, clock), before any calibration. No GPU entry: a GPU backend
    /// adds its own defaults ([`DeviceProfile::gpu_default`]).
    pub fn defaults() -> Profile {
        Profile {
            format: PROFILE_FORMAT,
            crossover_version: crate::VERSION.to_string(),
            fingerprint: fingerprint(),
            created_unix: unix_now(),
            source: "defaults (from what the devices report; run `crossover calibrate`)"
                .to_string(),
            devices: vec![DeviceProfile::cpu_default()],
            links: vec![],
            library: vec![],
            history: History::default(),
        }
    }

    /// A fixed profile describing a modest CPU and a fast GPU behind a slow
    /// link, for planning tests and demonstrations without a GPU (pair it
    /// with [`crate::device::SyntheticGpu`]). Its numbers do not depend on
    /// the machine, so plans made with it are reproducible.
    ///
    /// CPU: 5 us dispatch, 20 GB/s, 100 GFLOP/s (f32 arithmetic);
    /// GPU: 10 us launch, 2 TB/s, 30 TFLOP/s; link: 10 GB/s pageable
    /// (20 us latency), 20 GB/s pinned; matmul curves at 200 GFLOP/s (CPU)
    /// and 40 TFLOP/s (GPU).
    pub fn synthetic() -> Profile {
        let cpu = DeviceProfile {
            device: DeviceKind::Cpu,
            name: "synthetic CPU".into(),
            launch_s: 5e-6,
            bandwidth: 20e9,
            rates: Rates {
                f32_arith: 100e9,
                f32_transcendental: 25e9,
                f64_arith: 50e9,
                f64_transcendental: 12e9,
            },
            compile_s: 0.0,
            parallel_min_work: None,
            blas_min_mnk: BTreeMap::new(),
        };
        let gpu = DeviceProfile {
            device: DeviceKind::Gpu,
            name: "synthetic GPU".into(),
            launch_s: 10e-6,
            bandwidth: 2e12,
            rates: Rates {
                f32_arith: 30e12,
                f32_transcendental: 10e12,
                f64_arith: 15e12,
                f64_transcendental: 5e12,
            },
            compile_s: 0.0,
            parallel_min_work: None,
            blas_min_mnk: BTreeMap::new(),
        };
        let curve = |device, rate: f64, c: f64| {
            let pts = [1e6, 1e8, 1e10, 1e12]
                .iter()
                .map(|&f| [f, f / rate + c])
                .collect();
            LibraryCurve::fit("matmul", device, "float32", pts)
        };
        Profile {
            format: PROFILE_FORMAT,
            crossover_version: crate::VERSION.to_string(),
            fingerprint: "synthetic".into(),
            created_unix: unix_now(),
            source: "synthetic (fast GPU behind a slow link)".into(),
            devices: vec![cpu, gpu],
            links: LinkProfile::pair(
                Transfer {
                    latency_s: 20e-6,
                    bandwidth: 10e9,
                },
                Transfer {
                    latency_s: 10e-6,
                    bandwidth: 20e9,
                },
            ),
            library: vec![
                curve(DeviceKind::Cpu, 200e9, 5e-6),
                curve(DeviceKind::Gpu, 40e12, 15e-6),
            ],
            history: History::default(),
        }
    }

    /// The entry for `device`, if measured or defaulted.
    pub fn device(&self, device: DeviceKind) -> Option<&DeviceProfile> {
        self.devices.iter().find(|d| d.device == device)
    }

    /// The link from `from` to `to`, if known.
    pub fn link(&self, from: DeviceKind, to: DeviceKind) -> Option<&LinkProfile> {
        self.links.iter().find(|l| l.from == from && l.to == to)
    }

    /// The curve of library op `op` on `device` for `dtype`, if measured.
    pub fn curve(&self, op: &str, device: DeviceKind, dtype: &str) -> Option<&LibraryCurve> {
        self.library
            .iter()
            .find(|c| c.op == op && c.device == device && c.dtype == dtype)
    }

    /// Adds or replaces a device entry.
    pub fn set_device(&mut self, d: DeviceProfile) {
        self.devices.retain(|x| x.device != d.device);
        self.devices.push(d);
    }

    /// Adds or replaces a library curve.
    pub fn set_curve(&mut self, c: LibraryCurve) {
        self.library
            .retain(|x| !(x.op == c.op && x.device == c.device && x.dtype == c.dtype));
        self.library.push(c);
    }

    /// Seconds since the profile was made.
    pub fn age_s(&self) -> u64 {
        unix_now().saturating_sub(self.created_unix)
    }

    /// Checks that every number is usable (finite, positive where a rate).
    ///
    /// # Errors
    /// A message naming the first bad field.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let pos = |what: String, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{what} must be a positive number, found {v}"))
            }
        };
        let nonneg = |what: String, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(format!("{what} must be >= 0, found {v}"))
            }
        };
        if self.device(DeviceKind::Cpu).is_none() {
            return Err("no cpu entry in devices".into());
        }
        for d in &self.devices {
            let n = d.device.name();
            nonneg(format!("{n}.launch_s"), d.launch_s)?;
            pos(format!("{n}.bandwidth"), d.bandwidth)?;
            pos(format!("{n}.rates.f32_arith"), d.rates.f32_arith)?;
            pos(
                format!("{n}.rates.f32_transcendental"),
                d.rates.f32_transcendental,
            )?;
            pos(format!("{n}.rates.f64_arith"), d.rates.f64_arith)?;
            pos(
                format!("{n}.rates.f64_transcendental"),
                d.rates.f64_transcendental,
            )?;
            for (dtype, &v) in &d.blas_min_mnk {
                pos(format!("{n}.blas_min_mnk.{dtype}"), v)?;
            }
        }
        for l in &self.links {
            let n = format!("link {}->{}", l.from, l.to);
            for (kind, t) in [("pageable", &l.pageable), ("pinned", &l.pinned)] {
                nonneg(format!("{n} {kind} latency_s"), t.latency_s)?;
                pos(format!("{n} {kind} bandwidth"), t.bandwidth)?;
            }
        }
        for c in &self.library {
            let n = format!("curve {} on {}", c.op, c.device);
            for p in &c.points {
                pos(format!("{n} point flops"), p[0])?;
                pos(format!("{n} point seconds"), p[1])?;
            }
            nonneg(format!("{n} a"), c.a)?;
            nonneg(format!("{n} c"), c.c)?;
            if !c.b.is_finite() {
                return Err(format!("{n} b must be finite"));
            }
        }
        Ok(())
    }

    /// Parses and validates a profile, without checking that it belongs to
    /// this machine (see [`Profile::load`]).
    ///
    /// # Errors
    /// A message saying what is wrong (JSON error with line and column, or
    /// the bad field).
    pub fn from_json(text: &str) -> std::result::Result<Profile, String> {
        let p: Profile =
            serde_json::from_str(text).map_err(|e| format!("not a valid profile: {e}"))?;
        if p.format != PROFILE_FORMAT {
            return Err(format!(
                "profile format {} (this crossover reads format {PROFILE_FORMAT})",
                p.format
            ));
        }
        p.validate().map_err(|e| format!("invalid profile: {e}"))?;
        Ok(p)
    }

    /// The profile as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string())
    }

    /// Reads the profile at `path` and checks it belongs to this crossover
    /// version and (unless `any_machine`) this machine.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file and what is wrong: unreadable, damaged
    /// (bad JSON, impossible numbers) or stale (another version, another
    /// machine).
    pub fn load(path: &Path, any_machine: bool) -> Result<Profile> {
        use std::io::Read;
        // A profile is tens of kB (history is capped at 4096 entries); a
        // larger file is not one (`CROSSOVER_PROFILE=/dev/zero` would be
        // read until memory runs out).
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| {
                f.take(MAX_PROFILE_BYTES as u64 + 1)
                    .read_to_string(&mut text)
            })
            .map_err(|e| io_err("load profile", path, e.to_string()))?;
        if text.len() > MAX_PROFILE_BYTES {
            return Err(io_err(
                "load profile",
                path,
                format!(
                    "larger than {} MiB, so not a profile; ignored",
                    MAX_PROFILE_BYTES >> 20
                ),
            ));
        }
        let p = Profile::from_json(&text)
            .map_err(|e| io_err("load profile", path, format!("damaged, ignored: {e}")))?;
        if p.crossover_version != crate::VERSION {
            return Err(io_err(
                "load profile",
                path,
                format!(
                    "stale, ignored: made by crossover {}, this is {}; run `crossover calibrate`",
                    p.crossover_version,
                    crate::VERSION
                ),
            ));
        }
        if !any_machine && p.fingerprint != fingerprint() {
            return Err(io_err(
                "load profile",
                path,
                format!(
                    "stale, ignored: made for '{}', this machine is '{}'; run `crossover calibrate`",
                    p.fingerprint,
                    fingerprint()
                ),
            ));
        }
        Ok(p)
    }

    /// Writes the profile to `path` (creating its directory), atomically
    /// (a temporary file renamed over the old one).
    ///
    /// # Errors
    /// [`Error::Io`] when the directory or file cannot be written.
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_err("save profile", dir, e.to_string()))?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, self.to_json())
            .map_err(|e| io_err("save profile", &tmp, e.to_string()))?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io_err("save profile", path, e.to_string())
        })
    }
}

impl LinkProfile {
    /// Both directions of a symmetric link.
    pub fn pair(pageable: Transfer, pinned: Transfer) -> Vec<LinkProfile> {
        [
            (DeviceKind::Cpu, DeviceKind::Gpu),
            (DeviceKind::Gpu, DeviceKind::Cpu),
        ]
        .into_iter()
        .map(|(from, to)| LinkProfile {
            from,
            to,
            pageable: pageable.clone(),
            pinned: pinned.clone(),
        })
        .collect()
    }

    /// A PCIe 4.0 x16 link as typically measured (used until calibrated).
    pub fn pcie_default() -> Vec<LinkProfile> {
        Self::pair(
            Transfer {
                latency_s: 15e-6,
                bandwidth: 12e9,
            },
            Transfer {
                latency_s: 10e-6,
                bandwidth: 24e9,
            },
        )
    }
}

/// CPU clock in GHz from /proc/cpuinfo (2.5 when unknown).
fn cpu_ghz() -> f64 {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("cpu MHz"))
                .and_then(|l| l.split(':').nth(1))
                .and_then(|m| m.trim().parse::<f64>().ok())
        })
        .filter(|m| *m > 100.0)
        .map_or(2.5, |m| m / 1000.0)
}

impl DeviceProfile {
    /// The CPU as it reports itself: threads x SIMD lanes x clock for
    /// arithmetic (one instruction per lane per cycle: the interpreter
    /// makes a pass per instruction), 8 GB/s of bandwidth per thread up to
    /// 100 GB/s, 10 us to dispatch a parallel kernel.
    pub fn cpu_default() -> DeviceProfile {
        let threads = crate::cpu::threads().max(1) as f64;
        let lanes = crate::cpu::simd::level().f32_lanes() as f64;
        let f32_arith = threads * lanes * cpu_ghz() * 1e9;
        DeviceProfile {
            device: DeviceKind::Cpu,
            name: format!(
                "{} ({} threads, {})",
                device::cpu_model(),
                threads,
                crate::cpu::simd::level().name()
            ),
            launch_s: 10e-6,
            bandwidth: (threads * 8e9).min(100e9),
            // A transcendental "flop" (sin counts 20) costs several
            // instructions: calibrated machines measure ~1/8 of the lane
            // rate (half of it predicted 9.3 ms for a 35-40 ms kernel).
            rates: Rates {
                f32_arith,
                f32_transcendental: f32_arith / 8.0,
                f64_arith: f32_arith / 2.0,
                f64_transcendental: f32_arith / 16.0,
            },
            compile_s: 0.0,
            parallel_min_work: None,
            blas_min_mnk: BTreeMap::new(),
        }
    }

    /// A GPU as it reports itself: `sms` multiprocessors at `clock_ghz`
    /// (128 f32 lanes each, fused multiply-add), a memory bus of `bus_bits`
    /// at `mem_clock_ghz` (double data rate), 8 us launch, 0.1 s to compile
    /// a kernel.
    pub fn gpu_default(
        name: &str,
        sms: u32,
        clock_ghz: f64,
        bus_bits: u32,
        mem_clock_ghz: f64,
    ) -> DeviceProfile {
        let f32_arith = sms as f64 * 128.0 * 2.0 * clock_ghz * 1e9;
        DeviceProfile {
            device: DeviceKind::Gpu,
            name: name.to_string(),
            launch_s: 8e-6,
            bandwidth: bus_bits as f64 / 8.0 * mem_clock_ghz * 2.0 * 1e9 * 0.8,
            rates: Rates {
                f32_arith,
                f32_transcendental: f32_arith / 4.0,
                f64_arith: f32_arith / 32.0,
                f64_transcendental: f32_arith / 64.0,
            },
            compile_s: default_compile_s(),
            parallel_min_work: None,
            blas_min_mnk: BTreeMap::new(),
        }
    }
}
