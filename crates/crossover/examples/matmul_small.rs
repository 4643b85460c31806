//! Matrix-product timings for square sizes: faer's matmul (sequential, with
//! two threads, and on the transposed problem a row-major output gives it),
//! the engine's row-block product (2 and 8 tasks on the calling thread and
//! the pool), and crossover's `a.matmul(b)` read back; median of many runs,
//! inputs made outside the timed region.
//!
//! `cargo run --profile fast -p crossover --example matmul_small [sizes]`

use crossover::{Array, Result};
use faer::{Accum, Mat, Par};
use std::time::Instant;

/// Median microseconds of `f` over about 0.3 s (at least 7 runs).
fn median_us(mut f: impl FnMut()) -> f64 {
    f();
    f();
    let mut v = Vec::new();
    let t0 = Instant::now();
    while (t0.elapsed().as_secs_f64() < 0.3 || v.len() < 7) && v.len() < 5000 {
        let t = Instant::now();
        f();
        v.push(t.elapsed().as_secs_f64() * 1e6);
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The row-block product hook (`linalg::bench_product_rows_*`).
type Hook<T> = fn(&mut [T], &[T], &[T], usize, usize) -> bool;

fn bench<T>(name: &str, n: usize, one: T, hook: Hook<T>) -> Result<()>
where
    T: faer::traits::ComplexField + Copy + crossover::Element + From<f32> + Into<f64>,
{
    let val = |i: usize| T::from(((i * 7919) % 1000) as f32 / 500.0 - 1.0);
    let a = Mat::<T>::from_fn(n, n, |i, j| val(i * n + j));
    let b = Mat::<T>::from_fn(n, n, |i, j| val(i * n + j + 17));
    let mut c = Mat::<T>::zeros(n, n);
    let mut row = [0.0f64; 6];
    for (slot, par, trans) in [
        (0, Par::Seq, false),
        (1, Par::rayon(2), false),
        (2, Par::Seq, true),
    ] {
        row[slot] = median_us(|| {
            // `trans`: the row-major view crossover gives faer (C^T = B^T A^T).
            if trans {
                faer::linalg::matmul::matmul(
                    c.as_mut().transpose_mut(),
                    Accum::Replace,
                    b.as_ref().transpose(),
                    a.as_ref().transpose(),
                    one,
                    par,
                )
            } else {
                faer::linalg::matmul::matmul(
                    c.as_mut(),
                    Accum::Replace,
                    a.as_ref(),
                    b.as_ref(),
                    one,
                    par,
                )
            }
        });
    }
    let xa = Array::from_vec((0..n * n).map(val).collect::<Vec<T>>(), &[n, n])?;
    let xb = Array::from_vec((0..n * n).map(|i| val(i + 17)).collect::<Vec<T>>(), &[n, n])?;
    xa.eval()?;
    xb.eval()?;
    let (av, bv) = (
        (0..n * n).map(val).collect::<Vec<T>>(),
        (0..n * n).map(|i| val(i + 17)).collect::<Vec<T>>(),
    );
    let mut cv = vec![one; n * n];
    for (slot, tasks) in [(4, 2), (5, 8)] {
        row[slot] = median_us(|| {
            hook(&mut cv, &av, &bv, n, tasks);
        });
    }
    // Row blocks against one product (same inputs): the largest difference.
    hook(&mut cv, &av, &bv, n, 8);
    faer::linalg::matmul::matmul(
        c.as_mut(),
        Accum::Replace,
        a.as_ref(),
        b.as_ref(),
        one,
        Par::Seq,
    );
    let err = (0..n * n)
        .map(|i| (cv[i].into() - c[(i / n, i % n)].into()).abs())
        .fold(0.0f64, f64::max);
    row[3] = median_us(|| {
        let v = xa.matmul(&xb).and_then(|c| c.to_vec::<T>());
        std::hint::black_box(v.ok());
    });
    println!(
        "{name} N={n:5}: faer seq {:8.1} par2 {:8.1} seq-rowmajor {:8.1} | rows 2 tasks {:8.1} 8 tasks {:8.1} | crossover {:8.1} us (rows-faer max diff {err:.1e})",
        row[0], row[1], row[2], row[4], row[5], row[3]
    );
    Ok(())
}

fn main() -> Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .nth(1)
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![32, 48, 64, 96, 100, 128, 160, 192, 256, 384, 512, 1024]);
    for &n in &sizes {
        bench::<f32>("f32", n, 1.0, crossover::linalg::bench_product_rows_f32)?;
    }
    for &n in &sizes {
        bench::<f64>("f64", n, 1.0, crossover::linalg::bench_product_rows_f64)?;
    }
    Ok(())
}
