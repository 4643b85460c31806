//! The one elementwise IR: straight-line SSA instructions over a kernel's
//! sources, evaluated at every point of the kernel's iteration space.
//!
//! Register `r` is the result of instruction `r`. Sources are buffers read
//! through a layout, or a flat index (for arange and random sources). The CPU
//! interpreter runs a [`Program`] chunk by chunk; a GPU backend renders the
//! same program as source code. [`Program::key`] is its canonical text, used
//! to cache compiled kernels and to key measured timings.

use crate::dtype::{DType, Scalar};
use crate::op::{BinaryOp, UnaryOp};
use crate::rng::{Distribution, RandomKey};
use std::fmt::{self, Write};

/// A register: the index of the instruction that produced it.
pub type Reg = u32;

/// What a program input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// Elements of a buffer of this dtype.
    Buffer(DType),
    /// The flat index of each point in a source node's own row-major shape.
    Index,
}

/// One instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum InstKind {
    /// Read source `n` (a buffer).
    Load(u32),
    /// A constant.
    Const(Scalar),
    /// `start + i * step` at flat index `i` from source `index`; the element
    /// at `last.0` is exactly `last.1` (linspace's endpoint).
    Arange {
        index: u32,
        start: f64,
        step: f64,
        last: Option<(u64, f64)>,
    },
    /// Philox random values at flat index `i` from source `index` (always a
    /// contiguous run of indices).
    Random {
        index: u32,
        dist: Distribution,
        key: RandomKey,
    },
    Unary(UnaryOp, Reg),
    Binary(BinaryOp, Reg, Reg),
    Where(Reg, Reg, Reg),
    /// Convert register to this instruction's dtype.
    Cast(Reg),
}

/// An instruction and the dtype of its result.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub kind: InstKind,
    pub dtype: DType,
}

impl Inst {
    /// Registers this instruction reads.
    pub fn operands(&self) -> impl Iterator<Item = Reg> + '_ {
        let (a, b, c) = match self.kind {
            InstKind::Unary(_, a) | InstKind::Cast(a) => (Some(a), None, None),
            InstKind::Binary(_, a, b) => (Some(a), Some(b), None),
            InstKind::Where(c, a, b) => (Some(c), Some(a), Some(b)),
            _ => (None, None, None),
        };
        a.into_iter().chain(b).chain(c)
    }
}

/// A fused elementwise program.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub sources: Vec<SourceKind>,
    pub insts: Vec<Inst>,
    /// Registers that leave the program (written, or fed to a reduction).
    pub outputs: Vec<Reg>,
    /// [`Program::key`] once rendered.
    pub(crate) key_memo: Memo<String>,
    /// [`Program::last_uses`] once computed.
    pub(crate) last_uses_memo: Memo<Vec<usize>>,
    /// The CPU compiler's first lowering of the program (`cpu/jit/memo.rs`).
    pub(crate) jit_memo: Memo<crate::cpu::JitLowering>,
    /// The interpreter's first slot plan ([`crate::cpu::interp::SlotPlan`]).
    pub(crate) slots_memo: Memo<crate::cpu::interp::SlotPlan>,
}

/// Something derived from a program once and kept. A program is built by
/// pushing instructions and then shared unchanged between calls (the fusion
/// cache hands the same `Arc<Program>` to every call), while costing and
/// the GPU's launch plan ask for its key on every call (rendering it took
/// about 4,500 instructions each time, four times per call of a small
/// kernel with a GPU present) and the CPU's interpreter for its registers'
/// last uses (about 400 instructions and an allocation a call). A clone
/// starts empty (it may be changed); memos never make two programs unequal.
pub(crate) struct Memo<T>(std::sync::OnceLock<T>);

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo(std::sync::OnceLock::new())
    }
}

impl<T> Memo<T> {
    /// The kept value, made by `f` on first use.
    pub(crate) fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(f)
    }
}

impl<T> Clone for Memo<T> {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl<T> PartialEq for Memo<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Memo")
    }
}

impl Program {
    /// Appends an instruction and returns its register.
    pub fn push(&mut self, kind: InstKind, dtype: DType) -> Reg {
        self.insts.push(Inst { kind, dtype });
        self.key_memo = Memo::default();
        self.last_uses_memo = Memo::default();
        self.jit_memo = Memo::default();
        self.slots_memo = Memo::default();
        (self.insts.len() - 1) as Reg
    }

    pub fn dtype(&self, r: Reg) -> DType {
        self.insts[r as usize].dtype
    }

