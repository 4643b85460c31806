//! Lowering, step 3: walk a plan. For each kernel, bind its inputs to
//! buffers ([`bind`]), copy those not valid on its device, run it on that
//! backend, store its results, and record measured beside predicted times
//! (device-measured times from [`Backend::finish`] where the backend has
//! them). [`Engine::evaluate`](crate::Engine::evaluate) plans and calls
//! [`run_plan`]; the functions at the end are the process-wide entry points.

use crate::array::{Array, Value};
use crate::cost::History;
use crate::device::{Backend, BoundBody, BoundKernel, BoundSource, DeviceKind, Policy};
use crate::engine::Engine;
use crate::error::{catch_panic, Error, Result};
use crate::fuse::{fuse, Kernel, KernelBody, KernelSource};
use crate::graph::{resolve_ready_view, Graph};
use crate::op::Op;
use crate::plan::{self, Plan};
use crate::trace;
use serde_json::json;
use std::sync::Arc;

/// The value of a kernel input: ready, or a view of a ready node.
fn input_value(a: &Array) -> Result<Value> {
    if !a.is_ready() {
        resolve_ready_view(a);
    }
    a.ready_value()
        .ok_or_else(|| Error::internal("eval", format!("input {a:?} is not computed")))
}

/// The buffer of a kernel input (its layout is the kernel's own).
pub(crate) fn input_buffer(a: &Array) -> Result<Arc<crate::buffer::Buffer>> {
    if !a.is_ready() {
        resolve_ready_view(a);
    }
    a.ready_buffer()
        .ok_or_else(|| Error::internal("eval", format!("input {a:?} is not computed")))
}

/// Resolves `k`'s inputs to buffers: what a backend runs.
pub(crate) fn bind(k: &Kernel) -> Result<BoundKernel<'_>> {
    let (body, outputs) = match &k.body {
        KernelBody::Fused {
            program,
            sources,
            reduce,
        } => {
            let mut bound = Vec::with_capacity(sources.len());
            for s in sources {
                bound.push(match s {
                    KernelSource::Buffer { array, layout } => BoundSource::Buffer {
                        buffer: input_buffer(array)?,
                        layout,
                    },
                    KernelSource::Index { layout } => BoundSource::Index { layout },
                });
            }
            let outputs = k
                .outputs
                .iter()
                .map(|o| (o.shape().to_vec(), o.dtype()))
                .collect();
            (
                BoundBody::Fused {
                    program,
                    sources: bound,
                    reduce: reduce.as_ref(),
                },
                outputs,
            )
        }
        KernelBody::Library { call, inputs } => {
            let values = inputs.iter().map(input_value).collect::<Result<_>>()?;
            (
                BoundBody::Library {
                    op: &call.op,
                    inputs: values,
                },
                call.outputs.clone(),
            )
        }
    };
    Ok(BoundKernel {
        shape: &k.shape,
        outputs: outputs.into(),
        body,
    })
}

/// Buffers a bound kernel reads (an iterator: a vector per kernel run cost
/// an allocation on the per-call path).
fn input_buffers<'a>(
    b: &'a BoundKernel<'_>,
) -> impl Iterator<Item = &'a Arc<crate::buffer::Buffer>> + 'a {
    let (sources, inputs) = match &b.body {
        BoundBody::Fused { sources, .. } => (sources.as_slice(), &[][..]),
        BoundBody::Library { inputs, .. } => (&[][..], inputs.as_slice()),
    };
    let fused = sources.iter().filter_map(|s| match s {
        BoundSource::Buffer { buffer, .. } => Some(buffer),
        BoundSource::Index { .. } => None,
    });
    fused.chain(inputs.iter().map(|v| &v.buffer))
}

/// Checks a backend's results against what the kernel declared.
fn check_results(k: &Kernel, b: &BoundKernel<'_>, values: &[Value]) -> Result<()> {
    // The kernel's name is formatted only for an error (a small kernel's
    // run costs little more than formatting it).
    check_values_of(|| k.name(), &b.outputs[..], values)
}

/// Checks that `values` are what `name` declared: as many, each of the
/// declared shape and dtype, contiguous.
pub(crate) fn check_values(
    name: &str,
    declared: &[(Vec<usize>, crate::dtype::DType)],
    values: &[Value],
) -> Result<()> {
    check_values_of(|| name.to_string(), declared, values)
}

