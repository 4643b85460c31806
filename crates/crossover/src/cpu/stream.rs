//! STREAM's triad: the machine's memory bandwidth, as benchmarks quote it.
//!
//! McCalpin's STREAM times `a[i] = b[i] + q * c[i]` over float64 arrays far
//! larger than the caches, on every core, and counts 24 bytes an element
//! (two reads and a write; the read that write-allocate caches add for `a`
//! is not counted). Memory-bound kernels are measured against this figure
//! taken in the same run (`python -m crossover.compare --memory`), since
//! the bandwidth of the virtual machines this project runs on moves from
//! day to day. The loop is plain Rust over the engine's own buffers (64-byte
//! aligned, huge pages from 1 MiB) on the engine's threads, with ordinary
//! stores, as STREAM's C loop compiles.
//!
//! ```
//! use crossover::cpu::stream::StreamTriad;
//!
//! let mut t = StreamTriad::new(1 << 16)?;
//! let seconds = t.run()?; // one round
//! assert!(t.bytes() / seconds > 0.0);
//! t.check()?; // every element is b + 3c
//! # Ok::<(), crossover::Error>(())
//! ```

use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use std::sync::Mutex;
use std::time::Instant;

/// Bytes STREAM counts per triad element: `b[i]` and `c[i]` read, `a[i]`
/// written, float64.
pub const TRIAD_BYTES_PER_ELEMENT: usize = 24;

/// Elements per task: 8 MiB of each array, so each thread streams long
/// runs (STREAM's static schedule gives each thread one block).
const TASK: usize = 1 << 20;

/// The triad's scalar (STREAM's `scalar = 3.0`).
const Q: f64 = 3.0;

const OP: &str = "stream_triad";

/// STREAM's three arrays, ready for timed rounds.
pub struct StreamTriad {
    a: Buffer,
    b: Buffer,
    c: Buffer,
}

impl std::fmt::Debug for StreamTriad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamTriad")
            .field("elements", &self.elements())
            .finish()
    }
}

impl StreamTriad {
    /// Allocates the three float64 arrays of `elements` each and touches
    /// their pages on the engine's threads (STREAM's initialisation loop is
    /// parallel too), then runs one untimed round.
    ///
    /// STREAM's rule for a meaningful figure is arrays of at least four
    /// times the last-level cache each (32 MiB on most of this project's
    /// VMs: 16,777,216 elements; some have a 260 MiB L3 shared by the
    /// host's guests); smaller arrays measure the caches.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for no elements, [`Error::OutOfMemory`]
    /// when the three arrays would not fit.
    pub fn new(elements: usize) -> Result<StreamTriad> {
        if elements == 0 {
            return Err(Error::invalid(OP, "needs at least one element per array"));
        }
        crate::limits::check_bytes(OP, 3.0 * elements as f64 * 8.0, &[3, elements], DType::F64)?;
        let mut t = StreamTriad {
            a: Buffer::alloc(DType::F64, elements)?,
            b: Buffer::alloc(DType::F64, elements)?,
            c: Buffer::alloc(DType::F64, elements)?,
        };
        let (a, b, c) = (parts(&mut t.a), parts(&mut t.b), parts(&mut t.c));
        super::for_each_task(a.len(), |k| {
            lock(&a[k]).fill(1.0);
            lock(&b[k]).fill(2.0);
            lock(&c[k]).fill(0.5);
        });
        drop((a, b, c));
        t.round();
        Ok(t)
    }

    /// Elements of each array.
    pub fn elements(&self) -> usize {
        self.a.len()
    }

    /// Bytes one round moves, as STREAM counts them.
    pub fn bytes(&self) -> f64 {
        (self.elements() * TRIAD_BYTES_PER_ELEMENT) as f64
    }

    /// Runs one round on the engine's threads; its wall-clock seconds.
    ///
    /// # Errors
    /// [`Error::Interrupted`] when a stop was requested before it started.
    pub fn run(&mut self) -> Result<f64> {
        crate::interrupt::check(OP)?;
        let start = Instant::now();
        self.round();
        Ok(start.elapsed().as_secs_f64())
    }

    /// Checks every element of `a` against `b + 3c`.
    ///
    /// # Errors
    /// [`Error::Internal`] naming the first wrong element.
    pub fn check(&self) -> Result<()> {
        let want = 2.0 + Q * 0.5;
        let a = self.a.as_slice::<f64>();
        match a.iter().position(|&v| v != want) {
            None => Ok(()),
            Some(i) => Err(Error::internal(
                OP,
                format!("element {i} is {} after the triad, not {want}", a[i]),
            )),
        }
    }

    fn round(&mut self) {
        // One lock per task's slice of `a`, each taken by one thread: no
        // shared mutable access without them, and no unsafe.
        let out = parts(&mut self.a);
        let (b, c) = (self.b.as_slice::<f64>(), self.c.as_slice::<f64>());
        super::for_each_task(out.len(), |k| {
            let mut o = lock(&out[k]);
            let lo = k * TASK;
            let hi = lo + o.len();
            for ((o, &x), &y) in o.iter_mut().zip(&b[lo..hi]).zip(&c[lo..hi]) {
                *o = x + Q * y;
            }
        });
    }
}

/// A buffer's tasks' slices, each behind its own lock.
fn parts(buf: &mut Buffer) -> Vec<Mutex<&mut [f64]>> {
    buf.as_mut_slice::<f64>()
        .chunks_mut(TASK)
        .map(Mutex::new)
        .collect()
}

fn lock<'a, 'b>(m: &'a Mutex<&'b mut [f64]>) -> std::sync::MutexGuard<'a, &'b mut [f64]> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_are_timed_and_every_element_checked() {
        // Sizes crossing a task edge, and a single element.
        for n in [1, TASK - 1, TASK + 3] {
            let mut t = StreamTriad::new(n).unwrap();
            assert_eq!((t.elements(), t.bytes()), (n, (n * 24) as f64));
            for _ in 0..2 {
                let s = t.run().unwrap();
                assert!(s.is_finite() && s >= 0.0);
            }
            t.check().unwrap();
            // A wrong element is found (the check can fail).
            t.a.as_mut_slice::<f64>()[n - 1] = 0.0;
            assert!(matches!(t.check(), Err(Error::Internal { .. })));
        }
    }

    #[test]
    fn bad_sizes_are_typed_errors() {
        assert!(matches!(
            StreamTriad::new(0),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            StreamTriad::new(usize::MAX / 32),
            Err(Error::OutOfMemory { .. })
        ));
    }
}
