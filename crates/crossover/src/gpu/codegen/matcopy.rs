//! The GPU core's matrix copy, the glue around vendor solvers: `out[b]`
//! (row-major, contiguous, `rows x cols`, batch entry `b` at `b * rows *
//! cols`) from the matrix of `x` at the batch's offset (a table the host
//! fills) read through any row and column strides. One kernel packs a
//! strided, transposed or broadcast view, transposes a column-major
//! result to row-major, zeroes the other triangle of a Cholesky factor or
//! an R factor (`tri` 1: keep the lower, 2: the upper triangle), writes
//! identity matrices (`tri` 3: `x` is not read) and gathers diagonals
//! (column stride 0, row stride `n + 1`). A plain copy: the same bits.
//!
//! Complex matrices are copied as interleaved (re, im) pairs of their real
//! type; the conjugating variant (`conj`, complex only: its own kernel
//! name) negates the imaginary part of every element it reads (only its
//! sign bit changes), which the dense solvers use to hand the solver `A^H`
//! rather than `A^T` (`gpu/dense.rs`). Zeroed triangles and identities are
//! written as they are (no `-0.0` imaginary parts).

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
/// `out`. `conj`: conjugate what is read (complex `dtype` only).
pub(super) fn render(id: &str, dtype: DType, conj: bool, body: &mut String) -> Vec<String> {
    let name = format!("{id}_matcopy");
    let Some(real) = complex_part(dtype) else {
        let t = ctype(dtype);
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
        return vec![name];
    };
    // Complex: (re, im) pairs of `real`; offsets and strides count complex
    // elements.
    let t = ctype(real);
    let im = if conj {
        "-x[2 * s + 1]"
    } else {
        "x[2 * s + 1]"
    };
    let _ = write!(
        body,
        r#"KERNEL void {name}({id}_p p, GLOBAL const {t}* x, GLOBAL const i64* offs, GLOBAL {t}* out) {{
  const i64 n = p.n, per = p.m * p.n, total = p.k * p.m * p.n;
  for (i64 e = GLOBAL_ID; e < total; e += GLOBAL_SIZE) {{
    const i64 b = e / per, r = e - (e / per) * per;
    const i64 i = r / n, j = r - (r / n) * n;
    {t} re = ({t})0, im = ({t})0;
    if (p.tri == 3) re = (i == j) ? ({t})1 : ({t})0;
    else if (!((p.tri == 1 && j > i) || (p.tri == 2 && j < i))) {{
      const i64 s = offs[b] + i * p.a_rs + j * p.a_cs;
      re = x[2 * s];
      im = {im};
    }}
    out[2 * e] = re;
    out[2 * e + 1] = im;
  }}
}}
"#
    );
    vec![name]
}

/// The real type of a complex dtype's parts (`None`: not complex).
fn complex_part(dtype: DType) -> Option<DType> {
    match dtype {
        DType::C64 => Some(DType::F32),
        DType::C128 => Some(DType::F64),
        _ => None,
    }
}
