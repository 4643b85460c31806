//! The engine calls behind `ndarray`'s operators and reduction methods.

use crate::args;
use crate::array::{wrap, PyArr};
use crate::compute::with_value_of;
use crate::convert::{self, Intake};
use crate::tape::{op, Call};
use crossover::{BinaryOp, Operand, ReduceOp, UnaryOp};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// How a binary operator computes.
#[derive(Clone, Copy)]
pub(crate) enum Arith {
    /// The engine's op.
    Engine(BinaryOp),
    /// NumPy's function of this name (the engine has no such op).
    NumPy(&'static str),
    /// `&`, `|`: the engine's logical op for two booleans, else NumPy's
    /// bitwise function (the engine has no bitwise integer ops).
    Logical(BinaryOp, &'static str),
}

/// NumPy's name of a binary op (the function a complex scalar operand is
/// routed to).
fn numpy_name(b: BinaryOp) -> &'static str {
    match b {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "subtract",
        BinaryOp::Mul => "multiply",
        BinaryOp::Div => "divide",
        BinaryOp::Pow => "power",
        BinaryOp::Lt => "less",
        BinaryOp::Le => "less_equal",
        BinaryOp::Gt => "greater",
        BinaryOp::Ge => "greater_equal",
        BinaryOp::Eq => "equal",
        BinaryOp::Ne => "not_equal",
        other => other.name(),
    }
}

impl PyArr {
    pub(crate) fn unary(&self, py: Python<'_>, u: UnaryOp) -> PyResult<Py<PyAny>> {
        wrap(py, op(py, Call::Unary(u), &[self.operand()])?)
    }

    pub(crate) fn operand(&self) -> Operand {
        Operand::Array(self.inner())
    }

    pub(crate) fn binary(
        &self,
        other: &Bound<'_, PyAny>,
        b: BinaryOp,
        reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        let py = other.py();
        if args::defers(other)? {
            return Ok(py.NotImplemented());
        }
        if other.is_instance_of::<pyo3::types::PyComplex>() {
            // The engine's scalars are real; `crossover.<function>` takes a
            // complex scalar (NEP 50: float32 + 1j is complex64).
            let f = py.import("crossover")?.getattr(numpy_name(b))?;
            let me = Py::new(py, PyArr::new(self.inner()))?;
            let r = if reflected {
                f.call1((other, me))?
            } else {
                f.call1((me, other))?
            };
            return Ok(r.unbind());
        }
        let Some(o) = args::operand(other, Intake::Volatile)? else {
            return Ok(py.NotImplemented());
        };
        let ops = if reflected {
            [o, self.operand()]
        } else {
            [self.operand(), o]
        };
        let (x, y) = if reflected {
            (Some(other), None)
        } else {
            (None, Some(other))
        };
        if let Some(r) = args::huge_int_binary(py, b, x, y, &ops)? {
            return wrap(py, r);
        }
        match op(py, Call::Binary(b), &ops) {
            Ok(r) => wrap(py, r),
            // A power the engine refuses for its dtypes (none today):
            // NumPy's turn, through its ufunc (which falls back, warning).
            Err(e)
                if b == BinaryOp::Pow
                    && e.is_instance(py, crate::errors::classes(py)?.dtype.bind(py)) =>
            {
                let name = "power";
                let me = Py::new(py, PyArr::new(self.inner()))?;
                let f = py.import("numpy")?.getattr(name)?;
                let r = if reflected {
                    f.call1((other, me))?
                } else {
                    f.call1((me, other))?
                };
                Ok(r.unbind())
            }
            Err(e) => Err(e),
        }
    }

    /// A binary operator (`__op__`, or with `reflected` `__rop__`: the array
    /// on the right).
    pub(crate) fn arith(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        how: Arith,
        reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        let numpy_name = match how {
            Arith::Engine(b) => return slf.get().binary(other, b, reflected),
            Arith::NumPy(name) => name,
            Arith::Logical(b, name) => {
                let other_bool = match args::operand(other, Intake::Volatile)? {
                    Some(Operand::Array(a)) => a.dtype().is_bool(),
                    Some(Operand::Scalar(crossover::Scalar::Bool(_))) => true,
                    _ => false,
                };
                if slf.get().inner().dtype().is_bool() && other_bool {
                    return slf.get().binary(other, b, reflected);
                }
                name
            }
        };
        let f = slf.py().import("numpy")?.getattr(numpy_name)?;
        let r = if reflected {
            f.call1((other, slf))?
        } else {
            f.call1((slf, other))?
        };
        Ok(r.unbind())
    }

    pub(crate) fn reduce(
        &self,
        py: Python<'_>,
        r: ReduceOp,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if out.is_some_and(|o| !o.is_none()) {
            return Err(PyTypeError::new_err(
                "crossover arrays are immutable: out= is not supported",
            ));
        }
        let mut x = self.inner();
        if let Some(d) = dtype.filter(|d| !d.is_none()) {
            x = op(
                py,
                Call::Cast(convert::parse_dtype(d)?),
                &[Operand::Array(x)],
            )?;
        }
        let mut axes = args::axes(axis)?;
        // NumPy's ufunc reductions (sum, min, max) take an int axis 0 or -1
        // on a 0-d array as if it had one element (a tuple is an error).
        if x.ndim() == 0
            && matches!(r, ReduceOp::Sum | ReduceOp::Min | ReduceOp::Max)
            && axis.is_some_and(|a| a.is_instance_of::<pyo3::types::PyInt>())
            && matches!(axes.as_deref(), Some([0 | -1]))
        {
            axes = None;
        }
        let call = Call::Reduce {
            op: r,
            axes,
            keepdims,
        };
        wrap(py, op(py, call, &[Operand::Array(x)])?)
    }

    pub(crate) fn ddof(ddof: i64) -> PyResult<u32> {
        u32::try_from(ddof).map_err(|_| PyValueError::new_err("ddof must be >= 0"))
    }

    pub(crate) fn readonly<'py>(&self, py: Python<'py>, what: &str) -> PyResult<Bound<'py, PyAny>> {
        let parts = with_value_of(py, &self.inner(), what, convert::ViewParts::of)??;
        convert::readonly_view_of(py, parts)
    }
}
