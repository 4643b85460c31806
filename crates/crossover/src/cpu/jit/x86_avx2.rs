//! AVX2 instructions for the driver in `x86.rs`: 16 `ymm` registers (0-3 a
//! sum's 16 float64 lanes, 15 a temporary); comparisons are vector masks
//! (all ones or zeros a lane) and `where` a `vblendv`.

use super::{Binary, Cmp, Loc, Regs, Target};
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
    fn load(
        &mut self,
        f64: bool,
        dst: usize,
        base: AsmRegister64,
        disp: i32,
    ) -> Result<(), IcedError> {
        let m = ymmword_ptr(base + rdi + disp);
        if f64 {
            self.a.vmovupd(YMM[dst], m)
        } else {
            self.a.vmovups(YMM[dst], m)
        }
    }
    fn broadcast(&mut self, f64: bool, dst: usize, k: usize) -> Result<(), IcedError> {
        if f64 {
            self.a.vbroadcastsd(YMM[dst], qword_ptr(rsi + 8 * k as i32))
        } else {
            self.a.vbroadcastss(YMM[dst], dword_ptr(rsi + 8 * k as i32))
        }
    }
    fn zero(&mut self, r: usize) -> Result<(), IcedError> {
        self.a.vxorpd(YMM[r], YMM[r], YMM[r])
    }
    fn xor(&mut self, dst: usize, x: usize, m: usize) -> Result<(), IcedError> {
        self.a.vxorpd(YMM[dst], YMM[x], YMM[m])
    }
    fn and(&mut self, dst: usize, x: usize, m: usize) -> Result<(), IcedError> {
        self.a.vandpd(YMM[dst], YMM[x], YMM[m])
    }
    fn sqrt(&mut self, f64: bool, dst: usize, x: usize) -> Result<(), IcedError> {
        if f64 {
            self.a.vsqrtpd(YMM[dst], YMM[x])
        } else {
            self.a.vsqrtps(YMM[dst], YMM[x])
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
        let (d, x, y) = (YMM[dst], YMM[x], YMM[y]);
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
    fn store(&mut self, f64: bool, disp: i32, v: usize) -> Result<(), IcedError> {
        let m = ymmword_ptr(rcx + rdi + disp);
        if f64 {
            self.a.vmovupd(m, YMM[v])
        } else {
            self.a.vmovups(m, YMM[v])
        }
    }
    fn store_lanes(&mut self) -> Result<(), IcedError> {
        for (i, r) in YMM.iter().take(4).enumerate() {
            self.a.vmovupd(ymmword_ptr(rcx + 32 * i as i32), *r)?;
        }
        Ok(())
    }
}
