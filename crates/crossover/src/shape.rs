//! Shapes, broadcasting and strided layouts (views without copies).
//!
//! A [`Layout`] maps a multi-index of an array to a position in a flat
//! buffer: `offset + sum(index[d] * strides[d])`, strides in elements. Views
//! (transpose, slicing, broadcasting, reshape where possible) only change the
//! layout. [`ViewOp`]s record how a view was made, so the same view can be
//! replayed on any other layout (the fuser pushes views down to the loads of a
//! fused kernel this way).

use crate::error::{Error, Result};

/// Number of elements of a shape (1 for a 0-d shape).
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Row-major (C order) strides of a shape, in elements.
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut s = 1isize;
    for d in (0..shape.len()).rev() {
        strides[d] = s;
        s *= shape[d].max(1) as isize;
    }
    strides
}

/// NumPy broadcasting of two shapes.
///
/// ```
/// use crossover::shape::broadcast_shapes;
/// assert_eq!(broadcast_shapes("add", &[3, 1], &[4]).unwrap(), vec![3, 4]);
/// assert_eq!(broadcast_shapes("add", &[2, 3], &[2, 3]).unwrap(), vec![2, 3]);
/// assert!(broadcast_shapes("add", &[3], &[4]).is_err());
/// ```
pub fn broadcast_shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    if a == b {
        // The common case of every recorded binary op.
        return Ok(a.to_vec());
    }
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::Broadcast {
                op,
                lhs: a.to_vec(),
                rhs: b.to_vec(),
            });
        };
    }
    Ok(out)
}

/// Resolves a possibly negative axis against a rank.
pub fn normalize_axis(op: &'static str, axis: isize, ndim: usize) -> Result<usize> {
    let a = if axis < 0 { axis + ndim as isize } else { axis };
    if a < 0 || a >= ndim as isize {
        return Err(Error::Axis { op, axis, ndim });
    }
    Ok(a as usize)
}

/// Resolves a list of axes (sorted, duplicates rejected).
pub fn normalize_axes(op: &'static str, axes: &[isize], ndim: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = normalize_axis(op, a, ndim)?;
        if out.contains(&n) {
            return Err(Error::invalid(op, format!("axis {a} is repeated")));
        }
        out.push(n);
    }
    out.sort_unstable();
    Ok(out)
}

/// One entry of a basic-indexing key, like Python's `a[1:5:2, 3, None]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SliceArg {
    /// `start:stop:step`; `None` bounds mean "from the start/to the end" in
    /// the direction of `step`.
    Range {
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    },
    /// A single index: removes the axis.
    Index(isize),
    /// `None`/`np.newaxis`: inserts an axis of length 1.
    NewAxis,
}

impl SliceArg {
    /// The full range `:`.
    pub fn full() -> Self {
        SliceArg::Range {
            start: None,
            stop: None,
            step: 1,
        }
    }
    /// `start:stop` with step 1.
    pub fn range(start: isize, stop: isize) -> Self {
        SliceArg::Range {
            start: Some(start),
            stop: Some(stop),
            step: 1,
        }
    }
}

/// A normalised slice of one axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AxisSlice {
    /// First index taken.
    pub start: usize,
    /// Number of indices taken.
    pub len: usize,
    pub step: isize,
    /// False for an integer index, which removes the axis.
    pub keep: bool,
}

/// A recorded view transformation, replayable on any layout of the same shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ViewOp {
    Reshape(Vec<usize>),
    Permute(Vec<usize>),
    Broadcast(Vec<usize>),
    /// One entry per axis after normalisation; `NewAxis` entries are
    /// expressed by a following `Reshape`.
    Slice(Vec<AxisSlice>),
}

impl ViewOp {
    /// Whether this view repeats elements (a broadcast that expands a dim),
    /// so that fusing a producer through it would recompute work.
    pub fn expands(&self, input_shape: &[usize]) -> bool {
        match self {
            ViewOp::Broadcast(shape) => numel(shape) > numel(input_shape),
            _ => false,
        }
    }
}

/// Where the elements of an array sit in a flat buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    pub shape: Vec<usize>,
    /// Strides in elements (may be zero for broadcast dims, negative for
    /// reversed slices).
    pub strides: Vec<isize>,
    /// Position of element `[0, 0, ...]` in the buffer.
    pub offset: usize,
}

