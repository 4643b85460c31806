//! Matrix products (`a @ b`), 2-D and batched, with NumPy's rules for 1-D
//! operands and batch broadcasting.

use super::{batch_offsets, flop_factor, mat_at, mat_strides, nbytes, output, Field};
use crate::array::{Array, Value};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{broadcast_shapes, numel};
use faer::{Accum, MatMut, Par};
use rayon::prelude::*;

/// Below this many multiply-adds per matrix, a batch runs one matrix per
/// task (each single-threaded) instead of parallelising inside each product.
const BATCH_PARALLEL_MAX_MNK: usize = 96 * 96 * 96;

/// `a @ b` (2-D or batched): a library op description ([`crate::op::Library::MatMul`]).
#[derive(Debug)]
pub struct MatMul {
    pub(super) a_shape: Vec<usize>,
    pub(super) b_shape: Vec<usize>,
    pub(super) batch: Vec<usize>,
    pub(super) m: usize,
    pub(super) k: usize,
    pub(super) n: usize,
    pub(super) dtype: DType,
}

/// Records `a @ b` (see [`Array::matmul`]).
pub(crate) fn matmul(a: &Array, b: &Array) -> Result<Array> {
    const OP: &str = "matmul";
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::shape(
            OP,
            if a.ndim() == 0 { a.shape() } else { b.shape() },
            "operands must have at least one dimension (use mul for scalars)",
        ));
    }
    let common = DType::promote(a.dtype(), b.dtype());
    if common.is_cpu_only_int() {
        // NumPy keeps the dtype and wraps; the int64 product wraps to the
        // same values modulo the dtype's width (and the same bits for
        // uint64), so it runs as int64 and is cast back.
        return matmul(&a.cast(DType::I64)?, &b.cast(DType::I64)?)?.cast(common);
    }
    // NumPy keeps integer and bool products in their dtype.
    let integral = matches!(common, DType::Bool | DType::I32 | DType::I64);
    let dtype = if integral {
        common
    } else {
        super::compute_dtype(OP, common)?
    };
    let a_vec = a.ndim() == 1;
    let b_vec = b.ndim() == 1;
    // 1-D operands: a (k,) is a row (1, k); b (k,) is a column (k, 1).
    let a2 = if a_vec {
        a.reshape(&[1, a.shape()[0] as isize])?
    } else {
        a.clone()
    };
    let b2 = if b_vec {
        b.reshape(&[b.shape()[0] as isize, 1])?
    } else {
        b.clone()
    };
    let (an, bn) = (a2.ndim(), b2.ndim());
    let (m, k) = (a2.shape()[an - 2], a2.shape()[an - 1]);
    let (k2, n) = (b2.shape()[bn - 2], b2.shape()[bn - 1]);
    if k != k2 {
        return Err(Error::Shape {
            op: OP,
            shape: a.shape().to_vec(),
            msg: format!(
                "inner dimensions differ: a {:?} has {k} columns, b {:?} has {k2} rows",
                a.shape(),
                b.shape()
            ),
        });
    }
    let batch = broadcast_shapes(OP, &a2.shape()[..an - 2], &b2.shape()[..bn - 2])?;
    let a2 = a2.cast(dtype)?;
    let b2 = b2.cast(dtype)?;
    let mut out_shape = batch.clone();
    out_shape.extend([m, n]);
    let op = MatMul {
        a_shape: a2.shape().to_vec(),
        b_shape: b2.shape().to_vec(),
        batch: batch.clone(),
        m,
        k,
        n,
        dtype,
    };
    let out = Array::library(
        crate::op::Library::MatMul(op),
        vec![(out_shape, dtype)],
        vec![a2, b2],
    )?
    .pop()
    .ok_or_else(|| Error::internal(OP, "library call made no output"))?;
    // NumPy removes the dimensions that 1-D operands added.
    let mut final_shape: Vec<isize> = batch.iter().map(|&d| d as isize).collect();
    if !a_vec {
        final_shape.push(m as isize);
    }
    if !b_vec {
        final_shape.push(n as isize);
    }
    if a_vec || b_vec {
        out.reshape(&final_shape)
    } else {
        Ok(out)
    }
}

