//! The outer mode of CPU reductions (the reduced axes lead: `sum(axis=0)`
//! of a row-major matrix): column blocks accumulated row by row, struct of
//! arrays, so each accumulator is one vectorised pass per row.

use super::*;

/// Column blocks of the outer mode are this wide.
const COLS: usize = CHUNK;
/// Fewest rows per row block when the outer mode also splits rows.
const OUTER_MIN_ROWS: usize = 128;

pub(super) fn run_outer<T: Tasks>(
    prep: &Prepared<'_>,
    plan: &ReducePlan,
    outs: &[OutPtr],
    parallel: bool,
    reg: Reg,
) {
    let (rows, cols) = (plan.reduced, plan.kept);
    let needs = Needs::of(&plan.ops);
    let col_blocks = cols.div_ceil(COLS);
    // Few column blocks: also split rows (a fixed count, so results do not
    // depend on the thread count).
    // At least OUTER_MIN_ROWS rows per block: each block costs one state
    // per column to build and merge, which dominated short blocks.
    let row_blocks = if col_blocks >= 8 {
        1
    } else {
        (rows / OUTER_MIN_ROWS).clamp(1, 32)
    };
    let rows_per = rows.div_ceil(row_blocks).max(1);
    let row_blocks = rows.div_ceil(rows_per).max(1);
    let task = |t: usize| -> Vec<State<T>> {
        let (cb, rb) = (t % col_blocks, t / col_blocks);
        let (c0, c1) = (cb * COLS, ((cb + 1) * COLS).min(cols));
        let (r0, r1) = (rb * rows_per, ((rb + 1) * rows_per).min(rows));
        scratch(|sc| outer_task::<T>(prep, plan, needs, sc, (c0, c1), (r0, r1), reg))
    };
    let n_tasks = col_blocks * row_blocks;
    let parts: Vec<Vec<State<T>>> = if parallel && n_tasks > 1 {
        crate::cpu::map_tasks(n_tasks, task)
    } else {
        (0..n_tasks).map(task).collect()
    };
    for cb in 0..col_blocks {
        let mut acc = parts[cb].clone();
        for rb in 1..row_blocks {
            for (a, b) in acc.iter_mut().zip(&parts[rb * col_blocks + cb]) {
                a.merge(b, needs);
            }
        }
        for (j, st) in acc.iter().enumerate() {
            finalize(&plan.ops, outs, st, cb * COLS + j);
        }
    }
}

/// Column-wise accumulators of one column block (struct of arrays).
pub(super) struct ColStates<T> {
    r0: usize,
    sum: Vec<f64>,
    isum: Vec<i64>,
    prod: Vec<f64>,
    iprod: Vec<i64>,
    mean: Vec<f64>,
    m2: Vec<f64>,
    mins: Vec<T>,
    min_at: Vec<u64>,
    maxs: Vec<T>,
    max_at: Vec<u64>,
}

impl<T: RNum> ColStates<T> {
    fn new(w: usize, r0: usize) -> Self {
        ColStates {
            r0,
            sum: vec![0.0; w],
            isum: vec![0; w],
            prod: vec![1.0; w],
            iprod: vec![1; w],
            mean: vec![0.0; w],
            m2: vec![0.0; w],
            mins: vec![T::default(); w],
            min_at: vec![r0 as u64; w],
            maxs: vec![T::default(); w],
            max_at: vec![r0 as u64; w],
        }
    }

    /// Adds row `r` (the reduced index) of this block's columns.
    #[inline(always)]
    pub(super) fn add_row(&mut self, v: Arg<'_, T>, r: usize, needs: Needs) {
        let w = self.sum.len();
        match v {
            // One pass per accumulator over plain slices, which the compiler
            // vectorises (a per-element `Arg` match and bounds checks in an
            // indexed loop kept it scalar: 10x slower than NumPy on columns).
            Arg::Slice(s) => self.add_cols(0, &s[..w], r, needs),
            Arg::Splat(x) => {
                let row = [x; LANES];
                let mut j0 = 0;
                while j0 < w {
                    let j1 = (j0 + LANES).min(w);
                    self.add_cols(j0, &row[..j1 - j0], r, needs);
                    j0 = j1;
                }
            }
        }
    }

