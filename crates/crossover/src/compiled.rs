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
use crate::buffer::Buffer;
use crate::cpu::direct::{self, DirectOp, Operand};
use crate::device::{BoundBody, BoundKernel, BoundSource, DeviceKind};
use crate::dtype::{DType, Scalar};
use crate::error::{catch_panic, Error, Result};
use crate::expr::ir::InstKind;
use crate::fuse_cache::{fuse_missed, lookup, KernelT, Lookup, Ref, Templates};
use crate::graph::Graph;
use crate::op::Op;
use crate::shape::Layout;
use smallvec::SmallVec;
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
    /// Per kernel, its one op when the direct path's loop can run it.
    direct: Vec<Option<DirectStep>>,
}

/// A kernel that is one elementwise op on whole runs or single elements
/// (`total + s` or `x - m` after a reduction), run by the direct path's loop.
/// That loop is the one the interpreter runs for the op, so the bits are the
/// same; what goes is preparing the interpreter and its registers, about
/// half of a one-point kernel's 0.5 us in a jitted loop's replay.
struct DirectStep {
    op: DirectOp,
    input: DType,
    /// Per operand of the op, in order.
    operands: Vec<StepOperand>,
}

enum StepOperand {
    /// Source `index` of the kernel: `run` elements from `offset`, or the
    /// element at `offset` for every point.
    Source {
        index: usize,
        offset: usize,
        run: bool,
    },
    Const(Scalar),
}

impl DirectStep {
    /// `t`'s op when it is a direct one: one unary or binary op of loaded
    /// sources (contiguous runs or one repeated element) and constants, of
    /// one dtype the direct loops support, with nothing else in the program.
    fn of(t: &KernelT) -> Option<DirectStep> {
        let program = &t.program;
        let n = crate::shape::numel(&t.shape);
        let (last, _) = program.insts.split_last()?;
        if t.reduce.is_some() || n == 0 || program.outputs != [program.insts.len() as u32 - 1] {
            return None;
        }
        let (op, regs) = match last.kind {
            InstKind::Unary(u, a) => (DirectOp::Unary(u), vec![a]),
            InstKind::Binary(b, x, y) => (DirectOp::Binary(b), vec![x, y]),
            _ => return None,
        };
        // Every other instruction is one of the op's operands.
        if regs.len() + 1 != program.insts.len() || (regs.len() == 2 && regs[0] == regs[1]) {
            return None;
        }
        let input = program.insts.get(regs[0] as usize)?.dtype;
        let output = match op {
            DirectOp::Binary(b) if b.is_comparison() => DType::Bool,
            _ => input,
        };
        if last.dtype != output || !direct::supports(input) {
            return None;
        }
        let operands = regs
            .iter()
            .map(|&r| {
                let inst = program.insts.get(r as usize)?;
                if inst.dtype != input {
                    return None;
                }
                match inst.kind {
                    InstKind::Const(c) => Some(StepOperand::Const(c)),
                    InstKind::Load(index) => {
                        let s = t.sources.get(index as usize)?;
                        s.array?;
                        let run = s.layout.is_contiguous() && n > 1;
                        let repeated = n == 1 || s.layout.strides.iter().all(|&st| st == 0);
                        (s.layout.numel() == n && (run || repeated)).then_some(
                            StepOperand::Source {
                                index: index as usize,
                                offset: s.layout.offset,
                                run,
                            },
                        )
                    }
                    _ => None,
                }
            })
            .collect::<Option<Vec<_>>>()?;
        Some(DirectStep {
            op,
            input,
            operands,
        })
    }

