//! The GPU core's Fourier transforms: the steps of [`crate::fft::steps`]
//! as kernels over contiguous complex arrays (interleaved re, im).
//!
//! An axis of power-of-two length `n` takes `log2(n)` radix-2 Stockham
//! passes, each one butterfly per work-item and ping-ponging between two
//! buffers (the output comes out in natural order, no bit reversal), then
//! a `finish` that keeps the first `keep` outputs along the axis and
//! scales them. `load` gathers the input (any strides, real or complex)
//! into the work array, cropping or zero-padding each axis; `extend` and
//! `real` serve the inverse real transforms. Other lengths run through
//! the same passes by Bluestein's algorithm ([`super::bluestein`]).
//! Entries, in this order: `load`, `pass`, `finish`, `extend`, `real`,
//! `chirp`, `filter`, `product`, `unchirp`.

use super::expr::ctype;
use crate::dtype::DType;
use std::fmt::Write;

/// Appends the kernels for `precision` (f32 or f64) work arrays and an
/// input of `rank` dims (complex when `complex_input`) to `body`.
pub(super) fn render(
    id: &str,
    precision: DType,
    complex_input: bool,
    rank: usize,
    body: &mut String,
) -> Vec<String> {
    let t = ctype(precision);
    let pi = if precision == DType::F64 {
        "3.141592653589793"
    } else {
        "3.14159265f"
    };
    // Row-major coordinates of `e` over the work shape, last axis fastest:
    // the input position, and whether the input has that element.
    let mut walk = String::new();
    for d in (0..rank).rev() {
        let _ = writeln!(
            walk,
            "    {{ const i64 c = r % p.dim{d}; r /= p.dim{d}; inside = inside && c < p.ext{d}; at += c * p.str0_{d}; }}"
        );
    }
    let read = if complex_input {
        "re = x[2 * at]; im = x[2 * at + 1];"
    } else {
        "re = x[at];"
    };
    let mut names: Vec<String> = ["load", "pass", "finish", "extend", "real"]
        .iter()
        .map(|s| format!("{id}_fft_{s}"))
        .collect();
    let [load, pass, finish, extend, real] = [0, 1, 2, 3, 4].map(|i| &names[i]);
    let _ = write!(
        body,
        r#"KERNEL void {load}({id}_p p, GLOBAL const {t}* x, GLOBAL {t}* w) {{
  for (i64 e = GLOBAL_ID; e < p.n; e += GLOBAL_SIZE) {{
    i64 r = e, at = p.off0;
    int inside = 1;
{walk}    {t} re = ({t})0, im = ({t})0;
    if (inside) {{ {read} }}
    w[2 * e] = re;
    w[2 * e + 1] = im;
  }}
}}
/* One radix-2 Stockham pass over (m, len, k): sub-transforms of `span`
   points merge into ones of 2 * span. */
KERNEL void {pass}({id}_p p, GLOBAL const {t}* src, GLOBAL {t}* dst) {{
  const i64 hn = p.len / 2, items = p.m * hn * p.k;
  for (i64 e = GLOBAL_ID; e < items; e += GLOBAL_SIZE) {{
    const i64 i = e % p.k, u = e / p.k, j = u % hn, o = u / hn;
    const i64 q = j & (p.span - 1);
    const i64 a = (o * p.len + j) * p.k + i, b = a + hn * p.k;
    const i64 d0 = (o * p.len + 2 * j - q) * p.k + i, d1 = d0 + p.span * p.k;
    const {t} ang = (p.inv ? ({t})1 : ({t})-1) * {pi} * ({t})q / ({t})p.span;
    const {t} wr = xo_cos_{t}(ang), wi = xo_sin_{t}(ang);
    const {t} ar = src[2 * a], ai = src[2 * a + 1], xr = src[2 * b], xi = src[2 * b + 1];
    const {t} br = xr * wr - xi * wi, bi = xr * wi + xi * wr;
    dst[2 * d0] = ar + br;
    dst[2 * d0 + 1] = ai + bi;
    dst[2 * d1] = ar - br;
    dst[2 * d1 + 1] = ai - bi;
  }}
}}
/* (m, len, k) -> (m, keep, k), times scale. */
KERNEL void {finish}({id}_p p, GLOBAL const {t}* src, GLOBAL {t}* dst) {{
  const i64 items = p.m * p.keep * p.k;
  const {t} s = ({t})p.scale;
  for (i64 e = GLOBAL_ID; e < items; e += GLOBAL_SIZE) {{
    const i64 i = e % p.k, u = e / p.k, j = u % p.keep, o = u / p.keep;
    const i64 from = (o * p.len + j) * p.k + i;
    dst[2 * e] = src[2 * from] * s;
    dst[2 * e + 1] = src[2 * from + 1] * s;
  }}
}}
/* (m, len / 2 + 1, k) -> (m, len, k): X[len - j] = conj(X[j]). */
KERNEL void {extend}({id}_p p, GLOBAL const {t}* src, GLOBAL {t}* dst) {{
  const i64 h = p.len / 2 + 1, items = p.m * p.len * p.k;
  for (i64 e = GLOBAL_ID; e < items; e += GLOBAL_SIZE) {{
    const i64 i = e % p.k, u = e / p.k, j = u % p.len, o = u / p.len;
    const int mirror = j >= h;
    const i64 from = (o * h + (mirror ? p.len - j : j)) * p.k + i;
    dst[2 * e] = src[2 * from];
    dst[2 * e + 1] = mirror ? -src[2 * from + 1] : src[2 * from + 1];
  }}
}}
KERNEL void {real}({id}_p p, GLOBAL const {t}* src, GLOBAL {t}* dst) {{
  for (i64 e = GLOBAL_ID; e < p.n; e += GLOBAL_SIZE) dst[e] = src[2 * e];
}}
"#
    );
    names.extend(super::bluestein::render(id, t, precision, body));
    names
}
