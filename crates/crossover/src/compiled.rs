//! A recorded computation's fused kernels, kept to run again on new inputs
//! of the same dtypes and layouts without building, collecting or looking
//! up its graph (the Python front's `@jit` replays).
//!
//! A replayed `@jit` function rebuilds the same graph on every call, and
//! the evaluation then collects it, encodes it for the fusion cache and
//! binds the cached kernels: for a loop over 10,000 elements that was
//! about 16k of the replay's 35k instructions. Once the graph is fused,
//! its kernels' templates ([`crate::fuse_cache`]) say everything a run
//! needs: which input or earlier kernel's result each source reads, and in
//! which layout. [`CompiledGraph::run`] binds the new inputs to them
//! directly, after checking that they are what the graph was captured with
//! (ready, same dtypes and layouts, the same inputs shared); anything else
//! is declined and takes the general path. The kernels are the fusion
//! cache's, so the results are the same bits.
//!
//! ```
//! use std::sync::Arc;
//! use crossover::{compiled::CompiledGraph, Array, Engine, Profile};
//! let x = Array::from_vec((0..6000).map(|i| i as f64).collect(), &[6000])?;
//! let y = x.mul(&x)?.sum(None, false)?;
//! // Captured from one graph...
//! let c = CompiledGraph::capture(&[x], &[], &[y]).expect("fused kernels");
//! // ...run on a new input of the same dtype and layout (on an engine
//! // with no GPU: with one, the general path places the kernels).
//! let x2 = Array::from_vec(vec![2.0f64; 6000], &[6000])?;
//! let cpu = Arc::new(Engine::new(Profile::synthetic()));
//! let out = cpu.scope(|| c.run(&[x2]))?.expect("same dtype and layout");
//! assert_eq!(out[0].to_vec::<f64>()?, vec![24000.0]);
//! # Ok::<(), crossover::Error>(())
//! ```

use crate::array::{Array, NodeState, Value};
use crate::device::{BoundBody, BoundKernel, BoundSource, DeviceKind};
use crate::dtype::DType;
use crate::error::{catch_panic, Error, Result};
use crate::fuse_cache::{fuse_missed, lookup, Lookup, Ref, Templates};
use crate::graph::Graph;
use crate::op::Op;
use crate::shape::Layout;
use std::sync::Arc;

/// What a ready input of the kernels is bound to on each run.
enum Bind {
    /// The run's input `index`, which must be ready in this dtype and layout.
    Input {
        index: usize,
        dtype: DType,
        layout: Layout,
    },
    /// A constant of the recorded computation (the same array every run).
    Fixed(Array),
}

/// The fused kernels of a captured graph, runnable on new inputs (see the
/// module docs).
pub struct CompiledGraph {
    /// The fusion cache's templates of the graph, in run order.
    template: Templates,
    /// Per ready input of the kernels ([`Ref::Ext`]), what it binds to.
    binds: Vec<Bind>,
    /// Per input, the first input that was the same array at capture: a
    /// kernel reads a shared input once, so the sharing must not change.
    shared: Vec<usize>,
    /// Per requested output, its position in the graph and its dtype.
    outputs: Vec<(usize, DType)>,
    /// Per kernel, the shape and dtype of each value it computes.
    output_types: Vec<Vec<(Vec<usize>, DType)>>,
    /// Per position in the graph, the last kernel that reads its value
    /// (`usize::MAX`: a requested output, kept to the end).
    last_use: Vec<usize>,
}

impl CompiledGraph {
    /// Captures the computation of `outputs` (pending arrays) from
    /// `inputs` (ready arrays) and `constants` (ready arrays the same on
    /// every run). `None` when it is not fused kernels reading only those
    /// and each other: random draws or library calls, an output that is an
    /// input or a view of one, or a ready array read that is neither an
    /// input nor a constant.
    pub fn capture(inputs: &[Array], constants: &[Array], outputs: &[Array]) -> Option<Self> {
        catch_panic("jit capture", || {
            Ok(Self::try_capture(inputs, constants, outputs))
        })
        .ok()
        .flatten()
    }

    fn try_capture(inputs: &[Array], constants: &[Array], outputs: &[Array]) -> Option<Self> {
        if outputs.is_empty()
            || outputs.iter().any(Array::is_ready)
            || !inputs.iter().chain(constants).all(Array::is_ready)
        {
            return None;
        }
        let graph = Graph::collect(outputs);
        let cached = match lookup(&graph) {
            Lookup::Hit(c) => c,
            Lookup::Miss(Some(key)) => {
                fuse_missed(&graph, Some(key)).ok()?;
                match lookup(&graph) {
                    Lookup::Hit(c) => c,
                    Lookup::Miss(_) => return None,
                }
            }
            Lookup::Miss(None) => return None,
        };
        // Every node a kernel reads is computed by an earlier one.
        let mut last_use = vec![None; graph.len()];
        let mut computed = vec![false; graph.len()];
        for (k, t) in cached.templates.iter().enumerate() {
            for s in &t.sources {
                if let Some(Ref::Node(p)) = s.array {
                    if !computed.get(p).copied().unwrap_or(false) {
                        return None;
                    }
                    last_use[p] = Some(k);
                }
            }
            for &p in &t.outputs {
                *computed.get_mut(p)? = true;
            }
        }
        let position = |set: &[Array], a: &Array| set.iter().position(|b| b.id() == a.id());
        let binds = cached
            .ext
            .iter()
            .map(|a| match position(inputs, a) {
                Some(index) => match &*a.state() {
                    NodeState::Ready(v) => Some(Bind::Input {
                        index,
                        dtype: a.dtype(),
                        layout: v.layout.clone(),
                    }),
                    NodeState::Pending(_) => None,
                },
                None => position(constants, a).map(|_| Bind::Fixed(a.clone())),
            })
            .collect::<Option<Vec<_>>>()?;
        let outputs = outputs
            .iter()
            .map(|o| Some((graph.pos(o).filter(|&p| computed[p])?, o.dtype())))
            .collect::<Option<Vec<_>>>()?;
        let mut last_use: Vec<usize> = last_use.into_iter().map(|k| k.unwrap_or(0)).collect();
        for &(p, _) in &outputs {
            last_use[p] = usize::MAX;
        }
        let output_types = cached
            .templates
            .iter()
            .map(|t| {
                t.outputs
                    .iter()
                    .map(|&p| (graph.nodes[p].shape().to_vec(), graph.nodes[p].dtype()))
                    .collect()
            })
            .collect();
        Some(CompiledGraph {
            template: Arc::clone(&cached.templates),
            binds,
            shared: shared_inputs(inputs),
            outputs,
            output_types,
            last_use,
        })
    }

