//! Integer and boolean matrix products. NumPy keeps the dtype: int32 and
//! int64 products wrap on overflow, bool is the logical or of ands. faer has
//! no integer kernels, so this is a plain row-parallel loop (as NumPy's own
//! integer matmul is: no BLAS).

use super::matmul::MatMul;
use super::{batch_offsets, mat_strides, output};
use crate::array::Value;
use crate::buffer::Storage;
use crate::dtype::DType;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Multiply-add with NumPy's integer semantics.
trait IntElem: Storage + Default + PartialEq {
    fn mul_add(acc: Self, a: Self, b: Self) -> Self;
}

impl IntElem for i32 {
    fn mul_add(acc: i32, a: i32, b: i32) -> i32 {
        acc.wrapping_add(a.wrapping_mul(b))
    }
}

impl IntElem for i64 {
    fn mul_add(acc: i64, a: i64, b: i64) -> i64 {
        acc.wrapping_add(a.wrapping_mul(b))
    }
}

/// bool stored as u8 (0 or 1).
impl IntElem for u8 {
    fn mul_add(acc: u8, a: u8, b: u8) -> u8 {
        acc | (a & b)
    }
}

impl MatMul {
    /// [`MatMul::run_cpu`] for integer and bool dtypes.
    pub(super) fn run_int(&self, inputs: &[Value]) -> Result<Vec<Value>> {
        let [a, b] = inputs else {
            return Err(Error::internal("matmul", "expected two inputs"));
        };
        let v = match self.dtype {
            DType::I32 => self.run_int_typed::<i32>(a, b),
            DType::I64 => self.run_int_typed::<i64>(a, b),
            DType::Bool => self.run_int_typed::<u8>(a, b),
            d => Err(Error::dtype("matmul", d, "not an integer or bool dtype")),
        }?;
        Ok(vec![v])
    }

    fn run_int_typed<T: IntElem>(&self, a: &Value, b: &Value) -> Result<Value> {
        let (m, k, n) = (self.m, self.k, self.n);
        let mut shape = self.batch.clone();
        shape.extend([m, n]);
        let a_offs = batch_offsets(&a.layout, 2, &self.batch);
        let b_offs = batch_offsets(&b.layout, 2, &self.batch);
        let (_, _, ars, acs) = mat_strides(&a.layout);
        let (_, _, brs, bcs) = mat_strides(&b.layout);
        let (ad, bd) = (a.buffer.as_slice::<T>(), b.buffer.as_slice::<T>());
        // Element (i, j) of matrix `bi`: offsets and strides come from the
        // inputs' own layouts, so every position lies inside the buffers.
        let at = |bi: usize, i: usize, p: usize| {
            ad[(a_offs[bi] + i as isize * ars + p as isize * acs) as usize]
        };
        let bt = |bi: usize, p: usize, j: usize| {
            bd[(b_offs[bi] + p as isize * brs + j as isize * bcs) as usize]
        };
        let row = |r: usize, dst: &mut [T]| {
            if crate::interrupt::requested() {
                return;
            }
            let (bi, i) = (r / m, r % m);
            for p in 0..k {
                let x = at(bi, i, p);
                if x == T::default() {
                    continue;
                }
                for (j, d) in dst.iter_mut().enumerate() {
                    *d = T::mul_add(*d, x, bt(bi, p, j));
                }
            }
        };
        let v = output::<T>(self.dtype, &shape, |out| {
            out.fill(T::default()); // recycled memory is not zeroed
            if m * n == 0 {
                return Ok(());
            }
            let work = out.len() * k.max(1);
            if work >= 1 << 16 && crate::cpu::threads() > 1 {
                crate::cpu::pool().install(|| {
                    out.par_chunks_mut(n)
                        .enumerate()
                        .for_each(|(r, dst)| row(r, dst))
                });
            } else {
                out.chunks_mut(n)
                    .enumerate()
                    .for_each(|(r, dst)| row(r, dst));
            }
            Ok(())
        })?;
        crate::interrupt::check("matmul")?;
        Ok(v)
    }
}
