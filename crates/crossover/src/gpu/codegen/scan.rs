//! The GPU core's cumulative sums and products along one axis.
//!
//! The array is a set of *lines* (every position of the other axes), each
//! scanned along the axis. A line is cut into `segs` chunks so that short
//! rows of many lines and one long line both give the device enough
//! work-items; three entry points then run in order:
//!
//! 1. `totals`: one work-item per (chunk, line) folds its chunk;
//! 2. `carry`: one work-item per line turns its chunks' totals into
//!    running starts (skipped when a line is one chunk);
//! 3. `apply`: one work-item per (chunk, line) scans its chunk from its
//!    start and writes the outputs.
//!
//! Consecutive work-items take consecutive lines, so when the axis is not
//! the last one their reads are neighbours. The input is read through its
//! offset, its stride along the axis and the sizes and strides of the
//! collapsed other axes (`line_dims` of them), so views are never copied;
//! the output is contiguous. Accumulation follows the CPU backend: floats
//! in double precision (each output rounded once), integers in 64 bits
//! wrapping (unsigned arithmetic, defined in C).

use super::expr::ctype;
use crate::array::scan::ScanKind;
use crate::dtype::DType;
use std::fmt::Write;

/// Elements a chunk holds at least (a work-item's sequential work).
const MIN_CHUNK: usize = 64;
/// Work-items the chunks of all lines aim to fill.
const TARGET_ITEMS: usize = 1 << 16;

/// How `lines` lines of `len` elements are cut: `(segs, chunk)`, chunks per
/// line and elements per chunk (the last chunk may be shorter, none is
/// empty).
pub fn split(lines: usize, len: usize) -> (usize, usize) {
    let want = (TARGET_ITEMS / lines.max(1)).max(1);
    let segs = want.min(len / MIN_CHUNK).max(1);
    let chunk = len.div_ceil(segs).max(1);
    (len.div_ceil(chunk).max(1), chunk)
}

/// The C type a scan of `dtype` accumulates in.
fn acc_type(dtype: DType) -> &'static str {
    if dtype.is_float() {
        "f64"
    } else {
        "u64"
    }
}

/// Appends the kernels to `body`; returns the entry names in launch order.
/// Each takes the parameter struct first; `totals` then takes `x` and the
/// chunk totals, `carry` the totals, `apply` `x`, the totals and `out`.
pub(super) fn render(
    id: &str,
    kind: ScanKind,
    dtype: DType,
    line_dims: usize,
    body: &mut String,
) -> Vec<String> {
    let t = ctype(dtype);
    let a = acc_type(dtype);
    let (identity, op) = match kind {
        ScanKind::Sum => ("0", "+"),
        ScanKind::Prod => ("1", "*"),
    };
    // Position of a line's first element: its coordinates over the other
    // axes, last axis fastest.
    let mut pos = String::new();
    for d in (0..line_dims).rev() {
        let _ = writeln!(
            pos,
            "  {{ const i64 c = line % p.dim{d}; line /= p.dim{d}; at += c * p.str0_{d}; }}"
        );
    }
    let names: Vec<String> = ["totals", "carry", "apply"]
        .iter()
        .map(|s| format!("{id}_scan_{s}"))
        .collect();
    let [totals, carry, apply] = [&names[0], &names[1], &names[2]];
    let _ = write!(
        body,
        r#"XO_FN i64 {id}_line_start({id}_p p, i64 line) {{
  i64 at = p.off0;
{pos}  return at;
}}
KERNEL void {totals}({id}_p p, GLOBAL const {t}* x, GLOBAL {a}* part) {{
  const i64 items = p.lines * p.segs;
  for (i64 w = GLOBAL_ID; w < items; w += GLOBAL_SIZE) {{
    const i64 line = w % p.lines, c = w / p.lines;
    const i64 at = {id}_line_start(p, line);
    const i64 i1 = (c + 1) * p.chunk < p.len ? (c + 1) * p.chunk : p.len;
    {a} acc = ({a}){identity};
    for (i64 i = c * p.chunk; i < i1; ++i) acc = acc {op} ({a})x[at + i * p.axis_str];
    part[w] = acc;
  }}
}}
KERNEL void {carry}({id}_p p, GLOBAL {a}* part) {{
  for (i64 line = GLOBAL_ID; line < p.lines; line += GLOBAL_SIZE) {{
    {a} acc = ({a}){identity};
    for (i64 c = 0; c < p.segs; ++c) {{
      const {a} total = part[c * p.lines + line];
      part[c * p.lines + line] = acc;
      acc = acc {op} total;
    }}
  }}
}}
KERNEL void {apply}({id}_p p, GLOBAL const {t}* x, GLOBAL const {a}* part, GLOBAL {t}* out) {{
  const i64 items = p.lines * p.segs;
  for (i64 w = GLOBAL_ID; w < items; w += GLOBAL_SIZE) {{
    const i64 line = w % p.lines, c = w / p.lines;
    const i64 at = {id}_line_start(p, line);
    /* Output: (outer, along, inner) row-major; p.k is the inner size. */
    const i64 o = (line / p.k) * p.len * p.k + line % p.k;
    const i64 i1 = (c + 1) * p.chunk < p.len ? (c + 1) * p.chunk : p.len;
    {a} acc = p.segs > 1 ? part[w] : ({a}){identity};
    for (i64 i = c * p.chunk; i < i1; ++i) {{
      acc = acc {op} ({a})x[at + i * p.axis_str];
      out[o + i * p.k] = ({t})acc;
    }}
  }}
}}
"#
    );
    names
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_cuts_lines_into_nonempty_chunks_covering_them() {
        for (lines, len) in [
            (1, 1),
            (1, 63),
            (1, 10_000_000),
            (3, 1000),
            (70_000, 5),
            (1000, 1000),
            (1 << 20, 2),
        ] {
            let (segs, chunk) = split(lines, len);
            assert!(segs >= 1 && chunk >= 1, "{lines}x{len}");
            assert!(segs * chunk >= len, "{lines}x{len}: covered");
            assert!((segs - 1) * chunk < len, "{lines}x{len}: no empty chunk");
            if segs > 1 {
                assert!(chunk >= 64, "{lines}x{len}: chunks of at least 64");
            }
        }
        assert!(split(1, 10_000_000).0 > 1000, "one long line is cut");
        assert_eq!(split(70_000, 5).0, 1, "many short lines are not");
    }
}
