//! One elementwise op on computed inputs, run without a program: the
//! common path of a NumPy-style call on small arrays (`np.asarray(xa + xb)`),
//! where collecting the graph, looking the fused kernel up, binding it and
//! preparing the interpreter cost ten times the loop itself.
//!
//! It calls the interpreter's own per-op loops ([`interp::unary`],
//! [`interp::binary`], [`interp::compare`]) over the whole range, compiled
//! for the same instruction sets, and the reduction kernel itself on a
//! one-load program, so results are the fused kernels' bits. The graph side
//! (which arrays qualify) is [`crate::direct`].

use super::gather::Access;
use super::interp::{self, with_type, Arg, Bound, Data, Prepared};
use super::regs::{read_val, val_of, FromData, Val};
use super::simd::simd_dispatch;
use super::OutPtr;
use crate::buffer::Buffer;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::expr::ir::{Inst, InstKind, Program, SourceKind};
use crate::fuse::{ReduceMode, ReducePlan};
use crate::op::{BinaryOp, ReduceOp, UnaryOp};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// An elementwise op the direct path runs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum DirectOp {
    Unary(UnaryOp),
    Binary(BinaryOp),
}

impl DirectOp {
    /// Flops per point, as the fused path's split counts them.
    pub(crate) fn flops(self) -> f64 {
        match self {
            DirectOp::Unary(u) => u.flops(),
            DirectOp::Binary(b) => b.flops(),
        }
    }
}

/// An operand: `n` elements of a host buffer from `offset`, or one value
/// for every element.
pub(crate) enum Operand<'a> {
    Run { buffer: &'a Buffer, offset: usize },
    Element { buffer: &'a Buffer, pos: usize },
    Const(Scalar),
}

/// Whether values of `d` sit in memory as the interpreter's registers hold
/// them (it widens the small integers, which the direct path leaves to it).
pub(crate) fn supports(d: DType) -> bool {
    matches!(
        d,
        DType::Bool | DType::I32 | DType::I64 | DType::U64 | DType::F32 | DType::F64
    )
}

/// An operand bound to its data.
#[derive(Clone, Copy)]
enum Src<'a> {
    Run(Data<'a>, usize),
    Splat(Val),
}

impl<'a> Src<'a> {
    /// The operand from point `start` on.
    fn from(self, start: usize) -> Src<'a> {
        match self {
            Src::Run(data, offset) => Src::Run(data, offset + start),
            splat => splat,
        }
    }

    #[inline(always)]
    fn arg<T: FromData<'a>>(self, n: usize) -> Arg<'a, T> {
        match self {
            Src::Run(data, offset) => Arg::Slice(&T::from_data(data)[offset..offset + n]),
            Src::Splat(v) => Arg::Splat(T::from_val(v)),
        }
    }
}

/// Runs `op` over `n` points of `operands` (all of dtype `input`) into a new
/// buffer of dtype `output`, on the calling thread, or, when `parallel`,
/// in tasks of [`super::parallel_task`] points shared with the pool
/// (each task one loop over its range: the results do not depend on the
/// split). Operand runs must hold `n` elements from their offset (the
/// caller checked the layouts).
pub(crate) fn run(
    op: DirectOp,
    input: DType,
    output: DType,
    operands: &[Operand<'_>],
    n: usize,
    parallel: bool,
) -> Result<Buffer> {
    let mut srcs = [Src::Splat(Val::F64(0.0)); 2];
    for (s, o) in srcs.iter_mut().zip(operands) {
        *s = match o {
            Operand::Run { buffer, offset } => {
                check_run(buffer, *offset, n)?;
                Src::Run(super::data_of(buffer)?, *offset)
            }
            Operand::Element { buffer, pos } => Src::Splat(read_val(super::data_of(buffer)?, *pos)),
            Operand::Const(s) => Src::Splat(val_of(*s, input)),
        };
    }
    let mut out = Buffer::alloc(output, n)?;
    // The task size reads the pool's thread count: only when splitting.
    let task = match parallel {
        true => super::parallel_task(1.0 + op.flops() / 4.0, n),
        false => n,
    };
    if n <= task {
        // SAFETY: `out` holds `n` elements of `output`; the bytes are
        // reborrowed as the register type of that dtype, whose size it is
        // (`supports`).
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_byte_ptr(), n * output.size()) };
        if direct_dispatch(op, input, srcs[0], srcs[1], n, bytes) {
            return Err(interp::negative_int_power());
        }
        return Ok(out);
    }
    let size = output.size();
    let writer = OutPtr::new(&mut out);
    let negative = AtomicBool::new(false);
    super::tasks::for_each_task(n.div_ceil(task), |t| {
        if crate::interrupt::requested() {
            return;
        }
        let (start, len) = (t * task, task.min(n - t * task));
        // SAFETY: tasks cover disjoint ranges of the output, inside it.
        let bytes = unsafe { writer.slice_mut::<u8>(start * size, len * size) };
        let (a, b) = (srcs[0].from(start), srcs[1].from(start));
        if direct_dispatch(op, input, a, b, len, bytes) {
            negative.store(true, Ordering::Relaxed);
        }
    });
    crate::interrupt::check("eval")?;
    if negative.load(Ordering::Relaxed) {
        return Err(interp::negative_int_power());
    }
    Ok(out)
}

