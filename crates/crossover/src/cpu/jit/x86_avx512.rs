//! AVX-512 instructions for the driver in `x86.rs`: 32 `zmm` registers
//! (0-1 a sum's 16 float64 lanes, 31 a temporary), comparisons in `k1..k7`
//! (`k7` the trig code's own where a kernel has sin/cos), `where` a masked
//! blend; table constants are broadcast memory operands.

use super::{Arg, Binary, Cmp, Loc, Op32, Regs, Target};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

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

pub(super) struct Avx512 {
    a: CodeAssembler,
}

impl Avx512 {
    pub(super) fn new() -> Result<Self, IcedError> {
        Ok(Avx512 {
            a: CodeAssembler::new(64)?,
        })
    }
}

fn k(loc: Loc) -> usize {
    match loc {
        Loc::K(k) => k,
        Loc::V(_) => unreachable!("AVX-512 comparisons are masks"),
    }
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

impl Target for Avx512 {
    fn regs(&self) -> Regs {
        Regs {
            accumulators: 2,
            last_value: 30,
            masks: 7,
            bytes: 64,
        }
    }
    fn asm(&mut self) -> &mut CodeAssembler {
        &mut self.a
    }
    super::shared_vector_ops!(ZMM, zmmword_ptr, dword_bcst);
    fn zero(&mut self, r: usize) -> Result<(), IcedError> {
        self.a.vpxorq(ZMM[r], ZMM[r], ZMM[r])
    }
    fn xor(&mut self, dst: usize, x: usize, m: usize) -> Result<(), IcedError> {
        self.a.vpxorq(ZMM[dst], ZMM[x], ZMM[m])
    }
    fn and(&mut self, dst: usize, x: usize, m: usize) -> Result<(), IcedError> {
        self.a.vpandq(ZMM[dst], ZMM[x], ZMM[m])
    }
    fn compare(
        &mut self,
        f64: bool,
        c: Cmp,
        dst: Loc,
        x: usize,
        y: usize,
    ) -> Result<(), IcedError> {
        if f64 {
            self.a.vcmppd(KREG[k(dst)], ZMM[x], ZMM[y], c as i32)
        } else {
            self.a.vcmpps(KREG[k(dst)], ZMM[x], ZMM[y], c as i32)
        }
    }
    fn select(
        &mut self,
        f64: bool,
        dst: usize,
        mask: Loc,
        x: usize,
        y: usize,
    ) -> Result<(), IcedError> {
        // Lanes whose mask bit is set take the last operand.
        let d = masked(ZMM[dst], k(mask));
        if f64 {
            self.a.vblendmpd(d, ZMM[y], ZMM[x])
        } else {
            self.a.vblendmps(d, ZMM[y], ZMM[x])
        }
    }
    fn accumulate(&mut self, f64: bool, sub: usize, v: usize) -> Result<(), IcedError> {
        if f64 {
            // Sub-vector 0 holds lanes 0-7, sub-vector 1 lanes 8-15.
            return self.a.vaddpd(ZMM[sub], ZMM[sub], ZMM[v]);
        }
        // 16 float32 values: the low 8 widen into lanes 0-7, the high 8
        // into lanes 8-15 (exact conversions).
        self.a.vcvtps2pd(zmm31, YMM[v])?;
        self.a.vaddpd(zmm0, zmm0, zmm31)?;
        self.a.vextractf64x4(ymm31, ZMM[v], 1)?;
        self.a.vcvtps2pd(zmm31, ymm31)?;
        self.a.vaddpd(zmm1, zmm1, zmm31)
    }
    fn store_lanes(&mut self) -> Result<(), IcedError> {
        self.a.vmovupd(zmmword_ptr(rcx), zmm0)?;
        self.a.vmovupd(zmmword_ptr(rcx + 64), zmm1)
    }
    fn blend_by_sign(&mut self, dst: usize, m: usize, x: usize, y: usize) -> Result<(), IcedError> {
        self.a.vpmovd2m(k7, ZMM[m])?;
        self.a.vblendmps(ZMM[dst].k7(), ZMM[y], ZMM[x])
    }
    fn bail_if_above(
        &mut self,
        x: usize,
        tmp: usize,
        abs: Arg,
        limit: Arg,
        bail: CodeLabel,
    ) -> Result<(), IcedError> {
        let (Arg::C(abs), Arg::C(limit)) = (abs, limit) else {
            unreachable!("the range check's bounds are table entries")
        };
        self.a.vandps(ZMM[tmp], ZMM[x], dword_bcst(abs))?;
        self.a
            .vcmpps(k7, ZMM[tmp], dword_bcst(limit), Cmp::Gt as i32)?;
        self.a.kortestw(k7, k7)?;
        self.a.jnz(bail)
    }
}
