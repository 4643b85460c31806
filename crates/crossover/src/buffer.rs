//! Host memory for array data.
//!
//! Large buffers are mapped with `mmap` and advised into transparent huge
//! pages (as NumPy does for big arrays): on this machine faulting in 400 MB
//! costs ~86 ms with 4 KiB pages and ~19 ms with 2 MiB pages. Freed large
//! buffers go to a bounded pool and are reused by the next allocation of the
//! same size class, so repeated evaluations do not pay the faults again (the
//! host-side twin of a GPU caching allocator).
//!
//! Every storage type has all bit patterns valid (bool is stored as `u8`), so
//! recycled or fresh (zeroed) memory can be viewed as any element type.

use crate::dtype::{DType, Element};
use crate::residency::{DeviceMemory, Residency};

use crate::error::{Error, Result};
use std::ptr::NonNull;
use std::sync::{Arc, OnceLock};

mod pool;
pub use pool::{host_pool_bytes, trim_host_pool};
use pool::{small_give, small_take, POOL};

/// Buffers at least this large are mmapped, huge-page advised and pooled.
const LARGE: usize = 1 << 20;
/// Buffers from this size up to [`LARGE`] come from the heap in page-sized
/// classes and are pooled too: glibc serves them with fresh `mmap`s (its
/// threshold is 128 KiB) or `memset`s them, and either costs more than the
/// kernel that fills them (25 us of page faults for a 400 KB result).
const POOLED: usize = 64 << 10;
/// Heap buffers from this size up to [`POOLED`] (page-sized classes) are
/// kept per thread for the next allocation of their class, at most
/// [`SMALL_KEEP`] of them: a recycled one is neither allocated nor zeroed,
/// and zeroing a 40 KB result costs a quarter of NumPy's whole `a + b`.
const SMALL_POOLED: usize = 4 << 10;
/// Heap buffers from this size up to [`SMALL_POOLED`] (64-byte classes)
/// are kept per thread as well: a 1,000-element float32 result (4,000
/// bytes) would otherwise be zeroed by the allocator on every call.
const SMALL_RECYCLED: usize = 1 << 10;
const SMALL_KEEP: usize = 16;
const PAGE: usize = 4 << 10;
const HUGE_PAGE: usize = 2 << 20;
const SMALL_ALIGN: usize = 64;
/// [`Buffer::from_host_bytes`] copies this much and more on every thread.
const PARALLEL_COPY_BYTES: usize = 256 << 10;

/// Raw, aligned, zero-initialised-or-recycled memory.
struct HostMem {
    ptr: NonNull<u8>,
    /// Usable bytes (the size class for pooled memory).
    cap: usize,
    /// How it was obtained, for freeing.
    kind: MemKind,
}

#[derive(Clone, Copy)]
enum MemKind {
    Empty,
    Heap,
    /// Memory owned by another object (see [`Buffer::from_external`]):
    /// never freed, pooled or written here.
    External,
    /// mmap'd region: (base pointer, mapped length).
    Mapped(usize, usize),
}

// SAFETY: HostMem owns its allocation exclusively; the raw pointer is only
// shared through the typed slices that Buffer hands out under Rust borrows.
unsafe impl Send for HostMem {}
// SAFETY: see Send; `&HostMem` allows only reads.
unsafe impl Sync for HostMem {}

impl HostMem {
    fn size_class(bytes: usize) -> usize {
        if bytes >= LARGE {
            bytes.div_ceil(HUGE_PAGE) * HUGE_PAGE
        } else if bytes >= SMALL_POOLED {
            bytes.div_ceil(PAGE) * PAGE
        } else {
            bytes.div_ceil(SMALL_ALIGN) * SMALL_ALIGN
        }
    }

