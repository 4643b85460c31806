//! The [`Engine`]: the devices, the policy and the machine profile that
//! evaluation plans with, and the executor that walks a plan.
//!
//! Most code uses the process-wide engine ([`Engine::global`]) through
//! [`Array::eval`](crate::Array::eval) and friends. It finds the devices,
//! reads `CROSSOVER_DEVICE` (policy), `CROSSOVER_PROFILE` or the cached
//! profile of this machine, and `CROSSOVER_TRACE`. Tests and tools build
//! their own engines, e.g. with a [`SyntheticGpu`](crate::device::SyntheticGpu)
//! and [`Profile::synthetic`]:
//!
//! ```
//! use crossover::{Array, DeviceKind, Engine, Policy, Profile};
//! use crossover::device::SyntheticGpu;
//! let engine = Engine::new(Profile::synthetic()).with_gpu(SyntheticGpu::new());
//! let a = Array::from_vec(vec![1.0f32; 100], &[100])?;
//! let y = a.mul(&a)?.add(1.0)?;
//! let plan = engine.plan(&[y.clone()], None)?;
//! assert_eq!(plan.devices(), vec![DeviceKind::Cpu]); // small: stays on the CPU
//! engine.evaluate(&[y.clone()], Some(Policy::Force(DeviceKind::Gpu)))?;
//! assert_eq!(y.to_vec::<f32>()?[0], 2.0);
//! # Ok::<(), crossover::Error>(())
//! ```

use crate::array::{Array, Value};
use crate::cost::{profile_path, History, Profile};
use crate::device::{self, AtomicPolicy, Backend, CpuBackend, DeviceKind, Policy};
use crate::error::{catch_panic, Error, Result};
use crate::fuse::fuse;
use crate::graph::{resolve_ready_view, Graph};
use crate::plan::{self, Devices, Plan};
use crate::trace;
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Refinements are written back at most this often (and at exit).
const SAVE_EVERY: Duration = Duration::from_secs(60);

/// A device as the engine sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceStatus {
    pub device: DeviceKind,
    /// The backend's name, or `None` when there is none.
    pub name: Option<String>,
    /// `Err(reason)` when no kernel can run there.
    pub usable: std::result::Result<(), String>,
}

struct State {
    profile: Profile,
    dirty: bool,
    last_save: Instant,
}

/// Devices, policy and profile; plans and runs evaluations.
pub struct Engine {
    cpu: Arc<dyn Backend>,
    gpu: std::result::Result<Arc<dyn Backend>, String>,
    policy: AtomicPolicy,
    state: Mutex<State>,
    /// Where refinements are saved (`None`: kept in memory).
    store: Option<PathBuf>,
    /// How the profile was obtained, for explain and info.
    note: String,
    refine: AtomicBool,
    saving: Arc<AtomicBool>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("policy", &self.policy())
            .field("gpu", &self.gpu.as_ref().map(|g| g.name()))
            .field("profile", &self.note)
            .finish()
    }
}

static GLOBAL: OnceLock<Engine> = OnceLock::new();

extern "C" fn at_exit() {
    // No panic may unwind into C.
    let _ = std::panic::catch_unwind(|| {
        if let Some(e) = GLOBAL.get() {
            if let Err(err) = e.save_if_dirty() {
                eprintln!("crossover: {err}");
            }
        }
        trace::flush_env();
    });
}

