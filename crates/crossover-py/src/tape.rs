//! Every op the Python layer records goes through [`op`]: one [`Call`] (an
//! engine method and its non-array arguments) applied to operands.
//!
//! While `@jit` traces a function, the calls are also written to a tape
//! (thread-local [`Recorder`]). A tape replays the same engine calls on new
//! inputs of the same shapes and dtypes without running Python again. A trace
//! that read a value (Python control flow on array values, a NumPy fallback),
//! used random numbers, or used an array made outside the recorded ops cannot
//! be replayed; the recorder says why and `@jit` then re-runs Python each call.

use crossover::compiled::CompiledGraph;
use crossover::expr::parse::Expr;
use crossover::{Array, BinaryOp, DType, Operand, ReduceOp, Scalar, SliceArg, UnaryOp};
use pyo3::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// One engine call with its non-array arguments.
#[derive(Clone, Debug)]
pub enum Call {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Where,
    Reduce {
        op: ReduceOp,
        axes: Option<Vec<isize>>,
        keepdims: bool,
    },
    ArgReduce {
        max: bool,
        axis: Option<isize>,
    },
    Cast(DType),
    Copy,
    Reshape(Vec<isize>),
    Permute(Vec<usize>),
    BroadcastTo(Vec<usize>),
    Slice(Vec<SliceArg>),
    ExpandDims(isize),
    Squeeze(Option<isize>),
    SwapAxes(isize, isize),
    Full {
        shape: Vec<usize>,
        value: Scalar,
        dtype: DType,
    },
    Arange {
        start: f64,
        stop: f64,
        step: f64,
        dtype: DType,
    },
    Linspace {
        start: f64,
        stop: f64,
        num: usize,
        endpoint: bool,
        dtype: DType,
    },
    /// A parsed expression string over its variables (operands in
    /// `names` order).
    Expr {
        expr: Arc<Expr>,
        names: Arc<Vec<String>>,
    },
    /// A single-output library op (matmul, solve, fft...) on array operands.
    Library(crate::library::LibCall),
}

fn array(args: &[Operand], i: usize) -> crossover::Result<Array> {
    match args.get(i) {
        Some(Operand::Array(a)) => Ok(a.clone()),
        Some(Operand::Scalar(s)) => Array::scalar(*s, s.natural_dtype()),
        None => Err(crossover::Error::Internal {
            op: "python binding",
            msg: format!("missing operand {i}"),
        }),
    }
}

/// Applies `call` to `args` (records nothing).
pub fn apply(call: &Call, args: &[Operand]) -> crossover::Result<Array> {
    let a = |i| array(args, i);
    let o = |i: usize| args[i].clone();
    match call {
        Call::Unary(u) => a(0)?.unary(*u),
        Call::Binary(b) => Array::binary(*b, o(0), o(1)),
        Call::Where => Array::where_(&a(0)?, o(1), o(2)),
        Call::Reduce { op, axes, keepdims } => a(0)?.reduce(*op, axes.as_deref(), *keepdims),
        Call::ArgReduce { max: true, axis } => a(0)?.argmax(*axis),
        Call::ArgReduce { max: false, axis } => a(0)?.argmin(*axis),
        Call::Cast(d) => a(0)?.cast(*d),
        Call::Copy => a(0)?.copy(),
        Call::Reshape(s) => a(0)?.reshape(s),
        Call::Permute(p) => a(0)?.permute(p),
        Call::BroadcastTo(s) => a(0)?.broadcast_to(s),
        Call::Slice(k) => a(0)?.slice(k),
        Call::ExpandDims(ax) => a(0)?.expand_dims(*ax),
        Call::Squeeze(ax) => a(0)?.squeeze(*ax),
        Call::SwapAxes(x, y) => a(0)?.swapaxes(*x, *y),
        Call::Full {
            shape,
            value,
            dtype,
        } => Array::full(shape, *value, *dtype),
        Call::Arange {
            start,
            stop,
            step,
            dtype,
        } => Array::arange(*start, *stop, *step, *dtype),
        Call::Linspace {
            start,
            stop,
            num,
            endpoint,
            dtype,
        } => Array::linspace(*start, *stop, *num, *endpoint, *dtype),
        Call::Expr { expr, names } => {
            let arrays: Vec<Array> = (0..names.len()).map(a).collect::<crossover::Result<_>>()?;
            let vars: Vec<(&str, &Array)> = names
                .iter()
                .map(|n| n.as_str())
                .zip(arrays.iter())
                .collect();
            expr.eval(&vars)
        }
        Call::Library(lib) => {
            let arrays: Vec<Array> = (0..args.len()).map(a).collect::<crossover::Result<_>>()?;
            crate::library::apply(lib, &arrays)
        }
    }
}

/// Applies `call` through the engine (panics become errors) and records it
/// when a trace is active on this thread.
pub fn op(py: Python<'_>, call: Call, args: &[Operand]) -> PyResult<Array> {
    let out = crate::errors::engine(py, || apply(&call, args))?;
    RECORDER.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.record(call, args, &out);
        }
    });
    Ok(out)
}

