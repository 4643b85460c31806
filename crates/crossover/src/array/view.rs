//! Views: reshape, transpose/permute, broadcast, slicing. No data moves; a
//! view of a ready array is ready at once, a view of a pending array records
//! the view ops so the fuser can push them into the loads of a kernel.

use super::Array;
use crate::error::{Error, Result};
use crate::op::Op;
use crate::shape::{
    check_permutation, normalize_axis, numel, resolve_slice, Layout, SliceArg, ViewOp,
};

impl Array {
    /// The layout this array would have relative to its view base.
    fn base_and_ops(&self) -> (Array, Vec<ViewOp>) {
        match self.op() {
            Op::View(ops) if !self.is_ready() => {
                let base = self
                    .pending_inputs()
                    .and_then(|i| i.into_iter().next())
                    .expect("a pending view has its base as input");
                (base, ops.clone())
            }
            _ => (self.clone(), Vec::new()),
        }
    }

    /// Makes a view by appending `view` (whose result shape is `shape`).
    fn view(&self, view: ViewOp, shape: Vec<usize>) -> Result<Array> {
        crate::limits::checked_numel("view", &shape, self.dtype())?;
        if let Some(value) = self.ready_value() {
            if let Some(layout) = value.layout.apply(&view) {
                debug_assert_eq!(layout.shape, shape);
                return Ok(Array::new_ready(
                    Op::Input,
                    self.dtype(),
                    crate::array::Value {
                        buffer: value.buffer,
                        layout,
                    },
                ));
            }
            // Reshape of a strided view: copy to contiguous first.
            return self.copy()?.view(view, shape);
        }
        let (base, mut ops) = self.base_and_ops();
        ops.push(view);
        if Layout::contiguous(base.shape()).apply_all(&ops).is_none() {
            return self.copy()?.view(ops.pop().expect("just pushed"), shape);
        }
        Array::new_node(Op::View(ops), shape, self.dtype(), vec![base])
    }

    /// A view with a new shape of the same size; one entry may be `-1`.
    /// Copies only when the current layout cannot be reshaped in place.
    pub fn reshape(&self, shape: &[isize]) -> Result<Array> {
        let n = self.numel();
        let mut unknown = None;
        let mut known = 1usize;
        for (i, &d) in shape.iter().enumerate() {
            if d == -1 {
                if unknown.replace(i).is_some() {
                    return Err(Error::invalid(
                        "reshape",
                        "can only specify one unknown dimension",
                    ));
                }
            } else if d < 0 {
                return Err(Error::invalid("reshape", format!("negative dimension {d}")));
            } else {
                known = known.checked_mul(d as usize).ok_or_else(|| Error::TooBig {
                    op: "reshape",
                    shape: shape.iter().map(|&d| d.max(0) as usize).collect(),
                    dtype: self.dtype(),
                })?;
            }
        }
        let mut out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
        if let Some(i) = unknown {
            if known == 0 || !n.is_multiple_of(known) {
                return Err(Error::shape(
                    "reshape",
                    self.shape(),
                    format!("cannot reshape array of size {n} into shape {shape:?}"),
                ));
            }
            out[i] = n / known;
        }
        crate::limits::checked_numel("reshape", &out, self.dtype())?;
        if numel(&out) != n {
            return Err(Error::shape(
                "reshape",
                self.shape(),
                format!("cannot reshape array of size {n} into shape {out:?}"),
            ));
        }
        if out == self.shape() {
            return Ok(self.clone());
        }
        self.view(ViewOp::Reshape(out.clone()), out)
    }

    /// Reorders axes: result axis `i` is this array's axis `axes[i]`.
    pub fn permute(&self, axes: &[usize]) -> Result<Array> {
        check_permutation("permute", axes, self.ndim())?;
        if axes.iter().enumerate().all(|(i, &a)| i == a) {
            return Ok(self.clone());
        }
        let shape = axes.iter().map(|&a| self.shape()[a]).collect();
        self.view(ViewOp::Permute(axes.to_vec()), shape)
    }