fn check_values_of(
    name: impl Fn() -> String,
    declared: &[(Vec<usize>, crate::dtype::DType)],
    values: &[Value],
) -> Result<()> {
    if values.len() != declared.len() {
        return Err(Error::internal(
            "eval",
            format!(
                "{} returned {} values for {} outputs",
                name(),
                values.len(),
                declared.len()
            ),
        ));
    }
    for (v, (shape, dtype)) in values.iter().zip(declared) {
        if &v.layout.shape != shape || v.buffer.dtype() != *dtype || !v.layout.is_contiguous() {
            return Err(Error::internal(
                "eval",
                format!(
                    "{} returned {:?} {} where {shape:?} {dtype} contiguous was declared",
                    name(),
                    v.layout.shape,
                    v.buffer.dtype()
                ),
            ));
        }
    }
    Ok(())
}

/// A measured run for the history: (key, modelled seconds, measured seconds).
pub(crate) type Measured = (String, f64, f64);

/// Runs `kernels` as `plan` places them, filling its measured times.
/// Returns the measurements that may refine the profile.
pub(crate) fn run_plan(
    engine: &Engine,
    kernels: &[Kernel],
    plan: &mut Plan,
) -> Result<Vec<Measured>> {
    prepare_skipped(engine, kernels, plan);
    let mut launched: Vec<Launched> = Vec::new();
    let result = run_kernels(engine, kernels, plan, &mut launched);
    // Always collect what the devices finished (also after an error, so no
    // work is left queued).
    let mut devices: Vec<&Arc<dyn Backend>> = Vec::new();
    for (_, b, _) in &launched {
        if !devices.iter().any(|d| Arc::ptr_eq(d, b)) {
            devices.push(b);
        }
    }
    let mut finish_err = None;
    for backend in devices {
        match backend.finish() {
            Ok(times) => {
                let mine = launched
                    .iter()
                    .filter(|(_, b, _)| Arc::ptr_eq(b, backend))
                    .map(|(i, _, _)| *i);
                for (i, t) in mine.zip(times) {
                    if let Some(t) = t {
                        plan.kernels[i].measured_s = Some(t);
                    }
                }
            }
            Err(e) => finish_err = finish_err.or(Some(e)),
        }
    }
    result?;
    if let Some(e) = finish_err {
        return Err(e);
    }
    let mut measured = Vec::new();
    for (i, pk) in plan.kernels.iter().enumerate() {
        // Times taken while competing for the cores teach nothing.
        let real = launched
            .iter()
            .any(|(j, b, contended)| *j == i && b.measures() && !contended);
        if let (true, Some(p), Some(s)) = (real, pk.predicted(), pk.measured_call_s()) {
            measured.push((
                History::key(pk.device, &pk.key, pk.work.points),
                p.kernel.model_s,
                s,
            ));
        }
    }
    Ok(measured)
}

/// Runs `kernels` in order on the CPU with no plan (no predictions,
/// timings or trace): the path of a small evaluation when nothing else
/// could run it, whose cost per call is the point.
pub(crate) fn run_on_cpu(engine: &Engine, kernels: &[Kernel]) -> Result<()> {
    let backend = engine.backend(DeviceKind::Cpu)?;
    for k in kernels {
        crate::interrupt::check("eval")?;
        if let KernelBody::Library { call, .. } = &k.body {
            if let Some(results) = call.results() {
                store_library(k, results)?;
                continue;
            }
        }
        let bound = bind(k)?;
        let values = run_bound_on_cpu(engine, backend, &bound, || k.name())?;
        drop(bound);
        store_results(k, values)?;
    }
    backend.finish().map(|_| ())
}

/// Copies `bound`'s inputs that are not on the host there, runs it on the
/// CPU and checks its results against what `name` declared.
pub(crate) fn run_bound_on_cpu(
    engine: &Engine,
    backend: &Arc<dyn Backend>,
    bound: &BoundKernel<'_>,
    name: impl Fn() -> String,
) -> Result<Vec<Value>> {
    for buffer in input_buffers(bound) {
        if !buffer.residency().is_valid_on(DeviceKind::Cpu) {
            backend.copy_in(buffer)?;
            engine.count_copy(DeviceKind::Cpu);
        }
    }
    let values = backend.run(bound)?;
    engine.count_kernel(DeviceKind::Cpu);
    check_values_of(name, &bound.outputs[..], &values)?;
    Ok(values)
}

