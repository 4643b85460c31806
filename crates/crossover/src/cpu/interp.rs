//! The CPU interpreter of the fused IR.
//!
//! A kernel's iteration space is cut into chunks of [`CHUNK`] points. For a
//! chunk, each instruction runs as one tight loop over the chunk (vectorised
//! by the compiler inside the SIMD-dispatched entry point), reading operand
//! registers and writing its own. Registers live in per-thread scratch
//! buffers that stay in L1/L2; contiguous loads are read in place (no copy)
//! and constants are splats, so a fused chain touches main memory once.

use super::gather::{gather, positions, Access};
use super::num::{zip2, CastTo, Num, Pod};
pub(crate) use super::regs::with_type;
pub use super::regs::Data;
use super::regs::{read_val, val_of};
pub(crate) use super::regs::{FromData, Val};
use super::simd::simd_dispatch;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::expr::ir::{InstKind, Program, Reg};
use crate::op::{BinaryOp, UnaryOp};
use crate::rng::{self, Distribution, RandomKey};
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, Ordering};

/// Most points per chunk (scratch registers hold this many); a program
/// whose registers would not fit in L1 at this length takes a shorter chunk
/// ([`Prepared::chunk`]).
pub const CHUNK: usize = 2048;

/// Fewest points per chunk: below this the per-instruction dispatch of a
/// chunk costs more than the cache misses it avoids.
const MIN_CHUNK: usize = 512;

/// Bytes a chunk's registers, direct reads and outputs may touch: about an
/// L1 data cache (32 KiB on most x86 cores) less room for the stack and
/// constants. A chunk that spills to L2 is slower even when the program is
/// memory-bound: the loads from main memory happen only in the chunk's first
/// instructions, and the hardware prefetcher idles while the rest run from
/// L2 (`sum(where(x > 0.5, x*x, -x))` on 16.7M float64: 2048-point chunks,
/// 66 KB, took 1.5x as long as 512-point ones in a standalone build).
const L1_BUDGET: usize = 24 * 1024;

/// A program source bound to data.
#[derive(Clone, Debug)]
pub enum Bound<'a> {
    Buffer { data: Data<'a>, access: Access },
    Index { access: Access },
}

/// Where a register's values are during a chunk.
#[derive(Clone, Copy, Debug)]
pub(super) enum RegKind {
    /// Read in place from a contiguous source at `offset + start`.
    Direct { source: usize, offset: usize },
    /// The same value at every point.
    Splat(Val),
    /// Computed into scratch slot `n`.
    Slot(usize),
}

/// A program prepared for execution over bound sources.
pub struct Prepared<'a> {
    pub program: &'a Program,
    pub(super) sources: Vec<Bound<'a>>,
    pub(super) kinds: Vec<RegKind>,
    pub slots: usize,
    /// The compiled kernel that runs this program, where one does
    /// ([`Prepared::attach_jit`]).
    pub(super) jit: Option<super::jit::Bound>,
    /// Points per chunk for this program (a power of two, MIN_CHUNK..=CHUNK).
    chunk: usize,
    /// Set when an integer power met a negative exponent, which NumPy
    /// refuses (the kernel's caller turns it into an error).
    negative_int_power: AtomicBool,
}

/// Per-thread scratch registers.
#[derive(Default)]
pub struct Scratch {
    slots: Vec<Vec<u64>>,
}

impl Scratch {
    fn ensure(&mut self, n: usize) {
        while self.slots.len() < n {
            self.slots.push(vec![0u64; CHUNK]);
        }
    }
}

/// A register's values for one chunk: a slice or a constant.
#[derive(Clone, Copy)]
pub enum Arg<'s, T> {
    Slice(&'s [T]),
    Splat(T),
}

impl<'s, T: Copy> Arg<'s, T> {
    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        match self {
            Arg::Slice(s) => s[i],
            Arg::Splat(v) => *v,
        }
    }
}

