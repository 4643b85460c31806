//! A [`Plan`] as text: per kernel the fused ops, bytes and flops, the
//! predicted time on each device (kernel and copies), the choice and the
//! reason, and after a run the measured time beside the prediction.
//!
//! ```
//! use crossover::Array;
//! let a = Array::from_vec(vec![0.5f32; 4096], &[64, 64])?;
//! let y = a.mul(&a)?.add(&a.sin()?)?;
//! let text = y.explain()?.to_string();
//! assert!(text.contains("fused(mul,sin,add)"));
//! assert!(text.contains("choice"));
//! # Ok::<(), crossover::Error>(())
//! ```

use crate::cost::Source;
use crate::plan::{Choice, Plan, PlannedKernel};
use std::fmt::{self, Write};

/// A number with an SI prefix and a space, ready for a unit: `1.500 M`
/// (then `B` gives `1.500 MB`), `12.000 ` (then `12.000 B`).
pub fn si(v: f64) -> String {
    let (s, p) = if v >= 1e12 {
        (v / 1e12, "T")
    } else if v >= 1e9 {
        (v / 1e9, "G")
    } else if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{s:.3} {p}")
}

/// Seconds, in s, ms or us (never "-0.0 us": the sum of no times is -0.0).
pub fn time(s: f64) -> String {
    let s = if s == 0.0 { 0.0 } else { s };
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} us", s * 1e6)
    }
}

fn source(k: &crate::cost::KernelEstimate) -> String {
    let mut s = match k.source {
        Source::Roofline => format!(
            "launch {} + max(compute {}, memory {})",
            time(k.launch_s),
            time(k.compute_s),
            time(k.memory_s)
        ),
        Source::Curve => "measured curve".to_string(),
    };
    if let Some((f, n)) = k.correction {
        let _ = write!(
            s,
            ", x{f:.2} from {n} measured run{}",
            if n == 1 { "" } else { "s" }
        );
    }
    s
}

/// An integer with thousands separators: `10,000,000`.
pub fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether plans come from the nominal defaults rather than measurements.
pub fn uncalibrated(profile_note: &str) -> bool {
    profile_note.starts_with("defaults")
}

/// The warning printed above plans made without measurements.
pub const UNCALIBRATED: &str = "warning: this machine is not calibrated: predicted times come \
     from nominal rates and can be several times off; run `crossover calibrate` (--quick: \
     under 30 s)";

fn kernel(f: &mut fmt::Formatter<'_>, i: usize, k: &PlannedKernel) -> fmt::Result {
    writeln!(f, "kernel {i}: {}", k.name)?;
    if !k.fused.is_empty() {
        writeln!(f, "  fused ops : {}", k.fused.join(", "))?;
    }
    let points = k.work.points;
    writeln!(
        f,
        "  shape     : {:?} ({} point{})",
        k.shape,
        count(points),
        if points == 1 { "" } else { "s" }
    )?;
    writeln!(
        f,
        "  traffic   : {}B   work: {}flop ({}flop arithmetic, {}flop transcendental; {:.2} flop/B)",
        si(k.work.bytes),
        si(k.work.flops()),
        si(k.work.arith),
        si(k.work.transcendental),
        k.work.flops() / k.work.bytes.max(1.0)
    )?;
    writeln!(f, "  written   : {}", k.written.join(", "))?;
    for o in &k.options {
        let mark = if o.device == k.device { "*" } else { " " };
        match &o.outcome {
            Ok(p) => {
                let copies = if p.copies == 0 {
                    "no copies".to_string()
                } else {
                    format!(
                        "copies {} ({} input{}, {}B)",
                        time(p.copy_s),
                        p.copies,
                        if p.copies == 1 { "" } else { "s" },
                        si(p.copy_bytes as f64)
                    )
                };
                let compile = if p.prepare_s > 0.0 {
                    format!(" + compile {} (not in the kernel cache)", time(p.prepare_s))
                } else {
                    String::new()
                };
                writeln!(
                    f,
                    "  {mark}{:<4}    : predicted {} = kernel {} [{}] + {copies}{compile}",
                    o.device.name(),
                    time(p.total_s),
                    time(p.kernel.seconds),
                    source(&p.kernel)
                )?;
            }
            Err(why) => writeln!(f, "  {mark}{:<4}    : unusable: {why}", o.device.name())?,
        }
    }
    let how = match k.choice {
        Choice::Fastest => "auto",
        Choice::OnlyUsable => "fallback",
        Choice::Forced => "forced",
    };
    writeln!(f, "  choice    : {} ({how}): {}", k.device, k.reason)?;
    let route = k.options.iter().find(|o| o.device == k.device);
    if let Some(r) = route.and_then(|o| o.route.as_deref()) {
        writeln!(f, "  runs as   : {r}")?;
    }
    if let Some(m) = k.measured_s {
        let pred = k.predicted().map(|p| p.kernel.seconds).unwrap_or(0.0);
        write!(
            f,
            "  measured  : kernel {} on {} (predicted {}",
            time(m),
            k.device,
            time(pred)
        )?;
        if pred > 0.0 {
            let call = k.measured_call_s().unwrap_or(m);
            if call > m {
                write!(f, "; with the launch {}", time(call))?;
            }
            write!(f, ", actual/predicted {:.2}", call / pred)?;
        }
        write!(f, ")")?;
        if let Some(c) = k.measured_copy_s.filter(|c| *c > 0.0) {
            write!(f, ", copies {}", time(c))?;
        }
        writeln!(f)?;
    }
    Ok(())
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.kernels.len();
        write!(
            f,
            "crossover plan: {n} kernel{}, policy {}, predicted {}",
            if n == 1 { "" } else { "s" },
            self.policy,
            time(self.predicted_s())
        )?;
        if let Some(m) = self.measured_s() {
            write!(f, ", measured {}", time(m))?;
        }
        writeln!(f)?;
        writeln!(f, "profile: {}", self.profile)?;
        if uncalibrated(&self.profile) && !self.kernels.is_empty() {
            writeln!(f, "{UNCALIBRATED}")?;
        }
        if self.kernels.is_empty() {
            writeln!(f, "  nothing to run: every value is already computed")?;
        }
        for (i, k) in self.kernels.iter().enumerate() {
            kernel(f, i, k)?;
        }
        Ok(())
    }
}
