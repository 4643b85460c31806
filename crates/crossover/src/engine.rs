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

use crate::array::Array;
use crate::cost::{profile_path, Profile};
use crate::cpu::CpuBackend;
use crate::device::{AtomicPolicy, Backend, DeviceKind, Policy};
use crate::error::{catch_panic, Error, Result};
use crate::exec;
use crate::fuse::fuse;
use crate::fuse_cache::{fuse_missed, lookup, Lookup};
use crate::graph::{resolve_ready_view, Graph};
use crate::plan::{self, Devices, Plan};
use crate::trace;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    /// Kernels run and copies made, per device (index of [`DeviceKind`]).
    kernels_run: [AtomicU64; 2],
    copies: [AtomicU64; 2],
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
        apply_cpu_settings(&profile);
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
            kernels_run: Default::default(),
            copies: Default::default(),
        }
    }

    /// Attaches a GPU backend.
    pub fn with_gpu(self, gpu: impl Backend + 'static) -> Engine {
        self.with_gpu_backend(Arc::new(gpu))
    }

    /// Attaches a shared GPU backend. When the profile has no numbers for
    /// the GPU yet, the backend's prior (from what the device reports) is
    /// added until `crossover calibrate` measures it.
    pub fn with_gpu_backend(mut self, gpu: Arc<dyn Backend>) -> Engine {
        if let Some((dev, links)) = gpu.prior() {
            let st = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
            if st.profile.device(DeviceKind::Gpu).is_none() {
                st.profile.set_device(dev);
                st.profile.links.retain(|l| l.from == l.to);
                st.profile.links.extend(links);
            }
        }
        self.gpu = Ok(gpu);
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
        let mut engine = match crate::gpu::discover::from_env() {
            Ok(gpu) => Engine::new(profile).with_gpu_backend(gpu),
            Err(why) => Engine::new(profile).with_unusable_gpu(why),
        };
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

    /// Kernels this engine has run on `device` so far.
    pub fn kernels_run(&self, device: DeviceKind) -> u64 {
        self.kernels_run[device.index()].load(Ordering::Relaxed)
    }

    /// Copies this engine has made onto `device` so far (inputs copied for
    /// kernels and explicit moves; copies back to the host on readout are
    /// made by the buffers themselves and are not counted here).
    pub fn copies_to(&self, device: DeviceKind) -> u64 {
        self.copies[device.index()].load(Ordering::Relaxed)
    }

    pub(crate) fn count_kernel(&self, device: DeviceKind) {
        self.kernels_run[device.index()].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_copy(&self, device: DeviceKind) {
        self.copies[device.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// The default policy of this engine.
    pub fn policy(&self) -> Policy {
        self.policy.get()
    }

    /// `policy`, else the innermost one pushed on this thread, else this
    /// engine's: what an evaluation runs under.
    pub(crate) fn policy_now(&self, policy: Option<Policy>) -> Policy {
        policy
            .or_else(thread_policy)
            .unwrap_or_else(|| self.policy())
    }

    /// Whether only the CPU can run anything under `policy` (no GPU, and
    /// no trace asking for each kernel's placement): an evaluation then
    /// skips planning.
    pub(crate) fn cpu_only(&self, policy: Policy) -> bool {
        self.gpu.is_err()
            && matches!(policy, Policy::Auto | Policy::Force(DeviceKind::Cpu))
            && !crate::trace::is_recording()
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
        apply_cpu_settings(&profile);
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

    pub(crate) fn backend(&self, d: DeviceKind) -> Result<&Arc<dyn Backend>> {
        self.backend_or_reason(d).map_err(|why| Error::Device {
            op: "run",
            device: d.name().to_string(),
            msg: why.to_string(),
        })
    }

    /// Places `kernels`; `words`: with each placement's reasons in words
    /// (a plan someone reads) or without (a plan only run).
    fn plan_kernels(
        &self,
        kernels: &[crate::fuse::Kernel],
        policy: Option<Policy>,
        words: bool,
    ) -> Result<Plan> {
        let policy = policy
            .or_else(thread_policy)
            .unwrap_or_else(|| self.policy());
        let devices = Devices {
            backends: [
                self.backend_or_reason(DeviceKind::Cpu),
                self.backend_or_reason(DeviceKind::Gpu),
            ],
        };
        let st = self.state();
        let kernels = plan::plan(kernels, &st.profile, &devices, policy, words)?;
        Ok(Plan {
            policy,
            kernels,
            profile: if words {
                self.note.clone()
            } else {
                String::new()
            },
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
            self.plan_kernels(&kernels, policy, true)
        })
    }

    /// Computes `outputs` now, placing each kernel by the plan; returns the
    /// plan with measured times. Results stay where they were computed
    /// until host data is asked for. `policy` overrides the engine's.
    ///
    /// # Errors
    /// A forced policy that cannot be honoured, or any error of a kernel.
    pub fn evaluate(&self, outputs: &[Array], policy: Option<Policy>) -> Result<Plan> {
        self.evaluate_planned(outputs, policy, true)
    }

    /// [`Engine::evaluate`] for callers that drop the plan (`Array::eval`,
    /// the Python front's reads): when nothing but the CPU could run a
    /// kernel, it skips the predictions, the plan's words and the history,
    /// which cost more than a small kernel itself (~4 us a call); with a
    /// GPU it still places each kernel, without the words.
    pub(crate) fn evaluate_only(&self, outputs: &[Array]) -> Result<()> {
        self.evaluate_planned(outputs, None, false).map(|_| ())
    }

    fn evaluate_planned(
        &self,
        outputs: &[Array],
        policy: Option<Policy>,
        detailed: bool,
    ) -> Result<Plan> {
        catch_panic("eval", || {
            let policy = self.policy_now(policy);
            let cpu_only = self.cpu_only(policy);
            if let ([one], true, false) = (outputs, cpu_only, detailed) {
                // One op waiting only for reductions (`s / n`, `total + s`):
                // the reductions first (their results end their kernels in
                // the fused path too), then the op on the direct path
                // instead of a kernel of its own.
                if let Some(reductions) = crate::direct::pending_reductions(one) {
                    self.evaluate_planned(&reductions, Some(policy), false)?;
                }
                if crate::direct::run_direct(self, one)? {
                    return ready_outputs(outputs, policy);
                }
            }
            let graph = Graph::collect(outputs);
            crate::limits::check_graph(&graph)?;
            let kernels = if graph.is_empty() {
                Vec::new()
            } else {
                match lookup(&graph) {
                    // The common repeated call: one kernel, only the CPU, no
                    // plan read. Bound from the cached template, no `Kernel`.
                    Lookup::Hit(cached) if cpu_only && !detailed && cached.is_single() => {
                        exec::run_cached_on_cpu(self, &graph, &cached)?;
                        drop(graph);
                        return ready_outputs(outputs, policy);
                    }
                    Lookup::Hit(cached) => cached.kernels(&graph),
                    Lookup::Miss(key) => fuse_missed(&graph, key)?,
                }
            };
            drop(graph);
            let plan = if cpu_only && !detailed {
                // Nobody reads this plan and only the CPU can run anything:
                // no predictions, timings or history. Without a GPU no
                // device copy of an external buffer can exist, so there is
                // nothing to forget either.
                exec::run_on_cpu(self, &kernels)?;
                Plan {
                    policy,
                    kernels: Vec::new(),
                    profile: String::new(),
                    ran: true,
                }
            } else {
                // The trace records each kernel's reason.
                let words = detailed || crate::trace::is_recording();
                let mut plan = self.plan_kernels(&kernels, Some(policy), words)?;
                let run = exec::run_plan(self, &kernels, &mut plan);
                // External host memory (a NumPy array) may change before the
                // next evaluation: its device copies are not trusted beyond
                // this one unless pinned by an explicit `to_device`.
                exec::forget_external_copies(&kernels);
                let measured = run?;
                plan.ran = true;
                if !measured.is_empty() && self.refine.load(Ordering::Relaxed) {
                    self.record(&measured);
                }
                plan
            };
            ready_outputs(outputs, policy)?;
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
        // Memory its owner may change (`Buffer::is_volatile`: a NumPy array
        // shared by `asarray(copy=False)`) has no copy worth keeping: each
        // evaluation copies what it reads of it then.
        if v.buffer.is_volatile() {
            return Ok(());
        }
        let r = v.buffer.residency();
        if !r.is_valid_on(device) {
            let from = r.locations().iter().next().unwrap_or(DeviceKind::Cpu);
            let start = trace::now();
            backend.copy_in(&v.buffer)?;
            self.count_copy(device);
            backend.finish()?;
            trace::copy_event(from, device, v.buffer.nbytes(), start, Some("to_device"));
        }
        // An explicit move vouches that the host data stays as it is.
        r.pin();
        Ok(())
    }

    /// A row-major array of `shape` and `dtype` over GPU memory another
    /// library allocated at `ptr` (a CuPy array, a PyTorch tensor), without
    /// a copy: it is resident on this engine's GPU, and `keep` (the
    /// lender's owner object) lives as long as the array's memory.
    ///
    /// # Errors
    /// No GPU, or one that cannot use other libraries' memory (OpenCL).
    pub fn import_gpu_memory(
        &self,
        ptr: u64,
        shape: &[usize],
        dtype: crate::dtype::DType,
        keep: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Result<Array> {
        let n = crate::shape::numel(shape);
        let bytes = n
            .checked_mul(dtype.size())
            .ok_or_else(|| Error::invalid("import", format!("{n} elements of {dtype} overflow")))?;
        let gpu = self
            .backend_or_reason(DeviceKind::Gpu)
            .map_err(|why| Error::Device {
                op: "import",
                device: "gpu".into(),
                msg: format!(
                    "CUDA memory of another library needs crossover's CUDA backend: {why}"
                ),
            })?;
        let mem = gpu.import_memory(ptr, bytes, keep)?;
        let buffer = crate::buffer::Buffer::device_only(dtype, n, mem)?;
        Array::from_buffer(buffer, crate::shape::Layout::contiguous(shape))
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

thread_local! {
    /// Engines made current on this thread by [`Engine::scope`], innermost last.
    static SCOPED_ENGINES: RefCell<Vec<Arc<Engine>>> = const { RefCell::new(Vec::new()) };
    /// Policies pushed on this thread ([`push_thread_policy`]), innermost last.
    static SCOPED_POLICIES: RefCell<Vec<Policy>> = const { RefCell::new(Vec::new()) };
}

impl Engine {
    /// Runs `f` with this engine as the current engine of this thread:
    /// [`Array::eval`], readouts and explain inside `f` use it instead of
    /// [`Engine::global`]. Test suites run one body on every engine this way.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use crossover::{Array, DeviceKind, Engine, Policy, Profile};
    /// use crossover::device::SyntheticGpu;
    /// let gpu = Arc::new(Engine::new(Profile::synthetic()).with_gpu(SyntheticGpu::new())
    ///     .with_policy(Policy::Force(DeviceKind::Gpu)));
    /// let y = Array::from_vec(vec![1.0f32, 2.0], &[2])?.mul(3.0)?;
    /// let v = gpu.scope(|| y.to_vec::<f32>())?;
    /// assert_eq!(v, vec![3.0, 6.0]);
    /// # Ok::<(), crossover::Error>(())
    /// ```
    pub fn scope<R>(self: &Arc<Self>, f: impl FnOnce() -> R) -> R {
        struct Pop;
        impl Drop for Pop {
            fn drop(&mut self) {
                SCOPED_ENGINES.with(|s| s.borrow_mut().pop());
            }
        }
        SCOPED_ENGINES.with(|s| s.borrow_mut().push(Arc::clone(self)));
        let _pop = Pop;
        f()
    }
}

/// Checks that evaluation left every output computed (views of computed
/// bases made ready); the plan of a run nobody reads.
fn ready_outputs(outputs: &[Array], policy: Policy) -> Result<Plan> {
    for o in outputs {
        if !resolve_ready_view(o) {
            return Err(Error::internal("eval", format!("{o:?} was not computed")));
        }
    }
    Ok(Plan {
        policy,
        kernels: Vec::new(),
        profile: String::new(),
        ran: true,
    })
}

/// A calibrated profile's CPU settings (thread-split threshold, where
/// matmuls go to the BLAS), for the process: the CPU backend's pool and
/// the BLAS are the process's. Values the profile lacks stay as they are.
fn apply_cpu_settings(profile: &Profile) {
    let Some(cpu) = profile.device(DeviceKind::Cpu) else {
        return;
    };
    if let Some(w) = cpu.parallel_min_work {
        crate::cpu::set_parallel_min_work(Some(w));
    }
    for (name, &mnk) in &cpu.blas_min_mnk {
        if let Some(dtype) = crate::dtype::DType::parse(name) {
            crate::linalg::set_blas_min_mnk(dtype, Some(mnk));
        }
    }
}

/// Runs `f` with the engine current on this thread ([`Engine::scope`], else
/// the global one).
pub fn with_current<R>(f: impl FnOnce(&Engine) -> R) -> R {
    let scoped = SCOPED_ENGINES.with(|s| s.borrow().last().cloned());
    match scoped {
        Some(e) => f(&e),
        None => f(Engine::global()),
    }
}

/// Makes `policy` the default of this thread's evaluations (above the
/// engine's own) until [`pop_thread_policies`] truncates it away; returns
/// the depth to truncate to. Python's `with crossover.device(...)` uses it.
pub fn push_thread_policy(policy: Policy) -> usize {
    SCOPED_POLICIES.with(|s| {
        let mut s = s.borrow_mut();
        s.push(policy);
        s.len() - 1
    })
}

/// Drops this thread's pushed policies down to `depth` entries.
pub fn pop_thread_policies(depth: usize) {
    SCOPED_POLICIES.with(|s| s.borrow_mut().truncate(depth));
}

/// The innermost policy pushed on this thread, if any.
pub fn thread_policy() -> Option<Policy> {
    SCOPED_POLICIES.with(|s| s.borrow().last().copied())
}

/// The policy evaluations on this thread use by default: the innermost
/// pushed one, else the current engine's.
pub fn effective_policy() -> Policy {
    thread_policy().unwrap_or_else(|| with_current(|e| e.policy()))
}

/// Sets the process-wide policy (`auto`, or forced `cpu`/`gpu`).
pub fn set_policy(policy: Policy) {
    Engine::global().set_policy(policy)
}

/// The process-wide policy.
pub fn policy() -> Policy {
    Engine::global().policy()
}
