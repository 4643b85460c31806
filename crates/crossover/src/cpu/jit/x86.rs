//! The AVX-512 code generator: one loop over 16-point blocks that keeps a
//! whole program in `zmm` registers (comparisons in `k` masks), so a fused
//! chain costs its arithmetic, not a store and a load per instruction as in
//! the chunked interpreter.
//!
//! The function it emits follows the System V calling convention:
//! `fn(srcs: *const *const u8, splats: *const u64, blocks: usize, out: *mut u8)`.
//! Sources are read at `srcs[j] + block * 16 * size`; a sum writes its 16
//! float64 lanes to `out` (lane `l` adds points `16b + l`, as `sum_lanes`
//! in `reduce.rs` does); a store writes the values to `out`.

use super::{Float, Mode, Node, Spec};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

/// Source pointers live in these (caller-saved) registers.
const SOURCE_GPRS: [AsmRegister64; 5] = [r8, r9, r10, r11, rax];

/// Most sources one kernel reads.
pub(super) const MAX_SOURCES: usize = SOURCE_GPRS.len();

const ZMM: [AsmRegisterZmm; 32] = [
    zmm0, zmm1, zmm2, zmm3, zmm4, zmm5, zmm6, zmm7, zmm8, zmm9, zmm10, zmm11, zmm12, zmm13, zmm14,
    zmm15, zmm16, zmm17, zmm18, zmm19, zmm20, zmm21, zmm22, zmm23, zmm24, zmm25, zmm26, zmm27,
    zmm28, zmm29, zmm30, zmm31,
];
const YMM: [AsmRegisterYmm; 32] = [
    ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6, ymm7, ymm8, ymm9, ymm10, ymm11, ymm12, ymm13, ymm14,
    ymm15, ymm16, ymm17, ymm18, ymm19, ymm20, ymm21, ymm22, ymm23, ymm24, ymm25, ymm26, ymm27,
    ymm28, ymm29, ymm30, ymm31,
];
const KREG: [AsmRegisterK; 8] = [k0, k1, k2, k3, k4, k5, k6, k7];

/// zmm0 and zmm1 are a sum's accumulators, zmm31 a conversion temporary;
/// splats take the registers from zmm2 up, values the rest.
const FIRST_SPLAT: usize = 2;
const LAST_VALUE: usize = 30;

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

/// Where each node's value is held.
#[derive(Clone, Copy)]
enum Loc {
    Z(usize),
    K(usize),
}

/// Registers assigned by liveness over the node list (the same assignment
/// serves every 8- or 16-point sub-vector of a block).
fn allocate(spec: &Spec) -> Option<Vec<Loc>> {
    let n = spec.nodes.len();
    let mut last = vec![usize::MAX; n];
    for (i, node) in spec.nodes.iter().enumerate() {
        for o in node.operands() {
            last[o] = i;
        }
    }
    last[spec.output] = n; // the output lives past the last node
    let mut free_z: Vec<usize> = (FIRST_SPLAT + spec.splats..=LAST_VALUE).rev().collect();
    let mut free_k: Vec<usize> = (1..8).rev().collect();
    let mut locs = Vec::with_capacity(n);
    for (i, node) in spec.nodes.iter().enumerate() {
        // Operands whose last use is this node free their registers first:
        // every instruction reads its operands before writing. (Once each:
        // `x * x` names x twice.)
        let operands: Vec<usize> = node.operands().collect();
        for (n, &o) in operands.iter().enumerate() {
            if last[o] == i && !operands[..n].contains(&o) {
                match locs[o] {
                    Loc::Z(z) if !matches!(spec.nodes[o], Node::Splat(_)) => free_z.push(z),
                    Loc::K(k) => free_k.push(k),
                    _ => {}
                }
            }
        }
        let loc = match node {
            Node::Splat(k) => Loc::Z(FIRST_SPLAT + k),
            Node::Cmp(..) => Loc::K(free_k.pop()?),
            _ => Loc::Z(free_z.pop()?),
        };
        if last[i] == usize::MAX {
            // Dead value: its register is free again at once.
            match loc {
                Loc::Z(z) if !matches!(node, Node::Splat(_)) => free_z.push(z),
                Loc::K(k) => free_k.push(k),
                _ => {}
            }
        }
        locs.push(loc);
    }
    Some(locs)
}

/// Machine code for `spec`, or `None` when it needs more registers than
/// AVX-512 has.
pub(super) fn emit(spec: &Spec) -> Option<Vec<u8>> {
    if spec.sources > MAX_SOURCES || FIRST_SPLAT + spec.splats > LAST_VALUE - 2 {
        return None;
    }
    let locs = allocate(spec)?;
    emit_code(spec, &locs).ok()
}

fn z(loc: Loc) -> AsmRegisterZmm {
    match loc {
        Loc::Z(i) => ZMM[i],
        Loc::K(_) => unreachable!("a mask used as a value (checked when lowering)"),
    }
}

