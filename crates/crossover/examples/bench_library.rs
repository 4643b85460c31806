//! Benchmarks of the library operations (matmul, solve, SVD, FFT, sparse),
//! printing one JSON line per case: `{"op", "size", "median_ms", "min_ms"}`.
//!
//! Run: `cargo run --release -p crossover --example bench_library [-- OPS...]`
//! (see scripts/bench_library.sh for the side-by-side run with NumPy/SciPy).

use crossover::fft::{self, Norm};
use crossover::sparse::Csr;
use crossover::{linalg, Array, DType, Generator};
use std::time::Instant;

fn time(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    f(); // warm-up
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (t[t.len() / 2], t[0])
}

fn report(op: &str, size: usize, (median, min): (f64, f64)) {
    println!(
        "{{\"impl\": \"crossover\", \"op\": \"{op}\", \"size\": {size}, \"median_ms\": {median:.3}, \"min_ms\": {min:.3}}}"
    );
}

fn ready(a: Array) -> Array {
    a.eval().unwrap();
    a
}

fn main() -> crossover::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let want = |op: &str| args.is_empty() || args.iter().any(|a| a == op);
    let mut rng = Generator::new(7);
    if want("matmul") {
        for n in [2048usize, 4096] {
            let a = ready(rng.standard_normal(&[n, n], DType::F32)?);
            let b = ready(rng.standard_normal(&[n, n], DType::F32)?);
            let reps = if n >= 4096 { 5 } else { 9 };
            report(
                "matmul",
                n,
                time(reps, || {
                    a.matmul(&b).unwrap().eval().unwrap();
                }),
            );
        }
    }
    if want("solve_spd") {
        let n = 2048;
        let r = ready(rng.standard_normal(&[n, n], DType::F32)?);
        // A = R R^T / n + I: symmetric positive definite, well conditioned.
        let eye = ready(Array::from_vec(
            (0..n * n)
                .map(|i| if i % (n + 1) == 0 { 1.0f32 } else { 0.0 })
                .collect(),
            &[n, n],
        )?);
        let a = ready(r.matmul(&r.transpose()?)?.div(n as f64)?.add(&eye)?);
        let b = ready(rng.standard_normal(&[n], DType::F32)?);
        report(
            "solve_spd",
            n,
            time(9, || {
                linalg::solve_spd(&a, &b).unwrap().eval().unwrap();
            }),
        );
    }
    if want("svd") {
        let n = 2048;
        let a = ready(rng.standard_normal(&[n, n], DType::F32)?);
        report(
            "svd",
            n,
            time(5, || {
                let (u, s, vt) = linalg::svd(&a).unwrap();
                Array::eval_all(&[u, s, vt]).unwrap();
            }),
        );
    }
    if want("fft2") {
        let n = 2048;
        let x = ready(rng.standard_normal(&[n, n], DType::F32)?);
        report(
            "fft2",
            n,
            time(9, || {
                fft::fft2(&x, Norm::Backward).unwrap().eval().unwrap();
            }),
        );
    }
    if want("sparse_matmul") {
        let n = 4096;
        let a = Csr::random(n, n, 0.01, 1, DType::F32)?;
        let b = Csr::random(n, n, 0.01, 2, DType::F32)?;
        report(
            "sparse_matmul",
            n,
            time(9, || {
                std::hint::black_box(a.matmul(&b).unwrap());
            }),
        );
    }
    Ok(())
}
