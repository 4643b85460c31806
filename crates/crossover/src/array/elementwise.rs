//! Elementwise op methods: dtype rules, broadcasting, and the nodes they make.

use super::Array;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::op::{BinaryOp, Op, UnaryOp};
use crate::shape::broadcast_shapes;

/// The right-hand side of a binary op: an array or a (weak) scalar.
#[derive(Clone, Debug)]
pub enum Operand {
    Array(Array),
    Scalar(Scalar),
}

impl From<&Array> for Operand {
    fn from(a: &Array) -> Self {
        Operand::Array(a.clone())
    }
}
impl From<Array> for Operand {
    fn from(a: Array) -> Self {
        Operand::Array(a)
    }
}
impl From<Scalar> for Operand {
    fn from(s: Scalar) -> Self {
        Operand::Scalar(s)
    }
}
macro_rules! scalar_operand {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand {
            fn from(v: $t) -> Self {
                Operand::Scalar(v.into())
            }
        }
    )*};
}
scalar_operand!(f64, f32, i64, i32, bool);

impl Operand {
    fn dtype(&self) -> DType {
        match self {
            Operand::Array(a) => a.dtype(),
            Operand::Scalar(s) => s.natural_dtype(),
        }
    }
}

/// The common dtype of operands, with scalars weak (NumPy 2 rules).
fn common_dtype(ops: &[&Operand]) -> DType {
    // Folded in place: this runs on every recorded op.
    let arrays = ops.iter().filter_map(|o| match o {
        Operand::Array(a) => Some(a.dtype()),
        Operand::Scalar(_) => None,
    });
    let Some(mut d) = arrays.reduce(DType::promote) else {
        // Only scalars: they are strong among themselves.
        return ops
            .iter()
            .map(|o| o.dtype())
            .reduce(DType::promote)
            .unwrap_or(DType::F64);
    };
    for o in ops {
        if let Operand::Scalar(s) = o {
            d = DType::promote(d, s.result_dtype(d));
        }
    }
    d
}

/// Whether `o` is a Python-style int that does not fit integer dtype `d`.
fn int_out_of_range(o: &Operand, d: DType) -> bool {
    match (o, d.int_range()) {
        (Operand::Scalar(Scalar::Int(v)), Some((lo, hi))) => !(lo..=hi).contains(&(*v as i128)),
        _ => false,
    }
}

/// The error for a float function of bool, int8 or uint8, which NumPy
/// computes in float16 (a dtype crossover lacks).
fn needs_float16(op: &'static str, d: DType) -> Error {
    Error::dtype(
        op,
        d,
        "NumPy computes it in float16, which crossover lacks; cast to float32 first",
    )
}

fn no_complex(op: &'static str, d: DType) -> Result<()> {
    if d.is_complex() {
        return Err(Error::dtype(op, d, "is not defined for complex numbers"));
    }
    Ok(())
}

