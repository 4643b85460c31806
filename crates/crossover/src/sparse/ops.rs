//! Sparse products: sparse @ sparse (eager, Gustavson's algorithm with a
//! dense accumulator per thread) and sparse @ dense (a lazy library call).

use super::{with_values, Csr, CsrData, SparseValue, Values};
use crate::array::{Array, Value};
use crate::buffer::{Buffer, Storage};
use crate::cpu::gather::for_each_position;
use crate::dtype::DType;
use crate::error::{catch_panic, Error, Result};
use crate::op::LibraryOp;
use crate::shape::Layout;
use rayon::prelude::*;
use std::sync::Arc;

/// The common value dtype of two operands (float32 only if both are).
fn common(a: DType, b: DType) -> DType {
    if a == DType::F32 && b == DType::F32 {
        DType::F32
    } else {
        DType::F64
    }
}

/// `a @ b` for two CSR matrices.
pub(super) fn spgemm(a: &Csr, b: &Csr) -> Result<Csr> {
    const OP: &str = "sparse_matmul";
    if a.ncols() != b.nrows() {
        return Err(Error::Shape {
            op: OP,
            shape: a.shape().to_vec(),
            msg: format!(
                "inner dimensions differ: a {:?} has {} columns, b {:?} has {} rows",
                a.shape(),
                a.ncols(),
                b.shape(),
                b.nrows()
            ),
        });
    }
    let d = common(a.dtype(), b.dtype());
    let (a, b) = (a.astype(d)?, b.astype(d)?);
    catch_panic(OP, || {
        Ok(
            crate::cpu::pool().install(|| match (&a.data.values, &b.data.values) {
                (Values::F32(av), Values::F32(bv)) => spgemm_typed(&a.data, av, &b.data, bv),
                (Values::F64(av), Values::F64(bv)) => spgemm_typed(&a.data, av, &b.data, bv),
                _ => unreachable!("both operands converted to one dtype"),
            }),
        )
    })
}

/// Per-thread dense accumulator of one output row.
struct Accumulator<T> {
    vals: Vec<T>,
    /// Row that last touched each column (`u32::MAX`: none).
    mark: Vec<u32>,
    touched: Vec<u32>,
}

/// One chunk of output rows.
struct Chunk<T> {
    row_nnz: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<T>,
}

fn spgemm_typed<T: SparseValue>(a: &CsrData, av: &[T], b: &CsrData, bv: &[T]) -> Csr {
    let (m, n) = (a.nrows, b.ncols);
    // Balance chunks by the number of products, not rows.
    let work: usize = a
        .indices
        .iter()
        .map(|&k| b.indptr[k as usize + 1] - b.indptr[k as usize])
        .sum();
    let target = (work / (32 * crate::cpu::threads()).max(1)).max(4096);
    let mut bounds = vec![0usize];
    let mut acc_work = 0usize;
    for i in 0..m {
        for p in a.indptr[i]..a.indptr[i + 1] {
            let k = a.indices[p] as usize;
            acc_work += b.indptr[k + 1] - b.indptr[k];
        }
        if acc_work >= target {
            bounds.push(i + 1);
            acc_work = 0;
        }
    }
    if *bounds.last().expect("non-empty") != m {
        bounds.push(m);
    }
    let chunks: Vec<Chunk<T>> = (0..bounds.len() - 1)
        .into_par_iter()
        .map_init(
            || Accumulator {
                vals: vec![T::default(); n],
                mark: vec![u32::MAX; n],
                touched: Vec::new(),
            },
            |acc, c| row_chunk(a, av, b, bv, bounds[c], bounds[c + 1], acc),
        )
        .collect();
    // Assemble: row pointers, then each chunk copied into its place.
    let mut indptr = Vec::with_capacity(m + 1);
    indptr.push(0usize);
    for ch in &chunks {
        for &r in &ch.row_nnz {
            let last = *indptr.last().expect("non-empty");
            indptr.push(last + r);
        }
    }
    let total = indptr[m];
    let mut indices = vec![0u32; total];
    let mut values = vec![T::default(); total];
    let mut idx_parts = Vec::with_capacity(chunks.len());
    let mut val_parts = Vec::with_capacity(chunks.len());
    let (mut ri, mut rv) = (&mut indices[..], &mut values[..]);
    for ch in &chunks {
        let (hi, ti) = std::mem::take(&mut ri).split_at_mut(ch.indices.len());
        let (hv, tv) = std::mem::take(&mut rv).split_at_mut(ch.values.len());
        idx_parts.push(hi);
        val_parts.push(hv);
        ri = ti;
        rv = tv;
    }
    chunks
        .par_iter()
        .zip(idx_parts.into_par_iter().zip(val_parts))
        .for_each(|(ch, (di, dv))| {
            di.copy_from_slice(&ch.indices);
            dv.copy_from_slice(&ch.values);
        });
    Csr::new_unchecked(m, n, indptr, indices, T::wrap(values))
}

