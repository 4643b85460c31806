//! Per-evaluation overhead: a 3-op expression over 100 elements, recorded,
//! evaluated and read back, end to end (median of many runs).
//!
//! `cargo run --release -p crossover --example overhead`

use crossover::{Array, Result};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> Result<()> {
    let a = Array::from_vec((0..100).map(|i| i as f32 * 0.01).collect(), &[100])?;
    let b = Array::from_vec((0..100).map(|i| 1.0 + i as f32).collect(), &[100])?;
    let run = |read: bool| -> Result<f64> {
        let t = Instant::now();
        let y = a.mul(&b)?.add(&a)?.sin()?;
        if read {
            let v = y.to_vec::<f32>()?;
            std::hint::black_box(v);
        } else {
            y.eval()?;
        }
        Ok(t.elapsed().as_secs_f64() * 1e6)
    };
    for _ in 0..20_000 {
        run(true)?;
    }
    for read in [false, true] {
        let mut samples = Vec::with_capacity(100_000);
        for _ in 0..100_000 {
            samples.push(run(read)?);
        }
        println!(
            "3-op expression over 100 f32, record + {}: median {:.2} us",
            if read { "eval + to_vec" } else { "eval" },
            median(samples)
        );
    }
    Ok(())
}