impl Layout {
    /// The row-major layout of `shape` starting at 0.
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
        }
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    /// Row-major contiguous (any offset); size-1 dims may have any stride;
    /// an empty layout is contiguous.
    pub fn is_contiguous(&self) -> bool {
        if self.shape.contains(&0) {
            return true;
        }
        let mut expect = 1isize;
        for d in (0..self.shape.len()).rev() {
            if self.shape[d] != 1 && self.strides[d] != expect {
                return false;
            }
            expect *= self.shape[d] as isize;
        }
        true
    }

    /// Contiguous and starting at position 0.
    pub fn is_identity(&self) -> bool {
        self.offset == 0 && self.is_contiguous()
    }

    /// Buffer position of a multi-index.
    pub fn position(&self, index: &[usize]) -> usize {
        let mut p = self.offset as isize;
        for (i, s) in index.iter().zip(&self.strides) {
            p += *i as isize * s;
        }
        p as usize
    }

    /// Smallest buffer length this layout can address (0 if empty).
    pub fn required_len(&self) -> usize {
        if self.numel() == 0 {
            return 0;
        }
        let mut hi = self.offset as isize;
        for (n, s) in self.shape.iter().zip(&self.strides) {
            if *s > 0 {
                hi += (*n as isize - 1) * s;
            }
        }
        hi as usize + 1
    }

    /// Merges neighbouring dims that step through memory as one, and drops
    /// size-1 dims, without changing which position each linear index maps to.
    pub fn coalesce(&self) -> Layout {
        let mut shape: Vec<usize> = Vec::with_capacity(self.ndim());
        let mut strides: Vec<isize> = Vec::with_capacity(self.ndim());
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            if n == 1 {
                continue;
            }
            if let (Some(&ln), Some(&ls)) = (shape.last(), strides.last()) {
                if ls == s * n as isize {
                    let k = shape.len() - 1;
                    shape[k] = ln * n;
                    strides[k] = s;
                    continue;
                }
            }
            shape.push(n);
            strides.push(s);
        }
        if self.numel() == 0 {
            return Layout {
                shape: vec![0],
                strides: vec![1],
                offset: self.offset,
            };
        }
        Layout {
            shape,
            strides,
            offset: self.offset,
        }
    }

    /// Reorders axes: `out.shape[i] = self.shape[axes[i]]`.
    pub fn permute(&self, op: &'static str, axes: &[usize]) -> Result<Layout> {
        check_permutation(op, axes, self.ndim())?;
        Ok(Layout {
            shape: axes.iter().map(|&a| self.shape[a]).collect(),
            strides: axes.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
        })
    }

    /// Broadcasts to `shape` (stride 0 on new and expanded dims).
    pub fn broadcast_to(&self, op: &'static str, shape: &[usize]) -> Result<Layout> {
        if shape.len() < self.ndim() {
            return Err(Error::Broadcast {
                op,
                lhs: self.shape.clone(),
                rhs: shape.to_vec(),
            });
        }
        let lead = shape.len() - self.ndim();
        let mut strides = vec![0isize; shape.len()];
        for d in 0..self.ndim() {
            let (have, want) = (self.shape[d], shape[lead + d]);
            if have == want {
                strides[lead + d] = self.strides[d];
            } else if have == 1 {
                strides[lead + d] = 0;
            } else {
                return Err(Error::Broadcast {
                    op,
                    lhs: self.shape.clone(),
                    rhs: shape.to_vec(),
                });
            }
        }
        Ok(Layout {
            shape: shape.to_vec(),
            strides,
            offset: self.offset,
        })
    }

    /// Reshape without copying, when the strides allow it (NumPy's
    /// `_attempt_nocopy_reshape`); `None` when a copy is needed.
    pub fn reshape(&self, shape: &[usize]) -> Option<Layout> {
        if numel(shape) != self.numel() {
            return None;
        }
        if self.numel() == 0 || self.is_contiguous() {
            let mut l = Layout::contiguous(shape);
            l.offset = self.offset;
            return Some(l);
        }
        // Old dims without the size-1 ones.
        let old: Vec<(usize, isize)> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(n, _)| **n != 1)
            .map(|(n, s)| (*n, *s))
            .collect();
        let mut new_strides = vec![0isize; shape.len()];
        let (mut oi, mut ni) = (0usize, 0usize);
        let new_dims: Vec<usize> = (0..shape.len()).filter(|&d| shape[d] != 1).collect();
        while oi < old.len() && ni < new_dims.len() {
            // Grow groups of old and new dims until their sizes match.
            let (oj0, nj0) = (oi, ni);
            let mut op = old[oi].0;
            let mut np = shape[new_dims[ni]];
            while op != np {
                if np < op {
                    ni += 1;
                    np *= shape[new_dims[ni]];
                } else {
                    oi += 1;
                    op *= old[oi].0;
                }
            }
            // The old group must be contiguous within itself.
            for k in oj0..oi {
                if old[k].1 != old[k + 1].1 * old[k + 1].0 as isize {
                    return None;
                }
            }
            // Fill the new group's strides from the innermost old stride.
            let mut s = old[oi].1;
            for k in (nj0..=ni).rev() {
                let d = new_dims[k];
                new_strides[d] = s;
                s *= shape[d] as isize;
            }
            oi += 1;
            ni += 1;
        }
        // Size-1 new dims: any stride works; use the contiguous-like value.
        for d in 0..shape.len() {
            if shape[d] == 1 {
                new_strides[d] = if d + 1 < shape.len() {
                    new_strides[d + 1] * shape[d + 1] as isize
                } else {
                    1
                };
            }
        }
        Some(Layout {
            shape: shape.to_vec(),
            strides: new_strides,
            offset: self.offset,
        })
    }

    /// Applies a normalised slice (see [`ViewOp::Slice`]).
    fn slice_resolved(&self, spec: &[AxisSlice]) -> Layout {
        let mut shape = Vec::new();
        let mut strides = Vec::new();
        let mut offset = self.offset as isize;
        for (d, s) in spec.iter().enumerate() {
            offset += s.start as isize * self.strides[d];
            if s.keep {
                shape.push(s.len);
                strides.push(self.strides[d] * s.step);
            }
        }
        Layout {
            shape,
            strides,
            offset: offset.max(0) as usize,
        }
    }

    /// Applies a recorded view op; `None` when a reshape would need a copy.
    pub fn apply(&self, view: &ViewOp) -> Option<Layout> {
        match view {
            ViewOp::Reshape(shape) => self.reshape(shape),
            ViewOp::Permute(axes) => self.permute("view", axes).ok(),
            ViewOp::Broadcast(shape) => self.broadcast_to("view", shape).ok(),
            ViewOp::Slice(spec) => Some(self.slice_resolved(spec)),
        }
    }

    /// Applies a sequence of view ops in order.
    pub fn apply_all(&self, views: &[ViewOp]) -> Option<Layout> {
        let mut l = self.clone();
        for v in views {
            l = l.apply(v)?;
        }
        Some(l)
    }
}

