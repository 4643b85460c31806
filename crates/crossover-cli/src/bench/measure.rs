//! The timing method: one checked warm-up, then at least `min_reps` timed
//! runs and at least `min_time` seconds; median and minimum reported.

use std::time::Instant;

/// How long to measure.
#[derive(Clone, Copy, Debug)]
pub struct Method {
    pub min_reps: usize,
    pub min_time: f64,
    /// Stop after this many seconds even if `min_reps` is not reached
    /// (only very slow cases hit it; the report shows the real count).
    pub max_time: f64,
}

/// Timings of one case.
#[derive(Clone, Debug)]
pub struct Timing {
    pub median_s: f64,
    pub min_s: f64,
    pub reps: usize,
}

/// Times `f` (already warmed up by the caller).
pub fn measure<E>(method: Method, mut f: impl FnMut() -> Result<(), E>) -> Result<Timing, E> {
    let mut samples = Vec::new();
    let start = Instant::now();
    loop {
        let t = Instant::now();
        f()?;
        samples.push(t.elapsed().as_secs_f64());
        let total = start.elapsed().as_secs_f64();
        let enough = samples.len() >= method.min_reps && total >= method.min_time;
        if enough || total >= method.max_time || samples.len() >= 100_000 {
            break;
        }
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let n = samples.len();
    let median_s = if n % 2 == 1 {
        samples[n / 2]
    } else {
        0.5 * (samples[n / 2 - 1] + samples[n / 2])
    };
    Ok(Timing {
        median_s,
        min_s: samples[0],
        reps: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_at_least_min_reps_and_reports_order_statistics() {
        let mut k = 0u64;
        let t = measure::<()>(
            Method {
                min_reps: 7,
                min_time: 0.0,
                max_time: 10.0,
            },
            || {
                k += 1;
                std::thread::sleep(std::time::Duration::from_micros(200 * (k % 3)));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(t.reps, 7);
        assert!(t.min_s <= t.median_s);
        assert!(t.median_s >= 0.0002 * 0.9);
    }
}
