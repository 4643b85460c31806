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
//! C defines wrapping); bool products are the logical or of ands, as
//! NumPy's. Complex operands (interleaved re, im, as the FFT kernels hold
//! them) take 32x32 tiles, 2x2 results per work-item, keep their real and
//! imaginary parts in separate local tiles and accumulate
//! `(ar br - ai bi) + i (ar bi + ai br)`, each product rounded on its own
//! (no contraction: OpenCL's `FP_CONTRACT OFF`, NVRTC's `--fmad=false`).

use super::expr::ctype;
use crate::dtype::DType;
use std::fmt::Write;

/// Rows and columns of `c` per work-group.
pub const TILE: usize = 64;
/// Rows and columns of `c` per work-group of the complex kernel: 2x2
/// results per work-item (4x4 complex128 accumulators would need more
/// than 128 registers).
const COMPLEX_TILE: usize = 32;
/// Steps of `k` held in local memory at once.
const DEPTH: usize = 16;

/// Rows and columns of `c` per work-group for `dtype` operands.
fn tile(dtype: DType) -> usize {
    if dtype.is_complex() {
        COMPLEX_TILE
    } else {
        TILE
    }
}

/// Local memory a work-group of the kernel uses for `dtype` operands (a
/// complex element counts both parts).
pub fn local_bytes(dtype: DType) -> u64 {
    (2 * tile(dtype) * DEPTH * dtype.size()) as u64
}

/// Work-groups for a product of `batch` entries of `m x n` results of
/// `dtype`.
pub fn groups(dtype: DType, batch: usize, m: usize, n: usize) -> usize {
    let t = tile(dtype);
    batch * m.div_ceil(t) * n.div_ceil(t)
}

