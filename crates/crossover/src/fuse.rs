//! Lowering, step 2: pending nodes -> kernels.
//!
//! Every elementwise chain becomes one kernel; a reduction swallows the chain
//! that feeds it (map-reduce in one pass); sibling reductions of the same
//! input over the same axes share one kernel (`mean` and `std` of `x` read
//! `x` once). A node is materialised (written to memory) only when it must
//! be, and the [`Boundary`] says why. Views between fused nodes are pushed
//! down into the loads of the kernel (transposed or sliced reads), so they
//! cost no pass over memory.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::expr::ir::{InstKind, Program, Reg, SourceKind};
use crate::graph::Graph;
use crate::op::{LibraryCall, Op, ReduceOp};
use crate::shape::{numel, Layout, ViewOp};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// Why a node is written to memory instead of being fused into its users.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// The caller asked for it.
    Requested,
    /// A reduction's result (reductions end their kernel).
    Reduction,
    /// Used by more than one kernel: computed once, read by each.
    Shared,
    /// Read through a broadcast: fusing would recompute it per copy.
    Broadcast,
    /// Read through a view that cannot be expressed on the loads of its
    /// inputs (a reshape of strided data).
    View,
    /// A random source read out of index order.
    RandomOrder,
    /// The result of a library call (matmul, FFT, ...).
    Library,
    /// An input of a library call (library kernels read materialised data).
    LibraryInput,
}

impl Boundary {
    pub fn describe(self) -> &'static str {
        match self {
            Boundary::Requested => "requested output",
            Boundary::Reduction => "reduction result",
            Boundary::Shared => "used by several kernels",
            Boundary::Broadcast => "read through a broadcast",
            Boundary::View => "read through a reshape of strided data",
            Boundary::RandomOrder => "random source read out of order",
            Boundary::Library => "library call result",
            Boundary::LibraryInput => "input of a library call",
        }
    }
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// A program input bound to data.
#[derive(Clone, Debug)]
pub enum KernelSource {
    /// Elements of `array` (ready now, or materialised by an earlier kernel),
    /// read through `layout` over the kernel's iteration space.
    Buffer { array: Array, layout: Layout },
    /// Flat indices, through `layout` over the iteration space.
    Index { layout: Layout },
}

/// How a reduction kernel walks its iteration space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceMode {
    /// Iteration space is `[kept..., reduced...]`: each output reduces a
    /// contiguous run of `inner` points.
    Inner,
    /// Iteration space is `[reduced..., kept...]` (reduced axes lead):
    /// `outer` rows are accumulated column-wise into `inner`... see `kept`.
    Outer,
}

/// The reduction part of a kernel.
#[derive(Clone, Debug)]
pub struct ReducePlan {
    /// One op per kernel output.
    pub ops: Vec<ReduceOp>,
    pub mode: ReduceMode,
    /// Number of output positions (product of kept dims).
    pub kept: usize,
    /// Points reduced into each output (product of reduced dims).
    pub reduced: usize,
}

/// What a kernel does.
#[derive(Clone, Debug)]
pub enum KernelBody {
    /// A fused elementwise program, optionally closed by reductions.
    Fused {
        /// Shared: a cached fusion hands the same program to every call.
        program: Arc<Program>,
        /// Bound program sources, in `program.sources` order.
        sources: Vec<KernelSource>,
        reduce: Option<ReducePlan>,
    },
    /// One library call (all of its outputs).
    Library {
        call: Arc<LibraryCall>,
        /// The call's input arrays (ready, or materialised by earlier
        /// kernels; views of those are resolved before the call runs).
        inputs: Vec<Array>,
    },
}

/// One unit of work, writing `outputs`.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Iteration space (library kernels: the first output's shape).
    pub shape: Vec<usize>,
    pub body: KernelBody,
    /// Nodes this kernel materialises.
    pub outputs: Vec<Array>,
    /// Why each output is materialised.
    pub reasons: Vec<Boundary>,
    /// Names of the ops fused into this kernel, inputs first.
    pub fused: Vec<&'static str>,
}

