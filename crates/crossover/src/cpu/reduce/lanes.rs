//! The lane loops of the inner-mode accumulators: sums, products and
//! moments over a segment in 16 float64 (or int64) lanes, each vectorised
//! with straight loads, and the memory hint the sums give.

use super::{RNum, LANES};
use crate::dtype::DType;

#[inline(always)]
pub(super) fn sum_lanes<T: RNum>(v: &[T]) -> f64 {
    let mut acc = [0f64; LANES];
    let (blocks, rest) = v.as_chunks::<LANES>();
    for c in blocks {
        prefetch_ahead(c, PREFETCH_AHEAD);
        for l in 0..LANES {
            acc[l] += c[l].to_f64();
        }
    }
    let mut s = 0.0;
    for &x in rest {
        s += x.to_f64();
    }
    // A plain sequential combine: a tree-shaped one makes LLVM's SLP
    // vectoriser fall back to 128-bit vectors for the whole loop.
    acc.iter().sum::<f64>() + s
}

/// The mean of non-empty `v` and its squared deviations from it, in one
/// pass: the sums of `d = x - k` and `d²` about a shift `k` (the mean of
/// the first 16 values), `mean = k + Σd/n`, `m2 = Σd² - (Σd)²/n`. The
/// two-pass form's second pass reads the segment from L1 but does not
/// overlap the memory stream (a float32 std over memory took 2.8 ms where
/// the sum took 1.8, session 51). The one-pass form loses `(Σd)²/n / m2`
/// of float64's precision to cancellation, so where that ratio passes
/// [`max_cancellation`] it returns NaN as its `m2`, and the caller takes
/// the two passes (as it does for a NaN or infinity in `v`, whose NaN the
/// two-pass form gives as NumPy does).
#[inline(always)]
pub(super) fn moments_lanes<T: RNum>(v: &[T]) -> (f64, f64) {
    let (blocks, rest) = v.as_chunks::<LANES>();
    let k = match blocks.first() {
        Some(b) => b.iter().map(|x| x.to_f64()).sum::<f64>() / LANES as f64,
        None => v.first().map_or(0.0, |x| x.to_f64()),
    };
    let (mut acc1, mut acc2) = ([0f64; LANES], [0f64; LANES]);
    for c in blocks {
        prefetch_ahead(c, PREFETCH_AHEAD);
        for l in 0..LANES {
            let d = c[l].to_f64() - k;
            acc1[l] += d;
            acc2[l] += d * d;
        }
    }
    let (mut s1, mut s2) = (0.0, 0.0);
    for &x in rest {
        let d = x.to_f64() - k;
        s1 += d;
        s2 += d * d;
    }
    let (s1, s2) = (lane_sum(&acc1) + s1, lane_sum(&acc2) + s2);
    let n = v.len() as f64;
    let shift = s1 * s1 / n;
    let m2 = s2 - shift;
    // Also false for a negative or NaN `m2`, so those decline.
    if shift <= max_cancellation::<T>() * m2 {
        (k + s1 / n, m2)
    } else {
        (f64::NAN, f64::NAN)
    }
}

/// The sum of a segment's lanes. Not inlined: combined in the loop's
/// function, the two accumulators' sums led LLVM's SLP vectoriser to pair
/// `acc1[l]` with `acc2[l]` in 128-bit registers, and the loop ran 3.4x
/// slower (0.56 ns a float32 value on one core, 0.165 with this call).
#[inline(never)]
fn lane_sum(acc: &[f64; LANES]) -> f64 {
    acc.iter().sum()
}