#[inline(always)]
fn view<T: Pod>(s: &[u64], len: usize) -> &[T] {
    debug_assert!(len * std::mem::size_of::<T>() <= s.len() * 8);
    // SAFETY: T is a primitive with alignment <= 8 for which every bit
    // pattern is valid; the slot holds at least len * size_of::<T>() bytes.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const T, len) }
}

#[inline(always)]
pub(crate) fn view_mut<T: Pod>(s: &mut [u8], len: usize) -> &mut [T] {
    assert!(len * std::mem::size_of::<T>() <= s.len());
    assert_eq!(s.as_ptr() as usize % std::mem::align_of::<T>(), 0);
    // SAFETY: size and alignment checked above; every bit pattern of a Pod
    // type is valid; `&mut` guarantees exclusive access.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut T, len) }
}

#[inline(always)]
pub(super) fn slot_bytes(s: &mut [u64]) -> &mut [u8] {
    // SAFETY: u8 has no alignment or validity requirements; same memory.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, s.len() * 8) }
}

// The whole interpreter, compiled once per SIMD level.
simd_dispatch! {
    fn eval_chunk_dispatch(prep: &Prepared<'_>, scratch: &mut Scratch, start: usize, len: usize, out: Option<&mut [u8]>) => eval_chunk_inline
}

#[inline(always)]
fn eval_chunk_inline(
    prep: &Prepared<'_>,
    scratch: &mut Scratch,
    start: usize,
    len: usize,
    out: Option<&mut [u8]>,
) {
    prep.eval_chunk_impl(scratch, start, len, out)
}

impl<'a> Prepared<'a> {
    /// Binds sources and assigns scratch slots by liveness.
    pub fn new(program: &'a Program, sources: Vec<Bound<'a>>) -> Result<Prepared<'a>> {
        if program.insts.iter().any(|i| i.dtype.is_complex()) {
            return Err(Error::dtype(
                "cpu kernel",
                DType::C64,
                "complex programs are not supported yet",
            ));
        }
        let mut kinds: Vec<RegKind> = program
            .insts
            .iter()
            .map(|inst| match &inst.kind {
                InstKind::Load(s) => match &sources[*s as usize] {
                    Bound::Buffer {
                        data,
                        access: Access::Contiguous { offset },
                    } if !super::regs::widens(*data) => RegKind::Direct {
                        source: *s as usize,
                        offset: *offset,
                    },
                    Bound::Buffer {
                        data,
                        access: Access::Constant { pos },
                    } => RegKind::Splat(read_val(*data, *pos)),
                    _ => RegKind::Slot(usize::MAX),
                },
                InstKind::Const(c) => RegKind::Splat(val_of(*c, inst.dtype)),
                _ => RegKind::Slot(usize::MAX),
            })
            .collect();
        let classes: Classes = kinds.iter().map(RegClass::of).collect();
        let memo = program
            .slots_memo
            .get_or_init(|| SlotPlan::new(program, &classes));
        let fresh;
        let plan = if memo.classes == classes {
            memo
        } else {
            fresh = SlotPlan::new(program, &classes);
            &fresh
        };
        for (kind, &slot) in kinds.iter_mut().zip(&plan.slot_of) {
            if let RegKind::Slot(s) = kind {
                *s = slot;
            }
        }
        let (slots, chunk) = (plan.slots, plan.chunk);
        Ok(Prepared {
            program,
            sources,
            kinds,
            slots,
            chunk,
            negative_int_power: AtomicBool::new(false),
            jit: None,
        })
    }

    /// Points per chunk: callers cut their ranges into chunks of at most
    /// this length (a sum's segments, and so its bits, follow it).
    pub fn chunk(&self) -> usize {
        self.chunk
    }

    /// [`Error::InvalidArgument`] with NumPy's words when an integer power
    /// met a negative exponent.
    pub fn check_domain(&self) -> Result<()> {
        if self.negative_int_power.load(Ordering::Relaxed) {
            return Err(negative_int_power());
        }
        Ok(())
    }

    /// The values of register `r` for the chunk starting at `start` (after
    /// [`Prepared::eval_chunk`] ran for that chunk).
    #[inline(always)]
    pub(crate) fn arg<'s, T: FromData<'s>>(
        &'s self,
        scratch: &'s Scratch,
        r: Reg,
        start: usize,
        len: usize,
    ) -> Arg<'s, T>
    where
        'a: 's,
    {
        match self.kinds[r as usize] {
            RegKind::Direct { source, offset } => match &self.sources[source] {
                Bound::Buffer { data, .. } => {
                    let s = T::from_data(*data);
                    Arg::Slice(&s[offset + start..offset + start + len])
                }
                Bound::Index { .. } => unreachable!("index sources are not loaded"),
            },
            RegKind::Splat(v) => Arg::Splat(T::from_val(v)),
            RegKind::Slot(s) => Arg::Slice(view::<T>(&scratch.slots[s], len)),
        }
    }

    /// Whether register `r` is read straight from a source (a contiguous
    /// input or a constant) with nothing to evaluate: `arg` then serves any
    /// range, not just one chunk, without `eval_chunk`.
    pub(crate) fn reads_directly(&self, r: Reg) -> bool {
        self.program.insts.len() == 1
            && matches!(
                self.kinds[r as usize],
                RegKind::Direct { .. } | RegKind::Splat(_)
            )
    }

    /// Evaluates every instruction for points `start..start+len`.
    pub fn eval_chunk(&self, scratch: &mut Scratch, start: usize, len: usize) {
        eval_chunk_dispatch(self, scratch, start, len, None)
    }

    /// Like [`Prepared::eval_chunk`], computing register
    /// [`Prepared::direct_output`] straight into `out` (the output buffer's
    /// bytes for this chunk) instead of a scratch slot.
    pub fn eval_chunk_into(&self, scratch: &mut Scratch, start: usize, len: usize, out: &mut [u8]) {
        eval_chunk_dispatch(self, scratch, start, len, Some(out))
    }

    /// The single output register if it can be computed in place: the last
    /// instruction, computed (not a direct load or a constant).
    pub fn direct_output(&self) -> Option<Reg> {
        let last = self.program.insts.len().checked_sub(1)?;
        (self.program.outputs.len() == 1
            && self.program.outputs[0] as usize == last
            && matches!(self.kinds[last], RegKind::Slot(_))
            && !self.program.insts[last].dtype.is_small_int())
        .then_some(last as Reg)
    }

    #[inline(always)]
    fn eval_chunk_impl(
        &self,
        scratch: &mut Scratch,
        start: usize,
        len: usize,
        mut out: Option<&mut [u8]>,
    ) {
        debug_assert!(len <= CHUNK);
        scratch.ensure(self.slots);
        let last = self.program.insts.len().wrapping_sub(1);
        for (r, inst) in self.program.insts.iter().enumerate() {
            let RegKind::Slot(slot) = self.kinds[r] else {
                continue;
            };
            if r == last {
                if let Some(o) = out.take() {
                    self.eval_inst(&inst.kind, inst.dtype, scratch, o, start, len);
                    continue;
                }
            }
            let mut dst = std::mem::take(&mut scratch.slots[slot]);
            let bytes = slot_bytes(&mut dst);
            self.eval_inst(&inst.kind, inst.dtype, scratch, bytes, start, len);
            if inst.dtype.is_small_int() {
                super::regs::wrap(inst.dtype, bytes, len);
            }
            scratch.slots[slot] = dst;
        }
    }

    #[inline(always)]
    fn eval_inst(
        &self,
        kind: &InstKind,
        dtype: DType,
        sc: &Scratch,
        dst: &mut [u8],
        start: usize,
        len: usize,
    ) {
        match kind {
            InstKind::Load(s) => {
                let Bound::Buffer { data, access } = &self.sources[*s as usize] else {
                    unreachable!("loads read buffers")
                };
                if super::regs::widens(*data) {
                    return super::regs::load_widened(*data, access, start, dst, len);
                }
                with_type!(dtype, T => {
                    gather(<T as FromData>::from_data(*data), access, start, view_mut::<T>(dst, len))
                })
            }
            InstKind::Const(_) => unreachable!("constants are splats"),
            InstKind::Arange {
                index,
                start: a0,
                step,
                last,
            } => {
                let Bound::Index { access } = &self.sources[*index as usize] else {
                    unreachable!("arange reads an index source")
                };
                let mut idx = [0u64; CHUNK];
                positions(access, start, &mut idx[..len]);
                with_type!(dtype, T => {
                    let out = view_mut::<T>(dst, len);
                    for (o, &j) in out.iter_mut().zip(&idx[..len]) {
                        let v = match last {
                            Some((lj, lv)) if j == *lj => *lv,
                            _ => a0 + j as f64 * step,
                        };
                        *o = T::from_f64(v);
                    }
                })
            }
            InstKind::Random { index, dist, key } => {
                let Bound::Index { access } = &self.sources[*index as usize] else {
                    unreachable!("random reads an index source")
                };
                let j0 = match access {
                    Access::Contiguous { offset } => (offset + start) as u64,
                    Access::Constant { pos } => *pos as u64,
                    Access::Strided(_) => {
                        unreachable!("the fuser materialises out-of-order random sources")
                    }
                };
                fill_random(dtype, *dist, *key, j0, dst, len)
            }
            InstKind::Unary(op, a) => with_type!(dtype, T => {
                let x = self.arg::<T>(sc, *a, start, len);
                unary::<T>(*op, x, view_mut::<T>(dst, len))
            }),
            InstKind::Binary(op, a, b) => {
                let od = self.program.dtype(*a);
                if op.is_comparison() {
                    with_type!(od, T => {
                        let (x, y) = (self.arg::<T>(sc, *a, start, len), self.arg::<T>(sc, *b, start, len));
                        compare::<T>(*op, x, y, view_mut::<u8>(dst, len))
                    })
                } else {
                    with_type!(dtype, T => {
                        let (x, y) = (self.arg::<T>(sc, *a, start, len), self.arg::<T>(sc, *b, start, len));
                        if *op == BinaryOp::Pow && !dtype.is_float() && has_negative(y, len) {
                            self.negative_int_power.store(true, Ordering::Relaxed);
                        }
                        binary::<T>(*op, x, y, view_mut::<T>(dst, len))
                    })
                }
            }
            InstKind::Where(c, a, b) => with_type!(dtype, T => {
                let cond = self.arg::<u8>(sc, *c, start, len);
                let (x, y) = (self.arg::<T>(sc, *a, start, len), self.arg::<T>(sc, *b, start, len));
                select(cond, x, y, view_mut::<T>(dst, len))
            }),
            InstKind::Cast(a) => {
                let from = self.program.dtype(*a);
                with_type!(from, F => with_type!(dtype, T => {
                    let x = self.arg::<F>(sc, *a, start, len);
                    if from.is_float() {
                        check_cast::<F>(x, dtype, len);
                    }
                    map1(x, view_mut::<T>(dst, len), <F as CastTo<T>>::cast_to)
                }))
            }
        }
    }
}

