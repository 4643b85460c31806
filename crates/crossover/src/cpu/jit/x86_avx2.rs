//! AVX2 instructions for the driver in `x86.rs`: 16 `ymm` registers (0-3 a
//! sum's 16 float64 lanes, 15 a temporary); comparisons are vector masks
//! (all ones or zeros a lane) and `where` a `vblendv`; table constants are
//! 32-byte memory operands.

use super::{Arg, Binary, Cmp, Loc, Op32, Regs, Target};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

const YMM: [AsmRegisterYmm; 16] = [
    ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6, ymm7, ymm8, ymm9, ymm10, ymm11, ymm12, ymm13, ymm14,
    ymm15,
];
const XMM: [AsmRegisterXmm; 16] = [
    xmm0, xmm1, xmm2, xmm3, xmm4, xmm5, xmm6, xmm7, xmm8, xmm9, xmm10, xmm11, xmm12, xmm13, xmm14,
    xmm15,
];

pub(super) struct Avx2 {
    a: CodeAssembler,
}

impl Avx2 {
    pub(super) fn new() -> Result<Self, IcedError> {
        Ok(Avx2 {
            a: CodeAssembler::new(64)?,
        })
    }
}

fn vreg(loc: Loc) -> usize {
    match loc {
        Loc::V(r) => r,
        Loc::K(_) => unreachable!("AVX2 has no mask registers"),
    }
}

impl Target for Avx2 {
    fn regs(&self) -> Regs {
        Regs {
            accumulators: 4,
            last_value: 14,
            masks: 0,
            bytes: 32,
        }
    }
    fn asm(&mut self) -> &mut CodeAssembler {
        &mut self.a
    }
    super::shared_vector_ops!(YMM, ymmword_ptr, ymmword_ptr);
    fn zero(&mut self, r: usize) -> Result<(), IcedError> {
        self.a.vxorpd(YMM[r], YMM[r], YMM[r])
    }
    fn xor(&mut self, dst: usize, x: usize, m: usize) -> Result<(), IcedError> {
        self.a.vxorpd(YMM[dst], YMM[x], YMM[m])
    }
    fn and(&mut self, dst: usize, x: usize, m: usize) -> Result<(), IcedError> {
        self.a.vandpd(YMM[dst], YMM[x], YMM[m])
    }
    fn compare(
        &mut self,
        f64: bool,
        c: Cmp,
        dst: Loc,
        x: usize,
        y: usize,
    ) -> Result<(), IcedError> {
        // VEX-encoded compares take all 32 predicates.
        if f64 {
            self.a.vcmppd(YMM[vreg(dst)], YMM[x], YMM[y], c as i32)
        } else {
            self.a.vcmpps(YMM[vreg(dst)], YMM[x], YMM[y], c as i32)
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
        // Lanes whose mask sign bit is set take the third operand.
        let m = YMM[vreg(mask)];
        if f64 {
            self.a.vblendvpd(YMM[dst], YMM[y], YMM[x], m)
        } else {
            self.a.vblendvps(YMM[dst], YMM[y], YMM[x], m)
        }
    }
    fn accumulate(&mut self, f64: bool, sub: usize, v: usize) -> Result<(), IcedError> {
        if f64 {
            // Sub-vector s holds lanes 4s..4s+3.
            return self.a.vaddpd(YMM[sub], YMM[sub], YMM[v]);
        }
        // 8 float32 values: the low 4 widen into lanes 8s..8s+3, the high 4
        // into lanes 8s+4..8s+7 (exact conversions).
        let (lo, hi) = (YMM[2 * sub], YMM[2 * sub + 1]);
        self.a.vcvtps2pd(ymm15, XMM[v])?;
        self.a.vaddpd(lo, lo, ymm15)?;
        self.a.vextractf128(xmm15, YMM[v], 1)?;
        self.a.vcvtps2pd(ymm15, xmm15)?;
        self.a.vaddpd(hi, hi, ymm15)
    }
    fn store_lanes(&mut self) -> Result<(), IcedError> {
        for (i, r) in YMM.iter().take(4).enumerate() {
            self.a.vmovupd(ymmword_ptr(rcx + 32 * i as i32), *r)?;
        }
        Ok(())
    }
    fn blend_by_sign(&mut self, dst: usize, m: usize, x: usize, y: usize) -> Result<(), IcedError> {
        self.a.vblendvps(YMM[dst], YMM[y], YMM[x], YMM[m])
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
        let t = YMM[tmp];
        self.a.vandps(t, YMM[x], ymmword_ptr(abs))?;
        self.a.vcmpps(t, t, ymmword_ptr(limit), Cmp::Gt as i32)?;
        // ZF is clear when a lane's sign bit (its comparison) is set.
        self.a.vtestps(t, t)?;
        self.a.jnz(bail)
    }
}
