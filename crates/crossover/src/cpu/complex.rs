//! Fused elementwise kernels whose program has complex registers.
//!
//! The SIMD interpreter ([`super::interp`]) handles real programs; a
//! program with any complex64/complex128 instruction comes here instead. It
//! runs the same IR chunk by chunk with wide registers (bool as `u8`,
//! integers as `i64`, floats as `f64`, complex as `Complex64`), rounding
//! each result to its instruction's dtype (float32 and complex64 results
//! are rounded to single precision after every operation, which for
//! `+ - * /` and `sqrt` equals computing in single precision). A closing
//! reduction (for example `sum(abs(z))`, whose result is real) reduces the
//! program's output with the ordinary reduction kernels.

use super::complex_special as special;
use super::gather::{gather, positions, Access};
use super::{parallel_min_work, threads, OutPtr};
use crate::array::Value;
use crate::buffer::Buffer;
use crate::device::{BoundKernel, BoundSource};
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::expr::ir::{InstKind, Program, SourceKind};
use crate::fuse::ReducePlan;
use crate::op::{BinaryOp, UnaryOp};
use crate::rng::{self, Distribution};
use crate::shape::Layout;
use num_complex::{Complex32, Complex64};
use std::sync::Arc;

/// Points per chunk.
const CHUNK: usize = 1024;

/// Whether a program needs this interpreter.
pub(crate) fn is_complex(program: &Program) -> bool {
    program.insts.iter().any(|i| i.dtype.is_complex())
        || program
            .sources
            .iter()
            .any(|s| matches!(s, SourceKind::Buffer(d) if d.is_complex()))
}

/// A register's values for one chunk.
#[derive(Clone, Debug)]
enum R {
    B(Vec<u8>),
    I(Vec<i64>),
    F(Vec<f64>),
    C(Vec<Complex64>),
}

/// Rounds a wide value to what `d` can hold.
#[inline(always)]
fn round_f(d: DType, x: f64) -> f64 {
    if d == DType::F32 {
        x as f32 as f64
    } else {
        x
    }
}

#[inline(always)]
fn round_i(d: DType, x: i64) -> i64 {
    super::regs::wrap_i64(d, x)
}

#[inline(always)]
fn round_c(d: DType, z: Complex64) -> Complex64 {
    if d == DType::C64 {
        Complex64::new(z.re as f32 as f64, z.im as f32 as f64)
    } else {
        z
    }
}

fn empty(d: DType) -> R {
    match d {
        DType::Bool => R::B(Vec::new()),
        DType::F32 | DType::F64 => R::F(Vec::new()),
        DType::C64 | DType::C128 => R::C(Vec::new()),
        _ => R::I(Vec::new()),
    }
}

/// A bound source.
enum Src<'a> {
    Buffer { buf: &'a Buffer, access: Access },
    Index { access: Access },
}

