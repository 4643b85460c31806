//! The outer mode of CPU reductions (the reduced axes lead: `sum(axis=0)`
//! of a row-major matrix): column blocks accumulated row by row, struct of
//! arrays, so each accumulator is one vectorised pass per row.

use super::*;

/// Column blocks of the outer mode are this wide.
const COLS: usize = CHUNK;
/// Fewest rows per row block when the outer mode also splits rows.
const OUTER_MIN_ROWS: usize = 128;
/// Most rows of computed values a task hands to one accumulation call.
const STEP_ROWS: usize = 64;
/// Rows of a strided block accumulated per pass over its accumulators
/// ([`ColStates::add_block`]). One row at a time, a 2,048-column block of
/// a 4096x4096 float32 `sum(axis=0)` read 7.7 GB/s on one core (the
/// accumulators' loads and stores, 16 bytes a point, against the point's
/// 4); eight at a time the same loop read 26 GB/s in a standalone test.
const ROW_GROUP: usize = 8;

pub(super) fn run_outer<T: Tasks>(
    prep: &Prepared<'_>,
    plan: &ReducePlan,
    outs: &[OutPtr],
    parallel: bool,
    reg: Reg,
) {
    let (rows, cols) = (plan.reduced, plan.kept);
    // Variances here are made from their own running means (Welford, or a
    // group's two-pass moments merged by Chan's formula), not from sums.
    let needs = Needs::of(&plan.ops);
    let col_blocks = cols.div_ceil(COLS);
    // Few column blocks: also split rows (a fixed count, so results do not
    // depend on the thread count), at least OUTER_MIN_ROWS rows per block
    // (each block costs one state per column to build and merge, which
    // dominated short blocks). Whole rows of 4,096 columns as one block
    // (accumulators filling L1) read 2.5x slower than two blocks (a
    // 4096x4096 float32 `sum(axis=0)` read in place 1.4x slower again in
    // session 53, eight rows at a time).
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

/// Columns per step of the accumulation loops: each works on fixed-size
/// arrays of this many lanes, which LLVM vectorises whatever it inlines
/// (loops indexing the rows' slices lost their vectorisation to bounds
/// checks once `add_block` grew, and closures passed to helpers were left
/// out of line, compiled without the SIMD level's features).
const L: usize = 16;

/// Runs `$body` for each `L`-column block of the accumulators `$a` and `$b`
/// (`$b` may be empty: a scratch block stands in) with `$x` the rows'
/// values there (`[[T; L]; R]`); a last partial block runs padded with
/// default values, whose lanes are dropped. A macro, so the body is always
/// compiled inline.
macro_rules! lanes {
    ($a:expr, $b:expr, $rows:expr, |$ab:ident, $bb:ident, $x:ident| $body:block) => {{
        let (a, b, rows) = ($a, $b, $rows);
        let w = a.len();
        debug_assert!(b.is_empty() || b.len() == w);
        // Every row cut to the block's width once: the loop's `j + L <= w`
        // then bounds each row's reads too, where a check per row and
        // block kept eight lengths in registers and spilled the rows'
        // pointers to the stack.
        let rows: [&[_]; R] = std::array::from_fn(|q| &rows[q][..w]);
        let mut j = 0;
        while j + L <= w {
            let mut $x = [[Default::default(); L]; R];
            for (xq, s) in $x.iter_mut().zip(rows) {
                xq.copy_from_slice(&s[j..j + L]);
            }
            let $x = $x;
            let (mut ta, mut tb) = ([Default::default(); L], [Default::default(); L]);
            ta.copy_from_slice(&a[j..j + L]);
            if !b.is_empty() {
                tb.copy_from_slice(&b[j..j + L]);
            }
            {
                let ($ab, $bb) = (&mut ta, &mut tb);
                $body
            }
            a[j..j + L].copy_from_slice(&ta);
            if !b.is_empty() {
                b[j..j + L].copy_from_slice(&tb);
            }
            j += L;
        }
        let n = w - j;
        if n > 0 {
            let mut $x: [[_; L]; R] = [[Default::default(); L]; R];
            for (xq, s) in $x.iter_mut().zip(rows) {
                xq[..n].copy_from_slice(&s[j..]);
            }
            let (mut ta, mut tb) = ([Default::default(); L], [Default::default(); L]);
            ta[..n].copy_from_slice(&a[j..]);
            if !b.is_empty() {
                tb[..n].copy_from_slice(&b[j..]);
            }
            {
                let ($ab, $bb) = (&mut ta, &mut tb);
                let $x = $x;
                $body
            }
            a[j..].copy_from_slice(&ta[..n]);
            if !b.is_empty() {
                b[j..].copy_from_slice(&tb[..n]);
            }
        }
    }};
}

/// Whether `b` (which comes after `a`) replaces `a` as the running extreme:
/// a NaN over a number (the first NaN wins and stays), else strictly
/// greater (`MAX`) or less; ties keep `a`.
#[inline(always)]
fn takes<T: RNum, const MAX: bool>(a: T, b: T) -> bool {
    !a.is_nan() && (b.is_nan() || if MAX { b > a } else { b < a })
}

/// [`takes`] lane by lane, values only.
#[inline(always)]
fn pick<T: RNum, const MAX: bool>(a: [T; L], b: [T; L]) -> [T; L] {
    let mut m = a;
    for l in 0..L {
        if takes::<T, MAX>(a[l], b[l]) {
            m[l] = b[l];
        }
    }
    m
}

/// [`takes`] lane by lane on (values, indices).
#[inline(always)]
fn pick_at<T: RNum, const MAX: bool>(
    a: ([T; L], [u64; L]),
    b: ([T; L], [u64; L]),
) -> ([T; L], [u64; L]) {
    let mut m = a;
    for l in 0..L {
        if takes::<T, MAX>(a.0[l], b.0[l]) {
            m.0[l] = b.0[l];
            m.1[l] = b.1[l];
        }
    }
    m
}

/// The group's extreme, lane by lane: [`pick`] over the rows as a pairwise
/// tree in row order (`takes` makes an associative choice: the first NaN,
/// else the first strict extreme), so the same value as row by row with a
/// chain of log2(R) steps instead of R. A tree of plain strict comparisons
/// (`vmaxps`) with the group's first NaN found apart gave the same values
/// in fewer operations and the same time (session 54: 0.143-0.149 ns a
/// float32 value on one core either way): the loop waits on its eight rows'
/// reads, not on its compares.
#[inline(always)]
fn tree_pick<T: RNum, const R: usize, const MAX: bool>(x: [[T; L]; R]) -> [T; L] {
    if let [v0, v1, v2, v3, v4, v5, v6, v7] = x[..] {
        let (a, b) = (pick::<T, MAX>(v0, v1), pick::<T, MAX>(v2, v3));
        let (c, d) = (pick::<T, MAX>(v4, v5), pick::<T, MAX>(v6, v7));
        return pick::<T, MAX>(pick::<T, MAX>(a, b), pick::<T, MAX>(c, d));
    }
    let mut m = x[0];
    for &v in &x[1..] {
        m = pick::<T, MAX>(m, v);
    }
    m
}

/// [`tree_pick`] with indices: row `q` of the group is row `r + q`.
#[inline(always)]
fn tree_pick_at<T: RNum, const R: usize, const MAX: bool>(
    x: [[T; L]; R],
    r: usize,
) -> ([T; L], [u64; L]) {
    let mut v = [([T::default(); L], [0u64; L]); R];
    for (q, vq) in v.iter_mut().enumerate() {
        *vq = (x[q], [(r + q) as u64; L]);
    }
    if let [v0, v1, v2, v3, v4, v5, v6, v7] = v[..] {
        let (a, b) = (pick_at::<T, MAX>(v0, v1), pick_at::<T, MAX>(v2, v3));
        let (c, d) = (pick_at::<T, MAX>(v4, v5), pick_at::<T, MAX>(v6, v7));
        return pick_at::<T, MAX>(pick_at::<T, MAX>(a, b), pick_at::<T, MAX>(c, d));
    }
    let mut m = v[0];
    for &w in &v[1..] {
        m = pick_at::<T, MAX>(m, w);
    }
    m
}

/// Float64 lanes of the moments' group arithmetic: one `zmm` register.
const H: usize = 8;

/// Lane-wise sum of the rows as a fixed pairwise tree (the same bits
/// every time).
#[inline(always)]
fn tree_sum<const R: usize>(x: [[f64; H]; R]) -> [f64; H] {
    if let [v0, v1, v2, v3, v4, v5, v6, v7] = x[..] {
        let (a, b) = (add(v0, v1), add(v2, v3));
        let (c, d) = (add(v4, v5), add(v6, v7));
        return add(add(a, b), add(c, d));
    }
    let mut s = x[0];
    for &v in &x[1..] {
        s = add(s, v);
    }
    s
}

/// Lane-wise `a + b`.
#[inline(always)]
fn add(a: [f64; H], b: [f64; H]) -> [f64; H] {
    let mut s = a;
    for l in 0..H {
        s[l] += b[l];
    }
    s
}

/// Folds rows `r..r + R` into the running extremes `m` (a block's columns)
/// and, with `arg`, their indices `at` (the same columns; empty without).
#[inline(always)]
fn fold_extremes<T: RNum, const R: usize, const MAX: bool>(
    m: &mut [T],
    at: &mut [u64],
    rows: &[&[T]; R],
    r: usize,
    arg: bool,
) {
    if arg {
        lanes!(m, at, rows, |m, at, x| {
            let g = tree_pick_at::<T, R, MAX>(x, r);
            (*m, *at) = pick_at::<T, MAX>((*m, *at), g);
        });
    } else {
        let none: &mut [u64] = &mut [];
        lanes!(m, none, rows, |m, _at, x| {
            *m = pick::<T, MAX>(*m, tree_pick::<T, R, MAX>(x));
        });
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

    /// Adds rows `r..r + m` (the reduced index) of this block's columns:
    /// row `r + k` is `v[k * stride..][..width]`.
    #[inline(always)]
    pub(super) fn add_rows(
        &mut self,
        v: Arg<'_, T>,
        stride: usize,
        m: usize,
        r: usize,
        needs: Needs,
    ) {
        let w = self.width();
        let s = match v {
            Arg::Slice(s) => s,
            Arg::Splat(x) => {
                let row = [x; LANES];
                for k in 0..m {
                    let mut j0 = 0;
                    while j0 < w {
                        let j1 = (j0 + LANES).min(w);
                        self.add_cols(j0, &row[..j1 - j0], r + k, needs);
                        j0 = j1;
                    }
                }
                return;
            }
        };
        // One pass per accumulator over plain slices, which the compiler
        // vectorises (a per-element `Arg` match and bounds checks in an
        // indexed loop kept it scalar: 10x slower than NumPy on columns).
        let row = |k: usize| &s[k * stride..k * stride + w];
        let mut k = 0;
        // Rows far apart in memory (a block narrower than the matrix) go
        // ROW_GROUP at a time; consecutive rows (one contiguous run) one at
        // a time, which measured as fast or faster; moments always in
        // groups (no division per value).
        let grouped = stride > w || needs.moments;
        // A block's first group starts at its first row: a first row alone
        // left a 128-row block's last seven rows to one-row passes (moments:
        // Welford, a division per value, 6% of the values at 17% of the
        // time; sums: the accumulators loaded and stored per row). Sums and
        // products start from their identities, as a first row alone did;
        // extremes are set from the first row and folded over the group
        // (the first row against itself keeps it). (One call site of the
        // group: a second inlined copy made LLVM compile max(axis=0) five
        // times slower.)
        let group_first = r == self.r0 && grouped && m >= ROW_GROUP;
        if group_first {
            let first = row(0);
            if needs.min {
                self.mins.copy_from_slice(first);
            }
            if needs.max {
                self.maxs.copy_from_slice(first);
            }
        } else if r == self.r0 {
            self.add_cols(0, row(0), r, needs);
            k = 1;
        }
        if grouped {
            while k + ROW_GROUP <= m {
                let rows: [&[T]; ROW_GROUP] = std::array::from_fn(|q| row(k + q));
                self.add_block(0, rows, r + k, needs, true);
                k += ROW_GROUP;
            }
        }
        while k < m {
            self.add_cols(0, row(k), r + k, needs);
            k += 1;
        }
    }

    /// Adds row `r`'s values `s` for columns `j0..j0 + s.len()`.
    #[inline(always)]
    fn add_cols(&mut self, j0: usize, s: &[T], r: usize, needs: Needs) {
        if r == self.r0 {
            let j1 = j0 + s.len();
            if needs.min {
                self.mins[j0..j1].copy_from_slice(s);
            }
            if needs.max {
                self.maxs[j0..j1].copy_from_slice(s);
            }
        }
        self.add_block(j0, [s], r, needs, r > self.r0);
    }

    /// Adds rows `r..r + R` (`rows[q]` is row `r + q`'s values for columns
    /// `j0..j0 + len`), each column's running values kept in registers
    /// across the `R` rows: the same operations in the same order as one
    /// row at a time, so the same bits, with the accumulators loaded and
    /// stored once per `R` rows. `extremes`: fold min/max (false for the
    /// block's first row, which sets them).
    #[inline(always)]
    fn add_block<const R: usize>(
        &mut self,
        j0: usize,
        rows: [&[T]; R],
        r: usize,
        needs: Needs,
        extremes: bool,
    ) {
        let j1 = j0 + rows[0].len();
        let rows = &rows;
        if needs.sum {
            if T::IS_INT {
                let none: &mut [i64] = &mut [];
                lanes!(&mut self.isum[j0..j1], none, rows, |acc, _b, x| {
                    for l in 0..L {
                        for row in &x {
                            acc[l] = acc[l].wrapping_add(row[l].as_i64());
                        }
                    }
                });
            }
            let none: &mut [f64] = &mut [];
            lanes!(&mut self.sum[j0..j1], none, rows, |acc, _b, x| {
                for l in 0..L {
                    for row in &x {
                        acc[l] += row[l].to_f64();
                    }
                }
            });
        }
        if needs.prod {
            if T::IS_INT {
                let none: &mut [i64] = &mut [];
                lanes!(&mut self.iprod[j0..j1], none, rows, |acc, _b, x| {
                    for l in 0..L {
                        for row in &x {
                            acc[l] = acc[l].wrapping_mul(row[l].as_i64());
                        }
                    }
                });
            }
            let none: &mut [f64] = &mut [];
            lanes!(&mut self.prod[j0..j1], none, rows, |acc, _b, x| {
                for l in 0..L {
                    for row in &x {
                        acc[l] *= row[l].to_f64();
                    }
                }
            });
        }
        if needs.moments {
            let (mean, m2) = (&mut self.mean[j0..j1], &mut self.m2[j0..j1]);
            if R == 1 {
                // Welford: row r is value number r - r0 + 1 of its column.
                let n = (r - self.r0 + 1) as f64;
                lanes!(mean, m2, rows, |mean, m2, x| {
                    for l in 0..L {
                        let v = x[0][l].to_f64();
                        let d = v - mean[l];
                        mean[l] += d / n;
                        m2[l] += d * (v - mean[l]);
                    }
                });
            } else {
                // The group's exact two-pass moments (its values are in
                // registers), merged with Chan's formula: no division per
                // value, where Welford's one per value bounded a 4096x4096
                // float32 `std(axis=0)` at a quarter of the memory's speed.
                // R is a power of two, so `s / R` is `s * (1/R)`. The
                // block's first group (`na == 0`) sets the moments.
                debug_assert!(R.is_power_of_two());
                let first = r == self.r0;
                let (na, nb) = ((r - self.r0) as f64, R as f64);
                let n = na + nb;
                let (fa, fb, inv_nb) = (nb / n, na * nb / n, 1.0 / nb);
                lanes!(mean, m2, rows, |mean, m2, x| {
                    // Eight lanes at a time: a group's float64 values and
                    // deviations then fit the register file (sixteen
                    // spilled, at 2.6 cycles a value).
                    for h in (0..L).step_by(H) {
                        let mut v = [[0.0f64; H]; R];
                        for (vq, xq) in v.iter_mut().zip(&x) {
                            for l in 0..H {
                                vq[l] = xq[h + l].to_f64();
                            }
                        }
                        let mut gm = tree_sum(v);
                        for g in &mut gm {
                            *g *= inv_nb;
                        }
                        // Squared deviations by fused multiply-adds, in
                        // two chains (even and odd rows), where a product
                        // and a tree of adds put 15 of the group's 26
                        // float64 operations a lane on the adders: 6% less
                        // time from cache (0.232 -> 0.219 ns a float32
                        // value on one core), so the adders were not the
                        // only bound (session 53).
                        let mut g2 = [[0.0f64; H]; 2];
                        for (q, vq) in v.iter().enumerate() {
                            let acc = &mut g2[q % 2];
                            for l in 0..H {
                                let d = vq[l] - gm[l];
                                acc[l] = d.mul_add(d, acc[l]);
                            }
                        }
                        let g2 = add(g2[0], g2[1]);
                        if first {
                            mean[h..h + H].copy_from_slice(&gm);
                            m2[h..h + H].copy_from_slice(&g2);
                            continue;
                        }
                        for l in 0..H {
                            let delta = gm[l] - mean[h + l];
                            mean[h + l] += delta * fa;
                            m2[h + l] += g2[l] + delta * delta * fb;
                        }
                    }
                });
            }
        }
        if !extremes {
            return;
        }
        let arg = needs.arg;
        if needs.min {
            let at: &mut [u64] = if arg {
                &mut self.min_at[j0..j1]
            } else {
                &mut []
            };
            fold_extremes::<T, R, false>(&mut self.mins[j0..j1], at, rows, r, arg);
        }
        if needs.max {
            let at: &mut [u64] = if arg {
                &mut self.max_at[j0..j1]
            } else {
                &mut []
            };
            fold_extremes::<T, R, true>(&mut self.maxs[j0..j1], at, rows, r, arg);
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
    let (w, cols) = (c1 - c0, plan.kept);
    let mut st = ColStates::<T>::new(w, r0, needs);
    // Rows per step: values read in place serve any run of rows, so the
    // task's rows are one step (groups of ROW_GROUP rows never cut by a
    // step's end); computed ones take as many whole rows as one chunk holds
    // when the block spans whole rows (then a flat range), else one row. A
    // step of many short rows is one call (a 256-column sum paid a call per
    // row: 11 GB/s on one core against 24 for the same loop over the same
    // rows).
    let direct = prep.reads_directly(out_reg);
    let step = if direct {
        r1 - r0
    } else if w == cols {
        (prep.chunk() / w.max(1)).clamp(1, STEP_ROWS)
    } else {
        1
    };
    let mut r = r0;
    while r < r1 {
        // Give way to a stop request (the caller reports it).
        if crate::interrupt::requested() {
            break;
        }
        let m = step.min(r1 - r);
        let start = r * cols + c0;
        let len = (m - 1) * cols + w;
        if !direct {
            prep.eval_chunk(sc, start, len);
        }
        let v = prep.arg::<T>(sc, out_reg, start, len);
        T::rows(&mut st, v, cols, m, r, needs);
        r += m;
    }
    st.finish(r1 - r0)
}