fn emit_code(spec: &Spec, locs: &[Loc]) -> Result<Vec<u8>, IcedError> {
    let f64 = spec.float == Float::F64;
    let mut a = CodeAssembler::new(64)?;
    for (j, gpr) in SOURCE_GPRS.iter().take(spec.sources).enumerate() {
        a.mov(*gpr, qword_ptr(rdi + 8 * j as i32))?;
    }
    for k in 0..spec.splats {
        let dst = ZMM[FIRST_SPLAT + k];
        if f64 {
            a.vbroadcastsd(dst, qword_ptr(rsi + 8 * k as i32))?;
        } else {
            a.vbroadcastss(dst, dword_ptr(rsi + 8 * k as i32))?;
        }
    }
    if spec.mode == Mode::Sum {
        a.vpxorq(zmm0, zmm0, zmm0)?;
        a.vpxorq(zmm1, zmm1, zmm1)?;
    }
    // rdi becomes the byte offset of the current block.
    a.xor(edi, edi)?;
    let mut done = a.create_label();
    let mut top = a.create_label();
    a.test(rdx, rdx)?;
    a.jz(done)?;
    a.set_label(&mut top)?;
    // 16 points a block: two 8-lane sub-vectors in float64, one 16-lane in
    // float32.
    let subs = if f64 { 2 } else { 1 };
    for (u, acc) in [zmm0, zmm1].into_iter().enumerate().take(subs) {
        let disp = 64 * u as i32;
        for (i, node) in spec.nodes.iter().enumerate() {
            let dst = locs[i];
            match *node {
                Node::Source(j) => {
                    let m = zmmword_ptr(SOURCE_GPRS[j] + rdi + disp);
                    if f64 {
                        a.vmovupd(z(dst), m)?;
                    } else {
                        a.vmovups(z(dst), m)?;
                    }
                }
                Node::Splat(_) => {}
                Node::Unary(op, x) => emit_unary(&mut a, f64, op, z(dst), z(locs[x]), spec)?,
                Node::Binary(op, x, y) => {
                    emit_binary(&mut a, f64, op, z(dst), z(locs[x]), z(locs[y]))?
                }
                Node::Cmp(c, x, y) => {
                    let Loc::K(k) = dst else { unreachable!() };
                    if f64 {
                        a.vcmppd(KREG[k], z(locs[x]), z(locs[y]), c as i32)?;
                    } else {
                        a.vcmpps(KREG[k], z(locs[x]), z(locs[y]), c as i32)?;
                    }
                }
                Node::Select(c, x, y) => {
                    let Loc::K(k) = locs[c] else { unreachable!() };
                    let d = masked(z(dst), k);
                    // dst = mask ? x : y
                    if f64 {
                        a.vblendmpd(d, z(locs[y]), z(locs[x]))?;
                    } else {
                        a.vblendmps(d, z(locs[y]), z(locs[x]))?;
                    }
                }
            }
        }
        let out = z(locs[spec.output]);
        match (spec.mode, f64) {
            (Mode::Sum, true) => a.vaddpd(acc, acc, out)?,
            (Mode::Sum, false) => {
                let Loc::Z(oi) = locs[spec.output] else {
                    unreachable!()
                };
                a.vcvtps2pd(zmm31, YMM[oi])?;
                a.vaddpd(zmm0, zmm0, zmm31)?;
                a.vextractf64x4(ymm31, out, 1)?;
                a.vcvtps2pd(zmm31, ymm31)?;
                a.vaddpd(zmm1, zmm1, zmm31)?;
            }
            (Mode::Store, true) => a.vmovupd(zmmword_ptr(rcx + rdi + disp), out)?,
            (Mode::Store, false) => a.vmovups(zmmword_ptr(rcx + rdi + disp), out)?,
        }
    }
    a.add(rdi, if f64 { 128 } else { 64 })?;
    a.dec(rdx)?;
    a.jnz(top)?;
    a.set_label(&mut done)?;
    if spec.mode == Mode::Sum {
        a.vmovupd(zmmword_ptr(rcx), zmm0)?;
        a.vmovupd(zmmword_ptr(rcx + 64), zmm1)?;
    }
    a.vzeroupper()?;
    a.ret()?;
    // Jumps are relative, so the code runs wherever it is copied.
    a.assemble(0)
}

fn masked(r: AsmRegisterZmm, k: usize) -> AsmRegisterZmm {
    match k {
        1 => r.k1(),
        2 => r.k2(),
        3 => r.k3(),
        4 => r.k4(),
        5 => r.k5(),
        6 => r.k6(),
        _ => r.k7(),
    }
}

fn emit_unary(
    a: &mut CodeAssembler,
    f64: bool,
    op: super::Unary,
    dst: AsmRegisterZmm,
    x: AsmRegisterZmm,
    spec: &Spec,
) -> Result<(), IcedError> {
    use super::Unary::*;
    let mask = |k: usize| ZMM[FIRST_SPLAT + k];
    match op {
        // Sign-bit operations on the bits, as Rust's `-x` and `x.abs()`
        // (NaN's sign included).
        Neg => a.vpxorq(
            dst,
            x,
            mask(spec.sign_mask.expect("lowered with a sign mask")),
        ),
        Abs => a.vpandq(
            dst,
            x,
            mask(spec.abs_mask.expect("lowered with an abs mask")),
        ),
        Square if f64 => a.vmulpd(dst, x, x),
        Square => a.vmulps(dst, x, x),
        Sqrt if f64 => a.vsqrtpd(dst, x),
        Sqrt => a.vsqrtps(dst, x),
    }
}

fn emit_binary(
    a: &mut CodeAssembler,
    f64: bool,
    op: super::Binary,
    dst: AsmRegisterZmm,
    x: AsmRegisterZmm,
    y: AsmRegisterZmm,
) -> Result<(), IcedError> {
    use super::Binary::*;
    match (op, f64) {
        (Add, true) => a.vaddpd(dst, x, y),
        (Add, false) => a.vaddps(dst, x, y),
        (Sub, true) => a.vsubpd(dst, x, y),
        (Sub, false) => a.vsubps(dst, x, y),
        (Mul, true) => a.vmulpd(dst, x, y),
        (Mul, false) => a.vmulps(dst, x, y),
        (Div, true) => a.vdivpd(dst, x, y),
        (Div, false) => a.vdivps(dst, x, y),
    }
}
