//! Sparse products: sparse @ sparse (eager; the CPU's kernel is in
//! `spgemm.rs`) and sparse @ dense (a lazy library call).

use super::spgemm::{spgemm_cpu, RowCounts};
use super::{with_values, Csr, CsrData, SparseValue, Values};
use crate::array::{Array, Value};
use crate::buffer::{Buffer, Storage};
use crate::cpu::gather::for_each_position;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Layout;
use rayon::prelude::*;
use std::sync::{Arc, OnceLock};

/// The common value dtype of two operands (float32 only if both are).
fn common(a: DType, b: DType) -> DType {
    if a == DType::F32 && b == DType::F32 {
        DType::F32
    } else {
        DType::F64
    }
}

/// `a @ b` for two CSR matrices, run where the current engine's policy
/// and cost model place it (the CPU, or a GPU that runs it).
pub(super) fn spgemm(a: &Csr, b: &Csr) -> Result<Csr> {
    let (node, product) = spgemm_node(a, b)?;
    crate::engine::with_current(|e| e.evaluate_only(std::slice::from_ref(&node)))?;
    product.take(OP)
}

/// [`spgemm`] evaluated with a detailed plan (what explain prints), and
/// the plan.
pub(super) fn spgemm_explained(a: &Csr, b: &Csr) -> Result<(Csr, crate::plan::Plan)> {
    let (node, product) = spgemm_node(a, b)?;
    let plan = crate::engine::with_current(|e| e.evaluate(std::slice::from_ref(&node), None))?;
    Ok((product.take(OP)?, plan))
}

/// Where the current engine would run `a @ b` and why (nothing runs).
pub(super) fn spgemm_plan(a: &Csr, b: &Csr) -> Result<crate::plan::Plan> {
    let (node, _) = spgemm_node(a, b)?;
    crate::engine::with_current(|e| e.plan(std::slice::from_ref(&node), None))
}

const OP: &str = "sparse_matmul";

/// Records `a @ b` as a library call ([`crate::op::Library::SparseSparse`])
/// whose array output is the product's row pointers (int64, `nrows + 1`);
/// the whole product lands in the returned slot when the call runs.
pub(crate) fn spgemm_node(a: &Csr, b: &Csr) -> Result<(Array, Arc<Product>)> {
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
    // The per-row counts (two words a row) must fit before they are made.
    crate::limits::check_bytes(
        OP,
        (a.nrows() as f64 + 1.0) * 16.0,
        &[a.nrows(), b.ncols()],
        d,
    )?;
    let counts = RowCounts::of(&a.data, &b.data);
    let bound = counts.bound() as f64;
    check_output_fits(OP, &a, &b, d, bound)?;
    let product = Arc::new(Product(OnceLock::new()));
    let op = SpGemm {
        a,
        b,
        counts,
        bound,
        product: Arc::clone(&product),
    };
    let rows = op.a.nrows() + 1;
    let node = Array::library(
        crate::op::Library::SparseSparse(op),
        vec![(vec![rows], DType::I64)],
        vec![],
    )?
    .pop()
    .ok_or_else(|| Error::internal(OP, "library call made no output"))?;
    Ok((node, product))
}

/// Where a sparse-sparse product puts its result (set once, by whichever
/// backend ran it).
#[derive(Debug)]
pub(crate) struct Product(OnceLock<Csr>);

impl Product {
    /// The product, once computed.
    fn take(&self, op: &'static str) -> Result<Csr> {
        self.0
            .get()
            .cloned()
            .ok_or_else(|| Error::internal(op, "the product was not computed"))
    }
}

/// Refuses a product whose output cannot fit in memory before anything is
/// allocated (a failed allocation aborts): at most `bound` nonzeros, held
/// twice (chunks, then the result), plus a dense accumulator row per
/// thread.
fn check_output_fits(op: &'static str, a: &Csr, b: &Csr, d: DType, bound: f64) -> Result<()> {
    let (ad, bd) = (&a.data, &b.data);
    let n = bd.ncols as f64;
    let per = (d.size() + 4) as f64;
    let threads = crate::cpu::threads() as f64;
    let bytes = 2.0 * bound * per + (ad.nrows as f64 + 1.0) * 8.0 + threads * n * per;
    crate::limits::check_bytes(op, bytes, &[ad.nrows, bd.ncols], d)
}

/// A CSR matrix times a CSR matrix ([`crate::op::Library::SparseSparse`]):
/// both operands in one dtype, the product delivered through a slot (its
/// number of entries is known only once computed).
#[derive(Debug)]
pub struct SpGemm {
    a: Csr,
    b: Csr,
    /// Multiply-adds and bounds per row.
    counts: RowCounts,
    /// Upper bound of the product's stored entries.
    bound: f64,
    product: Arc<Product>,
}

