//! The x86-64 code generator: one loop over 16-point blocks that keeps a
//! whole program in vector registers, so a fused chain costs its
//! arithmetic, not a store and a load per instruction as in the chunked
//! interpreter. One driver ([`emit`]) walks the program; an [`Isa`]'s
//! registers and instructions come from `x86_avx512.rs` (32 `zmm`
//! registers, comparisons in `k` masks) or `x86_avx2.rs` (16 `ymm`
//! registers, comparisons as vector masks).
//!
//! The function it emits follows the System V calling convention:
//! `fn(srcs: *const *const u8, splats: *const u64, blocks: usize, out: *mut u8) -> u32`
//! (0, or 1 where a float32 sin/cos argument was beyond the kernel's range:
//! `x86_f32_math.rs`).
//! Sources are read at `srcs[j] + block * 16 * size`; a sum writes its 16
//! float64 lanes to `out` (lane `l` adds points `16b + l`, as `sum_lanes`
//! in `reduce.rs` does); a store writes the values to `out`.

use super::{Binary, Float, Mode, Node, Spec, Unary};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

/// The methods whose code is the same on both instruction sets but for the
/// register names and the memory operand's width: `$r` the register
/// array, `$ptr` iced's memory-operand constructor, `$cmem` the one for a
/// constant-table entry as an arithmetic operand.
macro_rules! shared_vector_ops {
    ($r:ident, $ptr:ident, $cmem:ident) => {
        fn copy(&mut self, dst: usize, x: usize) -> Result<(), IcedError> {
            self.a.vmovaps($r[dst], $r[x])
        }
        fn broadcast32(&mut self, dst: usize, c: Arg) -> Result<(), IcedError> {
            match c {
                Arg::R(r) => self.copy(dst, r),
                Arg::C(l) => self.a.vbroadcastss($r[dst], dword_ptr(l)),
            }
        }
        fn op32(&mut self, op: Op32, dst: usize, a: usize, b: Arg) -> Result<(), IcedError> {
            let (d, x) = ($r[dst], $r[a]);
            match b {
                Arg::R(r) => op32_with!(self.a, op, d, x, $r[r]),
                Arg::C(l) => op32_with!(self.a, op, d, x, $cmem(l)),
            }
        }
        fn shl32(&mut self, dst: usize, x: usize, n: i32) -> Result<(), IcedError> {
            self.a.vpslld($r[dst], $r[x], n)
        }
        fn sra32(&mut self, dst: usize, x: usize, n: i32) -> Result<(), IcedError> {
            self.a.vpsrad($r[dst], $r[x], n)
        }
        fn load(
            &mut self,
            f64: bool,
            dst: usize,
            base: AsmRegister64,
            disp: i32,
        ) -> Result<(), IcedError> {
            let m = $ptr(base + rdi + disp);
            if f64 {
                self.a.vmovupd($r[dst], m)
            } else {
                self.a.vmovups($r[dst], m)
            }
        }
        fn broadcast(&mut self, f64: bool, dst: usize, k: usize) -> Result<(), IcedError> {
            if f64 {
                self.a.vbroadcastsd($r[dst], qword_ptr(rsi + 8 * k as i32))
            } else {
                self.a.vbroadcastss($r[dst], dword_ptr(rsi + 8 * k as i32))
            }
        }
        fn sqrt(&mut self, f64: bool, dst: usize, x: usize) -> Result<(), IcedError> {
            if f64 {
                self.a.vsqrtpd($r[dst], $r[x])
            } else {
                self.a.vsqrtps($r[dst], $r[x])
            }
        }
        fn binary(
            &mut self,
            f64: bool,
            op: Binary,
            dst: usize,
            x: usize,
            y: usize,
        ) -> Result<(), IcedError> {
            let (d, x, y) = ($r[dst], $r[x], $r[y]);
            match (op, f64) {
                (Binary::Add, true) => self.a.vaddpd(d, x, y),
                (Binary::Add, false) => self.a.vaddps(d, x, y),
                (Binary::Sub, true) => self.a.vsubpd(d, x, y),
                (Binary::Sub, false) => self.a.vsubps(d, x, y),
                (Binary::Mul, true) => self.a.vmulpd(d, x, y),
                (Binary::Mul, false) => self.a.vmulps(d, x, y),
                (Binary::Div, true) => self.a.vdivpd(d, x, y),
                (Binary::Div, false) => self.a.vdivps(d, x, y),
            }
        }
        fn store(&mut self, f64: bool, disp: i32, v: usize) -> Result<(), IcedError> {
            let m = $ptr(rcx + rdi + disp);
            if f64 {
                self.a.vmovupd(m, $r[v])
            } else {
                self.a.vmovups(m, $r[v])
            }
        }
        fn store_stream(&mut self, disp: i32, v: usize) -> Result<(), IcedError> {
            self.a.vmovntps($ptr(rcx + rdi + disp), $r[v])
        }
    };
}
use shared_vector_ops;

