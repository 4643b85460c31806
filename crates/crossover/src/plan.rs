//! Placement: kernels + profile + where each input lives -> [`Plan`].
//!
//! Kernels are visited in execution (topological) order. For each kernel
//! and each device that can run it, the planner predicts
//! `kernel time + copies of the inputs not valid on that device`, and picks
//! the smallest completion time (ties go to the CPU). It then records where
//! the kernel's outputs will live (only on the chosen device) and that the
//! copied inputs are now valid on that device too, so a chain of kernels
//! keeps its intermediates where they were made. A device is never chosen
//! when it cannot run the kernel (no backend, unsupported op or dtype, not
//! enough memory); the reason is kept for explain. Under a forced policy a
//! kernel the forced device cannot run is an [`Error::Device`].

use crate::array::Array;
use crate::cost::{KernelEstimate, Profile, Work};
use crate::device::{Backend, DeviceKind, Locations, Policy};
use crate::error::{Error, Result};
use crate::fuse::{Kernel, KernelBody, KernelSource};
use std::collections::HashMap;
use std::sync::Arc;

/// A device's prediction for one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// The kernel itself.
    pub kernel: KernelEstimate,
    /// Inputs that must be copied to this device first.
    pub copies: usize,
    /// Bytes those copies move.
    pub copy_bytes: usize,
    /// Predicted seconds of those copies.
    pub copy_s: f64,
    /// Predicted seconds of preparing the kernel first (compiling a GPU
    /// kernel that is not in the cache yet).
    pub prepare_s: f64,
    /// `kernel.seconds + copy_s + prepare_s`.
    pub total_s: f64,
}

/// One device considered for one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceOption {
    pub device: DeviceKind,
    /// The prediction, or why the device cannot run the kernel.
    pub outcome: std::result::Result<Prediction, String>,
    /// How the device runs a library op (its vendor library or the core's
    /// kernel), when it says.
    pub route: Option<String>,
}

/// How the device was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Smallest predicted completion time among usable devices.
    Fastest,
    /// The only usable device (the others' reasons are in the options).
    OnlyUsable,
    /// The policy forces this device.
    Forced,
}

/// The placement of one kernel (and, after a run, what it took).
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedKernel {
    /// Short name, e.g. `fused(mul,sin,cos,add,add)`.
    pub name: String,
    /// Structural key.
    pub key: String,
    /// Ops fused into the kernel.
    pub fused: Vec<&'static str>,
    /// Why each output is written to memory.
    pub written: Vec<&'static str>,
    pub shape: Vec<usize>,
    pub work: Work,
    /// Every device, usable or not.
    pub options: Vec<DeviceOption>,
    /// The chosen device.
    pub device: DeviceKind,
    pub choice: Choice,
    /// Why, in words (names the predicted times).
    pub reason: String,
    /// Measured kernel seconds (after a run).
    pub measured_s: Option<f64>,
    /// Measured seconds of the copies made for it (after a run).
    pub measured_copy_s: Option<f64>,
}

impl PlannedKernel {
    /// The chosen device's prediction.
    pub fn predicted(&self) -> Option<&Prediction> {
        self.option(self.device)
    }

    /// The prediction for `device`, if it can run the kernel.
    pub fn option(&self, device: DeviceKind) -> Option<&Prediction> {
        self.options
            .iter()
            .find(|o| o.device == device)
            .and_then(|o| o.outcome.as_ref().ok())
    }

    /// The measured time as the planner compares devices (after a run):
    /// on a GPU, the kernel's device events plus its predicted launch time.
    /// Events leave out the host's launch, wait and read-back that the CPU's
    /// wall-clock time includes, so learning from events alone made a small
    /// GPU kernel look cheaper than its call (an H200's 90,000-element sum:
    /// events 12.3 us, the call 33 us, the CPU 22 us; the planner chose the
    /// GPU, 2026-11-28). A host-timed GPU run (a sparse product) counts the
    /// launch twice, which is small beside its time.
    pub fn measured_call_s(&self) -> Option<f64> {
        let m = self.measured_s?;
        Some(match self.device {
            DeviceKind::Cpu => m,
            DeviceKind::Gpu => m + self.predicted().map_or(0.0, |p| p.kernel.launch_s),
        })
    }
}