/// The name of a fused kernel closed by `reduce` (if any) that fused the
/// ops `fused`, e.g. `fused(mul,sin)` or `sum(mul,add)`.
pub(crate) fn fused_name(reduce: Option<&ReducePlan>, fused: &[&str]) -> String {
    let head = match reduce {
        Some(r) => r.ops.iter().map(|o| o.name()).collect::<Vec<_>>().join("+"),
        None => "fused".to_string(),
    };
    format!("{head}({})", fused.join(","))
}

impl Kernel {
    /// Points in the iteration space.
    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    /// The fused program, if this is a fused kernel.
    pub fn program(&self) -> Option<&Program> {
        match &self.body {
            KernelBody::Fused { program, .. } => Some(&**program),
            KernelBody::Library { .. } => None,
        }
    }

    /// The reduction closing a fused kernel, if any.
    pub fn reduce(&self) -> Option<&ReducePlan> {
        match &self.body {
            KernelBody::Fused { reduce, .. } => reduce.as_ref(),
            KernelBody::Library { .. } => None,
        }
    }

    /// Bytes read from sources plus bytes written (the memory traffic a
    /// fused kernel cannot avoid).
    pub fn bytes(&self) -> usize {
        let sources = match &self.body {
            KernelBody::Fused { sources, .. } => sources,
            KernelBody::Library { call, .. } => return call.op.bytes() as usize,
        };
        let read: usize = sources
            .iter()
            .map(|s| match s {
                KernelSource::Buffer { array, layout } => {
                    // Broadcast reads touch only the distinct elements.
                    let distinct: usize = layout
                        .shape
                        .iter()
                        .zip(&layout.strides)
                        .map(|(&n, &st)| if st == 0 { 1 } else { n })
                        .product();
                    distinct * array.dtype().size()
                }
                KernelSource::Index { .. } => 0,
            })
            .sum();
        let written: usize = self
            .outputs
            .iter()
            .map(|o| o.numel() * o.dtype().size())
            .sum();
        read + written
    }

    /// Estimated floating-point operations.
    pub fn flops(&self) -> f64 {
        match &self.body {
            KernelBody::Fused {
                program, reduce, ..
            } => {
                let per = program.flops_per_point()
                    + reduce
                        .as_ref()
                        .map_or(0.0, |r| r.ops.iter().map(|o| o.flops()).sum());
                per * self.numel() as f64
            }
            KernelBody::Library { call, .. } => call.op.flops(),
        }
    }

    /// Short human name, e.g. `fused(mul,sin,cos,add,add)`, `std(mul,add)`
    /// or `matmul`.
    pub fn name(&self) -> String {
        match &self.body {
            KernelBody::Fused { reduce, .. } => fused_name(reduce.as_ref(), &self.fused),
            KernelBody::Library { call, .. } => call.op.name().to_string(),
        }
    }

    /// Structural key, for timing history and compiled-kernel caches.
    pub fn key(&self) -> String {
        match &self.body {
            KernelBody::Fused {
                program, reduce, ..
            } => match reduce {
                Some(r) => format!(
                    "{} | reduce {:?} {:?}",
                    program.key(),
                    r.mode,
                    r.ops.iter().map(|o| o.name()).collect::<Vec<_>>()
                ),
                None => program.key().to_string(),
            },
            KernelBody::Library { call, .. } => call.op.key(),
        }
    }
}

/// Lowers a collected graph into kernels, in execution order.
pub fn fuse(graph: &Graph) -> Result<Vec<Kernel>> {
    let mut forced: HashMap<usize, Boundary> = HashMap::new();
    // Each retry materialises one more node, so this terminates.
    for _ in 0..=graph.len() + 1 {
        let part = Partition::new(graph, &forced);
        match part.build_all(graph) {
            Ok(kernels) => return Ok(kernels),
            Err(Retry(pos, why)) => {
                if forced.insert(pos, why).is_some() {
                    return Err(Error::internal("fuse", "retry did not make progress"));
                }
            }
        }
    }
    Err(Error::internal("fuse", "fusion did not converge"))
}