/// How many times `m2` the one-pass moments may cancel. Each float64 term
/// is rounded to 1.1e-16 and a lane sums up to 128 of them (a 2,048-point
/// segment), so `m2`'s relative error is at most about
/// `128 * 1.1e-16 * (1 + 2 * ratio)`. The ratio cannot pass `n / 16`
/// (at most 128): the shift is the mean of the first 16 values, whose own
/// squared deviations, at least `16 * (k - mean)²`, are part of `m2`. So
/// float32, whose results round to 6e-8, never declines finite data
/// (error below 3.6e-12); float64 and integer results stay within three
/// times the two-pass form's bound at 1.
fn max_cancellation<T: RNum>() -> f64 {
    if T::DTYPE == DType::F32 {
        256.0
    } else {
        1.0
    }
}

/// How far ahead of its reads a sum asks for memory: 4 KiB, two chunks'
/// worth of float32 lines in flight per core.
const PREFETCH_AHEAD: usize = 4096;

/// Asks for the cache lines `ahead` bytes past `block`. The sum's loop (a
/// float64 conversion and add per value) consumes lines too slowly for the
/// out-of-order window to keep enough misses in flight: a float32 sum of
/// 64 MiB read at 7.6 GB/s on one core of the Intel VM where a max read at
/// 11.5 and the same loop with this hint `PREFETCH_AHEAD` ahead at 10.3; on
/// two cores 17 GB/s against 42 with the hint (standalone loops,
/// 2026-12-02).
#[inline(always)]
fn prefetch_ahead<T>(block: &[T; LANES], ahead: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = std::mem::size_of_val(block);
        let mut off = 0;
        while off < bytes {
            let p = block.as_ptr().cast::<i8>().wrapping_add(ahead + off);
            // SAFETY: a prefetch is a hint; it never faults or reads into
            // the program, whatever the address (past the array's end
            // included, which `wrapping_add` keeps a plain address).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = block;
}

// Integer sums and products wrap, so they are exact in any order: plain
// folds, which LLVM vectorises with straight loads (a LANES-wide
// accumulator array, as the float forms use, became gathers for i64: a bool
// `sum` took 0.4 ns per element).
#[inline(always)]
pub(super) fn isum_lanes<T: RNum>(v: &[T]) -> i64 {
    v.iter().fold(0i64, |a, &x| a.wrapping_add(x.as_i64()))
}

#[inline(always)]
pub(super) fn prod_lanes<T: RNum>(v: &[T]) -> f64 {
    let mut acc = [1f64; LANES];
    let (blocks, rest) = v.as_chunks::<LANES>();
    for c in blocks {
        for l in 0..LANES {
            acc[l] *= c[l].to_f64();
        }
    }
    let tail = rest.iter().fold(1.0, |a, &x| a * x.to_f64());
    acc.iter().fold(tail, |a, &x| a * x)
}

#[inline(always)]
pub(super) fn iprod_lanes<T: RNum>(v: &[T]) -> i64 {
    v.iter().fold(1i64, |a, &x| a.wrapping_mul(x.as_i64()))
}

/// The squared deviations of `v` from `mean`: the second pass over a
/// segment the sum has just read, from L1. It keeps memory busy meanwhile
/// with a hint for the lines the next segment's sum will ask for
/// (`PREFETCH_AHEAD` past the next segment's start): without it memory
/// idled through this pass, and a float32 std of 64 MiB on two cores of the
/// Intel VM read 1.04-1.13x faster with it in paired standalone runs
/// (2026-12-02; the pass itself is compute-bound, 0.37 cycles a value).
#[inline(always)]
pub(super) fn m2_lanes<T: RNum>(v: &[T], mean: f64) -> f64 {
    let mut acc = [0f64; LANES];
    let (blocks, rest) = v.as_chunks::<LANES>();
    let ahead = PREFETCH_AHEAD + std::mem::size_of_val(v);
    for c in blocks {
        prefetch_ahead(c, ahead);
        for l in 0..LANES {
            let d = c[l].to_f64() - mean;
            acc[l] += d * d;
        }
    }
    let mut s = 0.0;
    for &x in rest {
        let d = x.to_f64() - mean;
        s += d * d;
    }
    acc.iter().sum::<f64>() + s
}
