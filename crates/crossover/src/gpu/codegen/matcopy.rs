//! The GPU core's matrix copy, the glue around vendor solvers: `out[b]`
//! (row-major, contiguous, `rows x cols`, batch entry `b` at `b * rows *
//! cols`) from the matrix of `x` at the batch's offset (a table the host
//! fills) read through any row and column strides. One kernel packs a
//! strided, transposed or broadcast view, transposes a column-major
//! result to row-major, zeroes the other triangle of a Cholesky factor or
//! an R factor (`tri` 1: keep the lower, 2: the upper triangle), writes
//! identity matrices (`tri` 3: `x` is not read) and gathers diagonals
//! (column stride 0, row stride `n + 1`). A plain copy: the same bits.

use super::expr::ctype;
use crate::dtype::DType;
use std::fmt::Write;

/// What the kernel keeps of each matrix (the `tri` parameter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tri {
    /// Every element.
    All = 0,
    /// The lower triangle (`j <= i`), zeros above.
    Lower = 1,
    /// The upper triangle (`j >= i`), zeros below.
    Upper = 2,
    /// Not read: the identity matrix.
    Identity = 3,
}

/// Appends the kernel to `body`; returns its entry name. The kernel takes
/// the parameter struct, `x`, the batch offset table (`batch` i64) and
/// `out`.
pub(super) fn render(id: &str, dtype: DType, body: &mut String) -> Vec<String> {
    let t = ctype(dtype);
    let name = format!("{id}_matcopy");
    let _ = write!(
        body,
        r#"KERNEL void {name}({id}_p p, GLOBAL const {t}* x, GLOBAL const i64* offs, GLOBAL {t}* out) {{
  const i64 n = p.n, per = p.m * p.n, total = p.k * p.m * p.n;
  for (i64 e = GLOBAL_ID; e < total; e += GLOBAL_SIZE) {{
    const i64 b = e / per, r = e - (e / per) * per;
    const i64 i = r / n, j = r - (r / n) * n;
    {t} v;
    if (p.tri == 3) v = (i == j) ? ({t})1 : ({t})0;
    else if ((p.tri == 1 && j > i) || (p.tri == 2 && j < i)) v = ({t})0;
    else v = x[offs[b] + i * p.a_rs + j * p.a_cs];
    out[e] = v;
  }}
}}
"#
    );
    vec![name]
}
