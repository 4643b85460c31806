//! float32 sin, cos and exp in a compiled kernel: the instructions of
//! `math::sincos_f32` (the f32 reduction with three parts of pi/2, Cephes'
//! polynomials, the quadrant's swap and signs) and `math::exp_f32` in the
//! same order, so the values are the interpreter's bits. Constants come
//! from a table emitted after the code. A sin/cos argument beyond
//! `math::TRIG_FAST_LIMIT` (or infinite) makes the kernel return 1 at
//! once: the interpreter, which takes a scalar f64 path for those, then
//! computes the whole call.

use super::{Arg, Target};
use crate::cpu::math::{
    COS_COEFFS, EXP_COEFFS, EXP_RANGE, LN2_PARTS, PIO2_F32, ROUND_MAGIC_F32, SIN_COEFFS,
    TRIG_FAST_LIMIT,
};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

/// The table's entries, in order (float32 lanes unless named integer).
#[derive(Clone, Copy)]
enum K {
    Abs,
    Limit,
    TwoOverPi,
    Magic,
    Pio2Hi,
    Pio2Mid,
    Pio2Lo,
    Sin0,
    Sin1,
    Sin2,
    Cos0,
    Cos1,
    Cos2,
    NegHalf,
    One,
    Sign,
    /// The integer 1.
    OneI32,
    ExpLo,
    ExpHi,
    Log2E,
    Ln2Hi,
    Ln2Lo,
    Exp0,
    Exp1,
    Exp2,
    Exp3,
    Exp4,
    Exp5,
    /// The bits of `ROUND_MAGIC_F32`, as an integer to subtract.
    MagicBits,
    /// The exponent bias, 127.
    Bias,
}

const ALL: [K; 30] = {
    use K::*;
    [
        Abs, Limit, TwoOverPi, Magic, Pio2Hi, Pio2Mid, Pio2Lo, Sin0, Sin1, Sin2, Cos0, Cos1, Cos2,
        NegHalf, One, Sign, OneI32, ExpLo, ExpHi, Log2E, Ln2Hi, Ln2Lo, Exp0, Exp1, Exp2, Exp3,
        Exp4, Exp5, MagicBits, Bias,
    ]
};
const COUNT: usize = ALL.len();

fn bits(k: K) -> u32 {
    match k {
        K::Abs => u32::MAX >> 1,
        K::Limit => TRIG_FAST_LIMIT.to_bits(),
        K::TwoOverPi => std::f32::consts::FRAC_2_PI.to_bits(),
        K::Magic => ROUND_MAGIC_F32.to_bits(),
        K::Pio2Hi => PIO2_F32[0].to_bits(),
        K::Pio2Mid => PIO2_F32[1].to_bits(),
        K::Pio2Lo => PIO2_F32[2].to_bits(),
        K::Sin0 => SIN_COEFFS[0].to_bits(),
        K::Sin1 => SIN_COEFFS[1].to_bits(),
        K::Sin2 => SIN_COEFFS[2].to_bits(),
        K::Cos0 => COS_COEFFS[0].to_bits(),
        K::Cos1 => COS_COEFFS[1].to_bits(),
        K::Cos2 => COS_COEFFS[2].to_bits(),
        K::NegHalf => (-0.5f32).to_bits(),
        K::One => 1f32.to_bits(),
        K::Sign => 1 << 31,
        K::OneI32 => 1,
        K::ExpLo => EXP_RANGE[0].to_bits(),
        K::ExpHi => EXP_RANGE[1].to_bits(),
        K::Log2E => std::f32::consts::LOG2_E.to_bits(),
        K::Ln2Hi => LN2_PARTS[0].to_bits(),
        K::Ln2Lo => LN2_PARTS[1].to_bits(),
        K::Exp0 => EXP_COEFFS[0].to_bits(),
        K::Exp1 => EXP_COEFFS[1].to_bits(),
        K::Exp2 => EXP_COEFFS[2].to_bits(),
        K::Exp3 => EXP_COEFFS[3].to_bits(),
        K::Exp4 => EXP_COEFFS[4].to_bits(),
        K::Exp5 => EXP_COEFFS[5].to_bits(),
        K::MagicBits => ROUND_MAGIC_F32.to_bits(),
        K::Bias => 127,
    }
}