impl Array {
    /// Converts to `dtype` (NumPy's `astype`); float to int truncates toward
    /// zero and saturates (NaN becomes 0).
    pub fn cast(&self, dtype: DType) -> Result<Array> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        if self.dtype().is_complex() && !dtype.is_complex() {
            return Err(Error::dtype(
                "cast",
                self.dtype(),
                format!("cannot cast complex to {dtype}; use real(), imag() or abs()"),
            ));
        }
        Array::new_node(Op::Cast, self.shape().to_vec(), dtype, vec![self.clone()])
    }

    /// A new array with the same values in fresh contiguous memory.
    pub fn copy(&self) -> Result<Array> {
        Array::new_node(
            Op::Cast,
            self.shape().to_vec(),
            self.dtype(),
            vec![self.clone()],
        )
    }

    /// Materialises an operand as an array of `dtype` broadcast to `shape`.
    fn operand_as(op: &'static str, o: &Operand, dtype: DType, shape: &[usize]) -> Result<Array> {
        match o {
            Operand::Scalar(s) => Array::constant(shape, *s, dtype),
            Operand::Array(a) => a.cast(dtype)?.broadcast_to_for(op, shape),
        }
    }

    fn shape_of(o: &Operand) -> &[usize] {
        match o {
            Operand::Array(a) => a.shape(),
            Operand::Scalar(_) => &[],
        }
    }

    /// Records `lhs op rhs` with NumPy's dtype and broadcasting rules.
    pub fn binary(op: BinaryOp, lhs: impl Into<Operand>, rhs: impl Into<Operand>) -> Result<Array> {
        let (lhs, rhs) = (lhs.into(), rhs.into());
        let name = op.name();
        let common = common_dtype(&[&lhs, &rhs]);
        if common.is_complex()
            && !matches!(
                op,
                BinaryOp::Add
                    | BinaryOp::Sub
                    | BinaryOp::Mul
                    | BinaryOp::Div
                    | BinaryOp::Pow
                    | BinaryOp::Eq
                    | BinaryOp::Ne
            )
        {
            no_complex(name, common)?;
        }
        // The dtype the op computes in, the op actually run, the result dtype
        // (dtype errors come first, as in NumPy).
        let (compute, op, result) = match op {
            o if o.is_float_function() && common.needs_float16() => {
                return Err(needs_float16(name, common))
            }
            BinaryOp::Atan2 | BinaryOp::Hypot => {
                let c = common.float_result();
                (c, op, c)
            }
            BinaryOp::Div => {
                // NumPy divides integers of every width in float64.
                let c = if common.is_float() || common.is_complex() {
                    common
                } else {
                    DType::F64
                };
                (c, op, c)
            }
            // NumPy raises bools to bool powers in int8.
            BinaryOp::Pow if common.is_bool() => (DType::I8, op, DType::I8),
            BinaryOp::Add if common.is_bool() => (DType::Bool, BinaryOp::Or, DType::Bool),
            BinaryOp::Mul if common.is_bool() => (DType::Bool, BinaryOp::And, DType::Bool),
            BinaryOp::Sub if common.is_bool() => {
                return Err(Error::dtype(
                    name,
                    common,
                    "boolean subtract is not supported; use logical_xor (ne) instead",
                ))
            }
            BinaryOp::And | BinaryOp::Or => (DType::Bool, op, DType::Bool),
            o if o.is_comparison() => (common, op, DType::Bool),
            _ => (common, op, common),
        };
        let shape = broadcast_shapes(name, Self::shape_of(&lhs), Self::shape_of(&rhs))?;
        // NEP 50: a Python int must fit the integer dtype it computes in;
        // comparisons are exact in int64 instead (as NumPy 2 answers them).
        let out_of_range = [&lhs, &rhs].into_iter().find_map(|o| match o {
            Operand::Scalar(Scalar::Int(v)) if int_out_of_range(o, compute) => Some(*v),
            _ => None,
        });
        if let (Some(v), DType::U64) = (out_of_range, compute) {
            if op.is_comparison() {
                // A negative int against uint64 (which int64 cannot hold):
                // every element is greater, as NumPy 2 answers exactly.
                let array_left = matches!(lhs, Operand::Array(_));
                let greater = array_left == (v < 0);
                let value = match op {
                    BinaryOp::Eq => false,
                    BinaryOp::Ne => true,
                    BinaryOp::Gt | BinaryOp::Ge => greater,
                    _ => !greater,
                };
                return Array::constant(&shape, Scalar::Bool(value), DType::Bool);
            }
        }
        let compute = match out_of_range {
            Some(_) if op.is_comparison() => DType::I64,
            Some(v) => {
                return Err(Error::Overflow {
                    op: name,
                    msg: format!("Python integer {v} out of bounds for {compute}"),
                })
            }
            None => compute,
        };
        if op == BinaryOp::Pow && compute.is_int() {
            if let Operand::Scalar(Scalar::Int(e)) = rhs {
                // NumPy checks each element: an empty array has none.
                if e < 0 && crate::shape::numel(&shape) > 0 {
                    return Err(crate::cpu::interp::negative_int_power());
                }
            }
        }
        if let (BinaryOp::Pow, Operand::Array(x), Operand::Scalar(e)) = (op, &lhs, &rhs) {
            if let Some(r) = Self::pow_by_constant(x, *e, compute, &shape)? {
                return Ok(r);
            }
        }
        let a = Self::operand_as(name, &lhs, compute, &shape)?;
        let b = Self::operand_as(name, &rhs, compute, &shape)?;
        Array::new_node(Op::Binary(op), shape, result, vec![a, b])
    }

    /// `x ** e` for the constant exponents NumPy users write most, without a
    /// general `pow` (~20 ns per element, not vectorised): 0, 1, 2, -1 and
    /// 0.5 give NumPy's bits exactly (NumPy 2 also computes `x**0.5` as
    /// `sqrt`: -0 stays -0, -inf is NaN); 3, 4 and -2 multiply, within 2 ulp
    /// of `pow` (NumPy calls `pow` there). Integer arrays take 0-4, wrapping
    /// on overflow like NumPy's integer power. `None`: any other exponent,
    /// which runs as `pow`.
    fn pow_by_constant(
        x: &Array,
        e: Scalar,
        compute: DType,
        shape: &[usize],
    ) -> Result<Option<Array>> {
        let e = match e {
            Scalar::Int(v) if (-2..=4).contains(&v) => v as f64,
            Scalar::Float(v) if compute.is_float() => v,
            _ => return Ok(None),
        };
        if !(compute.is_float() || compute.is_int()) || x.shape() != shape {
            return Ok(None);
        }
        let x = x.cast(compute)?;
        let float = compute.is_float();
        let r = match e {
            0.0 => Array::constant(shape, Scalar::Int(1), compute)?,
            1.0 => x,
            2.0 => x.unary(UnaryOp::Square)?,
            3.0 => x.unary(UnaryOp::Square)?.mul(&x)?,
            4.0 => x.unary(UnaryOp::Square)?.unary(UnaryOp::Square)?,
            -1.0 if float => Array::binary(BinaryOp::Div, 1.0, &x)?,
            -2.0 if float => Array::binary(BinaryOp::Div, 1.0, x.unary(UnaryOp::Square)?)?,
            0.5 if float => x.unary(UnaryOp::Sqrt)?,
            _ => return Ok(None),
        };
        Ok(Some(r))
    }

    /// Records a function of one argument.
    pub fn unary(&self, op: UnaryOp) -> Result<Array> {
        let name = op.name();
        let d = self.dtype();
        if d.is_complex() {
            return self.unary_complex(op);
        }
        let (input, op) = match op {
            UnaryOp::Conj | UnaryOp::Real => return Ok(self.clone()),
            UnaryOp::Imag => return Array::constant(self.shape(), Scalar::Int(0), d),
            UnaryOp::Neg if d.is_bool() => {
                return Err(Error::dtype(
                    name,
                    d,
                    "boolean negative is not supported; use logical_not",
                ))
            }
            UnaryOp::Not => (self.cast(DType::Bool)?, op),
            UnaryOp::Sign if d.is_bool() => {
                return Err(Error::dtype(name, d, "NumPy has no boolean sign"))
            }
            // Integer abs is computed; bool abs, integer floor/ceil are the
            // values themselves (NumPy keeps the dtype).
            UnaryOp::Abs if d.is_bool() => return Ok(self.clone()),
            UnaryOp::Floor | UnaryOp::Ceil if !d.is_float() => return Ok(self.clone()),
            // NumPy squares bools in int8; its float16 (transcendentals of
            // bool, int8 and uint8) crossover lacks: refuse rather than differ.
            UnaryOp::Square if d.is_bool() => (self.cast(DType::I8)?, op),
            u if u.is_transcendental() && d.needs_float16() => return Err(needs_float16(name, d)),
            u if u.is_transcendental() => (self.cast(d.float_result())?, op),
            _ => (self.clone(), op),
        };
        let dtype = input.dtype();
        Array::new_node(Op::Unary(op), self.shape().to_vec(), dtype, vec![input])
    }

    /// Functions of a complex argument (see [`crate::cpu`]'s complex
    /// kernels): `abs`, `real` and `imag` give the real dtype.
    fn unary_complex(&self, op: UnaryOp) -> Result<Array> {
        let d = self.dtype();
        let dtype = match op {
            UnaryOp::Abs | UnaryOp::Real | UnaryOp::Imag => d.real_part(),
            // NumPy 2's complex sign (z / |z|) is left to NumPy.
            UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Not | UnaryOp::Sign => {
                return no_complex(op.name(), d).map(|_| self.clone())
            }
            _ => d,
        };
        Array::new_node(
            Op::Unary(op),
            self.shape().to_vec(),
            dtype,
            vec![self.clone()],
        )
    }

    /// `where(cond, x, y)`: elements of `x` where `cond` is true, else `y`.
    pub fn where_(cond: &Array, x: impl Into<Operand>, y: impl Into<Operand>) -> Result<Array> {
        let (x, y) = (x.into(), y.into());
        let dtype = common_dtype(&[&x, &y]);
        let shape = broadcast_shapes("where", cond.shape(), Self::shape_of(&x))?;
        let shape = broadcast_shapes("where", &shape, Self::shape_of(&y))?;
        let c = cond.cast(DType::Bool)?.broadcast_to_for("where", &shape)?;
        let a = Self::operand_as("where", &x, dtype, &shape)?;
        let b = Self::operand_as("where", &y, dtype, &shape)?;
        Array::new_node(Op::Where, shape, dtype, vec![c, a, b])
    }
}

