//! One line of C per IR instruction, with the CPU backend's semantics:
//! integer arithmetic wraps (done in unsigned types, since signed overflow
//! is undefined in C), float-to-int casts saturate with NaN -> 0,
//! `minimum`/`maximum` propagate NaN, float32 `pow` runs in float64, bool is
//! a byte that `+`/`*` treat as or/and.

use super::params::{Param, ParamLayout, Slot};
use super::{Access, Variant};
use crate::dtype::DType;
use crate::expr::ir::{InstKind, Program, SourceKind};
use crate::op::{BinaryOp, UnaryOp};
use crate::rng::Distribution;
use std::fmt::Write;

/// The C storage type of a dtype.
pub fn ctype(d: DType) -> &'static str {
    match d {
        DType::Bool => "u8",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::F32 => "f32",
        DType::F64 => "f64",
        // Complex kernels and the narrow and unsigned integers are refused
        // before rendering.
        DType::C64 | DType::C128 => "xo_complex_unsupported",
        DType::I8 | DType::I16 | DType::U8 | DType::U16 | DType::U32 | DType::U64 => {
            "xo_small_int_unsupported"
        }
    }
}

/// The unsigned twin of an integer type (wrapping arithmetic).
fn utype(d: DType) -> &'static str {
    match d {
        DType::I32 => "u32",
        _ => "u64",
    }
}

fn suffix(d: DType) -> &'static str {
    if d == DType::F32 {
        "f32"
    } else {
        "f64"
    }
}

/// Adds the parameters a program's instructions read.
pub fn program_params(program: &Program, layout: &mut ParamLayout) {
    for (r, inst) in program.insts.iter().enumerate() {
        let r = r as u32;
        match inst.kind {
            InstKind::Const(_) => {
                let slot = match inst.dtype {
                    DType::F32 => Slot::F32,
                    DType::F64 => Slot::F64,
                    _ => Slot::I64,
                };
                layout.push(Param::Const(r), slot);
            }
            InstKind::Arange { .. } => {
                layout.push(Param::ArangeStart(r), Slot::F64);
                layout.push(Param::ArangeStep(r), Slot::F64);
                layout.push(Param::ArangeLastIndex(r), Slot::I64);
                layout.push(Param::ArangeLastValue(r), Slot::F64);
            }
            InstKind::Random { .. } => {
                layout.push(Param::Seed(r), Slot::U64);
                layout.push(Param::Stream(r), Slot::U64);
            }
            _ => {}
        }
    }
}

/// The kernel argument a program with [`reports_errors`] takes last (after
/// its outputs): two `u32` words the host zeroes; a float-to-int cast that
/// met NaN, an infinity or a value out of range sets the first (NumPy's
/// warning), an integer power with a negative exponent the second (NumPy's
/// error).
pub const ERROR_FLAGS: &str = "xo_bad";

/// Bytes of the [`ERROR_FLAGS`] buffer.
pub const ERROR_FLAG_BYTES: usize = 8;

/// Whether a cast from `from` to `to` can be invalid (float to integer;
/// to bool is a comparison).
fn is_checked_cast(from: DType, to: DType) -> bool {
    from.is_float() && matches!(to, DType::I32 | DType::I64)
}

/// Whether instruction `i` is an integer power whose exponent is not a
/// constant (a negative constant is refused when the power is recorded).
fn is_checked_power(program: &Program, i: &crate::expr::ir::Inst) -> bool {
    match i.kind {
        InstKind::Binary(BinaryOp::Pow, _, e) if i.dtype.is_int() => {
            !matches!(program.insts[e as usize].kind, InstKind::Const(_))
        }
        _ => false,
    }
}

/// Whether `program`'s kernel reports errors through [`ERROR_FLAGS`]: it
/// casts floats to integers (NumPy warns of invalid ones) or raises
/// integers to exponents read from arrays (NumPy refuses negative ones).
pub fn reports_errors(program: &Program) -> bool {
    program.insts.iter().any(|i| match i.kind {
        InstKind::Cast(a) => is_checked_cast(program.dtype(a), i.dtype),
        _ => is_checked_power(program, i),
    })
}

/// The kernel parameter of [`ERROR_FLAGS`] when `program` needs it.
pub fn error_flags_arg(program: &Program) -> String {
    if reports_errors(program) {
        format!(", GLOBAL u32* {ERROR_FLAGS}")
    } else {
        String::new()
    }
}

/// Whether rendering `program` needs double precision on the device.
pub fn needs_fp64(program: &Program) -> bool {
    program.sources.contains(&SourceKind::Buffer(DType::F64))
        || program.insts.iter().any(|i| {
            i.dtype == DType::F64
                || matches!(i.kind, InstKind::Arange { .. })
                || matches!(i.kind, InstKind::Binary(BinaryOp::Pow, ..) if i.dtype.is_float())
                || matches!(i.kind, InstKind::Cast(a) if program.dtype(a) == DType::F64)
        })
}

