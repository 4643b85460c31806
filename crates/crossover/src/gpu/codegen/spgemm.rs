//! The GPU core's sparse-times-sparse product: `c = a @ b` for CSR
//! matrices (`indptr` as i64, `indices` as u32, `values`), with the CPU
//! backend's bits.
//!
//! One work-item per row `i` of `c` merges the rows of `b` that `a`'s row
//! `i` selects (sorted, so a k-way merge yields `c`'s columns in order)
//! and needs no dense accumulator: each non-zero `q` of `a` has a cursor
//! into its row of `b` and that row's end in a scratch array of `2 nnz(a)`
//! i64 (`cur[q]`, `cur[nnz(a) + q]`), owned by the work-item of `q`'s row.
//! For each output column the products are added in ascending `q`,
//! starting from 0, without contraction: the CPU's Gustavson loop adds
//! them in the same order, so the sums are the same bits. Like the CPU,
//! a column whose sum is zero is not stored. Two entries: `count` writes
//! each row's stored columns (the host turns them into `c`'s row pointers),
//! `fill` repeats the merge, writing columns and values from those
//! pointers.

use super::expr::ctype;
use crate::dtype::DType;
use std::fmt::Write;

/// Appends the two kernels to `body`; returns their entry names (count,
/// then fill).
pub(super) fn render(id: &str, dtype: DType, body: &mut String) -> Vec<String> {
    let t = ctype(dtype);
    let count = format!("{id}_spgemm_count");
    let fill = format!("{id}_spgemm_fill");
    let args = format!(
        "{id}_p p, GLOBAL const i64* ap, GLOBAL const u32* ai, GLOBAL const {t}* av, \
         GLOBAL const i64* bp, GLOBAL const u32* bi, GLOBAL const {t}* bv, GLOBAL i64* cur"
    );
    let merge = |store: &str| {
        format!(
            r#"    const i64 p0 = ap[i], p1 = ap[i + 1];
    GLOBAL i64* end = cur + p.k;
    i64 next = none;
    for (i64 q = p0; q < p1; ++q) {{
      const i64 r = (i64)ai[q];
      const i64 s = bp[r], e = bp[r + 1];
      cur[q] = s;
      end[q] = e;
      if (s < e && (i64)bi[s] < next) next = (i64)bi[s];
    }}
    while (next < none) {{
      const i64 j = next;
      {t} acc = ({t})0;
      next = none;
      for (i64 q = p0; q < p1; ++q) {{
        i64 s = cur[q];
        const i64 e = end[q];
        if (s < e) {{
          i64 c = (i64)bi[s];
          if (c == j) {{
            acc += av[q] * bv[s];
            s += 1;
            cur[q] = s;
            c = s < e ? (i64)bi[s] : none;
          }}
          if (c < next) next = c;
        }}
      }}
      if (acc != ({t})0) {{
{store}
      }}
    }}
"#
        )
    };
    let _ = write!(
        body,
        r#"KERNEL void {count}({args}, GLOBAL i64* counts) {{
  const i64 none = p.n;
  for (i64 i = GLOBAL_ID; i < p.m; i += GLOBAL_SIZE) {{
    i64 stored = 0;
{m1}    counts[i] = stored;
  }}
}}
KERNEL void {fill}({args}, GLOBAL const i64* cp, GLOBAL u32* ci, GLOBAL {t}* cv) {{
  const i64 none = p.n;
  for (i64 i = GLOBAL_ID; i < p.m; i += GLOBAL_SIZE) {{
    i64 o = cp[i];
{m2}  }}
}}
"#,
        m1 = merge("        stored += 1;"),
        m2 = merge("        ci[o] = (u32)j;\n        cv[o] = acc;\n        o += 1;"),
    );
    vec![count, fill]
}