/// `dst = op(a, b)` for an [`Op32`] whose `b` is a register or a memory
/// operand (the instruction names are the same on both instruction sets).
macro_rules! op32_with {
    ($a:expr, $op:expr, $d:expr, $x:expr, $b:expr) => {
        match $op {
            Op32::Fma213 => $a.vfmadd213ps($d, $x, $b),
            Op32::Fnma231 => $a.vfnmadd231ps($d, $x, $b),
            Op32::Sub => $a.vsubps($d, $x, $b),
            Op32::Mul => $a.vmulps($d, $x, $b),
            Op32::Add => $a.vaddps($d, $x, $b),
            Op32::Max => $a.vmaxps($d, $x, $b),
            Op32::Min => $a.vminps($d, $x, $b),
            Op32::And => $a.vandps($d, $x, $b),
            Op32::Or => $a.vorps($d, $x, $b),
            Op32::AddI32 => $a.vpaddd($d, $x, $b),
            Op32::SubI32 => $a.vpsubd($d, $x, $b),
        }
    };
}

#[path = "x86_avx2.rs"]
mod avx2;
#[path = "x86_avx512.rs"]
mod avx512;
#[path = "x86_f32_math.rs"]
mod f32_math;
use f32_math::{F32Math, Op32};

/// A vector operand: register `n`, or an entry of the kernel's constant
/// table (float32 lanes).
#[derive(Clone, Copy)]
pub(super) enum Arg {
    R(usize),
    C(CodeLabel),
}

/// Source pointers live in these (caller-saved) registers.
const SOURCE_GPRS: [AsmRegister64; 5] = [r8, r9, r10, r11, rax];

/// Most sources one kernel reads.
pub(super) const MAX_SOURCES: usize = SOURCE_GPRS.len();

/// The instruction set a kernel is emitted for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Isa {
    Avx512,
    Avx2,
}

/// `vcmppd`/`vcmpps` predicates with Rust's (and NumPy's) NaN rules:
/// ordered for `<`, `<=`, `>`, `>=`, `==` (false on NaN), unordered for `!=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Cmp {
    Lt = 0x11,
    Le = 0x12,
    Gt = 0x1E,
    Ge = 0x1D,
    Eq = 0x00,
    Ne = 0x04,
}

/// Where a node's value is held: vector register `n`, or mask register `n`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Loc {
    V(usize),
    K(usize),
}

/// How an instruction set lays out its registers.
pub(super) struct Regs {
    /// Vector registers holding a sum's accumulators (from register 0).
    accumulators: usize,
    /// The last register a value may take (the ones above are temporaries).
    last_value: usize,
    /// Mask registers for comparisons (`k1..`), or none: masks are vectors.
    masks: usize,
    /// Bytes per vector register.
    bytes: i32,
}

/// One instruction set's instructions, on registers named by number.
pub(super) trait Target {
    fn regs(&self) -> Regs;
    fn asm(&mut self) -> &mut CodeAssembler;
    /// `dst = [base + rdi + disp]` (one vector).
    fn load(
        &mut self,
        f64: bool,
        dst: usize,
        base: AsmRegister64,
        disp: i32,
    ) -> Result<(), IcedError>;
    /// `dst = broadcast([rsi + 8k])`.
    fn broadcast(&mut self, f64: bool, dst: usize, k: usize) -> Result<(), IcedError>;
    fn zero(&mut self, r: usize) -> Result<(), IcedError>;
    /// `dst = x ^ m` / `x & m` on the bits.
    fn xor(&mut self, dst: usize, x: usize, m: usize) -> Result<(), IcedError>;
    fn and(&mut self, dst: usize, x: usize, m: usize) -> Result<(), IcedError>;
    fn sqrt(&mut self, f64: bool, dst: usize, x: usize) -> Result<(), IcedError>;
    fn binary(
        &mut self,
        f64: bool,
        op: Binary,
        dst: usize,
        x: usize,
        y: usize,
    ) -> Result<(), IcedError>;
    fn compare(&mut self, f64: bool, c: Cmp, dst: Loc, x: usize, y: usize)
        -> Result<(), IcedError>;
    /// `dst = mask ? x : y`.
    fn select(
        &mut self,
        f64: bool,
        dst: usize,
        mask: Loc,
        x: usize,
        y: usize,
    ) -> Result<(), IcedError>;
    /// Adds sub-vector `sub`'s values (register `v`) to the lanes they
    /// belong to.
    fn accumulate(&mut self, f64: bool, sub: usize, v: usize) -> Result<(), IcedError>;
    /// `[rcx + rdi + disp] = v`.
    fn store(&mut self, f64: bool, disp: i32, v: usize) -> Result<(), IcedError>;
    /// The same bits with a non-temporal store (aligned address).
    fn store_stream(&mut self, disp: i32, v: usize) -> Result<(), IcedError>;
    /// `[rcx + 8l] = lane l` for the 16 lanes.
    fn store_lanes(&mut self) -> Result<(), IcedError>;
    /// `dst = x`.
    fn copy(&mut self, dst: usize, x: usize) -> Result<(), IcedError>;
    /// `dst = c` in every float32 lane.
    fn broadcast32(&mut self, dst: usize, c: Arg) -> Result<(), IcedError>;
    /// `dst = op(a, b)` on float32 lanes.
    fn op32(&mut self, op: Op32, dst: usize, a: usize, b: Arg) -> Result<(), IcedError>;
    /// `dst = x << n` / `x >> n` (arithmetic) on 32-bit lanes.
    fn shl32(&mut self, dst: usize, x: usize, n: i32) -> Result<(), IcedError>;
    fn sra32(&mut self, dst: usize, x: usize, n: i32) -> Result<(), IcedError>;
    /// `dst = m's sign bit ? x : y` on 32-bit lanes.
    fn blend_by_sign(&mut self, dst: usize, m: usize, x: usize, y: usize) -> Result<(), IcedError>;
    /// Jumps to `bail` when a float32 lane of `x` has `|x| > limit`
    /// (never for NaN); `tmp` is clobbered.
    fn bail_if_above(
        &mut self,
        x: usize,
        tmp: usize,
        abs: Arg,
        limit: Arg,
        bail: CodeLabel,
    ) -> Result<(), IcedError>;
}

