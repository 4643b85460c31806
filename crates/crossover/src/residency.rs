//! Where a buffer's contents are valid: the host, a device, or both.
//!
//! Every [`Buffer`] carries a [`Residency`]: the set of devices holding
//! valid contents, plus the device-side memory when a device holds a copy.
//! A kernel's outputs are valid only where it ran; a copy adds a location.
//! Host readers go through [`ensure_host`], which copies back first.

use crate::array::Value;
use crate::buffer::Buffer;
use crate::device::DeviceKind;
use crate::error::{Error, Result};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// A set of devices (where a buffer is valid).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Locations(u8);

impl Locations {
    /// Valid on the host only.
    pub const HOST: Locations = Locations(1);

    /// Valid on `d` only.
    pub fn only(d: DeviceKind) -> Locations {
        Locations(d.bit())
    }
    /// Whether valid on `d`.
    pub fn contains(self, d: DeviceKind) -> bool {
        self.0 & d.bit() != 0
    }
    /// Also valid on `d`.
    pub fn with(self, d: DeviceKind) -> Locations {
        Locations(self.0 | d.bit())
    }
    /// Valid nowhere.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The devices in the set, in [`DeviceKind::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = DeviceKind> {
        DeviceKind::ALL
            .into_iter()
            .filter(move |d| self.contains(*d))
    }
}

impl fmt::Debug for Locations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Locations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self
            .iter()
            .map(|d| match d {
                DeviceKind::Cpu => "host",
                DeviceKind::Gpu => "gpu",
            })
            .collect();
        if names.is_empty() {
            f.write_str("nowhere")
        } else {
            f.write_str(&names.join("+"))
        }
    }
}

/// Memory a device holds for one buffer (a device backend's own type).
pub trait DeviceMemory: Send + Sync + fmt::Debug {
    /// The device holding it.
    fn device(&self) -> DeviceKind;
    /// Makes the owning buffer's host memory hold the device's contents
    /// (allocating the host side if the buffer has none yet). The caller
    /// then marks the host valid.
    fn copy_to_host(&self, host: &Buffer) -> Result<()>;
    /// Downcasting hook for the backend that made it.
    fn as_any(&self) -> &dyn std::any::Any;
    /// Where the memory is, for other GPU libraries (CUDA's
    /// `__cuda_array_interface__`, DLPack); `None` where it has no address
    /// they could use (OpenCL buffers, the synthetic GPU's host memory).
    fn address(&self) -> Option<DeviceAddress> {
        None
    }
}

/// The address of device memory as other GPU libraries name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceAddress {
    /// `"cuda"`.
    pub api: &'static str,
    /// The device's ordinal in that API.
    pub ordinal: usize,
    /// The device pointer of the first byte.
    pub ptr: u64,
}

/// Where a buffer's contents are valid (host and/or device), with the
/// device-side memory if any. Every buffer starts valid on the host.
#[derive(Debug)]
pub struct Residency {
    valid: AtomicU8,
    device: Mutex<Option<Arc<dyn DeviceMemory>>>,
    /// The device copy of a buffer whose host memory another object owns
    /// (a NumPy array) may be reused across evaluations: set by an explicit
    /// `to_device`, which vouches that the host data does not change.
    pinned: AtomicBool,
    /// Serialises copies back to the host.
    copy_back: Mutex<()>,
}

impl Default for Residency {
    fn default() -> Self {
        Residency {
            valid: AtomicU8::new(Locations::HOST.0),
            device: Mutex::new(None),
            pinned: AtomicBool::new(false),
            copy_back: Mutex::new(()),
        }
    }
}

impl Residency {
    /// A buffer whose contents exist only on a device so far.
    pub(crate) fn on_device(memory: Arc<dyn DeviceMemory>) -> Residency {
        Residency {
            valid: AtomicU8::new(memory.device().bit()),
            device: Mutex::new(Some(memory)),
            pinned: AtomicBool::new(false),
            copy_back: Mutex::new(()),
        }
    }

    /// The devices holding valid contents.
    pub fn locations(&self) -> Locations {
        Locations(self.valid.load(Ordering::Acquire))
    }

    /// Whether the contents are valid on `d`.
    pub fn is_valid_on(&self, d: DeviceKind) -> bool {
        self.locations().contains(d)
    }

    /// After a kernel on `d` wrote the buffer: valid there only.
    pub fn set_only(&self, d: DeviceKind) {
        self.valid.store(d.bit(), Ordering::Release);
    }

    /// After a copy to `d`: valid there too.
    pub fn add(&self, d: DeviceKind) {
        self.valid.fetch_or(d.bit(), Ordering::AcqRel);
    }

    /// Drops the copy on `d` when another location still holds the
    /// contents (the host data of an external buffer may change between
    /// evaluations, so its device copy is not trusted across them).
    pub fn forget(&self, d: DeviceKind) {
        let keep = self.locations().0 & !d.bit();
        if keep != 0 {
            self.valid.store(keep, Ordering::Release);
            if d != DeviceKind::Cpu {
                self.set_device_memory(None);
            }
        }
    }

    /// The device-side memory, if a device holds a copy.
    pub fn device_memory(&self) -> Option<Arc<dyn DeviceMemory>> {
        self.device
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sets (or clears) the device-side memory.
    pub fn set_device_memory(&self, m: Option<Arc<dyn DeviceMemory>>) {
        *self.device.lock().unwrap_or_else(|p| p.into_inner()) = m;
    }

    /// Marks the device copy as trusted across evaluations (see `pinned`).
    pub fn pin(&self) {
        self.pinned.store(true, Ordering::Release);
    }

    /// Whether [`Residency::pin`] was called.
    pub fn is_pinned(&self) -> bool {
        self.pinned.load(Ordering::Acquire)
    }
}

/// Makes `value` valid on the host (copying it back from a device if it
/// lives only there). Cheap when it already is.
pub fn ensure_host(value: &Value) -> Result<()> {
    ensure_buffer_on_host(&value.buffer)
}

/// [`ensure_host`] for a buffer.
pub fn ensure_buffer_on_host(buffer: &Buffer) -> Result<()> {
    let r = buffer.residency();
    if r.is_valid_on(DeviceKind::Cpu) {
        return Ok(());
    }
    let _copying = r.copy_back.lock().unwrap_or_else(|p| p.into_inner());
    if r.is_valid_on(DeviceKind::Cpu) {
        // Another thread copied it meanwhile.
        return Ok(());
    }
    let start = crate::trace::now();
    let mem = r.device_memory().ok_or_else(|| Error::Device {
        op: "copy to host",
        device: "gpu".into(),
        msg: "the buffer is valid on no device".into(),
    })?;
    let from = mem.device();
    mem.copy_to_host(buffer)?;
    r.add(DeviceKind::Cpu);
    crate::trace::copy_event(from, DeviceKind::Cpu, buffer.nbytes(), start, None);
    Ok(())
}
