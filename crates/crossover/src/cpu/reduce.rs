//! Fused reductions on the CPU: the kernel's program produces a value per
//! point, chunk by chunk, and these accumulators consume it without writing
//! it anywhere (map-reduce in one pass over memory).
//!
//! Accuracy: float sums accumulate in f64 lanes (the f32 sum of 1e8 values
//! is exact to ~1e-9); variance uses each segment's moments about a shift
//! near its mean, in one pass (two exact passes where the shift would cost
//! float64 precision: `lanes::moments_lanes`), merged with Chan's formula,
//! so data with a large mean stays accurate.
//!
//! Determinism: work is cut into a fixed grid of tasks that depends only on
//! the shape, and partial results merge in order, so results do not depend
//! on the thread count.

use super::interp::{with_type, Arg, FromData, Prepared, Scratch, CHUNK};
use super::num::Num;
use super::simd::simd_dispatch;
use super::{scratch, OutPtr};
use crate::dtype::DType;
use crate::expr::ir::{InstKind, Reg};
use crate::fuse::{ReduceMode, ReducePlan};
use crate::op::ReduceOp;
use lanes::{iprod_lanes, isum_lanes, m2_lanes, moments_lanes, prod_lanes, sum_lanes};
use outer::{run_outer, ColStates};

mod lanes;
mod outer;
#[cfg(test)]
mod tests;

/// Points per task (a multiple of CHUNK). A sum's bits depend on it.
const TASK: usize = 64 * CHUNK;
/// Points per task of a reduction that only tracks extremes (min, max,
/// argmin, argmax): their results do not depend on the task grid (exact
/// comparisons, merged in order, so the first index wins), so they take
/// smaller tasks, which split 1e5 points over two threads.
const EXTREME_TASK: usize = 32 * CHUNK;
const LANES: usize = 16;

/// What the accumulators must track.
#[derive(Clone, Copy, Debug, Default)]
struct Needs {
    sum: bool,
    prod: bool,
    moments: bool,
    min: bool,
    max: bool,
    arg: bool,
}

impl Needs {
    fn of(ops: &[ReduceOp]) -> Needs {
        let mut n = Needs::default();
        for op in ops {
            match op {
                ReduceOp::Sum | ReduceOp::Mean => n.sum = true,
                ReduceOp::Prod => n.prod = true,
                // Variances come from their own means, not from sums.
                ReduceOp::Var { .. } | ReduceOp::Std { .. } => n.moments = true,
                ReduceOp::Min => n.min = true,
                ReduceOp::Max => n.max = true,
                ReduceOp::ArgMin => {
                    n.min = true;
                    n.arg = true;
                }
                ReduceOp::ArgMax => {
                    n.max = true;
                    n.arg = true;
                }
            }
        }
        n
    }
}

/// Accumulator for one output position.
#[derive(Clone, Copy, Debug)]
struct State<T> {
    n: u64,
    sum: f64,
    isum: i64,
    /// Products: floats in f64, integers wrapping in i64 (NumPy's `prod`).
    prod: f64,
    iprod: i64,
    mean: f64,
    m2: f64,
    min: T,
    min_at: u64,
    max: T,
    max_at: u64,
}

/// Value types a reduction consumes.
trait RNum: Num + for<'a> FromData<'a> {
    const IS_INT: bool;
    fn as_i64(self) -> i64;
}
impl RNum for u8 {
    const IS_INT: bool = true;
    #[inline(always)]
    fn as_i64(self) -> i64 {
        self as i64
    }
}
impl RNum for i32 {
    const IS_INT: bool = true;
    #[inline(always)]
    fn as_i64(self) -> i64 {
        self as i64
    }
}
impl RNum for i64 {
    const IS_INT: bool = true;
    #[inline(always)]
    fn as_i64(self) -> i64 {
        self
    }
}
impl RNum for u64 {
    const IS_INT: bool = true;
    #[inline(always)]
    fn as_i64(self) -> i64 {
        // Sums and products wrap: uint64's bits are int64's.
        self as i64
    }
}
impl RNum for f32 {
    const IS_INT: bool = false;
    #[inline(always)]
    fn as_i64(self) -> i64 {
        self as i64
    }
}
impl RNum for f64 {
    const IS_INT: bool = false;
    #[inline(always)]
    fn as_i64(self) -> i64 {
        self as i64
    }
}

