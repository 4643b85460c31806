//! Pinned staging for host-device copies.
//!
//! A copy from pageable memory makes the driver stage it through its own
//! small pinned buffer, one piece at a time, and it cannot overlap our
//! memcpy with the DMA. Two pinned buffers of [`STAGE`] bytes (allocated on
//! the first large copy, plain pinned memory: write-combined memory is slow
//! for the host to read, which device-to-host copies need) let the host
//! fill or drain one while the copy engine moves the other. The host side
//! of each chunk is copied by the CPU pool's threads in pieces: one
//! thread's memcpy into pinned memory runs at about 10 GB/s, which is what
//! the H200 measured for whole copies (7.5 GB/s up, 11 down), a fraction of
//! PCIe 5.0's 50. Small copies go straight from pageable memory: staging
//! would only add a memcpy.
//!
//! What has run where: an NVIDIA H200 on 2026-11-26 (11.1 GB/s device to
//! host; the upload was not measured, docs/gpu.md).

use cudarc::driver::result;
use cudarc::driver::result::DriverError;
use cudarc::driver::safe::{CudaContext, CudaEvent, CudaStream};
use cudarc::driver::sys;
use std::sync::{Arc, Mutex};

/// Bytes per staging buffer.
pub const STAGE: usize = 16 << 20;
/// Bytes one thread copies of a staged chunk.
const PIECE: usize = 1 << 20;

/// `dst.copy_from_slice(src)` on the CPU pool's threads, [`PIECE`] bytes
/// each.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    use rayon::prelude::*;
    if src.len() <= PIECE {
        dst.copy_from_slice(src);
        return;
    }
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}
/// Copies smaller than this go straight from pageable memory.
pub const DIRECT_BELOW: usize = 256 << 10;

/// One pinned buffer and the event that marks its last copy finished.
struct Pinned {
    ptr: *mut u8,
    done: CudaEvent,
}

/// The two pinned buffers (none until the first large copy; `Err` when
/// pinned memory could not be had, and copies stay pageable).
pub struct Staging {
    ctx: Arc<CudaContext>,
    ring: Mutex<Option<Result<Vec<Pinned>, String>>>,
    pid: u32,
}

// SAFETY: the raw pointers are pinned host memory owned by this struct and
// only touched under the mutex.
unsafe impl Send for Staging {}
// SAFETY: as above.
unsafe impl Sync for Staging {}

/// A chunk of `len` bytes at `off`, staged through buffer `slot`.
struct Chunk {
    slot: usize,
    off: usize,
    len: usize,
}

fn chunks(total: usize) -> impl Iterator<Item = Chunk> {
    (0..total.div_ceil(STAGE)).map(move |i| Chunk {
        slot: i % 2,
        off: i * STAGE,
        len: STAGE.min(total - i * STAGE),
    })
}

impl Staging {
    /// No buffers yet.
    pub fn new(ctx: Arc<CudaContext>) -> Staging {
        Staging {
            ctx,
            ring: Mutex::new(None),
            pid: std::process::id(),
        }
    }

    fn allocate(&self) -> Result<Vec<Pinned>, String> {
        let mut ring = Vec::with_capacity(2);
        for _ in 0..2 {
            let done = self
                .ctx
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                .map_err(|e| format!("cuEventCreate: {:?}", e.0))?;
            // SAFETY: the context is bound (the caller entered it); the
            // memory is written before it is read and freed once, on drop.
            let ptr = unsafe { result::malloc_host(STAGE, 0) }
                .map_err(|e| format!("cuMemHostAlloc: {:?}", e.0))?;
            ring.push(Pinned {
                ptr: ptr as *mut u8,
                done,
            });
        }
        Ok(ring)
    }