pub(crate) fn check_permutation(op: &'static str, axes: &[usize], ndim: usize) -> Result<()> {
    let mut seen = vec![false; ndim];
    if axes.len() != ndim {
        return Err(Error::invalid(
            op,
            format!("axes {axes:?} do not match an array of rank {ndim}"),
        ));
    }
    for &a in axes {
        if a >= ndim || seen[a] {
            return Err(Error::invalid(
                op,
                format!("axes {axes:?} are not a permutation of 0..{ndim}"),
            ));
        }
        seen[a] = true;
    }
    Ok(())
}

/// Normalises a basic-indexing key against a shape into slice entries per
/// existing axis plus the final shape (with new axes).
pub(crate) fn resolve_slice(
    op: &'static str,
    shape: &[usize],
    key: &[SliceArg],
) -> Result<(Vec<AxisSlice>, Vec<usize>)> {
    let consumed = key
        .iter()
        .filter(|k| !matches!(k, SliceArg::NewAxis))
        .count();
    if consumed > shape.len() {
        return Err(Error::invalid(
            op,
            format!(
                "too many indices: {consumed} for an array of rank {}",
                shape.len()
            ),
        ));
    }
    let mut spec = Vec::with_capacity(shape.len());
    let mut final_shape = Vec::new();
    let mut d = 0usize;
    for k in key {
        match *k {
            SliceArg::NewAxis => final_shape.push(1),
            SliceArg::Index(i) => {
                let n = shape[d] as isize;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(Error::invalid(
                        op,
                        format!("index {i} is out of bounds for axis {d} with size {n}"),
                    ));
                }
                spec.push(AxisSlice {
                    start: j as usize,
                    len: 1,
                    step: 1,
                    keep: false,
                });
                d += 1;
            }
            SliceArg::Range { start, stop, step } => {
                if step == 0 {
                    return Err(Error::invalid(op, "slice step cannot be zero"));
                }
                let (s, len) = slice_bounds(shape[d], start, stop, step);
                spec.push(AxisSlice {
                    start: s,
                    len,
                    step,
                    keep: true,
                });
                final_shape.push(len);
                d += 1;
            }
        }
    }
    while d < shape.len() {
        spec.push(AxisSlice {
            start: 0,
            len: shape[d],
            step: 1,
            keep: true,
        });
        final_shape.push(shape[d]);
        d += 1;
    }
    Ok((spec, final_shape))
}

