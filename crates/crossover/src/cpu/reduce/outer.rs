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
    let task = |t: usize| -> ColStates<T> {
        let (cb, rb) = (t % col_blocks, t / col_blocks);
        let (c0, c1) = (cb * COLS, ((cb + 1) * COLS).min(cols));
        let (r0, r1) = (rb * rows_per, ((rb + 1) * rows_per).min(rows));
        scratch(|sc| outer_task::<T>(prep, plan, needs, sc, (c0, c1), (r0, r1), reg))
    };
    let n_tasks = col_blocks * row_blocks;
    let mut parts: Vec<ColStates<T>> = if parallel && n_tasks > 1 {
        crate::cpu::map_tasks(n_tasks, task)
    } else {
        (0..n_tasks).map(task).collect()
    };
    // Row blocks merge in index order, column-wise (the same arithmetic as
    // `State::merge`, so the bits do not depend on the layout).
    for cb in 0..col_blocks {
        let mut acc = std::mem::take(&mut parts[cb]);
        for rb in 1..row_blocks {
            acc.merge(&parts[rb * col_blocks + cb], needs);
        }
        for j in 0..acc.width() {
            finalize(&plan.ops, outs, &acc.state(j), cb * COLS + j);
        }
    }
}

/// Column-wise accumulators of one column block (struct of arrays); only
/// those the reduction needs are allocated (the others stay empty).
#[derive(Clone, Default)]
pub(super) struct ColStates<T> {
    r0: usize,
    /// Rows accumulated (set by `finish`).
    n: u64,
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
    fn new(w: usize, r0: usize, needs: Needs) -> Self {
        fn filled<V: Copy>(on: bool, w: usize, v: V) -> Vec<V> {
            if on {
                vec![v; w]
            } else {
                Vec::new()
            }
        }
        ColStates {
            r0,
            n: 0,
            sum: filled(needs.sum, w, 0.0),
            isum: filled(needs.sum && T::IS_INT, w, 0),
            prod: filled(needs.prod, w, 1.0),
            iprod: filled(needs.prod && T::IS_INT, w, 1),
            mean: filled(needs.moments, w, 0.0),
            m2: filled(needs.moments, w, 0.0),
            mins: filled(needs.min, w, T::default()),
            min_at: filled(needs.min && needs.arg, w, r0 as u64),
            maxs: filled(needs.max, w, T::default()),
            max_at: filled(needs.max && needs.arg, w, r0 as u64),
        }
    }

    /// Columns in this block.
    fn width(&self) -> usize {
        [
            self.sum.len(),
            self.prod.len(),
            self.m2.len(),
            self.mins.len(),
            self.maxs.len(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    /// Adds row `r` (the reduced index) of this block's columns.
    #[inline(always)]
    pub(super) fn add_row(&mut self, v: Arg<'_, T>, r: usize, needs: Needs) {
        let w = self.width();
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
            if needs.min {
                self.mins[j0..j1].copy_from_slice(s);
            }
            if needs.max {
                self.maxs[j0..j1].copy_from_slice(s);
            }
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

    fn finish(mut self, rows: usize) -> Self {
        self.n = rows as u64;
        self
    }

    /// Merges `b` (the next row block of the same columns) into `self`,
    /// column by column as [`State::merge`] does.
    fn merge(&mut self, b: &ColStates<T>, needs: Needs) {
        if b.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = b.clone();
            return;
        }
        if needs.moments {
            let (na, nb) = (self.n as f64, b.n as f64);
            for (((mean, m2), &bm), &bm2) in self
                .mean
                .iter_mut()
                .zip(self.m2.iter_mut())
                .zip(&b.mean)
                .zip(&b.m2)
            {
                merge_moments(mean, m2, bm, bm2, na, nb);
            }
        }
        for (a, &x) in self.sum.iter_mut().zip(&b.sum) {
            *a += x;
        }
        for (a, &x) in self.isum.iter_mut().zip(&b.isum) {
            *a = a.wrapping_add(x);
        }
        for (a, &x) in self.prod.iter_mut().zip(&b.prod) {
            *a *= x;
        }
        for (a, &x) in self.iprod.iter_mut().zip(&b.iprod) {
            *a = a.wrapping_mul(x);
        }
        // NaN wins and stays; ties keep the earlier index.
        let arg = needs.arg;
        for (j, (m, &x)) in self.mins.iter_mut().zip(&b.mins).enumerate() {
            if !m.is_nan() && (x.is_nan() || x < *m) {
                *m = x;
                if arg {
                    self.min_at[j] = b.min_at[j];
                }
            }
        }
        for (j, (m, &x)) in self.maxs.iter_mut().zip(&b.maxs).enumerate() {
            if !m.is_nan() && (x.is_nan() || x > *m) {
                *m = x;
                if arg {
                    self.max_at[j] = b.max_at[j];
                }
            }
        }
        self.n += b.n;
    }

    /// Column `j`'s state, for [`finalize`] (accumulators not kept read as
    /// their start values; `finalize` reads only those the ops need).
    fn state(&self, j: usize) -> State<T> {
        let f = |v: &[f64], d: f64| v.get(j).copied().unwrap_or(d);
        let i = |v: &[i64], d: i64| v.get(j).copied().unwrap_or(d);
        let at = |v: &[u64]| v.get(j).copied().unwrap_or(self.r0 as u64);
        State {
            n: self.n,
            sum: f(&self.sum, 0.0),
            isum: i(&self.isum, 0),
            prod: f(&self.prod, 1.0),
            iprod: i(&self.iprod, 1),
            mean: f(&self.mean, 0.0),
            m2: f(&self.m2, 0.0),
            min: self.mins.get(j).copied().unwrap_or_default(),
            min_at: at(&self.min_at),
            max: self.maxs.get(j).copied().unwrap_or_default(),
            max_at: at(&self.max_at),
        }
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
) -> ColStates<T> {
    let w = c1 - c0;
    let mut st = ColStates::<T>::new(w, r0, needs);
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
    st.finish(r1 - r0)
}