/// Draws `first..first + len` of the random stream `key` (`dist`, `dtype`)
/// into `dst`'s first `len` values: the one place both the interpreter and
/// the compiled kernels ([`super::jit`]) generate them, so both see the
/// same bits.
pub(super) fn fill_random(
    dtype: DType,
    dist: Distribution,
    key: RandomKey,
    first: u64,
    dst: &mut [u8],
    len: usize,
) {
    match (dtype, dist) {
        (DType::F32, Distribution::Uniform) => {
            rng::fill_uniform_f32(key, first, view_mut(dst, len))
        }
        (DType::F32, Distribution::Normal) => rng::fill_normal_f32(key, first, view_mut(dst, len)),
        (_, Distribution::Normal) => rng::fill_normal_f64(key, first, view_mut(dst, len)),
        (_, Distribution::Uniform) => rng::fill_uniform_f64(key, first, view_mut(dst, len)),
    }
}

/// The longest chunk (halving from [`CHUNK`] to [`MIN_CHUNK`]) whose
/// touched bytes fit [`L1_BUDGET`]: each direct read, and each scratch slot
/// at its widest register type (an output computed in place takes its
/// slot's place, so outputs are not counted again).
/// Which of [`RegKind`]'s kinds each register of a call is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RegClass {
    Direct,
    Splat,
    Slot,
}

