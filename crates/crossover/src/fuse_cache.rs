//! Fusion results cached by graph structure, so a repeated call (the same
//! ops on inputs of the same dtypes and layouts) skips [`fuse`] and only
//! rebinds the new nodes and inputs into the kernels found last time.
//!
//! The key is an exact encoding of everything `fuse` reads (ops with their
//! constants, dtypes, shapes, which node feeds which, which inputs are the
//! same array, the layouts of ready inputs, the requested outputs), compared
//! whole, so a hash collision can never hand back another graph's kernels.
//! Fusion does not depend on the devices, so neither does the cache; the
//! planner still places every kernel. Graphs with random sources or library
//! calls (their keys and calls are unique per call) are not cached.
//!
//! When only the CPU can run anything and nobody reads the plan, a graph
//! cached as one kernel is bound straight from its template
//! ([`Cached::bind_first`]): no [`Kernel`] is made for it.

use crate::array::{Array, NodeState};
use crate::device::{BoundBody, BoundKernel, BoundSource};
use crate::dtype::Scalar;
use crate::error::Result;
use crate::expr::ir::Program;
use crate::fuse::{fuse, Boundary, Kernel, KernelBody, KernelSource, ReducePlan};
use crate::graph::Graph;
use crate::op::Op;
use crate::shape::Layout;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

/// Entries kept per thread; the table is emptied when full (a loop over
/// ever-new scalars must not grow it without bound).
const CAPACITY: usize = 256;

/// A fast hasher for integer keys (node ids, key words) (Fx-style multiply-rotate): the default
/// SipHash costs more than the rest of a small lookup.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Slices of words (the cache's keys) are hashed a word at a time,
        // read in place: a copy per word was a `memcpy` call each.
        for c in bytes.chunks(8) {
            self.write_u64(word(c));
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64)
    }
    // Small integers (enum fields of derived `Hash`, e.g. the CPU compiler's
    // kernel specs) one word each, not through `write`'s byte chunks.
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64)
    }
    fn write_u16(&mut self, v: u16) {
        self.write_u64(v as u64)
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64)
    }
}

/// Up to eight bytes as one little-endian word (zero-padded).
#[inline]
fn word(c: &[u8]) -> u64 {
    match <[u8; 8]>::try_from(c) {
        Ok(w) => u64::from_le_bytes(w),
        Err(_) => {
            let mut w = [0u8; 8];
            let n = c.len().min(8);
            w[..n].copy_from_slice(&c[..n]);
            u64::from_le_bytes(w)
        }
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Records every value a derived `Hash` writes, one word each: an exact,
/// prefix-free encoding of the value (not a digest).
struct Enc<'a>(&'a mut Vec<u64>);

impl Hasher for Enc<'_> {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.push(bytes.len() as u64);
        // Whole words read in place (shapes and strides are slices of
        // words): a copy per word was a `memcpy` call each.
        let words = bytes.chunks_exact(8);
        let tail = words.remainder();
        self.0.extend(words.map(word));
        if !tail.is_empty() {
            self.0.push(word(tail));
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.0.push(v.into())
    }
    fn write_u16(&mut self, v: u16) {
        self.0.push(v.into())
    }
    fn write_u32(&mut self, v: u32) {
        self.0.push(v.into())
    }
    fn write_u64(&mut self, v: u64) {
        self.0.push(v)
    }
    fn write_usize(&mut self, v: usize) {
        self.0.push(v as u64)
    }
    fn write_i8(&mut self, v: i8) {
        self.0.push(v as i64 as u64)
    }
    fn write_i16(&mut self, v: i16) {
        self.0.push(v as i64 as u64)
    }
    fn write_i32(&mut self, v: i32) {
        self.0.push(v as i64 as u64)
    }
    fn write_i64(&mut self, v: i64) {
        self.0.push(v as u64)
    }
    fn write_isize(&mut self, v: isize) {
        self.0.push(v as i64 as u64)
    }
}

/// An array a cached kernel refers to: a node of the graph (by position)
/// or a ready input (by order of first use in the key).
#[derive(Clone, Copy)]
pub(crate) enum Ref {
    Node(usize),
    Ext(usize),
}

pub(crate) struct SourceT {
    /// `None`: a flat-index source.
    pub(crate) array: Option<Ref>,
    pub(crate) layout: Layout,
}

/// A fused kernel with its arrays replaced by references ([`Ref`]).
pub(crate) struct KernelT {
    pub(crate) shape: Vec<usize>,
    pub(crate) program: Arc<Program>,
    pub(crate) sources: Vec<SourceT>,
    pub(crate) reduce: Option<ReducePlan>,
    /// Positions in the graph of the nodes it computes.
    pub(crate) outputs: Vec<usize>,
    reasons: Vec<Boundary>,
    pub(crate) fused: Vec<&'static str>,
}

