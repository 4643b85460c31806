//! The direct path: one op on computed host inputs (an elementwise op, a
//! trailing-axis reduction, a library call), run at once without collecting
//! a graph, fusing, binding or planning.
//!
//! Most NumPy code calls one function at a time on arrays that are already
//! computed (`np.asarray(xa + xb)`, `x.sum()`). For 1,000 elements the
//! general evaluation cost about ten times the loop. When only the CPU can
//! run anything ([`crate::engine::Engine`] checks that), an evaluation of
//! one such array comes here first; anything else (a pending input, a view
//! that needs a gather, a reduction over leading axes) declines and takes
//! the general path. Work for several threads is split as the fused path
//! splits it: elementwise ops into its tasks, each one loop; reductions on
//! their fixed task grid. The loops are the fused kernels' own
//! ([`crate::cpu::direct`]), so results are the same bits.

use crate::array::{Array, NodeState, Value};
use crate::buffer::Buffer;
use crate::cpu::direct::{self, DirectOp, Operand};
use crate::device::DeviceKind;
use crate::dtype::{DType, Scalar};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::op::Op;
use crate::shape::Layout;
use std::sync::Arc;

/// Computes `a` when it is one elementwise op or one reduction over the
/// trailing axes, of computed contiguous host inputs, or one library call
/// on computed host inputs.
/// `Ok(false)`: not such an array (nothing ran).
pub(crate) fn run_direct(engine: &Engine, a: &Array) -> Result<bool> {
    let contiguous = |b: Option<Buffer>| {
        b.map(|buffer| Value {
            buffer: Arc::new(buffer),
            layout: Layout::contiguous(a.shape()),
        })
    };
    let value = match a.op() {
        Op::Unary(_) | Op::Binary(_) => contiguous(elementwise(a)?),
        Op::Reduce { .. } => contiguous(reduction(a)?),
        Op::Library { .. } => library(a)?,
        _ => None,
    };
    let Some(value) = value else {
        return Ok(false);
    };
    engine.count_kernel(DeviceKind::Cpu);
    a.set_value(value);
    Ok(true)
}

/// The pending reductions that `a`, one elementwise op, waits for, when
/// they are all it waits for (besides constants). Computing them first
/// leaves `a` for the direct path and splits nothing that would have fused:
/// a reduction's result ends its kernel in the fused path too, and sibling
/// reductions still share theirs when evaluated together.
pub(crate) fn pending_reductions(a: &Array) -> Option<Vec<Array>> {
    if !matches!(a.op(), Op::Unary(_) | Op::Binary(_)) || a.is_ready() {
        return None;
    }
    a.with_pending_inputs(|inputs| {
        let mut reductions = Vec::new();
        for i in inputs {
            match i.op() {
                _ if i.is_ready() => {}
                Op::Full(_) => {}
                Op::Reduce { .. } => reductions.push(i.clone()),
                _ => return None,
            }
        }
        (!reductions.is_empty()).then_some(reductions)
    })?
}

/// A library call (matmul, solve, FFT, scan...) whose inputs are computed
/// on the host: the call itself, as the fused path runs it (its results
/// kept for the call's other outputs), without the graph around it.
fn library(a: &Array) -> Result<Option<Value>> {
    let Op::Library { call, output } = a.op() else {
        return Ok(None);
    };
    if call.results().is_none() {
        let Some(inputs) = a.pending_inputs() else {
            return Ok(None);
        };
        let mut values = Vec::with_capacity(inputs.len());
        for i in &inputs {
            if !i.is_ready() {
                crate::graph::resolve_ready_view(i);
            }
            match i.ready_value() {
                Some(v) if v.buffer.residency().is_valid_on(DeviceKind::Cpu) => values.push(v),
                _ => return Ok(None),
            }
        }
        crate::interrupt::check("eval")?;
        let results = call.op.run_cpu(&values)?;
        crate::exec::check_values(call.op.name(), &call.outputs, &results)?;
        let _ = call.results.set(results);
    }
    let results = call
        .results()
        .ok_or_else(|| Error::internal("eval", "library results not stored"))?;
    let value = results
        .get(*output)
        .ok_or_else(|| Error::internal("eval", "library output out of range"))?;
    Ok(Some(value.clone()))
}

/// Whether `points` of a kernel doing `flops` per point would stay on the
/// calling thread in the fused path (the same formula).
pub(crate) fn one_thread(points: usize, flops: f64) -> bool {
    points > 0 && (points as f64) * (1.0 + flops / 4.0) < crate::cpu::parallel_min_work()
}

/// A computed input as the direct loops read it: its buffer (shared, not
/// copied), where its elements start, and whether they are one contiguous
/// run (else one element repeated).
struct HostInput {
    buffer: Arc<Buffer>,
    offset: usize,
    contiguous: bool,
}

