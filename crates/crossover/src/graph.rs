//! Lowering, step 1: collect the pending nodes reachable from the requested
//! outputs into a local, topologically ordered list with their inputs and
//! consumers, so later stages never lock a node again.

use crate::array::{Array, Value};
use crate::fuse_cache::{FastHasher, FastMap};
use crate::op::Op;

type FastBuild = std::hash::BuildHasherDefault<FastHasher>;

/// A pending subgraph in topological order (inputs before consumers).
pub struct Graph {
    /// Pending nodes, inputs first.
    pub nodes: Vec<Array>,
    /// For each node, its inputs (pending or ready).
    pub inputs: Vec<Vec<Array>>,
    /// For each node, the positions (in `nodes`) of its pending consumers.
    pub consumers: Vec<Vec<usize>>,
    /// Node id -> position in `nodes`.
    pub index: FastMap<u64, usize>,
    /// Positions of the requested outputs that are pending.
    pub requested: Vec<usize>,
}

/// Elements of the pending nodes behind `outputs`, counted until `limit`
/// is passed: a cheap hint of how long an evaluation may run (front ends
/// make long ones interruptible).
pub fn pending_points(outputs: &[Array], limit: usize) -> usize {
    pending_work(outputs, limit).points
}

/// What [`pending_work`] found behind some outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingWork {
    /// Elements of the pending nodes, counted until the limit is passed.
    pub points: usize,
    /// Whether a library call (matmul, FFT, a solver...) is among them: its
    /// time is not told by its output's size.
    pub library: bool,
}

/// Like [`pending_points`], noting library calls as well.
pub fn pending_work(outputs: &[Array], limit: usize) -> PendingWork {
    let mut library = false;
    // Small graphs (the common case) track visited ids in a short list;
    // a hash set is only worth its allocation for big ones.
    let mut seen: Vec<u64> = Vec::new();
    let mut seen_big: Option<std::collections::HashSet<u64, FastBuild>> = None;
    let mut stack: Vec<Array> = outputs.to_vec();
    let mut total = 0usize;
    while let Some(a) = stack.pop() {
        if total > limit {
            break;
        }
        let id = a.id();
        let new = match &mut seen_big {
            Some(set) => set.insert(id),
            None if seen.contains(&id) => false,
            None => {
                seen.push(id);
                if seen.len() > 32 {
                    seen_big = Some(seen.drain(..).collect());
                }
                true
            }
        };
        if !new {
            continue;
        }
        if a.with_pending_inputs(|ins| stack.extend_from_slice(ins))
            .is_some()
        {
            total = total.saturating_add(a.numel());
            library |= matches!(a.op(), Op::Library { .. });
        }
    }
    PendingWork {
        points: total,
        library,
    }
}

impl Graph {
    /// Collects everything pending behind `outputs`. Views whose base is
    /// ready are resolved on the way (they need no kernel).
    pub fn collect(outputs: &[Array]) -> Graph {
        let mut g = Graph {
            nodes: Vec::new(),
            inputs: Vec::new(),
            consumers: Vec::new(),
            // Sized for the usual small graph: growing it cost a rehash or
            // two per evaluation.
            index: FastMap::with_capacity_and_hasher(16, Default::default()),
            requested: Vec::new(),
        };
        // Iterative post-order DFS: (node, inputs, next input to visit).
        let mut stack: Vec<(Array, Vec<Array>, usize)> = Vec::new();
        for out in outputs {
            if g.index.contains_key(&out.id()) || resolve_ready_view(out) {
                continue;
            }
            let Some(ins) = out.pending_inputs() else {
                continue;
            };
            stack.push((out.clone(), ins, 0));
            while let Some(top) = stack.last_mut() {
                if top.2 < top.1.len() {
                    let child = top.1[top.2].clone();
                    top.2 += 1;
                    if g.index.contains_key(&child.id()) || resolve_ready_view(&child) {
                        continue;
                    }
                    if let Some(ci) = child.pending_inputs() {
                        // Cycles are impossible: nodes only point to older nodes.
                        stack.push((child, ci, 0));
                    }
                } else {
                    let (node, ins, _) = stack.pop().expect("non-empty");
                    g.index.insert(node.id(), g.nodes.len());
                    g.nodes.push(node);
                    g.inputs.push(ins);
                }
            }
        }
        g.consumers = vec![Vec::new(); g.nodes.len()];
        for (i, ins) in g.inputs.iter().enumerate() {
            for input in ins {
                if let Some(&j) = g.index.get(&input.id()) {
                    if !g.consumers[j].contains(&i) {
                        g.consumers[j].push(i);
                    }
                }
            }
        }
        g.requested = outputs
            .iter()
            .filter_map(|o| g.index.get(&o.id()).copied())
            .collect();
        g.requested.dedup();
        g
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Position of a pending node, `None` for ready ones.
    pub fn pos(&self, a: &Array) -> Option<usize> {
        self.index.get(&a.id()).copied()
    }
}

/// If `a` is a pending view whose base is ready, makes it ready (a layout
/// change, no data moves) and returns true. Also true for ready arrays.
pub fn resolve_ready_view(a: &Array) -> bool {
    if a.is_ready() {
        return true;
    }
    let Op::View(ops) = a.op() else { return false };
    let Some(base) = a.pending_inputs().and_then(|i| i.into_iter().next()) else {
        return a.is_ready();
    };
    let Some(bv) = base.ready_value() else {
        return false;
    };
    match bv.layout.apply_all(ops) {
        Some(layout) => {
            a.set_value(Value {
                buffer: bv.buffer,
                layout,
            });
            true
        }
        // Base values of views are contiguous (materialised by a kernel), so
        // this only happens for an exotic ready base; the fuser copies then.
        None => false,
    }
}