/// A node that must be materialised after all, and why.
struct Retry(usize, Boundary);

struct KernelPlan {
    roots: Vec<usize>,
    reasons: Vec<Boundary>,
}

struct Partition {
    /// Kernel id of each node (root or fused), `None` for views and constants.
    kernel_of: Vec<Option<usize>>,
    is_root: Vec<bool>,
    kernels: Vec<KernelPlan>,
}

/// Largest kept size for which a leading-axes reduction walks rows
/// (column-wise accumulation); smaller ones are transposed to inner runs.
const OUTER_MIN_KEPT: usize = 64;

impl Partition {
    fn new(g: &Graph, forced: &HashMap<usize, Boundary>) -> Partition {
        let n = g.len();
        let requested: HashSet<usize> = g.requested.iter().copied().collect();
        let mut p = Partition {
            kernel_of: vec![None; n],
            is_root: vec![false; n],
            kernels: Vec::new(),
        };
        let mut reduce_kernels: HashMap<(u64, Vec<usize>), usize> = HashMap::new();
        let mut library_kernels: HashMap<*const LibraryCall, usize> = HashMap::new();
        for i in (0..n).rev() {
            let node = &g.nodes[i];
            let root_reason = if requested.contains(&i) {
                Some(Boundary::Requested)
            } else {
                forced.get(&i).copied()
            };
            match node.op() {
                Op::View(_) => {}
                Op::Full(_) => {
                    // Constants are inlined wherever used, unless someone
                    // needs them in memory.
                    let (_, blocked) = p.users(g, i, &requested);
                    let reason = root_reason.or(blocked
                        .filter(|b| matches!(b, Boundary::Requested | Boundary::LibraryInput)));
                    if let Some(r) = reason {
                        p.kernels.push(KernelPlan {
                            roots: vec![],
                            reasons: vec![],
                        });
                        let kid = p.kernels.len() - 1;
                        p.make_root(i, kid, r);
                    }
                }
                Op::Library { call, .. } => {
                    let kid = *library_kernels.entry(Arc::as_ptr(call)).or_insert_with(|| {
                        p.kernels.push(KernelPlan {
                            roots: vec![],
                            reasons: vec![],
                        });
                        p.kernels.len() - 1
                    });
                    p.make_root(i, kid, root_reason.unwrap_or(Boundary::Library));
                }
                Op::Reduce { axes, .. } => {
                    let input = g.inputs[i][0].id();
                    let kid = *reduce_kernels
                        .entry((input, axes.clone()))
                        .or_insert_with(|| {
                            p.kernels.push(KernelPlan {
                                roots: vec![],
                                reasons: vec![],
                            });
                            p.kernels.len() - 1
                        });
                    p.make_root(i, kid, root_reason.unwrap_or(Boundary::Reduction));
                }
                _ => {
                    let (users, blocked) = p.users(g, i, &requested);
                    let reason = root_reason.or(blocked).or(match users.len() {
                        1 => None,
                        0 => Some(Boundary::Requested),
                        _ => Some(Boundary::Shared),
                    });
                    match reason {
                        Some(r) => {
                            p.kernels.push(KernelPlan {
                                roots: vec![],
                                reasons: vec![],
                            });
                            let kid = p.kernels.len() - 1;
                            p.make_root(i, kid, r);
                        }
                        None => p.kernel_of[i] = users.into_iter().next(),
                    }
                }
            }
        }
        p
    }

    fn make_root(&mut self, i: usize, kid: usize, reason: Boundary) {
        self.kernel_of[i] = Some(kid);
        self.is_root[i] = true;
        self.kernels[kid].roots.push(i);
        self.kernels[kid].reasons.push(reason);
    }

