//! The operations a node of the lazy graph can hold, with their names and
//! cost estimates (flops per element) used by the fuser, explain and the
//! cost model.

use crate::array::Value;
use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::rng::{Distribution, RandomKey};
use crate::shape::ViewOp;
use std::sync::{Arc, OnceLock};

/// Elementwise functions of one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Abs,
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Tan,
    Tanh,
    Square,
    Floor,
    Ceil,
    /// Logical not (bool only).
    Not,
    /// Complex conjugate (identity on reals).
    Conj,
    /// Real part (complex to real; identity on reals).
    Real,
    /// Imaginary part (complex to real; zero for reals).
    Imag,
    Log1p,
    Expm1,
    Log10,
    Log2,
    Exp2,
    Arcsin,
    Arccos,
    Arctan,
    Sinh,
    Cosh,
    Arcsinh,
    Arccosh,
    Arctanh,
    /// -1, 0 or 1 by the sign (NaN stays NaN; -0.0 gives 0.0, as NumPy).
    Sign,
}

impl UnaryOp {
    pub const ALL: [UnaryOp; 30] = [
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::Sqrt,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Tanh,
        UnaryOp::Square,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Not,
        UnaryOp::Conj,
        UnaryOp::Real,
        UnaryOp::Imag,
        UnaryOp::Log1p,
        UnaryOp::Expm1,
        UnaryOp::Log10,
        UnaryOp::Log2,
        UnaryOp::Exp2,
        UnaryOp::Arcsin,
        UnaryOp::Arccos,
        UnaryOp::Arctan,
        UnaryOp::Sinh,
        UnaryOp::Cosh,
        UnaryOp::Arcsinh,
        UnaryOp::Arccosh,
        UnaryOp::Arctanh,
        UnaryOp::Sign,
    ];

    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tan => "tan",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Square => "square",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Not => "logical_not",
            UnaryOp::Conj => "conj",
            UnaryOp::Real => "real",
            UnaryOp::Imag => "imag",
            UnaryOp::Log1p => "log1p",
            UnaryOp::Expm1 => "expm1",
            UnaryOp::Log10 => "log10",
            UnaryOp::Log2 => "log2",
            UnaryOp::Exp2 => "exp2",
            UnaryOp::Arcsin => "arcsin",
            UnaryOp::Arccos => "arccos",
            UnaryOp::Arctan => "arctan",
            UnaryOp::Sinh => "sinh",
            UnaryOp::Cosh => "cosh",
            UnaryOp::Arcsinh => "arcsinh",
            UnaryOp::Arccosh => "arccosh",
            UnaryOp::Arctanh => "arctanh",
            UnaryOp::Sign => "sign",
        }
    }

    /// Functions that only make sense on floats (integers are promoted).
    pub fn is_transcendental(self) -> bool {
        matches!(
            self,
            UnaryOp::Sqrt
                | UnaryOp::Exp
                | UnaryOp::Log
                | UnaryOp::Sin
                | UnaryOp::Cos
                | UnaryOp::Tan
                | UnaryOp::Tanh
                | UnaryOp::Log1p
                | UnaryOp::Expm1
                | UnaryOp::Log10
                | UnaryOp::Log2
                | UnaryOp::Exp2
                | UnaryOp::Arcsin
                | UnaryOp::Arccos
                | UnaryOp::Arctan
                | UnaryOp::Sinh
                | UnaryOp::Cosh
                | UnaryOp::Arcsinh
                | UnaryOp::Arccosh
                | UnaryOp::Arctanh
        )
    }

    /// The C math function of a float function (OpenCL and CUDA share the
    /// names; `None` for ops that are not a single math call).
    pub fn c_math_name(self) -> Option<&'static str> {
        Some(match self {
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tan => "tan",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Log1p => "log1p",
            UnaryOp::Expm1 => "expm1",
            UnaryOp::Log10 => "log10",
            UnaryOp::Log2 => "log2",
            UnaryOp::Exp2 => "exp2",
            UnaryOp::Arcsin => "asin",
            UnaryOp::Arccos => "acos",
            UnaryOp::Arctan => "atan",
            UnaryOp::Sinh => "sinh",
            UnaryOp::Cosh => "cosh",
            UnaryOp::Arcsinh => "asinh",
            UnaryOp::Arccosh => "acosh",
            UnaryOp::Arctanh => "atanh",
            _ => return None,
        })
    }

    /// Approximate flops per element (a transcendental counts as its
    /// polynomial's length), for the cost model.
    pub fn flops(self) -> f64 {
        match self {
            UnaryOp::Exp | UnaryOp::Log | UnaryOp::Tanh => 20.0,
            // One kernel for the three bases (cpu/math_log.rs).
            UnaryOp::Log2 | UnaryOp::Log10 => 20.0,
            UnaryOp::Sin | UnaryOp::Cos => 20.0,
            UnaryOp::Tan => 30.0,
            UnaryOp::Sqrt => 4.0,
            // The newer float functions (log1p, arcsin...): libm calls.
            u if u.is_transcendental() => 25.0,
            _ => 1.0,
        }
    }
}

