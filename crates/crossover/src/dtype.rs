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
    I32,
    I64,
    F32,
    F64,
    C64,
    C128,
}

impl DType {
    /// All dtypes, in promotion order.
    pub const ALL: [DType; 7] = [
        DType::Bool,
        DType::I32,
        DType::I64,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// NumPy's name for the dtype (`"float32"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "int32",
            DType::I64 => "int64",
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
            "i32" | "int32" => DType::I32,
            "i64" | "int64" | "int" => DType::I64,
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
            DType::Bool => 1,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }
    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
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
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        match (lo, hi) {
            (Bool, x) => x,
            (I32, I64) => I64,
            (I32 | I64, F32 | F64) => F64,
            (I32 | I64, C64 | C128) => C128,
            (F32, F64) => F64,
            (F32, C64) => C64,
            (F64, C64) => C128,
            (_, C128) => C128,
            _ => hi,
        }
    }

    /// The dtype a float-only function (sin, sqrt, division...) computes in:
    /// floats and complex keep theirs, integers go to float64 and bool to
    /// float32 (NumPy would use float16, which crossover does not have).
    pub fn float_result(self) -> DType {
        match self {
            DType::Bool => DType::F32,
            DType::I32 | DType::I64 => DType::F64,
            other => other,
        }
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
            (Scalar::Float(_), DType::Bool | DType::I32 | DType::I64) => DType::F64,
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
    }
}
