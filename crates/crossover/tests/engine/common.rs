//! Shared test helpers: seeded non-zero inputs and float64 comparisons.
#![allow(dead_code)]

use crossover::{Array, DType};

/// Sizes that cross the CPU interpreter's chunk (2048) and task edges.
pub const EDGE_SIZES: &[usize] = &[1, 7, 2047, 2048, 2049, 65_537, 131_073];

/// Deterministic pseudo-random values in [lo, hi) (xorshift; independent of
/// the engine's own generator, never all zero).
pub fn values(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// An array of `dtype` with values in [lo, hi), and its values as f64 (after
/// rounding to the dtype).
pub fn array(shape: &[usize], dtype: DType, seed: u64, lo: f64, hi: f64) -> (Array, Vec<f64>) {
    let n: usize = shape.iter().product();
    let v = values(n, seed, lo, hi);
    match dtype {
        DType::F32 => {
            let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            let back = f.iter().map(|&x| x as f64).collect();
            (Array::from_vec(f, shape).unwrap(), back)
        }
        DType::F64 => (Array::from_vec(v.clone(), shape).unwrap(), v),
        DType::I32 => {
            let f: Vec<i32> = v.iter().map(|&x| x.floor() as i32).collect();
            let back = f.iter().map(|&x| x as f64).collect();
            (Array::from_vec(f, shape).unwrap(), back)
        }
        DType::I64 => {
            let f: Vec<i64> = v.iter().map(|&x| x.floor() as i64).collect();
            let back = f.iter().map(|&x| x as f64).collect();
            (Array::from_vec(f, shape).unwrap(), back)
        }
        DType::Bool => {
            let f: Vec<bool> = v.iter().map(|&x| x > (lo + hi) / 2.0).collect();
            let back = f.iter().map(|&x| x as u8 as f64).collect();
            (Array::from_vec(f, shape).unwrap(), back)
        }
        d => panic!("no test arrays of {d}"),
    }
}

/// Asserts |got - want| <= atol + rtol * |want| elementwise (NaNs must match).
#[track_caller]
pub fn assert_close(got: &[f64], want: &[f64], rtol: f64, atol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if w.is_nan() || g.is_nan() {
            assert!(w.is_nan() && g.is_nan(), "{what}[{i}]: got {g}, want {w}");
            continue;
        }
        if w.is_infinite() || g.is_infinite() {
            assert_eq!(g, w, "{what}[{i}]");
            continue;
        }
        let tol = atol + rtol * w.abs();
        assert!(
            (g - w).abs() <= tol,
            "{what}[{i}]: got {g}, want {w} (tol {tol:e})"
        );
    }
}

/// Relative tolerance for results rounded to `dtype` (a few units in the
/// last place of that type).
pub fn rtol(dtype: DType, ulps: f64) -> f64 {
    match dtype {
        DType::F32 => ulps * f32::EPSILON as f64,
        _ => ulps * f64::EPSILON,
    }
}

/// Row-major multi-index iteration helper: flat index of `idx` in `shape`.
pub fn flat(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

/// All multi-indices of a shape, row-major.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        out.push(idx.clone());
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}