/// Runs the one kernel of a `graph` this thread's fusion cache knows,
/// bound straight from the cached template, on the CPU. (Graphs of several
/// kernels take [`run_on_cpu`], which lets each intermediate go as soon as
/// its consumers ran.)
pub(crate) fn run_cached_on_cpu(
    engine: &Engine,
    graph: &Graph,
    cached: &crate::fuse_cache::Cached,
) -> Result<()> {
    let backend = engine.backend(DeviceKind::Cpu)?;
    crate::interrupt::check("eval")?;
    let bound = cached.bind_first(graph)?;
    let values = run_bound_on_cpu(engine, backend, &bound, || cached.first_name())?;
    drop(bound);
    for (node, v) in cached.first_outputs(graph).zip(values) {
        node.set_value(v);
    }
    backend.finish().map(|_| ())
}

/// Makes a kernel's results the values of its output nodes.
fn store_results(k: &Kernel, values: Vec<Value>) -> Result<()> {
    match &k.body {
        KernelBody::Library { call, .. } => {
            let _ = call.results.set(values);
            let results = call
                .results()
                .ok_or_else(|| Error::internal("eval", "library results not stored"))?;
            store_library(k, results)
        }
        KernelBody::Fused { .. } => {
            for (node, v) in k.outputs.iter().zip(values) {
                node.set_value(v);
            }
            Ok(())
        }
    }
}

/// Kernels placed elsewhere only because a device would first have to
/// compile them are compiled there in the background, so the next
/// evaluation can use that device.
fn prepare_skipped(engine: &Engine, kernels: &[Kernel], plan: &mut Plan) {
    for (k, pk) in kernels.iter().zip(plan.kernels.iter_mut()) {
        let Some(chosen) = pk.predicted().map(|p| p.total_s) else {
            continue;
        };
        for o in &pk.options {
            let Ok(p) = &o.outcome else { continue };
            if o.device != pk.device && p.prepare_s > 0.0 && p.total_s - p.prepare_s < chosen {
                if let Ok(b) = engine.backend(o.device) {
                    b.prepare_in_background(k);
                    pk.reason += &format!(
                        " ({} would be faster once compiled: compiling it in the background)",
                        o.device
                    );
                }
            }
        }
    }
}

/// (planned kernel index, backend, whether the run competed for the
/// cores) of each kernel run, for the device timings and the history.
type Launched<'e> = (usize, &'e Arc<dyn Backend>, bool);

fn run_kernels<'e>(
    engine: &'e Engine,
    kernels: &[Kernel],
    plan: &mut Plan,
    launched: &mut Vec<Launched<'e>>,
) -> Result<()> {
    for (i, (k, pk)) in kernels.iter().zip(plan.kernels.iter_mut()).enumerate() {
        crate::interrupt::check("eval")?;
        if let KernelBody::Library { call, .. } = &k.body {
            if let Some(results) = call.results() {
                // Another output of this call asked for it earlier.
                store_library(k, results)?;
                pk.measured_s = Some(0.0);
                pk.measured_copy_s = Some(0.0);
                continue;
            }
        }
        let bound = bind(k)?;
        let mut copy_s = 0.0;
        let start = trace::now();
        // Only a predicted run teaches the history (and needs this).
        let contention = pk.predicted().map(|_| crate::cost::Contention::start());
        let (values, backend) = match run_on(engine, pk.device, &bound, &pk.name, &mut copy_s) {
            Err(Error::OutOfDeviceMemory { op, device, msg })
                if pk.device != DeviceKind::Cpu && !matches!(plan.policy, Policy::Force(_)) =>
            {
                // Under auto (or a preference) a kernel that does not fit
                // on the device runs on the CPU; explain says why.
                pk.reason = format!(
                    "ran on the CPU instead: {op}: device {device} is out of memory ({msg})"
                );
                pk.device = DeviceKind::Cpu;
                run_on(engine, DeviceKind::Cpu, &bound, &pk.name, &mut copy_s)?
            }
            r => r?,
        };
        let seconds = start.elapsed().as_secs_f64() - copy_s;
        let contended = contention.is_some_and(|c| c.contended(seconds));
        launched.push((i, backend, contended));
        engine.count_kernel(pk.device);
        check_results(k, &bound, &values)?;
        drop(bound);
        store_results(k, values)?;
        if trace::is_recording() {
            let pred = pk.predicted().map_or(0.0, |p| p.kernel.seconds);
            trace::kernel_event(
                pk.device,
                &pk.name,
                start,
                vec![
                    ("predicted_us", json!(pred * 1e6)),
                    ("bytes", json!(pk.work.bytes)),
                    ("flops", json!(pk.work.flops())),
                    ("reason", json!(pk.reason)),
                ],
            );
        }
        pk.measured_s = Some(seconds);
        pk.measured_copy_s = Some(copy_s);
    }
    Ok(())
}