/// Chan's merge of a segment's `(mean, m2)` over `na` values with the next
/// segment's over `nb`: one formula for [`State::merge`] and the column
/// merges of the outer mode, so both give the same bits.
#[inline(always)]
fn merge_moments(mean: &mut f64, m2: &mut f64, b_mean: f64, b_m2: f64, na: f64, nb: f64) {
    let n = na + nb;
    let delta = b_mean - *mean;
    *mean += delta * nb / n;
    *m2 += b_m2 + delta * delta * na * nb / n;
}

impl<T: RNum> State<T> {
    fn empty() -> Self {
        State {
            n: 0,
            sum: 0.0,
            isum: 0,
            prod: 1.0,
            iprod: 1,
            mean: 0.0,
            m2: 0.0,
            min: T::default(),
            min_at: 0,
            max: T::default(),
            max_at: 0,
        }
    }

    /// Merges `b` (which comes after `self` in index order) into `self`.
    #[inline(always)]
    fn merge(&mut self, b: &State<T>, needs: Needs) {
        if b.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *b;
            return;
        }
        if needs.moments {
            let (na, nb) = (self.n as f64, b.n as f64);
            merge_moments(&mut self.mean, &mut self.m2, b.mean, b.m2, na, nb);
        }
        self.sum += b.sum;
        self.isum = self.isum.wrapping_add(b.isum);
        self.prod *= b.prod;
        self.iprod = self.iprod.wrapping_mul(b.iprod);
        // NaN wins and stays; ties keep the earlier index.
        if !self.min.is_nan() && (b.min.is_nan() || b.min < self.min) {
            self.min = b.min;
            self.min_at = b.min_at;
        }
        if !self.max.is_nan() && (b.max.is_nan() || b.max > self.max) {
            self.max = b.max;
            self.max_at = b.max_at;
        }
        self.n += b.n;
    }

    /// A state for the values `v` whose first index is `at`.
    #[inline(always)]
    fn of_segment(v: Arg<'_, T>, len: usize, at: u64, needs: Needs) -> State<T> {
        let mut s = State::empty();
        if len == 0 {
            return s;
        }
        s.n = len as u64;
        match v {
            Arg::Splat(x) => {
                if needs.sum {
                    s.sum = x.to_f64() * len as f64;
                    s.isum = x.as_i64().wrapping_mul(len as i64);
                }
                s.mean = x.to_f64();
                if needs.prod {
                    s.prod = x.to_f64().powf(len as f64);
                    s.iprod = super::num::ipow(x.as_i64(), len as i64);
                }
                (s.min, s.max, s.min_at, s.max_at) = (x, x, at, at);
            }
            Arg::Slice(v) => {
                let v = &v[..len];
                if needs.sum {
                    // Integers: the wrapping int64 sum (NumPy's `sum`) and
                    // a float64 one (NumPy's `mean`, which does not wrap).
                    if T::IS_INT {
                        s.isum = isum_lanes(v);
                    }
                    s.sum = sum_lanes(v);
                }
                if needs.moments {
                    (s.mean, s.m2) = moments_lanes(v);
                    if s.m2.is_nan() {
                        // The one pass declined: two passes, exact (the
                        // sum already taken when the kernel needs one).
                        let sum = if needs.sum { s.sum } else { sum_lanes(v) };
                        s.mean = sum / len as f64;
                        s.m2 = m2_lanes(v, s.mean);
                    }
                }
                if needs.prod {
                    if T::IS_INT {
                        s.iprod = iprod_lanes(v);
                    }
                    s.prod = prod_lanes(v);
                }
                if needs.min {
                    (s.min, s.min_at) = extreme(v, needs.arg, at, |x, m| x < m);
                }
                if needs.max {
                    (s.max, s.max_at) = extreme(v, needs.arg, at, |x, m| x > m);
                }
            }
        }
        s
    }
}