/// Appends the kernel to `body`; returns its entry name. The kernel takes
/// the parameter struct, `a`, `b`, the batch offset table (`2 * batch`
/// i64: `a`'s then `b`'s offset in elements) and `c`.
pub(super) fn render(id: &str, dtype: DType, body: &mut String) -> Vec<String> {
    if let Some(part) = complex_part(dtype) {
        return render_complex(id, part, body);
    }
    let t = ctype(dtype);
    // The arithmetic type: integers as unsigned, whose overflow wraps.
    let u = match dtype {
        DType::I32 => "u32",
        DType::I64 => "u64",
        _ => t,
    };
    // How an element enters a tile and how a product accumulates: bool
    // as 0/1 and an or of ands, numbers as they are.
    let (load, update) = if dtype == DType::Bool {
        ("(u8)({} != 0)", "acc[r * 4 + s] |= av[r] & bv[s]")
    } else {
        ("({u}){}", "acc[r * 4 + s] += av[r] * bv[s]")
    };
    let load = |x: &str| load.replace("{u}", u).replace("{}", x);
    let (a_load, b_load) = (
        load("a[ao + gi * p.a_rs + gk * p.a_cs]"),
        load("b[bo + gk2 * p.b_rs + gj * p.b_cs]"),
    );
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
      ta[ak * {TILE} + ar] = (gi < m && gk < k) ? {a_load} : ({u})0;
      const int bk = e >> 6, bc = e & 63;
      const i64 gk2 = k0 + bk, gj = j0 + bc;
      tb[bk * {TILE} + bc] = (gk2 < k && gj < n) ? {b_load} : ({u})0;
    }}
    BARRIER();
    for (int kk = 0; kk < {DEPTH}; ++kk) {{
      {u} av[4], bv[4];
      for (int q = 0; q < 4; ++q) {{
        av[q] = ta[kk * {TILE} + ty + 16 * q];
        bv[q] = tb[kk * {TILE} + tx + 16 * q];
      }}
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) {update};
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

/// The real type of a complex dtype's parts, `None` for other dtypes.
fn complex_part(dtype: DType) -> Option<DType> {
    match dtype {
        DType::C64 => Some(DType::F32),
        DType::C128 => Some(DType::F64),
        _ => None,
    }
}

/// [`render`] for complex operands whose parts are `part` values: the
/// same walk over `k` with 32x32 tiles, each of the 256 work-items
/// keeping a 2x2 block of results (rows `ty + 16r`, columns `tx + 16s`).
fn render_complex(id: &str, part: DType, body: &mut String) -> Vec<String> {
    let f = ctype(part);
    let name = format!("{id}_gemm");
    const T: usize = COMPLEX_TILE;
    let tile_elems = T * DEPTH;
    let _ = write!(
        body,
        r#"KERNEL void {name}({id}_p p, GLOBAL const {f}* a, GLOBAL const {f}* b, GLOBAL const i64* offs, GLOBAL {f}* c) {{
  LOCAL_ARRAY({f}, tar, {tile_elems});
  LOCAL_ARRAY({f}, tai, {tile_elems});
  LOCAL_ARRAY({f}, tbr, {tile_elems});
  LOCAL_ARRAY({f}, tbi, {tile_elems});
  const i64 m = p.m, n = p.n, k = p.k;
  const i64 tm = (m + {T} - 1) / {T}, tn = (n + {T} - 1) / {T};
  const i64 g = GROUP_ID;
  const i64 bi = g / (tm * tn);
  const i64 tile = g - bi * tm * tn;
  const i64 i0 = (tile / tn) * {T}, j0 = (tile - (tile / tn) * tn) * {T};
  const int t = LOCAL_ID, tx = t & 15, ty = t >> 4;
  const i64 ao = offs[2 * bi], bo = offs[2 * bi + 1];
  {f} cr[4], ci[4];
  for (int q = 0; q < 4; ++q) {{ cr[q] = ({f})0; ci[q] = ({f})0; }}
  for (i64 k0 = 0; k0 < k; k0 += {DEPTH}) {{
    for (int l = 0; l < {loads}; ++l) {{
      const int e = t + 256 * l;
      const int ar = e >> 4, ak = e & 15;
      const i64 gi = i0 + ar, gk = k0 + ak;
      const int ain = gi < m && gk < k;
      const i64 ae = 2 * (ao + gi * p.a_rs + gk * p.a_cs);
      tar[ak * {T} + ar] = ain ? a[ae] : ({f})0;
      tai[ak * {T} + ar] = ain ? a[ae + 1] : ({f})0;
      const int bk = e >> 5, bc = e & 31;
      const i64 gk2 = k0 + bk, gj = j0 + bc;
      const int bin = gk2 < k && gj < n;
      const i64 be = 2 * (bo + gk2 * p.b_rs + gj * p.b_cs);
      tbr[bk * {T} + bc] = bin ? b[be] : ({f})0;
      tbi[bk * {T} + bc] = bin ? b[be + 1] : ({f})0;
    }}
    BARRIER();
    for (int kk = 0; kk < {DEPTH}; ++kk) {{
      {f} avr[2], avi[2], bvr[2], bvi[2];
      for (int q = 0; q < 2; ++q) {{
        avr[q] = tar[kk * {T} + ty + 16 * q];
        avi[q] = tai[kk * {T} + ty + 16 * q];
        bvr[q] = tbr[kk * {T} + tx + 16 * q];
        bvi[q] = tbi[kk * {T} + tx + 16 * q];
      }}
      for (int r = 0; r < 2; ++r)
        for (int s = 0; s < 2; ++s) {{
          cr[r * 2 + s] += avr[r] * bvr[s] - avi[r] * bvi[s];
          ci[r * 2 + s] += avr[r] * bvi[s] + avi[r] * bvr[s];
        }}
    }}
    BARRIER();
  }}
  const i64 co = bi * m * n;
  for (int r = 0; r < 2; ++r) {{
    const i64 gi = i0 + ty + 16 * r;
    if (gi >= m) continue;
    for (int s = 0; s < 2; ++s) {{
      const i64 gj = j0 + tx + 16 * s;
      if (gj < n) {{
        c[2 * (co + gi * n + gj)] = cr[r * 2 + s];
        c[2 * (co + gi * n + gj) + 1] = ci[r * 2 + s];
      }}
    }}
  }}
}}
"#,
        loads = tile_elems / 256,
    );
    vec![name]
}
