//! CPU-side advice for a machine without a usable GPU: does using every
//! core pay (and from which size), what fusion saves, and two rules of
//! thumb with this machine's numbers.
//!
//! The measurements run the fused elementwise workload `a*b + sin(a) +
//! cos(b)` through a private engine forced onto the CPU, with history
//! refinement off (so they never touch the user's profile). Inputs are made
//! and evaluated outside the timed region; the two sides of each comparison
//! run alternately after a warm-up each, at least 5 times and 0.2 s (at
//! most 0.5 s), and each side's median is reported.
//!
//! One thread: the engine runs big kernels on its own rayon pool
//! (`crossover::cpu::pool()`, sized by `CROSSOVER_NUM_THREADS`), not on the
//! caller's, so an outer one-thread pool would change nothing. Instead all
//! workers but one are parked (blocked on a condition variable through
//! `spawn_broadcast`) while the one-thread runs are timed: the engine still
//! splits the kernel into tasks, and the one free worker runs them all.

use super::classes::{Class, Keys};
use crossover::cost::{Profile, Work};
use crossover::{Array, DType, DeviceKind, Engine, Generator, Policy, Result};
use serde::Serialize;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Sizes (elements) of the threads scan.
pub const THREAD_SIZES: [usize; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];
/// Sizes (elements) of the fusion comparison.
pub const FUSION_SIZES: [usize; 2] = [1_000_000, 10_000_000];
/// All threads "pay" from the size where they are at least this much faster.
pub const PAYS: f64 = 1.1;

/// One size of the threads scan.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadPoint {
    /// Elements of each input.
    pub elements: usize,
    /// Median seconds with the engine's other workers parked.
    pub one_thread_s: f64,
    /// Median seconds with every worker.
    pub all_threads_s: f64,
    /// `one_thread_s / all_threads_s`.
    pub speedup: f64,
    /// The runs varied a lot (see [`NOISY`]): a busy machine.
    pub noisy: bool,
}

/// One size of the fusion comparison.
#[derive(Clone, Debug, Serialize)]
pub struct FusionPoint {
    /// Elements of each input.
    pub elements: usize,
    /// One evaluation of the whole expression.
    pub fused_s: f64,
    /// An evaluation after each of the 5 ops (NumPy's way).
    pub unfused_s: f64,
    /// `unfused_s - fused_s`.
    pub saved_s: f64,
    /// `unfused_s / fused_s`.
    pub ratio: f64,
    /// Whether the times were measured (else predicted by the profile).
    pub measured: bool,
    /// The runs varied a lot (see [`NOISY`]): a busy machine.
    pub noisy: bool,
}

/// float32 against float64 on this CPU.
#[derive(Clone, Debug, Serialize)]
pub struct Precision {
    /// `profile` (calibrated rates), `defaults` (assumed: half) or `measured`.
    pub source: &'static str,
    /// f32 / f64 arithmetic rate.
    pub arith_ratio: f64,
    /// f32 / f64 transcendental rate.
    pub transcendental_ratio: f64,
    /// Measured time ratio f64 / f32 of the elementwise workload at 1e6
    /// elements (when the profile has only defaults).
    pub measured_ratio: Option<f64>,
}

/// The CPU-side advice.
#[derive(Clone, Debug, Serialize)]
pub struct CpuAdvice {
    /// Threads of the engine's pool.
    pub threads: usize,
    /// Elements from which the engine runs the elementwise kernel on its
    /// pool rather than on the calling thread (`parallel_min_work()`).
    pub engine_parallel_from: usize,
    /// One thread against all, per size of [`THREAD_SIZES`] (empty with
    /// `--no-measure` or a one-thread pool).
    pub thread_scan: Vec<ThreadPoint>,
    /// Smallest scanned size from which all threads are at least
    /// [`PAYS`]x faster than one, at that size and every larger one.
    pub threads_pay_from: Option<usize>,
    /// Why the scan is missing or partial, if it is.
    pub thread_note: Option<String>,
    /// Fused against unfused, per size of [`FUSION_SIZES`].
    pub fusion: Vec<FusionPoint>,
    /// float32 against float64.
    pub precision: Precision,
    /// One line: keep data where it is.
    pub keep_data: String,
    /// One line: prefer float32.
    pub float32: String,
    /// Seconds the measurements took (0 with `--no-measure`).
    pub measure_s: f64,
}