    /// Reverses the axes (`.T`).
    pub fn transpose(&self) -> Result<Array> {
        let axes: Vec<usize> = (0..self.ndim()).rev().collect();
        self.permute(&axes)
    }

    /// Swaps two axes.
    pub fn swapaxes(&self, a: isize, b: isize) -> Result<Array> {
        let a = normalize_axis("swapaxes", a, self.ndim())?;
        let b = normalize_axis("swapaxes", b, self.ndim())?;
        let mut axes: Vec<usize> = (0..self.ndim()).collect();
        axes.swap(a, b);
        self.permute(&axes)
    }

    /// Broadcasts to `shape` without copying (NumPy rules).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array> {
        self.broadcast_to_for("broadcast_to", shape)
    }

    pub(crate) fn broadcast_to_for(&self, op: &'static str, shape: &[usize]) -> Result<Array> {
        if self.shape() == shape {
            return Ok(self.clone());
        }
        // Validate with the error naming the caller's op.
        Layout::contiguous(self.shape()).broadcast_to(op, shape)?;
        if let Op::Full(v) = self.op() {
            // Constants broadcast for free.
            return Array::constant(shape, *v, self.dtype());
        }
        self.view(ViewOp::Broadcast(shape.to_vec()), shape.to_vec())
    }

    /// Basic indexing: ranges with steps, integer indices and new axes.
    ///
    /// ```
    /// use crossover::{Array, DType, SliceArg};
    /// let a = Array::arange(0.0, 12.0, 1.0, DType::F64)?.reshape(&[3, 4])?;
    /// let s = a.slice(&[SliceArg::Index(1), SliceArg::Range { start: None, stop: None, step: -2 }])?;
    /// assert_eq!(s.to_vec::<f64>()?, vec![7.0, 5.0]);
    /// # Ok::<(), crossover::Error>(())
    /// ```
    pub fn slice(&self, key: &[SliceArg]) -> Result<Array> {
        let (spec, final_shape) = resolve_slice("slice", self.shape(), key)?;
        let kept: Vec<usize> = spec.iter().filter(|s| s.keep).map(|s| s.len).collect();
        let identity = spec
            .iter()
            .zip(self.shape())
            .all(|(s, &n)| s.keep && s.start == 0 && s.len == n && s.step == 1);
        let sliced = if identity {
            self.clone()
        } else {
            self.view(ViewOp::Slice(spec), kept.clone())?
        };
        if final_shape != kept {
            let shape: Vec<isize> = final_shape.iter().map(|&d| d as isize).collect();
            return sliced.reshape(&shape);
        }
        Ok(sliced)
    }

    /// Inserts an axis of length 1 at `axis`.
    pub fn expand_dims(&self, axis: isize) -> Result<Array> {
        let a = normalize_axis("expand_dims", axis, self.ndim() + 1)?;
        let mut shape: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
        shape.insert(a, 1);
        self.reshape(&shape)
    }

    /// Removes axes of length 1 (all of them when `axis` is `None`).
    pub fn squeeze(&self, axis: Option<isize>) -> Result<Array> {
        let shape: Vec<isize> = match axis {
            None => self
                .shape()
                .iter()
                .filter(|&&d| d != 1)
                .map(|&d| d as isize)
                .collect(),
            Some(ax) => {
                let a = normalize_axis("squeeze", ax, self.ndim())?;
                if self.shape()[a] != 1 {
                    return Err(Error::shape(
                        "squeeze",
                        self.shape(),
                        format!("cannot select an axis to squeeze out which has size not equal to one (axis {ax})"),
                    ));
                }
                let mut s: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
                s.remove(a);
                s
            }
        };
        self.reshape(&shape)
    }

    /// Flattens to one dimension.
    pub fn ravel(&self) -> Result<Array> {
        self.reshape(&[-1])
    }
}
