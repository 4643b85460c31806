//! Fused programs compiled to machine code (x86-64 with AVX-512 or AVX2).
//!
//! The chunked interpreter runs each instruction as its own loop over a
//! chunk and stores every intermediate value: on this project's AVX-512
//! machine a 512-bit store costs about 0.07 ns a float64 point, so
//! `sum(where(x > 0.5, x*x, -x))` (four instructions) ran at 0.47 ns a
//! point where one loop that keeps everything in registers takes 0.08. For
//! the programs whose every instruction has one vector instruction
//! (arithmetic, `sqrt`, `abs`, negation, comparisons feeding `where`, on
//! one float dtype, reading contiguous inputs and constants), this module
//! emits that loop ([`x86`]), caches it by the program's structure
//! (constants are arguments), and runs it over 16-point blocks. Results
//! are bit-identical to the interpreter's: the same IEEE operations in the
//! same order, and a sum accumulates the same 16 float64 lanes as
//! `reduce.rs`'s `sum_lanes`; the interpreter still computes the tail of a
//! range that is not a whole number of blocks.
//!
//! Random draws in order are sources too: each call generates them into a
//! per-thread buffer with the interpreter's generator (`fill_random`; a
//! store [`FILL_POINTS`] at a time, so they are read back from L1), and an
//! output that casts a comparison to a float is a count, `where(mask, 1,
//! 0)`: Monte Carlo pi's `mean(x*x + y*y <= 1)` is one loop after its
//! draws instead of seven interpreter passes.
//!
//! float32 `sin`, `cos` and `exp` are covered too (`x86_f32_math.rs`: the
//! interpreter's f32 reductions and polynomials; a kernel that meets an
//! argument beyond 1e6 returns early and the interpreter computes the
//! call). Stores of large outputs bypass the caches (a second kernel with
//! non-temporal stores, [`Bound::store_blocks`]). Anything else (other
//! transcendentals, float64 sin/cos, integers, other casts, gathers, several
//! outputs, CPUs without AVX2, `CROSSOVER_SIMD=scalar`, `CROSSOVER_JIT=0`)
//! runs in the interpreter.

use super::gather::Access;
use super::interp::{fill_random, slot_bytes, Bound as Source, Data, Prepared, RegKind, Val};
use crate::dtype::DType;
use crate::expr::ir::{InstKind, Reg};
use crate::fuse_cache::FastMap;
use crate::op::{BinaryOp, UnaryOp};
use crate::rng::{Distribution, RandomKey};
use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock};

#[cfg(target_arch = "x86_64")]
mod x86;
#[cfg(target_arch = "x86_64")]
use x86::MAX_SOURCES;
#[cfg(not(target_arch = "x86_64"))]
const MAX_SOURCES: usize = 0;

/// Points a kernel call handles at a time (the tail is the interpreter's).
pub(crate) const BLOCK: usize = 16;

/// Fewest points for which a program is looked up (and compiled once): a
/// smaller kernel's time is its fixed cost, which the lookup would add to.
/// With the kept lowering (`memo.rs`; callgrind, `xo.evaluate` on NumPy
/// inputs, session 51), compiled against interpreted: `a*b + b` float32
/// 128 instructions a call more at 1,024 points, 744 fewer at 1,536, 1,031
/// at 2,048 and 2,113 at 3,072; `(a + b) * 0.5` 814 more at 1,024, the same
/// at 2,048 and 848 fewer at 3,072 (4,096 before, measured with the
/// lookup's 2,000 instructions).
pub(crate) const MIN_POINTS: usize = 2048;

/// Fewest points for a program of at least [`HEAVY_FLOPS`] a point, whose
/// loop saves more per point than the lookup costs. With the kept lowering
/// (callgrind, `xo.evaluate` on NumPy inputs, session 51): compiled,
/// `a*b + sin(a) + cos(b)` took 18.2k instructions a call against 18.9k at
/// 256 points and 20.4k against 22.1k at 512, `sqrt(a*a + b*b) * 0.5` 1-3%
/// fewer and `exp(-a*a) * b` the same; at 64 and 128 points the lookup
/// cost what the loop saved (768 before, measured with the lookup's 2,000).
pub(crate) const MIN_POINTS_HEAVY: usize = 256;

