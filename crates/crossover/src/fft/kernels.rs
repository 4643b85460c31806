//! FFT kernels: a bounded plan cache, and transforms of contiguous buffers
//! along one axis (rows in place, columns through cache-sized tiles), all
//! on the engine's thread pool.

use num_complex::Complex;
use rayon::prelude::*;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::num_traits::Float;
use rustfft::{Fft, FftNum, FftPlanner};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

/// Plans kept per element type; the oldest is dropped beyond this.
pub const PLAN_CACHE_CAPACITY: usize = 64;

/// Elements per parallel task (rows are grouped up to this).
const TASK_ELEMS: usize = 1 << 15;

/// Bytes of each row gathered per tile of a column pass: one cache line
/// (8 complex64 or 4 complex128 columns). Rows of a column pass are a whole
/// row apart, a power of two for the common sizes, so they share cache
/// sets: two lines a row (16 complex64 columns, as before) made a float32
/// 1024 x 1024 `fft2` 1.6x slower (2.3-2.4 against 1.4-1.5 ms), four and
/// eight columns ran alike.
const TILE_BYTES: usize = 64;

/// Below this many elements a pass runs on the calling thread.
pub(super) const PARALLEL_MIN: usize = 1 << 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PlanKey {
    C2c { n: usize, inverse: bool },
    R2c { n: usize },
    C2r { n: usize },
}

#[derive(Clone)]
enum Plan<T: FftNum> {
    C2c(Arc<dyn Fft<T>>),
    R2c(Arc<dyn RealToComplex<T>>),
    C2r(Arc<dyn ComplexToReal<T>>),
}

/// A bounded cache of plans for one element type.
pub struct PlanCache<T: FftNum> {
    plans: HashMap<PlanKey, Plan<T>>,
    order: VecDeque<PlanKey>,
    complex: FftPlanner<T>,
    real: RealFftPlanner<T>,
}

impl<T: FftNum> PlanCache<T> {
    fn new() -> Self {
        PlanCache {
            plans: HashMap::new(),
            order: VecDeque::new(),
            complex: FftPlanner::new(),
            real: RealFftPlanner::new(),
        }
    }

    fn get(&mut self, key: PlanKey) -> Plan<T> {
        if let Some(p) = self.plans.get(&key) {
            return p.clone();
        }
        if self.plans.len() >= PLAN_CACHE_CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.plans.remove(&old);
            }
            // The planners keep their own memo of every size; start them
            // afresh so memory stays bounded too.
            self.complex = FftPlanner::new();
            self.real = RealFftPlanner::new();
        }
        let plan = match key {
            PlanKey::C2c { n, inverse: false } => Plan::C2c(self.complex.plan_fft_forward(n)),
            PlanKey::C2c { n, inverse: true } => Plan::C2c(self.complex.plan_fft_inverse(n)),
            PlanKey::R2c { n } => Plan::R2c(self.real.plan_fft_forward(n)),
            PlanKey::C2r { n } => Plan::C2r(self.real.plan_fft_inverse(n)),
        };
        self.plans.insert(key, plan.clone());
        self.order.push_back(key);
        plan
    }

    /// Number of cached plans.
    pub fn len(&self) -> usize {
        self.plans.len()
    }
}

/// f32 and f64: the element types FFTs run in.
pub trait FftFloat: FftNum + Float {
    fn cache() -> &'static Mutex<PlanCache<Self>>;
    fn of(x: f64) -> Self;
}

impl FftFloat for f32 {
    fn cache() -> &'static Mutex<PlanCache<f32>> {
        static C: OnceLock<Mutex<PlanCache<f32>>> = OnceLock::new();
        C.get_or_init(|| Mutex::new(PlanCache::new()))
    }
    fn of(x: f64) -> f32 {
        x as f32
    }
}

impl FftFloat for f64 {
    fn cache() -> &'static Mutex<PlanCache<f64>> {
        static C: OnceLock<Mutex<PlanCache<f64>>> = OnceLock::new();
        C.get_or_init(|| Mutex::new(PlanCache::new()))
    }
    fn of(x: f64) -> f64 {
        x
    }
}

fn plan<T: FftFloat>(key: PlanKey) -> Plan<T> {
    T::cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(key)
}

/// Number of plans cached for f32 and f64 together (for tests).
pub fn cached_plans() -> usize {
    let a = f32::cache().lock().map(|c| c.len()).unwrap_or(0);
    let b = f64::cache().lock().map(|c| c.len()).unwrap_or(0);
    a + b
}

fn c2c_plan<T: FftFloat>(n: usize, inverse: bool) -> Arc<dyn Fft<T>> {
    match plan::<T>(PlanKey::C2c { n, inverse }) {
        Plan::C2c(p) => p,
        _ => unreachable!("c2c key holds a c2c plan"),
    }
}