/// The C expression of the element position of source `s` at the point
/// whose coordinates are `c0..` (or flat index `pt` when contiguous).
fn position(v: &Variant, s: usize, pt: &str, ix: &str) -> String {
    let off = Param::Offset(s).name();
    match v.access[s] {
        Access::Contiguous => format!("(({ix})p.{off} + {pt})"),
        Access::Constant => format!("(({ix})p.{off})"),
        Access::Strided => {
            let mut e = format!("(({ix})p.{off}");
            for d in 0..v.dims {
                let _ = write!(e, " + c{d} * ({ix})p.{}", Param::Stride(s, d).name());
            }
            e.push(')');
            e
        }
    }
}

/// Statements computing every register of `program` at point `pt` (a C
/// expression of the variant's index type), indented by `ind`. Register `r`
/// is the C variable `r{r}`.
pub fn point(program: &Program, v: &Variant, pt: &str, ind: &str, s: &mut String) {
    let ix = v.index_type();
    if v.access.contains(&Access::Strided) {
        // Coordinates of the point in the collapsed iteration shape.
        let _ = writeln!(s, "{ind}{ix} rem = {pt};");
        for d in (0..v.dims).rev() {
            let dim = Param::Dim(d).name();
            if d == 0 {
                let _ = writeln!(s, "{ind}const {ix} c0 = rem;");
            } else {
                let _ = writeln!(
                    s,
                    "{ind}const {ix} c{d} = rem % ({ix})p.{dim}; rem /= ({ix})p.{dim};"
                );
            }
        }
    }
    for (r, inst) in program.insts.iter().enumerate() {
        let t = ctype(inst.dtype);
        let e = inst_expr(program, v, r as u32, pt, ix);
        let _ = writeln!(s, "{ind}const {t} r{r} = {e};");
    }
}

fn inst_expr(program: &Program, v: &Variant, r: u32, pt: &str, ix: &str) -> String {
    let inst = &program.insts[r as usize];
    let d = inst.dtype;
    let t = ctype(d);
    match &inst.kind {
        InstKind::Load(src) => format!("in{src}[{}]", position(v, *src as usize, pt, ix)),
        InstKind::Const(_) => format!("({t})p.{}", Param::Const(r).name()),
        InstKind::Arange { index, .. } => {
            let j = position(v, *index as usize, pt, ix);
            let val = format!(
                "((i64){j} == p.{lj} ? p.{lv} : p.{st} + (f64){j} * p.{sp})",
                lj = Param::ArangeLastIndex(r).name(),
                lv = Param::ArangeLastValue(r).name(),
                st = Param::ArangeStart(r).name(),
                sp = Param::ArangeStep(r).name(),
            );
            from_f64(&val, d)
        }
        InstKind::Random { index, dist, .. } => {
            let j = position(v, *index as usize, pt, ix);
            let f = match dist {
                Distribution::Uniform => "uniform",
                Distribution::Normal => "normal",
            };
            format!(
                "xo_{f}_{}(p.{}, p.{}, (u64){j})",
                suffix(d),
                Param::Seed(r).name(),
                Param::Stream(r).name()
            )
        }
        InstKind::Unary(op, a) => unary(*op, d, &format!("r{a}")),
        InstKind::Binary(BinaryOp::Pow, a, e) if is_checked_power(program, inst) => {
            format!("({t})xo_ipow_noted((i64)r{a}, (i64)r{e}, {ERROR_FLAGS})")
        }
        InstKind::Binary(op, a, b) => {
            let od = program.dtype(*a);
            binary(*op, od, d, &format!("r{a}"), &format!("r{b}"))
        }
        InstKind::Where(c, a, b) => format!("(r{c} != 0 ? r{a} : r{b})"),
        InstKind::Cast(a) if is_checked_cast(program.dtype(*a), d) => format!(
            "xo_{}_to_{t}_noted(r{a}, {ERROR_FLAGS})",
            suffix(program.dtype(*a))
        ),
        InstKind::Cast(a) => cast(&format!("r{a}"), program.dtype(*a), d),
    }
}

/// NumPy's `T(v)` from a float64 value (the CPU's `from_f64`).
fn from_f64(v: &str, to: DType) -> String {
    match to {
        DType::Bool => format!("(u8)({v} != 0.0)"),
        DType::I32 => format!("xo_f64_to_i32({v})"),
        DType::I64 => format!("xo_f64_to_i64({v})"),
        DType::F32 => format!("(f32)({v})"),
        _ => v.to_string(),
    }
}