/// Vector instructions whose last operand may be a table entry; all on
/// float32 lanes (or their bits).
#[derive(Clone, Copy, Debug)]
pub(in crate::cpu::jit) enum Op32 {
    /// `dst = a * dst + b`.
    Fma213,
    /// `dst = -(a * b) + dst`.
    Fnma231,
    /// `dst = a - b`.
    Sub,
    /// `dst = a * b`.
    Mul,
    /// `dst = a + b`.
    Add,
    /// `dst = a > b ? a : b` / `a < b ? a : b` (`b` where either is NaN).
    Max,
    Min,
    /// `dst = a & b` / `a | b` on the bits.
    And,
    Or,
    /// `dst = a + b` / `a - b` as 32-bit integers.
    AddI32,
    SubI32,
}

/// Registers a sin, cos or exp node uses besides its destination, counted
/// from the top of the value registers.
pub(super) const TEMPS: usize = 5;

/// The constant table's labels and the early-exit label of one kernel.
pub(super) struct F32Math {
    table: [CodeLabel; COUNT],
    pub(super) bail: CodeLabel,
}

impl F32Math {
    pub(super) fn new(a: &mut CodeAssembler) -> Self {
        F32Math {
            table: std::array::from_fn(|_| a.create_label()),
            bail: a.create_label(),
        }
    }

    fn c(&self, k: K) -> Arg {
        Arg::C(self.table[k as usize])
    }

    /// `dst = sin(x)` (or cos) with temporaries `t[0..5]`; `dst` may be
    /// `x`'s register.
    pub(super) fn sincos(
        &self,
        t: &mut impl Target,
        cos: bool,
        dst: usize,
        x: usize,
        tmp: [usize; TEMPS],
    ) -> Result<(), IcedError> {
        let [q, j, r, s, w] = tmp;
        let c = |k| self.c(k);
        t.bail_if_above(x, j, c(K::Abs), c(K::Limit), self.bail)?;
        // t = fma(x, 2/pi, magic): its low bits are j; j = t - magic.
        t.broadcast32(q, c(K::TwoOverPi))?;
        t.op32(Op32::Fma213, q, x, c(K::Magic))?;
        t.op32(Op32::Sub, j, q, c(K::Magic))?;
        // r = x - j * pi/2, a part at a time.
        t.copy(r, x)?;
        for k in [K::Pio2Hi, K::Pio2Mid, K::Pio2Lo] {
            t.op32(Op32::Fnma231, r, j, c(k))?;
        }
        let z = j;
        t.op32(Op32::Mul, z, r, Arg::R(r))?;
        // sin(r) = fma(r * z, p(z), r).
        t.broadcast32(s, c(K::Sin0))?;
        t.op32(Op32::Fma213, s, z, c(K::Sin1))?;
        t.op32(Op32::Fma213, s, z, c(K::Sin2))?;
        t.op32(Op32::Mul, w, r, Arg::R(z))?;
        t.op32(Op32::Fma213, s, w, Arg::R(r))?;
        // s |= r's sign bit (keeps sin(-0.0) = -0.0).
        t.op32(Op32::And, w, r, c(K::Sign))?;
        t.op32(Op32::Or, s, s, Arg::R(w))?;
        // cos(r) = fma(z * z, p(z), fma(-0.5, z, 1)); r is free now.
        let cr = r;
        t.broadcast32(cr, c(K::Cos0))?;
        t.op32(Op32::Fma213, cr, z, c(K::Cos1))?;
        t.op32(Op32::Fma213, cr, z, c(K::Cos2))?;
        t.op32(Op32::Mul, w, z, Arg::R(z))?;
        t.broadcast32(dst, c(K::NegHalf))?;
        t.op32(Op32::Fma213, dst, z, c(K::One))?;
        t.op32(Op32::Fma213, cr, w, Arg::R(dst))?;
        // Odd quadrants swap sin and cos (bit 0 of q into the sign bit).
        t.shl32(w, q, 31)?;
        let (odd, even) = if cos { (s, cr) } else { (cr, s) };
        t.blend_by_sign(dst, w, odd, even)?;
        // The sign: bit 1 of q (sin) or of q + 1 (cos), moved to bit 31.
        if cos {
            t.op32(Op32::AddI32, q, q, c(K::OneI32))?;
        }
        t.shl32(w, q, 30)?;
        t.op32(Op32::And, w, w, c(K::Sign))?;
        t.xor(dst, dst, w)
    }