/// `var`, read once into `cell` ([`crate::env::points`]: an invalid value
/// warns), or `default`: the thresholds above can be moved to measure
/// where the compiled loop starts to pay on a machine.
fn threshold(cell: &OnceLock<usize>, var: &str, default: usize) -> usize {
    *cell.get_or_init(|| crate::env::points(var, std::env::var(var).ok().as_deref(), default))
}

/// [`MIN_POINTS`], or `CROSSOVER_JIT_MIN_POINTS`.
fn min_points() -> usize {
    static MIN: OnceLock<usize> = OnceLock::new();
    threshold(&MIN, "CROSSOVER_JIT_MIN_POINTS", MIN_POINTS)
}

/// [`MIN_POINTS_HEAVY`], or `CROSSOVER_JIT_MIN_POINTS_HEAVY`.
fn min_points_heavy() -> usize {
    static MIN: OnceLock<usize> = OnceLock::new();
    threshold(&MIN, "CROSSOVER_JIT_MIN_POINTS_HEAVY", MIN_POINTS_HEAVY)
}

/// Flops a point ([`crate::expr::ir::Program::flops_per_point`]) from
/// which a program is compiled at [`MIN_POINTS_HEAVY`] points.
pub(crate) const HEAVY_FLOPS: f64 = 4.0;

/// Whether a kernel of `points` points and `flops_per_point` is worth
/// looking up (and compiling once).
pub(crate) fn worth_compiling(points: usize, flops_per_point: f64) -> bool {
    points >= min_points() || (flops_per_point >= HEAVY_FLOPS && points >= min_points_heavy())
}