impl Engine {
    /// An engine with only the CPU, planning with `profile`, policy `auto`,
    /// refinements kept in memory.
    pub fn new(profile: Profile) -> Engine {
        let note = profile.source.clone();
        Engine {
            cpu: Arc::new(CpuBackend),
            gpu: Err("no GPU attached to this engine".to_string()),
            policy: AtomicPolicy::new(Policy::Auto),
            state: Mutex::new(State {
                profile,
                dirty: false,
                last_save: Instant::now(),
            }),
            store: None,
            note,
            refine: AtomicBool::new(true),
            saving: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Attaches a GPU backend.
    pub fn with_gpu(mut self, gpu: impl Backend + 'static) -> Engine {
        self.gpu = Ok(Arc::new(gpu));
        self
    }

    /// Marks the GPU unusable for `reason` (what `info` and explain say).
    pub fn with_unusable_gpu(mut self, reason: impl Into<String>) -> Engine {
        self.gpu = Err(reason.into());
        self
    }

    /// Sets the engine's policy (builder form of [`Engine::set_policy`]).
    pub fn with_policy(self, policy: Policy) -> Engine {
        self.set_policy(policy);
        self
    }

    /// Saves refinements to `path` (every minute and at [`Engine::save_profile`]).
    pub fn with_store(mut self, path: PathBuf) -> Engine {
        self.store = Some(path);
        self
    }

    /// The process-wide engine: devices found on this machine, policy from
    /// `CROSSOVER_DEVICE`, profile from `CROSSOVER_PROFILE` or the user
    /// cache directory (defaults when missing, damaged or stale; the last
    /// two are reported on stderr once), tracing if `CROSSOVER_TRACE` is set.
    pub fn global() -> &'static Engine {
        GLOBAL.get_or_init(Engine::from_environment)
    }

    fn from_environment() -> Engine {
        let policy = Policy::from_env().unwrap_or_else(|e| {
            eprintln!("crossover: warning: CROSSOVER_DEVICE: {e}; using auto");
            None
        });
        let (profile, note, store) = match profile_path() {
            None => (
                Profile::defaults(),
                "defaults (no cache directory; set CROSSOVER_PROFILE)".to_string(),
                None,
            ),
            Some(p) if !p.exists() => {
                let mut prof = Profile::defaults();
                prof.source = format!(
                    "defaults (no profile at {} yet; run `crossover calibrate`)",
                    p.display()
                );
                let note = prof.source.clone();
                (prof, note, None)
            }
            Some(p) => match Profile::load(&p, false) {
                Ok(prof) => {
                    let note = format!("{} ({})", prof.source, p.display());
                    (prof, note, Some(p))
                }
                Err(e) => {
                    eprintln!("crossover: warning: {e}");
                    let mut prof = Profile::defaults();
                    prof.source = format!("defaults ({e})");
                    let note = prof.source.clone();
                    (prof, note, None)
                }
            },
        };
        let mut engine = Engine::new(profile).with_unusable_gpu(device::gpu_unavailable_reason());
        engine.note = note;
        engine.store = store;
        if let Some(p) = policy {
            engine.set_policy(p);
        }
        if trace::env_path().is_some() {
            trace::start();
        }
        // SAFETY: `at_exit` is a plain extern "C" function with no
        // arguments that catches every panic; registering it has no other
        // precondition. This runs once (inside the OnceLock initialiser).
        unsafe {
            libc::atexit(at_exit);
        }
        engine
    }

    /// The default policy of this engine.
    pub fn policy(&self) -> Policy {
        self.policy.get()
    }

    /// Changes the default policy.
    pub fn set_policy(&self, policy: Policy) {
        self.policy.set(policy)
    }

    /// Whether measured runs refine the profile (on by default).
    pub fn set_refine(&self, on: bool) {
        self.refine.store(on, Ordering::Relaxed)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy of the profile in use (with its history).
    pub fn profile(&self) -> Profile {
        self.state().profile.clone()
    }

    /// Replaces the profile (e.g. after calibration).
    pub fn set_profile(&self, profile: Profile) {
        let mut st = self.state();
        st.profile = profile;
        st.dirty = false;
    }

    /// How the profile was obtained (source and file).
    pub fn profile_note(&self) -> &str {
        &self.note
    }

    /// Where refinements are saved, if anywhere.
    pub fn store(&self) -> Option<&std::path::Path> {
        self.store.as_deref()
    }

    /// Every device kind, with its backend or why it has none.
    pub fn devices(&self) -> Vec<DeviceStatus> {
        DeviceKind::ALL
            .iter()
            .map(|&d| match self.backend_or_reason(d) {
                Ok(b) => DeviceStatus {
                    device: d,
                    name: Some(b.name()),
                    usable: Ok(()),
                },
                Err(why) => DeviceStatus {
                    device: d,
                    name: None,
                    usable: Err(why.to_string()),
                },
            })
            .collect()
    }

    fn backend_or_reason(&self, d: DeviceKind) -> std::result::Result<&Arc<dyn Backend>, &str> {
        match d {
            DeviceKind::Cpu => Ok(&self.cpu),
            DeviceKind::Gpu => self.gpu.as_ref().map_err(|s| s.as_str()),
        }
    }

    fn backend(&self, d: DeviceKind) -> Result<&Arc<dyn Backend>> {
        self.backend_or_reason(d).map_err(|why| Error::Device {
            op: "run",
            device: d.name().to_string(),
            msg: why.to_string(),
        })
    }

    fn plan_kernels(
        &self,
        kernels: &[crate::fuse::Kernel],
        policy: Option<Policy>,
    ) -> Result<Plan> {
        let policy = policy.unwrap_or_else(|| self.policy());
        let devices = Devices {
            backends: [
                self.backend_or_reason(DeviceKind::Cpu),
                self.backend_or_reason(DeviceKind::Gpu),
            ],
        };
        let st = self.state();
        let kernels = plan::plan(kernels, &st.profile, &devices, policy)?;
        Ok(Plan {
            policy,
            kernels,
            profile: self.note.clone(),
            ran: false,
        })
    }

    /// Where the kernels computing `outputs` would run and why, without
    /// running anything. `policy` overrides the engine's for this call.
    ///
    /// # Errors
    /// A forced policy that some kernel cannot honour ([`Error::Device`]).
    pub fn plan(&self, outputs: &[Array], policy: Option<Policy>) -> Result<Plan> {
        catch_panic("plan", || {
            let graph = Graph::collect(outputs);
            let kernels = if graph.is_empty() {
                Vec::new()
            } else {
                fuse(&graph)?
            };
            self.plan_kernels(&kernels, policy)
        })
    }

    /// Computes `outputs` now, placing each kernel by the plan; returns the
    /// plan with measured times. Results stay where they were computed
    /// until host data is asked for. `policy` overrides the engine's.
    ///
    /// # Errors
    /// A forced policy that cannot be honoured, or any error of a kernel.
    pub fn evaluate(&self, outputs: &[Array], policy: Option<Policy>) -> Result<Plan> {
        catch_panic("eval", || {
            let graph = Graph::collect(outputs);
            crate::limits::check_graph(&graph)?;
            let kernels = if graph.is_empty() {
                Vec::new()
            } else {
                fuse(&graph)?
            };
            let mut plan = self.plan_kernels(&kernels, policy)?;
            drop(graph);
            let mut measured = Vec::new();
            for (k, pk) in kernels.iter().zip(plan.kernels.iter_mut()) {
                crate::interrupt::check("eval")?;
                let backend = self.backend(pk.device)?;
                let mut copy_s = 0.0;
                for a in plan::kernel_inputs(k) {
                    let v = input_value(a)?;
                    let r = v.buffer.residency();
                    if !r.is_valid_on(pk.device) {
                        let from = r.locations().iter().next().unwrap_or(DeviceKind::Cpu);
                        let start = trace::now();
                        backend.copy_in(&v.buffer)?;
                        copy_s += start.elapsed().as_secs_f64();
                        trace::copy_event(
                            from,
                            pk.device,
                            v.buffer.nbytes(),
                            start,
                            Some(&pk.name),
                        );
                    }
                }
                let start = trace::now();
                let contention = crate::cost::Contention::start();
                let values = backend.run_kernel(k)?;
                let seconds = start.elapsed().as_secs_f64();
                for (node, v) in k.outputs.iter().zip(values) {
                    node.set_value(v);
                }
                let pred = pk.predicted().map(|p| (p.kernel.model_s, p.kernel.seconds));
                if trace::is_recording() {
                    trace::kernel_event(
                        pk.device,
                        &pk.name,
                        start,
                        vec![
                            ("predicted_us", json!(pred.map_or(0.0, |p| p.1 * 1e6))),
                            ("bytes", json!(pk.work.bytes)),
                            ("flops", json!(pk.work.flops())),
                            ("reason", json!(pk.reason)),
                        ],
                    );
                }
                pk.measured_s = Some(seconds);
                pk.measured_copy_s = Some(copy_s);
                // Times taken while competing for the cores teach nothing.
                let learn = backend.measures() && !contention.contended(seconds);
                if let Some((model_s, _)) = pred.filter(|_| learn) {
                    measured.push((
                        History::key(pk.device, &pk.key, pk.work.points),
                        model_s,
                        seconds,
                    ));
                }
            }
            plan.ran = true;
            for o in outputs {
                if !resolve_ready_view(o) {
                    return Err(Error::internal("eval", format!("{o:?} was not computed")));
                }
            }
            if !measured.is_empty() && self.refine.load(Ordering::Relaxed) {
                self.record(&measured);
            }
            Ok(plan)
        })
    }

    /// Like [`Engine::plan`] after [`Engine::evaluate`] when `run`: the plan,
    /// with measured times if it ran.
    pub fn explain(&self, outputs: &[Array], run: bool) -> Result<Plan> {
        if run {
            self.evaluate(outputs, None)
        } else {
            self.plan(outputs, None)
        }
    }

    /// Computes `a` and makes its value valid on `device` too (a copy when
    /// it is not there yet).
    ///
    /// # Errors
    /// No usable backend for `device`, or an evaluation error.
    pub fn to_device(&self, a: &Array, device: DeviceKind) -> Result<()> {
        let backend = self.backend(device)?;
        self.evaluate(std::slice::from_ref(a), None)?;
        let v = a
            .ready_value()
            .ok_or_else(|| Error::internal("to_device", "not ready after evaluation"))?;
        let r = v.buffer.residency();
        if !r.is_valid_on(device) {
            let from = r.locations().iter().next().unwrap_or(DeviceKind::Cpu);
            let start = trace::now();
            backend.copy_in(&v.buffer)?;
            trace::copy_event(from, device, v.buffer.nbytes(), start, Some("to_device"));
        }
        Ok(())
    }

    fn record(&self, measured: &[(String, f64, f64)]) {
        let mut st = self.state();
        for (key, model, secs) in measured {
            st.profile.history.record(key, *model, *secs);
        }
        st.dirty = true;
        if self.store.is_some()
            && st.last_save.elapsed() >= SAVE_EVERY
            && !self.saving.swap(true, Ordering::AcqRel)
        {
            st.last_save = Instant::now();
            st.dirty = false;
            let profile = st.profile.clone();
            let path = self.store.clone();
            let saving = Arc::clone(&self.saving);
            drop(st);
            // Off the hot path: a short-lived thread writes the file.
            let spawned = std::thread::Builder::new()
                .name("crossover-profile-save".into())
                .spawn(move || {
                    if let Some(p) = path {
                        if let Err(e) = profile.save(&p) {
                            eprintln!("crossover: {e}");
                        }
                    }
                    saving.store(false, Ordering::Release);
                });
            if spawned.is_err() {
                self.saving.store(false, Ordering::Release);
            }
        }
    }

    fn save_if_dirty(&self) -> Result<Option<PathBuf>> {
        let st = self.state();
        if !st.dirty {
            return Ok(None);
        }
        drop(st);
        self.save_profile()
    }

    /// Writes the profile (with its history) to the engine's store now.
    /// Returns the path, or `None` when the engine has no store.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be written.
    pub fn save_profile(&self) -> Result<Option<PathBuf>> {
        let Some(path) = &self.store else {
            return Ok(None);
        };
        let mut st = self.state();
        st.profile.save(path)?;
        st.dirty = false;
        st.last_save = Instant::now();
        Ok(Some(path.clone()))
    }
}

/// The value of a kernel input: ready, or a view of a ready node.
fn input_value(a: &Array) -> Result<Value> {
    if !a.is_ready() {
        resolve_ready_view(a);
    }
    a.ready_value()
        .ok_or_else(|| Error::internal("eval", format!("input {a:?} is not computed")))
}

/// Sets the process-wide policy (`auto`, or forced `cpu`/`gpu`).
pub fn set_policy(policy: Policy) {
    Engine::global().set_policy(policy)
}

/// The process-wide policy.
pub fn policy() -> Policy {
    Engine::global().policy()
}