impl RegClass {
    fn of(kind: &RegKind) -> RegClass {
        match kind {
            RegKind::Direct { .. } => RegClass::Direct,
            RegKind::Splat(_) => RegClass::Splat,
            RegKind::Slot(_) => RegClass::Slot,
        }
    }
}

type Classes = SmallVec<[RegClass; 16]>;

/// The scratch slots of a program's computed registers and its chunk
/// length, for one set of register classes: they depend on nothing else,
/// so the first plan is kept on the program (about 700 instructions of a
/// small call's [`Prepared::new`]) and serves every call whose inputs are
/// read the same way.
pub(crate) struct SlotPlan {
    classes: Classes,
    /// Per register, its slot (meaningful for [`RegClass::Slot`] only).
    slot_of: SmallVec<[usize; 16]>,
    slots: usize,
    chunk: usize,
}

impl SlotPlan {
    /// Assigns slots by liveness: a register's slot is freed after its
    /// last use, for a later register to take.
    fn new(program: &Program, classes: &[RegClass]) -> SlotPlan {
        let last = program.last_uses();
        let mut kinds: Vec<RegKind> = Vec::with_capacity(classes.len());
        // Inline: no allocation for a small program's free list.
        let mut free: SmallVec<[usize; 16]> = SmallVec::new();
        let mut slots = 0usize;
        for (r, (inst, class)) in program.insts.iter().zip(classes).enumerate() {
            kinds.push(match class {
                RegClass::Slot => RegKind::Slot(free.pop().unwrap_or_else(|| {
                    slots += 1;
                    slots - 1
                })),
                // Placeholders: only slots matter here.
                RegClass::Direct => RegKind::Direct {
                    source: 0,
                    offset: 0,
                },
                RegClass::Splat => RegKind::Splat(Val::Bool(0)),
            });
            // Free operands whose last use is this instruction (after the
            // destination was allocated, so it never aliases an operand).
            for op in inst.operands() {
                let o = op as usize;
                if last[o] == r {
                    if let RegKind::Slot(s) = kinds[o] {
                        if !free.contains(&s) {
                            free.push(s);
                        }
                    }
                }
            }
        }
        let chunk = chunk_for(program, &kinds, slots);
        let slot_of = kinds
            .iter()
            .map(|k| match k {
                RegKind::Slot(s) => *s,
                _ => usize::MAX,
            })
            .collect();
        SlotPlan {
            classes: classes.iter().copied().collect(),
            slot_of,
            slots,
            chunk,
        }
    }
}