    /// Copies `src` to device address `dst` on `stream` and waits for it.
    pub fn write(
        &self,
        stream: &CudaStream,
        dst: sys::CUdeviceptr,
        src: &[u8],
    ) -> Result<(), DriverError> {
        let mut guard = self.ring.lock().unwrap_or_else(|p| p.into_inner());
        let ring = match self.ring_for(src.len(), &mut guard) {
            Some(ring) => ring,
            None => {
                // SAFETY: the caller checked `dst` holds `src.len()` bytes;
                // `src` outlives the synchronise below.
                unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }?;
                return stream.synchronize();
            }
        };
        for c in chunks(src.len()) {
            let b = &ring[c.slot];
            // The buffer's previous copy must have left it.
            b.done.synchronize()?;
            // SAFETY: `b.ptr` holds STAGE >= c.len bytes and no copy reads
            // it now (waited above).
            let staged = unsafe { std::slice::from_raw_parts_mut(b.ptr, c.len) };
            parallel_copy(staged, &src[c.off..c.off + c.len]);
            let staged: &[u8] = staged;
            // SAFETY: `dst + off` lies inside the allocation; the pinned
            // buffer is not touched again before `done` fires.
            unsafe { result::memcpy_htod_async(dst + c.off as u64, staged, stream.cu_stream()) }?;
            b.done.record(stream)?;
        }
        stream.synchronize()
    }

    /// Copies device address `src` into `dst` after the queued work on
    /// `stream`, and waits for it.
    pub fn read(
        &self,
        stream: &CudaStream,
        src: sys::CUdeviceptr,
        dst: &mut [u8],
    ) -> Result<(), DriverError> {
        let mut guard = self.ring.lock().unwrap_or_else(|p| p.into_inner());
        let ring = match self.ring_for(dst.len(), &mut guard) {
            Some(ring) => ring,
            None => {
                // SAFETY: `src` holds `dst.len()` bytes; `dst` is not read
                // before the synchronise below.
                unsafe { result::memcpy_dtoh_async(dst, src, stream.cu_stream()) }?;
                return stream.synchronize();
            }
        };
        // Drains one staged chunk into `dst` once its copy has finished.
        let drain = |c: &Chunk, dst: &mut [u8]| -> Result<(), DriverError> {
            let b = &ring[c.slot];
            b.done.synchronize()?;
            // SAFETY: the copy into `b.ptr` finished (waited above) and it
            // holds `c.len` bytes.
            let staged = unsafe { std::slice::from_raw_parts(b.ptr, c.len) };
            parallel_copy(&mut dst[c.off..c.off + c.len], staged);
            Ok(())
        };
        let mut pending: Option<Chunk> = None;
        for c in chunks(dst.len()) {
            let b = &ring[c.slot];
            // SAFETY: `b.ptr` holds STAGE >= c.len bytes and was drained
            // (the chunk before last used it and was drained last turn).
            let staged = unsafe { std::slice::from_raw_parts_mut(b.ptr, c.len) };
            // SAFETY: `src + off` lies inside the allocation.
            unsafe { result::memcpy_dtoh_async(staged, src + c.off as u64, stream.cu_stream()) }?;
            b.done.record(stream)?;
            if let Some(p) = pending.replace(c) {
                drain(&p, dst)?;
            }
        }
        if let Some(p) = pending {
            drain(&p, dst)?;
        }
        Ok(())
    }

    /// The ring for a copy of `bytes`, allocating it on first need; `None`
    /// for small copies or when pinned memory is not available.
    fn ring_for<'a>(
        &self,
        bytes: usize,
        slot: &'a mut Option<Result<Vec<Pinned>, String>>,
    ) -> Option<&'a [Pinned]> {
        if bytes < DIRECT_BELOW {
            return None;
        }
        let ring = slot.get_or_insert_with(|| {
            let r = self.allocate();
            if let Err(e) = &r {
                if super::debug_log() {
                    eprintln!("crossover: cuda: copies stay pageable ({e})");
                }
            }
            r
        });
        ring.as_deref().ok()
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if std::process::id() != self.pid {
            return;
        }
        let ring = self.ring.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(Ok(ring)) = ring.take() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if self.ctx.bind_to_thread().is_ok() {
                    for b in ring {
                        let _ = b.done.synchronize();
                        // SAFETY: from `malloc_host`, freed once; its last
                        // copy has finished (waited above).
                        let _ = unsafe { result::free_host(b.ptr as *mut std::ffi::c_void) };
                    }
                }
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_copy_copies_every_byte() {
        for n in [0, 1, PIECE - 1, PIECE, PIECE + 1, 3 * PIECE + 17] {
            let src: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
            let mut dst = vec![0u8; n];
            parallel_copy(&mut dst, &src);
            assert_eq!(dst, src);
        }
    }

    #[test]
    fn chunks_cover_every_byte_once_alternating_buffers() {
        for total in [DIRECT_BELOW, STAGE - 1, STAGE, STAGE + 1, 3 * STAGE + 17] {
            let cs: Vec<Chunk> = chunks(total).collect();
            assert_eq!(cs.iter().map(|c| c.len).sum::<usize>(), total);
            for (i, c) in cs.iter().enumerate() {
                assert_eq!(c.off, i * STAGE);
                assert_eq!(c.slot, i % 2);
                assert!(c.len > 0 && c.len <= STAGE);
            }
        }
    }
}