    /// Kernels that would fuse node `i`, and a reason it cannot be fused.
    fn users(
        &self,
        g: &Graph,
        i: usize,
        requested: &HashSet<usize>,
    ) -> (HashSet<usize>, Option<Boundary>) {
        let mut users = HashSet::new();
        let mut blocked = None;
        for &c in &g.consumers()[i] {
            if let Op::View(ops) = g.nodes[c].op() {
                let mut shape = g.nodes[i].shape().to_vec();
                for v in ops {
                    if v.expands(&shape) {
                        blocked = Some(Boundary::Broadcast);
                    }
                    shape = match v {
                        ViewOp::Reshape(s) | ViewOp::Broadcast(s) => s.clone(),
                        _ => Layout::contiguous(&shape)
                            .apply(v)
                            .map_or(shape.clone(), |l| l.shape),
                    };
                }
                if requested.contains(&c) {
                    blocked = blocked.or(Some(Boundary::Requested));
                }
                for &cc in &g.consumers()[c] {
                    if matches!(g.nodes[cc].op(), Op::Library { .. }) {
                        blocked = blocked.or(Some(Boundary::LibraryInput));
                    }
                    users.extend(self.kernel_of[cc]);
                }
            } else {
                if matches!(g.nodes[c].op(), Op::Library { .. }) {
                    blocked = blocked.or(Some(Boundary::LibraryInput));
                }
                users.extend(self.kernel_of[c]);
            }
        }
        (users, blocked)
    }

    fn build_all(&self, g: &Graph) -> std::result::Result<Vec<Kernel>, Retry> {
        // Execution order: by the first root's topological position.
        let mut order: Vec<usize> = (0..self.kernels.len()).collect();
        order.sort_by_key(|&k| self.kernels[k].roots.iter().min().copied());
        order
            .into_iter()
            .filter(|&k| !self.kernels[k].roots.is_empty())
            .map(|k| self.build(g, k))
            .collect()
    }

    fn build(&self, g: &Graph, kid: usize) -> std::result::Result<Kernel, Retry> {
        let plan = &self.kernels[kid];
        let first = plan.roots[0];
        let mut b = Builder {
            g,
            part: self,
            kid,
            program: Program::default(),
            sources: Vec::new(),
            memo: HashMap::new(),
            source_memo: HashMap::new(),
            fused: Vec::new(),
        };
        let outputs: Vec<Array> = plan.roots.iter().map(|&r| g.nodes[r].clone()).collect();
        match g.nodes[first].op() {
            Op::Library { call, .. } => Ok(Kernel {
                shape: g.nodes[first].shape().to_vec(),
                body: KernelBody::Library {
                    call: call.clone(),
                    inputs: g.inputs[first].clone(),
                },
                outputs,
                reasons: plan.reasons.clone(),
                fused: vec![call.op.name()],
            }),
            Op::Reduce { axes, .. } => {
                let input = g.inputs[first][0].clone();
                let (mode, perm, kept, reduced) = reduce_layout(input.shape(), axes);
                let shape: Vec<usize> = perm.iter().map(|&a| input.shape()[a]).collect();
                let transform = if perm.iter().enumerate().all(|(i, &a)| i == a) {
                    vec![]
                } else {
                    vec![ViewOp::Permute(perm)]
                };
                let reg = b.emit(&input, &transform, None)?;
                b.program.outputs.push(reg);
                let ops = plan
                    .roots
                    .iter()
                    .map(|&r| match g.nodes[r].op() {
                        Op::Reduce { op, .. } => *op,
                        _ => unreachable!("reduce kernels hold only reductions"),
                    })
                    .collect();
                Ok(b.finish(
                    shape,
                    outputs,
                    plan.reasons.clone(),
                    Some(ReducePlan {
                        ops,
                        mode,
                        kept,
                        reduced,
                    }),
                ))
            }
            _ => {
                let node = g.nodes[first].clone();
                let reg = b.emit_body(first, &[], None)?;
                b.program.outputs.push(reg);
                Ok(b.finish(node.shape().to_vec(), outputs, plan.reasons.clone(), None))
            }
        }
    }
}

