//! The CPU's sparse @ sparse product: Gustavson's algorithm (SciPy's SMMP
//! in one pass) with a dense accumulator row per participant.
//!
//! Every row of the product sums its terms in one fixed order (`a`'s
//! entries, then `b`'s, per column), whatever the task split, so results do
//! not depend on the thread count, and the GPU core's merge kernel
//! reproduces them bit for bit.
//!
//! A row's columns come out sorted without a sort where a bitmap of the
//! columns is short next to the row's work: the products set bits, and a
//! scan of the bitmap emits the columns in order (about 8 words per
//! product at most). Rows much sparser than their width keep a list of the
//! columns they touch and sort it.
//!
//! Small products run on the calling thread; bigger ones are split by
//! multiply-adds into tasks for `cpu::tasks` (the caller works at once and
//! never sleeps: a rayon `install` from Python's thread cost two sleeping
//! round trips, tens of microseconds, per product).

use super::{Csr, CsrData, SparseValue};
use std::any::Any;
use std::cell::Cell;
use std::mem::MaybeUninit;
use std::sync::Mutex;

/// Per-row counts of `a @ b`, as prefix sums over the rows of `a`.
#[derive(Debug)]
pub(crate) struct RowCounts {
    /// `products[i]`: multiply-adds of rows `0..i` (`nrows + 1` entries).
    products: Vec<usize>,
    /// `caps[i]`: upper bound of the stored entries of rows `0..i` (a row
    /// holds at most `min(products, ncols)`).
    caps: Vec<usize>,
}

impl RowCounts {
    pub(crate) fn of(a: &CsrData, b: &CsrData) -> RowCounts {
        let n = b.ncols;
        let mut products = Vec::with_capacity(a.nrows + 1);
        let mut caps = Vec::with_capacity(a.nrows + 1);
        let (mut p, mut c) = (0usize, 0usize);
        products.push(0);
        caps.push(0);
        for i in 0..a.nrows {
            let row: usize = a.indices[a.indptr[i]..a.indptr[i + 1]]
                .iter()
                .map(|&k| b.indptr[k as usize + 1] - b.indptr[k as usize])
                .sum();
            p += row;
            c += row.min(n);
            products.push(p);
            caps.push(c);
        }
        RowCounts { products, caps }
    }

    /// Multiply-adds of the whole product.
    pub(crate) fn products(&self) -> usize {
        self.products.last().copied().unwrap_or(0)
    }

    /// Upper bound of the product's stored entries.
    pub(crate) fn bound(&self) -> usize {
        self.caps.last().copied().unwrap_or(0)
    }
}

/// Multiply-adds per task (about 10 us of work): a product with fewer runs
/// on the calling thread, where a split (about 1 us, `cpu/tasks.rs`) and a
/// copy of the chunks would cost more than a second thread saves.
const TASK_PRODUCTS: usize = 4096;

/// Accumulators longer than this many values are freed after the product
/// rather than kept for the next one on the thread.
const KEEP_SCRATCH: usize = 1 << 16;

/// Bitmap words scanned per multiply-add at most for a row to take the
/// bitmap path (the scan is a load and a test per empty word; the sort it
/// replaces costs a few ns per column times log2 of the row's columns).
const WORDS_PER_PRODUCT: usize = 8;

/// `a @ b` on the CPU, split by the thread count.
pub(crate) fn spgemm_cpu<T: SparseValue>(
    a: &CsrData,
    av: &[T],
    b: &CsrData,
    bv: &[T],
    counts: &RowCounts,
) -> Csr {
    let tasks = (counts.products() / TASK_PRODUCTS).clamp(1, 4 * crate::cpu::threads());
    spgemm_tasks(a, av, b, bv, counts, tasks)
}

/// The rows of one task and where they go.
struct Region<'a> {
    rows: std::ops::Range<usize>,
    /// Entries of each row (filled in).
    nnz: &'a mut [usize],
}