fn chunk_for(program: &Program, kinds: &[RegKind], slots: usize) -> usize {
    // Register types are at most 8 bytes (small integers widen to 4 or 8).
    let reg_bytes = |d: DType| if d.is_small_int() { 8 } else { d.size() };
    let pairs = || program.insts.iter().zip(kinds);
    let direct: usize = pairs()
        .filter(|(_, k)| matches!(k, RegKind::Direct { .. }))
        .map(|(i, _)| i.dtype.size())
        .sum();
    // Per slot, its widest register (no allocation: programs are short).
    let scratch: usize = (0..slots)
        .map(|s| {
            pairs()
                .filter(|(_, k)| matches!(k, RegKind::Slot(t) if *t == s))
                .map(|(i, _)| reg_bytes(i.dtype))
                .max()
                .unwrap_or(0)
        })
        .sum();
    let bytes = direct + scratch;
    let mut chunk = CHUNK;
    while chunk > MIN_CHUNK && chunk * bytes > L1_BUDGET {
        chunk /= 2;
    }
    chunk
}

/// NumPy's error for an integer raised to a negative integer power.
pub fn negative_int_power() -> Error {
    Error::invalid(
        "power",
        "Integers to negative integer powers are not allowed.",
    )
}

/// Whether an exponent chunk holds a negative value.
#[inline(always)]
pub(crate) fn has_negative<T: Num>(y: Arg<'_, T>, len: usize) -> bool {
    match y {
        Arg::Slice(s) => s[..len].iter().any(|v| *v < T::default()),
        Arg::Splat(v) => v < T::default(),
    }
}