/// Where every kernel of one evaluation runs, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub policy: Policy,
    pub kernels: Vec<PlannedKernel>,
    /// Where the numbers came from (the profile's `source` and file).
    pub profile: String,
    /// Whether the plan was executed (measured times are filled).
    pub ran: bool,
}

impl Plan {
    /// Sum of the chosen predictions, copies included.
    pub fn predicted_s(&self) -> f64 {
        self.kernels
            .iter()
            .filter_map(|k| k.predicted().map(|p| p.total_s))
            .sum()
    }

    /// Sum of measured kernel and copy times (after a run).
    pub fn measured_s(&self) -> Option<f64> {
        self.ran.then(|| {
            self.kernels
                .iter()
                .map(|k| k.measured_s.unwrap_or(0.0) + k.measured_copy_s.unwrap_or(0.0))
                .sum()
        })
    }

    /// The chosen devices, in kernel order.
    pub fn devices(&self) -> Vec<DeviceKind> {
        self.kernels.iter().map(|k| k.device).collect()
    }
}

/// What the planner may use.
pub(crate) struct Devices<'a> {
    /// Backend per [`DeviceKind::index`], or why there is none.
    pub backends: [std::result::Result<&'a Arc<dyn Backend>, &'a str>; 2],
}

/// An input of a kernel: identity, size, where it is valid.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum InputId {
    /// A ready buffer (its address).
    Buffer(usize),
    /// A node materialised by an earlier kernel of this plan.
    Node(u64),
}

/// The arrays a kernel reads.
pub(crate) fn kernel_inputs(k: &Kernel) -> Vec<&Array> {
    match &k.body {
        KernelBody::Fused { sources, .. } => sources
            .iter()
            .filter_map(|s| match s {
                KernelSource::Buffer { array, .. } => Some(array),
                KernelSource::Index { .. } => None,
            })
            .collect(),
        KernelBody::Library { inputs, .. } => inputs.iter().collect(),
    }
}

/// Residency as the plan unfolds.
#[derive(Default)]
struct Sim {
    locs: HashMap<InputId, Locations>,
}

impl Sim {
    /// Identity, bytes and locations of an input array.
    fn input(&self, a: &Array) -> (InputId, usize, Locations) {
        let mut cur = a.clone();
        // Follow pending views down to the node an earlier kernel writes.
        for _ in 0..64 {
            if let Some(v) = cur.ready_value() {
                let id = InputId::Buffer(Arc::as_ptr(&v.buffer) as *const u8 as usize);
                let locs = self
                    .locs
                    .get(&id)
                    .copied()
                    .unwrap_or_else(|| v.buffer.residency().locations());
                return (id, v.buffer.nbytes(), locs);
            }
            let id = InputId::Node(cur.node.id);
            if let Some(l) = self.locs.get(&id) {
                return (id, cur.numel() * cur.dtype().size(), *l);
            }
            match cur.pending_inputs().and_then(|i| i.into_iter().next()) {
                Some(base) => cur = base,
                None => break,
            }
        }
        (
            InputId::Node(a.node.id),
            a.numel() * a.dtype().size(),
            Locations::HOST,
        )
    }
}

fn ms(s: f64) -> String {
    crate::explain::time(s)
}