    /// `bytes` of memory: zeroed or recycled, or, when `for_copy`, possibly
    /// uninitialised (the caller writes every byte through the raw pointer
    /// before anything reads it).
    fn alloc(bytes: usize, for_copy: bool) -> Result<HostMem> {
        if bytes == 0 {
            return Ok(HostMem {
                ptr: NonNull::<u64>::dangling().cast(),
                cap: 0,
                kind: MemKind::Empty,
            });
        }
        let cap = Self::size_class(bytes);
        if cap >= LARGE {
            if let Some(m) = POOL.take(cap) {
                return Ok(m);
            }
            return Self::map(cap);
        }
        if cap >= POOLED {
            if let Some(m) = POOL.take(cap) {
                return Ok(m);
            }
        } else if cap >= SMALL_RECYCLED {
            if let Some(m) = small_take(cap) {
                return Ok(m);
            }
        }
        let layout = std::alloc::Layout::from_size_align(cap, SMALL_ALIGN)
            .map_err(|e| Error::internal("alloc", e.to_string()))?;
        // SAFETY: layout has non-zero size. Zeroed memory is a valid value for
        // every storage type; uninitialised memory is only handed to a caller
        // that overwrites it first (`for_copy`).
        let p = unsafe {
            if for_copy {
                std::alloc::alloc(layout)
            } else {
                std::alloc::alloc_zeroed(layout)
            }
        };
        let ptr = NonNull::new(p).ok_or_else(|| out_of_memory(bytes))?;
        Ok(HostMem {
            ptr,
            cap,
            kind: MemKind::Heap,
        })
    }

    fn map(cap: usize) -> Result<HostMem> {
        let len = cap + HUGE_PAGE;
        // SAFETY: anonymous private mapping, no file; the kernel returns
        // zeroed pages or MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(out_of_memory(cap));
        }
        let aligned = (base as usize).div_ceil(HUGE_PAGE) * HUGE_PAGE;
        // SAFETY: [aligned, aligned + cap) lies inside the mapping. The advice
        // is a hint; failure (THP off) is harmless.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, cap, libc::MADV_HUGEPAGE);
        }
        Ok(HostMem {
            // SAFETY: mmap never returns null on success.
            ptr: unsafe { NonNull::new_unchecked(aligned as *mut u8) },
            cap,
            kind: MemKind::Mapped(base as usize, len),
        })
    }

    fn free(self) {
        match self.kind {
            MemKind::Empty | MemKind::External => {}
            MemKind::Heap => {
                let layout = std::alloc::Layout::from_size_align(self.cap, SMALL_ALIGN)
                    .expect("layout was valid at allocation");
                // SAFETY: allocated with this exact layout in `alloc`.
                unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) }
            }
            MemKind::Mapped(base, len) => {
                // SAFETY: unmapping exactly the region mapped in `map`.
                unsafe {
                    libc::munmap(base as *mut libc::c_void, len);
                }
            }
        }
    }
}

/// The allocator said no: [`Error::OutOfMemory`] (Python `MemoryError`).
fn out_of_memory(bytes: usize) -> Error {
    Error::OutOfMemory {
        op: "alloc",
        bytes: bytes as f64,
        shape: vec![bytes],
        dtype: DType::Bool,
        limit: crate::limits::memory_limit(),
    }
}

/// A typed, contiguous block of `len` elements: host memory, a device's,
/// or both (see [`Residency`]).
///
/// A buffer a device kernel wrote has no host memory until the host needs
/// its contents ([`crate::residency::ensure_host`]): GPU intermediates
/// reserve nothing on the host.
pub struct Buffer {
    dtype: DType,
    len: usize,
    /// Host memory, allocated on first host use for device-made buffers.
    mem: OnceLock<HostMem>,
    /// Keeps external memory alive (see [`Buffer::from_external`]).
    owner: Option<Box<dyn std::any::Any + Send + Sync>>,
    /// Where the contents are valid (host and/or a device).
    residency: Residency,
    /// Plans only: never holds data (see [`Buffer::placeholder`]).
    placeholder: bool,
    /// External memory its owner may change later ([`Buffer::into_volatile`]).
    volatile: bool,
}

impl Buffer {
    /// Allocates space for `len` elements. The contents are valid but
    /// unspecified (zero or recycled): the caller overwrites them.
    pub(crate) fn alloc(dtype: DType, len: usize) -> Result<Buffer> {
        Self::alloc_as(dtype, len, false)
    }