pub(crate) type Templates = Arc<[KernelT]>;

#[derive(Default)]
struct Cache {
    map: FastMap<Box<[u64]>, Templates>,
    /// The key being built (kept to reuse its memory).
    key: Vec<u64>,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

/// A graph this thread's cache knows: its kernels' templates and the
/// graph's ready inputs, to bind to this graph.
pub(crate) struct Cached {
    pub(crate) templates: Templates,
    /// The graph's ready inputs, in key order ([`Ref::Ext`]).
    pub(crate) ext: Vec<Array>,
}

/// What a lookup in this thread's cache found.
pub(crate) enum Lookup {
    Hit(Cached),
    /// Not cached: the key to cache the fused kernels under, with the ready
    /// inputs in key order (`None`: a graph that is not cached).
    Miss(Option<(Box<[u64]>, Vec<Array>)>),
}

/// Looks `graph`'s structure up in this thread's cache.
pub(crate) fn lookup(graph: &Graph) -> Lookup {
    CACHE.with(|c| {
        let Ok(mut c) = c.try_borrow_mut() else {
            return Lookup::Miss(None);
        };
        let c = &mut *c;
        c.key.clear();
        let Some(ext) = encode(graph, &mut c.key) else {
            return Lookup::Miss(None);
        };
        match c.map.get(&c.key[..]) {
            Some(t) => Lookup::Hit(Cached {
                templates: Arc::clone(t),
                ext,
            }),
            None => Lookup::Miss(Some((c.key.clone().into_boxed_slice(), ext))),
        }
    })
}

impl Cached {
    /// The cached kernels bound to this graph's nodes and inputs.
    pub(crate) fn kernels(&self, graph: &Graph) -> Vec<Kernel> {
        instantiate(&self.templates, graph, &self.ext)
    }

    /// Whether the graph is one kernel.
    pub(crate) fn is_single(&self) -> bool {
        self.templates.len() == 1
    }

    /// The first kernel bound to `graph`'s buffers without making a
    /// [`Kernel`] (whose vectors and layouts cost more than a small
    /// kernel's loop); `graph` is the one this was looked up for.
    pub(crate) fn bind_first<'k>(&'k self, graph: &Graph) -> Result<BoundKernel<'k>> {
        let t = &self.templates[0];
        let mut sources = Vec::with_capacity(t.sources.len());
        for s in &t.sources {
            sources.push(match s.array {
                Some(r) => BoundSource::Buffer {
                    buffer: crate::exec::input_buffer(&resolve(r, graph, &self.ext))?,
                    layout: &s.layout,
                },
                None => BoundSource::Index { layout: &s.layout },
            });
        }
        Ok(BoundKernel {
            shape: &t.shape,
            outputs: t
                .outputs
                .iter()
                .map(|&p| (graph.nodes[p].shape().to_vec(), graph.nodes[p].dtype()))
                .collect::<Vec<_>>()
                .into(),
            body: BoundBody::Fused {
                program: &t.program,
                sources,
                reduce: t.reduce.as_ref(),
            },
        })
    }

    /// The graph's nodes the first kernel computes, in output order.
    pub(crate) fn first_outputs<'g>(&'g self, graph: &'g Graph) -> impl Iterator<Item = &'g Array> {
        self.templates[0].outputs.iter().map(|&p| &graph.nodes[p])
    }

    /// The first kernel's name (for errors).
    pub(crate) fn first_name(&self) -> String {
        let t = &self.templates[0];
        crate::fuse::fused_name(t.reduce.as_ref(), &t.fused)
    }
}

/// [`fuse`] for a graph the cache missed, caching the kernels under `key`.
pub(crate) fn fuse_missed(
    graph: &Graph,
    key: Option<(Box<[u64]>, Vec<Array>)>,
) -> Result<Vec<Kernel>> {
    let kernels = fuse(graph)?;
    if let Some((key, ext)) = key {
        if let Some(t) = template(&kernels, graph, &ext) {
            CACHE.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    if c.map.len() >= CAPACITY {
                        c.map.clear();
                    }
                    c.map.insert(key, t);
                }
            });
        }
    }
    Ok(kernels)
}

fn push_scalar(key: &mut Vec<u64>, s: Scalar) {
    match s {
        Scalar::Bool(b) => key.extend([0, b as u64]),
        Scalar::Int(i) => key.extend([1, i as u64]),
        Scalar::Float(f) => key.extend([2, f.to_bits()]),
    }
}