    /// Points in the kernels' iteration spaces, together.
    pub fn points(&self) -> usize {
        self.template
            .iter()
            .map(|t| crate::shape::numel(&t.shape))
            .sum()
    }

    /// Number of kernels a run launches.
    pub fn kernels(&self) -> usize {
        self.template.len()
    }

    /// Runs the kernels on `inputs` on this thread's engine: the outputs,
    /// computed. `Ok(None)` (nothing ran) when the inputs are not what the
    /// graph was captured with (count, dtypes, layouts, readiness, which
    /// are the same array) or when a device other than the CPU could run
    /// them (the general path then places them).
    ///
    /// # Errors
    /// What a kernel's run reports (an interrupt, a failed allocation).
    pub fn run(&self, inputs: &[Array]) -> Result<Option<Vec<Array>>> {
        catch_panic("eval", || {
            crate::engine::with_current(|engine| {
                if !engine.cpu_only(engine.policy_now(None)) || !self.same_sharing(inputs) {
                    return Ok(None);
                }
                let Some(buffers) = self.bind(inputs) else {
                    return Ok(None);
                };
                let backend = engine.backend(DeviceKind::Cpu)?;
                let mut values: Vec<Option<Value>> = vec![None; self.last_use.len()];
                for (k, t) in self.template.iter().enumerate() {
                    let mut sources = Vec::with_capacity(t.sources.len());
                    for s in &t.sources {
                        let buffer = match s.array {
                            Some(Ref::Ext(j)) => Arc::clone(&buffers[j]),
                            Some(Ref::Node(p)) => match &values[p] {
                                Some(v) => Arc::clone(&v.buffer),
                                None => {
                                    return Err(Error::internal(
                                        "eval",
                                        "an intermediate of a compiled graph is missing",
                                    ))
                                }
                            },
                            None => {
                                sources.push(BoundSource::Index { layout: &s.layout });
                                continue;
                            }
                        };
                        sources.push(BoundSource::Buffer {
                            buffer,
                            layout: &s.layout,
                        });
                    }
                    let bound = BoundKernel {
                        shape: &t.shape,
                        outputs: self.output_types[k].clone(),
                        body: BoundBody::Fused {
                            program: &t.program,
                            sources,
                            reduce: t.reduce.as_ref(),
                        },
                    };
                    crate::interrupt::check("eval")?;
                    let name = || crate::fuse::fused_name(t.reduce.as_ref(), &t.fused);
                    let out = crate::exec::run_bound_on_cpu(engine, backend, &bound, name)?;
                    drop(bound);
                    for (&p, v) in t.outputs.iter().zip(out) {
                        values[p] = Some(v);
                    }
                    // Intermediates go once their last reader ran.
                    for (v, &last) in values.iter_mut().zip(&self.last_use) {
                        if last == k {
                            *v = None;
                        }
                    }
                }
                backend.finish()?;
                Ok(Some(self.results(&values)?))
            })
        })
    }

    /// Whether the same inputs are one array as at capture.
    fn same_sharing(&self, inputs: &[Array]) -> bool {
        inputs.len() == self.shared.len()
            && inputs.iter().enumerate().all(|(i, a)| {
                let first = inputs[..i].iter().position(|b| b.id() == a.id());
                first.unwrap_or(i) == self.shared[i]
            })
    }

    /// The buffers each [`Bind`] reads on this run, or `None` when an input
    /// is not ready in the captured dtype and layout.
    fn bind(&self, inputs: &[Array]) -> Option<Vec<Arc<crate::buffer::Buffer>>> {
        self.binds
            .iter()
            .map(|b| match b {
                Bind::Input {
                    index,
                    dtype,
                    layout,
                } => {
                    let a = inputs.get(*index)?;
                    if a.dtype() != *dtype {
                        return None;
                    }
                    match &*a.state() {
                        NodeState::Ready(v) if v.layout == *layout => Some(Arc::clone(&v.buffer)),
                        _ => None,
                    }
                }
                Bind::Fixed(a) => a.ready_buffer(),
            })
            .collect()
    }

    /// The requested outputs' values as new arrays, in requested order.
    fn results(&self, values: &[Option<Value>]) -> Result<Vec<Array>> {
        self.outputs
            .iter()
            .map(|&(p, dtype)| {
                let v = values[p]
                    .as_ref()
                    .ok_or_else(|| Error::internal("eval", "a compiled output was not computed"))?;
                Ok(Array::new_ready(Op::Input, dtype, v.clone()))
            })
            .collect()
    }
}

/// For each input, the first input that is the same array.
fn shared_inputs(inputs: &[Array]) -> Vec<usize> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            inputs[..i]
                .iter()
                .position(|b| b.id() == a.id())
                .unwrap_or(i)
        })
        .collect()
}