/// A step argument: an earlier slot or a scalar.
#[derive(Clone, Debug)]
enum Ref {
    Slot(usize),
    Scalar(Scalar),
}

#[derive(Clone, Debug)]
enum Step {
    /// An array that existed before the trace (immutable, reused as is).
    Const(Array),
    Call(Call, Vec<Ref>),
}

/// Records the calls of one trace.
pub struct Recorder {
    n_inputs: usize,
    /// Engine node id -> slot.
    slots: HashMap<u64, usize>,
    steps: Vec<Step>,
    /// Node ids at or above this were made during the trace.
    first_id: u64,
    /// Why the trace cannot be replayed (first reason wins).
    invalid: Option<String>,
}

thread_local! {
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

impl Recorder {
    fn slot_of(&mut self, a: &Array) -> Option<usize> {
        if let Some(&s) = self.slots.get(&a.id()) {
            return Some(s);
        }
        if a.id() >= self.first_id {
            self.invalidate(format!(
                "an array of shape {:?} was made outside the recorded ops (inside the function: \
                 e.g. converted from NumPy, random, or from another thread)",
                a.shape()
            ));
            return None;
        }
        let s = self.n_inputs + self.steps.len();
        self.steps.push(Step::Const(a.clone()));
        self.slots.insert(a.id(), s);
        Some(s)
    }

    fn record(&mut self, call: Call, args: &[Operand], out: &Array) {
        if self.invalid.is_some() {
            return;
        }
        let mut refs = Vec::with_capacity(args.len());
        for arg in args {
            refs.push(match arg {
                Operand::Scalar(s) => Ref::Scalar(*s),
                Operand::Array(a) => match self.slot_of(a) {
                    Some(s) => Ref::Slot(s),
                    None => return,
                },
            });
        }
        let s = self.n_inputs + self.steps.len();
        self.steps.push(Step::Call(call, refs));
        // An op may return one of its operands unchanged (a no-op reshape):
        // keep the earlier slot then.
        self.slots.entry(out.id()).or_insert(s);
    }

    fn invalidate(&mut self, why: String) {
        self.invalid.get_or_insert(why);
    }
}

/// Notes that a value was read while tracing (the trace cannot be replayed).
pub fn note_read(what: &str) {
    RECORDER.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.invalidate(format!(
                "the function reads array values ({what}), so Python must run on every call"
            ));
        }
    });
}

/// Registers an array made during a trace from immutable host data (a NumPy
/// scalar, a Python list literal) as a constant of the trace.
pub fn note_constant(a: &Array) {
    RECORDER.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            if !rec.slots.contains_key(&a.id()) {
                let s = rec.n_inputs + rec.steps.len();
                rec.steps.push(Step::Const(a.clone()));
                rec.slots.insert(a.id(), s);
            }
        }
    });
}

/// Whether a trace is being recorded on this thread.
pub fn tracing() -> bool {
    RECORDER.with(|r| r.borrow().is_some())
}

/// Starts recording; `inputs` become slots 0..n.
pub fn begin(inputs: &[Array]) -> Result<(), String> {
    RECORDER.with(|r| {
        let mut r = r.borrow_mut();
        if r.is_some() {
            return Err("a trace is already being recorded on this thread".into());
        }
        let mut slots = HashMap::new();
        let mut invalid = None;
        for (i, a) in inputs.iter().enumerate() {
            if slots.insert(a.id(), i).is_some() {
                invalid = Some("the same array is passed as two arguments".to_string());
            }
        }
        *r = Some(Recorder {
            n_inputs: inputs.len(),
            slots,
            steps: Vec::new(),
            first_id: Array::scalar(0, DType::Bool).map_or(u64::MAX, |a| a.id()),
            invalid,
        });
        Ok(())
    })
}

/// Stops recording and returns the tape for `outputs`, or why there is none.
pub fn end(outputs: &[Array]) -> Result<Tape, String> {
    let rec = RECORDER.with(|r| r.borrow_mut().take());
    let Some(mut rec) = rec else {
        return Err("no trace is being recorded".into());
    };
    let mut outs = Vec::with_capacity(outputs.len());
    for o in outputs {
        match rec.slot_of(o) {
            Some(s) => outs.push(s),
            None => break,
        }
    }
    if let Some(why) = rec.invalid {
        return Err(why);
    }
    Ok(Tape::pruned(rec.n_inputs, rec.steps, outs))
}

/// Drops an unfinished recording (the traced function raised).
pub fn abort() {
    RECORDER.with(|r| r.borrow_mut().take());
}

/// A recorded trace, replayable on new inputs.
#[pyclass(frozen, module = "crossover._crossover")]
pub struct Tape {
    n_inputs: usize,
    steps: Vec<Step>,
    outputs: Vec<usize>,
    /// The replayed graph's fused kernels, once captured: later replays
    /// run them on their inputs without building the graph.
    compiled: OnceLock<CompiledGraph>,
    /// Replays that tried to capture them (a tape whose graph cannot be
    /// captured stops trying after [`CAPTURE_TRIES`]).
    capture_tries: AtomicU32,
    /// Replays that ran the captured kernels (for tests).
    compiled_runs: AtomicU64,
}