/// Places `kernels` (in execution order) under `policy`.
pub(crate) fn plan(
    kernels: &[Kernel],
    profile: &Profile,
    devices: &Devices<'_>,
    policy: Policy,
    words: bool,
) -> Result<Vec<PlannedKernel>> {
    let mut sim = Sim::default();
    let mut out = Vec::with_capacity(kernels.len());
    for k in kernels {
        let work = Work::of(k);
        let mut inputs: Vec<(InputId, usize, Locations)> = Vec::new();
        for a in kernel_inputs(k) {
            let i = sim.input(a);
            if !inputs.iter().any(|x| x.0 == i.0) {
                inputs.push(i);
            }
        }
        let out_bytes: usize = k.outputs.iter().map(|o| o.numel() * o.dtype().size()).sum();
        let in_bytes: usize = inputs.iter().map(|i| i.1).sum();
        let mut options: Vec<DeviceOption> = Vec::with_capacity(DeviceKind::ALL.len());
        for &d in &DeviceKind::ALL {
            let outcome = match options.first().map(|o| &o.outcome) {
                // Under `auto`, a device that would first need copies
                // taking longer than the whole CPU run cannot be chosen
                // (its total is at least those copies; ties go to the
                // CPU). When nobody reads the words, its prediction (the
                // backend's checks, launch plan and compile state, about
                // half of a small call with a GPU present) is skipped.
                Some(Ok(cpu))
                    if !words
                        && matches!(policy, Policy::Auto)
                        && copies_to(d, &inputs, profile).2 >= cpu.total_s =>
                {
                    Err(OUTPACED.to_string())
                }
                _ => predict_on(d, k, &work, &inputs, in_bytes + out_bytes, profile, devices),
            };
            options.push(DeviceOption {
                device: d,
                outcome,
                route: match (&k.body, &devices.backends[d.index()]) {
                    (KernelBody::Library { call, .. }, Ok(b)) => b.library_route(&call.op),
                    _ => None,
                },
            });
        }
        let usable: Vec<(DeviceKind, &Prediction)> = options
            .iter()
            .filter_map(|o| o.outcome.as_ref().ok().map(|p| (o.device, p)))
            .collect();
        let (device, choice) = match policy {
            Policy::Force(d) => match &options[d.index()].outcome {
                Ok(_) => (d, Choice::Forced),
                Err(why) => {
                    return Err(Error::Device {
                        op: "place",
                        device: d.name().to_string(),
                        // User-level words: the ops, not the kernel's name.
                        msg: format!(
                            "the device policy is '{d}' (CROSSOVER_DEVICE or set_policy), but \
                             the {d} cannot run {}: {why}; use the policy 'auto' or 'cpu'",
                            if k.fused.is_empty() {
                                "this work".to_string()
                            } else {
                                k.fused.join(", ")
                            }
                        ),
                    });
                }
            },
            Policy::Prefer(d) => match &options[d.index()].outcome {
                Ok(_) => (d, Choice::Forced),
                Err(_) => choose(&usable)?,
            },
            Policy::Auto => choose(&usable)?,
        };
        // The words cost more than a small kernel; a caller that drops the
        // plan (`words` false) does not pay for them.
        let reason = if words {
            reason_for(policy, device, choice, &options, &usable)
        } else {
            String::new()
        };
        // Update residency: copied inputs are now valid on `device` too;
        // outputs live only there.
        for (id, _, locs) in &inputs {
            sim.locs.insert(*id, locs.with(device));
        }
        for o in &k.outputs {
            sim.locs
                .insert(InputId::Node(o.node.id), Locations::only(device));
        }
        out.push(PlannedKernel {
            name: k.name(),
            key: work.key.clone(),
            fused: k.fused.clone(),
            written: if words {
                k.reasons.iter().map(|r| r.describe()).collect()
            } else {
                Vec::new()
            },
            shape: k.shape.clone(),
            work,
            options,
            device,
            choice,
            reason,
            measured_s: None,
            measured_copy_s: None,
        });
    }
    Ok(out)
}

/// The usable device with the fastest predicted completion.
fn choose(usable: &[(DeviceKind, &Prediction)]) -> Result<(DeviceKind, Choice)> {
    let Some(&(best, _)) = usable
        .iter()
        .min_by(|a, b| a.1.total_s.total_cmp(&b.1.total_s))
    else {
        return Err(Error::Device {
            op: "place",
            device: "any".into(),
            msg: "no device can run this kernel".into(),
        });
    };
    let choice = if usable.len() == 1 {
        Choice::OnlyUsable
    } else {
        Choice::Fastest
    };
    Ok((best, choice))
}

/// Why `device` was chosen, in words (`explain`'s reason).
fn reason_for(
    policy: Policy,
    device: DeviceKind,
    choice: Choice,
    options: &[DeviceOption],
    usable: &[(DeviceKind, &Prediction)],
) -> String {
    let predicted = |d: DeviceKind| {
        options[d.index()]
            .outcome
            .as_ref()
            .map_or(String::new(), |p| ms(p.total_s))
    };
    match (policy, &options[device.index()].outcome) {
        (Policy::Force(d), _) => format!("forced by policy '{d}' (predicted {})", predicted(d)),
        (Policy::Prefer(d), _) if d == device => format!(
            "preferred by policy '{}' (predicted {})",
            policy.name(),
            predicted(d)
        ),
        (Policy::Prefer(d), _) => {
            let why = options[d.index()].outcome.as_ref().err().cloned();
            format!(
                "{d} cannot run it ({}); {}",
                why.unwrap_or_default(),
                choice_words(device, choice, options, usable)
            )
        }
        (Policy::Auto, _) => choice_words(device, choice, options, usable),
    }
}

