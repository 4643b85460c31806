//! Lowering, step 1: collect the pending nodes reachable from the requested
//! outputs into a local, topologically ordered list with their inputs and
//! consumers, so later stages never lock a node again.

use crate::array::{Array, Value};
use crate::fuse_cache::{FastHasher, FastMap};
use crate::op::Op;

type FastBuild = std::hash::BuildHasherDefault<FastHasher>;

/// Graphs up to this many nodes find a node by scanning them (the usual
/// small call: cheaper than building and hashing into a map).
const SCAN_NODES: usize = 32;

/// A pending subgraph in topological order (inputs before consumers).
pub struct Graph {
    /// Pending nodes, inputs first.
    pub nodes: Vec<Array>,
    /// For each node, its inputs (pending or ready).
    pub inputs: Vec<Vec<Array>>,
    /// For each node, the positions (in `nodes`) of its pending consumers:
    /// made on first use (fusion), not for a graph the fusion cache knows.
    consumers: std::sync::OnceLock<Vec<Vec<usize>>>,
    /// Node id -> position in `nodes`, for graphs of more than
    /// [`SCAN_NODES`] nodes (smaller ones are scanned: no map to build).
    index: Option<FastMap<u64, usize>>,
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PendingWork {
    /// Elements of the pending nodes, counted until the limit is passed.
    pub points: usize,
    /// Whether a library call (matmul, FFT, a solver...) is among them: its
    /// time is not told by its output's size.
    pub library: bool,
}

/// An upper bound on [`pending_work`] (no limit), read from the outputs
/// alone: each node keeps one from when it was recorded (shared inputs
/// counted once per use, inputs computed since still counted). A front end
/// that only asks whether the work is small takes this first, without
/// walking the graph, and walks only when the bound is too high to tell.
///
/// ```
/// use crossover::{graph::{pending_bound, pending_work}, Array};
/// let a = Array::from_vec(vec![1.0f32; 8], &[8])?;
/// let b = a.mul(&a)?.add(&a)?;
/// let bound = pending_bound(std::slice::from_ref(&b));
/// assert!(bound.points >= pending_work(std::slice::from_ref(&b), usize::MAX).points);
/// b.eval()?;
/// assert_eq!(pending_bound(&[b]).points, 0);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn pending_bound(outputs: &[Array]) -> PendingWork {
    let mut bound = PendingWork::default();
    for out in outputs {
        let (points, library) = out.pending_bound();
        bound.points = bound.points.saturating_add(points);
        bound.library |= library;
    }
    bound
}