/// Replays of a tape that try to capture its kernels: the first replay's
/// inputs may be pending or laid out unlike the usual call's.
const CAPTURE_TRIES: u32 = 3;

impl Tape {
    /// Keeps only the steps the outputs need, renumbering slots.
    fn pruned(n_inputs: usize, steps: Vec<Step>, outputs: Vec<usize>) -> Tape {
        let total = n_inputs + steps.len();
        let mut live = vec![false; total];
        for &o in &outputs {
            live[o] = true;
        }
        for (k, step) in steps.iter().enumerate().rev() {
            if live[n_inputs + k] {
                if let Step::Call(_, refs) = step {
                    for r in refs {
                        if let Ref::Slot(s) = r {
                            live[*s] = true;
                        }
                    }
                }
            }
        }
        let mut new_index: Vec<usize> = (0..n_inputs).collect();
        new_index.resize(total, usize::MAX);
        let mut kept = Vec::new();
        for (k, step) in steps.into_iter().enumerate() {
            if !live[n_inputs + k] {
                continue;
            }
            new_index[n_inputs + k] = n_inputs + kept.len();
            kept.push(match step {
                Step::Const(a) => Step::Const(a),
                Step::Call(c, refs) => Step::Call(
                    c,
                    refs.into_iter()
                        .map(|r| match r {
                            Ref::Slot(s) => Ref::Slot(new_index[s]),
                            other => other,
                        })
                        .collect(),
                ),
            });
        }
        Tape {
            n_inputs,
            steps: kept,
            outputs: outputs.into_iter().map(|o| new_index[o]).collect(),
            compiled: OnceLock::new(),
            capture_tries: AtomicU32::new(0),
            compiled_runs: AtomicU64::new(0),
        }
    }

    /// The outputs computed by the captured kernels on `inputs`; `None`
    /// when none are captured or they decline them (then [`Tape::replay`]).
    pub fn run_compiled(&self, inputs: &[Array]) -> crossover::Result<Option<Vec<Array>>> {
        let Some(c) = self.compiled.get() else {
            return Ok(None);
        };
        let outs = c.run(inputs)?;
        if outs.is_some() {
            self.compiled_runs.fetch_add(1, Ordering::Relaxed);
        }
        Ok(outs)
    }

    /// Points of the captured kernels (0 when none are captured).
    pub fn compiled_points(&self) -> usize {
        self.compiled.get().map_or(0, CompiledGraph::points)
    }

    /// Captures the kernels computing `outputs`, the pending results of
    /// replaying this tape on `inputs`, for the next replays.
    pub fn capture(&self, inputs: &[Array], outputs: &[Array]) {
        if self.compiled.get().is_some()
            || self.capture_tries.fetch_add(1, Ordering::Relaxed) >= CAPTURE_TRIES
        {
            return;
        }
        let constants: Vec<Array> = self
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Const(a) => Some(a.clone()),
                Step::Call(..) => None,
            })
            .collect();
        if let Some(c) = CompiledGraph::capture(inputs, &constants, outputs) {
            let _ = self.compiled.set(c);
        }
    }

    /// Runs the recorded calls on `inputs`; returns the (pending) outputs.
    pub fn replay(&self, inputs: Vec<Array>) -> crossover::Result<Vec<Array>> {
        if inputs.len() != self.n_inputs {
            return Err(crossover::Error::Internal {
                op: "jit replay",
                msg: format!("{} inputs for a tape of {}", inputs.len(), self.n_inputs),
            });
        }
        let mut slots = inputs;
        slots.reserve(self.steps.len());
        let mut args = Vec::with_capacity(4);
        for step in &self.steps {
            let out = match step {
                Step::Const(a) => a.clone(),
                Step::Call(call, refs) => {
                    args.clear();
                    args.extend(refs.iter().map(|r| match r {
                        Ref::Slot(s) => Operand::Array(slots[*s].clone()),
                        Ref::Scalar(v) => Operand::Scalar(*v),
                    }));
                    apply(call, &args)?
                }
            };
            slots.push(out);
        }
        Ok(self.outputs.iter().map(|&o| slots[o].clone()).collect())
    }
}

#[pymethods]
impl Tape {
    /// Number of recorded engine calls (after dropping unused ones).
    #[getter]
    fn steps(&self) -> usize {
        self.steps.len()
    }

    /// Whether replays run captured fused kernels on their inputs
    /// (without building the graph).
    #[getter]
    fn compiled(&self) -> bool {
        self.compiled.get().is_some()
    }

    /// Replays that ran the captured kernels (the others built the graph).
    #[getter]
    fn compiled_runs(&self) -> u64 {
        self.compiled_runs.load(Ordering::Relaxed)
    }

    fn __repr__(&self) -> String {
        format!(
            "<crossover tape: {} inputs, {} steps, {} outputs>",
            self.n_inputs,
            self.steps.len(),
            self.outputs.len()
        )
    }
}