/// Machine code for `spec`, or `None` when it needs more registers than
/// the instruction set has.
pub(super) fn emit(spec: &Spec) -> Option<Vec<u8>> {
    match spec.isa {
        Isa::Avx512 => drive(spec, &mut avx512::Avx512::new().ok()?),
        Isa::Avx2 => drive(spec, &mut avx2::Avx2::new().ok()?),
    }
}

fn drive(spec: &Spec, t: &mut impl Target) -> Option<Vec<u8>> {
    if spec.sources > MAX_SOURCES {
        return None;
    }
    let mut regs = t.regs();
    let has_math = spec.nodes.iter().any(Node::is_function);
    if has_math {
        // The top value registers are the functions' temporaries;
        // AVX-512's last mask register the sin/cos swap and range masks.
        regs.last_value = regs.last_value.checked_sub(f32_math::TEMPS)?;
        regs.masks = regs.masks.saturating_sub(1);
    }
    let locs = allocate(spec, &regs)?;
    code(spec, t, &regs, &locs, has_math).ok()
}

/// Registers assigned by liveness over the node list (the same assignment
/// serves every sub-vector of a block): splats first, from the register
/// after the accumulators, for the whole loop; values (and masks, where
/// they are vectors) after them.
fn allocate(spec: &Spec, regs: &Regs) -> Option<Vec<Loc>> {
    let n = spec.nodes.len();
    let first_splat = regs.accumulators;
    if first_splat + spec.splats > regs.last_value {
        return None;
    }
    let mut last = vec![usize::MAX; n];
    for (i, node) in spec.nodes.iter().enumerate() {
        for o in node.operands() {
            last[o] = i;
        }
    }
    last[spec.output] = n; // the output lives past the last node
    let mut free_v: Vec<usize> = (first_splat + spec.splats..=regs.last_value)
        .rev()
        .collect();
    let mut free_k: Vec<usize> = (1..=regs.masks).rev().collect();
    let release =
        |loc: Loc, node: &Node, free_v: &mut Vec<usize>, free_k: &mut Vec<usize>| match loc {
            Loc::V(v) if !matches!(node, Node::Splat(_)) => free_v.push(v),
            Loc::K(k) => free_k.push(k),
            _ => {}
        };
    let mut locs: Vec<Loc> = Vec::with_capacity(n);
    for (i, node) in spec.nodes.iter().enumerate() {
        // Operands whose last use is this node free their registers first:
        // every instruction reads its operands before writing. (Once each:
        // `x * x` names x twice.)
        let operands: Vec<usize> = node.operands().collect();
        for (j, &o) in operands.iter().enumerate() {
            if last[o] == i && !operands[..j].contains(&o) {
                release(locs[o], &spec.nodes[o], &mut free_v, &mut free_k);
            }
        }
        let loc = match node {
            Node::Splat(k) => Loc::V(first_splat + k),
            Node::Cmp(..) if regs.masks > 0 => Loc::K(free_k.pop()?),
            _ => Loc::V(free_v.pop()?),
        };
        if last[i] == usize::MAX {
            // Dead value: its register is free again at once.
            release(loc, node, &mut free_v, &mut free_k);
        }
        locs.push(loc);
    }
    Some(locs)
}