impl MatMul {
    /// The broadcast batch shape, `m`, `k`, `n` and the operands' dtype.
    pub fn dims(&self) -> (&[usize], usize, usize, usize, DType) {
        (&self.batch, self.m, self.k, self.n, self.dtype)
    }

    pub fn name(&self) -> &'static str {
        "matmul"
    }

    pub fn key(&self) -> String {
        format!(
            "matmul {:?}x{:?} {}",
            self.a_shape, self.b_shape, self.dtype
        )
    }

    pub fn flops(&self) -> f64 {
        2.0 * numel(&self.batch) as f64
            * (self.m * self.n * self.k) as f64
            * flop_factor(self.dtype)
    }

    pub fn bytes(&self) -> f64 {
        nbytes(numel(&self.a_shape), self.dtype)
            + nbytes(numel(&self.b_shape), self.dtype)
            + nbytes(numel(&self.batch) * self.m * self.n, self.dtype)
    }

    pub fn run_cpu(&self, inputs: &[Value]) -> Result<Vec<Value>> {
        let [a, b] = inputs else {
            return Err(Error::internal("matmul", "expected two inputs"));
        };
        if !self.dtype.is_float() && !self.dtype.is_complex() {
            return self.run_int(inputs);
        }
        super::with_field!("matmul", self.dtype, T => self.run::<T>(a, b)).map(|v| vec![v])
    }
}

impl MatMul {
    fn run<T: Field>(&self, a: &Value, b: &Value) -> Result<Value> {
        let (m, k, n) = (self.m, self.k, self.n);
        let mut shape = self.batch.clone();
        shape.extend([m, n]);
        let a_offs = batch_offsets(&a.layout, 2, &self.batch);
        let b_offs = batch_offsets(&b.layout, 2, &self.batch);
        let (_, _, ars, acs) = mat_strides(&a.layout);
        let (_, _, brs, bcs) = mat_strides(&b.layout);
        let (ad, bd) = (super::data::<T>(a), super::data::<T>(b));
        output::<T>(self.dtype, &shape, |out| {
            let one = |dst: &mut [T], bi: usize, par: Par| {
                let dst = super::row_major_mut(dst, m, n);
                if k == 0 {
                    fill_zero(dst);
                    return;
                }
                // SAFETY: offsets and strides come from the inputs' own
                // layouts, which address elements inside their buffers.
                let (lhs, rhs) = unsafe {
                    (
                        mat_at(ad, a_offs[bi], m, k, ars, acs),
                        mat_at(bd, b_offs[bi], k, n, brs, bcs),
                    )
                };
                faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, T::one_impl(), par);
            };
            let nb = numel(&self.batch);
            if m * n == 0 {
                return Ok(());
            }
            super::run_library("matmul", |p| {
                if nb > 1 && m * n * k <= BATCH_PARALLEL_MAX_MNK && crate::cpu::threads() > 1 {
                    out.par_chunks_mut(m * n)
                        .enumerate()
                        .for_each(|(bi, dst)| one(dst, bi, Par::Seq));
                } else {
                    // Small single products are not worth a thread handoff.
                    let p = if m * n * k < 64 * 64 * 64 {
                        Par::Seq
                    } else {
                        p
                    };
                    for (bi, dst) in out.chunks_mut(m * n).enumerate() {
                        one(dst, bi, p);
                    }
                }
                Ok(())
            })
        })
    }
}

fn fill_zero<T: Field>(mut dst: MatMut<'_, T>) {
    for j in 0..dst.ncols() {
        for i in 0..dst.nrows() {
            dst[(i, j)] = T::zero_();
        }
    }
}