/// `a @ b` in `tasks` tasks of about equal multiply-adds (the result is
/// the same for every `tasks`).
pub(crate) fn spgemm_tasks<T: SparseValue>(
    a: &CsrData,
    av: &[T],
    b: &CsrData,
    bv: &[T],
    counts: &RowCounts,
    tasks: usize,
) -> Csr {
    let (m, n) = (a.nrows, b.ncols);
    let tasks = tasks.clamp(1, m.max(1));
    let total = counts.products() as u128;
    let starts: Vec<usize> = (0..=tasks)
        .map(|t| {
            let target = (total * t as u128 / tasks as u128) as usize;
            if t == tasks {
                m
            } else {
                counts.products.partition_point(|&p| p < target).min(m)
            }
        })
        .collect();
    // Row counts first, turned into row pointers at the end.
    let mut indptr = vec![0usize; m + 1];
    let (mut indices, mut values): (Vec<u32>, Vec<T>);
    // The rows of `region` into vectors sized by their bound.
    let fill = |region: &mut Region<'_>| -> (Vec<u32>, Vec<T>) {
        let cap = counts.caps[region.rows.end] - counts.caps[region.rows.start];
        let mut ci: Vec<u32> = Vec::with_capacity(cap);
        let mut cv: Vec<T> = Vec::with_capacity(cap);
        let written = with_scratch(n, |s| {
            let (ri, rv) = (
                &mut ci.spare_capacity_mut()[..cap],
                &mut cv.spare_capacity_mut()[..cap],
            );
            run_rows(a, av, b, bv, counts, region, ri, rv, s)
        });
        // SAFETY: `run_rows` wrote entries 0..written of the spare
        // capacity (it returns how many it wrote, at most `cap`).
        unsafe {
            ci.set_len(written);
            cv.set_len(written);
        }
        (ci, cv)
    };
    if tasks == 1 {
        // One task writes straight into the result (no copy).
        (indices, values) = fill(&mut Region {
            rows: 0..m,
            nnz: &mut indptr[1..],
        });
    } else {
        // Each task fills a chunk of its own (sized by its rows' bound);
        // the chunks are then copied, in parallel, to their exact places.
        let chunks: Vec<(Vec<u32>, Vec<T>)> = {
            let mut regions = Vec::with_capacity(tasks);
            let mut rest = &mut indptr[1..];
            for t in 0..tasks {
                let rows = starts[t]..starts[t + 1];
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(rows.len());
                regions.push(Mutex::new(Region { rows, nnz: head }));
                rest = tail;
            }
            crate::cpu::map_tasks(tasks, |t| {
                fill(&mut regions[t].lock().unwrap_or_else(|e| e.into_inner()))
            })
        };
        let total: usize = chunks.iter().map(|c| c.0.len()).sum();
        indices = Vec::with_capacity(total);
        values = Vec::with_capacity(total);
        {
            let mut parts = Vec::with_capacity(tasks);
            let (mut ri, mut rv) = (
                &mut indices.spare_capacity_mut()[..total],
                &mut values.spare_capacity_mut()[..total],
            );
            for (ci, _) in &chunks {
                let (hi, ti) = std::mem::take(&mut ri).split_at_mut(ci.len());
                let (hv, tv) = std::mem::take(&mut rv).split_at_mut(ci.len());
                parts.push(Mutex::new((hi, hv)));
                ri = ti;
                rv = tv;
            }
            crate::cpu::for_each_task(tasks, |t| {
                let mut part = parts[t].lock().unwrap_or_else(|e| e.into_inner());
                let (di, dv) = &mut *part;
                for (d, &s) in di.iter_mut().zip(&chunks[t].0) {
                    d.write(s);
                }
                for (d, &s) in dv.iter_mut().zip(&chunks[t].1) {
                    d.write(s);
                }
            });
        }
        // SAFETY: the chunks' lengths add up to `total`, and every slot of
        // 0..total was written above.
        unsafe {
            indices.set_len(total);
            values.set_len(total);
        }
    }
    for i in 0..m {
        indptr[i + 1] += indptr[i];
    }
    Csr::new_unchecked(m, n, indptr, indices, T::wrap(values))
}

/// A participant's accumulator. Between rows every value is zero and every
/// bit clear.
struct Scratch<T> {
    vals: Vec<T>,
    bits: Vec<u64>,
    touched: Vec<u32>,
}

