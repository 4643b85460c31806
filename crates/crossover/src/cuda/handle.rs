//! Handles of NVIDIA's libraries (cuBLAS, cuSOLVER, cuSPARSE, cuFFT plans)
//! owned by crossover: made once per device on first use, bound to
//! crossover's stream, destroyed once, and only in the process that made
//! them (a forked child must not touch its parent's handles).

use super::CudaApi;
use crate::gpu::api::ApiError;
use std::sync::OnceLock;

/// A library handle, destroyed on drop by the library's own call.
pub(super) struct Owned<H: Copy> {
    pub(super) raw: H,
    pid: u32,
    destroy: fn(H),
}

// SAFETY: NVIDIA's library handles may be used from any thread as long as
// calls on one handle do not overlap; the GPU core serialises launches.
unsafe impl<H: Copy> Send for Owned<H> {}
// SAFETY: as above.
unsafe impl<H: Copy> Sync for Owned<H> {}

impl<H: Copy> Owned<H> {
    /// Takes ownership of `raw`, made in this process; `destroy` frees it.
    pub(super) fn new(raw: H, destroy: fn(H)) -> Self {
        Owned {
            raw,
            pid: std::process::id(),
            destroy,
        }
    }
}

impl<H: Copy> Drop for Owned<H> {
    fn drop(&mut self) {
        if std::process::id() == self.pid {
            let (destroy, raw) = (self.destroy, self.raw);
            // A library that unloads badly must not abort the process.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || destroy(raw)));
        }
    }
}

/// The handle of one device, made on first use (`Err`: why there is none).
pub(super) type Slot<H> = OnceLock<Result<Owned<H>, String>>;

/// What makes one library's handle.
pub(super) struct Maker<H: Copy> {
    /// The library's create call (for errors).
    pub(super) call: &'static str,
    /// Finds and loads the library (`Err`: why it is unavailable).
    pub(super) load: fn() -> Result<&'static str, String>,
    /// Creates the handle and binds it to the stream.
    pub(super) make: fn(&CudaApi) -> Result<Owned<H>, ApiError>,
}

impl CudaApi {
    /// The handle in `slot` (made now by `maker` if needed), or why there
    /// is none. A function missing from an old library panics inside
    /// cudarc's loader; that becomes the reason.
    pub(super) fn library_handle<H: Copy>(
        &self,
        slot: &Slot<H>,
        maker: &Maker<H>,
    ) -> Result<H, String> {
        let made = slot.get_or_init(|| {
            (maker.load)()?;
            self.enter(maker.call).map_err(|e| e.to_string())?;
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (maker.make)(self)))
                .unwrap_or_else(|_| {
                    Err(ApiError::new(
                        maker.call,
                        "the library is missing a function",
                    ))
                })
                .map_err(|e| e.to_string())
        });
        match made {
            Ok(h) => Ok(h.raw),
            Err(why) => Err(why.clone()),
        }
    }
}