    /// [`Buffer::alloc`], or with `for_copy` memory that may be
    /// uninitialised: the caller writes all of it through the raw pointer
    /// before any slice of it is made.
    fn alloc_as(dtype: DType, len: usize, for_copy: bool) -> Result<Buffer> {
        // Checked before asking the allocator: a failed allocation of a
        // vector aborts the process, and mmap of absurd sizes can succeed.
        crate::limits::check_alloc("alloc", len, dtype)?;
        let bytes = len.checked_mul(dtype.size()).ok_or_else(|| Error::TooBig {
            op: "alloc",
            shape: vec![len],
            dtype,
        })?;
        Ok(Buffer {
            dtype,
            len,
            mem: OnceLock::from(HostMem::alloc(bytes, for_copy)?),
            owner: None,
            residency: Residency::default(),
            placeholder: false,
            volatile: false,
        })
    }

    /// A buffer whose contents exist only in `memory` on a device; host
    /// memory is allocated when the host first needs the contents.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `len` elements of `dtype` overflow.
    pub fn device_only(dtype: DType, len: usize, memory: Arc<dyn DeviceMemory>) -> Result<Buffer> {
        len.checked_mul(dtype.size()).ok_or_else(|| {
            Error::invalid("alloc", format!("{len} elements of {dtype} overflow"))
        })?;
        Ok(Buffer {
            dtype,
            len,
            mem: OnceLock::new(),
            owner: None,
            residency: Residency::on_device(memory),
            placeholder: false,
            volatile: false,
        })
    }

    /// Whether host memory is allocated (it always is for host-made
    /// buffers; device-made ones get it on first host use).
    pub fn has_host_memory(&self) -> bool {
        self.mem.get().is_some()
    }

    /// The host memory, allocated now if the buffer has none yet.
    fn host(&self) -> Result<&HostMem> {
        if let Some(m) = self.mem.get() {
            return Ok(m);
        }
        if self.placeholder {
            return Err(Error::internal(
                "read",
                "a placeholder array has no data (planning only)",
            ));
        }
        let m = HostMem::alloc(self.nbytes(), false)?;
        if let Err(lost) = self.mem.set(m) {
            // Another thread allocated first.
            lost.free();
        }
        self.mem
            .get()
            .ok_or_else(|| Error::internal("alloc", "host memory not set"))
    }

    /// Pointer to the host memory (allocated now if needed) for a device
    /// backend copying the buffer's contents back.
    ///
    /// # Safety
    /// The caller writes at most [`Buffer::nbytes`] bytes, and only while
    /// the host copy is not valid (no reader holds a slice of it: readers
    /// go through `ensure_host`, which serialises the copy).
    pub unsafe fn host_ptr_for_fill(&self) -> Result<*mut u8> {
        if self.is_external() {
            return Err(Error::internal(
                "copy to host",
                "external buffers are written by their owner only",
            ));
        }
        Ok(self.host()?.ptr.as_ptr())
    }

    /// Wraps memory that belongs to another object (a front end's array,
    /// e.g. a NumPy array) without copying. `owner` is kept until the buffer
    /// is dropped. The engine only reads such buffers.
    ///
    /// # Safety
    /// `ptr` must point to `len` initialised elements of the storage type of
    /// `dtype` (bool: bytes 0 or 1), aligned for that type, valid for reads
    /// for as long as `owner` lives. Writes to that memory by anyone while the
    /// buffer is being read are data races.
    pub unsafe fn from_external(
        dtype: DType,
        ptr: *const u8,
        len: usize,
        owner: Box<dyn std::any::Any + Send + Sync>,
    ) -> Buffer {
        let ptr = if len == 0 || ptr.is_null() {
            NonNull::<u64>::dangling().cast()
        } else {
            // SAFETY: checked non-null above.
            unsafe { NonNull::new_unchecked(ptr as *mut u8) }
        };
        Buffer {
            dtype,
            len,
            mem: OnceLock::from(HostMem {
                ptr,
                cap: len * dtype.size(),
                kind: MemKind::External,
            }),
            owner: Some(owner),
            residency: Residency::default(),
            placeholder: false,
            volatile: false,
        }
    }