/// Notes float elements that do not fit the integer dtype they convert to.
#[inline(always)]
fn check_cast<F: Num>(x: Arg<'_, F>, to: DType, len: usize) {
    let one = [match x {
        Arg::Splat(v) => v,
        Arg::Slice(_) => F::default(),
    }];
    let s = match x {
        Arg::Slice(s) => &s[..len],
        Arg::Splat(_) => &one[..],
    };
    if let Some((lo, hi)) = to.int_range() {
        super::num::check_float_in(s, lo as f64, hi as f64 + 1.0);
    }
}

/// `where(cond, x, y)` with the common operand shapes as tight loops.
#[inline(always)]
fn select<T: Blend>(cond: Arg<'_, u8>, x: Arg<'_, T>, y: Arg<'_, T>, out: &mut [T]) {
    let Arg::Slice(c) = cond else {
        let pick = if cond.get(0) != 0 { x } else { y };
        return map1(pick, out, |v| v);
    };
    let n = out.len();
    let c = &c[..n];
    match (x, y) {
        (Arg::Slice(a), Arg::Slice(b)) => {
            for (((o, &ci), &ai), &bi) in out.iter_mut().zip(c).zip(&a[..n]).zip(&b[..n]) {
                *o = T::blend(ci, ai, bi);
            }
        }
        (Arg::Slice(a), Arg::Splat(q)) => {
            for ((o, &ci), &ai) in out.iter_mut().zip(c).zip(&a[..n]) {
                *o = T::blend(ci, ai, q);
            }
        }
        (Arg::Splat(p), Arg::Slice(b)) => {
            for ((o, &ci), &bi) in out.iter_mut().zip(c).zip(&b[..n]) {
                *o = T::blend(ci, p, bi);
            }
        }
        (Arg::Splat(p), Arg::Splat(q)) => {
            for (o, &ci) in out.iter_mut().zip(c) {
                *o = T::blend(ci, p, q);
            }
        }
    }
}

/// Branch-free choice between two values by a boolean byte, on the
/// storage type's bits: the plain `if c != 0 { a } else { b }` became a
/// branch per element for float64 (2.6 ns per element on a random mask,
/// 8x slower than `sum(x*x)`); masks vectorise.
trait Blend: Copy {
    fn blend(c: u8, a: Self, b: Self) -> Self;
}

macro_rules! blend_bits {
    ($($t:ty),*) => {$(
        impl Blend for $t {
            #[inline(always)]
            fn blend(c: u8, a: $t, b: $t) -> $t {
                let m = (0 as $t).wrapping_sub((c != 0) as $t);
                (a & m) | (b & !m)
            }
        }
    )*};
}
blend_bits!(u8, i32, i64, u32, u64);

impl Blend for f32 {
    #[inline(always)]
    fn blend(c: u8, a: f32, b: f32) -> f32 {
        f32::from_bits(u32::blend(c, a.to_bits(), b.to_bits()))
    }
}

impl Blend for f64 {
    #[inline(always)]
    fn blend(c: u8, a: f64, b: f64) -> f64 {
        f64::from_bits(u64::blend(c, a.to_bits(), b.to_bits()))
    }
}