/// Chooses how to walk a reduction: returns (mode, permutation of the input
/// axes giving the iteration order, kept count, reduced count).
fn reduce_layout(shape: &[usize], axes: &[usize]) -> (ReduceMode, Vec<usize>, usize, usize) {
    let nd = shape.len();
    let kept_axes: Vec<usize> = (0..nd).filter(|a| !axes.contains(a)).collect();
    let kept: usize = kept_axes.iter().map(|&a| shape[a]).product();
    let reduced: usize = axes.iter().map(|&a| shape[a]).product();
    let identity: Vec<usize> = (0..nd).collect();
    let trailing = axes
        .iter()
        .enumerate()
        .all(|(i, &a)| a == nd - axes.len() + i);
    let leading = axes.iter().enumerate().all(|(i, &a)| a == i);
    if trailing {
        (ReduceMode::Inner, identity, kept, reduced)
    } else if leading && kept >= OUTER_MIN_KEPT {
        (ReduceMode::Outer, identity, kept, reduced)
    } else {
        let perm = kept_axes.iter().chain(axes).copied().collect();
        (ReduceMode::Inner, perm, kept, reduced)
    }
}

struct Builder<'g> {
    g: &'g Graph,
    part: &'g Partition,
    kid: usize,
    program: Program,
    sources: Vec<KernelSource>,
    memo: HashMap<(u64, Vec<ViewOp>), Reg>,
    source_memo: HashMap<(u64, Layout), u32>,
    fused: Vec<&'static str>,
}