    /// Where the buffer's contents are valid (host, a device, or both).
    pub fn residency(&self) -> &Residency {
        &self.residency
    }

    /// Marks external memory whose owner may change it once the call that
    /// handed it over returns (a NumPy array the caller can still write).
    /// Arrays reading it report [`Array::reads_volatile`](crate::Array::reads_volatile),
    /// so a front end computes them, and copies what still views this
    /// memory, before they outlive that call. A volatile buffer is made per
    /// call, so no device copy of it is ever reused by a later call.
    pub fn into_volatile(mut self) -> Buffer {
        self.volatile = self.owner.is_some();
        self
    }

    /// Whether the owner may change the memory ([`Buffer::into_volatile`]).
    pub fn is_volatile(&self) -> bool {
        self.volatile
    }

    /// Whether the memory belongs to another object ([`Buffer::from_external`]).
    pub fn is_external(&self) -> bool {
        self.owner.is_some()
    }

    /// Address of element 0 (for front ends that hand the memory to another
    /// runtime, e.g. a NumPy array viewing a result without a copy).
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr()
    }

    /// The contents as bytes. The host copy must be valid (see
    /// [`crate::residency::ensure_host`]).
    pub fn host_bytes(&self) -> &[u8] {
        if self.nbytes() == 0 {
            return &[];
        }
        // SAFETY: the host memory holds nbytes bytes; u8 has no validity or
        // alignment requirements; `&self` excludes writers.
        unsafe { std::slice::from_raw_parts(self.ptr(), self.nbytes()) }
    }

    /// A new buffer holding a copy of `bytes`, read as elements of `dtype`
    /// (native byte order). Front ends use it for small host arrays, where
    /// one `memcpy` is cheaper than evaluating a copy kernel.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `bytes` is not a whole number of
    /// elements; the allocation's errors.
    ///
    /// ```
    /// use crossover::{buffer::Buffer, DType};
    /// let bytes: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
    /// let b = Buffer::from_host_bytes(DType::F32, &bytes)?;
    /// assert_eq!(b.as_slice::<f32>(), &[1.5, -2.0]);
    /// # Ok::<(), crossover::Error>(())
    /// ```
    pub fn from_host_bytes(dtype: DType, bytes: &[u8]) -> Result<Buffer> {
        let size = dtype.size();
        if !bytes.len().is_multiple_of(size) {
            return Err(Error::invalid(
                "from_host_bytes",
                format!(
                    "{} bytes are not a whole number of {dtype} elements",
                    bytes.len()
                ),
            ));
        }
        // Not zeroed: the copy below writes every byte before anything reads.
        let mut b = Buffer::alloc_as(dtype, bytes.len() / size, true)?;
        let dst = b.as_mut_byte_ptr() as usize;
        let copy = |start: usize, len: usize| {
            // SAFETY: the new buffer owns at least bytes.len() bytes of host
            // memory, which cannot overlap the borrowed `bytes`; the calls
            // below write disjoint ranges covering all of it, through the
            // raw pointer, before any slice of it exists; every bit pattern
            // is a valid element.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr().add(start),
                    (dst as *mut u8).add(start),
                    len,
                )
            }
        };
        let threads = crate::cpu::threads();
        if bytes.len() >= PARALLEL_COPY_BYTES && threads > 1 {
            // The elementwise kernels' task grid: the kernel that reads this
            // copy next finds each task's part in the cache of the core
            // that wrote it.
            let task = crate::cpu::ELEMENTWISE_TASK * size;
            let tasks = bytes.len().div_ceil(task);
            crate::cpu::for_each_task(tasks, |t| {
                let start = t * task;
                copy(start, task.min(bytes.len() - start));
            });
        } else if !bytes.is_empty() {
            copy(0, bytes.len());
        }
        Ok(b)
    }

    /// Copies elements into a new buffer.
    pub fn from_elements<T: Element>(data: &[T]) -> Result<Buffer> {
        let mut b = Buffer::alloc(T::DTYPE, data.len())?;
        for (d, s) in b.as_mut_slice::<T::Store>().iter_mut().zip(data) {
            *d = s.to_store();
        }
        Ok(b)
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn nbytes(&self) -> usize {
        self.len * self.dtype.size()
    }

    fn ptr(&self) -> *mut u8 {
        match self.host() {
            Ok(m) => m.ptr.as_ptr(),
            // A placeholder has nothing to read, and a device-made buffer is
            // read through `ensure_host` (which reports failures as errors);
            // the engine turns this panic into an error.
            Err(e) => panic!("host memory: {e}"),
        }
    }

    /// A buffer of `len` elements that owns no memory, for plans of inputs
    /// that do not exist ([`crate::Array::placeholder`]).
    pub(crate) fn placeholder(dtype: DType, len: usize) -> Buffer {
        Buffer {
            dtype,
            len,
            mem: OnceLock::new(),
            owner: None,
            residency: Residency::default(),
            placeholder: true,
            volatile: false,
        }
    }

    /// Whether this is a [`Buffer::placeholder`].
    pub fn is_placeholder(&self) -> bool {
        self.placeholder
    }

    /// The elements as a typed slice. Panics if `T` is not the storage type
    /// of the buffer's dtype (an engine bug, never user input).
    pub fn as_slice<T: Storage>(&self) -> &[T] {
        assert!(stores::<T>(self.dtype), "buffer dtype mismatch");
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the allocation holds at least len * size_of::<T>() bytes,
        // is aligned to 64, every bit pattern of T is valid, and `&self`
        // guarantees no concurrent writer.
        unsafe { std::slice::from_raw_parts(self.ptr() as *const T, self.len) }
    }

    /// Mutable typed view; see [`Buffer::as_slice`].
    pub fn as_mut_slice<T: Storage>(&mut self) -> &mut [T] {
        assert!(stores::<T>(self.dtype), "buffer dtype mismatch");
        assert!(!self.is_external(), "external buffers are read-only");
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as in as_slice; `&mut self` guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr() as *mut T, self.len) }
    }

    /// Raw pointer to element 0, for kernels that write disjoint ranges
    /// from several threads.
    pub(crate) fn as_mut_ptr<T: Storage>(&mut self) -> *mut T {
        assert!(stores::<T>(self.dtype), "buffer dtype mismatch");
        assert!(!self.is_external(), "external buffers are read-only");
        self.ptr() as *mut T
    }

    /// Raw pointer to the first byte, for kernels that write their
    /// elements' storage types themselves.
    pub(crate) fn as_mut_byte_ptr(&mut self) -> *mut u8 {
        assert!(!self.is_external(), "external buffers are read-only");
        self.ptr()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Some(m) = self.mem.take() {
            if matches!(m.kind, MemKind::External) {
                // The owner (dropped with the struct) frees the memory.
            } else if m.cap >= POOLED {
                POOL.give(m);
            } else if m.cap >= SMALL_RECYCLED && matches!(m.kind, MemKind::Heap) {
                small_give(m);
            } else {
                m.free();
            }
        }
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} x {})", self.len, self.dtype)
    }
}