/// The extreme of non-empty `v` by `better` (a strict comparison) and, when
/// `arg`, its first index plus `at`; the first NaN wins, as in NumPy. Two
/// passes (the extreme, then its first index) beat one that carries an
/// index per lane: LLVM kept that loop's lanes in memory (masked stores
/// reloaded every block, 6 GB/s against the fold's 70).
#[inline(always)]
fn extreme<T: RNum>(v: &[T], arg: bool, at: u64, better: impl Fn(T, T) -> bool) -> (T, u64) {
    let (m, nan) = fold_lanes(v, |a, b| if better(b, a) { b } else { a });
    if nan {
        let i = first_where(v, |x| x.is_nan());
        return (v[i], at + i as u64);
    }
    if !arg {
        return (m, at);
    }
    (m, at + first_where(v, |x| x == m) as u64)
}

/// Lane-wise fold (vectorises without reassociating a scalar chain) plus a
/// NaN flag.
#[inline(always)]
fn fold_lanes<T: RNum>(v: &[T], f: impl Fn(T, T) -> T) -> (T, bool) {
    let mut acc = [v[0]; LANES];
    let mut nans = [false; LANES];
    let (blocks, rest) = v.as_chunks::<LANES>();
    for c in blocks {
        for l in 0..LANES {
            acc[l] = f(acc[l], c[l]);
            nans[l] |= c[l].is_nan();
        }
    }
    let mut nan = nans.iter().any(|&b| b);
    let mut m = acc[0];
    for &a in &acc[1..] {
        m = f(m, a);
    }
    for &x in rest {
        m = f(m, x);
        nan |= x.is_nan();
    }
    (m, nan)
}

/// The first index where `hit` holds (0 if none). Groups of eight lane
/// blocks are tested without an early exit (the test vectorises), then the
/// group with a hit is searched: twice as fast as a branch per block, and
/// an element-at-a-time early-exit scan does not vectorise at all.
#[inline(always)]
fn first_where<T: RNum>(v: &[T], hit: impl Fn(T) -> bool) -> usize {
    const GROUP: usize = 8 * LANES;
    let (groups, rest) = v.as_chunks::<GROUP>();
    for (g, c) in groups.iter().enumerate() {
        let mut any = [false; LANES];
        for b in c.as_chunks::<LANES>().0 {
            for l in 0..LANES {
                any[l] |= hit(b[l]);
            }
        }
        if any.iter().any(|&a| a) {
            return g * GROUP + c.iter().position(|&x| hit(x)).unwrap_or(0);
        }
    }
    groups.len() * GROUP + rest.iter().position(|&x| hit(x)).unwrap_or(0)
}

/// Writes the final value of each op for output position `k`.
fn finalize<T: RNum>(ops: &[ReduceOp], outs: &[OutPtr], st: &State<T>, k: usize) {
    for (op, out) in ops.iter().zip(outs) {
        let n = st.n as f64;
        let f = match op {
            ReduceOp::Sum => {
                if matches!(out.dtype, DType::I64 | DType::U64) {
                    // SAFETY: each k is finalised exactly once (see callers).
                    unsafe { out.write::<i64>(k, st.isum) };
                    continue;
                }
                st.sum
            }
            ReduceOp::Prod => {
                if matches!(out.dtype, DType::I64 | DType::U64) {
                    // SAFETY: each k is finalised exactly once (see callers).
                    unsafe { out.write::<i64>(k, st.iprod) };
                    continue;
                }
                st.prod
            }
            ReduceOp::Mean => st.sum / n,
            ReduceOp::Var { ddof } => st.m2 / (n - *ddof as f64).max(0.0),
            ReduceOp::Std { ddof } => (st.m2 / (n - *ddof as f64).max(0.0)).sqrt(),
            ReduceOp::Min | ReduceOp::Max => {
                let v = if *op == ReduceOp::Min { st.min } else { st.max };
                // SAFETY: as above; the output dtype is the input's, whose
                // register type is T (narrowed to the output's storage).
                unsafe { super::regs::store_one::<T>(out, k, v) };
                continue;
            }
            ReduceOp::ArgMin | ReduceOp::ArgMax => {
                let at = if *op == ReduceOp::ArgMin {
                    st.min_at
                } else {
                    st.max_at
                };
                // SAFETY: as above.
                unsafe { out.write::<i64>(k, at as i64) };
                continue;
            }
        };
        // SAFETY: as above.
        unsafe {
            match out.dtype {
                DType::F32 => out.write::<f32>(k, f as f32),
                _ => out.write::<f64>(k, f),
            }
        }
    }
}