/// Elementwise functions of two arguments (after broadcasting).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Minimum,
    Maximum,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    /// `arctan2(y, x)`: the angle of the point (x, y) (floats only).
    Atan2,
    /// `hypot(x, y)`: sqrt(x^2 + y^2) without overflow (floats only).
    Hypot,
}

impl BinaryOp {
    pub const ALL: [BinaryOp; 17] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Pow,
        BinaryOp::Minimum,
        BinaryOp::Maximum,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Atan2,
        BinaryOp::Hypot,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Pow => "pow",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::And => "logical_and",
            BinaryOp::Or => "logical_or",
            BinaryOp::Atan2 => "arctan2",
            BinaryOp::Hypot => "hypot",
        }
    }

    /// Comparisons produce bool.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
        )
    }

    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }

    /// Functions defined on real floats only (integers are promoted to
    /// float64 like `divide`; complex is refused, as NumPy does).
    pub fn is_float_function(self) -> bool {
        matches!(self, BinaryOp::Atan2 | BinaryOp::Hypot)
    }

    pub fn flops(self) -> f64 {
        match self {
            BinaryOp::Pow => 40.0,
            BinaryOp::Atan2 => 30.0,
            BinaryOp::Hypot => 8.0,
            BinaryOp::Div => 4.0,
            _ => 1.0,
        }
    }
}

/// Reductions over one or more axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Mean,
    /// Variance with `ddof` delta degrees of freedom (NumPy's meaning).
    Var {
        ddof: u32,
    },
    Std {
        ddof: u32,
    },
    Min,
    Max,
    ArgMin,
    ArgMax,
    /// Product (integers wrap in int64, floats multiply in float64 and
    /// round once).
    Prod,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Mean => "mean",
            ReduceOp::Var { .. } => "var",
            ReduceOp::Std { .. } => "std",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::ArgMin => "argmin",
            ReduceOp::ArgMax => "argmax",
            ReduceOp::Prod => "prod",
        }
    }

    /// Needs at least one element (no identity value).
    pub fn needs_elements(self) -> bool {
        matches!(
            self,
            ReduceOp::Min | ReduceOp::Max | ReduceOp::ArgMin | ReduceOp::ArgMax
        )
    }

    /// Result dtype for an input dtype (NumPy's, except that sums of f32
    /// accumulate in f64 internally and round once at the end).
    pub fn result_dtype(self, input: DType) -> DType {
        match self {
            ReduceOp::Sum | ReduceOp::Prod => match input {
                d if d.is_unsigned() => DType::U64,
                d if d.is_bool() || d.is_int() => DType::I64,
                d => d,
            },
            ReduceOp::Mean | ReduceOp::Var { .. } | ReduceOp::Std { .. } => match input {
                d if d.is_bool() || d.is_int() => DType::F64,
                d => d,
            },
            ReduceOp::Min | ReduceOp::Max => input,
            ReduceOp::ArgMin | ReduceOp::ArgMax => DType::I64,
        }
    }

    pub fn flops(self) -> f64 {
        match self {
            ReduceOp::Var { .. } | ReduceOp::Std { .. } => 4.0,
            _ => 1.0,
        }
    }
}

/// How a node's value is produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Data that came from outside (always ready).
    Input,
    /// Every element equal to a constant (zeros, ones, full, scalars).
    Full(Scalar),
    /// `start + i * step` over the flat index (arange, linspace); when `last`
    /// is set, the final element is exactly that value (linspace's endpoint).
    Arange {
        start: f64,
        step: f64,
        last: Option<f64>,
    },
    /// Random values at each flat index.
    Random {
        dist: Distribution,
        key: RandomKey,
    },
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// `where(cond, x, y)`.
    Where,
    /// Conversion to the node's dtype.
    Cast,
    /// A view of `inputs[0]` (never a view itself), made by these ops applied
    /// to its contiguous layout.
    View(Vec<ViewOp>),
    /// Reduction of `inputs[0]` over sorted `axes`.
    Reduce {
        op: ReduceOp,
        axes: Vec<usize>,
        keepdims: bool,
    },
    /// Output `output` of a library call (matmul, solve, FFT...). Every
    /// output of one call is its own node sharing the same `call`; the fuser
    /// runs the call once for all of them.
    Library {
        call: Arc<LibraryCall>,
        output: usize,
    },
}