/// Reduces `kept` runs of `reduced` elements of `buffer` from `offset` with
/// `op` into a new buffer of dtype `output`: the fused reduction kernel of a
/// program that only loads its input, on the calling thread or, when
/// `parallel`, with the pool (the same task grid either way).
pub(crate) fn reduce(
    op: ReduceOp,
    buffer: &Buffer,
    offset: usize,
    kept: usize,
    reduced: usize,
    output: DType,
    parallel: bool,
) -> Result<Buffer> {
    check_run(buffer, offset, kept * reduced)?;
    let source = Bound::Buffer {
        data: super::data_of(buffer)?,
        access: Access::Contiguous { offset },
    };
    let prep = Prepared::new(load_program(buffer.dtype()), vec![source])?;
    let plan = ReducePlan {
        ops: vec![op],
        mode: ReduceMode::Inner,
        kept,
        reduced,
    };
    let mut out = Buffer::alloc(output, kept)?;
    let parallel = parallel && super::threads() > 1;
    super::reduce::run(&prep, &plan, &[OutPtr::new(&mut out)], parallel);
    prep.check_domain()?;
    Ok(out)
}

/// The program of a plain reduction, which only loads its input: made once
/// per dtype and kept with its last uses (a small reduction's call is
/// otherwise four allocations of program and tables).
fn load_program(input: DType) -> &'static Program {
    static PROGRAMS: [OnceLock<Program>; DType::ALL.len()] =
        [const { OnceLock::new() }; DType::ALL.len()];
    PROGRAMS[input as usize].get_or_init(|| Program {
        sources: vec![SourceKind::Buffer(input)],
        insts: vec![Inst {
            kind: InstKind::Load(0),
            dtype: input,
        }],
        outputs: vec![0],
        ..Program::default()
    })
}

/// [`Error::Internal`] unless `n` elements from `offset` lie in `buffer`
/// (the graph side checked the layout; this keeps the loops in bounds).
fn check_run(buffer: &Buffer, offset: usize, n: usize) -> Result<()> {
    if offset + n > buffer.len() {
        return Err(Error::internal(
            "cpu kernel",
            format!(
                "{n} points from {offset} exceed a buffer of {}",
                buffer.len()
            ),
        ));
    }
    Ok(())
}

simd_dispatch! {
    fn direct_dispatch<'a>(op: DirectOp, input: DType, a: Src<'a>, b: Src<'a>, n: usize, out: &mut [u8]) -> bool => direct_inline
}

/// The loop; `true` when an integer power met a negative exponent.
#[inline(always)]
fn direct_inline<'a>(
    op: DirectOp,
    input: DType,
    a: Src<'a>,
    b: Src<'a>,
    n: usize,
    out: &mut [u8],
) -> bool {
    match op {
        DirectOp::Unary(u) => with_type!(input, T => {
            interp::unary::<T>(u, a.arg::<T>(n), interp::view_mut::<T>(out, n));
            false
        }),
        DirectOp::Binary(c) if c.is_comparison() => with_type!(input, T => {
            interp::compare::<T>(c, a.arg::<T>(n), b.arg::<T>(n), interp::view_mut::<u8>(out, n));
            false
        }),
        DirectOp::Binary(c) => with_type!(input, T => {
            let (x, y) = (a.arg::<T>(n), b.arg::<T>(n));
            let negative = c == BinaryOp::Pow && !input.is_float() && interp::has_negative(y, n);
            interp::binary::<T>(c, x, y, interp::view_mut::<T>(out, n));
            negative
        }),
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