impl SpGemm {
    /// The operands' arrays (one dtype).
    pub(crate) fn parts(&self) -> (&Arc<CsrData>, &Arc<CsrData>) {
        (&self.a.data, &self.b.data)
    }

    /// The dtype the product computes in (both operands').
    pub fn dtype(&self) -> DType {
        self.a.dtype()
    }

    /// Upper bound of the product's stored entries.
    pub(crate) fn bound(&self) -> f64 {
        self.bound
    }

    /// Hands the computed product to the caller; returns its row pointers
    /// as the call's output (int64, row-major).
    pub(crate) fn deliver(&self, c: Csr) -> Result<Value> {
        let ptr: Vec<i64> = c.data.indptr.iter().map(|&p| p as i64).collect();
        let value = Value {
            buffer: Arc::new(Buffer::from_elements(&ptr)?),
            layout: Layout::contiguous(&[ptr.len()]),
        };
        // A second run of the same call (never made) would keep the first.
        let _ = self.product.0.set(c);
        Ok(value)
    }

    pub fn name(&self) -> &'static str {
        OP
    }

    pub fn key(&self) -> String {
        format!(
            "{OP} {:?}x{:?} nnz={}x{} products={} {}",
            self.a.shape(),
            self.b.shape(),
            self.a.nnz(),
            self.b.nnz(),
            self.counts.products(),
            self.a.dtype()
        )
    }

    pub fn flops(&self) -> f64 {
        2.0 * self.counts.products() as f64
    }

    pub fn bytes(&self) -> f64 {
        let per = (4 + self.a.dtype().size()) as f64;
        ((self.a.nnz() + self.b.nnz()) as f64 + self.bound) * per
            + ((self.a.nrows() + self.b.nrows()) * 8 + self.a.nrows() * 8) as f64
    }

    pub fn run_cpu(&self, _inputs: &[Value]) -> Result<Vec<Value>> {
        let (a, b, counts) = (&self.a.data, &self.b.data, &self.counts);
        // On the calling thread, not in `pool().install` (`spgemm.rs`).
        let c = crate::error::catch_panic(OP, || {
            Ok(match (&a.values, &b.values) {
                (Values::F32(av), Values::F32(bv)) => spgemm_cpu(a, av, b, bv, counts),
                (Values::F64(av), Values::F64(bv)) => spgemm_cpu(a, av, b, bv, counts),
                _ => return Err(Error::internal(OP, "operands of two dtypes")),
            })
        })?;
        self.deliver(c).map(|v| vec![v])
    }
}

// ---- sparse @ dense -----------------------------------------------------------

/// A CSR matrix times a dense vector or matrix
/// ([`crate::op::Library::SparseDense`]).
#[derive(Debug)]
pub struct SpMM {
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
    Array::library(
        crate::op::Library::SparseDense(op),
        vec![(out_shape, d)],
        vec![x],
    )?
    .pop()
    .ok_or_else(|| Error::internal(OP, "library call made no output"))
}

impl SpMM {
    /// The sparse matrix's arrays and the dense operand's columns.
    pub(crate) fn parts(&self) -> (&Arc<CsrData>, usize) {
        (&self.a.data, self.k)
    }

    pub fn name(&self) -> &'static str {
        "sparse_matmul_dense"
    }

    pub fn key(&self) -> String {
        format!(
            "sparse_matmul_dense {:?} nnz={} k={} {}",
            self.a.shape(),
            self.a.nnz(),
            self.k,
            self.a.dtype()
        )
    }

    pub fn flops(&self) -> f64 {
        2.0 * (self.a.nnz() * self.k) as f64
    }

    pub fn bytes(&self) -> f64 {
        let s = self.a.dtype().size();
        (self.a.nnz() * (4 + s) + (self.a.ncols() + self.a.nrows()) * self.k * s) as f64
    }

    pub fn run_cpu(&self, inputs: &[Value]) -> Result<Vec<Value>> {
        let x = &inputs[0];
        crate::linalg::run_library(
            "sparse_matmul_dense",
            true,
            |_| with_values!(&self.a.data.values, v, T => self.run::<T>(v, x)),
        )
        .map(|v| vec![v])
    }
}

impl SpMM {
    fn run<T: SparseValue + Storage>(&self, av: &[T], x: &Value) -> Result<Value> {
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
            let (p0, p1) = (a.indptr[i], a.indptr[i + 1]);
            for (&c, &w) in a.indices[p0..p1].iter().zip(&av[p0..p1]) {
                let c = c as usize;
                for (oj, &xj) in o.iter_mut().zip(&xs[c * k..(c + 1) * k]) {
                    *oj += w * xj;
                }
            }
        };
        if k > 0 && crate::cpu::threads() == 1 {
            // One thread (or a forked child): no rayon, whose global pool
            // `par_chunks_mut` outside the engine's would wake.
            for (i, o) in out.chunks_mut(k).enumerate() {
                row(i, o);
            }
        } else if k > 0 {
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
