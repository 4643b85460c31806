//! Element arithmetic used by the interpreter, generic over the storage
//! register types (`u8` for bool, i32, i64, u64, f32, f64; the narrow
//! integers compute in i32 and i64, see [`super::regs`]). Everything is branch-free and
//! `#[inline(always)]` so loops over slices vectorise.

use super::interp::Arg;
use crate::dtype::{DType, Scalar};
use std::sync::atomic::{AtomicBool, Ordering};

/// Primitive storage types: any bit pattern is valid, alignment <= 8.
pub trait Pod: Copy + Send + Sync + Default + PartialEq + PartialOrd + 'static {
    const DTYPE: DType;
}
impl Pod for u8 {
    const DTYPE: DType = DType::Bool;
}
impl Pod for i32 {
    const DTYPE: DType = DType::I32;
}
impl Pod for i64 {
    const DTYPE: DType = DType::I64;
}
impl Pod for u64 {
    const DTYPE: DType = DType::U64;
}
impl Pod for i8 {
    const DTYPE: DType = DType::I8;
}
impl Pod for i16 {
    const DTYPE: DType = DType::I16;
}
impl Pod for u16 {
    const DTYPE: DType = DType::U16;
}
impl Pod for u32 {
    const DTYPE: DType = DType::U32;
}
impl Pod for f32 {
    const DTYPE: DType = DType::F32;
}
impl Pod for f64 {
    const DTYPE: DType = DType::F64;
}

/// `out[i] = body(x[i], y[i])` over a chunk, for each mix of slices and
/// splats, with `body` written in the loop itself (see
/// [`Num::pow_slices`] for why that matters).
macro_rules! zip2 {
    ($x:expr, $y:expr, $out:expr, |$p:ident, $q:ident| $body:expr) => {
        match ($x, $y) {
            ($crate::cpu::interp::Arg::Slice(a), $crate::cpu::interp::Arg::Slice(b)) => {
                for ((o, &$p), &$q) in $out.iter_mut().zip(a).zip(b) {
                    *o = $body;
                }
            }
            ($crate::cpu::interp::Arg::Slice(a), $crate::cpu::interp::Arg::Splat($q)) => {
                for (o, &$p) in $out.iter_mut().zip(a) {
                    *o = $body;
                }
            }
            ($crate::cpu::interp::Arg::Splat($p), $crate::cpu::interp::Arg::Slice(b)) => {
                for (o, &$q) in $out.iter_mut().zip(b) {
                    *o = $body;
                }
            }
            ($crate::cpu::interp::Arg::Splat($p), $crate::cpu::interp::Arg::Splat($q)) => {
                let r = $body;
                $out.iter_mut().for_each(|o| *o = r);
            }
        }
    };
}
pub(crate) use zip2;