    /// Adds row `r`'s values `s` for columns `j0..j0 + s.len()`.
    #[inline(always)]
    fn add_cols(&mut self, j0: usize, s: &[T], r: usize, needs: Needs) {
        let j1 = j0 + s.len();
        if r == self.r0 {
            self.mins[j0..j1].copy_from_slice(s);
            self.maxs[j0..j1].copy_from_slice(s);
        }
        if needs.sum {
            if T::IS_INT {
                for (acc, &x) in self.isum[j0..j1].iter_mut().zip(s) {
                    *acc = acc.wrapping_add(x.as_i64());
                }
            }
            for (acc, &x) in self.sum[j0..j1].iter_mut().zip(s) {
                *acc += x.to_f64();
            }
        }
        if needs.prod {
            if T::IS_INT {
                for (acc, &x) in self.iprod[j0..j1].iter_mut().zip(s) {
                    *acc = acc.wrapping_mul(x.as_i64());
                }
            }
            for (acc, &x) in self.prod[j0..j1].iter_mut().zip(s) {
                *acc *= x.to_f64();
            }
        }
        if needs.moments {
            let n = (r - self.r0 + 1) as f64;
            for ((mean, m2), &x) in self.mean[j0..j1]
                .iter_mut()
                .zip(self.m2[j0..j1].iter_mut())
                .zip(s)
            {
                let x = x.to_f64();
                let d = x - *mean;
                *mean += d / n;
                *m2 += d * (x - *mean);
            }
        }
        if r > self.r0 {
            // NaN wins and stays; ties keep the earlier index.
            if needs.min {
                if needs.arg {
                    for ((m, at), &x) in self.mins[j0..j1]
                        .iter_mut()
                        .zip(self.min_at[j0..j1].iter_mut())
                        .zip(s)
                    {
                        let take = !m.is_nan() && (x.is_nan() || x < *m);
                        *m = if take { x } else { *m };
                        *at = if take { r as u64 } else { *at };
                    }
                } else {
                    for (m, &x) in self.mins[j0..j1].iter_mut().zip(s) {
                        let take = !m.is_nan() && (x.is_nan() || x < *m);
                        *m = if take { x } else { *m };
                    }
                }
            }
            if needs.max {
                if needs.arg {
                    for ((m, at), &x) in self.maxs[j0..j1]
                        .iter_mut()
                        .zip(self.max_at[j0..j1].iter_mut())
                        .zip(s)
                    {
                        let take = !m.is_nan() && (x.is_nan() || x > *m);
                        *m = if take { x } else { *m };
                        *at = if take { r as u64 } else { *at };
                    }
                } else {
                    for (m, &x) in self.maxs[j0..j1].iter_mut().zip(s) {
                        let take = !m.is_nan() && (x.is_nan() || x > *m);
                        *m = if take { x } else { *m };
                    }
                }
            }
        }
    }

    fn finish(self, rows: usize, needs: Needs) -> Vec<State<T>> {
        let n = rows as u64;
        (0..self.sum.len())
            .map(|j| State {
                n,
                sum: self.sum[j],
                isum: self.isum[j],
                prod: self.prod[j],
                iprod: self.iprod[j],
                mean: if needs.moments {
                    self.mean[j]
                } else {
                    self.sum[j] / n as f64
                },
                m2: self.m2[j],
                min: self.mins[j],
                min_at: self.min_at[j],
                max: self.maxs[j],
                max_at: self.max_at[j],
            })
            .collect()
    }
}

/// Accumulates rows `r0..r1` of columns `c0..c1` column-wise (Welford for
/// the moments; the row is the reduced index).
fn outer_task<T: Tasks>(
    prep: &Prepared<'_>,
    plan: &ReducePlan,
    needs: Needs,
    sc: &mut Scratch,
    (c0, c1): (usize, usize),
    (r0, r1): (usize, usize),
    out_reg: Reg,
) -> Vec<State<T>> {
    let w = c1 - c0;
    let mut st = ColStates::<T>::new(w, r0);
    for r in r0..r1 {
        // Every 64 rows, give way to a stop request (the caller reports it).
        if r % 64 == 0 && crate::interrupt::requested() {
            break;
        }
        let start = r * plan.kept + c0;
        prep.eval_chunk(sc, start, w);
        let v = prep.arg::<T>(sc, out_reg, start, w);
        T::rows(&mut st, v, r, needs);
    }
    st.finish(r1 - r0, needs)
}
