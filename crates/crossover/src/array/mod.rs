//! [`Array`]: a cheap-to-clone handle to a node of the lazy graph.
//!
//! Op methods check shapes and dtypes when called and return a pending array;
//! nothing runs until a result is asked for ([`Array::eval`],
//! [`Array::to_vec`]). A node is either pending (its op and inputs) or ready
//! (a buffer and a layout). Views of ready arrays are ready at once and share
//! the buffer.

mod elementwise;
mod library;
mod reduce;
pub mod scan;
mod view;

pub use elementwise::Operand;

use crate::buffer::Buffer;
use crate::dtype::{DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::op::{Library, LibraryCall, Op};
use crate::rng::{Distribution, Generator};
use crate::shape::{numel, Layout};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A materialised value: a buffer and where the array's elements sit in it.
#[derive(Clone, Debug)]
pub struct Value {
    pub buffer: Arc<Buffer>,
    pub layout: Layout,
}

pub(crate) enum NodeState {
    /// Not computed yet; the inputs of the node's op.
    Pending(Vec<Array>),
    /// Computed (inputs dropped so intermediates can be freed).
    Ready(Value),
}

pub(crate) struct Node {
    pub(crate) id: u64,
    pub(crate) shape: Vec<usize>,
    pub(crate) dtype: DType,
    pub(crate) op: Op,
    /// Whether the node may read memory its owner can change after the
    /// call that made it ([`Buffer::is_volatile`]): set once, from the
    /// inputs, so the check costs nothing on the common path.
    volatile: bool,
    /// At least the elements pending behind this node, its own included
    /// (at least 1 while pending, 0 once computed): the sum of its own and
    /// its inputs' bounds when it was recorded, so a front end can tell a
    /// small evaluation without walking the graph ([`crate::graph::pending_bound`]).
    /// Shared inputs are counted once per use, and inputs computed since
    /// still count: an upper bound.
    pending_bound: AtomicUsize,
    /// Whether a library call may be among the pending nodes behind this
    /// one (set when recorded, like `pending_bound`).
    library_below: bool,
    state: Mutex<NodeState>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// An n-dimensional array of one [`DType`], pending or computed.
///
/// Cloning is cheap (a reference count). Operations record a node and return
/// at once; [`Array::eval`] (or any readout) fuses and runs what is needed.
///
/// ```
/// use crossover::Array;
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let b = a.mul(&a)?.add(1.0)?;            // pending, nothing ran yet
/// assert_eq!(b.to_vec::<f32>()?, vec![2.0, 5.0, 10.0, 17.0]);
/// # Ok::<(), crossover::Error>(())
/// ```
#[derive(Clone)]
pub struct Array {
    pub(crate) node: Arc<Node>,
}

impl Array {
    /// A pending node. Every shape goes through here, so a byte count
    /// that overflows is refused once for all ops ([`Error::TooBig`]).
    pub(crate) fn new_node(
        op: Op,
        shape: Vec<usize>,
        dtype: DType,
        inputs: Vec<Array>,
    ) -> Result<Array> {
        let points = crate::limits::checked_numel(op.name(), &shape, dtype)?;
        let volatile = inputs.iter().any(Array::reads_volatile);
        let mut bound = points.max(1);
        let mut library_below = matches!(op, Op::Library { .. });
        for input in &inputs {
            let below = input.node.pending_bound.load(Ordering::Acquire);
            if below > 0 {
                bound = bound.saturating_add(below);
                library_below |= input.node.library_below;
            }
        }
        Ok(Array {
            node: Arc::new(Node {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                shape,
                dtype,
                op,
                volatile,
                pending_bound: AtomicUsize::new(bound),
                library_below,
                state: Mutex::new(NodeState::Pending(inputs)),
            }),
        })
    }

    pub(crate) fn new_ready(op: Op, dtype: DType, value: Value) -> Array {
        Array {
            node: Arc::new(Node {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                shape: value.layout.shape.clone(),
                dtype,
                op,
                volatile: value.buffer.is_volatile(),
                pending_bound: AtomicUsize::new(0),
                library_below: false,
                state: Mutex::new(NodeState::Ready(value)),
            }),
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, NodeState> {
        // A poisoned lock only means a panic elsewhere was caught; the state
        // itself is always consistent (replaced whole).
        self.node
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether computing this array would read (or its value is) memory
    /// that its owner may change once the call that handed it over returns
    /// ([`Buffer::is_volatile`], e.g. a NumPy array a front end borrowed).
    /// Such an array must be computed, and copied if it still views that
    /// memory, before the front end lets it outlive the call.
    ///
    /// ```
    /// use crossover::Array;
    /// let a = Array::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    /// assert!(!a.add(&a).unwrap().reads_volatile());
    /// ```
    pub fn reads_volatile(&self) -> bool {
        if !self.node.volatile {
            return false;
        }
        match &*self.state() {
            NodeState::Ready(v) => v.buffer.is_volatile(),
            NodeState::Pending(_) => true,
        }
    }

    /// Inputs of a pending node (`None` once ready).
    pub(crate) fn pending_inputs(&self) -> Option<Vec<Array>> {
        match &*self.state() {
            NodeState::Pending(inputs) => Some(inputs.clone()),
            NodeState::Ready(_) => None,
        }
    }

    /// `f` of the inputs of a pending node, read in place (without the
    /// vector [`Self::pending_inputs`] allocates); `None` once ready. `f`
    /// runs under the node's lock: it must not evaluate or change nodes.
    pub(crate) fn with_pending_inputs<R>(&self, f: impl FnOnce(&[Array]) -> R) -> Option<R> {
        match &*self.state() {
            NodeState::Pending(inputs) => Some(f(inputs)),
            NodeState::Ready(_) => None,
        }
    }

    /// The value of a ready node.
    pub(crate) fn ready_value(&self) -> Option<Value> {
        match &*self.state() {
            NodeState::Ready(v) => Some(v.clone()),
            NodeState::Pending(_) => None,
        }
    }

    /// The buffer of a ready node (its layout not copied).
    pub(crate) fn ready_buffer(&self) -> Option<Arc<Buffer>> {
        match &*self.state() {
            NodeState::Ready(v) => Some(v.buffer.clone()),
            NodeState::Pending(_) => None,
        }
    }

    /// Marks the node computed, dropping its inputs.
    pub(crate) fn set_value(&self, value: Value) {
        *self.state() = NodeState::Ready(value);
        // After the state: a reader that sees 0 finds the node computed.
        self.node.pending_bound.store(0, Ordering::Release);
    }

    /// [`Node::pending_bound`] and `library_below`: an upper bound on the
    /// pending work behind this array, read without a lock.
    pub(crate) fn pending_bound(&self) -> (usize, bool) {
        let bound = self.node.pending_bound.load(Ordering::Acquire);
        (bound, bound > 0 && self.node.library_below)
    }

    /// Unique id of the node (stable for the array's life).
    pub fn id(&self) -> u64 {
        self.node.id
    }

    pub fn shape(&self) -> &[usize] {
        &self.node.shape
    }

    pub fn dtype(&self) -> DType {
        self.node.dtype
    }

    pub fn ndim(&self) -> usize {
        self.node.shape.len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        numel(&self.node.shape)
    }

    /// Whether this handle is the only one to its node and no other handle
    /// holds its computed buffer (no pending array reads it, no view or
    /// front-end array shares its memory): a front end may then rewrite the
    /// values in place without anyone seeing the change.
    pub fn is_sole_handle(&self) -> bool {
        if Arc::strong_count(&self.node) != 1 {
            return false;
        }
        match &*self.state() {
            NodeState::Ready(v) => Arc::strong_count(&v.buffer) == 1,
            _ => true,
        }
    }

    /// Whether the value has been computed.
    pub fn is_ready(&self) -> bool {
        // Without the lock for computed nodes (their bound is 0); a node
        // computed a moment ago may still show its bound: then the lock tells.
        self.node.pending_bound.load(Ordering::Acquire) == 0
            || matches!(&*self.state(), NodeState::Ready(_))
    }

    /// The op that produces this array (`"input"` for data).
    pub fn op_name(&self) -> &'static str {
        self.node.op.name()
    }

    pub(crate) fn op(&self) -> &Op {
        &self.node.op
    }

    // ---- creation -------------------------------------------------------

    /// An array holding `data` with `shape` (row-major).
    ///
    /// # Errors
    /// [`Error::DataLength`] when `data.len()` is not the product of `shape`.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Array> {
        Self::from_slice(&data, shape)
    }

    /// Like [`Array::from_vec`], copying from a slice.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Array> {
        let expected = numel(shape);
        if data.len() != expected {
            return Err(Error::DataLength {
                op: "from_vec",
                len: data.len(),
                shape: shape.to_vec(),
                expected,
            });
        }
        let buffer = Buffer::from_elements(data)?;
        Self::from_buffer(buffer, Layout::contiguous(shape))
    }

    /// Wraps an existing buffer (front ends use this to avoid a copy). The
    /// layout must stay inside the buffer.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the layout reaches outside the buffer.
    pub fn from_buffer(buffer: Buffer, layout: Layout) -> Result<Array> {
        Self::from_shared(Arc::new(buffer), layout)
    }

    /// A view of a buffer another array (or a front end's view of one)
    /// already shares: no copy. The layout must stay inside the buffer.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the layout reaches outside the buffer.
    pub fn from_shared(buffer: Arc<Buffer>, layout: Layout) -> Result<Array> {
        let lowest = layout
            .shape
            .iter()
            .zip(&layout.strides)
            .map(|(&n, &s)| (n.max(1) as isize - 1) * s.min(0))
            .sum::<isize>()
            + layout.offset as isize;
        if layout.shape.len() != layout.strides.len()
            || (layout.numel() > 0 && (lowest < 0 || layout.required_len() > buffer.len()))
        {
            return Err(Error::invalid(
                "from_shared",
                format!(
                    "layout {:?} / {:?} + {} reaches outside a buffer of {} elements",
                    layout.shape,
                    layout.strides,
                    layout.offset,
                    buffer.len()
                ),
            ));
        }
        Ok(Array::new_ready(
            Op::Input,
            buffer.dtype(),
            Value { buffer, layout },
        ))
    }

    /// An input of `shape` and `dtype` that owns no memory, for plans only
    /// (`crossover explain` without `--run`): its kernels plan at any size
    /// instantly, but evaluating anything that reads it is an
    /// [`Error::Internal`].
    pub fn placeholder(shape: &[usize], dtype: DType) -> Result<Array> {
        let n = crate::limits::checked_numel("placeholder", shape, dtype)?;
        Self::from_buffer(Buffer::placeholder(dtype, n), Layout::contiguous(shape))
    }

    /// Marks a [`Array::placeholder`] as living on `device` only, so a plan
    /// sees it there (a real array moves with `Engine::to_device`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an array that is not a placeholder.
    pub fn assume_resident(&self, device: crate::DeviceKind) -> Result<()> {
        match self.ready_value() {
            Some(v) if v.buffer.is_placeholder() => {
                v.buffer.residency().set_only(device);
                Ok(())
            }
            _ => Err(Error::invalid(
                "assume_resident",
                "only placeholder arrays can be assumed to live on a device",
            )),
        }
    }

    /// A 0-d array holding one value.
    pub fn scalar(value: impl Into<Scalar>, dtype: DType) -> Result<Array> {
        Self::full(&[], value, dtype)
    }

    /// An array with every element equal to `value` (computed lazily: a
    /// constant costs no memory inside a fused kernel).
    ///
    /// # Errors
    /// [`Error::Overflow`] for an integer `value` out of range for an
    /// integer `dtype` (NumPy's NEP 50 rule for Python ints);
    /// [`Error::OutOfMemory`] when the array could not fit in memory (as
    /// NumPy refuses it, though a constant inside a fused kernel would cost
    /// nothing: such an array is a mistake, and reducing it takes minutes).
    pub fn full(shape: &[usize], value: impl Into<Scalar>, dtype: DType) -> Result<Array> {
        crate::limits::checked_numel("full", shape, dtype)?;
        crate::limits::check_fits("full", shape, dtype)?;
        Self::constant(shape, value, dtype)
    }

    /// [`Array::full`] without the memory check: a constant the engine
    /// makes itself (a broadcast scalar, an operand of a binary op), which
    /// NumPy would never allocate either.
    pub(crate) fn constant(
        shape: &[usize],
        value: impl Into<Scalar>,
        dtype: DType,
    ) -> Result<Array> {
        let value = value.into();
        if let (Scalar::Int(v), Some((lo, hi))) = (value, dtype.int_range()) {
            if !(lo..=hi).contains(&(v as i128)) {
                return Err(Error::Overflow {
                    op: "full",
                    msg: format!("Python integer {v} out of bounds for {dtype}"),
                });
            }
        }
        // Complex dtypes hold the (real) scalar with a zero imaginary part.
        Array::new_node(Op::Full(value), shape.to_vec(), dtype, vec![])
    }

    pub fn zeros(shape: &[usize], dtype: DType) -> Result<Array> {
        Self::full(shape, Scalar::Int(0), dtype)
    }

    pub fn ones(shape: &[usize], dtype: DType) -> Result<Array> {
        Self::full(shape, Scalar::Int(1), dtype)
    }

    /// Values `start, start+step, ...` below `stop` (NumPy's `arange`).
    ///
    /// # Errors
    /// A zero or non-finite `step`, or non-finite bounds.
    pub fn arange(start: f64, stop: f64, step: f64, dtype: DType) -> Result<Array> {
        if step == 0.0 || !step.is_finite() || !start.is_finite() || !stop.is_finite() {
            return Err(Error::invalid(
                "arange",
                format!("need finite start/stop and a non-zero finite step, got {start}, {stop}, {step}"),
            ));
        }
        if !(dtype.is_float() || dtype.is_int()) {
            return Err(Error::dtype("arange", dtype, "needs a real numeric dtype"));
        }
        let n = ((stop - start) / step).ceil().max(0.0) as usize;
        Array::new_node(
            Op::Arange {
                start,
                step,
                last: None,
            },
            vec![n],
            dtype,
            vec![],
        )
    }

    /// `num` evenly spaced values from `start` to `stop` (inclusive when
    /// `endpoint`), like NumPy's `linspace`.
    pub fn linspace(
        start: f64,
        stop: f64,
        num: usize,
        endpoint: bool,
        dtype: DType,
    ) -> Result<Array> {
        if !start.is_finite() || !stop.is_finite() {
            return Err(Error::invalid("linspace", "start and stop must be finite"));
        }
        if !dtype.is_float() {
            return Err(Error::dtype("linspace", dtype, "needs float32 or float64"));
        }
        let div = if endpoint { num.saturating_sub(1) } else { num };
        let step = if div > 0 {
            (stop - start) / div as f64
        } else {
            0.0
        };
        let last = (endpoint && num > 1).then_some(stop);
        Array::new_node(Op::Arange { start, step, last }, vec![num], dtype, vec![])
    }

    /// Records a library call with `inputs` and returns one array per
    /// output (see [`Library`]).
    ///
    /// # Errors
    /// [`Error::TooBig`] when an output's byte count overflows.
    pub fn library(
        op: Library,
        outputs: Vec<(Vec<usize>, DType)>,
        inputs: Vec<Array>,
    ) -> Result<Vec<Array>> {
        let call = LibraryCall::new(op, outputs);
        (0..call.outputs.len())
            .map(|k| {
                let (shape, dtype) = call.outputs[k].clone();
                Array::new_node(
                    Op::Library {
                        call: call.clone(),
                        output: k,
                    },
                    shape,
                    dtype,
                    inputs.clone(),
                )
            })
            .collect()
    }

    pub(crate) fn random(
        gen: &mut Generator,
        dist: Distribution,
        shape: &[usize],
        dtype: DType,
    ) -> Result<Array> {
        if !dtype.is_float() {
            return Err(Error::dtype(
                dist.name(),
                dtype,
                "random values need float32 or float64",
            ));
        }
        Array::new_node(
            Op::Random {
                dist,
                key: gen.next_key(),
            },
            shape.to_vec(),
            dtype,
            vec![],
        )
    }

    // ---- evaluation and readout ------------------------------------------

    /// Computes the array (and everything it needs) now.
    pub fn eval(&self) -> Result<()> {
        crate::exec::evaluate(std::slice::from_ref(self))
    }

    /// Computes several arrays together, so shared work is done once.
    pub fn eval_all(arrays: &[Array]) -> Result<()> {
        crate::exec::evaluate(arrays)
    }

    /// Computes the array now under `policy` (overriding the engine's for
    /// this call): `Policy::Force(DeviceKind::Gpu)` errors, naming why, when
    /// some kernel cannot run on the GPU.
    pub fn eval_with(&self, policy: crate::Policy) -> Result<()> {
        crate::engine::with_current(|e| e.evaluate(std::slice::from_ref(self), Some(policy)))
            .map(|_| ())
    }

    /// Where the computed value is valid (host, gpu, or both); `None` while
    /// the array is pending.
    pub fn residency(&self) -> Option<crate::residency::Locations> {
        self.ready_value().map(|v| v.buffer.residency().locations())
    }

    /// Where a computed array's GPU copy is, for other GPU libraries: the
    /// address of element `[0, 0, ...]` and the layout (strides in
    /// elements). `None` when it is pending, not valid on a GPU, or on one
    /// whose memory has no such address (OpenCL).
    pub fn device_address(&self) -> Option<(crate::residency::DeviceAddress, Layout)> {
        let v = self.ready_value()?;
        let r = v.buffer.residency();
        if !r.is_valid_on(crate::device::DeviceKind::Gpu) {
            return None;
        }
        let mut at = r.device_memory()?.address()?;
        at.ptr += (v.layout.offset * v.buffer.dtype().size()) as u64;
        Some((at, v.layout.clone()))
    }

    /// Where the kernels computing this array would run and why (predicted
    /// times per device, copies, the choice and its reason), without
    /// running anything. `to_string()` gives the readable report.
    pub fn explain(&self) -> Result<crate::Plan> {
        crate::engine::with_current(|e| e.plan(std::slice::from_ref(self), None))
    }

    /// The computed value, valid on the host (evaluating first if needed,
    /// and copying it back from a device if it lives only there).
    pub fn value(&self) -> Result<Value> {
        if let Some(v) = self.ready_value() {
            crate::residency::ensure_host(&v)?;
            return Ok(v);
        }
        self.eval()?;
        let v = self
            .ready_value()
            .ok_or_else(|| Error::internal("eval", "node not ready after evaluation"))?;
        crate::residency::ensure_host(&v)?;
        Ok(v)
    }

    /// `f` of the value, computing it if needed and bringing it to the host
    /// like [`Array::value`], without copying its layout (`f` runs under the
    /// node's lock: it must not touch other arrays).
    ///
    /// ```
    /// use crossover::Array;
    /// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?.mul(2.0)?;
    /// assert_eq!(a.with_value(|v| v.layout.shape.clone())?, vec![3]);
    /// # Ok::<(), crossover::Error>(())
    /// ```
    pub fn with_value<R>(&self, f: impl FnOnce(&Value) -> R) -> Result<R> {
        if !self.is_ready() {
            self.eval()?;
        }
        match &*self.state() {
            NodeState::Ready(v) => {
                // A check on the host; a GPU result is copied back first
                // (under this node's lock, which that copy does not take).
                crate::residency::ensure_host(v)?;
                Ok(f(v))
            }
            NodeState::Pending(_) => {
                Err(Error::internal("eval", "node not ready after evaluation"))
            }
        }
    }

    /// The elements in row-major order.
    ///
    /// # Errors
    /// [`Error::DType`] when `T` is not this array's dtype (use
    /// [`Array::to_vec_f64`] or [`Array::cast`] to convert), or any error of
    /// the evaluation.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::dtype(
                "to_vec",
                self.dtype(),
                format!("requested elements of {}; cast first", T::DTYPE),
            ));
        }
        let v = self.value()?;
        let data = v.buffer.as_slice::<T::Store>();
        let mut out = Vec::with_capacity(v.layout.numel());
        crate::cpu::gather::for_each_position(&v.layout, |p| out.push(T::from_store(data[p])));
        Ok(out)
    }

    /// The elements converted to f64 (bool as 0/1; complex: real part).
    pub fn to_vec_f64(&self) -> Result<Vec<f64>> {
        match self.dtype() {
            DType::Bool => Ok(self
                .to_vec::<bool>()?
                .into_iter()
                .map(|b| b as u8 as f64)
                .collect()),
            DType::I32 => Ok(self
                .to_vec::<i32>()?
                .into_iter()
                .map(|x| x as f64)
                .collect()),
            DType::I64 => Ok(self
                .to_vec::<i64>()?
                .into_iter()
                .map(|x| x as f64)
                .collect()),
            DType::I8 | DType::I16 | DType::U8 | DType::U16 | DType::U32 | DType::U64 => {
                self.cast(DType::F64)?.to_vec::<f64>()
            }
            DType::F32 => Ok(self
                .to_vec::<f32>()?
                .into_iter()
                .map(|x| x as f64)
                .collect()),
            DType::F64 => self.to_vec::<f64>(),
            DType::C64 => Ok(self
                .to_vec::<num_complex::Complex32>()?
                .into_iter()
                .map(|x| x.re as f64)
                .collect()),
            DType::C128 => Ok(self
                .to_vec::<num_complex::Complex64>()?
                .into_iter()
                .map(|x| x.re)
                .collect()),
        }
    }

    /// The single element of a one-element array, as f64.
    pub fn item(&self) -> Result<f64> {
        if self.numel() != 1 {
            return Err(Error::shape(
                "item",
                self.shape(),
                "only one-element arrays can be converted to a scalar",
            ));
        }
        Ok(self.to_vec_f64()?[0])
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Array(shape={:?}, dtype={}, {}, op={})",
            self.shape(),
            self.dtype(),
            if self.is_ready() { "ready" } else { "pending" },
            self.op_name()
        )
    }
}

impl Generator {
    /// Uniform values on `[0, 1)` (float32 or float64).
    pub fn uniform(&mut self, shape: &[usize], dtype: DType) -> Result<Array> {
        Array::random(self, Distribution::Uniform, shape, dtype)
    }

    /// Uniform values on `[low, high)`.
    pub fn uniform_range(
        &mut self,
        low: f64,
        high: f64,
        shape: &[usize],
        dtype: DType,
    ) -> Result<Array> {
        let u = self.uniform(shape, dtype)?;
        u.mul(high - low)?.add(low)
    }

    /// Standard normal values.
    pub fn standard_normal(&mut self, shape: &[usize], dtype: DType) -> Result<Array> {
        Array::random(self, Distribution::Normal, shape, dtype)
    }

    /// Normal values with a mean and standard deviation.
    pub fn normal(&mut self, mean: f64, std: f64, shape: &[usize], dtype: DType) -> Result<Array> {
        if std.is_nan() || std < 0.0 {
            return Err(Error::invalid(
                "normal",
                format!("scale must be >= 0, got {std}"),
            ));
        }
        let z = self.standard_normal(shape, dtype)?;
        z.mul(std)?.add(mean)
    }
}