/// Encodes `op`; `false` for ops whose graphs are not cached.
fn push_op(key: &mut Vec<u64>, op: &Op) -> bool {
    match op {
        Op::Input => key.push(1),
        Op::Full(s) => {
            key.push(2);
            push_scalar(key, *s);
        }
        Op::Arange { start, step, last } => {
            key.extend([3, start.to_bits(), step.to_bits()]);
            match last {
                Some(l) => key.extend([1, l.to_bits()]),
                None => key.push(0),
            }
        }
        Op::Unary(u) => {
            key.push(4);
            u.hash(&mut Enc(key));
        }
        Op::Binary(b) => {
            key.push(5);
            b.hash(&mut Enc(key));
        }
        Op::Where => key.push(6),
        Op::Cast => key.push(7),
        Op::View(ops) => {
            key.push(8);
            ops.hash(&mut Enc(key));
        }
        Op::Reduce { op, axes, keepdims } => {
            key.push(9);
            let mut e = Enc(key);
            op.hash(&mut e);
            axes.hash(&mut e);
            keepdims.hash(&mut e);
        }
        Op::Random { .. } | Op::Library { .. } => return false,
    }
    true
}

/// Writes the structure of `graph` into `key`; returns the ready inputs in
/// order of first use, or `None` when the graph is not cached.
fn encode(graph: &Graph, key: &mut Vec<u64>) -> Option<Vec<Array>> {
    let mut ext: Vec<Array> = Vec::new();
    key.push(graph.len() as u64);
    key.push(graph.requested.len() as u64);
    key.extend(graph.requested.iter().map(|&r| r as u64));
    for (node, inputs) in graph.nodes.iter().zip(&graph.inputs) {
        if !push_op(key, node.op()) {
            return None;
        }
        node.dtype().hash(&mut Enc(key));
        node.shape().hash(&mut Enc(key));
        key.push(inputs.len() as u64);
        for a in inputs {
            if let Some(p) = graph.pos(a) {
                key.push((p as u64) << 1);
                continue;
            }
            if let Some(i) = ext.iter().position(|e| e.id() == a.id()) {
                key.push(((i as u64) << 1) | 1);
                continue;
            }
            // A new ready input: its dtype and layout follow its reference.
            key.push(((ext.len() as u64) << 1) | 1);
            a.dtype().hash(&mut Enc(key));
            match &*a.state() {
                NodeState::Ready(v) => v.layout.hash(&mut Enc(key)),
                // Made ready or pending by a race: fuse it afresh.
                NodeState::Pending(_) => return None,
            }
            ext.push(a.clone());
        }
    }
    Some(ext)
}

fn resolve(r: Ref, graph: &Graph, ext: &[Array]) -> Array {
    match r {
        Ref::Node(p) => graph.nodes[p].clone(),
        Ref::Ext(i) => ext[i].clone(),
    }
}

/// The kernels of `templates` bound to this graph's nodes and inputs.
fn instantiate(templates: &[KernelT], graph: &Graph, ext: &[Array]) -> Vec<Kernel> {
    templates
        .iter()
        .map(|t| Kernel {
            shape: t.shape.clone(),
            body: KernelBody::Fused {
                program: Arc::clone(&t.program),
                sources: t
                    .sources
                    .iter()
                    .map(|s| match s.array {
                        Some(r) => KernelSource::Buffer {
                            array: resolve(r, graph, ext),
                            layout: s.layout.clone(),
                        },
                        None => KernelSource::Index {
                            layout: s.layout.clone(),
                        },
                    })
                    .collect(),
                reduce: t.reduce.clone(),
            },
            outputs: t.outputs.iter().map(|&p| graph.nodes[p].clone()).collect(),
            reasons: t.reasons.clone(),
            fused: t.fused.clone(),
        })
        .collect()
}

/// `kernels` with their arrays replaced by references, or `None` when one
/// cannot be expressed (then nothing is cached).
fn template(kernels: &[Kernel], graph: &Graph, ext: &[Array]) -> Option<Templates> {
    let find = |a: &Array| -> Option<Ref> {
        graph
            .pos(a)
            .map(Ref::Node)
            .or_else(|| ext.iter().position(|e| e.id() == a.id()).map(Ref::Ext))
    };
    kernels
        .iter()
        .map(|k| {
            let KernelBody::Fused {
                program,
                sources,
                reduce,
            } = &k.body
            else {
                return None;
            };
            let sources = sources
                .iter()
                .map(|s| match s {
                    KernelSource::Buffer { array, layout } => Some(SourceT {
                        array: Some(find(array)?),
                        layout: layout.clone(),
                    }),
                    KernelSource::Index { layout } => Some(SourceT {
                        array: None,
                        layout: layout.clone(),
                    }),
                })
                .collect::<Option<Vec<_>>>()?;
            let outputs = k
                .outputs
                .iter()
                .map(|o| graph.pos(o))
                .collect::<Option<Vec<_>>>()?;
            Some(KernelT {
                shape: k.shape.clone(),
                program: Arc::clone(program),
                sources,
                reduce: reduce.clone(),
                outputs,
                reasons: k.reasons.clone(),
                fused: k.fused.clone(),
            })
        })
        .collect()
}
