//! The GPU core's sparse product: `out = a @ x` for a CSR matrix `a`
//! (`indptr` as i64, `indices` as u32, `values`) and a dense `x` read
//! through its offset and strides. One work-item per output element, its
//! row's non-zeros summed in order, as the CPU backend does (same order,
//! no contraction: the same bits).

use super::expr::ctype;
use crate::dtype::DType;
use std::fmt::Write;

/// Appends the kernel to `body`; returns its entry name.
pub(super) fn render(id: &str, dtype: DType, body: &mut String) -> Vec<String> {
    let t = ctype(dtype);
    let name = format!("{id}_spmm");
    let _ = write!(
        body,
        r#"KERNEL void {name}({id}_p p, GLOBAL const i64* indptr, GLOBAL const u32* indices, GLOBAL const {t}* values, GLOBAL const {t}* x, GLOBAL {t}* out) {{
  const i64 k = p.n, total = p.m * p.n;
  for (i64 e = GLOBAL_ID; e < total; e += GLOBAL_SIZE) {{
    const i64 i = e / k, j = e - (e / k) * k;
    {t} acc = ({t})0;
    for (i64 q = indptr[i]; q < indptr[i + 1]; ++q)
      acc += values[q] * x[p.off1 + (i64)indices[q] * p.b_rs + j * p.b_cs];
    out[e] = acc;
  }}
}}
"#
    );
    vec![name]
}