/// A raw pointer shared by tasks that touch disjoint elements.
#[derive(Clone, Copy)]
struct SyncPtr<T>(*mut T);
// SAFETY: users guarantee disjoint access (documented at each use).
unsafe impl<T> Send for SyncPtr<T> {}
// SAFETY: as for Send.
unsafe impl<T> Sync for SyncPtr<T> {}

#[inline]
fn scale_slice<T: FftFloat>(s: &mut [Complex<T>], scale: Option<T>) {
    if let Some(f) = scale {
        for x in s {
            x.re = x.re * f;
            x.im = x.im * f;
        }
    }
}

/// In-place complex FFTs along the middle axis of a contiguous
/// `(outer, n, inner)` buffer, for the first `cols` positions of the inner
/// axis, each result multiplied by `scale`.
#[allow(clippy::too_many_arguments)]
pub fn c2c_axis<T: FftFloat>(
    data: &mut [Complex<T>],
    outer: usize,
    n: usize,
    inner: usize,
    cols: usize,
    inverse: bool,
    scale: Option<T>,
) {
    debug_assert_eq!(data.len(), outer * n * inner);
    if data.is_empty() {
        return;
    }
    if n == 1 {
        if cols == inner {
            scale_slice(data, scale);
        } else {
            for row in data.chunks_mut(inner) {
                scale_slice(&mut row[..cols], scale);
            }
        }
        return;
    }
    let fft = c2c_plan::<T>(n, inverse);
    let scratch_len = fft.get_inplace_scratch_len();
    let parallel = data.len() >= PARALLEL_MIN && crate::cpu::threads() > 1;
    let zero = Complex::new(T::zero(), T::zero());
    if inner == 1 {
        let rows = (TASK_ELEMS / n).max(1);
        let work = |scratch: &mut Vec<Complex<T>>, chunk: &mut [Complex<T>]| {
            fft.process_with_scratch(chunk, scratch);
            scale_slice(chunk, scale);
        };
        if parallel {
            data.par_chunks_mut(rows * n)
                .for_each_init(|| vec![zero; scratch_len], work);
        } else {
            let mut scratch = vec![zero; scratch_len];
            data.chunks_mut(rows * n)
                .for_each(|c| work(&mut scratch, c));
        }
        return;
    }
    let tile_w = (TILE_BYTES / std::mem::size_of::<Complex<T>>()).max(1);
    let tiles = cols.div_ceil(tile_w);
    let ptr = SyncPtr(data.as_mut_ptr());
    let work = |(tmp, scratch): &mut (Vec<Complex<T>>, Vec<Complex<T>>), t: usize| {
        // Capture the whole (Sync) wrapper, not its raw-pointer field.
        let ptr = &ptr;
        let (o, tile) = (t / tiles, t % tiles);
        let c0 = tile * tile_w;
        let w = tile_w.min(cols - c0);
        let base = o * n * inner + c0;
        // SAFETY: task t reads and writes only columns c0..c0+w of block o,
        // which no other task touches; all indices are < outer*n*inner.
        unsafe {
            for i in 0..n {
                let row = ptr.0.add(base + i * inner);
                for c in 0..w {
                    *tmp.get_unchecked_mut(c * n + i) = *row.add(c);
                }
            }
        }
        fft.process_with_scratch(&mut tmp[..w * n], scratch);
        let f = scale.unwrap_or_else(T::one);
        // SAFETY: as above.
        unsafe {
            for i in 0..n {
                let row = ptr.0.add(base + i * inner);
                for c in 0..w {
                    let v = *tmp.get_unchecked(c * n + i);
                    *row.add(c) = if scale.is_some() {
                        Complex::new(v.re * f, v.im * f)
                    } else {
                        v
                    };
                }
            }
        }
    };
    let init = || (vec![zero; tile_w * n], vec![zero; scratch_len]);
    if parallel {
        (0..outer * tiles).into_par_iter().for_each_init(init, work);
    } else {
        let mut s = init();
        (0..outer * tiles).for_each(|t| work(&mut s, t));
    }
}