/// A library operation: its own kernel, never fused into an elementwise
/// chain (its inputs are materialised first; its outputs feed fusion).
///
/// A closed set of descriptions: every backend implements or declines each
/// variant by name in its `check`, so a new op is a compile error in every
/// backend until it says what it does with it. Descriptions validate shapes
/// and dtypes when the call is recorded (in the `Array` method that makes
/// it) and describe their outputs then.
#[derive(Debug)]
pub enum Library {
    /// `a @ b`, 2-D or batched.
    MatMul(crate::linalg::MatMul),
    /// Factorisations and solvers (solve, cholesky, qr, inv, det, svd, eigh).
    Dense(crate::linalg::Dense),
    /// Fourier transforms.
    Fft(crate::fft::FftOp),
    /// A CSR matrix times a dense vector or matrix.
    SparseDense(crate::sparse::SpMM),
    /// A CSR matrix times a CSR matrix (its output is the product's row
    /// pointers; the whole product is handed back through the description).
    SparseSparse(crate::sparse::SpGemm),
    /// Cumulative sums and products along an axis.
    Scan(crate::array::scan::Scan),
}

/// Runs `$body` with `$x` bound to the description inside `$lib`.
macro_rules! each_library {
    ($lib:expr, $x:ident => $body:expr) => {
        match $lib {
            Library::MatMul($x) => $body,
            Library::Dense($x) => $body,
            Library::Fft($x) => $body,
            Library::SparseDense($x) => $body,
            Library::SparseSparse($x) => $body,
            Library::Scan($x) => $body,
        }
    };
}

impl Library {
    /// Short name for explain and errors (`"matmul"`, `"svd"`...).
    pub fn name(&self) -> &'static str {
        each_library!(self, x => x.name())
    }
    /// Canonical key (name plus the shapes/dtypes that change its cost),
    /// for timing history and compiled-plan caches.
    pub fn key(&self) -> String {
        each_library!(self, x => x.key())
    }
    /// Floating-point operations (for the cost model).
    pub fn flops(&self) -> f64 {
        each_library!(self, x => x.flops())
    }
    /// Bytes read and written (for the cost model).
    pub fn bytes(&self) -> f64 {
        each_library!(self, x => x.bytes())
    }
    /// Runs on the CPU. `inputs` are the values of the call's input arrays
    /// (any layout, valid on the host); returns one value per output, each
    /// row-major contiguous with the output's shape and dtype.
    pub fn run_cpu(&self, inputs: &[Value]) -> Result<Vec<Value>> {
        each_library!(self, x => x.run_cpu(inputs))
    }
}

/// One recorded library call: the op, its outputs' shapes and dtypes, and
/// (once run) its results, so asking for a second output later does not
/// recompute the call.
#[derive(Debug)]
pub struct LibraryCall {
    pub op: Library,
    pub outputs: Vec<(Vec<usize>, DType)>,
    pub(crate) results: OnceLock<Vec<Value>>,
}

impl LibraryCall {
    pub fn new(op: Library, outputs: Vec<(Vec<usize>, DType)>) -> Arc<LibraryCall> {
        Arc::new(LibraryCall {
            op,
            outputs,
            results: OnceLock::new(),
        })
    }

    /// The results, if the call already ran.
    pub fn results(&self) -> Option<&[Value]> {
        self.results.get().map(|v| v.as_slice())
    }
}

impl PartialEq for LibraryCall {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Op {
    /// Short name for errors, explain and kernel listings.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Input => "input",
            Op::Full(_) => "full",
            Op::Arange { .. } => "arange",
            Op::Random { dist, .. } => dist.name(),
            Op::Unary(u) => u.name(),
            Op::Binary(b) => b.name(),
            Op::Where => "where",
            Op::Cast => "cast",
            Op::View(_) => "view",
            Op::Reduce { op, .. } => op.name(),
            Op::Library { call, .. } => call.op.name(),
        }
    }

    /// Elementwise ops (and sources) that can live inside a fused kernel.
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            Op::Full(_)
                | Op::Arange { .. }
                | Op::Random { .. }
                | Op::Unary(_)
                | Op::Binary(_)
                | Op::Where
                | Op::Cast
        )
    }

    /// Flops per output element, for the cost model.
    pub fn flops(&self) -> f64 {
        match self {
            Op::Unary(u) => u.flops(),
            Op::Binary(b) => b.flops(),
            Op::Where | Op::Cast | Op::Arange { .. } => 1.0,
            // Ten Philox rounds per four words, about 10 ops each.
            Op::Random { dist, .. } => match dist {
                Distribution::Uniform => 30.0,
                Distribution::Normal => 70.0,
            },
            Op::Reduce { op, .. } => op.flops(),
            Op::Input | Op::Full(_) | Op::View(_) | Op::Library { .. } => 0.0,
        }
    }
}
