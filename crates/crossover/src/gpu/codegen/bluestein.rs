//! Bluestein's algorithm for FFT axes whose length is not a power of two:
//! the small kernels around the radix-2 passes of [`super::fft`].
//!
//! With the chirp `w_j = exp(-+ i pi j^2 / n)` (the sign of the
//! transform), `X_k = w_k * sum_j (x_j w_j) conj(w_{k-j})`: a convolution,
//! computed as `IFFT_len(FFT_len(a) * FFT_len(b))` over a power-of-two
//! `len >= 2n - 1` (so the circular convolution does not wrap into the
//! kept outputs). `chirp` forms `a` (zero-padded from `n` to `len`),
//! `filter` forms `b = conj(w)` at `0..n` and wrapped at `len-n+1..len`,
//! `product` multiplies `FFT(a)` by `FFT(b)` in place, and `unchirp`
//! multiplies by `w` again, keeps the first `keep` outputs and scales
//! (the host folds the inverse pass's `1/len` into the scale).
//!
//! The chirp's angle is `pi * (j^2 mod 2n) / n`, the square reduced in
//! 64-bit integers, so it stays exact for long axes where `pi j^2 / n` in
//! floating point would lose every digit. Arrays are `(m, len, k)` as in
//! the passes: `p.chirp` is `n`, `p.len` the padded length.

use crate::dtype::DType;

/// Appends the Bluestein kernels of variant `id` over `t` (the work
/// precision's C type) to `body`; returns their entries in the order
/// `chirp`, `filter`, `product`, `unchirp`.
pub(super) fn render(id: &str, t: &str, precision: DType, body: &mut String) -> Vec<String> {
    let pi = if precision == DType::F64 {
        "3.141592653589793"
    } else {
        "3.14159265f"
    };
    let names: Vec<String> = ["chirp", "filter", "product", "unchirp"]
        .iter()
        .map(|s| format!("{id}_fft_{s}"))
        .collect();
    let [chirp, filter, product, unchirp] = [0, 1, 2, 3].map(|i| &names[i]);
    body.push_str(&format!(
        r#"/* The chirp's angle at j: -+pi (j^2 mod 2n) / n, reduced to [-pi, pi]. */
XO_FN {t} {id}_chirp_angle(i64 j, i64 n, i64 inv) {{
  i64 q = (j * j) % (2 * n);
  if (q > n) q -= 2 * n;
  return (inv ? ({t})1 : ({t})-1) * {pi} * ({t})q / ({t})n;
}}
/* (m, n, k) -> (m, len, k): x_j * w_j, zero past n. */
KERNEL void {chirp}({id}_p p, GLOBAL const {t}* src, GLOBAL {t}* dst) {{
  const i64 items = p.m * p.len * p.k;
  for (i64 e = GLOBAL_ID; e < items; e += GLOBAL_SIZE) {{
    const i64 i = e % p.k, u = e / p.k, j = u % p.len, o = u / p.len;
    {t} re = ({t})0, im = ({t})0;
    if (j < p.chirp) {{
      const i64 from = (o * p.chirp + j) * p.k + i;
      const {t} ang = {id}_chirp_angle(j, p.chirp, p.inv);
      const {t} wr = xo_cos_{t}(ang), wi = xo_sin_{t}(ang);
      const {t} xr = src[2 * from], xi = src[2 * from + 1];
      re = xr * wr - xi * wi;
      im = xr * wi + xi * wr;
    }}
    dst[2 * e] = re;
    dst[2 * e + 1] = im;
  }}
}}
/* conj(w_j) at j < n and at len - j for 0 < j < n, zero between. */
KERNEL void {filter}({id}_p p, GLOBAL {t}* dst) {{
  for (i64 e = GLOBAL_ID; e < p.len; e += GLOBAL_SIZE) {{
    const i64 j = e < p.chirp ? e : (e > p.len - p.chirp ? p.len - e : -1);
    {t} re = ({t})0, im = ({t})0;
    if (j >= 0) {{
      const {t} ang = -{id}_chirp_angle(j, p.chirp, p.inv);
      re = xo_cos_{t}(ang);
      im = xo_sin_{t}(ang);
    }}
    dst[2 * e] = re;
    dst[2 * e + 1] = im;
  }}
}}
/* (m, len, k) times the filter's spectrum along len, in place (each
   work-item reads and writes only its own element). */
KERNEL void {product}({id}_p p, GLOBAL {t}* a, GLOBAL const {t}* b) {{
  const i64 items = p.m * p.len * p.k;
  for (i64 e = GLOBAL_ID; e < items; e += GLOBAL_SIZE) {{
    const i64 j = (e / p.k) % p.len;
    const {t} ar = a[2 * e], ai = a[2 * e + 1], br = b[2 * j], bi = b[2 * j + 1];
    a[2 * e] = ar * br - ai * bi;
    a[2 * e + 1] = ar * bi + ai * br;
  }}
}}
/* (m, len, k) -> (m, keep, k): w_j * conv_j * scale. */
KERNEL void {unchirp}({id}_p p, GLOBAL const {t}* src, GLOBAL {t}* dst) {{
  const i64 items = p.m * p.keep * p.k;
  const {t} s = ({t})p.scale;
  for (i64 e = GLOBAL_ID; e < items; e += GLOBAL_SIZE) {{
    const i64 i = e % p.k, u = e / p.k, j = u % p.keep, o = u / p.keep;
    const i64 from = (o * p.len + j) * p.k + i;
    const {t} ang = {id}_chirp_angle(j, p.chirp, p.inv);
    const {t} wr = xo_cos_{t}(ang) * s, wi = xo_sin_{t}(ang) * s;
    const {t} cr = src[2 * from], ci = src[2 * from + 1];
    dst[2 * e] = cr * wr - ci * wi;
    dst[2 * e + 1] = cr * wi + ci * wr;
  }}
}}
"#
    ));
    names
}