/// Real-to-complex FFTs of contiguous rows: `input` holds `rows` rows of
/// `n` reals (read-only), `out` rows of `out_stride` complex values of which
/// the first `n/2 + 1` are written.
pub fn r2c_rows<T: FftFloat>(
    input: &[T],
    n: usize,
    out: &mut [Complex<T>],
    out_stride: usize,
    scale: Option<T>,
) {
    let h = n / 2 + 1;
    let rows = out.len() / out_stride.max(1);
    debug_assert!(input.len() >= rows * n && out_stride >= h);
    if rows == 0 || n == 0 {
        return;
    }
    let Plan::R2c(fft) = plan::<T>(PlanKey::R2c { n }) else {
        unreachable!("r2c key holds an r2c plan")
    };
    let zero = Complex::new(T::zero(), T::zero());
    let scratch_len = fft.get_scratch_len();
    let per_task = (TASK_ELEMS / n).max(1);
    let work = |(tmp, scratch): &mut (Vec<T>, Vec<Complex<T>>),
                (ci, chunk): (usize, &mut [Complex<T>])| {
        for (r, orow) in chunk.chunks_mut(out_stride).enumerate() {
            let row = ci * per_task + r;
            tmp.copy_from_slice(&input[row * n..(row + 1) * n]);
            // Lengths match the plan, so this cannot fail.
            let _ = fft.process_with_scratch(tmp, &mut orow[..h], scratch);
            scale_slice(&mut orow[..h], scale);
        }
    };
    let init = || (vec![T::zero(); n], vec![zero; scratch_len]);
    if out.len() >= PARALLEL_MIN && crate::cpu::threads() > 1 {
        out.par_chunks_mut(per_task * out_stride)
            .enumerate()
            .for_each_init(init, work);
    } else {
        let mut s = init();
        out.chunks_mut(per_task * out_stride)
            .enumerate()
            .for_each(|c| work(&mut s, c));
    }
}

/// Complex-to-real inverse FFTs of contiguous rows: `input` holds rows of
/// `n/2 + 1` complex values, `out` rows of `n` reals.
pub fn c2r_rows<T: FftFloat>(input: &[Complex<T>], n: usize, out: &mut [T], scale: Option<T>) {
    let h = n / 2 + 1;
    let rows = out.len() / n.max(1);
    debug_assert!(input.len() >= rows * h);
    if rows == 0 || n == 0 {
        return;
    }
    let Plan::C2r(fft) = plan::<T>(PlanKey::C2r { n }) else {
        unreachable!("c2r key holds a c2r plan")
    };
    let zero = Complex::new(T::zero(), T::zero());
    let scratch_len = fft.get_scratch_len();
    let per_task = (TASK_ELEMS / n).max(1);
    let work = |(tmp, scratch): &mut (Vec<Complex<T>>, Vec<Complex<T>>),
                (ci, chunk): (usize, &mut [T])| {
        for (r, orow) in chunk.chunks_mut(n).enumerate() {
            let row = ci * per_task + r;
            tmp.copy_from_slice(&input[row * h..(row + 1) * h]);
            // NumPy ignores the imaginary parts of the zero and Nyquist
            // terms (they must be zero for a real signal).
            tmp[0].im = T::zero();
            if n.is_multiple_of(2) {
                tmp[h - 1].im = T::zero();
            }
            let _ = fft.process_with_scratch(tmp, orow, scratch);
            if let Some(f) = scale {
                orow.iter_mut().for_each(|x| *x = *x * f);
            }
        }
    };
    let init = || (vec![zero; h], vec![zero; scratch_len]);
    if out.len() >= PARALLEL_MIN && crate::cpu::threads() > 1 {
        out.par_chunks_mut(per_task * n)
            .enumerate()
            .for_each_init(init, work);
    } else {
        let mut s = init();
        out.chunks_mut(per_task * n)
            .enumerate()
            .for_each(|c| work(&mut s, c));
    }
}

/// Completes full spectra of real input from their first `n2/2 + 1`
/// columns: `X[k1, k2] = conj(X[-k1 mod n1, n2 - k2])` over the last two
/// axes of a contiguous `(batch, n1, n2)` buffer (`n1 = 1` for 1-D).
pub fn hermitian_fill<T: FftFloat>(data: &mut [Complex<T>], n1: usize, n2: usize) {
    let h = n2 / 2 + 1;
    if h >= n2 || data.is_empty() {
        return;
    }
    let plane = n1 * n2;
    let ptr = SyncPtr(data.as_mut_ptr());
    let row = |r: usize| {
        // Capture the whole (Sync) wrapper, not its raw-pointer field.
        let ptr = &ptr;
        let (b, k1) = (r / n1, r % n1);
        let src_row = b * plane + ((n1 - k1) % n1) * n2;
        let dst_row = b * plane + k1 * n2;
        // SAFETY: each task writes only columns h.. of its own row and
        // reads only columns < h (of any row), which nobody writes now.
        unsafe {
            for k2 in h..n2 {
                let v = *ptr.0.add(src_row + n2 - k2);
                *ptr.0.add(dst_row + k2) = v.conj();
            }
        }
    };
    let rows = data.len() / n2;
    if data.len() >= PARALLEL_MIN && crate::cpu::threads() > 1 {
        (0..rows).into_par_iter().with_min_len(64).for_each(row);
    } else {
        (0..rows).for_each(row);
    }
}