    /// `dst = exp(x)` with temporaries `t[0..5]`; `dst` may be `x`'s
    /// register.
    pub(super) fn exp(
        &self,
        t: &mut impl Target,
        dst: usize,
        x: usize,
        tmp: [usize; TEMPS],
    ) -> Result<(), IcedError> {
        let [xc, ti, n, p, y] = tmp;
        let c = |k| self.c(k);
        // xc = clamp(x, lo, hi), NaN kept (the second operand's on NaN).
        t.broadcast32(y, c(K::ExpLo))?;
        t.op32(Op32::Max, y, y, Arg::R(x))?;
        t.broadcast32(xc, c(K::ExpHi))?;
        t.op32(Op32::Min, xc, xc, Arg::R(y))?;
        // t = fma(xc, log2 e, magic); n = t - magic; its integer bits - magic's.
        t.broadcast32(ti, c(K::Log2E))?;
        t.op32(Op32::Fma213, ti, xc, c(K::Magic))?;
        t.op32(Op32::Sub, n, ti, c(K::Magic))?;
        t.op32(Op32::SubI32, ti, ti, c(K::MagicBits))?;
        // r = xc - n * ln 2, in two parts (into xc).
        t.op32(Op32::Fnma231, xc, n, c(K::Ln2Hi))?;
        t.op32(Op32::Fnma231, xc, n, c(K::Ln2Lo))?;
        let r = xc;
        t.broadcast32(p, c(K::Exp0))?;
        for k in [K::Exp1, K::Exp2, K::Exp3, K::Exp4, K::Exp5] {
            t.op32(Op32::Fma213, p, r, c(k))?;
        }
        // y = fma(p * r, r, r) + 1.
        t.op32(Op32::Mul, y, p, Arg::R(r))?;
        t.op32(Op32::Fma213, y, r, Arg::R(r))?;
        t.op32(Op32::Add, y, y, c(K::One))?;
        // 2^n as two factors (n1 = n >> 1, n2 = n - n1) so that subnormal
        // results round once: y * 2^n1 * 2^n2.
        t.sra32(n, ti, 1)?;
        t.op32(Op32::SubI32, ti, ti, Arg::R(n))?;
        for e in [n, ti] {
            t.op32(Op32::AddI32, e, e, c(K::Bias))?;
            t.shl32(e, e, 23)?;
        }
        t.op32(Op32::Mul, y, y, Arg::R(n))?;
        t.op32(Op32::Mul, dst, y, Arg::R(ti))
    }

    /// The table, 8 copies of each entry (32 bytes: a `ymm` load or a
    /// broadcast of the first), after the code.
    pub(super) fn emit_table(&mut self, a: &mut CodeAssembler) -> Result<(), IcedError> {
        for k in ALL {
            a.set_label(&mut self.table[k as usize])?;
            a.dd(&[bits(k); 8])?;
        }
        Ok(())
    }
}