impl Builder<'_> {
    fn finish(
        self,
        shape: Vec<usize>,
        outputs: Vec<Array>,
        reasons: Vec<Boundary>,
        reduce: Option<ReducePlan>,
    ) -> Kernel {
        Kernel {
            shape,
            body: KernelBody::Fused {
                program: Arc::new(self.program),
                sources: self.sources,
                reduce,
            },
            outputs,
            reasons,
            fused: self.fused,
        }
    }

    fn add_source(&mut self, src: KernelSource, kind: SourceKind, id: u64) -> u32 {
        let layout = match &src {
            KernelSource::Buffer { layout, .. } | KernelSource::Index { layout } => layout.clone(),
        };
        if let Some(&s) = self.source_memo.get(&(id, layout.clone())) {
            return s;
        }
        self.sources.push(src);
        self.program.sources.push(kind);
        let s = (self.sources.len() - 1) as u32;
        self.source_memo.insert((id, layout), s);
        s
    }

    /// Register holding `a` read through `transform` (view ops applied after
    /// `a`'s own layout). `entry` is the node to materialise if a view cannot
    /// be pushed further down.
    fn emit(
        &mut self,
        a: &Array,
        transform: &[ViewOp],
        entry: Option<usize>,
    ) -> std::result::Result<Reg, Retry> {
        let key = (a.id(), transform.to_vec());
        if let Some(&r) = self.memo.get(&key) {
            return Ok(r);
        }
        let reg = match self.g.pos(a) {
            None => {
                // Ready data.
                let value = a.ready_value().expect("nodes outside the graph are ready");
                let layout = value
                    .layout
                    .apply_all(transform)
                    .ok_or_else(|| retry_at(entry))?;
                let s = self.add_source(
                    KernelSource::Buffer {
                        array: a.clone(),
                        layout,
                    },
                    SourceKind::Buffer(a.dtype()),
                    a.id(),
                );
                self.program.push(InstKind::Load(s), a.dtype())
            }
            Some(pos) => {
                if let Op::View(ops) = a.op() {
                    let base = &self.g.inputs[pos][0];
                    let inner: Vec<ViewOp> = ops.iter().chain(transform).cloned().collect();
                    let base_entry = self.g.pos(base).or(entry);
                    self.emit(base, &inner, base_entry)?
                } else if self.part.is_root[pos]
                    || self.part.kernel_of[pos].is_some_and(|k| k != self.kid)
                {
                    // Materialised by another kernel: read it back.
                    let layout = Layout::contiguous(a.shape())
                        .apply_all(transform)
                        .ok_or_else(|| retry_at(entry))?;
                    let s = self.add_source(
                        KernelSource::Buffer {
                            array: a.clone(),
                            layout,
                        },
                        SourceKind::Buffer(a.dtype()),
                        a.id(),
                    );
                    self.program.push(InstKind::Load(s), a.dtype())
                } else {
                    self.emit_body(pos, transform, entry)?
                }
            }
        };
        self.memo.insert(key, reg);
        Ok(reg)
    }

    /// Emits the computation of graph node `pos` itself (fused).
    fn emit_body(
        &mut self,
        pos: usize,
        transform: &[ViewOp],
        entry: Option<usize>,
    ) -> std::result::Result<Reg, Retry> {
        let node = self.g.nodes[pos].clone();
        let dtype = node.dtype();
        let inputs = &self.g.inputs[pos];
        let index_source = |b: &mut Self| -> std::result::Result<(u32, Layout), Retry> {
            let layout = Layout::contiguous(node.shape())
                .apply_all(transform)
                .ok_or_else(|| retry_at(entry))?;
            let s = b.add_source(
                KernelSource::Index {
                    layout: layout.clone(),
                },
                SourceKind::Index,
                node.id(),
            );
            Ok((s, layout))
        };
        let kind = match node.op() {
            Op::Full(v) => InstKind::Const(*v),
            Op::Arange { start, step, last } => {
                let (index, _) = index_source(self)?;
                let n = node.numel() as u64;
                InstKind::Arange {
                    index,
                    start: *start,
                    step: *step,
                    last: last.map(|v| (n.saturating_sub(1), v)),
                }
            }
            Op::Random { dist, key } => {
                let (index, layout) = index_source(self)?;
                if !layout.is_contiguous() {
                    return Err(Retry(pos, Boundary::RandomOrder));
                }
                InstKind::Random {
                    index,
                    dist: *dist,
                    key: *key,
                }
            }
            Op::Unary(u) => InstKind::Unary(*u, self.emit(&inputs[0], transform, entry)?),
            Op::Binary(bop) => {
                let a = self.emit(&inputs[0], transform, entry)?;
                let b = self.emit(&inputs[1], transform, entry)?;
                InstKind::Binary(*bop, a, b)
            }
            Op::Where => {
                let c = self.emit(&inputs[0], transform, entry)?;
                let a = self.emit(&inputs[1], transform, entry)?;
                let b = self.emit(&inputs[2], transform, entry)?;
                InstKind::Where(c, a, b)
            }
            Op::Cast => {
                let a = self.emit(&inputs[0], transform, entry)?;
                if self.program.dtype(a) == dtype {
                    // A copy fused into its user is just the value.
                    self.fused.push("copy");
                    return Ok(a);
                }
                InstKind::Cast(a)
            }
            Op::Input | Op::View(_) | Op::Reduce { .. } | Op::Library { .. } => {
                unreachable!("handled by emit: {}", node.op().name())
            }
        };
        if !matches!(kind, InstKind::Const(_)) {
            self.fused.push(node.op().name());
        }
        Ok(self.program.push(kind, dtype))
    }
}

fn retry_at(entry: Option<usize>) -> Retry {
    // `entry` is the base of the innermost view pushed down; materialising it
    // gives the view a contiguous layout to apply to.
    Retry(entry.unwrap_or(0), Boundary::View)
}