fn load(buf: &Buffer, access: &Access, start: usize, len: usize) -> R {
    fn g<T: crate::buffer::Storage + Default>(
        buf: &Buffer,
        a: &Access,
        s: usize,
        n: usize,
    ) -> Vec<T> {
        let mut v = vec![T::default(); n];
        gather(buf.as_slice::<T>(), a, s, &mut v);
        v
    }
    fn w<T: Into<i64>>(v: Vec<T>) -> Vec<i64> {
        v.into_iter().map(Into::into).collect()
    }
    match buf.dtype() {
        DType::Bool => R::B(g::<u8>(buf, access, start, len)),
        DType::I32 => R::I(
            g::<i32>(buf, access, start, len)
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        DType::I64 => R::I(g::<i64>(buf, access, start, len)),
        DType::I8 => R::I(w(g::<i8>(buf, access, start, len))),
        DType::I16 => R::I(w(g::<i16>(buf, access, start, len))),
        DType::U8 => R::I(w(g::<u8>(buf, access, start, len))),
        DType::U16 => R::I(w(g::<u16>(buf, access, start, len))),
        DType::U32 => R::I(w(g::<u32>(buf, access, start, len))),
        // Refused by run_fused: i64 registers cannot hold its values.
        DType::U64 => R::I(
            g::<u64>(buf, access, start, len)
                .into_iter()
                .map(|x| x as i64)
                .collect(),
        ),
        DType::F32 => R::F(
            g::<f32>(buf, access, start, len)
                .into_iter()
                .map(f64::from)
                .collect(),
        ),
        DType::F64 => R::F(g::<f64>(buf, access, start, len)),
        DType::C64 => R::C(
            g::<Complex32>(buf, access, start, len)
                .into_iter()
                .map(|z| Complex64::new(z.re as f64, z.im as f64))
                .collect(),
        ),
        DType::C128 => R::C(g::<Complex64>(buf, access, start, len)),
    }
}

fn constant(c: Scalar, d: DType, len: usize) -> R {
    match d {
        DType::Bool => R::B(vec![c.as_bool() as u8; len]),
        DType::F32 | DType::F64 => R::F(vec![round_f(d, c.as_f64()); len]),
        DType::C64 | DType::C128 => R::C(vec![round_c(d, Complex64::new(c.as_f64(), 0.0)); len]),
        _ => R::I(vec![round_i(d, c.as_i64()); len]),
    }
}

/// Converts a register to dtype `d` (the recorder allows every conversion
/// that reaches here: real to complex, and between reals).
fn cast(x: &R, d: DType) -> R {
    match (x, d) {
        (R::B(v), DType::Bool) => R::B(v.clone()),
        (R::B(v), d) if d.is_int() => R::I(v.iter().map(|&b| b as i64).collect()),
        (R::B(v), DType::F32 | DType::F64) => R::F(v.iter().map(|&b| b as f64).collect()),
        (R::B(v), _) => R::C(v.iter().map(|&b| Complex64::new(b as f64, 0.0)).collect()),
        (R::I(v), DType::Bool) => R::B(v.iter().map(|&i| (i != 0) as u8).collect()),
        (R::I(v), d) if d.is_int() => R::I(v.iter().map(|&i| round_i(d, i)).collect()),
        (R::I(v), DType::F32 | DType::F64) => {
            R::F(v.iter().map(|&i| round_f(d, i as f64)).collect())
        }
        (R::I(v), _) => R::C(
            v.iter()
                .map(|&i| round_c(d, Complex64::new(i as f64, 0.0)))
                .collect(),
        ),
        (R::F(v), DType::Bool) => R::B(v.iter().map(|&x| (x != 0.0) as u8).collect()),
        (R::F(v), DType::I64 | DType::U32 | DType::U64) => {
            R::I(v.iter().map(|&x| round_i(d, x as i64)).collect())
        }
        (R::F(v), d) if d.is_int() => {
            R::I(v.iter().map(|&x| round_i(d, x as i32 as i64)).collect())
        }
        (R::F(v), DType::F32 | DType::F64) => R::F(v.iter().map(|&x| round_f(d, x)).collect()),
        (R::F(v), _) => R::C(
            v.iter()
                .map(|&x| round_c(d, Complex64::new(x, 0.0)))
                .collect(),
        ),
        (R::C(v), DType::C64 | DType::C128) => R::C(v.iter().map(|&z| round_c(d, z)).collect()),
        // Not recorded (complex to real needs real()/imag()/abs()); keep
        // the real part, as NumPy does, rather than fail mid-kernel.
        (R::C(v), _) => cast(&R::F(v.iter().map(|z| z.re).collect()), d),
    }
}

/// Odd power series `z + c3 z^3 + c5 z^5 + ...` for tiny `|z|`, where
/// num-complex's logarithm formulas for the inverse functions cancel (NumPy
/// uses C99's accurate `casin`...). Below |z| = 0.01 the next term is
/// 1e-24 relative.
fn odd_series(z: Complex64, coefs: [f64; 5], exact: fn(Complex64) -> Complex64) -> Complex64 {
    let norm = z.norm();
    if norm >= 0.01 || norm.is_nan() {
        return exact(z);
    }
    let z2 = z * z;
    let mut acc = Complex64::new(0.0, 0.0);
    for c in coefs.iter().rev() {
        acc = (acc + *c) * z2;
    }
    z + z * acc
}

/// Series coefficients of z^3..z^11 (asin: +; asinh: alternating).
const ASIN: [f64; 5] = [
    1.0 / 6.0,
    3.0 / 40.0,
    15.0 / 336.0,
    105.0 / 3456.0,
    945.0 / 42240.0,
];
const ASINH: [f64; 5] = [-ASIN[0], ASIN[1], -ASIN[2], ASIN[3], -ASIN[4]];

/// NumPy's complex `expm1`: `expm1(x) cos y - 2 sin^2(y/2)` keeps the
/// digits that `exp(z) - 1` loses near zero.
fn expm1_c(z: Complex64) -> Complex64 {
    let h = (z.im / 2.0).sin();
    Complex64::new(
        z.re.exp_m1() * z.im.cos() - 2.0 * h * h,
        z.re.exp() * z.im.sin(),
    )
}

fn unary(op: UnaryOp, x: &R, d: DType) -> R {
    match x {
        R::C(v) => {
            let map =
                |f: fn(Complex64) -> Complex64| R::C(v.iter().map(|&z| round_c(d, f(z))).collect());
            let real =
                |f: fn(Complex64) -> f64| R::F(v.iter().map(|&z| round_f(d, f(z))).collect());
            match op {
                UnaryOp::Neg => map(|z| -z),
                UnaryOp::Square => map(|z| z * z),
                UnaryOp::Sqrt => map(special::sqrt),
                UnaryOp::Exp => map(|z| special::exp_special(z).unwrap_or_else(|| z.exp())),
                UnaryOp::Log => map(|z| z.ln()),
                UnaryOp::Sin => map(special::sin),
                UnaryOp::Cos => map(special::cos),
                UnaryOp::Tan => map(special::tan),
                UnaryOp::Tanh => map(special::tanh),
                UnaryOp::Conj => map(|z| z.conj()),
                UnaryOp::Abs => real(|z| z.norm()),
                UnaryOp::Real => real(|z| z.re),
                UnaryOp::Imag => real(|z| z.im),
                UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Not | UnaryOp::Sign => {
                    unreachable!("{} of complex is rejected when recorded", op.name())
                }
                UnaryOp::Log1p => map(|z| (z + 1.0).ln()),
                UnaryOp::Expm1 => map(|z| special::expm1_special(z).unwrap_or_else(|| expm1_c(z))),
                UnaryOp::Log10 => map(|z| z.log10()),
                UnaryOp::Log2 => map(|z| z.log2()),
                UnaryOp::Exp2 => map(|z| z.exp2()),
                UnaryOp::Arcsin => map(|z| odd_series(z, ASIN, special::asin)),
                UnaryOp::Arccos => map(special::acos),
                UnaryOp::Arctan => map(special::atan),
                UnaryOp::Sinh => map(special::sinh),
                UnaryOp::Cosh => map(special::cosh),
                UnaryOp::Arcsinh => map(|z| odd_series(z, ASINH, special::asinh)),
                UnaryOp::Arccosh => map(special::acosh),
                UnaryOp::Arctanh => map(special::atanh),
            }
        }
        R::F(v) => {
            let map = |f: fn(f64) -> f64| R::F(v.iter().map(|&x| round_f(d, f(x))).collect());
            match op {
                UnaryOp::Neg => map(|x| -x),
                UnaryOp::Abs => map(f64::abs),
                UnaryOp::Sign => map(<f64 as super::num::Num>::sign),
                UnaryOp::Square => map(|x| x * x),
                UnaryOp::Sqrt => map(f64::sqrt),
                UnaryOp::Exp => map(f64::exp),
                UnaryOp::Log => map(f64::ln),
                UnaryOp::Sin => map(f64::sin),
                UnaryOp::Cos => map(f64::cos),
                UnaryOp::Tan => map(f64::tan),
                UnaryOp::Tanh => map(f64::tanh),
                UnaryOp::Floor => map(f64::floor),
                UnaryOp::Ceil => map(f64::ceil),
                UnaryOp::Conj | UnaryOp::Real => map(|x| x),
                UnaryOp::Imag => map(|_| 0.0),
                UnaryOp::Not => R::F(v.iter().map(|&x| (x == 0.0) as u8 as f64).collect()),
                UnaryOp::Log1p => map(f64::ln_1p),
                UnaryOp::Expm1 => map(f64::exp_m1),
                UnaryOp::Log10 => map(f64::log10),
                UnaryOp::Log2 => map(f64::log2),
                UnaryOp::Exp2 => map(f64::exp2),
                UnaryOp::Arcsin => map(f64::asin),
                UnaryOp::Arccos => map(f64::acos),
                UnaryOp::Arctan => map(f64::atan),
                UnaryOp::Sinh => map(f64::sinh),
                UnaryOp::Cosh => map(f64::cosh),
                UnaryOp::Arcsinh => map(libm::asinh),
                UnaryOp::Arccosh => map(libm::acosh),
                UnaryOp::Arctanh => map(libm::atanh),
            }
        }
        R::I(v) => R::I(
            v.iter()
                .map(|&i| {
                    round_i(
                        d,
                        match op {
                            UnaryOp::Neg => i.wrapping_neg(),
                            UnaryOp::Abs => i.wrapping_abs(),
                            UnaryOp::Sign => i.signum(),
                            UnaryOp::Square => i.wrapping_mul(i),
                            UnaryOp::Not => (i == 0) as i64,
                            UnaryOp::Imag => 0,
                            _ => i,
                        },
                    )
                })
                .collect(),
        ),
        R::B(v) => R::B(
            v.iter()
                .map(|&b| match op {
                    UnaryOp::Not => (b == 0) as u8,
                    UnaryOp::Imag => 0,
                    _ => b,
                })
                .collect(),
        ),
    }
}

fn ipow(mut b: i64, mut e: i64) -> i64 {
    if e < 0 {
        return 0;
    }
    let mut r = 1i64;
    while e > 0 {
        if e & 1 == 1 {
            r = r.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    r
}

fn compare<T: PartialOrd>(op: BinaryOp, a: &[T], b: &[T]) -> R {
    R::B(
        a.iter()
            .zip(b)
            .map(|(x, y)| {
                (match op {
                    BinaryOp::Lt => x < y,
                    BinaryOp::Le => x <= y,
                    BinaryOp::Gt => x > y,
                    BinaryOp::Ge => x >= y,
                    BinaryOp::Eq => x == y,
                    _ => x != y,
                }) as u8
            })
            .collect(),
    )
}

/// `p / q` as NumPy divides complex numbers: Smith's algorithm (no
/// overflow or underflow of |q|^2 where the quotient is representable), and
/// by zero the complex infinity or NaN of `p / |0|` per part, where
/// `num_complex`'s textbook formula gives NaN + NaN j for any `p / 0` and
/// overflows past |q| = 1e154.
fn divide(p: Complex64, q: Complex64) -> Complex64 {
    let (qr, qi) = (q.re.abs(), q.im.abs());
    if qr >= qi {
        if qr == 0.0 && qi == 0.0 {
            return Complex64::new(p.re / qr, p.im / qr);
        }
        let rat = q.im / q.re;
        let scl = 1.0 / (q.re + q.im * rat);
        Complex64::new((p.re + p.im * rat) * scl, (p.im - p.re * rat) * scl)
    } else {
        let rat = q.re / q.im;
        let scl = 1.0 / (q.im + q.re * rat);
        Complex64::new((p.re * rat + p.im) * scl, (p.im * rat - p.re) * scl)
    }
}

fn binary(op: BinaryOp, x: &R, y: &R, d: DType) -> R {
    match (x, y) {
        (R::C(a), R::C(b)) => {
            if op.is_comparison() {
                return R::B(
                    a.iter()
                        .zip(b)
                        .map(|(p, q)| ((p == q) == (op == BinaryOp::Eq)) as u8)
                        .collect(),
                );
            }
            let f: fn(Complex64, Complex64) -> Complex64 = match op {
                BinaryOp::Add => |p, q| p + q,
                BinaryOp::Sub => |p, q| p - q,
                BinaryOp::Mul => |p, q| p * q,
                BinaryOp::Div => divide,
                BinaryOp::Pow => |p, q| p.powc(q),
                _ => unreachable!("{} of complex is rejected when recorded", op.name()),
            };
            R::C(
                a.iter()
                    .zip(b)
                    .map(|(&p, &q)| round_c(d, f(p, q)))
                    .collect(),
            )
        }
        (R::F(a), R::F(b)) => {
            if op.is_comparison() {
                return compare(op, a, b);
            }
            let f: fn(f64, f64) -> f64 = match op {
                BinaryOp::Add => |p, q| p + q,
                BinaryOp::Sub => |p, q| p - q,
                BinaryOp::Mul => |p, q| p * q,
                BinaryOp::Div => |p, q| p / q,
                BinaryOp::Pow => f64::powf,
                BinaryOp::Minimum => |p, q| {
                    if p.is_nan() || q.is_nan() {
                        f64::NAN
                    } else {
                        p.min(q)
                    }
                },
                BinaryOp::Maximum => |p, q| {
                    if p.is_nan() || q.is_nan() {
                        f64::NAN
                    } else {
                        p.max(q)
                    }
                },
                BinaryOp::And => |p, q| (p != 0.0 && q != 0.0) as u8 as f64,
                BinaryOp::Atan2 => f64::atan2,
                BinaryOp::Hypot => f64::hypot,
                _ => |p, q| (p != 0.0 || q != 0.0) as u8 as f64,
            };
            R::F(
                a.iter()
                    .zip(b)
                    .map(|(&p, &q)| round_f(d, f(p, q)))
                    .collect(),
            )
        }
        (R::I(a), R::I(b)) => {
            if op.is_comparison() {
                return compare(op, a, b);
            }
            let f: fn(i64, i64) -> i64 = match op {
                BinaryOp::Add => i64::wrapping_add,
                BinaryOp::Sub => i64::wrapping_sub,
                BinaryOp::Mul => i64::wrapping_mul,
                BinaryOp::Div => |p, q| if q == 0 { 0 } else { p.wrapping_div(q) },
                BinaryOp::Pow => ipow,
                BinaryOp::Minimum => i64::min,
                BinaryOp::Maximum => i64::max,
                BinaryOp::And => |p, q| (p != 0 && q != 0) as i64,
                _ => |p, q| (p != 0 || q != 0) as i64,
            };
            R::I(
                a.iter()
                    .zip(b)
                    .map(|(&p, &q)| round_i(d, f(p, q)))
                    .collect(),
            )
        }
        (R::B(a), R::B(b)) => {
            if op.is_comparison() {
                return compare(op, a, b);
            }
            R::B(
                a.iter()
                    .zip(b)
                    .map(|(&p, &q)| match op {
                        BinaryOp::And | BinaryOp::Mul | BinaryOp::Minimum => p & q,
                        _ => p | q,
                    })
                    .collect(),
            )
        }
        _ => unreachable!("operands of a binary op share a dtype"),
    }
}

fn select(c: &R, x: &R, y: &R) -> R {
    let R::B(c) = c else {
        unreachable!("conditions are bool")
    };
    fn pick<T: Copy>(c: &[u8], a: &[T], b: &[T]) -> Vec<T> {
        c.iter()
            .zip(a.iter().zip(b))
            .map(|(&k, (&p, &q))| if k != 0 { p } else { q })
            .collect()
    }
    match (x, y) {
        (R::B(a), R::B(b)) => R::B(pick(c, a, b)),
        (R::I(a), R::I(b)) => R::I(pick(c, a, b)),
        (R::F(a), R::F(b)) => R::F(pick(c, a, b)),
        (R::C(a), R::C(b)) => R::C(pick(c, a, b)),
        _ => unreachable!("where operands share a dtype"),
    }
}

/// Evaluates the program for points `start..start+len`; returns the
/// output registers.
fn eval_chunk(program: &Program, sources: &[Src<'_>], start: usize, len: usize) -> Vec<R> {
    let mut regs: Vec<R> = Vec::with_capacity(program.insts.len());
    for inst in &program.insts {
        let d = inst.dtype;
        let r = match &inst.kind {
            InstKind::Load(s) => match &sources[*s as usize] {
                Src::Buffer { buf, access } => load(buf, access, start, len),
                Src::Index { .. } => unreachable!("loads read buffers"),
            },
            InstKind::Const(c) => constant(*c, d, len),
            InstKind::Arange {
                index,
                start: a0,
                step,
                last,
            } => {
                let Src::Index { access } = &sources[*index as usize] else {
                    unreachable!("arange reads an index source")
                };
                let mut idx = vec![0u64; len];
                positions(access, start, &mut idx);
                let vals: Vec<f64> = idx
                    .iter()
                    .map(|&j| match last {
                        Some((lj, lv)) if j == *lj => *lv,
                        _ => a0 + j as f64 * step,
                    })
                    .collect();
                cast(&R::F(vals), d)
            }
            InstKind::Random { index, dist, key } => {
                let Src::Index { access } = &sources[*index as usize] else {
                    unreachable!("random reads an index source")
                };
                let j0 = match access {
                    Access::Contiguous { offset } => (offset + start) as u64,
                    Access::Constant { pos } => *pos as u64,
                    Access::Strided(_) => {
                        unreachable!("the fuser materialises out-of-order random sources")
                    }
                };
                let v = if d == DType::F32 {
                    let mut o = vec![0f32; len];
                    match dist {
                        Distribution::Uniform => rng::fill_uniform_f32(*key, j0, &mut o),
                        Distribution::Normal => rng::fill_normal_f32(*key, j0, &mut o),
                    }
                    o.into_iter().map(f64::from).collect()
                } else {
                    let mut o = vec![0f64; len];
                    match dist {
                        Distribution::Uniform => rng::fill_uniform_f64(*key, j0, &mut o),
                        Distribution::Normal => rng::fill_normal_f64(*key, j0, &mut o),
                    }
                    o
                };
                R::F(v)
            }
            InstKind::Unary(op, a) => unary(*op, &regs[*a as usize], d),
            InstKind::Binary(op, a, b) => binary(*op, &regs[*a as usize], &regs[*b as usize], d),
            InstKind::Where(c, a, b) => {
                select(&regs[*c as usize], &regs[*a as usize], &regs[*b as usize])
            }
            InstKind::Cast(a) => cast(&regs[*a as usize], d),
        };
        regs.push(r);
    }
    program
        .outputs
        .iter()
        .map(|&o| std::mem::replace(&mut regs[o as usize], empty(program.dtype(o))))
        .collect()
}

/// Writes a register into points `start..` of an output.
///
/// # Safety
/// The caller's task owns points `start..start+len` of `out`.
unsafe fn write(out: &OutPtr, r: &R, start: usize) {
    match (r, out.dtype) {
        (R::B(v), _) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<u8>(start + i, x)),
        (R::I(v), DType::I32) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<i32>(start + i, x as i32)),
        (R::I(v), DType::I8) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<i8>(start + i, x as i8)),
        (R::I(v), DType::I16) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<i16>(start + i, x as i16)),
        (R::I(v), DType::U8) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<u8>(start + i, x as u8)),
        (R::I(v), DType::U16) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<u16>(start + i, x as u16)),
        (R::I(v), DType::U32) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<u32>(start + i, x as u32)),
        (R::I(v), _) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<i64>(start + i, x)),
        (R::F(v), DType::F32) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<f32>(start + i, x as f32)),
        (R::F(v), _) => v
            .iter()
            .enumerate()
            .for_each(|(i, &x)| out.write::<f64>(start + i, x)),
        (R::C(v), DType::C64) => {
            let p = out.ptr as *mut Complex32;
            v.iter()
                .enumerate()
                .for_each(|(i, z)| *p.add(start + i) = Complex32::new(z.re as f32, z.im as f32))
        }
        (R::C(v), _) => {
            let p = out.ptr as *mut Complex64;
            v.iter()
                .enumerate()
                .for_each(|(i, &z)| *p.add(start + i) = z)
        }
    }
}