/// Most kernels kept; programs beyond stay in the interpreter.
const MAX_KERNELS: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Float {
    F32,
    F64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Mode {
    /// 16 float64 lane sums of the output.
    Sum,
    /// The output's values, stored.
    Store,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Unary {
    Neg,
    Abs,
    Square,
    Sqrt,
    /// float32 only (`x86_f32_math.rs`).
    Sin,
    Cos,
    Exp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Binary {
    Add,
    Sub,
    Mul,
    Div,
}

#[cfg(target_arch = "x86_64")]
use x86::{Cmp, Isa};
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Isa {}

/// A register-machine node: operands are indices of earlier nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Node {
    /// Contiguous input `j`.
    Source(usize),
    /// Constant `k` (a kernel argument).
    Splat(usize),
    Unary(Unary, usize),
    Binary(Binary, usize, usize),
    /// A comparison (a mask, used only by selects).
    #[cfg(target_arch = "x86_64")]
    Cmp(Cmp, usize, usize),
    /// `mask ? a : b`.
    Select(usize, usize, usize),
}

impl Node {
    /// A float32 function with temporaries and a constant table.
    fn is_function(&self) -> bool {
        matches!(self, Node::Unary(Unary::Sin | Unary::Cos | Unary::Exp, _))
    }

    fn operands(&self) -> impl Iterator<Item = usize> {
        let (a, b, c) = match *self {
            Node::Source(_) | Node::Splat(_) => (None, None, None),
            Node::Unary(_, a) => (Some(a), None, None),
            Node::Binary(_, a, b) => (Some(a), Some(b), None),
            #[cfg(target_arch = "x86_64")]
            Node::Cmp(_, a, b) => (Some(a), Some(b), None),
            Node::Select(c, a, b) => (Some(c), Some(a), Some(b)),
        };
        [a, b, c].into_iter().flatten()
    }
}

/// A program in the kernel's terms: the cache key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Spec {
    isa: Isa,
    float: Float,
    mode: Mode,
    nodes: Vec<Node>,
    output: usize,
    sources: usize,
    splats: usize,
    /// Splats holding the sign bit and all other bits (for `-x`, `|x|`).
    sign_mask: Option<usize>,
    abs_mask: Option<usize>,
    /// Stores bypass the caches (`vmovnt*`, 64-byte aligned output).
    stream: bool,
}

/// Returns 0, or 1 where it stopped early (a float32 sin/cos argument beyond
/// its range): the output is then incomplete.
type KernelFn = unsafe extern "C" fn(*const *const u8, *const u64, usize, *mut u8) -> u32;

/// Compiled code in executable memory (kept for the process's life).
pub(crate) struct Kernel {
    entry: KernelFn,
}

/// A kernel bound to one prepared program: where its sources are and the
/// bits of its constants.
pub(crate) struct Bound {
    kernel: Arc<Kernel>,
    /// The same program with streaming stores, for outputs too large to
    /// stay in the caches: they skip reading each output line before
    /// writing it (a quarter of `a*b + c`'s memory traffic).
    streaming: Option<Arc<Kernel>>,
    mode: Mode,
    /// Bytes per value.
    size: usize,
    sources: Vec<Input>,
    splats: Vec<u64>,
}

/// Where a kernel's source values come from.
#[derive(Clone, Copy, Debug)]
enum Input {
    /// Read in place: the address of point 0 and the points readable from
    /// there.
    Memory { addr: usize, points: usize },
    /// Random numbers, generated for each call into a per-thread buffer by
    /// the interpreter's generator (so the same bits): point `i` is draw
    /// `first + i` of the stream.
    Random {
        dtype: DType,
        dist: Distribution,
        key: RandomKey,
        first: u64,
    },
}

/// Points a store kernel with random sources runs per fill, so that the
/// generated values are still in L1 when the kernel reads them.
const FILL_POINTS: usize = 1024;

thread_local! {
    /// The random sources' values for the current call (each at most 8
    /// bytes a point).
    static FILLED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

#[derive(Clone, Copy)]
enum Splat {
    Reg(Reg),
    Bits(u64),
}

/// The instruction set compiled kernels use here: AVX-512 or AVX2 as
/// `simd.rs` detected (and `CROSSOVER_SIMD` capped) it; none on other CPUs
/// or with `CROSSOVER_JIT=0`.
pub(crate) fn isa() -> Option<Isa> {
    static ISA: OnceLock<Option<Isa>> = OnceLock::new();
    *ISA.get_or_init(|| {
        let off = matches!(
            std::env::var("CROSSOVER_JIT").ok().as_deref(),
            Some("0" | "off" | "false")
        );
        if off {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            use super::simd::{level, SimdLevel};
            match level() {
                SimdLevel::Avx512 => Some(Isa::Avx512),
                SimdLevel::Avx2 => Some(Isa::Avx2),
                SimdLevel::Scalar => None,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    })
}

/// The kernel for `prep`'s program in `mode`, compiled on first use; `None`
/// when the program has something the compiler does not cover.
pub(crate) fn bind(prep: &Prepared<'_>, mode: Mode, points: usize) -> Option<Bound> {
    let isa = isa()?;
    memo::with_lowered(prep, mode, isa, |lowered| {
        let lowered = lowered?;
        let mut bound = bind_lowered(prep, lowered)?;
        let bytes = points * bound.size * (bound.sources.len() + 1);
        if mode == Mode::Store && bytes >= STREAM_BYTES {
            let mut spec = lowered.spec.clone();
            spec.stream = true;
            bound.streaming = compiled(&spec);
        }
        Some(bound)
    })
}

/// Bytes read and written by a store kernel from which its stores stream
/// past the caches: this machine's L3 (32 MiB), beyond which the output
/// would be evicted before it is read again anyway.
const STREAM_BYTES: usize = 32 << 20;

/// [`bind`] for a given instruction set (the CPU must have it).
#[cfg(test)]
fn bind_for(prep: &Prepared<'_>, mode: Mode, isa: Isa) -> Option<Bound> {
    memo::with_lowered(prep, mode, isa, |lowered| bind_lowered(prep, lowered?))
}

/// `lowered` bound to this call's sources and constants.
fn bind_lowered(prep: &Prepared<'_>, lowered: &memo::Lowered) -> Option<Bound> {
    let sources = lowered
        .sources
        .iter()
        .map(|&r| {
            let memory = prep.in_place_bytes(r);
            memory
                .map(|(addr, points)| Input::Memory { addr, points })
                .or_else(|| prep.random_input(r))
        })
        .collect::<Option<Vec<_>>>()?;
    let splats = lowered
        .splats
        .iter()
        .map(|s| match *s {
            Splat::Bits(b) => Some(b),
            Splat::Reg(r) => prep.splat_bits(r),
        })
        .collect::<Option<Vec<_>>>()?;
    let size = match lowered.spec.float {
        Float::F64 => 8,
        Float::F32 => 4,
    };
    Some(Bound {
        kernel: Arc::clone(&lowered.kernel),
        streaming: None,
        mode: lowered.spec.mode,
        size,
        sources,
        splats,
    })
}

fn compiled(spec: &Spec) -> Option<Arc<Kernel>> {
    // Looked up on every call of a compiled kernel: std's SipHash over a
    // spec cost about 2,000 instructions a call (a where-sum on 10,000
    // points), more than the rest of the lookup.
    static CACHE: OnceLock<Mutex<FastMap<Spec, Option<Arc<Kernel>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = map.get(spec) {
        return k.clone();
    }
    if map.len() >= MAX_KERNELS {
        return None;
    }
    let kernel = compile(spec).map(Arc::new);
    map.insert(spec.clone(), kernel.clone());
    kernel
}

#[cfg(target_arch = "x86_64")]
fn compile(spec: &Spec) -> Option<Kernel> {
    let code = x86::emit(spec)?;
    let entry = exec::install(&code)?;
    // SAFETY: `code` is a complete function with KernelFn's signature in the
    // System V convention (x86.rs), now in executable memory never freed.
    let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(entry) };
    Some(Kernel { entry })
}

#[cfg(not(target_arch = "x86_64"))]
fn compile(_: &Spec) -> Option<Kernel> {
    None
}

mod exec {
    /// Copies `code` into fresh read+execute pages (never unmapped).
    pub(super) fn install(code: &[u8]) -> Option<*const u8> {
        let len = code.len().max(1);
        // SAFETY: an anonymous private mapping of `len` bytes, written only
        // here before it becomes read+execute; the pointer is checked.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return None;
            }
            std::ptr::copy_nonoverlapping(code.as_ptr(), p as *mut u8, code.len());
            if libc::mprotect(p, len, libc::PROT_READ | libc::PROT_EXEC) != 0 {
                libc::munmap(p, len);
                return None;
            }
            Some(p as *const u8)
        }
    }
}

/// The program as kernel nodes, with the registers behind its sources and
/// constants; `None` for anything the kernel does not cover.
fn lower(prep: &Prepared<'_>, mode: Mode, isa: Isa) -> Option<(Spec, Vec<Reg>, Vec<Splat>)> {
    let program = prep.program;
    let out = *program.outputs.first()?;
    if program.outputs.len() != 1 || out as usize + 1 != program.insts.len() {
        return None;
    }
    let out_inst = &program.insts[out as usize];
    // A count: the output is a comparison cast to a float, as in
    // `mean(x*x + y*y <= 1)`. It is computed as `where(mask, 1, 0)` in the
    // compared values' type; a sum of it is float64 lanes of whole numbers
    // either way, so the cast may widen float32 to float64 there.
    let counted = match out_inst.kind {
        InstKind::Cast(m) if program.dtype(m) == DType::Bool => {
            match program.insts[m as usize].kind {
                InstKind::Binary(op, a, _) if op.is_comparison() => {
                    let values = program.dtype(a);
                    let widened = mode == Mode::Sum && out_inst.dtype == DType::F64;
                    (out_inst.dtype == values || widened).then_some((m as usize, values))
                }
                _ => None,
            }
        }
        _ => None,
    };
    let dtype = counted.map_or(out_inst.dtype, |(_, values)| values);
    let float = match dtype {
        DType::F64 => Float::F64,
        DType::F32 => Float::F32,
        _ => return None,
    };
    let mut nodes = Vec::with_capacity(program.insts.len());
    let mut sources: Vec<Reg> = Vec::new();
    let mut splats: Vec<Splat> = Vec::new();
    let (mut sign_mask, mut abs_mask) = (None, None);
    let (sign, all) = match float {
        Float::F64 => (1u64 << 63, u64::MAX >> 1),
        Float::F32 => (1u64 << 31, (u32::MAX >> 1) as u64),
    };
    let mask_splat = |slot: &mut Option<usize>, bits: u64, splats: &mut Vec<Splat>| {
        *slot.get_or_insert_with(|| {
            splats.push(Splat::Bits(bits));
            splats.len() - 1
        })
    };
    // Two more entries for a count's 1 and 0 (below).
    let mut is_mask = vec![false; program.insts.len() + 2];
    for (r, inst) in program.insts.iter().enumerate() {
        let r = r as Reg;
        let value_typed = inst.dtype == dtype;
        let node = match &inst.kind {
            InstKind::Random { .. } if value_typed && prep.random_input(r).is_some() => {
                if sources.len() == MAX_SOURCES {
                    return None;
                }
                sources.push(r);
                Node::Source(sources.len() - 1)
            }
            InstKind::Cast(m) if counted.is_some_and(|(c, _)| c == *m as usize) => {
                // `where(mask, 1, 0)`: the two constants become nodes after
                // every register's (so registers keep their node indices).
                let bits = |v: f64| match float {
                    Float::F64 => v.to_bits(),
                    Float::F32 => (v as f32).to_bits() as u64,
                };
                for v in [1.0, 0.0] {
                    splats.push(Splat::Bits(bits(v)));
                    nodes.push(Node::Splat(splats.len() - 1));
                }
                let n = nodes.len();
                Node::Select(*m as usize, n - 2, n - 1)
            }
            InstKind::Load(_) | InstKind::Const(_) if value_typed => {
                if prep.in_place_bytes(r).is_some() {
                    if sources.len() == MAX_SOURCES {
                        return None;
                    }
                    sources.push(r);
                    Node::Source(sources.len() - 1)
                } else if prep.splat_bits(r).is_some() {
                    splats.push(Splat::Reg(r));
                    Node::Splat(splats.len() - 1)
                } else {
                    return None;
                }
            }
            InstKind::Unary(op, a) if value_typed && !is_mask[*a as usize] => {
                let u = match op {
                    UnaryOp::Neg => {
                        mask_splat(&mut sign_mask, sign, &mut splats);
                        Unary::Neg
                    }
                    UnaryOp::Abs => {
                        mask_splat(&mut abs_mask, all, &mut splats);
                        Unary::Abs
                    }
                    UnaryOp::Square => Unary::Square,
                    UnaryOp::Sqrt => Unary::Sqrt,
                    UnaryOp::Sin if float == Float::F32 => Unary::Sin,
                    UnaryOp::Cos if float == Float::F32 => Unary::Cos,
                    UnaryOp::Exp if float == Float::F32 => Unary::Exp,
                    _ => return None,
                };
                Node::Unary(u, *a as usize)
            }
            InstKind::Binary(op, a, b)
                if !is_mask[*a as usize]
                    && !is_mask[*b as usize]
                    && program.dtype(*a) == dtype
                    && program.dtype(*b) == dtype =>
            {
                let (a, b) = (*a as usize, *b as usize);
                match (op, value_typed) {
                    (BinaryOp::Add, true) => Node::Binary(Binary::Add, a, b),
                    (BinaryOp::Sub, true) => Node::Binary(Binary::Sub, a, b),
                    (BinaryOp::Mul, true) => Node::Binary(Binary::Mul, a, b),
                    (BinaryOp::Div, true) => Node::Binary(Binary::Div, a, b),
                    #[cfg(target_arch = "x86_64")]
                    (op, false) if op.is_comparison() && inst.dtype == DType::Bool => {
                        is_mask[r as usize] = true;
                        let c = match op {
                            BinaryOp::Lt => Cmp::Lt,
                            BinaryOp::Le => Cmp::Le,
                            BinaryOp::Gt => Cmp::Gt,
                            BinaryOp::Ge => Cmp::Ge,
                            BinaryOp::Eq => Cmp::Eq,
                            _ => Cmp::Ne,
                        };
                        Node::Cmp(c, a, b)
                    }
                    _ => return None,
                }
            }
            InstKind::Where(c, a, b)
                if value_typed
                    && is_mask[*c as usize]
                    && !is_mask[*a as usize]
                    && !is_mask[*b as usize] =>
            {
                Node::Select(*c as usize, *a as usize, *b as usize)
            }
            _ => return None,
        };
        nodes.push(node);
    }
    // The last instruction's node (a count's comes after its constants).
    let output = nodes.len() - 1;
    // Masks feed selects only (a stored or summed bool is the interpreter's).
    for (i, node) in nodes.iter().enumerate() {
        for o in node.operands() {
            if is_mask[o] && !matches!(node, Node::Select(c, ..) if *c == o) {
                return None;
            }
        }
        if is_mask[i] && i == output {
            return None;
        }
    }
    // One stored instruction is already one loop in the interpreter (a
    // lone sin or cos measured the same speed compiled); a sum of one is
    // two passes there (evaluate, then add up), so it is compiled.
    let computed = nodes
        .iter()
        .filter(|n| !matches!(n, Node::Source(_) | Node::Splat(_)))
        .count();
    let fewest = if mode == Mode::Sum { 1 } else { 2 };
    if computed < fewest {
        return None;
    }
    let spec = Spec {
        isa,
        float,
        mode,
        nodes,
        output,
        sources: sources.len(),
        splats: splats.len(),
        sign_mask,
        abs_mask,
        stream: false,
    };
    Some((spec, sources, splats))
}

impl Prepared<'_> {
    /// For a float32/float64 register read in place: the address of its
    /// value at point 0 and how many points can be read from there.
    fn in_place_bytes(&self, r: Reg) -> Option<(usize, usize)> {
        let RegKind::Direct { source, offset } = self.kinds[r as usize] else {
            return None;
        };
        let Source::Buffer { data, .. } = &self.sources[source] else {
            return None;
        };
        match data {
            Data::F64(s) => s.get(offset..).map(|t| (t.as_ptr() as usize, t.len())),
            Data::F32(s) => s.get(offset..).map(|t| (t.as_ptr() as usize, t.len())),
            _ => None,
        }
    }

    /// For a float32/float64 random register drawn in order (point `i` is
    /// draw `offset + i`): how a kernel's call generates its values.
    fn random_input(&self, r: Reg) -> Option<Input> {
        let inst = &self.program.insts[r as usize];
        let InstKind::Random { index, dist, key } = inst.kind else {
            return None;
        };
        let Source::Index {
            access: Access::Contiguous { offset },
        } = self.sources[index as usize]
        else {
            return None;
        };
        matches!(inst.dtype, DType::F32 | DType::F64).then_some(Input::Random {
            dtype: inst.dtype,
            dist,
            key,
            first: offset as u64,
        })
    }

    /// The bits of a float32/float64 constant register.
    fn splat_bits(&self, r: Reg) -> Option<u64> {
        match self.kinds[r as usize] {
            RegKind::Splat(Val::F64(v)) => Some(v.to_bits()),
            RegKind::Splat(Val::F32(v)) => Some(v.to_bits() as u64),
            _ => None,
        }
    }

    /// Compiles (or finds) the kernel that runs this program in `mode`,
    /// where one can; the callers then use [`Prepared::jit`].
    pub(crate) fn attach_jit(&mut self, mode: Mode, points: usize) {
        self.jit = bind(self, mode, points);
    }

    /// The compiled kernel attached to this program, if any.
    pub(crate) fn jit(&self) -> Option<&Bound> {
        self.jit.as_ref()
    }
}