thread_local! {
    /// The last accumulator used on this thread (a `Scratch<f32>` or
    /// `Scratch<f64>`), reused so a repeated product allocates none.
    static SCRATCH: Cell<Option<Box<dyn Any>>> = const { Cell::new(None) };
}

/// Runs `f` with this thread's accumulator for `n` columns. A panic inside
/// `f` drops the accumulator (it may hold partial sums), so the next call
/// starts from a zeroed one.
fn with_scratch<T: SparseValue, R>(n: usize, f: impl FnOnce(&mut Scratch<T>) -> R) -> R {
    let mut s = SCRATCH
        .take()
        .and_then(|b| b.downcast::<Scratch<T>>().ok())
        .map_or_else(
            || Scratch {
                vals: Vec::new(),
                bits: Vec::new(),
                touched: Vec::new(),
            },
            |b| *b,
        );
    if s.vals.len() < n {
        s.vals.resize(n, T::default());
        s.bits.resize(n.div_ceil(64), 0);
    }
    let r = f(&mut s);
    if s.vals.len() <= KEEP_SCRATCH {
        SCRATCH.set(Some(Box::new(s)));
    }
    r
}

/// Computes the rows of `region` into `out_i`/`out_v` (from their start,
/// room for the rows' bound), their counts into `region.nnz`; returns the
/// entries written.
#[allow(clippy::too_many_arguments)]
fn run_rows<T: SparseValue>(
    a: &CsrData,
    av: &[T],
    b: &CsrData,
    bv: &[T],
    counts: &RowCounts,
    region: &mut Region<'_>,
    out_i: &mut [MaybeUninit<u32>],
    out_v: &mut [MaybeUninit<T>],
    s: &mut Scratch<T>,
) -> usize {
    let n = b.ncols;
    let words = n.div_ceil(64);
    let zero = T::default();
    let Scratch {
        vals,
        bits,
        touched,
    } = s;
    let (vals, bits) = (&mut vals[..n], &mut bits[..words]);
    let mut w = 0usize;
    let r0 = region.rows.start;
    for i in region.rows.clone() {
        let start = w;
        let products = counts.products[i + 1] - counts.products[i];
        let (p0, p1) = (a.indptr[i], a.indptr[i + 1]);
        let terms = a.indices[p0..p1].iter().zip(&av[p0..p1]);
        // Each distinct column is written once at `w`, which advances past
        // it unless its sum is zero (dropped, as SciPy does): `w` stays
        // below this row's start plus its distinct columns, within bound.
        if products == 0 {
        } else if words <= WORDS_PER_PRODUCT * products {
            for (&k, &x) in terms {
                let (q0, q1) = (b.indptr[k as usize], b.indptr[k as usize + 1]);
                for (&j, &y) in b.indices[q0..q1].iter().zip(&bv[q0..q1]) {
                    let j = j as usize;
                    vals[j] += x * y;
                    bits[j / 64] |= 1 << (j % 64);
                }
            }
            for (wi, word) in bits.iter_mut().enumerate() {
                if *word == 0 {
                    continue;
                }
                let mut m = std::mem::take(word);
                while m != 0 {
                    let j = wi * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    let v = std::mem::replace(&mut vals[j], zero);
                    out_i[w].write(j as u32);
                    out_v[w].write(v);
                    w += (v != zero) as usize;
                }
            }
        } else {
            touched.clear();
            for (&k, &x) in terms {
                let (q0, q1) = (b.indptr[k as usize], b.indptr[k as usize + 1]);
                for (&j, &y) in b.indices[q0..q1].iter().zip(&bv[q0..q1]) {
                    let ju = j as usize;
                    let (word, bit) = (&mut bits[ju / 64], 1u64 << (ju % 64));
                    if *word & bit == 0 {
                        *word |= bit;
                        touched.push(j);
                    }
                    vals[ju] += x * y;
                }
            }
            touched.sort_unstable();
            for &j in touched.iter() {
                let ju = j as usize;
                let v = std::mem::replace(&mut vals[ju], zero);
                bits[ju / 64] = 0;
                out_i[w].write(j);
                out_v[w].write(v);
                w += (v != zero) as usize;
            }
        }
        region.nnz[i - r0] = w - start;
    }
    w
}

#[cfg(test)]
#[path = "spgemm_tests.rs"]
mod tests;