fn v(loc: Loc) -> usize {
    match loc {
        Loc::V(r) => r,
        Loc::K(_) => unreachable!("a mask used as a value (checked when lowering)"),
    }
}

fn code(
    spec: &Spec,
    t: &mut impl Target,
    regs: &Regs,
    locs: &[Loc],
    has_math: bool,
) -> Result<Vec<u8>, IcedError> {
    let f64 = spec.float == Float::F64;
    let mut math = has_math.then(|| F32Math::new(t.asm()));
    let temps: [usize; f32_math::TEMPS] = std::array::from_fn(|i| regs.last_value + 1 + i);
    for (j, gpr) in SOURCE_GPRS.iter().take(spec.sources).enumerate() {
        t.asm().mov(*gpr, qword_ptr(rdi + 8 * j as i32))?;
    }
    for k in 0..spec.splats {
        t.broadcast(f64, regs.accumulators + k, k)?;
    }
    if spec.mode == Mode::Sum {
        for r in 0..regs.accumulators {
            t.zero(r)?;
        }
    }
    let a = t.asm();
    // rdi becomes the byte offset of the current block.
    a.xor(edi, edi)?;
    let mut done = a.create_label();
    let mut top = a.create_label();
    a.test(rdx, rdx)?;
    a.jz(done)?;
    a.set_label(&mut top)?;
    let block_bytes = 16 * if f64 { 8 } else { 4 };
    for sub in 0..(block_bytes / regs.bytes) as usize {
        let disp = regs.bytes * sub as i32;
        for (i, node) in spec.nodes.iter().enumerate() {
            let dst = locs[i];
            match *node {
                Node::Source(j) => t.load(f64, v(dst), SOURCE_GPRS[j], disp)?,
                Node::Splat(_) => {}
                Node::Unary(op, x) => {
                    let (d, x) = (v(dst), v(locs[x]));
                    let mask =
                        |m: Option<usize>| regs.accumulators + m.expect("lowered with its mask");
                    match op {
                        // Sign-bit operations on the bits, as Rust's `-x` and
                        // `x.abs()` (NaN's sign included).
                        Unary::Neg => t.xor(d, x, mask(spec.sign_mask))?,
                        Unary::Abs => t.and(d, x, mask(spec.abs_mask))?,
                        Unary::Square => t.binary(f64, Binary::Mul, d, x, x)?,
                        Unary::Sqrt => t.sqrt(f64, d, x)?,
                        Unary::Sin | Unary::Cos => math
                            .as_ref()
                            .expect("function nodes counted")
                            .sincos(t, op == Unary::Cos, d, x, temps)?,
                        Unary::Exp => math
                            .as_ref()
                            .expect("function nodes counted")
                            .exp(t, d, x, temps)?,
                    }
                }
                Node::Binary(op, x, y) => t.binary(f64, op, v(dst), v(locs[x]), v(locs[y]))?,
                Node::Cmp(c, x, y) => t.compare(f64, c, dst, v(locs[x]), v(locs[y]))?,
                Node::Select(c, x, y) => t.select(f64, v(dst), locs[c], v(locs[x]), v(locs[y]))?,
            }
        }
        let out = v(locs[spec.output]);
        match spec.mode {
            Mode::Sum => t.accumulate(f64, sub, out)?,
            Mode::Store if spec.stream => t.store_stream(disp, out)?,
            Mode::Store => t.store(f64, disp, out)?,
        }
    }
    let a = t.asm();
    a.add(rdi, block_bytes)?;
    a.dec(rdx)?;
    a.jnz(top)?;
    a.set_label(&mut done)?;
    if spec.mode == Mode::Sum {
        t.store_lanes()?;
    }
    // Returns 0, or 1 from a trig argument out of range (the caller then
    // runs the interpreter).
    let a = t.asm();
    a.xor(eax, eax)?;
    leave(a, spec.stream)?;
    if let Some(tc) = math.as_mut() {
        a.set_label(&mut tc.bail)?;
        a.mov(eax, 1)?;
        leave(a, spec.stream)?;
        tc.emit_table(a)?;
    }
    // Jumps and table loads are relative, so the code runs wherever it is
    // copied.
    a.assemble(0)
}

/// The function's exit: non-temporal stores are fenced so that they are
/// ordered before the caller's next stores (and other threads' reads after
/// the join).
fn leave(a: &mut CodeAssembler, stream: bool) -> Result<(), IcedError> {
    if stream {
        a.sfence()?;
    }
    a.vzeroupper()?;
    a.ret()
}