macro_rules! binary_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {
        impl Array {
            $(
                $(#[$doc])*
                pub fn $name(&self, rhs: impl Into<Operand>) -> Result<Array> {
                    Array::binary(BinaryOp::$op, self, rhs)
                }
            )*
        }
    };
}

binary_methods! {
    /// `self + rhs` (bool: logical or, like NumPy).
    add => Add,
    /// `self - rhs`.
    sub => Sub,
    /// `self * rhs` (bool: logical and).
    mul => Mul,
    /// True division; integers divide as float64.
    div => Div,
    /// `self ** rhs`.
    pow => Pow,
    /// Elementwise minimum; NaN propagates.
    minimum => Minimum,
    /// Elementwise maximum; NaN propagates.
    maximum => Maximum,
    lt => Lt,
    le => Le,
    gt => Gt,
    ge => Ge,
    #[doc = "Elementwise `==` (named to avoid clashing with `PartialEq`)."]
    eq_ => Eq,
    ne => Ne,
    logical_and => And,
    logical_or => Or,
}

macro_rules! unary_methods {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl Array {
            $(
                #[doc = concat!("Elementwise `", stringify!($name), "`.")]
                pub fn $name(&self) -> Result<Array> {
                    self.unary(UnaryOp::$op)
                }
            )*
        }
    };
}

