//! Reductions: sum, mean, var, std, min, max, argmin, argmax over all
//! elements, one axis or several (keepdims like NumPy).

use super::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::op::{Op, ReduceOp};
use crate::shape::{normalize_axes, normalize_axis};

impl Array {
    /// Records a reduction over `axes` (`None`: all axes).
    pub fn reduce(&self, op: ReduceOp, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
        let name = op.name();
        let d = self.dtype();
        if d.is_complex() {
            return Err(Error::dtype(
                name,
                d,
                "complex reductions are not supported yet",
            ));
        }
        let axes: Vec<usize> = match axes {
            None => (0..self.ndim()).collect(),
            Some(a) => normalize_axes(name, a, self.ndim())?,
        };
        if matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax)
            && axes.len() > 1
            && axes.len() != self.ndim()
        {
            return Err(Error::invalid(name, "takes one axis or all of them"));
        }
        let reduced: usize = axes.iter().map(|&a| self.shape()[a]).product();
        if reduced == 0 && op.needs_elements() {
            return Err(Error::shape(
                name,
                self.shape(),
                format!("zero-size array to reduction operation {name} which has no identity"),
            ));
        }
        // Integers sum in int64 (unsigned ones in uint64, as NumPy); means and moments of integers in float64.
        let input = match op {
            ReduceOp::Sum | ReduceOp::Prod if d.is_unsigned() => self.cast(DType::U64)?,
            ReduceOp::Sum | ReduceOp::Prod if !d.is_float() => self.cast(DType::I64)?,
            ReduceOp::Mean | ReduceOp::Var { .. } | ReduceOp::Std { .. } if !d.is_float() => {
                self.cast(DType::F64)?
            }
            _ => self.clone(),
        };
        let result = op.result_dtype(d);
        if axes.is_empty() {
            // `axis=()`: nothing is reduced (NumPy returns the values). For
            // var/std each element is its own mean, so the result is 0 (or NaN
            // when ddof leaves no degrees of freedom).
            return match op {
                ReduceOp::Var { ddof } | ReduceOp::Std { ddof } => {
                    let z = input.sub(&input)?;
                    if ddof >= 1 {
                        z.div(0.0)
                    } else {
                        Ok(z)
                    }
                }
                ReduceOp::ArgMin | ReduceOp::ArgMax => {
                    Array::constant(self.shape(), crate::dtype::Scalar::Int(0), DType::I64)
                }
                _ => input.cast(result),
            };
        }
        let shape: Vec<usize> = (0..self.ndim())
            .filter_map(|i| {
                if axes.contains(&i) {
                    keepdims.then_some(1)
                } else {
                    Some(self.shape()[i])
                }
            })
            .collect();
        Array::new_node(
            Op::Reduce { op, axes, keepdims },
            shape,
            result,
            vec![input],
        )
    }

    /// Sum of elements (`None`: all axes). Floats accumulate in f64.
    pub fn sum(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceOp::Sum, axes, keepdims)
    }

    /// Product of elements (`None`: all axes; 1 for none). Integers wrap
    /// in int64; floats multiply in f64 and round once.
    pub fn prod(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceOp::Prod, axes, keepdims)
    }

    /// Arithmetic mean.
    pub fn mean(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceOp::Mean, axes, keepdims)
    }

    /// Variance with `ddof` delta degrees of freedom, computed in one stable
    /// pass (chunk-wise two-pass moments merged with Chan's formula).
    pub fn var(&self, axes: Option<&[isize]>, keepdims: bool, ddof: u32) -> Result<Array> {
        self.reduce(ReduceOp::Var { ddof }, axes, keepdims)
    }

    /// Standard deviation (square root of [`Array::var`]).
    pub fn std(&self, axes: Option<&[isize]>, keepdims: bool, ddof: u32) -> Result<Array> {
        self.reduce(ReduceOp::Std { ddof }, axes, keepdims)
    }

    /// Minimum; NaN if any element is NaN.
    pub fn min(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceOp::Min, axes, keepdims)
    }

    /// Maximum; NaN if any element is NaN.
    pub fn max(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceOp::Max, axes, keepdims)
    }

    /// Index of the first minimum (flat index when `axis` is `None`); the
    /// first NaN wins, like NumPy.
    pub fn argmin(&self, axis: Option<isize>) -> Result<Array> {
        self.arg_reduce(ReduceOp::ArgMin, axis)
    }

    /// Index of the first maximum; see [`Array::argmin`].
    pub fn argmax(&self, axis: Option<isize>) -> Result<Array> {
        self.arg_reduce(ReduceOp::ArgMax, axis)
    }

    fn arg_reduce(&self, op: ReduceOp, axis: Option<isize>) -> Result<Array> {
        match axis {
            None => {
                // NumPy: the flat index into the row-major array.
                self.reduce(op, None, false)
            }
            // NumPy treats a 0-d array as one element here: axis 0 or -1
            // is its only index (any other axis is out of bounds for 1).
            Some(a) if self.ndim() == 0 => {
                normalize_axis(op.name(), a, 1)?;
                self.reduce(op, None, false)
            }
            Some(a) => {
                normalize_axis(op.name(), a, self.ndim())?;
                self.reduce(op, Some(&[a]), false)
            }
        }
    }
}
