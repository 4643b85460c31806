//! What lowering made of a program, kept on the program.
//!
//! Every call of a compiled kernel lowered its program again and looked
//! the result up in the kernel cache (a lock, a hash and a comparison of
//! the spec): about 1,900 of the 31,600 instructions of
//! `xo.evaluate("a*b + sin(a) + cos(b)")` on 1,000 float32 points. A
//! program is shared unchanged between calls (the fusion cache hands out
//! the same one), and of a call lowering reads only how each register is
//! read: in place, as a constant, as random draws, or otherwise. So the
//! first lowering is kept on the program with those reads; a later call
//! that reads the same way (the common case: the same layouts again) takes
//! it without lowering, and any other call lowers as before.

use super::{compiled, lower, Isa, Kernel, Mode, Spec, Splat};
use crate::cpu::interp::Prepared;
use crate::expr::ir::{InstKind, Reg};
use smallvec::SmallVec;
use std::sync::Arc;

/// A program's first lowering and the reads it was made for.
pub(crate) struct Lowering {
    mode: Mode,
    isa: Isa,
    reads: Reads,
    lowered: Option<Lowered>,
}

/// A lowered program with its compiled kernel: what [`super::bind`]
/// binds a call's sources and constants to.
pub(super) struct Lowered {
    pub(super) spec: Spec,
    pub(super) kernel: Arc<Kernel>,
    /// The registers read as the kernel's sources, in order.
    pub(super) sources: Vec<Reg>,
    pub(super) splats: Vec<Splat>,
}

/// How a call reads each register of the program, as lowering asks it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    InPlace,
    Splat,
    Random,
    Other,
}

type Reads = SmallVec<[Read; 16]>;

fn reads(prep: &Prepared<'_>) -> Reads {
    prep.program
        .insts
        .iter()
        .enumerate()
        .map(|(r, inst)| {
            let r = r as Reg;
            match inst.kind {
                InstKind::Random { .. } if prep.random_input(r).is_some() => Read::Random,
                InstKind::Load(_) | InstKind::Const(_) if prep.in_place_bytes(r).is_some() => {
                    Read::InPlace
                }
                InstKind::Load(_) | InstKind::Const(_) if prep.splat_bits(r).is_some() => {
                    Read::Splat
                }
                _ => Read::Other,
            }
        })
        .collect()
}

fn lower_now(prep: &Prepared<'_>, mode: Mode, isa: Isa) -> Option<Lowered> {
    let (spec, sources, splats) = lower(prep, mode, isa)?;
    let kernel = compiled(&spec)?;
    Some(Lowered {
        spec,
        kernel,
        sources,
        splats,
    })
}

/// `f` of `prep`'s program lowered for `mode` and `isa` (`None`: the
/// compiler does not cover it), from the program's memo when this call
/// reads its registers as the memo's did.
pub(super) fn with_lowered<R>(
    prep: &Prepared<'_>,
    mode: Mode,
    isa: Isa,
    f: impl FnOnce(Option<&Lowered>) -> R,
) -> R {
    let reads = reads(prep);
    let memo = prep.program.jit_memo.get_or_init(|| Lowering {
        mode,
        isa,
        reads: reads.clone(),
        lowered: lower_now(prep, mode, isa),
    });
    if memo.mode == mode && memo.isa == isa && memo.reads == reads {
        f(memo.lowered.as_ref())
    } else {
        f(lower_now(prep, mode, isa).as_ref())
    }
}
