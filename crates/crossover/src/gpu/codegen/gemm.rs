//! The GPU core's own matrix product: `c[b] = a[b] @ b[b]` for every batch
//! entry `b`, written once for every API (the portable path: OpenCL
//! devices, and CUDA when cuBLAS cannot read the operands' layouts).
//!
//! Each work-group computes a 64x64 tile of `c`, walking `k` in steps of 16
//! through two tiles in local memory; each of its 256 work-items keeps a
//! 4x4 block of results in registers (rows `ty + 16r`, columns `tx + 16s`,
//! so neighbouring work-items read neighbouring local-memory words).
//! Operands are read through their row and column strides and per-batch
//! offsets (a table the host fills), so transposed, sliced and broadcast
//! views need no copy; elements outside the matrix read as zero. `c` is
//! row-major and contiguous. Products accumulate in the operands' type, as
//! BLAS does; integer products wrap as NumPy's do (computed unsigned, where
//! C defines wrapping).

use super::expr::ctype;
use crate::dtype::DType;
use std::fmt::Write;

/// Rows and columns of `c` per work-group.
pub const TILE: usize = 64;
/// Steps of `k` held in local memory at once.
const DEPTH: usize = 16;

/// Local memory a work-group of the kernel uses for `dtype` operands.
pub fn local_bytes(dtype: DType) -> u64 {
    (2 * TILE * DEPTH * dtype.size()) as u64
}

/// Work-groups for a product of `batch` entries of `m x n` results.
pub fn groups(batch: usize, m: usize, n: usize) -> usize {
    batch * m.div_ceil(TILE) * n.div_ceil(TILE)
}

/// Appends the kernel to `body`; returns its entry name. The kernel takes
/// the parameter struct, `a`, `b`, the batch offset table (`2 * batch`
/// i64: `a`'s then `b`'s offset in elements) and `c`.
pub(super) fn render(id: &str, dtype: DType, body: &mut String) -> Vec<String> {
    let t = ctype(dtype);
    // The arithmetic type: integers as unsigned, whose overflow wraps.
    let u = match dtype {
        DType::I32 => "u32",
        DType::I64 => "u64",
        _ => t,
    };
    let name = format!("{id}_gemm");
    let tile_elems = TILE * DEPTH;
    let _ = write!(
        body,
        r#"KERNEL void {name}({id}_p p, GLOBAL const {t}* a, GLOBAL const {t}* b, GLOBAL const i64* offs, GLOBAL {t}* c) {{
  LOCAL_ARRAY({u}, ta, {tile_elems});
  LOCAL_ARRAY({u}, tb, {tile_elems});
  const i64 m = p.m, n = p.n, k = p.k;
  const i64 tm = (m + {TILE} - 1) / {TILE}, tn = (n + {TILE} - 1) / {TILE};
  const i64 g = GROUP_ID;
  const i64 bi = g / (tm * tn);
  const i64 tile = g - bi * tm * tn;
  const i64 i0 = (tile / tn) * {TILE}, j0 = (tile - (tile / tn) * tn) * {TILE};
  const int t = LOCAL_ID, tx = t & 15, ty = t >> 4;
  const i64 ao = offs[2 * bi], bo = offs[2 * bi + 1];
  {u} acc[16];
  for (int q = 0; q < 16; ++q) acc[q] = ({u})0;
  for (i64 k0 = 0; k0 < k; k0 += {DEPTH}) {{
    for (int l = 0; l < {loads}; ++l) {{
      const int e = t + 256 * l;
      const int ar = e >> 4, ak = e & 15;
      const i64 gi = i0 + ar, gk = k0 + ak;
      ta[ak * {TILE} + ar] = (gi < m && gk < k) ? ({u})a[ao + gi * p.a_rs + gk * p.a_cs] : ({u})0;
      const int bk = e >> 6, bc = e & 63;
      const i64 gk2 = k0 + bk, gj = j0 + bc;
      tb[bk * {TILE} + bc] = (gk2 < k && gj < n) ? ({u})b[bo + gk2 * p.b_rs + gj * p.b_cs] : ({u})0;
    }}
    BARRIER();
    for (int kk = 0; kk < {DEPTH}; ++kk) {{
      {u} av[4], bv[4];
      for (int q = 0; q < 4; ++q) {{
        av[q] = ta[kk * {TILE} + ty + 16 * q];
        bv[q] = tb[kk * {TILE} + tx + 16 * q];
      }}
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) acc[r * 4 + s] += av[r] * bv[s];
    }}
    BARRIER();
  }}
  const i64 co = bi * m * n;
  for (int r = 0; r < 4; ++r) {{
    const i64 gi = i0 + ty + 16 * r;
    if (gi >= m) continue;
    for (int s = 0; s < 4; ++s) {{
      const i64 gj = j0 + tx + 16 * s;
      if (gj < n) c[co + gi * n + gj] = ({t})acc[r * 4 + s];
    }}
  }}
}}
"#,
        loads = tile_elems / 256,
    );
    vec![name]
}