impl Bound {
    /// Source pointers for points `start..start + len`, checked to lie
    /// inside each source read in place; random sources' values are
    /// generated into `filled` (`len` values each, in order).
    fn source_ptrs(
        &self,
        start: usize,
        len: usize,
        filled: &mut [u64],
    ) -> [*const u8; MAX_SOURCES] {
        let mut ptrs = [std::ptr::null(); MAX_SOURCES];
        let mut buffers = filled.chunks_mut(len.max(1));
        for (p, source) in ptrs.iter_mut().zip(&self.sources) {
            *p = match *source {
                Input::Memory { addr, points } => {
                    assert!(
                        start + len <= points,
                        "compiled kernel: range outside a source"
                    );
                    (addr + start * self.size) as *const u8
                }
                Input::Random {
                    dtype,
                    dist,
                    key,
                    first,
                } => {
                    let buffer = buffers
                        .next()
                        .expect("compiled kernel: a buffer per random source");
                    let at = first + start as u64;
                    fill_random(dtype, dist, key, at, slot_bytes(buffer), len);
                    buffer.as_ptr() as *const u8
                }
            };
        }
        ptrs
    }

    /// Runs the kernel over `blocks` blocks from point `start`, writing to
    /// `out`; a store with random sources runs [`FILL_POINTS`] at a time
    /// (a sum runs whole: its lanes, and so its bits, span the call).
    ///
    /// # Safety
    /// `out` must be writable for what the kernel's mode writes: 16
    /// float64 lanes (Sum) or `16 * blocks` values (Store).
    unsafe fn call(&self, kernel: &Kernel, start: usize, blocks: usize, out: *mut u8) -> bool {
        let randoms = self
            .sources
            .iter()
            .filter(|s| matches!(s, Input::Random { .. }))
            .count();
        let step = match self.mode {
            Mode::Store if randoms > 0 => FILL_POINTS / BLOCK,
            _ => blocks.max(1),
        };
        FILLED.with_borrow_mut(|filled| {
            let mut done = 0;
            loop {
                let n = step.min(blocks - done);
                // (One value each even for no points: a buffer per source.)
                filled.resize(randoms * (n * BLOCK).max(1), 0);
                let ptrs = self.source_ptrs(start + done * BLOCK, n * BLOCK, filled);
                let out = match self.mode {
                    Mode::Sum => out,
                    // SAFETY: within the caller's `16 * blocks` values.
                    Mode::Store => unsafe { out.add(done * BLOCK * self.size) },
                };
                // SAFETY: every source pointer starts at least 16 * n values:
                // of a live source (checked in `source_ptrs`; `Prepared`
                // borrows the sources for longer than this call) or of
                // `filled`, not touched until the kernel returns; the
                // splats array has an entry per constant the kernel loads,
                // and the caller vouches for `out`.
                let ok =
                    unsafe { (kernel.entry)(ptrs.as_ptr(), self.splats.as_ptr(), n, out) == 0 };
                done += n;
                if !ok || done >= blocks {
                    return ok;
                }
            }
        })
    }