unary_methods! {
    neg => Neg, abs => Abs, sqrt => Sqrt, exp => Exp, log => Log, sin => Sin,
    cos => Cos, tan => Tan, tanh => Tanh, square => Square, floor => Floor,
    ceil => Ceil, logical_not => Not, log1p => Log1p, expm1 => Expm1,
    log10 => Log10, log2 => Log2, exp2 => Exp2, arcsin => Arcsin, arccos => Arccos,
    arctan => Arctan, sinh => Sinh, cosh => Cosh, arcsinh => Arcsinh,
    arccosh => Arccosh, arctanh => Arctanh, sign => Sign,
}

impl Array {
    /// The complex conjugate (the array itself for real dtypes).
    pub fn conj(&self) -> Result<Array> {
        self.unary(UnaryOp::Conj)
    }

    /// The real part: complex64 -> float32, complex128 -> float64; the
    /// array itself for real dtypes.
    pub fn real(&self) -> Result<Array> {
        self.unary(UnaryOp::Real)
    }

    /// The imaginary part (zeros of the same dtype for real arrays).
    pub fn imag(&self) -> Result<Array> {
        self.unary(UnaryOp::Imag)
    }
}

#[cfg(test)]
mod tests {
    use crate::Array;

    #[test]
    fn integer_abs_is_computed_and_bool_abs_is_identity() {
        let a = Array::from_vec(vec![-3i64, 0, 5, i64::MIN + 1], &[4]).unwrap();
        assert_eq!(
            a.abs().unwrap().to_vec::<i64>().unwrap(),
            vec![3, 0, 5, i64::MAX]
        );
        let b = Array::from_vec(vec![-7i32, 7], &[2]).unwrap();
        assert_eq!(b.abs().unwrap().to_vec::<i32>().unwrap(), vec![7, 7]);
        let t = Array::from_vec(vec![true, false], &[2]).unwrap();
        assert_eq!(
            t.abs().unwrap().to_vec::<bool>().unwrap(),
            vec![true, false]
        );
    }
}