/// Whether a reduction needs only the sums of its values (sum, mean over
/// trailing axes): a compiled kernel can then produce them
/// ([`super::jit`]).
pub(crate) fn sums_only(plan: &ReducePlan) -> bool {
    let needs = Needs::of(&plan.ops);
    plan.mode == ReduceMode::Inner
        && needs.sum
        && !(needs.prod || needs.moments || needs.min || needs.max)
}

/// A sum-only state for points `at..at + len` of `reg` (the program's
/// output) from a compiled kernel: its lanes over whole blocks, the
/// interpreter's values for the tail, folded as `sum_lanes` folds them, so
/// the bits are the interpreter's. `None` where the kernel stopped early.
fn compiled_segment<T: RNum>(
    prep: &Prepared<'_>,
    kernel: &super::jit::Bound,
    sc: &mut Scratch,
    reg: Reg,
    at: usize,
    len: usize,
) -> Option<State<T>> {
    let blocks = len / super::jit::BLOCK;
    let lanes = kernel.sum_blocks(at, blocks)?;
    let (tail_at, tail) = (at + blocks * super::jit::BLOCK, len % super::jit::BLOCK);
    let mut rest = 0.0;
    if tail > 0 {
        prep.eval_chunk(sc, tail_at, tail);
        match prep.arg::<T>(sc, reg, tail_at, tail) {
            Arg::Slice(v) => v.iter().for_each(|x| rest += x.to_f64()),
            Arg::Splat(x) => (0..tail).for_each(|_| rest += x.to_f64()),
        }
    }
    let mut s = State::empty();
    s.n = len as u64;
    s.sum = lanes.iter().sum::<f64>() + rest;
    s.mean = s.sum / len as f64;
    if T::IS_INT {
        // A count (`compiled_sums_serve`): whole numbers, exact in float64.
        s.isum = s.sum as i64;
    }
    Some(s)
}

/// Whether a compiled kernel's sums (of the program's output) are the sums
/// of register `reg`: the output itself, or the comparison that the output
/// casts to float64 for a mean, which `value_register` reduces as it is
/// (the same 0s and 1s).
fn compiled_sums_serve(prep: &Prepared<'_>, reg: Reg) -> bool {
    let program = prep.program;
    let out = program.outputs[0];
    reg == out
        || matches!(program.insts[out as usize].kind,
            InstKind::Cast(src) if src == reg && program.dtype(src) == DType::Bool)
}

/// Runs a reduction kernel.
pub(crate) fn run(prep: &Prepared<'_>, plan: &ReducePlan, outs: &[OutPtr], parallel: bool) {
    let reg = value_register(prep, plan);
    let dtype = prep.program.dtype(reg);
    with_type!(dtype, T => match plan.mode {
        ReduceMode::Inner => run_inner::<T>(prep, plan, outs, parallel, reg),
        ReduceMode::Outer => run_outer::<T>(prep, plan, outs, parallel, reg),
    })
}

/// The register to reduce. When the program ends by widening integers or
/// bools to f64 only to sum or average them (`mean(x < 1)`), reduce the
/// narrow values directly: the f64 results are identical and the widening
/// pass is skipped.
fn value_register(prep: &Prepared<'_>, plan: &ReducePlan) -> Reg {
    let out = prep.program.outputs[0];
    let inst = &prep.program.insts[out as usize];
    if let InstKind::Cast(src) = inst.kind {
        let from = prep.program.dtype(src);
        let moments_only = plan.ops.iter().all(|o| {
            matches!(
                o,
                ReduceOp::Sum | ReduceOp::Mean | ReduceOp::Var { .. } | ReduceOp::Std { .. }
            )
        });
        if inst.dtype == DType::F64
            && !from.is_float()
            && moments_only
            && !plan.ops.contains(&ReduceOp::Sum)
        {
            return src;
        }
    }
    out
}

