//! Recycling host memory: a bounded shared pool for large buffers and a
//! small per-thread cache for page-sized heap buffers (see the constants in
//! the parent module).

use super::{HostMem, SMALL_KEEP};
use std::sync::Mutex;

/// Recycles large host allocations by size class, bounded in total bytes.
pub(super) struct Pool {
    state: Mutex<PoolState>,
}

struct PoolState {
    free: Vec<HostMem>,
    bytes: usize,
    limit: usize,
}

pub(super) static POOL: Pool = Pool {
    state: Mutex::new(PoolState {
        free: Vec::new(),
        bytes: 0,
        limit: usize::MAX,
    }),
};

impl Pool {
    fn limit_default() -> usize {
        // An eighth of physical memory, at most 4 GiB.
        // SAFETY: sysconf has no memory-safety preconditions.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let total = (pages.max(0) as usize).saturating_mul(page.max(0) as usize);
        (total / 8).clamp(64 << 20, 4 << 30)
    }

    pub(super) fn take(&self, cap: usize) -> Option<HostMem> {
        let mut s = self.state.lock().ok()?;
        let i = s.free.iter().rposition(|m| m.cap == cap)?;
        let m = s.free.swap_remove(i);
        s.bytes -= m.cap;
        Some(m)
    }

    pub(super) fn give(&self, m: HostMem) {
        let Ok(mut s) = self.state.lock() else {
            m.free();
            return;
        };
        if s.limit == usize::MAX {
            s.limit = Self::limit_default();
        }
        if m.cap > s.limit {
            drop(s);
            m.free();
            return;
        }
        s.bytes += m.cap;
        s.free.push(m);
        // Evict oldest first.
        while s.bytes > s.limit {
            let old = s.free.remove(0);
            s.bytes -= old.cap;
            old.free();
        }
    }

    fn trim(&self) -> usize {
        let drained: Vec<HostMem> = match self.state.lock() {
            Ok(mut s) => {
                s.bytes = 0;
                std::mem::take(&mut s.free)
            }
            Err(_) => return 0,
        };
        let n: usize = drained.iter().map(|m| m.cap).sum();
        for m in drained {
            m.free();
        }
        n
    }
}

/// This thread's recycled small heap buffers (see [`SMALL_RECYCLED`]); freed
/// with the thread.
struct SmallCache(Vec<HostMem>);

impl Drop for SmallCache {
    fn drop(&mut self) {
        for m in self.0.drain(..) {
            m.free();
        }
    }
}

thread_local! {
    static SMALL: std::cell::RefCell<SmallCache> =
        const { std::cell::RefCell::new(SmallCache(Vec::new())) };
}

pub(super) fn small_take(cap: usize) -> Option<HostMem> {
    SMALL
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            let i = c.0.iter().rposition(|m| m.cap == cap)?;
            Some(c.0.swap_remove(i))
        })
        .ok()
        .flatten()
}

/// Keeps `m` for this thread (the oldest kept buffer goes when full), or
/// frees it when the thread's cache is gone or busy.
pub(super) fn small_give(m: HostMem) {
    let mut slot = Some(m);
    let _ = SMALL.try_with(|c| {
        let Ok(mut c) = c.try_borrow_mut() else {
            return;
        };
        if let Some(m) = slot.take() {
            if c.0.len() >= SMALL_KEEP {
                c.0.remove(0).free();
            }
            c.0.push(m);
        }
    });
    if let Some(m) = slot {
        m.free();
    }
}

/// Releases all pooled host memory back to the OS (the shared pool and this
/// thread's small buffers); returns the bytes freed.
pub fn trim_host_pool() -> usize {
    let small = SMALL
        .try_with(|c| {
            c.try_borrow_mut()
                .map(|mut c| {
                    let n = c.0.iter().map(|m| m.cap).sum::<usize>();
                    for m in c.0.drain(..) {
                        m.free();
                    }
                    n
                })
                .unwrap_or(0)
        })
        .unwrap_or(0);
    POOL.trim() + small
}

/// Bytes currently held in the host pool.
pub fn host_pool_bytes() -> usize {
    POOL.state.lock().map(|s| s.bytes).unwrap_or(0)
}