fn row_chunk<T: SparseValue>(
    a: &CsrData,
    av: &[T],
    b: &CsrData,
    bv: &[T],
    r0: usize,
    r1: usize,
    acc: &mut Accumulator<T>,
) -> Chunk<T> {
    let n = b.ncols;
    let zero = T::default();
    let mut out = Chunk {
        row_nnz: Vec::with_capacity(r1 - r0),
        indices: Vec::new(),
        values: Vec::new(),
    };
    let (vals, mark) = (&mut acc.vals[..], &mut acc.mark[..]);
    for i in r0..r1 {
        let stamp = i as u32;
        acc.touched.clear();
        for p in a.indptr[i]..a.indptr[i + 1] {
            let k = a.indices[p] as usize;
            let x = av[p];
            let (q0, q1) = (b.indptr[k], b.indptr[k + 1]);
            for (&j, &y) in b.indices[q0..q1].iter().zip(&bv[q0..q1]) {
                let j = j as usize;
                if mark[j] != stamp {
                    mark[j] = stamp;
                    vals[j] = x * y;
                    acc.touched.push(j as u32);
                } else {
                    vals[j] += x * y;
                }
            }
        }
        let before = out.indices.len();
        if acc.touched.len() * 12 > n {
            // Dense row: a scan of the marks is cheaper than a sort.
            for (j, (&s, &v)) in mark.iter().zip(vals.iter()).enumerate() {
                if s == stamp && v != zero {
                    out.indices.push(j as u32);
                    out.values.push(v);
                }
            }
        } else {
            acc.touched.sort_unstable();
            for &j in &acc.touched {
                let v = vals[j as usize];
                if v != zero {
                    out.indices.push(j);
                    out.values.push(v);
                }
            }
        }
        out.row_nnz.push(out.indices.len() - before);
    }
    out
}

// ---- sparse @ dense -----------------------------------------------------------

#[derive(Debug)]
struct SpMM {
    a: Csr,
    /// Columns of the dense operand (1 for a vector).
    k: usize,
    vector: bool,
}

/// Records `a @ x` for a dense `x`.
pub(super) fn spmm(a: &Csr, x: &Array) -> Result<Array> {
    const OP: &str = "sparse_matmul_dense";
    if x.ndim() == 0 || x.ndim() > 2 {
        return Err(Error::shape(
            OP,
            x.shape(),
            "needs a 1-D or 2-D dense operand",
        ));
    }
    if x.dtype().is_complex() {
        return Err(Error::dtype(OP, x.dtype(), "sparse products are real"));
    }
    let rows = x.shape()[0];
    if rows != a.ncols() {
        return Err(Error::Shape {
            op: OP,
            shape: x.shape().to_vec(),
            msg: format!(
                "inner dimensions differ: the sparse matrix {:?} has {} columns, x has {rows} rows",
                a.shape(),
                a.ncols()
            ),
        });
    }
    let d = common(a.dtype(), x.dtype());
    let a = a.astype(d)?;
    let x = x.cast(d)?;
    let vector = x.ndim() == 1;
    let k = if vector { 1 } else { x.shape()[1] };
    let out_shape = if vector {
        vec![a.nrows()]
    } else {
        vec![a.nrows(), k]
    };
    let op = SpMM { a, k, vector };
    Array::library(Box::new(op), vec![(out_shape, d)], vec![x])
        .pop()
        .ok_or_else(|| Error::internal(OP, "library call made no output"))
}

impl LibraryOp for SpMM {
    fn name(&self) -> &'static str {
        "sparse_matmul_dense"
    }

    fn key(&self) -> String {
        format!(
            "sparse_matmul_dense {:?} nnz={} k={} {}",
            self.a.shape(),
            self.a.nnz(),
            self.k,
            self.a.dtype()
        )
    }

    fn flops(&self) -> f64 {
        2.0 * (self.a.nnz() * self.k) as f64
    }

    fn bytes(&self) -> f64 {
        let s = self.a.dtype().size();
        (self.a.nnz() * (4 + s) + (self.a.ncols() + self.a.nrows()) * self.k * s) as f64
    }

    fn run_cpu(&self, inputs: &[Value]) -> Result<Vec<Value>> {
        let x = &inputs[0];
        crate::linalg::run_library(
            "sparse_matmul_dense",
            |_| with_values!(&self.a.data.values, v, T => self.run::<T>(v, x)),
        )
        .map(|v| vec![v])
    }
}

impl SpMM {
    fn run<T: SparseValue + Storage>(&self, av: &[T], x: &Value) -> Result<Value>
    where
        T: Storage,
    {
        let a = &self.a.data;
        let k = self.k;
        let xd = x.buffer.as_slice::<T>();
        // Row-major contiguous dense operand (copied if it is a view).
        let owned;
        let xs: &[T] = if x.layout.is_contiguous() {
            &xd[x.layout.offset..x.layout.offset + x.layout.numel()]
        } else {
            let mut v = Vec::with_capacity(x.layout.numel());
            for_each_position(&x.layout, |p| v.push(xd[p]));
            owned = v;
            &owned
        };
        let shape = if self.vector {
            vec![a.nrows]
        } else {
            vec![a.nrows, k]
        };
        let mut buf = Buffer::alloc(<T as Storage>::DTYPE, a.nrows * k)?;
        let out = buf.as_mut_slice::<T>();
        let rows_per_task = (16384 / (k + (a.indices.len() / a.nrows.max(1)) + 1)).max(1);
        let row = |i: usize, o: &mut [T]| {
            o.fill(T::default());
            for p in a.indptr[i]..a.indptr[i + 1] {
                let c = a.indices[p] as usize;
                let w = av[p];
                for (oj, &xj) in o.iter_mut().zip(&xs[c * k..(c + 1) * k]) {
                    *oj += w * xj;
                }
            }
        };
        if k > 0 {
            out.par_chunks_mut(rows_per_task * k)
                .enumerate()
                .for_each(|(t, chunk)| {
                    for (r, o) in chunk.chunks_mut(k).enumerate() {
                        row(t * rows_per_task + r, o);
                    }
                });
        }
        Ok(Value {
            buffer: Arc::new(buf),
            layout: Layout::contiguous(&shape),
        })
    }
}