/// Copies `bound`'s inputs that are not valid on `device` there, then runs
/// it there. Adds the copies' seconds to `copy_s`.
fn run_on<'e>(
    engine: &'e Engine,
    device: DeviceKind,
    bound: &BoundKernel<'_>,
    name: &str,
    copy_s: &mut f64,
) -> Result<(Vec<Value>, &'e Arc<dyn Backend>)> {
    let backend = engine.backend(device)?;
    for buffer in input_buffers(bound) {
        let r = buffer.residency();
        if !r.is_valid_on(device) {
            let from = r.locations().iter().next().unwrap_or(DeviceKind::Cpu);
            let start = trace::now();
            backend.copy_in(buffer)?;
            engine.count_copy(device);
            *copy_s += start.elapsed().as_secs_f64();
            trace::copy_event(from, device, buffer.nbytes(), start, Some(name));
        }
    }
    Ok((backend.run(bound)?, backend))
}

/// Sets the value of each output node of a library kernel from the call's
/// results.
fn store_library(k: &Kernel, results: &[Value]) -> Result<()> {
    for o in &k.outputs {
        match o.op() {
            Op::Library { output, .. } => {
                let v = results
                    .get(*output)
                    .ok_or_else(|| Error::internal("eval", "library output out of range"))?;
                o.set_value(v.clone());
            }
            _ => {
                return Err(Error::internal(
                    "library kernel",
                    "output is not a library node",
                ))
            }
        }
    }
    Ok(())
}

/// Drops device copies of external (front-end owned) input buffers that
/// were not pinned by an explicit move: their host data may change.
pub(crate) fn forget_external_copies(kernels: &[Kernel]) {
    for k in kernels {
        for a in plan::kernel_inputs(k) {
            if let Some(v) = a.ready_value() {
                let r = v.buffer.residency();
                if v.buffer.is_external() && !r.is_pinned() {
                    r.forget(DeviceKind::Gpu);
                }
            }
        }
    }
}

/// What one kernel did in a run.
#[derive(Clone, Debug)]
pub struct KernelRun {
    /// Short name, e.g. `fused(mul,sin,cos,add,add)`.
    pub name: String,
    /// Structural key (program text without constants).
    pub key: String,
    /// Points in the iteration space.
    pub points: usize,
    /// Bytes read and written.
    pub bytes: usize,
    /// Estimated flops.
    pub flops: f64,
    /// Where it ran (`cpu`, `gpu`).
    pub device: &'static str,
    /// Measured wall time in seconds (the kernel, without copies).
    pub seconds: f64,
    /// Predicted kernel seconds on that device.
    pub predicted: f64,
    /// Measured seconds of the copies its inputs needed.
    pub copy_seconds: f64,
    /// Why the device was chosen.
    pub reason: String,
}

/// The kernels that would run to compute `outputs`, without running them.
///
/// ```
/// use crossover::{Array, DType, Generator};
/// let mut rng = Generator::new(0);
/// let a = rng.uniform(&[1000], DType::F32)?;
/// let b = rng.uniform(&[1000], DType::F32)?;
/// let y = a.mul(&b)?.add(&a.sin()?)?.add(&b.cos()?)?;
/// assert_eq!(crossover::lower(&[y])?.len(), 1); // one fused kernel
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn lower(outputs: &[Array]) -> Result<Vec<Kernel>> {
    catch_panic("lower", || fuse(&Graph::collect(outputs)))
}

/// Computes `outputs` (and what they need) now, placed by the current
/// [`Engine`](crate::Engine) of this thread (the process-wide one unless
/// [`Engine::scope`](crate::Engine::scope) set another).
pub fn evaluate(outputs: &[Array]) -> Result<()> {
    crate::engine::with_current(|e| e.evaluate_only(outputs))
}

/// Like [`evaluate`], returning what each kernel did.
pub fn evaluate_with_report(outputs: &[Array]) -> Result<Vec<KernelRun>> {
    let plan = crate::engine::with_current(|e| e.evaluate(outputs, None))?;
    Ok(plan
        .kernels
        .into_iter()
        .map(|k| KernelRun {
            predicted: k.predicted().map_or(0.0, |p| p.kernel.seconds),
            name: k.name,
            key: k.key,
            points: k.work.points,
            bytes: k.work.bytes as usize,
            flops: k.work.flops(),
            device: k.device.name(),
            seconds: k.measured_s.unwrap_or(0.0),
            copy_seconds: k.measured_copy_s.unwrap_or(0.0),
            reason: k.reason,
        })
        .collect())
}