/// `input`'s value when its `n` elements can be read as one run
/// (contiguous) or one repeated element (all strides 0) on the host. Read
/// in place: the common call must not copy a layout per input.
fn host_input(input: &Array, n: usize) -> Option<HostInput> {
    let state = input.state();
    let NodeState::Ready(v) = &*state else {
        return None;
    };
    let contiguous = v.layout.is_contiguous();
    let runs = contiguous || v.layout.strides.iter().all(|&s| s == 0);
    (v.layout.numel() == n && runs && v.buffer.residency().is_valid_on(DeviceKind::Cpu)).then(
        || HostInput {
            buffer: Arc::clone(&v.buffer),
            offset: v.layout.offset,
            contiguous,
        },
    )
}

/// An elementwise op's input: a constant (a pending `full` node, read as
/// one value as the fused program inlines it) or a computed host input.
enum Held {
    Const(Scalar),
    Host(HostInput),
}

/// How the direct loop reads `held` (`n` elements); an empty slot is never
/// read (the operands are cut to the op's inputs).
fn operand(held: &Option<Held>, n: usize) -> Operand<'_> {
    match held {
        Some(Held::Host(h)) if h.contiguous && n > 1 => Operand::Run {
            buffer: &h.buffer,
            offset: h.offset,
        },
        Some(Held::Host(h)) => Operand::Element {
            buffer: &h.buffer,
            pos: h.offset,
        },
        Some(Held::Const(s)) => Operand::Const(*s),
        None => Operand::Const(Scalar::Bool(false)),
    }
}

fn elementwise(a: &Array) -> Result<Option<Buffer>> {
    let op = match a.op() {
        Op::Unary(u) => DirectOp::Unary(*u),
        Op::Binary(b) => DirectOp::Binary(*b),
        _ => return Ok(None),
    };
    let n = a.numel();
    if n == 0 {
        return Ok(None);
    }
    // Unary and binary ops have at most two inputs: held in place, without
    // the vectors a general walk allocates.
    let gathered = a.with_pending_inputs(|inputs| {
        let input = inputs.first()?.dtype();
        let same_dtype = match op {
            DirectOp::Binary(b) if b.is_comparison() => a.dtype() == DType::Bool,
            _ => a.dtype() == input,
        };
        if inputs.len() > 2
            || !same_dtype
            || !direct::supports(input)
            || inputs.iter().any(|i| i.dtype() != input)
        {
            return None;
        }
        let mut held: [Option<Held>; 2] = [None, None];
        for (slot, i) in held.iter_mut().zip(inputs) {
            *slot = Some(match i.op() {
                Op::Full(s) if !i.is_ready() => Held::Const(*s),
                _ => Held::Host(host_input(i, n)?),
            });
        }
        Some((input, held, inputs.len()))
    });
    let Some(Some((input, held, count))) = gathered else {
        return Ok(None);
    };
    let operands = [operand(&held[0], n), operand(&held[1], n)];
    crate::interrupt::check("eval")?;
    // Work for several threads is split as the fused path splits it: one
    // op's loop per task, where the fused kernel would run the
    // interpreter chunk by chunk (a third slower for a copy-like op).
    let parallel = !one_thread(n, op.flops());
    direct::run(op, input, a.dtype(), &operands[..count], n, parallel).map(Some)
}

/// A reduction over trailing axes of a computed contiguous input (the
/// fused path's `Inner` walk with nothing before the reduction).
fn reduction(a: &Array) -> Result<Option<Buffer>> {
    let Op::Reduce { op, axes, .. } = a.op() else {
        return Ok(None);
    };
    let Some(Some(input)) = a.with_pending_inputs(|inputs| match inputs {
        [input] => Some(input.clone()),
        _ => None,
    }) else {
        return Ok(None);
    };
    let shape = input.shape();
    let trailing = axes
        .iter()
        .enumerate()
        .all(|(i, &ax)| ax == shape.len() - axes.len() + i);
    let n = input.numel();
    if !trailing || n == 0 || !direct::supports(input.dtype()) {
        return Ok(None);
    }
    let Some(v) = host_input(&input, n).filter(|v| v.contiguous) else {
        return Ok(None);
    };
    let reduced: usize = axes.iter().map(|&ax| shape[ax]).product();
    crate::interrupt::check("eval")?;
    // Work for several threads on the reduction's fixed task grid, as the
    // fused kernel would run it (the results do not depend on the split).
    direct::reduce(
        *op,
        &v.buffer,
        v.offset,
        n / reduced.max(1),
        reduced,
        a.dtype(),
        !one_thread(n, 0.0),
    )
    .map(Some)
}