/// A shared writer for any output buffer (complex ones included).
fn out_ptr(buf: &mut Buffer) -> OutPtr {
    let dtype = buf.dtype();
    let len = buf.len();
    let ptr = match dtype {
        DType::C64 => buf.as_mut_ptr::<Complex32>().cast::<u8>(),
        DType::C128 => buf.as_mut_ptr::<Complex64>().cast::<u8>(),
        _ => return OutPtr::new(buf),
    };
    OutPtr { ptr, dtype, len }
}

/// Runs a fused kernel with complex registers (see the module docs).
pub(crate) fn run_fused(
    k: &BoundKernel<'_>,
    program: &Program,
    sources: &[BoundSource<'_>],
    reduce: Option<&ReducePlan>,
) -> Result<Vec<Value>> {
    let u64_source = sources
        .iter()
        .any(|s| matches!(s, BoundSource::Buffer { buffer, .. } if buffer.dtype() == DType::U64));
    if u64_source || program.insts.iter().any(|i| i.dtype == DType::U64) {
        return Err(Error::dtype(
            "cpu kernel",
            DType::U64,
            "complex arithmetic with uint64 is not supported; cast to float64 first",
        ));
    }
    let bound: Vec<Src<'_>> = sources
        .iter()
        .map(|s| match s {
            BoundSource::Buffer { buffer, layout } => Src::Buffer {
                buf: buffer,
                access: Access::of(layout),
            },
            BoundSource::Index { layout } => Src::Index {
                access: Access::of(layout),
            },
        })
        .collect();
    let n = k.numel();
    // With a closing reduction, the program's (real) output is computed
    // into a temporary first, then reduced by the ordinary kernels.
    let out_dtypes: Vec<DType> = match reduce {
        Some(_) => {
            let d = program.dtype(program.outputs[0]);
            if d.is_complex() {
                return Err(Error::dtype(
                    "reduce",
                    d,
                    "complex reductions are not supported yet",
                ));
            }
            vec![d]
        }
        None => k.outputs.iter().map(|o| o.1).collect(),
    };
    let mut bufs: Vec<Buffer> = out_dtypes
        .iter()
        .map(|&d| Buffer::alloc(d, n))
        .collect::<Result<_>>()?;
    {
        let outs: Vec<OutPtr> = bufs.iter_mut().map(out_ptr).collect();
        let chunks = n.div_ceil(CHUNK);
        let task = |c: usize| {
            let (a, b) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
            let regs = eval_chunk(program, &bound, a, b - a);
            for (o, r) in outs.iter().zip(&regs) {
                // SAFETY: chunk c owns points a..b of every output.
                unsafe { write(o, r, a) };
            }
        };
        let work = n as f64 * (4.0 + program.flops_per_point());
        if work >= parallel_min_work() && threads() > 1 && chunks > 1 {
            super::for_each_task(chunks, task);
        } else {
            (0..chunks).for_each(task);
        }
    }
    let Some(plan) = reduce else {
        return Ok(bufs
            .into_iter()
            .zip(k.outputs.iter())
            .map(|(b, (shape, _))| Value {
                buffer: Arc::new(b),
                layout: Layout::contiguous(shape),
            })
            .collect());
    };
    // Reduce the materialised program output with the real kernels.
    let tmp = bufs
        .pop()
        .ok_or_else(|| Error::internal("reduce", "no temporary"))?;
    let d = tmp.dtype();
    let mut load = Program::default();
    load.sources.push(SourceKind::Buffer(d));
    let r = load.push(InstKind::Load(0), d);
    load.outputs.push(r);
    let data = super::data_of(&tmp)?;
    let prep = super::interp::Prepared::new(
        &load,
        vec![super::interp::Bound::Buffer {
            data,
            access: Access::Contiguous { offset: 0 },
        }],
    )?;
    let mut obufs: Vec<Buffer> = k
        .outputs
        .iter()
        .map(|(shape, dtype)| Buffer::alloc(*dtype, crate::shape::numel(shape)))
        .collect::<Result<_>>()?;
    let outs: Vec<OutPtr> = obufs.iter_mut().map(OutPtr::new).collect();
    let parallel = n as f64 >= parallel_min_work() && threads() > 1;
    super::reduce::run(&prep, plan, &outs, parallel);
    drop(outs);
    drop(prep);
    Ok(obufs
        .into_iter()
        .zip(k.outputs.iter())
        .map(|(b, (shape, _))| Value {
            buffer: Arc::new(b),
            layout: Layout::contiguous(shape),
        })
        .collect())
}
