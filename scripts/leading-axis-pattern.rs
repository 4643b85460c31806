//! The read pattern of a leading-axis (`axis=0`) float32 max, alone:
//! how fast can eight rows of a 4096x4096 matrix, read side by side
//! column block by column block, go on this machine, against one flat
//! stream of the same bytes? No crossover code: AVX-512 intrinsics only.
//! (Issue 16, target 4; docs/benchmarks.md, session 56.)
//!
//! ```sh
//! rustc -O -C target-cpu=native scripts/leading-axis-pattern.rs -o /tmp/pattern && /tmp/pattern
//! ```
use std::arch::x86_64::*;
use std::time::Instant;

/// How the rows of a group are folded into the running maxima.
#[derive(Clone, Copy)]
enum Fold {
    /// NaN-aware, as crossover's (the first NaN wins; ties keep the earlier row).
    NanAware,
    /// Plain `vmaxps` tree, with a NaN flag (exact when no value is NaN).
    Plain,
}

/// Folds rows `rows` (each `acc.len()` columns) into `acc`, `R` rows at a time.
#[target_feature(enable = "avx512f")]
unsafe fn group<const R: usize>(acc: &mut [f32], rows: [&[f32]; R], fold: Fold) -> bool {
    let mut nan: __mmask16 = 0;
    let mut j = 0;
    while j + 16 <= acc.len() {
        let p = acc.as_mut_ptr().add(j);
        let mut a = _mm512_loadu_ps(p);
        match fold {
            Fold::NanAware => {
                for row in rows {
                    let b = _mm512_loadu_ps(row.as_ptr().add(j));
                    let a_ord = _mm512_cmp_ps_mask::<_CMP_ORD_Q>(a, a);
                    let b_nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(b, b);
                    let gt = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(b, a);
                    a = _mm512_mask_blend_ps(a_ord & (b_nan | gt), a, b);
                }
            }
            Fold::Plain => {
                for row in rows {
                    let b = _mm512_loadu_ps(row.as_ptr().add(j));
                    nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(b, b);
                    a = _mm512_max_ps(b, a);
                }
            }
        }
        _mm512_storeu_ps(p, a);
        j += 16;
    }
    nan != 0
}

/// `axis=0` max of the `n x n` matrix `m` on `threads` threads (each its
/// half of the rows), `cols` columns a block, `R` rows a group: seconds.
fn leading<const R: usize>(m: &[f32], n: usize, cols: usize, threads: usize, fold: Fold) -> f64 {
    let t = Instant::now();
    std::thread::scope(|s| {
        for th in 0..threads {
            s.spawn(move || {
                let per = n / threads;
                let mut out = vec![0f32; n];
                for cb in 0..n / cols {
                    let mut acc = vec![f32::MIN; cols];
                    for r in (th * per..(th + 1) * per).step_by(R) {
                        let rows: [&[f32]; R] =
                            std::array::from_fn(|q| &m[(r + q) * n + cb * cols..][..cols]);
                        // SAFETY: AVX-512F is checked in `main`.
                        std::hint::black_box(unsafe { group::<R>(&mut acc, rows, fold) });
                    }
                    out[cb * cols..][..cols].copy_from_slice(&acc);
                }
                std::hint::black_box(&out);
            });
        }
    });
    t.elapsed().as_secs_f64()
}

/// The max of `m` as one stream, four independent `vmaxps` chains.
#[target_feature(enable = "avx512f")]
unsafe fn flat_max(m: &[f32]) -> f32 {
    let mut acc = [_mm512_set1_ps(f32::MIN); 4];
    for c in m.chunks_exact(64) {
        for (q, a) in acc.iter_mut().enumerate() {
            *a = _mm512_max_ps(*a, _mm512_loadu_ps(c.as_ptr().add(16 * q)));
        }
    }
    _mm512_reduce_max_ps(_mm512_max_ps(
        _mm512_max_ps(acc[0], acc[1]),
        _mm512_max_ps(acc[2], acc[3]),
    ))
}

fn flat(m: &[f32], threads: usize) -> f64 {
    let t = Instant::now();
    std::thread::scope(|s| {
        let per = m.len() / threads;
        for th in 0..threads {
            // SAFETY: AVX-512F is checked in `main`.
            s.spawn(move || {
                std::hint::black_box(unsafe { flat_max(&m[th * per..(th + 1) * per]) })
            });
        }
    });
    t.elapsed().as_secs_f64()
}

fn main() {
    assert!(is_x86_feature_detected!("avx512f"), "needs AVX-512F");
    let n = 4096;
    let m: Vec<f32> = (0..n * n)
        .map(|i| ((i as u64 * 2654435761) % 1000003) as f32)
        .collect();
    type Case = (&'static str, fn(&[f32], usize, usize) -> f64);
    let cases: [Case; 7] = [
        ("flat max", |m, _, t| flat(m, t)),
        ("8 rows, 2048 cols, NaN-aware", |m, n, t| {
            leading::<8>(m, n, 2048, t, Fold::NanAware)
        }),
        ("8 rows, 4096 cols, NaN-aware", |m, n, t| {
            leading::<8>(m, n, 4096, t, Fold::NanAware)
        }),
        ("8 rows, 2048 cols, plain", |m, n, t| {
            leading::<8>(m, n, 2048, t, Fold::Plain)
        }),
        ("8 rows, 4096 cols, plain", |m, n, t| {
            leading::<8>(m, n, 4096, t, Fold::Plain)
        }),
        ("4 rows, 4096 cols, plain", |m, n, t| {
            leading::<4>(m, n, 4096, t, Fold::Plain)
        }),
        ("1 row, 4096 cols, NaN-aware", |m, n, t| {
            leading::<1>(m, n, 4096, t, Fold::NanAware)
        }),
    ];
    for threads in [1, 2] {
        let mut times = vec![Vec::new(); cases.len()];
        for _ in 0..21 {
            for (k, (_, f)) in cases.iter().enumerate() {
                times[k].push(f(&m, n, threads) * 1e3);
            }
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let base = median(&mut times[0]);
        for (k, (name, _)) in cases.iter().enumerate() {
            let t = median(&mut times[k]);
            println!(
                "{threads} thread(s)  {name:30} {t:6.2} ms  {:.2} of the flat max",
                base / t
            );
        }
    }
}