type Partial<T> = Option<(usize, State<T>)>;

fn run_inner<T: Tasks>(
    prep: &Prepared<'_>,
    plan: &ReducePlan,
    outs: &[OutPtr],
    parallel: bool,
    reg: Reg,
) {
    let total = plan.kept * plan.reduced;
    let needs = Needs::of(&plan.ops);
    if plan.reduced == 0 {
        // Reductions over nothing (only sum/mean/var/std get here).
        for k in 0..plan.kept {
            finalize::<T>(&plan.ops, outs, &State::empty(), k);
        }
        return;
    }
    let task = if needs.sum || needs.prod || needs.moments {
        TASK
    } else {
        EXTREME_TASK
    };
    let tasks = total.div_ceil(task);
    let run_task = |t: usize| -> (Partial<T>, Partial<T>) {
        if crate::interrupt::requested() {
            return (None, None); // the caller reports the stop
        }
        let (a, b) = (t * task, ((t + 1) * task).min(total));
        scratch(|sc| inner_task::<T>(prep, plan, outs, needs, sc, a, b, reg))
    };
    // Tasks run in batches whose partial rows are merged in order (each k
    // appears in consecutive tasks only), so memory stays bounded however
    // many points there are (1e13 points are 7.6e7 tasks) and a stop
    // request ends the work between batches. The merge order, hence every
    // bit of the result, does not depend on the batch size.
    const BATCH: usize = 4096;
    let mut cur: Partial<T> = None;
    for t0 in (0..tasks).step_by(BATCH) {
        if crate::interrupt::requested() {
            return;
        }
        let t1 = (t0 + BATCH).min(tasks);
        let parts: Vec<(Partial<T>, Partial<T>)> = if parallel && t1 - t0 > 1 {
            super::map_tasks(t1 - t0, |i| run_task(t0 + i))
        } else {
            (t0..t1).map(run_task).collect()
        };
        for (k, st) in parts.into_iter().flat_map(|(a, b)| [a, b]).flatten() {
            match &mut cur {
                Some((ck, cs)) if *ck == k => cs.merge(&st, needs),
                _ => {
                    if let Some((ck, cs)) = cur.take() {
                        finalize(&plan.ops, outs, &cs, ck);
                    }
                    cur = Some((k, st));
                }
            }
        }
    }
    if let Some((ck, cs)) = cur {
        finalize(&plan.ops, outs, &cs, ck);
    }
}