/// Like [`pending_points`], noting library calls as well.
pub fn pending_work(outputs: &[Array], limit: usize) -> PendingWork {
    // The common call (one op on computed inputs) without the walk's
    // vectors: its own elements are all there is.
    if let [one] = outputs {
        let alone = one.with_pending_inputs(|ins| ins.iter().all(Array::is_ready));
        match alone {
            None => return PendingWork::default(),
            Some(true) => {
                return PendingWork {
                    points: one.numel(),
                    library: matches!(one.op(), Op::Library { .. }),
                }
            }
            Some(false) => {}
        }
    }
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
        // Sized for a typical call's graph: growing from empty was a
        // reallocation per doubling of each vector.
        let mut g = Graph {
            nodes: Vec::with_capacity(8),
            inputs: Vec::with_capacity(8),
            consumers: std::sync::OnceLock::new(),
            index: None,
            requested: Vec::new(),
        };
        // Iterative post-order DFS: (node, inputs, next input to visit).
        let mut stack: Vec<(Array, Vec<Array>, usize)> = Vec::with_capacity(8);
        for out in outputs {
            if g.position(out.id()).is_some() || resolve_ready_view(out) {
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
                    if g.position(child.id()).is_some() || resolve_ready_view(&child) {
                        continue;
                    }
                    if let Some(ci) = child.pending_inputs() {
                        // Cycles are impossible: nodes only point to older nodes.
                        stack.push((child, ci, 0));
                    }
                } else {
                    let (node, ins, _) = stack.pop().expect("non-empty");
                    g.push(node, ins);
                }
            }
        }
        g.requested = outputs.iter().filter_map(|o| g.position(o.id())).collect();
        g.requested.dedup();
        g
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Appends a node (its inputs already in) with its inputs.
    fn push(&mut self, node: Array, inputs: Vec<Array>) {
        let position = self.nodes.len();
        match &mut self.index {
            Some(map) => {
                map.insert(node.id(), position);
            }
            None if position >= SCAN_NODES => {
                let mut map: FastMap<u64, usize> =
                    FastMap::with_capacity_and_hasher(2 * SCAN_NODES, Default::default());
                map.extend(self.nodes.iter().enumerate().map(|(p, n)| (n.id(), p)));
                map.insert(node.id(), position);
                self.index = Some(map);
            }
            None => {}
        }
        self.nodes.push(node);
        self.inputs.push(inputs);
    }

    /// Position of the node with this id, if it is in the graph.
    fn position(&self, id: u64) -> Option<usize> {
        match &self.index {
            Some(map) => map.get(&id).copied(),
            None => self.nodes.iter().position(|n| n.id() == id),
        }
    }

    /// For each node, the positions (in `nodes`) of its pending consumers.
    pub fn consumers(&self) -> &[Vec<usize>] {
        self.consumers.get_or_init(|| {
            let mut consumers = vec![Vec::new(); self.nodes.len()];
            for (i, ins) in self.inputs.iter().enumerate() {
                for input in ins {
                    if let Some(j) = self.position(input.id()) {
                        if !consumers[j].contains(&i) {
                            consumers[j].push(i);
                        }
                    }
                }
            }
            consumers
        })
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Position of a pending node, `None` for ready ones.
    pub fn pos(&self, a: &Array) -> Option<usize> {
        self.position(a.id())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::BinaryOp;

    fn ready(shape: &[usize], seed: f64) -> Array {
        let n: usize = shape.iter().product();
        let v = (0..n).map(|i| (i as f64 * 0.37 + seed).sin()).collect();
        let a = Array::from_vec(v, shape).expect("input");
        a.eval().expect("eval");
        a
    }

    /// The one-op shortcut gives what the walk gives (the same array asked
    /// twice takes the walk).
    #[test]
    fn pending_work_of_one_op_matches_the_walk() {
        let (x, y) = (ready(&[3, 5], 0.1), ready(&[3, 5], 0.2));
        let sum = Array::binary(BinaryOp::Add, &x, &y).expect("add");
        let product = x.matmul(&ready(&[5, 4], 0.3)).expect("matmul");
        let product_xy = Array::binary(BinaryOp::Mul, &x, &y).expect("mul");
        let chain = Array::binary(BinaryOp::Add, &product_xy, &x).expect("add");
        for (a, points, library) in [(&sum, 15, false), (&product, 12, true), (&chain, 30, false)] {
            let one = pending_work(std::slice::from_ref(a), usize::MAX);
            let walked = pending_work(&[a.clone(), a.clone()], usize::MAX);
            assert_eq!(one, walked, "{}", a.op_name());
            assert_eq!(
                (one.points, one.library),
                (points, library),
                "{}",
                a.op_name()
            );
        }
        sum.eval().expect("eval");
        assert_eq!(pending_work(&[sum], usize::MAX), PendingWork::default());
    }

    /// The recorded bound is never below the walk, flags every library call
    /// the walk finds, and is 0 exactly when nothing is pending: on shared
    /// inputs, a library call, intermediates computed after their consumers
    /// were recorded, views and empty arrays.
    #[test]
    fn pending_bound_is_at_least_the_walk() {
        let (x, y) = (ready(&[3, 5], 0.1), ready(&[3, 5], 0.2));
        let xy = Array::binary(BinaryOp::Mul, &x, &y).expect("mul");
        let shared = Array::binary(BinaryOp::Add, &xy, &xy).expect("add");
        let product = xy.matmul(&ready(&[5, 4], 0.3)).expect("matmul");
        let after = Array::binary(BinaryOp::Sub, &shared, &x).expect("sub");
        let view = after.transpose().expect("transpose");
        let empty = ready(&[0, 5], 0.4);
        let empty_sum = Array::binary(BinaryOp::Add, &empty, &empty).expect("add");
        let arrays = [&xy, &shared, &product, &after, &view, &empty_sum];
        let check = |stage: &str| {
            for a in arrays {
                let one = std::slice::from_ref(a);
                let (bound, walk) = (pending_bound(one), pending_work(one, usize::MAX));
                let what = format!("{stage}: {}", a.op_name());
                assert!(bound.points >= walk.points, "{what}: {bound:?} < {walk:?}");
                assert!(bound.library || !walk.library, "{what}");
                assert_eq!(bound.points == 0, a.is_ready(), "{what}: {bound:?}");
            }
            let all: Vec<Array> = arrays.iter().map(|a| (*a).clone()).collect();
            let (bound, walk) = (pending_bound(&all), pending_work(&all, usize::MAX));
            assert!(bound.points >= walk.points && (bound.library || !walk.library));
        };
        check("recorded");
        assert!(pending_bound(std::slice::from_ref(&product)).library);
        assert!(!pending_bound(std::slice::from_ref(&shared)).library);
        xy.eval().expect("eval");
        check("xy computed");
        after.eval().expect("eval");
        check("after computed");
        for a in arrays {
            a.eval().expect("eval");
        }
        check("all computed");
    }

    /// Positions are found by scanning small graphs and through a map from
    /// [`SCAN_NODES`] on: both give every node's place, inputs first.
    #[test]
    fn positions_in_small_and_large_graphs() {
        let x = ready(&[4], 0.5);
        for len in [3, SCAN_NODES, SCAN_NODES + 1, 3 * SCAN_NODES] {
            let mut chain = vec![Array::binary(BinaryOp::Add, &x, &x).expect("add")];
            for _ in 1..len {
                let last = chain.last().expect("non-empty");
                chain.push(Array::binary(BinaryOp::Mul, last, &x).expect("mul"));
            }
            let g = Graph::collect(&[chain[len - 1].clone(), chain[0].clone()]);
            assert_eq!(g.len(), len);
            for (i, node) in chain.iter().enumerate() {
                assert_eq!(g.pos(node), Some(i), "node {i} of {len}");
                assert_eq!(g.nodes[i].id(), node.id());
            }
            assert_eq!(g.pos(&x), None);
            assert_eq!(g.requested, vec![len - 1, 0]);
            assert_eq!(g.consumers()[0].first(), (len > 1).then_some(&1));
        }
    }
}
