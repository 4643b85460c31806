//! Element types and NumPy's promotion rules for them.

use num_complex::{Complex32, Complex64};
use std::fmt;

/// The element type of an array.
///
/// Promotion follows NumPy 2 ([`DType::promote`]); Python-style scalars are
/// "weak" and do not widen an array's dtype ([`Scalar::result_dtype`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    C64,
    C128,
}

impl DType {
    /// All dtypes, in promotion order.
    pub const ALL: [DType; 13] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// NumPy's name for the dtype (`"float32"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// Parses NumPy names and common short forms (`f32`, `float32`, ...).
    ///
    /// ```
    /// use crossover::DType;
    /// assert_eq!(DType::parse("f32"), Some(DType::F32));
    /// assert_eq!(DType::parse("float64"), Some(DType::F64));
    /// ```
    pub fn parse(s: &str) -> Option<DType> {
        Some(match s {
            "bool" | "b1" => DType::Bool,
            "i8" | "int8" => DType::I8,
            "i16" | "int16" => DType::I16,
            "i32" | "int32" => DType::I32,
            "i64" | "int64" | "int" => DType::I64,
            "u8" | "uint8" => DType::U8,
            "u16" | "uint16" => DType::U16,
            "u32" | "uint32" => DType::U32,
            "u64" | "uint64" => DType::U64,
            "f32" | "float32" => DType::F32,
            "f64" | "float64" | "float" => DType::F64,
            "c64" | "complex64" => DType::C64,
            "c128" | "complex128" | "complex" => DType::C128,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }
    /// Signed or unsigned integers of any width (not bool).
    pub fn is_int(self) -> bool {
        self.int_parts().is_some()
    }
    /// The unsigned integers (`uint8` ... `uint64`).
    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }
    /// The integers narrower than 32 bits and `uint32`, which crossover's
    /// CPU interpreter computes in wider registers and its GPU kernels do
    /// not support (`uint64` has registers of its own).
    pub fn is_small_int(self) -> bool {
        matches!(
            self,
            DType::I8 | DType::I16 | DType::U8 | DType::U16 | DType::U32
        )
    }
    /// Whether the dtype is one of the integers added for the Array API
    /// (int8, int16, uint8 ... uint64), which GPU kernels do not support.
    pub fn is_cpu_only_int(self) -> bool {
        self.is_small_int() || self == DType::U64
    }
    /// `(signed, bits)` of an integer dtype; `None` for bool and others.
    pub fn int_parts(self) -> Option<(bool, u32)> {
        Some(match self {
            DType::I8 => (true, 8),
            DType::I16 => (true, 16),
            DType::I32 => (true, 32),
            DType::I64 => (true, 64),
            DType::U8 => (false, 8),
            DType::U16 => (false, 16),
            DType::U32 => (false, 32),
            DType::U64 => (false, 64),
            _ => return None,
        })
    }
    /// The integer dtype of a sign and width (8, 16, 32 or 64 bits).
    pub fn int_of(signed: bool, bits: u32) -> Option<DType> {
        Some(match (signed, bits) {
            (true, 8) => DType::I8,
            (true, 16) => DType::I16,
            (true, 32) => DType::I32,
            (true, 64) => DType::I64,
            (false, 8) => DType::U8,
            (false, 16) => DType::U16,
            (false, 32) => DType::U32,
            (false, 64) => DType::U64,
            _ => return None,
        })
    }
    /// The smallest and largest value of an integer dtype (as i128, so
    /// uint64 fits); `None` for other dtypes.
    pub fn int_range(self) -> Option<(i128, i128)> {
        let (signed, bits) = self.int_parts()?;
        Some(if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        })
    }
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// The dtype of the result of `a op b` for two arrays, like
    /// `numpy.result_type`.
    ///
    /// ```
    /// use crossover::DType;
    /// assert_eq!(DType::promote(DType::F32, DType::F64), DType::F64);
    /// assert_eq!(DType::promote(DType::I32, DType::F32), DType::F64);
    /// assert_eq!(DType::promote(DType::Bool, DType::F32), DType::F32);
    /// ```
    pub fn promote(a: DType, b: DType) -> DType {
        use DType::*;
        if a == b {
            return a;
        }
        match (a, b) {
            (Bool, x) | (x, Bool) => return x,
            _ => {}
        }
        match (a.int_parts(), b.int_parts()) {
            (Some((sa, ba)), Some((sb, bb))) => {
                if sa == sb {
                    return DType::int_of(sa, ba.max(bb)).unwrap_or(I64);
                }
                let (sbits, ubits) = if sa { (ba, bb) } else { (bb, ba) };
                return if ubits < sbits {
                    DType::int_of(true, sbits).unwrap_or(I64)
                } else if ubits < 64 {
                    DType::int_of(true, 2 * ubits).unwrap_or(I64)
                } else {
                    // uint64 with any signed integer: NumPy goes to float64.
                    F64
                };
            }
            (Some((_, bits)), None) | (None, Some((_, bits))) => {
                // Integers up to 16 bits fit float32 (and complex64).
                let other = if a.is_int() { b } else { a };
                return match other {
                    F32 if bits <= 16 => F32,
                    C64 if bits <= 16 => C64,
                    F32 | F64 => F64,
                    _ => C128,
                };
            }
            (None, None) => {}
        }
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        match (lo, hi) {
            (F32, F64) => F64,
            (F32, C64) => C64,
            (F64, C64) => C128,
            (_, C128) => C128,
            _ => hi,
        }
    }