/// The words of an automatic choice of `best` among `usable`.
fn choice_words(
    best: DeviceKind,
    choice: Choice,
    options: &[DeviceOption],
    usable: &[(DeviceKind, &Prediction)],
) -> String {
    let Some(&(_, bp)) = usable.iter().find(|u| u.0 == best) else {
        return String::new();
    };
    if choice == Choice::OnlyUsable {
        let others: Vec<String> = options
            .iter()
            .filter_map(|o| {
                o.outcome
                    .as_ref()
                    .err()
                    .map(|e| format!("{}: {e}", o.device))
            })
            .collect();
        return format!(
            "{best} is the only usable device (predicted {}); {}",
            ms(bp.total_s),
            others.join("; ")
        );
    }
    let mut parts = vec![format!("{best} {}", ms(bp.total_s))];
    let mut notes = Vec::new();
    for &(d, p) in usable.iter().filter(|u| u.0 != best) {
        parts.push(format!("{d} {}", ms(p.total_s)));
        if p.kernel.seconds < bp.kernel.seconds && p.copy_s > 0.0 {
            notes.push(format!(
                "{d} computes faster ({}) but needs {} of copies ({}B)",
                ms(p.kernel.seconds),
                ms(p.copy_s),
                crate::explain::si(p.copy_bytes as f64)
            ));
        }
    }
    if bp.copies == 0 && best != DeviceKind::Cpu {
        notes.push(format!("inputs already on {best}"));
    } else if bp.copy_s > 0.0 {
        notes.push(format!("includes {} of copies to {best}", ms(bp.copy_s)));
    }
    let mut reason = format!("fastest predicted completion: {}", parts.join(" vs "));
    if !notes.is_empty() {
        reason += &format!(" ({})", notes.join("; "));
    }
    reason
}

/// Why a device was not predicted for a plan nobody reads (see [`plan`]).
const OUTPACED: &str = "not predicted: the CPU finishes before the copies to this device would";

/// The copies `inputs` need to be valid on `d`: how many, their bytes and
/// predicted seconds (each from wherever it is valid; the host when it is
/// anywhere).
fn copies_to(
    d: DeviceKind,
    inputs: &[(InputId, usize, Locations)],
    profile: &Profile,
) -> (usize, usize, f64) {
    let (mut copies, mut copy_bytes, mut copy_s) = (0, 0, 0.0);
    for (_, bytes, locs) in inputs {
        if !locs.contains(d) {
            let from = locs.iter().next().unwrap_or(DeviceKind::Cpu);
            copies += 1;
            copy_bytes += bytes;
            copy_s += profile.predict_copy(from, d, *bytes);
        }
    }
    (copies, copy_bytes, copy_s)
}

fn predict_on(
    d: DeviceKind,
    k: &Kernel,
    work: &Work,
    inputs: &[(InputId, usize, Locations)],
    working_set: usize,
    profile: &Profile,
    devices: &Devices<'_>,
) -> std::result::Result<Prediction, String> {
    let backend = devices.backends[d.index()].map_err(|why| why.to_string())?;
    backend.check(k)?;
    if let Some(mem) = backend.memory_bytes() {
        let held = backend.memory_held();
        if working_set as u64 + held > mem {
            return Err(format!(
                "needs {}B of device memory for its inputs and outputs, and {}B of the device's {}B are in use",
                crate::explain::si(working_set as f64),
                crate::explain::si(held as f64),
                crate::explain::si(mem as f64)
            ));
        }
    }
    let prepare_s = backend
        .preparation(k)
        .seconds(profile.device_or_default(d).compile_s);
    let kernel = profile.predict_kernel(d, work);
    let (copies, copy_bytes, copy_s) = copies_to(d, inputs, profile);
    Ok(Prediction {
        total_s: kernel.seconds + copy_s + prepare_s,
        kernel,
        copies,
        copy_bytes,
        copy_s,
        prepare_s,
    })
}