/// Types a buffer stores directly (bool is stored as `u8`).
pub trait Storage: Copy + Send + Sync + 'static {
    const DTYPE: DType;
}

/// Whether buffers of `dtype` store elements of type `T` (`u8` stores
/// both bool and uint8).
fn stores<T: Storage>(dtype: DType) -> bool {
    T::DTYPE == dtype || (T::DTYPE == DType::Bool && dtype == DType::U8)
}

macro_rules! storage {
    ($($t:ty => $d:ident),*) => {$(
        impl Storage for $t {
            const DTYPE: DType = DType::$d;
        }
    )*};
}
storage!(i8 => I8, i16 => I16, u16 => U16, u32 => U32, u64 => U64);
impl Storage for u8 {
    const DTYPE: DType = DType::Bool;
}
impl Storage for i32 {
    const DTYPE: DType = DType::I32;
}
impl Storage for i64 {
    const DTYPE: DType = DType::I64;
}
impl Storage for f32 {
    const DTYPE: DType = DType::F32;
}
impl Storage for f64 {
    const DTYPE: DType = DType::F64;
}
impl Storage for num_complex::Complex32 {
    const DTYPE: DType = DType::C64;
}
impl Storage for num_complex::Complex64 {
    const DTYPE: DType = DType::C128;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_bytes_are_copied_whole_on_both_sides_of_the_parallel_size() {
        for n in [
            0usize,
            1,
            1000,
            PARALLEL_COPY_BYTES / 4 - 1,
            PARALLEL_COPY_BYTES / 4 + 12_345,
        ] {
            let src: Vec<f32> = (0..n).map(|i| (i as f32).mul_add(0.37, -11.0)).collect();
            let bytes: Vec<u8> = src.iter().flat_map(|x| x.to_ne_bytes()).collect();
            let b = Buffer::from_host_bytes(DType::F32, &bytes).unwrap();
            assert_eq!(b.len(), n);
            assert_eq!(b.as_slice::<f32>(), &src[..], "{n} elements");
        }
        let err = Buffer::from_host_bytes(DType::F64, &[0u8; 12]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    op: "from_host_bytes",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn large_buffers_are_recycled() {
        let n = 3 << 20;
        let mut a = Buffer::alloc(DType::F32, n).unwrap();
        a.as_mut_slice::<f32>()[n - 1] = 7.0;
        let p = a.as_mut_ptr::<f32>() as usize;
        drop(a);
        assert!(host_pool_bytes() >= n * 4);
        // Same size class comes back from the pool (other tests may race for
        // it, so only check it is usable and fully addressable).
        let mut b = Buffer::alloc(DType::F32, n).unwrap();
        b.as_mut_slice::<f32>()[n - 1] = 1.0;
        let _ = p;
        assert_eq!(b.len(), n);
    }

    #[test]
    fn kilobyte_buffers_are_recycled_in_64_byte_classes() {
        // 1,000 f32 (4,000 bytes, the 4,032-byte class) and 996 (3,984
        // bytes, the same class): recycled, not zeroed.
        let mut a = Buffer::alloc(DType::F32, 1000).unwrap();
        a.as_mut_slice::<f32>().fill(-1.5);
        let p = a.as_mut_ptr::<f32>() as usize;
        drop(a);
        let mut b = Buffer::alloc(DType::F32, 996).unwrap();
        assert_eq!(b.as_mut_ptr::<f32>() as usize, p, "same class, same thread");
        assert_eq!(b.as_slice::<f32>()[995], -1.5);
        drop(b);
        // A different class does not take it.
        let mut c = Buffer::alloc(DType::F32, 1100).unwrap();
        assert!(c.as_slice::<f32>().iter().all(|&x| x == 0.0));
        assert_ne!(c.as_mut_ptr::<f32>() as usize, p);
    }

    #[test]
    fn small_heap_buffers_come_back_to_their_thread() {
        // 10,000 f32 (a 40 KB class): below the shared pool, kept per thread.
        let n = 10_000;
        let mut a = Buffer::alloc(DType::F32, n).unwrap();
        a.as_mut_slice::<f32>().fill(2.5);
        let p = a.as_mut_ptr::<f32>() as usize;
        drop(a);
        let mut b = Buffer::alloc(DType::F32, n - 7).unwrap();
        assert_eq!(b.as_mut_ptr::<f32>() as usize, p, "same class, same thread");
        assert_eq!(b.len(), n - 7);
        // Recycled, not zeroed: the old values are still there.
        assert_eq!(b.as_slice::<f32>()[n - 8], 2.5);
        // Another thread gets its own memory.
        let q = std::thread::spawn(move || {
            Buffer::alloc(DType::F32, n).map(|mut c| c.as_mut_ptr::<f32>() as usize)
        })
        .join()
        .unwrap()
        .unwrap();
        assert_ne!(q, b.as_mut_ptr::<f32>() as usize);
        drop(b);
        assert!(trim_host_pool() >= n * 4);
        let mut c = Buffer::alloc(DType::F32, n).unwrap();
        assert!(
            c.as_slice::<f32>().iter().all(|&x| x == 0.0),
            "fresh after a trim"
        );
        let _ = c.as_mut_ptr::<f32>();
    }

    #[test]
    fn external_memory_is_borrowed_and_owner_dropped() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        static DROPPED: AtomicBool = AtomicBool::new(false);
        struct Owner(#[allow(dead_code)] Vec<f64>);
        impl Drop for Owner {
            fn drop(&mut self) {
                DROPPED.store(true, Ordering::SeqCst);
            }
        }
        let data = vec![1.0f64, 2.0, 3.0];
        let ptr = data.as_ptr() as *const u8;
        // SAFETY: the Vec's heap memory moves with the owner, unchanged.
        let b = unsafe { Buffer::from_external(DType::F64, ptr, 3, Box::new(Owner(data))) };
        assert!(b.is_external());
        assert_eq!(b.as_slice::<f64>(), &[1.0, 2.0, 3.0]);
        let a = crate::Array::from_buffer(b, crate::shape::Layout::contiguous(&[3])).unwrap();
        assert_eq!(
            a.mul(2.0).unwrap().to_vec::<f64>().unwrap(),
            vec![2.0, 4.0, 6.0]
        );
        let v = a.value().unwrap();
        drop(a);
        assert!(!DROPPED.load(Ordering::SeqCst));
        assert_eq!(Arc::strong_count(&v.buffer), 1);
        drop(v);
        assert!(DROPPED.load(Ordering::SeqCst));
    }

    #[test]
    fn from_buffer_rejects_layouts_outside_the_buffer() {
        use crate::shape::Layout;
        let b = || Buffer::from_elements(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let bad = [
            Layout::contiguous(&[5]),
            Layout {
                shape: vec![2],
                strides: vec![2],
                offset: 2,
            },
            Layout {
                shape: vec![3],
                strides: vec![-1],
                offset: 1,
            },
        ];
        for layout in bad {
            let err = crate::Array::from_buffer(b(), layout.clone()).unwrap_err();
            assert!(err.to_string().contains("outside"), "{layout:?}: {err}");
        }
        let reversed = Layout {
            shape: vec![4],
            strides: vec![-1],
            offset: 3,
        };
        let a = crate::Array::from_buffer(b(), reversed).unwrap();
        assert_eq!(a.to_vec::<f32>().unwrap(), vec![4.0, 3.0, 2.0, 1.0]);
    }

    #[test]
    fn volatile_memory_is_reported_until_computed_away() {
        let data = vec![1.0f64, 2.0, 3.0, 4.0];
        let ptr = data.as_ptr() as *const u8;
        // SAFETY: the Vec's heap memory moves with the owner, unchanged.
        let b = unsafe { Buffer::from_external(DType::F64, ptr, 4, Box::new(data)) };
        let b = b.into_volatile();
        assert!(b.is_volatile());
        let a = crate::Array::from_buffer(b, crate::shape::Layout::contiguous(&[4])).unwrap();
        assert!(a.reads_volatile());
        // A pending op over it, and one over that, read it.
        let y = a.mul(2.0).unwrap();
        let z = y.add(1.0).unwrap();
        assert!(y.reads_volatile() && z.reads_volatile());
        // Computed, a result holds fresh memory; a view still holds the input.
        z.eval().unwrap();
        assert!(!z.reads_volatile());
        assert_eq!(z.to_vec::<f64>().unwrap(), vec![3.0, 5.0, 7.0, 9.0]);
        let view = a.reshape(&[2, 2]).unwrap();
        view.eval().unwrap();
        assert!(view.reads_volatile());
        let copied = view.copy().unwrap();
        copied.eval().unwrap();
        assert!(!copied.reads_volatile());
        // Only external memory can be volatile.
        assert!(!Buffer::alloc(DType::F64, 4)
            .unwrap()
            .into_volatile()
            .is_volatile());
    }

    #[test]
    fn empty_and_small() {
        let b = Buffer::alloc(DType::F64, 0).unwrap();
        assert!(b.as_slice::<f64>().is_empty());
        let s = Buffer::from_elements(&[1i64, 2, 3]).unwrap();
        assert_eq!(s.as_slice::<i64>(), &[1, 2, 3]);
    }
}