#[inline(always)]
fn map1<T: Copy, U: Copy>(x: Arg<'_, T>, out: &mut [U], f: impl Fn(T) -> U) {
    match x {
        Arg::Slice(s) => {
            for (o, &v) in out.iter_mut().zip(s) {
                *o = f(v);
            }
        }
        Arg::Splat(v) => {
            let r = f(v);
            out.iter_mut().for_each(|o| *o = r);
        }
    }
}

#[inline(always)]
fn map2<T: Copy, U: Copy>(x: Arg<'_, T>, y: Arg<'_, T>, out: &mut [U], f: impl Fn(T, T) -> U) {
    zip2!(x, y, out, |p, q| f(p, q))
}

/// Unary functions; transcendental ones only ever see floats (the recorder
/// casts integers first).
#[inline(always)]
pub(crate) fn unary<T: Num + UnaryFloat>(op: UnaryOp, x: Arg<'_, T>, out: &mut [T]) {
    match op {
        UnaryOp::Neg => map1(x, out, T::neg),
        UnaryOp::Abs => map1(x, out, T::abs),
        UnaryOp::Sign => map1(x, out, T::sign),
        UnaryOp::Square => map1(x, out, |v| v.mul(v)),
        UnaryOp::Floor => map1(x, out, T::floor),
        UnaryOp::Ceil => map1(x, out, T::ceil),
        UnaryOp::Not => map1(x, out, |v| {
            if v == T::default() {
                T::from_f64(1.0)
            } else {
                T::default()
            }
        }),
        _ => T::unary_float(op, x, out),
    }
}

#[path = "interp_float.rs"]
mod float;
pub use float::UnaryFloat;

#[inline(always)]
pub(crate) fn binary<T: Num>(op: BinaryOp, x: Arg<'_, T>, y: Arg<'_, T>, out: &mut [T]) {
    match op {
        BinaryOp::Add => map2(x, y, out, T::add),
        BinaryOp::Sub => map2(x, y, out, T::sub),
        BinaryOp::Mul => map2(x, y, out, T::mul),
        BinaryOp::Div => map2(x, y, out, T::div),
        BinaryOp::Pow => T::pow_slices(x, y, out),
        BinaryOp::Minimum => map2(x, y, out, T::min_nan),
        BinaryOp::Maximum => map2(x, y, out, T::max_nan),
        BinaryOp::And => map2(x, y, out, |a, b| {
            T::from_f64((a != T::default() && b != T::default()) as u8 as f64)
        }),
        BinaryOp::Or => map2(x, y, out, |a, b| {
            T::from_f64((a != T::default() || b != T::default()) as u8 as f64)
        }),
        // Float functions (the recorder casts integers to float64); float32
        // is computed in float64 and rounded once.
        BinaryOp::Atan2 => T::atan2_slices(x, y, out),
        BinaryOp::Hypot => map2(x, y, out, |a, b| a.hypot(b)),
        _ => unreachable!("comparisons are handled by compare"),
    }
}

#[inline(always)]
pub(crate) fn compare<T: Num>(op: BinaryOp, x: Arg<'_, T>, y: Arg<'_, T>, out: &mut [u8]) {
    match op {
        BinaryOp::Lt => map2(x, y, out, |a, b| (a < b) as u8),
        BinaryOp::Le => map2(x, y, out, |a, b| (a <= b) as u8),
        BinaryOp::Gt => map2(x, y, out, |a, b| (a > b) as u8),
        BinaryOp::Ge => map2(x, y, out, |a, b| (a >= b) as u8),
        BinaryOp::Eq => map2(x, y, out, |a, b| (a == b) as u8),
        BinaryOp::Ne => map2(x, y, out, |a, b| (a != b) as u8),
        _ => unreachable!("not a comparison"),
    }
}

#[cfg(test)]
#[path = "interp_chunk_tests.rs"]
mod chunk_tests;