    /// The dtype a float-only function (sin, sqrt, arctan2...) computes in,
    /// as NumPy: floats and complex keep theirs, int16/uint16 go to float32,
    /// the wider integers to float64. bool, int8 and uint8 give float16 in
    /// NumPy, which crossover lacks: the recorder refuses them (see
    /// [`DType::needs_float16`]); here they map to float32.
    pub fn float_result(self) -> DType {
        match self {
            DType::Bool | DType::I8 | DType::U8 | DType::I16 | DType::U16 => DType::F32,
            d if d.is_int() => DType::F64,
            other => other,
        }
    }

    /// Whether NumPy computes float functions of this dtype in float16
    /// (bool, int8, uint8), a dtype crossover does not have.
    pub fn needs_float16(self) -> bool {
        matches!(self, DType::Bool | DType::I8 | DType::U8)
    }

    /// The real dtype underlying a complex one (`c64 -> f32`); identity else.
    pub fn real_part(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            other => other,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Python-like scalar operand. Scalars are weak: `f32_array * 2.5` stays
/// float32, `int_array * 2.5` becomes float64 (NumPy 2, NEP 50).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Scalar {
    /// The result dtype of combining this scalar with an array of `array`.
    pub fn result_dtype(self, array: DType) -> DType {
        match (self, array) {
            (Scalar::Bool(_), a) => a,
            (Scalar::Int(_), DType::Bool) => DType::I64,
            (Scalar::Int(_), a) => a,
            (Scalar::Float(_), a) if a.is_bool() || a.is_int() => DType::F64,
            (Scalar::Float(_), a) => a,
        }
    }

    /// The dtype the scalar has on its own (Python int is int64, etc.).
    pub fn natural_dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DType::F64,
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }

    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(i) => i,
            // Saturating, like a C cast with NaN -> 0 (Rust's `as`).
            Scalar::Float(f) => f as i64,
        }
    }

    pub fn as_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
        }
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Float(v)
    }
}
impl From<f32> for Scalar {
    fn from(v: f32) -> Self {
        Scalar::Float(v as f64)
    }
}
impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Scalar::Int(v)
    }
}
impl From<i32> for Scalar {
    fn from(v: i32) -> Self {
        Scalar::Int(v as i64)
    }
}
impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// A Rust type that can be an array element in host memory.
///
/// Every bit pattern of the storage type is a valid value (bool is stored as
/// `u8` 0/1), which lets buffers be recycled across dtypes soundly.
pub trait Element: Copy + Send + Sync + PartialEq + fmt::Debug + 'static {
    /// The dtype of arrays of this element.
    const DTYPE: DType;
    /// How the element is stored in a buffer (`u8` for bool, else itself).
    type Store: crate::buffer::Storage;
    fn to_store(self) -> Self::Store;
    fn from_store(s: Self::Store) -> Self;
    /// Converts to f64 for checks and reports (complex: the real part).
    fn to_f64(self) -> f64;
    /// Converts from f64 (complex: imaginary part zero; bool: `!= 0`).
    fn from_f64(v: f64) -> Self;
}

