//! Matrix products (`a @ b`), 2-D and batched, with NumPy's rules for 1-D
//! operands and batch broadcasting.

use super::{batch_offsets, flop_factor, mat_at, mat_strides, nbytes, output, Field};
use crate::array::{Array, Value};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{broadcast_shapes, numel};
use faer::{Accum, MatRef, Par};
use std::sync::Mutex;

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
                if k == 0 {
                    dst.fill(T::zero_());
                    return;
                }
                let dst = super::row_major_mut(dst, m, n);
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
            let mnk = m.saturating_mul(n).saturating_mul(k);
            if k > 0 && mnk as f64 >= super::blas::min_mnk(self.dtype) {
                // Every matrix of a batch has the same strides, so the
                // first product tells whether the BLAS takes them all.
                // (Were its thread count to change mid-batch, faer runs the
                // rest one by one.)
                let mut blas_ran = 0;
                for (bi, dst) in out.chunks_mut(m * n).enumerate() {
                    if blas_ran < bi {
                        one(dst, bi, Par::Seq);
                        continue;
                    }
                    // SAFETY: as in `one`.
                    let (lhs, rhs) = unsafe {
                        (
                            mat_at(ad, a_offs[bi], m, k, ars, acs),
                            mat_at(bd, b_offs[bi], k, n, brs, bcs),
                        )
                    };
                    if T::blas_product(dst, lhs, rhs) {
                        blas_ran += 1;
                    } else if bi == 0 {
                        break;
                    } else {
                        one(dst, bi, Par::Seq);
                    }
                }
                if blas_ran > 0 {
                    return Ok(());
                }
            }
            let tasks = row_tasks(m, mnk, std::mem::size_of::<T>());
            if (nb == 1 && tasks.is_some()) || (nb > 1 && mnk <= BATCH_PARALLEL_MAX_MNK) {
                // On the calling thread (helpers join when they wake), not
                // in `pool().install`, whose wake-ups cost more than a small
                // product (`cpu/tasks.rs`).
                return crate::error::catch_panic("matmul", || {
                    if let (1, Some(tasks)) = (nb, tasks) {
                        // SAFETY: as in `one`.
                        let (lhs, rhs) = unsafe {
                            (
                                mat_at(ad, a_offs[0], m, k, ars, acs),
                                mat_at(bd, b_offs[0], k, n, brs, bcs),
                            )
                        };
                        if k == 0 {
                            out.fill(T::zero_());
                        } else {
                            product_rows(out, lhs, rhs, tasks);
                        }
                    } else {
                        let mats: Vec<Mutex<&mut [T]>> =
                            out.chunks_mut(m * n).map(Mutex::new).collect();
                        crate::cpu::for_each_task(nb, |bi| {
                            let mut dst = mats[bi].lock().unwrap_or_else(|e| e.into_inner());
                            one(&mut dst, bi, Par::Seq);
                        });
                    }
                    Ok(())
                });
            }
            super::run_library("matmul", true, |p| {
                for (bi, dst) in out.chunks_mut(m * n).enumerate() {
                    one(dst, bi, p);
                }
                Ok(())
            })
        })
    }
}

/// Largest `m*n*k` of a single product that runs as row blocks on the
/// calling thread and the pool's helpers (each block a sequential faer
/// product); larger ones use faer's own parallel product, which splits one
/// product between its threads (Intel Xeon, 2 threads, f32: row blocks win
/// to 384^3, tie at 448^3, lose by 25% at 512^3). Measured: see
/// docs/benchmarks.md, "Small matrix products" and "Matrix products on an
/// Intel Xeon".
const SPLIT_MAX_MNK: usize = 400 * 400 * 400;

/// Below this many multiply-adds times the element size a product is one
/// task: a helper's wake-up costs more than it would take over (measured,
/// idle machine: 2 blocks lose at f32 64^3, about 5 us of work, and win at
/// f64 64^3 and f32 80^3, 9 us).
const SEQ_MAX_WORK: usize = 1536 * 1024;

/// Rows of C per task at least (faer's sequential kernel loses speed on
/// thinner blocks).
const MIN_TASK_ROWS: usize = 32;

/// Row blocks for a single product with `m` rows and `mnk` multiply-adds
/// of `size`-byte elements: one below [`SEQ_MAX_WORK`], else one per
/// thread (each block packs all of B again, so more blocks cost more than a
/// late helper does: 2 blocks beat 8 at every size from 80 to 448 on two
/// threads; the caller takes a block no helper has taken); `None` where
/// faer's parallel product should run it (large, or too few rows to split).
fn row_tasks(m: usize, mnk: usize, size: usize) -> Option<usize> {
    let threads = crate::cpu::threads();
    if mnk > SPLIT_MAX_MNK {
        return None;
    }
    if threads <= 1 || mnk.saturating_mul(size) < SEQ_MAX_WORK {
        return Some(1);
    }
    let tasks = (m / MIN_TASK_ROWS).min(threads);
    (tasks >= 2).then_some(tasks)
}