/// Arithmetic on one storage type.
pub trait Num: Pod {
    fn from_scalar(s: Scalar) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn pow(self, o: Self) -> Self;
    /// `sqrt(self² + o²)` (floats; the recorder casts integers to float64).
    fn hypot(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    /// -1, 0 or 1 (NumPy's `sign`: NaN stays NaN, -0.0 gives 0.0).
    fn sign(self) -> Self;
    /// NaN-propagating minimum (NumPy's `minimum`).
    fn min_nan(self, o: Self) -> Self;
    fn max_nan(self, o: Self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn is_nan(self) -> bool;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;

    /// `out[i] = x[i].pow(y[i])` over a chunk. The loop calls `pow` in its
    /// own body (not through a `fn` item passed to a generic map): LLVM
    /// compiled the `Fn::call` shim of the large float32 `pow` as a separate
    /// function without the caller's FMA and AVX features, so every
    /// `mul_add` became a software `fma` call (float32 power ran 100x
    /// slower than NumPy).
    #[inline(always)]
    fn pow_slices(x: Arg<'_, Self>, y: Arg<'_, Self>, out: &mut [Self]) {
        zip2!(x, y, out, |p, q| Num::pow(p, q))
    }

    /// `out[i] = atan2(x[i], y[i])` (floats only: the recorder casts
    /// integers to float64; the float types override this with their
    /// vectorised ones). Its own loop, like `pow_slices`.
    #[inline(always)]
    fn atan2_slices(x: Arg<'_, Self>, y: Arg<'_, Self>, out: &mut [Self]) {
        zip2!(x, y, out, |p, q| Self::from_f64(
            p.to_f64().atan2(q.to_f64())
        ))
    }
}

/// Wrapping integer arithmetic, NumPy's. `fits`: whether a float constant
/// is in range (else NumPy's invalid-cast warning); `abs` and `from_f64`
/// differ between signed and unsigned types.
macro_rules! int_num {
    ($t:ty, fits = |$f:ident| $fits:expr, abs = |$a:ident| $abs:expr,
     sign = |$sg:ident| $sign:expr, from_f64 = |$g:ident| $from:expr) => {
        impl Num for $t {
            #[inline(always)]
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    // A float constant converts like an array element.
                    Scalar::Float($f) => {
                        if !$fits {
                            note_invalid_cast();
                        }
                        <f64 as CastTo<$t>>::cast_to($f)
                    }
                    // Python ints out of range (negative ones for unsigned
                    // types) are refused when recorded.
                    _ => s.as_i64() as $t,
                }
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                // Not reached: integer division is recorded as float64.
                if o == 0 {
                    0
                } else {
                    self.wrapping_div(o)
                }
            }
            #[inline(always)]
            fn pow(self, o: Self) -> Self {
                // uint64 exponents from 2^63 up wrap to negative ones here
                // (NumPy's result would be 0 or 1 for most bases as well).
                ipow(self as i64, o as i64) as $t
            }
            #[inline(always)]
            fn hypot(self, o: Self) -> Self {
                (self as f64).hypot(o as f64) as $t
            }
            #[inline(always)]
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            #[inline(always)]
            fn abs(self) -> Self {
                let $a = self;
                $abs
            }
            #[inline(always)]
            fn sign(self) -> Self {
                let $sg = self;
                $sign
            }
            #[inline(always)]
            fn min_nan(self, o: Self) -> Self {
                if o < self {
                    o
                } else {
                    self
                }
            }
            #[inline(always)]
            fn max_nan(self, o: Self) -> Self {
                if o > self {
                    o
                } else {
                    self
                }
            }
            #[inline(always)]
            fn floor(self) -> Self {
                self
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                self
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64($g: f64) -> Self {
                $from
            }
        }
    };
}
int_num!(
    i32,
    fits = |f| float_fits::<i32>(f),
    abs = |v| v.wrapping_abs(),
    sign = |v| v.signum(),
    from_f64 = |v| v as i32
);
int_num!(
    i64,
    fits = |f| float_fits::<i64>(f),
    abs = |v| v.wrapping_abs(),
    sign = |v| v.signum(),
    from_f64 = |v| v as i64
);
int_num!(
    u64,
    fits = |f| (0.0..18446744073709551616.0).contains(&f),
    abs = |v| v,
    sign = |v| (v != 0) as u64,
    from_f64 = |v| <f64 as CastTo<u64>>::cast_to(v)
);

impl Num for u8 {
    #[inline(always)]
    fn from_scalar(s: Scalar) -> Self {
        s.as_bool() as u8
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn pow(self, o: Self) -> Self {
        self | (o ^ 1)
    }
    #[inline(always)]
    fn hypot(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn neg(self) -> Self {
        self
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self
    }
    #[inline(always)]
    fn sign(self) -> Self {
        // Not reached: bool sign is refused when recorded, as in NumPy.
        self
    }
    #[inline(always)]
    fn min_nan(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn max_nan(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn floor(self) -> Self {
        self
    }
    #[inline(always)]
    fn ceil(self) -> Self {
        self
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        false
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        (v != 0.0) as u8
    }
}

/// float32 power over a chunk: the AVX-512 kernel where the CPU has it,
/// else the portable vectorised [`super::math::pow_f32`] (see
/// [`Num::pow_slices`]).
#[inline(always)]
fn pow_slices_f32(x: Arg<'_, f32>, y: Arg<'_, f32>, out: &mut [f32]) {
    if !super::math32_pow::pow_slices_avx512(x, y, out) {
        zip2!(x, y, out, |p, q| super::math::pow_f32(p, q))
    }
}

/// float64 power over a chunk: the AVX-512 kernel where the CPU has it,
/// else the portable vectorised [`super::math64::pow_f64`] (log|x| in
/// double-double).
#[inline(always)]
fn pow_slices_f64(x: Arg<'_, f64>, y: Arg<'_, f64>, out: &mut [f64]) {
    if !super::math64_pow::pow_slices_avx512(x, y, out) {
        zip2!(x, y, out, |p, q| super::math64::pow_f64(p, q))
    }
}

macro_rules! float_num {
    ($t:ty, $pow_slices:path) => {
        impl Num for $t {
            #[inline(always)]
            fn pow_slices(x: Arg<'_, Self>, y: Arg<'_, Self>, out: &mut [Self]) {
                $pow_slices(x, y, out)
            }
            #[inline(always)]
            fn from_scalar(s: Scalar) -> Self {
                s.as_f64() as $t
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                self / o
            }
            #[inline(always)]
            fn pow(self, o: Self) -> Self {
                if std::mem::size_of::<$t>() == 4 {
                    // float32: vectorised, in f64 inside (an f32
                    // exp(y*log(x)) would lose digits).
                    super::math::pow_f32(self as f32, o as f32) as $t
                } else {
                    // float64: vectorised, log|x| in double-double.
                    super::math64::pow_f64(self as f64, o as f64) as $t
                }
            }
            #[inline(always)]
            fn hypot(self, o: Self) -> Self {
                if std::mem::size_of::<$t>() == 4 {
                    // float32: squares are exact in float64 and cannot
                    // overflow there, so the plain formula rounds once to
                    // float32 and vectorises (libm's hypot is a call per
                    // element). An infinity wins over NaN, as in hypot.
                    let (a, b) = (self as f64, o as f64);
                    let r = (a * a + b * b).sqrt();
                    let inf = a.is_infinite() || b.is_infinite();
                    (if inf { f64::INFINITY } else { r }) as $t
                } else {
                    (self as f64).hypot(o as f64) as $t
                }
            }
            #[inline(always)]
            fn atan2_slices(x: Arg<'_, Self>, y: Arg<'_, Self>, out: &mut [Self]) {
                if std::mem::size_of::<$t>() == 4 {
                    zip2!(x, y, out, |p, q| {
                        super::math32_inverse::atan2_f32(p as f32, q as f32) as $t
                    })
                } else {
                    // Vectorised, within 1 ulp of glibc (math64_inverse).
                    zip2!(x, y, out, |p, q| {
                        super::math64_inverse::atan2_f64(p as f64, q as f64) as $t
                    })
                }
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn sign(self) -> Self {
                // Compares and selects (vectorised); `self + 0.0` keeps
                // NaN and turns -0.0 into 0.0, as NumPy does.
                if self > 0.0 {
                    1.0
                } else if self < 0.0 {
                    -1.0
                } else {
                    self + 0.0
                }
            }
            #[inline(always)]
            fn min_nan(self, o: Self) -> Self {
                if self < o || self.is_nan() {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn max_nan(self, o: Self) -> Self {
                if self > o || self.is_nan() {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    };
}
float_num!(f32, pow_slices_f32);
float_num!(f64, pow_slices_f64);

/// Integer power with NumPy's results for negative exponents of +-1 and 0
/// otherwise (NumPy raises for scalars and returns garbage for arrays).
#[inline(always)]
pub fn ipow(mut b: i64, mut e: i64) -> i64 {
    if e < 0 {
        return match b {
            1 => 1,
            -1 => {
                if e % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    let mut r: i64 = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = r.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    r
}

/// Conversion between storage types with NumPy's `astype` meaning: float
/// to int truncates; NaN, infinities and values out of range give what
/// NumPy gives on this platform (see [`float_to_int`]); anything to bool is
/// `!= 0`.
pub trait CastTo<U> {
    fn cast_to(self) -> U;
}

/// Set when a float-to-int conversion met NaN, an infinity or a value out
/// of range: NumPy warns "invalid value encountered in cast" then.
static INVALID_CAST: AtomicBool = AtomicBool::new(false);

/// Records that a conversion was invalid (see [`take_invalid_cast`]).
#[cold]
pub(crate) fn note_invalid_cast() {
    INVALID_CAST.store(true, Ordering::Relaxed);
}

/// Whether a float-to-int conversion was invalid since the last call
/// (process-wide; the Python package turns it into NumPy's
/// `RuntimeWarning: invalid value encountered in cast`).
pub fn take_invalid_cast() -> bool {
    INVALID_CAST.swap(false, Ordering::Relaxed)
}

/// Integer storage types a float converts to.
pub trait IntTarget: Copy {
    /// `MIN` as f64 (exact: a power of two); the range is `[lo, -lo)`.
    const LO: f64;
}
impl IntTarget for i32 {
    const LO: f64 = i32::MIN as f64;
}
impl IntTarget for i64 {
    const LO: f64 = i64::MIN as f64;
}

/// Whether `f` truncates to a value of `I`.
#[inline(always)]
pub fn float_fits<I: IntTarget>(f: f64) -> bool {
    f >= I::LO && f < -I::LO
}

/// Sets [`take_invalid_cast`] when an element of `x` is outside `[lo, hi)`
/// (NaN included).
#[inline(always)]
pub(crate) fn check_float_in<F: Num>(x: &[F], lo: f64, hi: f64) {
    if !x.iter().all(|v| (lo..hi).contains(&v.to_f64())) {
        note_invalid_cast();
    }
}

/// float -> int as NumPy does it here. On x86 that is the C cast, whose
/// result for NaN, infinities and out-of-range values is the "integer
/// indefinite" value `MIN` (what `cvttsd2si` returns); elsewhere the cast
/// saturates (NaN to 0), which Rust's `as` does everywhere.
macro_rules! float_to_int {
    ($($from:ty => $($to:ty),*);* $(;)?) => {$($(
        impl CastTo<$to> for $from {
            #[inline(always)]
            fn cast_to(self) -> $to {
                if cfg!(target_arch = "x86_64") && !float_fits::<$to>(self as f64) {
                    <$to>::MIN
                } else {
                    self as $to
                }
            }
        }
    )*)*};
}
float_to_int! {
    f32 => i32, i64;
    f64 => i32, i64;
}

macro_rules! cast_as {
    ($($from:ty => $($to:ty),*);* $(;)?) => {$($(
        impl CastTo<$to> for $from {
            #[inline(always)]
            fn cast_to(self) -> $to {
                self as $to
            }
        }
    )*)*};
}
cast_as! {
    i32 => i32, i64, u64, f32, f64;
    i64 => i32, i64, u64, f32, f64;
    u64 => i32, i64, u64, f32, f64;
    f32 => f32, f64;
    f64 => f32, f64;
    u8 => u8, i32, i64, u64, f32, f64;
}

/// float -> uint64 as NumPy does it on x86: values from 2^63 up convert
/// directly, the rest through int64 (so -1.0 is 2^64 - 1, and NaN and
/// values out of range give 2^63).
macro_rules! float_to_u64 {
    ($($from:ty),*) => {$(
        impl CastTo<u64> for $from {
            #[inline(always)]
            fn cast_to(self) -> u64 {
                if (9223372036854775808.0..18446744073709551616.0).contains(&(self as f64)) {
                    self as u64
                } else {
                    <$from as CastTo<i64>>::cast_to(self) as u64
                }
            }
        }
    )*};
}
float_to_u64!(f32, f64);
macro_rules! cast_bool {
    ($($from:ty),*) => {$(
        impl CastTo<u8> for $from {
            #[inline(always)]
            fn cast_to(self) -> u8 {
                (self != (0 as $from)) as u8
            }
        }
    )*};
}
cast_bool!(i32, i64, u64, f32, f64);