macro_rules! real_element {
    ($t:ty, $d:expr) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            type Store = $t;
            fn to_store(self) -> $t {
                self
            }
            fn from_store(s: $t) -> $t {
                s
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    };
}
real_element!(f32, DType::F32);
real_element!(f64, DType::F64);
real_element!(i32, DType::I32);
real_element!(i64, DType::I64);
real_element!(i8, DType::I8);
real_element!(i16, DType::I16);
real_element!(u8, DType::U8);
real_element!(u16, DType::U16);
real_element!(u32, DType::U32);
real_element!(u64, DType::U64);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    type Store = u8;
    fn to_store(self) -> u8 {
        self as u8
    }
    fn from_store(s: u8) -> bool {
        s != 0
    }
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
}

impl Element for Complex32 {
    const DTYPE: DType = DType::C64;
    type Store = Complex32;
    fn to_store(self) -> Complex32 {
        self
    }
    fn from_store(s: Complex32) -> Complex32 {
        s
    }
    fn to_f64(self) -> f64 {
        self.re as f64
    }
    fn from_f64(v: f64) -> Self {
        Complex32::new(v as f32, 0.0)
    }
}

impl Element for Complex64 {
    const DTYPE: DType = DType::C128;
    type Store = Complex64;
    fn to_store(self) -> Complex64 {
        self
    }
    fn from_store(s: Complex64) -> Complex64 {
        s
    }
    fn to_f64(self) -> f64 {
        self.re
    }
    fn from_f64(v: f64) -> Self {
        Complex64::new(v, 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_matches_numpy_table() {
        use DType::*;
        // (a, b, numpy.result_type(a, b))
        let table = [
            (Bool, Bool, Bool),
            (Bool, I32, I32),
            (Bool, F32, F32),
            (I32, I64, I64),
            (I32, F32, F64),
            (I64, F32, F64),
            (I64, F64, F64),
            (F32, F64, F64),
            (F32, C64, C64),
            (F64, C64, C128),
            (I32, C64, C128),
            (C64, C128, C128),
            (I8, U8, I16),
            (I16, U16, I32),
            (I32, U32, I64),
            (I64, U64, F64),
            (I8, U64, F64),
            (U8, I32, I32),
            (U16, I16, I32),
            (U8, I8, I16),
            (U8, U16, U16),
            (U32, U64, U64),
            (I8, I16, I16),
            (U32, I8, I64),
            (U16, I64, I64),
            (Bool, U8, U8),
            (I8, F32, F32),
            (U8, F32, F32),
            (I16, F32, F32),
            (U16, F32, F32),
            (U32, F32, F64),
            (U64, F32, F64),
            (I32, F32, F64),
            (U64, F64, F64),
            (I8, C64, C64),
            (U16, C64, C64),
            (U32, C64, C128),
            (U8, C128, C128),
        ];
        for (a, b, want) in table {
            assert_eq!(DType::promote(a, b), want, "{a} {b}");
            assert_eq!(DType::promote(b, a), want, "{b} {a}");
        }
    }

    #[test]
    fn weak_scalars_do_not_widen() {
        assert_eq!(Scalar::Float(2.5).result_dtype(DType::F32), DType::F32);
        assert_eq!(Scalar::Float(2.5).result_dtype(DType::I32), DType::F64);
        assert_eq!(Scalar::Int(2).result_dtype(DType::Bool), DType::I64);
        assert_eq!(Scalar::Int(2).result_dtype(DType::I32), DType::I32);
        assert_eq!(Scalar::Bool(true).result_dtype(DType::F64), DType::F64);
    }

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::parse(d.name()), Some(d));
        }
        assert_eq!(DType::parse("float16"), None);
        assert_eq!(DType::parse("u8"), Some(DType::U8));
        assert_eq!(DType::parse("i16"), Some(DType::I16));
        for d in DType::ALL.into_iter().filter(|d| d.is_int()) {
            let (signed, bits) = d.int_parts().unwrap();
            assert_eq!(DType::int_of(signed, bits), Some(d));
            assert_eq!(bits as usize, 8 * d.size());
        }
    }
}