/// How long to measure one comparison.
#[derive(Clone, Copy, Debug)]
pub struct Method {
    /// Runs of each side at least...
    pub min_reps: usize,
    /// ...and at least this many seconds in all...
    pub min_time: f64,
    /// ...but stop after this many seconds (with at least 3 runs each).
    pub max_time: f64,
}

/// The quick method: 5+ runs each, 0.2 s to 0.5 s per comparison.
pub const QUICK: Method = Method {
    min_reps: 5,
    min_time: 0.2,
    max_time: 0.5,
};

/// Runs are "noisy" when the middle half of one side's runs spans more
/// than this fraction of its median.
pub const NOISY: f64 = 0.25;

/// The median of a sample and how much it varies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Median seconds.
    pub median: f64,
    /// Interquartile range over median.
    pub spread: f64,
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (i, t) = (pos.floor() as usize, pos.fract());
    let j = (i + 1).min(sorted.len() - 1);
    sorted[i] + t * (sorted[j] - sorted[i])
}

fn stats(mut v: Vec<f64>) -> Stats {
    v.sort_by(|a, b| a.total_cmp(b));
    let median = quantile(&v, 0.5);
    Stats {
        median,
        spread: (quantile(&v, 0.75) - quantile(&v, 0.25)) / median,
    }
}

/// Seconds of `a` and of `b` (median and spread), run alternately (a, b, a, b...) after
/// one warm-up each, so that a change in the machine's load hits both
/// alike. Each closure runs once and returns the seconds it timed (so it
/// can keep set-up, like parking workers, out of the timing).
///
/// # Errors
/// The first error of either side.
pub fn median_pair(
    method: Method,
    mut a: impl FnMut() -> Result<f64>,
    mut b: impl FnMut() -> Result<f64>,
) -> Result<(Stats, Stats)> {
    a()?;
    b()?;
    let (mut sa, mut sb) = (Vec::new(), Vec::new());
    let start = Instant::now();
    loop {
        sa.push(a()?);
        sb.push(b()?);
        let t = start.elapsed().as_secs_f64();
        let n = sa.len();
        let enough = n >= method.min_reps && t >= method.min_time;
        if enough || (t >= method.max_time && n >= 3) || n >= 10_000 {
            break;
        }
    }
    Ok((stats(sa), stats(sb)))
}

fn timed(f: impl FnOnce() -> Result<()>) -> Result<f64> {
    let t = Instant::now();
    f()?;
    Ok(t.elapsed().as_secs_f64())
}

/// All workers of the engine's pool but one, blocked until dropped.
struct Parked {
    state: Arc<(Mutex<(usize, bool)>, Condvar)>,
}

impl Parked {
    /// Parks `threads - 1` workers; `None` when the pool has one thread or
    /// the workers did not all park within a second (then none stay parked).
    fn all_but_one() -> Option<Parked> {
        let pool = crossover::cpu::pool();
        let want = pool.current_num_threads().checked_sub(1)?;
        if want == 0 {
            return None;
        }
        let state = Arc::new((Mutex::new((0usize, false)), Condvar::new()));
        let s = Arc::clone(&state);
        pool.spawn_broadcast(move |ctx| {
            if ctx.index() == 0 {
                return;
            }
            let (lock, cv) = &*s;
            let mut g = lock.lock().unwrap_or_else(|e| e.into_inner());
            g.0 += 1;
            cv.notify_all();
            while !g.1 {
                g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
        });
        let parked = Parked { state };
        let (lock, cv) = &*parked.state;
        let g = lock.lock().unwrap_or_else(|e| e.into_inner());
        let (g, timeout) = cv
            .wait_timeout_while(g, Duration::from_secs(1), |g| g.0 < want)
            .unwrap_or_else(|e| e.into_inner());
        drop(g);
        // Dropping `parked` on a timeout releases whoever did park.
        (!timeout.timed_out()).then_some(parked)
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        let (lock, cv) = &*self.state;
        lock.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        cv.notify_all();
    }
}

struct Bench {
    engine: Engine,
}

impl Bench {
    fn new(profile: Profile) -> Bench {
        let engine = Engine::new(profile);
        engine.set_refine(false);
        Bench { engine }
    }

    fn eval(&self, a: &Array) -> Result<()> {
        self.engine
            .evaluate(
                std::slice::from_ref(a),
                Some(Policy::Force(DeviceKind::Cpu)),
            )
            .map(|_| ())
    }