/// `out (m x n, row-major) = lhs rhs` with the rows of `out` split into
/// `tasks` blocks run by [`crate::cpu::for_each_task`], each a sequential
/// faer product (`k > 0`).
fn product_rows<T: Field>(out: &mut [T], lhs: MatRef<'_, T>, rhs: MatRef<'_, T>, tasks: usize) {
    let (m, n) = (lhs.nrows(), rhs.ncols());
    if tasks <= 1 {
        let dst = super::row_major_mut(out, m, n);
        faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, T::one_impl(), Par::Seq);
        return;
    }
    let start = |t: usize| m * t / tasks;
    let mut blocks = Vec::with_capacity(tasks);
    let mut rest = out;
    for t in 0..tasks {
        let (block, tail) = rest.split_at_mut((start(t + 1) - start(t)) * n);
        blocks.push(Mutex::new(block));
        rest = tail;
    }
    crate::cpu::for_each_task(tasks, |t| {
        let (r0, rows) = (start(t), start(t + 1) - start(t));
        let mut block = blocks[t].lock().unwrap_or_else(|e| e.into_inner());
        let dst = super::row_major_mut(&mut block, rows, n);
        let lhs = lhs.subrows(r0, rows);
        faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, T::one_impl(), Par::Seq);
    });
}

/// Benchmark hook (examples/matmul_small.rs): `c = a @ b` for square
/// row-major `n x n` f32 operands in `tasks` row blocks, on the calling
/// thread and the engine's pool; false (nothing written) when a length is
/// not `n*n`.
#[doc(hidden)]
pub fn bench_product_rows_f32(c: &mut [f32], a: &[f32], b: &[f32], n: usize, tasks: usize) -> bool {
    bench_rows(c, a, b, n, tasks)
}

/// [`bench_product_rows_f32`] for f64.
#[doc(hidden)]
pub fn bench_product_rows_f64(c: &mut [f64], a: &[f64], b: &[f64], n: usize, tasks: usize) -> bool {
    bench_rows(c, a, b, n, tasks)
}

fn bench_rows<T: Field>(c: &mut [T], a: &[T], b: &[T], n: usize, tasks: usize) -> bool {
    if n == 0 || [c.len(), a.len(), b.len()] != [n * n; 3] {
        return false;
    }
    let s = n as isize;
    // SAFETY: both slices hold n*n row-major elements.
    let (lhs, rhs) = unsafe { (mat_at(a, 0, n, n, s, 1), mat_at(b, 0, n, n, s, 1)) };
    product_rows(c, lhs, rhs, tasks.max(1));
    true
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_product_within_bound, rand};
    use super::*;

    /// `product_rows` in `tasks` blocks against an f64 product, element by
    /// element, within the rounding bound `(k + 2) u sum_p |a_ip b_pj|`; A
    /// is read transposed when `a_t` (column-major storage).
    fn check<T: Field + Into<f64>>(
        m: usize,
        k: usize,
        n: usize,
        a_t: bool,
        tasks: usize,
        u: f64,
        cvt: fn(f64) -> T,
    ) {
        let av: Vec<f64> = rand((m * 1000 + k) as u64, m * k)
            .into_iter()
            .map(|x| cvt(x).into())
            .collect();
        let bv: Vec<f64> = rand((n * 1000 + k + 7) as u64, k * n)
            .into_iter()
            .map(|x| cvt(x).into())
            .collect();
        let a_store: Vec<T> = if a_t {
            (0..m * k).map(|t| cvt(av[(t % m) * k + t / m])).collect()
        } else {
            av.iter().map(|&x| cvt(x)).collect()
        };
        let b_store: Vec<T> = bv.iter().map(|&x| cvt(x)).collect();
        let (ars, acs) = if a_t {
            (1, m as isize)
        } else {
            (k as isize, 1)
        };
        // SAFETY: the buffers hold m*k and k*n elements in these layouts.
        let (lhs, rhs) = unsafe {
            (
                mat_at(&a_store, 0, m, k, ars, acs),
                mat_at(&b_store, 0, k, n, n as isize, 1),
            )
        };
        let mut c = vec![cvt(f64::NAN); m * n];
        product_rows(&mut c, lhs, rhs, tasks);
        assert_product_within_bound(
            (m, k, n),
            |i, p| av[i * k + p],
            |p, j| bv[p * n + j],
            |i, j| c[i * n + j].into(),
            u,
            1,
            &format!("{m}x{k}x{n} a_t {a_t} tasks {tasks}"),
        );
    }

    #[test]
    fn row_blocks_match_f64_reference_across_edges() {
        const EDGES: [usize; 9] = [1, 15, 16, 17, 63, 64, 65, 100, 129];
        for (x, &m) in EDGES.iter().enumerate() {
            for (y, &n) in EDGES.iter().enumerate() {
                let k = EDGES[(x + 2 * y) % EDGES.len()];
                for tasks in [1, 2, 3, 8] {
                    let a_t = (x + y + tasks) % 2 == 1;
                    check::<f32>(m, k, n, a_t, tasks.min(m), f32::EPSILON as f64 / 2.0, |v| {
                        v as f32
                    });
                    check::<f64>(m, k, n, !a_t, tasks.min(m), f64::EPSILON / 2.0, |v| v);
                }
            }
        }
    }

    #[test]
    fn row_tasks_split_only_what_pays() {
        assert_eq!(row_tasks(10, 10 * 10 * 10, 8), Some(1));
        assert_eq!(row_tasks(64, 64 * 64 * 64, 4), Some(1));
        assert_eq!(row_tasks(2000, 2000 * 2000 * 2000, 4), None);
        if crate::cpu::threads() > 1 {
            let t = row_tasks(256, 256 * 256 * 256, 4).unwrap_or(0);
            assert_eq!(t, crate::cpu::threads().min(8), "{t}");
            assert_eq!(row_tasks(512, 512 * 512 * 512, 4), None);
            assert!(row_tasks(64, 64 * 64 * 64, 8).unwrap_or(0) >= 2);
            // Too few rows to split: faer's parallel product.
            assert_eq!(row_tasks(8, 8 * 4096 * 1024, 4), None);
        }
    }
}