    /// The 16 float64 lane sums of the output over points
    /// `start..start + 16 * blocks` (each lane from zero, as `sum_lanes`);
    /// `None` where the kernel stopped early (the interpreter's work then).
    pub(crate) fn sum_blocks(&self, start: usize, blocks: usize) -> Option<[f64; BLOCK]> {
        assert_eq!(self.mode, Mode::Sum, "compiled kernel: not a sum");
        let mut lanes = [0f64; BLOCK];
        // SAFETY: a sum kernel writes its 16 float64 lanes, which `lanes`
        // holds.
        let done = unsafe { self.call(&self.kernel, start, blocks, lanes.as_mut_ptr() as *mut u8) };
        done.then_some(lanes)
    }

    /// Writes the output's values for points `start..start + 16 * blocks`
    /// into `out` (those points' bytes); false where the kernel stopped
    /// early and `out` is incomplete.
    #[must_use]
    pub(crate) fn store_blocks(&self, start: usize, blocks: usize, out: &mut [u8]) -> bool {
        assert_eq!(self.mode, Mode::Store, "compiled kernel: not a store");
        assert!(out.len() >= blocks * BLOCK * self.size);
        // Streaming stores need their 64-byte alignment (large buffers
        // start on a huge page; a task's range on a multiple of 64 bytes).
        let kernel = match &self.streaming {
            Some(k) if (out.as_ptr() as usize).is_multiple_of(64) => k,
            _ => &self.kernel,
        };
        // SAFETY: a store kernel writes 16 * blocks values, which `out`
        // holds (asserted above), aligned as a streaming kernel needs
        // (checked).
        unsafe { self.call(kernel, start, blocks, out.as_mut_ptr()) }
    }
}

mod memo;
pub(crate) use memo::Lowering;
mod tail;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_random;
