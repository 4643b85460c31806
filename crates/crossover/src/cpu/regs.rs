//! Registers of the CPU interpreter and the storage types behind them.
//!
//! Every dtype computes in a register type: bool in `u8`, int32 in `i32`,
//! int64 in `i64`, uint64 in `u64`, floats in themselves. The narrow
//! integers compute in wider registers, so the interpreter is not compiled
//! again for each of them: int8, int16, uint8 and uint16 in `i32`, uint32
//! in `i64`. Their values are **widened on load**, **wrapped to the dtype
//! after every instruction** (so `(a + b) // c` in int8 wraps `a + b` first,
//! as NumPy does) and **narrowed on store**.

use super::gather::{gather, Access};
use super::interp::CHUNK;
use super::num::{Num, Pod};
use super::OutPtr;
use crate::dtype::{DType, Scalar};

/// Typed read-only view of a source buffer (its storage type).
#[derive(Clone, Copy, Debug)]
pub enum Data<'a> {
    Bool(&'a [u8]),
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    F32(&'a [f32]),
    F64(&'a [f64]),
}

/// A splatted constant, in its register type.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Val {
    Bool(u8),
    I32(i32),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
}

/// Typed access to [`Data`] and [`Val`] for a register type.
pub(crate) trait FromData<'a>: Pod {
    fn from_data(d: Data<'a>) -> &'a [Self];
    fn from_val(v: Val) -> Self;
}
macro_rules! from_data {
    ($t:ty, $v:ident) => {
        impl<'a> FromData<'a> for $t {
            #[inline(always)]
            fn from_data(d: Data<'a>) -> &'a [$t] {
                match d {
                    Data::$v(s) => s,
                    _ => unreachable!("source dtype checked when binding"),
                }
            }
            #[inline(always)]
            fn from_val(v: Val) -> $t {
                match v {
                    Val::$v(x) => x,
                    _ => unreachable!("constant dtype checked when preparing"),
                }
            }
        }
    };
}
from_data!(u8, Bool);
from_data!(i32, I32);
from_data!(i64, I64);
from_data!(u64, U64);
from_data!(f32, F32);
from_data!(f64, F64);

/// Runs `$body` with `$T` bound to the **register** type of `$d`.
macro_rules! with_type {
    ($d:expr, $T:ident => $body:expr) => {
        match $d {
            DType::Bool => {
                type $T = u8;
                $body
            }
            DType::I8 | DType::I16 | DType::U8 | DType::U16 | DType::I32 => {
                type $T = i32;
                $body
            }
            DType::U32 | DType::I64 => {
                type $T = i64;
                $body
            }
            DType::U64 => {
                type $T = u64;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::C64 | DType::C128 => {
                unreachable!("complex programs are rejected when preparing")
            }
        }
    };
}
pub(crate) use with_type;

/// Wraps an integer to dtype `d`'s range (two's complement, as NumPy's
/// integer arithmetic wraps); other dtypes unchanged.
#[inline(always)]
pub fn wrap_i64(d: DType, x: i64) -> i64 {
    match d {
        DType::I8 => x as i8 as i64,
        DType::I16 => x as i16 as i64,
        DType::I32 => x as i32 as i64,
        DType::U8 => x as u8 as i64,
        DType::U16 => x as u16 as i64,
        DType::U32 => x as u32 as i64,
        _ => x,
    }
}

/// Wraps the first `len` register values in `dst` (the bytes of a register
/// slot or output) to dtype `d`, when `d` computes in a wider register.
#[inline(always)]
pub(crate) fn wrap(d: DType, dst: &mut [u8], len: usize) {
    fn each<T: Pod>(dst: &mut [u8], len: usize, f: impl Fn(T) -> T) {
        for v in super::interp::view_mut::<T>(dst, len) {
            *v = f(*v);
        }
    }
    match d {
        DType::I8 => each::<i32>(dst, len, |v| v as i8 as i32),
        DType::I16 => each::<i32>(dst, len, |v| v as i16 as i32),
        DType::U8 => each::<i32>(dst, len, |v| v as u8 as i32),
        DType::U16 => each::<i32>(dst, len, |v| v as u16 as i32),
        DType::U32 => each::<i64>(dst, len, |v| v as u32 as i64),
        _ => {}
    }
}

/// The constant `s` as a register value of dtype `d`.
pub(crate) fn val_of(s: Scalar, d: DType) -> Val {
    match d {
        DType::Bool => Val::Bool(<u8 as Num>::from_scalar(s)),
        DType::I8 | DType::I16 | DType::U8 | DType::U16 | DType::I32 => {
            let v = match s {
                Scalar::Float(_) => <i32 as Num>::from_scalar(s) as i64,
                _ => s.as_i64(),
            };
            Val::I32(wrap_i64(d, v) as i32)
        }
        DType::U32 => Val::I64(wrap_i64(d, <i64 as Num>::from_scalar(s))),
        DType::I64 => Val::I64(<i64 as Num>::from_scalar(s)),
        DType::U64 => Val::U64(<u64 as Num>::from_scalar(s)),
        DType::F32 => Val::F32(<f32 as Num>::from_scalar(s)),
        DType::F64 | DType::C64 | DType::C128 => Val::F64(s.as_f64()),
    }
}

/// Element `pos` of a source as a register value.
pub(crate) fn read_val(data: Data<'_>, pos: usize) -> Val {
    match data {
        Data::Bool(s) => Val::Bool(s[pos]),
        Data::I8(s) => Val::I32(s[pos] as i32),
        Data::I16(s) => Val::I32(s[pos] as i32),
        Data::U8(s) => Val::I32(s[pos] as i32),
        Data::U16(s) => Val::I32(s[pos] as i32),
        Data::I32(s) => Val::I32(s[pos]),
        Data::U32(s) => Val::I64(s[pos] as i64),
        Data::I64(s) => Val::I64(s[pos]),
        Data::U64(s) => Val::U64(s[pos]),
        Data::F32(s) => Val::F32(s[pos]),
        Data::F64(s) => Val::F64(s[pos]),
    }
}

/// Whether a source of this storage is read into a wider register (so it
/// cannot be read in place).
pub(crate) fn widens(d: Data<'_>) -> bool {
    matches!(
        d,
        Data::I8(_) | Data::I16(_) | Data::U8(_) | Data::U16(_) | Data::U32(_)
    )
}

/// Gathers points `start..start+len` of a narrow source, widened into the
/// register bytes `dst`.
#[inline(always)]
pub(crate) fn load_widened(
    data: Data<'_>,
    access: &Access,
    start: usize,
    dst: &mut [u8],
    len: usize,
) {
    fn go<S: Copy + Default, R: Pod>(
        src: &[S],
        access: &Access,
        start: usize,
        dst: &mut [u8],
        len: usize,
        f: impl Fn(S) -> R,
    ) {
        let mut tmp = [S::default(); CHUNK];
        gather(src, access, start, &mut tmp[..len]);
        let out = super::interp::view_mut::<R>(dst, len);
        for (o, &v) in out.iter_mut().zip(&tmp[..len]) {
            *o = f(v);
        }
    }
    match data {
        Data::I8(s) => go(s, access, start, dst, len, |v| v as i32),
        Data::I16(s) => go(s, access, start, dst, len, |v| v as i32),
        Data::U8(s) => go(s, access, start, dst, len, |v| v as i32),
        Data::U16(s) => go(s, access, start, dst, len, |v| v as i32),
        Data::U32(s) => go(s, access, start, dst, len, |v| v as i64),
        _ => unreachable!("only narrow sources are widened"),
    }
}

/// Writes register values `src` (of register type `T`) into elements
/// `start..start+src.len()` of `out`, narrowing to the output's dtype.
///
/// # Safety
/// The caller's task owns those elements of `out`, and `T` is the register
/// type of `out.dtype`.
#[inline(always)]
pub(crate) unsafe fn store<T: Num>(
    out: &OutPtr,
    start: usize,
    src: super::interp::Arg<'_, T>,
    len: usize,
) {
    use super::interp::Arg;
    if std::mem::size_of::<T>() == out.dtype.size() {
        let dst = out.slice_mut::<T>(start, len);
        match src {
            Arg::Slice(s) => dst.copy_from_slice(&s[..len]),
            Arg::Splat(v) => dst.fill(v),
        }
        return;
    }
    fn go<T: Num, S: Pod>(dst: &mut [S], src: super::interp::Arg<'_, T>, f: impl Fn(i64) -> S) {
        for (i, o) in dst.iter_mut().enumerate() {
            // Narrow registers hold integers, exact in f64.
            *o = f(src.get(i).to_f64() as i64);
        }
    }
    match out.dtype {
        DType::I8 => go(out.slice_mut::<i8>(start, len), src, |v| v as i8),
        DType::I16 => go(out.slice_mut::<i16>(start, len), src, |v| v as i16),
        DType::U8 => go(out.slice_mut::<u8>(start, len), src, |v| v as u8),
        DType::U16 => go(out.slice_mut::<u16>(start, len), src, |v| v as u16),
        DType::U32 => go(out.slice_mut::<u32>(start, len), src, |v| v as u32),
        d => unreachable!("{d} is stored in its register type"),
    }
}

/// Writes one register value into element `k` of `out`, narrowing like
/// [`store`].
///
/// # Safety
/// As for [`store`], for element `k`.
#[inline(always)]
pub(crate) unsafe fn store_one<T: Num>(out: &OutPtr, k: usize, v: T) {
    store(out, k, super::interp::Arg::Splat(v), 1)
}
