//! Device memory: a caching allocator over the API's allocations.
//!
//! Freed blocks return to per-size free lists and are reused by the next
//! request of the same size class, so repeated evaluations allocate
//! nothing. `CROSSOVER_GPU_MEMORY` caps what crossover holds (bytes, or a
//! fraction of the device's memory such as `0.5`); on out-of-memory the
//! cached blocks are released and the allocation retried once.

use super::api::{ApiError, GpuApi};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Requests are rounded up to this granularity below 1 MiB...
const SMALL: usize = 512;
/// ...and to whole MiB above.
const LARGE: usize = 1 << 20;

fn size_class(bytes: usize) -> usize {
    let b = bytes.max(1);
    if b < LARGE {
        b.div_ceil(SMALL) * SMALL
    } else {
        b.div_ceil(LARGE) * LARGE
    }
}

/// Parses `CROSSOVER_GPU_MEMORY`: bytes (`8000000000`, `8e9`) or a fraction
/// of `total` (`0.5`).
pub fn parse_cap(s: &str, total: u64) -> Result<u64, String> {
    let v: f64 = s.trim().parse().map_err(|_| {
        format!("CROSSOVER_GPU_MEMORY={s:?}: expected bytes or a fraction such as 0.5")
    })?;
    if v.is_nan() || v <= 0.0 || !v.is_finite() {
        return Err(format!("CROSSOVER_GPU_MEMORY={s:?}: must be positive"));
    }
    Ok(if v <= 1.0 {
        (v * total as f64) as u64
    } else {
        v as u64
    })
}

struct State<M> {
    free: BTreeMap<usize, Vec<M>>,
    /// Bytes in use plus cached.
    held: u64,
    cached: u64,
}

/// The caching allocator of one device.
pub struct Pool<A: GpuApi> {
    api: Arc<A>,
    cap: u64,
    state: Mutex<State<A::Mem>>,
}

/// One allocation from a [`Pool`]; returned to it on drop.
pub struct Block<A: GpuApi> {
    mem: Option<A::Mem>,
    class: usize,
    /// `None`: memory another library lent (never pooled).
    pool: Option<Arc<Pool<A>>>,
}

impl<A: GpuApi> Block<A> {
    /// `bytes` of memory another library owns (the API keeps its owner
    /// alive); never returned to the pool.
    pub fn lent(mem: A::Mem, bytes: usize) -> Block<A> {
        Block {
            mem: Some(mem),
            class: bytes,
            pool: None,
        }
    }

    /// The device memory.
    pub fn mem(&self) -> &A::Mem {
        self.mem.as_ref().expect("a live block holds its memory")
    }
    /// Usable bytes.
    pub fn bytes(&self) -> usize {
        self.class
    }
}

impl<A: GpuApi> Drop for Block<A> {
    fn drop(&mut self) {
        if let (Some(m), Some(pool)) = (self.mem.take(), &self.pool) {
            pool.give(self.class, m);
        }
    }
}

impl<A: GpuApi> Pool<A> {
    /// A pool holding at most `cap` bytes.
    pub fn new(api: Arc<A>, cap: u64) -> Arc<Pool<A>> {
        Arc::new(Pool {
            api,
            cap,
            state: Mutex::new(State {
                free: BTreeMap::new(),
                held: 0,
                cached: 0,
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<A::Mem>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cap in bytes.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Bytes held now (in use and cached).
    pub fn held(&self) -> u64 {
        self.lock().held
    }

    /// Bytes in use (held minus cached).
    pub fn in_use(&self) -> u64 {
        let s = self.lock();
        s.held - s.cached
    }

    /// A block of at least `bytes`.
    ///
    /// # Errors
    /// Out of memory (over the cap, or the device's) after releasing the
    /// cache and retrying once; any other API error.
    pub fn alloc(self: &Arc<Self>, bytes: usize) -> Result<Block<A>, ApiError> {
        let class = size_class(bytes);
        {
            let mut s = self.lock();
            if let Some(m) = s.free.get_mut(&class).and_then(|v| v.pop()) {
                s.cached -= class as u64;
                return Ok(self.block(m, class));
            }
        }
        for attempt in 0..2 {
            let over = {
                let s = self.lock();
                s.held + class as u64 > self.cap
            };
            if over {
                if attempt == 0 && self.trim() > 0 {
                    continue;
                }
                return Err(ApiError::oom(
                    "alloc",
                    format!(
                        "{class} more bytes would exceed crossover's device memory cap of {} bytes ({} held)",
                        self.cap,
                        self.held()
                    ),
                ));
            }
            match self.api.alloc(class) {
                Ok(m) => {
                    self.lock().held += class as u64;
                    return Ok(self.block(m, class));
                }
                Err(e) if e.out_of_memory && attempt == 0 => {
                    self.trim();
                }
                Err(e) => return Err(e),
            }
        }
        Err(ApiError::oom("alloc", format!("{class} bytes")))
    }

    fn block(self: &Arc<Self>, m: A::Mem, class: usize) -> Block<A> {
        Block {
            mem: Some(m),
            class,
            pool: Some(Arc::clone(self)),
        }
    }

    fn give(&self, class: usize, m: A::Mem) {
        let mut s = self.lock();
        // Keep at most half the cap cached.
        if s.cached + class as u64 > self.cap / 2 {
            s.held -= class as u64;
            drop(s);
            drop(m);
            return;
        }
        s.cached += class as u64;
        s.free.entry(class).or_default().push(m);
    }

    /// Releases every cached block; returns the bytes released.
    pub fn trim(&self) -> u64 {
        let (freed, bytes): (Vec<A::Mem>, u64) = {
            let mut s = self.lock();
            let n = s.cached;
            s.held -= n;
            s.cached = 0;
            (
                std::mem::take(&mut s.free)
                    .into_values()
                    .flatten()
                    .collect(),
                n,
            )
        };
        drop(freed);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_parse_as_bytes_or_fractions() {
        assert_eq!(parse_cap("0.5", 1000).unwrap(), 500);
        assert_eq!(parse_cap("4e9", 1000).unwrap(), 4_000_000_000);
        assert!(parse_cap("-1", 1000).is_err());
        assert!(parse_cap("lots", 1000).is_err());
        assert_eq!(size_class(1), 512);
        assert_eq!(size_class(3 << 20), 3 << 20);
        assert_eq!(size_class((1 << 20) + 1), 2 << 20);
    }
}