    /// Index of the last instruction reading each register (or, for
    /// outputs, `usize::MAX`), for register reuse.
    ///
    /// Computed on the first call and kept: a program is not changed once
    /// this has been asked (debug builds check it).
    pub fn last_uses(&self) -> &[usize] {
        let last = self
            .last_uses_memo
            .0
            .get_or_init(|| self.compute_last_uses());
        debug_assert_eq!(
            *last,
            self.compute_last_uses(),
            "a program changed after its last uses were taken"
        );
        last
    }

    fn compute_last_uses(&self) -> Vec<usize> {
        let mut last = vec![0usize; self.insts.len()];
        for (i, inst) in self.insts.iter().enumerate() {
            last[i] = last[i].max(i);
            for r in inst.operands() {
                last[r as usize] = i;
            }
        }
        for &o in &self.outputs {
            last[o as usize] = usize::MAX;
        }
        last
    }

    /// Number of arithmetic instructions (not loads or constants).
    pub fn op_count(&self) -> usize {
        self.insts
            .iter()
            .filter(|i| !matches!(i.kind, InstKind::Load(_) | InstKind::Const(_)))
            .count()
    }

    /// Estimated flops per iteration point.
    pub fn flops_per_point(&self) -> f64 {
        self.insts
            .iter()
            .map(|i| match i.kind {
                InstKind::Unary(u, _) => u.flops(),
                InstKind::Binary(b, _, _) => b.flops(),
                InstKind::Where(..) | InstKind::Cast(_) | InstKind::Arange { .. } => 1.0,
                InstKind::Random { dist, .. } => match dist {
                    Distribution::Uniform => 30.0,
                    Distribution::Normal => 70.0,
                },
                InstKind::Load(_) | InstKind::Const(_) => 0.0,
            })
            .sum()
    }

    /// Whether any instruction is a transcendental function.
    pub fn has_transcendental(&self) -> bool {
        self.insts.iter().any(|i| {
            matches!(i.kind, InstKind::Unary(u, _) if u.is_transcendental())
                || matches!(
                    i.kind,
                    InstKind::Binary(BinaryOp::Pow, ..) | InstKind::Random { .. }
                )
        })
    }

    /// Structural key of the program: its canonical text without constant
    /// values and random seeds (stable across runs). It keys compiled
    /// kernels, which take constants and seeds as parameters, and measured
    /// timings, which do not depend on them.
    ///
    /// Rendered on the first call and kept: a program is not changed once
    /// its key has been taken (debug builds check it).
    pub fn key(&self) -> &str {
        let key = self.key_memo.0.get_or_init(|| self.render(false));
        debug_assert_eq!(
            *key,
            self.render(false),
            "a program changed after its key was taken"
        );
        key
    }

    /// Constants in instruction order (the parameters a compiled kernel takes).
    pub fn constants(&self) -> Vec<Scalar> {
        self.insts
            .iter()
            .filter_map(|i| match i.kind {
                InstKind::Const(c) => Some(c),
                _ => None,
            })
            .collect()
    }

    fn render(&self, values: bool) -> String {
        let mut s = String::new();
        self.render_into(&mut s, values)
            .expect("writing to a String cannot fail");
        s
    }

    fn render_into(&self, s: &mut String, values: bool) -> fmt::Result {
        for (i, src) in self.sources.iter().enumerate() {
            match src {
                SourceKind::Buffer(d) => write!(s, "in{i}:{d} ")?,
                SourceKind::Index => write!(s, "in{i}:index ")?,
            }
        }
        s.push('|');
        for (i, inst) in self.insts.iter().enumerate() {
            write!(s, " r{i}:{}=", inst.dtype)?;
            match &inst.kind {
                InstKind::Load(n) => write!(s, "load(in{n})")?,
                InstKind::Const(c) if values => write!(s, "const({c})")?,
                InstKind::Const(_) => write!(s, "const")?,
                InstKind::Arange {
                    index,
                    start,
                    step,
                    last,
                } if values => write!(s, "arange(in{index},{start:?},{step:?},{last:?})")?,
                // Start, step and endpoint are kernel parameters.
                InstKind::Arange { index, .. } => write!(s, "arange(in{index})")?,
                InstKind::Random { index, dist, key } if values => write!(
                    s,
                    "{}(in{index},seed={},stream={})",
                    dist.name(),
                    key.seed,
                    key.stream
                )?,
                InstKind::Random { index, dist, .. } => write!(s, "{}(in{index})", dist.name())?,
                InstKind::Unary(u, a) => write!(s, "{}(r{a})", u.name())?,
                InstKind::Binary(b, x, y) => write!(s, "{}(r{x},r{y})", b.name())?,
                InstKind::Where(c, x, y) => write!(s, "where(r{c},r{x},r{y})")?,
                InstKind::Cast(a) => write!(s, "cast(r{a})")?,
            }
            s.push(';');
        }
        write!(s, " | out")?;
        for o in &self.outputs {
            write!(s, " r{o}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(true))
    }
}
