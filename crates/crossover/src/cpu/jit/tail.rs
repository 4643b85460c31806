//! A store's last partial block, compiled: the tail's inputs copied into
//! one padded block, so a few points left over after the whole blocks do
//! not pay for preparing the interpreter.

use super::{slot_bytes, Bound, Input, Mode, BLOCK, MAX_SOURCES};

impl Bound {
    /// Writes the output's values for the `len` (< 16) points from `start`
    /// into `out`: one block over copies of those points' inputs, each
    /// padded with its last value (so a padding lane computes what a real
    /// point does), of which the first `len` values are kept. The same
    /// instructions on the same values, so the interpreter's bits, without
    /// preparing the interpreter for a few points (about 0.2 us, most of a
    /// thousand-point kernel's gain). False, with nothing written, where a
    /// source is random (its draws are the interpreter's work) or the
    /// kernel stopped early.
    #[must_use]
    pub(crate) fn store_tail(&self, start: usize, len: usize, out: &mut [u8]) -> bool {
        assert_eq!(self.mode, Mode::Store, "compiled kernel: not a store");
        assert!(len < BLOCK && out.len() >= len * self.size);
        if len == 0 {
            return true;
        }
        let size = self.size;
        let mut padded = [[0u64; BLOCK]; MAX_SOURCES];
        let mut ptrs = [std::ptr::null(); MAX_SOURCES];
        for ((p, source), block) in ptrs.iter_mut().zip(&self.sources).zip(&mut padded) {
            let Input::Memory { addr, points } = *source else {
                return false;
            };
            assert!(
                start + len <= points,
                "compiled kernel: range outside a source"
            );
            // SAFETY: the source holds `points` values from `addr` (checked
            // above for this range) and outlives this call (`Prepared`
            // borrows it).
            let values = unsafe {
                std::slice::from_raw_parts((addr + start * size) as *const u8, len * size)
            };
            pad_block(block, values, size);
            *p = block.as_ptr() as *const u8;
        }
        let mut result = [0u64; BLOCK];
        // SAFETY: every source pointer starts 16 values of `padded`, alive
        // until the kernel returns; the splats array has an entry per
        // constant the kernel loads; `result` holds the 16 values one block
        // writes (the cache-resident kernel: `result` is not 64-byte
        // aligned for streaming stores).
        let ok = unsafe {
            (self.kernel.entry)(
                ptrs.as_ptr(),
                self.splats.as_ptr(),
                1,
                result.as_mut_ptr() as *mut u8,
            ) == 0
        };
        if ok {
            out[..len * size].copy_from_slice(&slot_bytes(&mut result)[..len * size]);
        }
        ok
    }
}

/// Fills `block` with one block of values of `size` bytes: `values`
/// (fewer than a block), then copies of the last of them (lane by lane in
/// the value's own width: a copy of `size` runtime bytes was a `memcpy`
/// call a lane).
fn pad_block(block: &mut [u64; BLOCK], values: &[u8], size: usize) {
    let len = values.len() / size;
    let bytes = slot_bytes(block);
    bytes[..values.len()].copy_from_slice(values);
    let last = &values[values.len() - size..];
    match size {
        4 => {
            let v = u32::from_ne_bytes(last.try_into().expect("4 bytes"));
            for lane in len..BLOCK {
                bytes[lane * 4..lane * 4 + 4].copy_from_slice(&v.to_ne_bytes());
            }
        }
        _ => {
            let v = u64::from_ne_bytes(last.try_into().expect("8 bytes"));
            block[len..].fill(v);
        }
    }
}