/// Per-type accumulation kernels, each compiled per SIMD level (the
/// interpreter itself is dispatched separately).
trait Tasks: RNum {
    fn segment(v: Arg<'_, Self>, len: usize, at: u64, needs: Needs) -> State<Self>;
    fn rows(
        st: &mut ColStates<Self>,
        v: Arg<'_, Self>,
        stride: usize,
        m: usize,
        r: usize,
        needs: Needs,
    );
}

macro_rules! task_impls {
    ($($t:ty => $seg:ident, $rows:ident);*) => {$(
        simd_dispatch! {
            fn $seg(v: Arg<'_, $t>, len: usize, at: u64, needs: Needs) -> State<$t> => State::<$t>::of_segment
        }
        simd_dispatch! {
            fn $rows(st: &mut ColStates<$t>, v: Arg<'_, $t>, stride: usize, m: usize, r: usize, needs: Needs) => ColStates::<$t>::add_rows
        }
        impl Tasks for $t {
            fn segment(v: Arg<'_, $t>, len: usize, at: u64, needs: Needs) -> State<$t> {
                $seg(v, len, at, needs)
            }
            fn rows(st: &mut ColStates<$t>, v: Arg<'_, $t>, stride: usize, m: usize, r: usize, needs: Needs) {
                $rows(st, v, stride, m, r, needs)
            }
        }
    )*};
}
task_impls! {
    u8 => segment_u8, rows_u8;
    i32 => segment_i32, rows_i32;
    i64 => segment_i64, rows_i64;
    u64 => segment_u64, rows_u64;
    f32 => segment_f32, rows_f32;
    f64 => segment_f64, rows_f64
}

/// The row being accumulated: (row, state, whether it started at the row's
/// first point).
type Current<T> = Option<(usize, State<T>, bool)>;

/// Adds a segment's state (of row `k`, from point `r` of the row) to the
/// current row, finalising the row it ends (when the task holds all of it)
/// or keeping it as the task's first, partial row.
fn merge_segment<T: RNum>(
    plan: &ReducePlan,
    outs: &[OutPtr],
    needs: Needs,
    cur: &mut Current<T>,
    first: &mut Partial<T>,
    (k, r): (usize, usize),
    st: State<T>,
) {
    match cur {
        Some((ck, cs, _)) if *ck == k => cs.merge(&st, needs),
        _ => {
            if let Some((ck, cs, whole)) = cur.take() {
                if whole {
                    finalize(&plan.ops, outs, &cs, ck);
                } else {
                    *first = Some((ck, cs));
                }
            }
            *cur = Some((k, st, r == 0));
        }
    }
}

/// Reduces points `a..b` of the iteration space. Rows wholly inside are
/// finalised directly; the (at most two) rows cut by the task edges come
/// back as partial states.
#[allow(clippy::too_many_arguments)]
fn inner_task<T: Tasks>(
    prep: &Prepared<'_>,
    plan: &ReducePlan,
    outs: &[OutPtr],
    needs: Needs,
    sc: &mut Scratch,
    a: usize,
    b: usize,
    out_reg: Reg,
) -> (Partial<T>, Partial<T>) {
    let r_len = plan.reduced;
    let mut first: Partial<T> = None;
    let mut cur: Current<T> = None;
    // An extreme (min/max/argmin/argmax) of a value read straight from
    // memory takes whole rows of the task as segments: no chunk evaluation
    // and far fewer state merges. Only extremes: they are exact whatever the
    // grouping, where a sum's bits depend on the segments.
    let whole = prep.reads_directly(out_reg) && !(needs.sum || needs.prod || needs.moments);
    // A compiled kernel sums the program's output without evaluating chunks.
    let compiled = prep
        .jit()
        .filter(|_| sums_only(plan) && compiled_sums_serve(prep, out_reg));
    let mut p = a;
    while p < b {
        let len = if whole {
            b - p
        } else {
            prep.chunk().min(b - p)
        };
        if !whole && compiled.is_none() {
            prep.eval_chunk(sc, p, len);
        }
        let mut off = 0usize;
        while off < len {
            let i = p + off;
            let (k, r) = (i / r_len, i % r_len);
            let seg = (r_len - r).min(len - off);
            if let Some(kernel) = compiled {
                if let Some(st) = compiled_segment::<T>(prep, kernel, sc, out_reg, i, seg) {
                    merge_segment(plan, outs, needs, &mut cur, &mut first, (k, r), st);
                    off += seg;
                    continue;
                }
                // The kernel stopped early (a sin/cos argument beyond its
                // range): this segment from the interpreter's chunk.
                prep.eval_chunk(sc, p, len);
            }
            let v = match prep.arg::<T>(sc, out_reg, p, len) {
                Arg::Slice(s) => Arg::Slice(&s[off..off + seg]),
                Arg::Splat(x) => Arg::Splat(x),
            };
            let mut st = T::segment(v, seg, r as u64, needs);
            if let Arg::Splat(x) = v {
                // A constant's (x - mean)^2 is 0, but NaN for NaN and
                // infinities, as NumPy computes it. (Set here, outside the
                // SIMD-compiled segment code: there it broke LLVM's AVX-512
                // register allocation.)
                if needs.moments && !x.to_f64().is_finite() {
                    st.m2 = f64::NAN;
                }
            }
            merge_segment(plan, outs, needs, &mut cur, &mut first, (k, r), st);
            off += seg;
        }
        p += len;
    }
    match cur {
        Some((ck, cs, whole)) => {
            let ends_row = b.is_multiple_of(r_len);
            if whole && ends_row {
                finalize(&plan.ops, outs, &cs, ck);
                (first, None)
            } else if first.is_none() && !whole {
                (Some((ck, cs)), None)
            } else {
                (first, Some((ck, cs)))
            }
        }
        None => (first, None),
    }
}