    /// Runs the op on the kernel's source buffers (`None`: one is not on
    /// the host, so the kernel takes the bound path, which copies it in).
    fn run(
        &self,
        t: &KernelT,
        sources: &[Option<Arc<Buffer>>],
        output: DType,
    ) -> Result<Option<Buffer>> {
        let mut operands = Vec::with_capacity(self.operands.len());
        for o in &self.operands {
            operands.push(match o {
                StepOperand::Const(c) => Operand::Const(*c),
                StepOperand::Source { index, offset, run } => {
                    let Some(buffer) = sources.get(*index).and_then(Option::as_ref) else {
                        return Ok(None);
                    };
                    if !buffer.residency().is_valid_on(DeviceKind::Cpu) {
                        return Ok(None);
                    }
                    match run {
                        true => Operand::Run {
                            buffer,
                            offset: *offset,
                        },
                        false => Operand::Element {
                            buffer,
                            pos: *offset,
                        },
                    }
                }
            });
        }
        let n = crate::shape::numel(&t.shape);
        let parallel = !crate::direct::one_thread(n, self.op.flops());
        direct::run(self.op, self.input, output, &operands, n, parallel).map(Some)
    }
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
        let direct = cached.templates.iter().map(DirectStep::of).collect();
        Some(CompiledGraph {
            direct,
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

    /// How many of them are one elementwise op that a run hands to the
    /// direct path's loop (the same bits, without preparing the
    /// interpreter).
    pub fn direct_kernels(&self) -> usize {
        self.direct.iter().flatten().count()
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
        if !self.same_sharing(inputs) {
            return Ok(None);
        }
        let Some(buffers) = self.bind(inputs) else {
            return Ok(None);
        };
        let dtypes = self.outputs.iter().map(|&(_, dtype)| dtype);
        Ok(self.execute(buffers)?.map(|values| {
            values
                .into_iter()
                .zip(dtypes)
                .map(|(v, dtype)| Array::new_ready(Op::Input, dtype, v))
                .collect()
        }))
    }

    /// [`CompiledGraph::run`] on inputs given as values (each one's dtype
    /// its buffer's), all distinct arrays: the outputs' values, without
    /// the arrays a front end would make of its inputs only to hand them
    /// over (two allocations and a lock each). `Ok(None)` as for `run`,
    /// and when the graph was captured with an input shared.
    ///
    /// # Errors
    /// What a kernel's run reports (an interrupt, a failed allocation).
    pub fn run_values(&self, inputs: &[Value]) -> Result<Option<Vec<Value>>> {
        let distinct = self.shared.iter().enumerate().all(|(i, &s)| s == i);
        if inputs.len() != self.shared.len() || !distinct {
            return Ok(None);
        }
        let Some(buffers) = self.bind_values(inputs) else {
            return Ok(None);
        };
        self.execute(buffers)
    }

    /// Runs the kernels on the bound input buffers: the requested outputs'
    /// values, in requested order.
    fn execute(&self, buffers: Vec<Arc<Buffer>>) -> Result<Option<Vec<Value>>> {
        catch_panic("eval", || {
            crate::engine::with_current(|engine| {
                if !engine.cpu_only(engine.policy_now(None)) {
                    return Ok(None);
                }
                let backend = engine.backend(DeviceKind::Cpu)?;
                let mut values: Vec<Option<Value>> = vec![None; self.last_use.len()];
                for (k, t) in self.template.iter().enumerate() {
                    let mut buffers_of: SmallVec<[Option<Arc<Buffer>>; 4]> =
                        SmallVec::with_capacity(t.sources.len());
                    for s in &t.sources {
                        buffers_of.push(match s.array {
                            Some(Ref::Ext(j)) => Some(Arc::clone(&buffers[j])),
                            Some(Ref::Node(p)) => match &values[p] {
                                Some(v) => Some(Arc::clone(&v.buffer)),
                                None => {
                                    return Err(Error::internal(
                                        "eval",
                                        "an intermediate of a compiled graph is missing",
                                    ))
                                }
                            },
                            None => None,
                        });
                    }
                    crate::interrupt::check("eval")?;
                    match self.run_direct(k, t, &buffers_of)? {
                        Some(v) => {
                            engine.count_kernel(DeviceKind::Cpu);
                            values[t.outputs[0]] = Some(v);
                        }
                        None => {
                            let out = self.run_bound(engine, backend, k, t, buffers_of)?;
                            for (&p, v) in t.outputs.iter().zip(out) {
                                values[p] = Some(v);
                            }
                        }
                    }
                    // Intermediates go once their last reader ran.
                    for (v, &last) in values.iter_mut().zip(&self.last_use) {
                        if last == k {
                            *v = None;
                        }
                    }
                }
                backend.finish()?;
                Ok(Some(self.results(&mut values)?))
            })
        })
    }

    /// Kernel `k`'s output through the direct path's loop, when it is one
    /// op there ([`DirectStep`]).
    fn run_direct(
        &self,
        k: usize,
        t: &KernelT,
        sources: &[Option<Arc<Buffer>>],
    ) -> Result<Option<Value>> {
        let (Some(step), [(shape, dtype)]) = (&self.direct[k], &self.output_types[k][..]) else {
            return Ok(None);
        };
        Ok(step.run(t, sources, *dtype)?.map(|b| Value {
            buffer: Arc::new(b),
            layout: Layout::contiguous(shape),
        }))
    }

    /// Kernel `k`'s outputs through the CPU backend, bound to `sources`
    /// (`None`: a flat-index source).
    fn run_bound(
        &self,
        engine: &crate::engine::Engine,
        backend: &Arc<dyn crate::device::Backend>,
        k: usize,
        t: &KernelT,
        buffers: SmallVec<[Option<Arc<Buffer>>; 4]>,
    ) -> Result<Vec<Value>> {
        let sources = t
            .sources
            .iter()
            .zip(buffers)
            .map(|(s, b)| match b {
                Some(buffer) => BoundSource::Buffer {
                    buffer,
                    layout: &s.layout,
                },
                None => BoundSource::Index { layout: &s.layout },
            })
            .collect();
        let bound = BoundKernel {
            shape: &t.shape,
            outputs: std::borrow::Cow::Borrowed(&self.output_types[k]),
            body: BoundBody::Fused {
                program: &t.program,
                sources,
                reduce: t.reduce.as_ref(),
            },
        };
        let name = || crate::fuse::fused_name(t.reduce.as_ref(), &t.fused);
        crate::exec::run_bound_on_cpu(engine, backend, &bound, name)
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
    fn bind(&self, inputs: &[Array]) -> Option<Vec<Arc<Buffer>>> {
        self.bind_with(|index, dtype, layout| {
            let a = inputs.get(index).filter(|a| a.dtype() == dtype)?;
            match &*a.state() {
                NodeState::Ready(v) if v.layout == *layout => Some(Arc::clone(&v.buffer)),
                _ => None,
            }
        })
    }

    /// [`CompiledGraph::bind`] for inputs given as values.
    fn bind_values(&self, inputs: &[Value]) -> Option<Vec<Arc<Buffer>>> {
        self.bind_with(|index, dtype, layout| {
            let v = inputs.get(index)?;
            (v.buffer.dtype() == dtype && v.layout == *layout).then(|| Arc::clone(&v.buffer))
        })
    }

    /// The buffers of the binds, `input(index, dtype, layout)` giving the
    /// run's input `index` when it is ready in that dtype and layout.
    fn bind_with(
        &self,
        input: impl Fn(usize, DType, &Layout) -> Option<Arc<Buffer>>,
    ) -> Option<Vec<Arc<Buffer>>> {
        self.binds
            .iter()
            .map(|b| match b {
                Bind::Input {
                    index,
                    dtype,
                    layout,
                } => input(*index, *dtype, layout),
                Bind::Fixed(a) => a.ready_buffer(),
            })
            .collect()
    }

    /// The requested outputs' values, in requested order (taken from
    /// `values` at an output's last request, so a result's buffer is its
    /// own: a front end hands it over without a copy).
    fn results(&self, values: &mut [Option<Value>]) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(self.outputs.len());
        for (i, &(p, _)) in self.outputs.iter().enumerate() {
            let again = self.outputs[i + 1..].iter().any(|&(q, _)| q == p);
            let v = match again {
                true => values[p].clone(),
                false => values[p].take(),
            };
            out.push(
                v.ok_or_else(|| Error::internal("eval", "a compiled output was not computed"))?,
            );
        }
        Ok(out)
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