/// Python's `slice.indices`: start position and length of `start:stop:step`.
fn slice_bounds(
    n: usize,
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
) -> (usize, usize) {
    let n = n as isize;
    let clamp = |v: isize, lo: isize, hi: isize| v.max(lo).min(hi);
    if step > 0 {
        let s = start.map_or(0, |v| {
            if v < 0 {
                clamp(v + n, 0, n)
            } else {
                clamp(v, 0, n)
            }
        });
        let e = stop.map_or(n, |v| {
            if v < 0 {
                clamp(v + n, 0, n)
            } else {
                clamp(v, 0, n)
            }
        });
        let len = if e > s { (e - s + step - 1) / step } else { 0 };
        (s as usize, len as usize)
    } else {
        let s = start.map_or(n - 1, |v| {
            if v < 0 {
                clamp(v + n, -1, n - 1)
            } else {
                clamp(v, -1, n - 1)
            }
        });
        let e = stop.map_or(-1, |v| {
            if v < 0 {
                clamp(v + n, -1, n - 1)
            } else {
                clamp(v, -1, n - 1)
            }
        });
        let len = if s > e {
            (s - e + (-step) - 1) / (-step)
        } else {
            0
        };
        (if len == 0 { 0 } else { s as usize }, len as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(l: &Layout) -> Vec<usize> {
        let n = l.numel();
        let mut out = Vec::with_capacity(n);
        let mut idx = vec![0usize; l.ndim()];
        for _ in 0..n {
            out.push(l.position(&idx));
            for d in (0..l.ndim()).rev() {
                idx[d] += 1;
                if idx[d] < l.shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        out
    }

    #[test]
    fn reshape_of_transposed_needs_copy_but_split_works() {
        let base = Layout::contiguous(&[4, 6]);
        let t = base.permute("t", &[1, 0]).unwrap();
        assert!(t.reshape(&[24]).is_none());
        // Splitting one axis of a transposed view is stride-compatible.
        let r = t.reshape(&[2, 3, 4]).unwrap();
        let expect: Vec<usize> = positions(&t);
        assert_eq!(positions(&r), expect);
    }

    #[test]
    fn slices_match_python() {
        assert_eq!(slice_bounds(10, Some(1), Some(8), 3), (1, 3));
        assert_eq!(slice_bounds(10, None, None, -1), (9, 10));
        assert_eq!(slice_bounds(10, Some(-2), None, -3), (8, 3));
        assert_eq!(slice_bounds(5, Some(7), None, 1), (5, 0));
        assert_eq!(slice_bounds(5, None, Some(-9), -1), (4, 5));
        assert_eq!(slice_bounds(0, None, None, -1), (0, 0));
    }

    #[test]
    fn coalesce_keeps_positions() {
        let l = Layout::contiguous(&[3, 1, 4, 5])
            .permute("p", &[0, 1, 2, 3])
            .unwrap();
        let c = l.coalesce();
        assert_eq!(c.shape, vec![60]);
        let t = Layout::contiguous(&[3, 4]).permute("p", &[1, 0]).unwrap();
        assert_eq!(positions(&t.coalesce()), positions(&t));
    }

    #[test]
    fn broadcast_rules() {
        let l = Layout::contiguous(&[3, 1]);
        let b = l.broadcast_to("b", &[2, 3, 4]).unwrap();
        assert_eq!(b.strides, vec![0, 1, 0]);
        assert!(l.broadcast_to("b", &[3, 2, 2]).is_err());
    }
}