/// Conversion with NumPy's `astype` meaning.
pub fn cast(a: &str, from: DType, to: DType) -> String {
    if from == to {
        return a.to_string();
    }
    let t = ctype(to);
    match (from, to) {
        (_, DType::Bool) => format!("(u8)({a} != 0)"),
        (DType::F32 | DType::F64, DType::I32 | DType::I64) => {
            format!("xo_{}_to_{t}({a})", suffix(from))
        }
        (DType::I64, DType::I32) => format!("(i32)(u32)(u64)({a})"),
        _ => format!("({t})({a})"),
    }
}

fn unary(op: UnaryOp, d: DType, a: &str) -> String {
    let t = ctype(d);
    let float = d.is_float();
    let int = d.is_int();
    match op {
        UnaryOp::Neg if float => format!("(-{a})"),
        UnaryOp::Neg if int => format!("({t})(({})0 - ({}){a})", utype(d), utype(d)),
        UnaryOp::Abs if float => format!("xo_fabs_{}({a})", suffix(d)),
        UnaryOp::Abs if int => {
            format!(
                "({a} < 0 ? ({t})(({})0 - ({}){a}) : {a})",
                utype(d),
                utype(d)
            )
        }
        UnaryOp::Neg | UnaryOp::Abs => a.to_string(),
        // +0 for both zeros and the input itself for NaN, bits and all
        // (NumPy's sign; `a + 0` would do on the CPU, but an NVIDIA GPU's
        // arithmetic returns its canonical NaN: seen on an H100).
        UnaryOp::Sign if float => {
            format!("({a} > 0 ? ({t})1 : ({a} < 0 ? ({t})-1 : ({a} == 0 ? ({t})0 : {a})))")
        }
        UnaryOp::Sign => format!("({t})(({a} > 0) - ({a} < 0))"),
        UnaryOp::Square => binary(BinaryOp::Mul, d, d, a, a),
        UnaryOp::Floor | UnaryOp::Ceil if !float => a.to_string(),
        UnaryOp::Not => format!("({t})({a} == 0)"),
        UnaryOp::Conj | UnaryOp::Real => a.to_string(),
        UnaryOp::Imag => format!("({t})0"),
        _ => {
            let f = op
                .c_math_name()
                .expect("every other unary op is a math call");
            format!("xo_{f}_{}({a})", suffix(d))
        }
    }
}

/// `op(a, b)` for operands of dtype `od` and a result of dtype `d`.
fn binary(op: BinaryOp, od: DType, d: DType, a: &str, b: &str) -> String {
    let t = ctype(d);
    if op.is_comparison() {
        let c = match op {
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            _ => "!=",
        };
        return format!("(u8)({a} {c} {b})");
    }
    if op.is_logical() {
        let c = if op == BinaryOp::And { "&&" } else { "||" };
        return format!("({t})(({a} != 0) {c} ({b} != 0))");
    }
    if d == DType::Bool {
        return match op {
            BinaryOp::Add | BinaryOp::Maximum => format!("(u8)({a} | {b})"),
            BinaryOp::Sub => format!("(u8)({a} ^ {b})"),
            BinaryOp::Pow => format!("(u8)({a} | ({b} ^ 1))"),
            _ => format!("(u8)({a} & {b})"),
        };
    }
    if d.is_int() {
        let u = utype(d);
        return match op {
            BinaryOp::Add => format!("({t})(({u}){a} + ({u}){b})"),
            BinaryOp::Sub => format!("({t})(({u}){a} - ({u}){b})"),
            BinaryOp::Mul => format!("({t})(({u}){a} * ({u}){b})"),
            // Integer division is recorded as float64; this mirrors the
            // CPU's guard (x / 0 = 0, MIN / -1 wraps).
            BinaryOp::Div => format!(
                "({b} == 0 ? ({t})0 : ({b} == -1 ? ({t})(({u})0 - ({u}){a}) : ({t})({a} / {b})))"
            ),
            BinaryOp::Pow => format!("({t})xo_ipow((i64){a}, (i64){b})"),
            BinaryOp::Minimum => format!("({b} < {a} ? {b} : {a})"),
            _ => format!("({b} > {a} ? {b} : {a})"),
        };
    }
    let _ = od;
    match op {
        BinaryOp::Add => format!("({a} + {b})"),
        BinaryOp::Sub => format!("({a} - {b})"),
        BinaryOp::Mul => format!("({a} * {b})"),
        BinaryOp::Div => format!("({a} / {b})"),
        // Like the CPU: float32 powers are computed in float64.
        BinaryOp::Pow => format!("({t})xo_pow_f64((f64){a}, (f64){b})"),
        BinaryOp::Atan2 => format!("xo_atan2_{}({a}, {b})", suffix(d)),
        BinaryOp::Hypot => format!("xo_hypot_{}({a}, {b})", suffix(d)),
        BinaryOp::Minimum => format!("(({a} < {b} || {a} != {a}) ? {a} : {b})"),
        _ => format!("(({a} > {b} || {a} != {a}) ? {a} : {b})"),
    }
}