    fn inputs(&self, n: usize, dtype: DType) -> Result<(Array, Array)> {
        let a = Generator::new(1).uniform(&[n], dtype)?;
        let b = Generator::new(2).uniform(&[n], dtype)?;
        self.eval(&a)?;
        self.eval(&b)?;
        Ok((a, b))
    }

    /// One fused evaluation, timed.
    fn fused(&self, a: &Array, b: &Array) -> Result<f64> {
        timed(|| {
            let y = a.mul(b)?.add(&a.sin()?)?.add(&b.cos()?)?;
            self.eval(&y)
        })
    }

    /// One fused evaluation on one thread, timed (`None`: the workers
    /// could not be parked).
    fn fused_one_thread(&self, a: &Array, b: &Array) -> Result<Option<f64>> {
        match Parked::all_but_one() {
            Some(guard) => {
                let t = self.fused(a, b);
                drop(guard);
                t.map(Some)
            }
            None => Ok(None),
        }
    }

    /// One evaluation per op (5 kernels, each result materialised), timed.
    fn unfused(&self, a: &Array, b: &Array) -> Result<f64> {
        timed(|| {
            let t1 = a.mul(b)?;
            self.eval(&t1)?;
            let t2 = a.sin()?;
            self.eval(&t2)?;
            let t3 = t1.add(&t2)?;
            self.eval(&t3)?;
            let t4 = b.cos()?;
            self.eval(&t4)?;
            let t5 = t3.add(&t4)?;
            self.eval(&t5)
        })
    }
}

/// The five kernels NumPy-style evaluation runs for `a*b + sin(a) +
/// cos(b)` over `n` float32 elements (each reads its operands and writes
/// its result): mul, sin, add, cos, add.
pub fn unfused_kernels(n: usize) -> Vec<Work> {
    let e = n as f64;
    let k = |bytes: f64, arith: f64, trans: f64, name: &str| Work {
        points: n,
        bytes: bytes * e,
        arith: arith * e,
        transcendental: trans * e,
        double: false,
        library: None,
        key: format!("advise unfused {name}"),
    };
    vec![
        k(12.0, 1.0, 0.0, "mul"),
        k(8.0, 0.0, 20.0, "sin"),
        k(12.0, 1.0, 0.0, "add"),
        k(8.0, 0.0, 20.0, "cos"),
        k(12.0, 1.0, 0.0, "add"),
    ]
}

/// The fusion comparison predicted by `profile` (no measurement).
pub fn predicted_fusion(profile: &Profile, keys: &Keys, n: usize) -> FusionPoint {
    let side = (n as f64).sqrt().round() as usize;
    let cpu = |w: &Work| profile.predict_kernel(DeviceKind::Cpu, w).seconds;
    let fused: f64 = Class::Elementwise.kernels(side, keys).iter().map(cpu).sum();
    let unfused: f64 = unfused_kernels(n).iter().map(cpu).sum();
    FusionPoint {
        elements: n,
        fused_s: fused,
        unfused_s: unfused,
        saved_s: unfused - fused,
        ratio: unfused / fused,
        measured: false,
        noisy: false,
    }
}

/// Elements from which the engine runs the elementwise kernel in
/// parallel: work `n * (1 + flops per point / 4)` reaches
/// `crossover::cpu::parallel_min_work()` (calibrated, or the default).
pub fn engine_parallel_from(keys: &Keys) -> usize {
    let w = &Class::Elementwise.kernels(1, keys)[0];
    let per_point = (w.arith + w.transcendental) / w.points.max(1) as f64;
    (crossover::cpu::parallel_min_work() / (1.0 + per_point / 4.0)).ceil() as usize
}

/// The smallest scanned size from which all threads pay (see [`PAYS`]).
pub fn threads_pay_from(scan: &[ThreadPoint]) -> Option<usize> {
    let mut from = None;
    for p in scan.iter().rev() {
        if p.speedup < PAYS {
            break;
        }
        from = Some(p.elements);
    }
    from
}

fn precision_from_profile(profile: &Profile, defaults: bool) -> Precision {
    let cpu = profile.device_or_default(DeviceKind::Cpu);
    Precision {
        source: if defaults { "defaults" } else { "profile" },
        arith_ratio: cpu.rates.f32_arith / cpu.rates.f64_arith,
        transcendental_ratio: cpu.rates.f32_transcendental / cpu.rates.f64_transcendental,
        measured_ratio: None,
    }
}

/// The CPU advice; measures unless `measure` is false (then the fusion
/// figures are predictions and there is no threads scan).
/// `defaults`: the profile holds only the built-in defaults.
///
/// # Errors
/// An engine error during a measurement (which would be a bug).
pub fn cpu_advice(profile: &Profile, defaults: bool, measure: bool) -> Result<CpuAdvice> {
    let keys = Keys::from_engine();
    let start = Instant::now();
    let threads = crossover::cpu::threads();
    let mut precision = precision_from_profile(profile, defaults);
    let mut thread_scan = Vec::new();
    let mut thread_note = None;
    let mut fusion = Vec::new();
    if measure {
        let bench = Bench::new(profile.clone());
        for &n in &FUSION_SIZES {
            let (a, b) = bench.inputs(n, DType::F32)?;
            let (fused, unfused) =
                median_pair(QUICK, || bench.fused(&a, &b), || bench.unfused(&a, &b))?;
            fusion.push(FusionPoint {
                elements: n,
                fused_s: fused.median,
                unfused_s: unfused.median,
                saved_s: unfused.median - fused.median,
                ratio: unfused.median / fused.median,
                measured: true,
                noisy: fused.spread.max(unfused.spread) > NOISY,
            });
        }
        if threads < 2 {
            thread_note = Some(format!(
                "the engine uses {threads} thread (CROSSOVER_NUM_THREADS or a single core): \
                 nothing to compare"
            ));
        } else {
            for &n in &THREAD_SIZES {
                let (a, b) = bench.inputs(n, DType::F32)?;
                let mut parked = true;
                let (one, all) = median_pair(
                    QUICK,
                    || match bench.fused_one_thread(&a, &b)? {
                        Some(t) => Ok(t),
                        None => {
                            parked = false;
                            Ok(f64::NAN)
                        }
                    },
                    || bench.fused(&a, &b),
                )?;
                if !parked || one.median.is_nan() {
                    thread_note = Some(
                        "could not hold the engine's other workers idle; one-thread times \
                         missing"
                            .to_string(),
                    );
                    break;
                }
                thread_scan.push(ThreadPoint {
                    elements: n,
                    one_thread_s: one.median,
                    all_threads_s: all.median,
                    speedup: one.median / all.median,
                    noisy: one.spread.max(all.spread) > NOISY,
                });
            }
        }
        if defaults {
            let n = FUSION_SIZES[0];
            let (a32, b32) = bench.inputs(n, DType::F32)?;
            let (a64, b64) = bench.inputs(n, DType::F64)?;
            let (t32, t64) = median_pair(
                QUICK,
                || bench.fused(&a32, &b32),
                || bench.fused(&a64, &b64),
            )?;
            precision.measured_ratio = Some(t64.median / t32.median);
            precision.source = "measured";
        }
    } else {
        thread_note = Some("not measured (--no-measure)".to_string());
        fusion = FUSION_SIZES
            .iter()
            .map(|&n| predicted_fusion(profile, &keys, n))
            .collect();
    }
    let keep_data = keep_data_line(profile, defaults);
    let float32 = float32_line(&precision, profile);
    Ok(CpuAdvice {
        threads,
        engine_parallel_from: engine_parallel_from(&keys),
        threads_pay_from: threads_pay_from(&thread_scan),
        thread_scan,
        thread_note,
        fusion,
        precision,
        keep_data,
        float32,
        measure_s: if measure {
            start.elapsed().as_secs_f64()
        } else {
            0.0
        },
    })
}

fn keep_data_line(profile: &Profile, defaults: bool) -> String {
    use super::render::time3 as time;
    let cpu = profile.device_or_default(DeviceKind::Cpu);
    let bytes = 40_000_000usize; // 1e7 float32
    let pass = 2.0 * bytes as f64 / cpu.bandwidth;
    let trip = profile.predict_copy(DeviceKind::Cpu, DeviceKind::Gpu, bytes)
        + profile.predict_copy(DeviceKind::Gpu, DeviceKind::Cpu, bytes);
    format!(
        "keep data where it is: every extra pass over 1e7 float32 elements (read + write) \
         costs {} at this CPU's {:.1} GB/s{}, and moving them to a GPU and back over PCIe would \
         cost {}: convert, copy and materialise as rarely as you can; on a GPU machine, keep \
         chains of work on the device",
        time(pass),
        cpu.bandwidth / 1e9,
        if defaults { " (default figure)" } else { "" },
        time(trip)
    )
}

fn float32_line(p: &Precision, profile: &Profile) -> String {
    let rates = format!(
        "float32 rates are {:.1}x (arithmetic) and {:.1}x (sin, exp...) the float64 ones",
        p.arith_ratio, p.transcendental_ratio
    );
    let base = "prefer float32 where precision allows: half the bytes to move";
    match (p.source, p.measured_ratio) {
        ("measured", Some(r)) => format!(
            "{base}, and float64 took {r:.1}x as long for a*b + sin(a) + cos(b) at 1e6 elements \
             (measured; the default profile merely assumes 2x: run `crossover calibrate --quick`)"
        ),
        ("defaults", _) => format!(
            "{base}; the default profile assumes {rates} (not measured: run `crossover calibrate \
             --quick`)"
        ),
        _ => format!("{base}, and {rates} ({})", profile.source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_pair_alternates_and_takes_medians() {
        let order = std::cell::RefCell::new(Vec::new());
        let mut ka = 0;
        let (a, b) = median_pair(
            Method {
                min_reps: 5,
                min_time: 0.0,
                max_time: 1.0,
            },
            || {
                ka += 1;
                order.borrow_mut().push('a');
                // Warm-up 100, then 1, 9, 2, 8, 3: median 3.
                Ok([100.0, 1.0, 9.0, 2.0, 8.0, 3.0][ka - 1])
            },
            || {
                order.borrow_mut().push('b');
                Ok(7.0)
            },
        )
        .unwrap();
        assert_eq!((a.median, b.median), (3.0, 7.0));
        assert_eq!(b.spread, 0.0);
        // Sorted 1 2 3 8 9: quartiles 2 and 8, spread 6 / 3.
        assert_eq!(a.spread, 2.0);
        let order: String = order.into_inner().into_iter().collect();
        assert_eq!(order, "abababababab");
    }

    #[test]
    fn stats_of_even_count_average_the_middle() {
        assert_eq!(stats(vec![4.0, 1.0, 3.0, 2.0]).median, 2.5);
        assert!(stats(vec![]).median.is_nan());
    }

    #[test]
    fn threads_pay_from_needs_every_larger_size() {
        let p = |elements, speedup| ThreadPoint {
            elements,
            one_thread_s: speedup,
            all_threads_s: 1.0,
            speedup,
            noisy: false,
        };
        let scan = [p(10, 1.5), p(100, 1.0), p(1000, 1.3), p(10_000, 1.8)];
        assert_eq!(threads_pay_from(&scan), Some(1000));
        assert_eq!(threads_pay_from(&[p(10, 1.5), p(100, 1.0)]), None);
        assert_eq!(threads_pay_from(&[]), None);
    }

    #[test]
    fn predicted_fusion_saves_memory_passes() {
        let p = Profile::synthetic();
        let f = predicted_fusion(&p, &Keys::from_engine(), 10_000_000);
        assert!(f.unfused_s > f.fused_s && f.saved_s > 0.0, "{f:?}");
        assert!(!f.measured);
        // Unfused moves 52 bytes per element against 12.
        let bytes: f64 = unfused_kernels(10).iter().map(|w| w.bytes).sum();
        assert_eq!(bytes, 520.0);
    }

    #[test]
    fn engine_parallel_threshold_matches_the_cpu_backend_rule() {
        // 43 flops per point: work = n * (1 + 43/4) >= 96 Ki.
        let n = engine_parallel_from(&Keys::from_engine());
        let work = |n: usize| n as f64 * (1.0 + 43.0 / 4.0);
        assert!(work(n) >= crossover::cpu::parallel_min_work());
        assert!(work(n - 1) < crossover::cpu::parallel_min_work());
    }

    #[test]
    fn parking_leaves_one_worker_and_releases_on_drop() {
        let pool = crossover::cpu::pool();
        if pool.current_num_threads() < 2 {
            assert!(Parked::all_but_one().is_none());
            return;
        }
        let guard = Parked::all_but_one().expect("workers park");
        // Every job of a parallel scope runs on the one free worker.
        let seen = Mutex::new(std::collections::HashSet::new());
        pool.scope(|s| {
            for _ in 0..32 {
                s.spawn(|_| {
                    std::thread::sleep(Duration::from_micros(200));
                    let me = crossover::cpu::pool().current_thread_index();
                    seen.lock().unwrap().insert(me);
                });
            }
        });
        assert_eq!(seen.into_inner().unwrap().len(), 1);
        drop(guard);
        // Released: a broadcast reaches every worker again.
        let hits = pool.broadcast(|_| 1usize).into_iter().sum::<usize>();
        assert_eq!(hits, pool.current_num_threads());
    }
}
