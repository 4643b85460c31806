//! NumPy <-> engine conversions.
//!
//! Inputs: a NumPy array is *borrowed* (the engine reads NumPy's memory
//! directly) where the call computes before it returns (`evaluate`, a `@jit`
//! call), *borrowed as volatile* by single ops (`xo.sin(a)`, `x + a`): the
//! buffer is marked [`Buffer::into_volatile`], and [`crate::array::wrap`]
//! computes any result that reads it before handing it to Python (NumPy's
//! own eager semantics, without copying the input), or *copied* where a
//! crossover array takes the value (`xo.asarray`). So a result never
//! depends on a NumPy array mutated after it was passed in.
//!
//! Outputs: a NumPy array views the engine's buffer without a copy; a
//! capsule named `crossover.buffer`, set as the array's `base`, keeps the
//! buffer alive.
//! Results the engine no longer references are handed over writeable; views
//! of values crossover still holds are read-only (like JAX).

use crate::errors::{self, dtype_error};
use crossover::buffer::Buffer;
use crossover::shape::Layout;
use crossover::{Array, DType, Value};
use numpy::npyffi::{self, flags, PY_ARRAY_API};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyAny;
use smallvec::SmallVec;
use std::sync::Arc;

/// NumPy's dtype object for an engine dtype.
pub fn numpy_dtype(py: Python<'_>, d: DType) -> Bound<'_, PyArrayDescr> {
    match d {
        DType::Bool => numpy::dtype::<bool>(py),
        DType::I32 => numpy::dtype::<i32>(py),
        DType::I64 => numpy::dtype::<i64>(py),
        DType::I8 => numpy::dtype::<i8>(py),
        DType::I16 => numpy::dtype::<i16>(py),
        DType::U8 => numpy::dtype::<u8>(py),
        DType::U16 => numpy::dtype::<u16>(py),
        DType::U32 => numpy::dtype::<u32>(py),
        DType::U64 => numpy::dtype::<u64>(py),
        DType::F32 => numpy::dtype::<f32>(py),
        DType::F64 => numpy::dtype::<f64>(py),
        DType::C64 => numpy::dtype::<numpy::Complex32>(py),
        DType::C128 => numpy::dtype::<numpy::Complex64>(py),
    }
}

/// The engine dtype of a NumPy dtype, if the engine has it.
pub fn engine_dtype(descr: &Bound<'_, PyArrayDescr>) -> Option<DType> {
    Some(match (descr.kind(), descr.itemsize()) {
        (b'b', 1) => DType::Bool,
        (b'i', 4) => DType::I32,
        (b'i', 8) => DType::I64,
        (b'i', 1) => DType::I8,
        (b'i', 2) => DType::I16,
        (b'u', 1) => DType::U8,
        (b'u', 2) => DType::U16,
        (b'u', 4) => DType::U32,
        (b'u', 8) => DType::U64,
        (b'f', 4) => DType::F32,
        (b'f', 8) => DType::F64,
        (b'c', 8) => DType::C64,
        (b'c', 16) => DType::C128,
        _ => return None,
    })
}

/// Parses a dtype argument (`np.float32`, `"float32"`, a dtype object...).
pub fn parse_dtype(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    let py = obj.py();
    let descr = PyArrayDescr::new(py, obj)?;
    engine_dtype(&descr).ok_or_else(|| unsupported(py, &descr))
}

fn unsupported(py: Python<'_>, descr: &Bound<'_, PyArrayDescr>) -> PyErr {
    dtype_error(
        py,
        format!(
            "dtype {} is not supported by crossover (supported: bool, int8, int16, int32, \
             int64, uint8, uint16, uint32, uint64, float32, float64, complex64, complex128)",
            descr.str().map(|s| s.to_string()).unwrap_or_default()
        ),
    )
}

/// Keeps the NumPy array a borrowed buffer points into alive.
struct NumpyOwner(#[allow(dead_code)] Py<PyAny>);

/// Wraps a NumPy array's memory as an engine array without copying.
///
/// Arrays that are misaligned, byte-swapped or strided in a way the engine
/// cannot express are first copied into a fresh contiguous NumPy array.
pub fn borrow_numpy(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Array> {
    borrow_numpy_as(arr, false)
}

/// [`borrow_numpy`]; `volatile` marks the memory as the caller's to change
/// later (a NumPy array the caller still holds).
fn borrow_numpy_as(arr: &Bound<'_, PyUntypedArray>, volatile: bool) -> PyResult<Array> {
    let py = arr.py();
    let dtype = match dtype_or_view(arr)? {
        Intaken::View(shared) => return Ok(shared),
        Intaken::Memory(dtype) => dtype,
    };
    if !expressible(arr, dtype) {
        // A forced copy: `ascontiguousarray` returns a misaligned but
        // contiguous array unchanged (and recursing on it never ends). A
        // fresh NumPy allocation is aligned and native.
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("dtype", numpy_dtype(py, dtype))?;
        kwargs.set_item("copy", true)?;
        kwargs.set_item("order", "C")?;
        let fresh = py
            .import("numpy")?
            .getattr("array")?
            .call((arr,), Some(&kwargs))?;
        let fresh = fresh.cast::<PyUntypedArray>()?;
        if !fresh.is_aligned() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "crossover: NumPy returned a misaligned copy of a misaligned input",
            ));
        }
        // A private copy nobody else can change.
        return borrow_numpy_as(fresh, false);
    }
    borrow_in_place(arr, dtype, volatile)
}

/// What a NumPy array is to the engine: a view of crossover's own memory
/// ([`engine_view`]), or memory of an engine dtype.
enum Intaken {
    View(Array),
    Memory(DType),
}

/// [`Intaken`] for `arr`; an error for a dtype the engine lacks.
fn dtype_or_view(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Intaken> {
    let descr = arr.dtype();
    let dtype = engine_dtype(&descr).ok_or_else(|| unsupported(arr.py(), &descr))?;
    Ok(match engine_view(arr) {
        Some(shared) => Intaken::View(shared),
        None => Intaken::Memory(dtype),
    })
}

/// Whether the engine can read `arr`'s memory as it is: aligned for
/// `dtype`, native byte order, strides whole elements. The kernels need
/// nothing more (they load unaligned vectors; strided views are layouts).
fn expressible(arr: &Bound<'_, PyUntypedArray>, dtype: DType) -> bool {
    let item = dtype.size() as isize;
    arr.is_aligned()
        && arr.dtype().is_native_byteorder() != Some(false)
        && arr.strides().iter().all(|s| s % item == 0)
}

/// `xo.asarray(a, copy=False)`: an array reading the NumPy array's memory
/// for as long as it lives, so it sees every later change to `a` (as
/// NumPy's own `asarray` does). The memory is volatile
/// ([`Buffer::into_volatile`]): results made from it are computed before
/// Python sees them, with the contents of that moment, and no device keeps
/// a copy of it. A ValueError names what needs a copy otherwise.
pub fn share_numpy(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Array> {
    let dtype = match dtype_or_view(arr)? {
        Intaken::View(shared) => return Ok(shared),
        Intaken::Memory(dtype) => dtype,
    };
    if !expressible(arr, dtype) {
        let why = if !arr.is_aligned() {
            "is not aligned for its dtype"
        } else if arr.dtype().is_native_byteorder() == Some(false) {
            "is byte-swapped"
        } else {
            "has strides that are not whole elements"
        };
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "asarray(copy=False): the NumPy array {why}, so crossover must copy it"
        )));
    }
    borrow_in_place(arr, dtype, true)
}

/// An engine array over `arr`'s own memory (checked [`expressible`]).
fn borrow_in_place(
    arr: &Bound<'_, PyUntypedArray>,
    dtype: DType,
    volatile: bool,
) -> PyResult<Array> {
    let Value { buffer, layout } = value_in_place(arr, dtype, volatile);
    Array::from_shared(buffer, layout).map_err(|e| errors::to_py(arr.py(), e))
}

/// The value of a NumPy array that the engine can read in place, as
/// [`borrow_numpy`] borrows it, without making an engine array of it
/// (`None`: memory that needs a copy first; an error for a dtype the
/// engine lacks).
pub fn numpy_value(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Option<Value>> {
    let dtype = match dtype_or_view(arr)? {
        Intaken::View(shared) => return Ok(shared.value().ok()),
        Intaken::Memory(dtype) => dtype,
    };
    Ok(expressible(arr, dtype).then(|| value_in_place(arr, dtype, false)))
}

/// `arr`'s memory as an engine value (`arr` must be [`expressible`] in
/// `dtype`).
fn value_in_place(arr: &Bound<'_, PyUntypedArray>, dtype: DType, volatile: bool) -> Value {
    let item = dtype.size() as isize;
    let shape = arr.shape().to_vec();
    let strides: Vec<isize> = arr.strides().iter().map(|s| s / item).collect();
    let numel: usize = shape.iter().product();
    // SAFETY: as_array_ptr is a live PyArrayObject for the lifetime of `arr`.
    let data = unsafe { (*arr.as_array_ptr()).fields.data } as *const u8;
    let (base, len, offset) = if numel == 0 {
        (data, 0usize, 0usize)
    } else {
        let (mut lo, mut hi) = (0isize, 0isize);
        for (&n, &s) in shape.iter().zip(&strides) {
            let span = (n as isize - 1) * s;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        // SAFETY: `lo` elements before `data` is the lowest address the
        // array touches, inside its allocation.
        let base = unsafe { data.offset(lo * item) };
        (base, (hi - lo + 1) as usize, (-lo) as usize)
    };
    let owner = Box::new(NumpyOwner(arr.clone().into_any().unbind()));
    // SAFETY: [base, base + len * item) is the memory the NumPy array views
    // (aligned, native order, checked above); the owner keeps it alive. The
    // engine never writes it.
    let buffer = unsafe { Buffer::from_external(dtype, base, len, owner) };
    let buffer = if volatile {
        buffer.into_volatile()
    } else {
        buffer
    };
    let layout = Layout {
        shape,
        strides,
        offset,
    };
    Value {
        buffer: Arc::new(buffer),
        layout,
    }
}

/// The engine array a read-only NumPy view of crossover's own memory (made
/// by [`view`]: `np.asarray(x)`, `x.numpy()`) stands for, sharing the
/// buffer: no copy, and nothing can change it (crossover's values are
/// immutable, and NumPy refuses to make such a view writeable). `None` for
/// any other array, or a view that reinterprets the dtype.
pub fn engine_view(arr: &Bound<'_, PyUntypedArray>) -> Option<Array> {
    let py = arr.py();
    // SAFETY: as_array_ptr is a live PyArrayObject for the lifetime of `arr`;
    // its base is null or a live object it holds a reference to.
    let (base, data, flags) = unsafe {
        let a = &*arr.as_array_ptr();
        (
            Bound::from_borrowed_ptr_or_opt(py, a.fields.base)?,
            a.fields.data as *const u8,
            a.fields.flags,
        )
    };
    if flags & flags::NPY_ARRAY_WRITEABLE != 0 {
        return None;
    }
    // NumPy keeps a view of a view as the base (`r[::2].base is r`): walk
    // down to the owner. Every array on the way must be read-only too (a
    // read-only view of a result handed over writeable is not immutable).
    let mut base = base;
    for _ in 0..64 {
        let Ok(inner) = base.cast::<PyUntypedArray>() else {
            break;
        };
        // SAFETY: as above, for the base array.
        let (next, inner_flags) = unsafe {
            let a = &*inner.as_array_ptr();
            (
                Bound::from_borrowed_ptr_or_opt(py, a.fields.base)?,
                a.fields.flags,
            )
        };
        if inner_flags & flags::NPY_ARRAY_WRITEABLE != 0 {
            return None;
        }
        base = next;
    }
    let buffer = owned_buffer(&base)?;
    let dtype = engine_dtype(&arr.dtype())?;
    let item = dtype.size() as isize;
    if buffer.dtype() != dtype || arr.dtype().is_native_byteorder() == Some(false) {
        return None;
    }
    let offset = (data as isize).checked_sub(buffer.as_ptr() as isize)?;
    if offset % item != 0 || arr.strides().iter().any(|s| s % item != 0) {
        return None;
    }
    let layout = Layout {
        shape: arr.shape().to_vec(),
        strides: arr.strides().iter().map(|s| s / item).collect(),
        offset: usize::try_from(offset / item).ok()?,
    };
    Array::from_shared(buffer, layout).ok()
}

/// Contiguous arrays above this size are copied with the GIL released.
const KEEP_GIL_BYTES: usize = 1 << 20;

/// `a`, or its computed value if it reads volatile memory (a NumPy array
/// borrowed by [`Intake::Volatile`]): computed now, and copied if the value
/// still views that memory (a reshape of the input), so it no longer
/// depends on memory the caller can change.
pub fn settle(py: Python<'_>, a: Array) -> PyResult<Array> {
    if !a.reads_volatile() {
        return Ok(a);
    }
    crate::compute::compute(py, std::slice::from_ref(&a))?;
    if !a.reads_volatile() {
        return Ok(a);
    }
    let c = errors::engine(py, || a.copy())?;
    crate::compute::compute(py, std::slice::from_ref(&c))?;
    Ok(c)
}

/// Copies a NumPy array into engine memory: contiguous ones with one
/// `memcpy` (as NumPy's own copy; the engine's copy kernel cost 3 us per
/// call before copying a byte, and was slower than `memcpy` at every size
/// measured, 1e3 to 1e6 float32), others by the engine's copy kernel.
pub fn copy_numpy(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Array> {
    let py = arr.py();
    let borrowed = borrow_numpy(arr)?;
    let value = errors::engine(py, || borrowed.value())?;
    if value.layout.offset == 0
        && value.layout.is_contiguous()
        && value.buffer.len() == borrowed.numel()
    {
        let dtype = borrowed.dtype();
        let copy = || {
            let buffer = Buffer::from_host_bytes(dtype, value.buffer.host_bytes())?;
            Array::from_buffer(buffer, value.layout.clone())
        };
        return if value.buffer.nbytes() > KEEP_GIL_BYTES {
            errors::detached(py, copy)
        } else {
            errors::engine(py, copy)
        };
    }
    if borrowed.dtype().is_complex() {
        // The engine's copy kernel is real-only: let NumPy copy.
        let fresh = arr.call_method0("copy")?;
        return borrow_numpy(fresh.cast::<PyUntypedArray>()?);
    }
    errors::detached(py, move || {
        let c = borrowed.copy()?;
        c.eval()?;
        Ok(c)
    })
}

/// The name of the capsules that hold an engine buffer for the NumPy arrays
/// viewing it (their `base`). A capsule rather than a Python class: made and
/// freed without pyo3's class machinery, 355 fewer instructions a small
/// `np.asarray(x + y)` (docs/benchmarks-percall.md).
const OWNER: &std::ffi::CStr = c"crossover.buffer";

/// A capsule owning one strong count of `buffer`, released when NumPy drops
/// the last array viewing it.
fn owner_capsule<'py>(py: Python<'py>, buffer: &Arc<Buffer>) -> PyResult<Bound<'py, PyAny>> {
    let raw = Arc::into_raw(buffer.clone())
        .cast_mut()
        .cast::<std::ffi::c_void>();
    // SAFETY: `raw` is non-null; the name is a static C string; the
    // destructor takes back exactly the count `into_raw` gave.
    let capsule = unsafe { pyo3::ffi::PyCapsule_New(raw, OWNER.as_ptr(), Some(release_owner)) };
    if capsule.is_null() {
        // SAFETY: the capsule was not made, so the count is still ours.
        drop(unsafe { Arc::from_raw(raw.cast::<Buffer>().cast_const()) });
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference, owned from here on.
    Ok(unsafe { Bound::from_owned_ptr(py, capsule) })
}

/// The destructor of [`owner_capsule`]'s capsules.
unsafe extern "C" fn release_owner(capsule: *mut pyo3::ffi::PyObject) {
    // SAFETY: Python calls this once, for a capsule `owner_capsule` made
    // (so its pointer is the count `Arc::into_raw` gave).
    unsafe {
        let raw = pyo3::ffi::PyCapsule_GetPointer(capsule, OWNER.as_ptr());
        if !raw.is_null() {
            drop(Arc::from_raw(raw.cast::<Buffer>().cast_const()));
        }
    }
}

/// The buffer `base` holds, if it is one of [`owner_capsule`]'s capsules.
fn owned_buffer(base: &Bound<'_, PyAny>) -> Option<Arc<Buffer>> {
    let ptr = base.as_ptr();
    // SAFETY: `ptr` is a live object; a capsule is ours only if its name is
    // our static string itself (the same address, which a capsule made
    // elsewhere with an equal name does not have), and then its pointer is
    // a live strong count, to which a new count is added for the Arc.
    unsafe {
        if pyo3::ffi::PyCapsule_CheckExact(ptr) == 0
            || pyo3::ffi::PyCapsule_GetName(ptr) != OWNER.as_ptr()
        {
            return None;
        }
        let raw = pyo3::ffi::PyCapsule_GetPointer(ptr, OWNER.as_ptr());
        if raw.is_null() {
            pyo3::ffi::PyErr_Clear();
            return None;
        }
        let raw = raw.cast::<Buffer>().cast_const();
        Arc::increment_strong_count(raw);
        Some(Arc::from_raw(raw))
    }
}

/// NumPy 2's limit on dimensions (1.x allows 32).
const MAX_DIMS: usize = 64;

/// What a NumPy view of a value needs, copied out of it (dims and strides
/// inline up to 8 dimensions), so that a computed array is read under its
/// node's lock without copying its layout.
pub struct ViewParts {
    buffer: Arc<Buffer>,
    dims: SmallVec<[npyffi::npy_intp; 8]>,
    /// In bytes.
    strides: SmallVec<[npyffi::npy_intp; 8]>,
    /// Bytes from the buffer's start to the first element.
    offset: usize,
}

impl ViewParts {
    /// The parts of `value`; an error beyond NumPy's 64 dimensions.
    pub fn of(value: &Value) -> PyResult<ViewParts> {
        let item = value.buffer.dtype().size();
        let layout = &value.layout;
        let nd = layout.shape.len();
        if nd > MAX_DIMS {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{nd} dimensions are more than NumPy's {MAX_DIMS}"
            )));
        }
        Ok(ViewParts {
            buffer: Arc::clone(&value.buffer),
            dims: layout.shape.iter().map(|&d| d as _).collect(),
            strides: layout
                .strides
                .iter()
                .map(|&s| (s * item as isize) as _)
                .collect(),
            offset: layout.offset * item,
        })
    }
}

/// A NumPy array viewing `value` without a copy.
fn view(py: Python<'_>, value: Value, writeable: bool) -> PyResult<Bound<'_, PyAny>> {
    view_of_parts(py, ViewParts::of(&value)?, writeable)
}

/// A NumPy array viewing the buffer `parts` describes without a copy.
fn view_of_parts(
    py: Python<'_>,
    mut parts: ViewParts,
    writeable: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let data = if parts.buffer.is_empty() {
        parts.buffer.as_ptr()
    } else {
        // SAFETY: the layout's offset lies inside the buffer.
        unsafe { parts.buffer.as_ptr().add(parts.offset) }
    };
    let descr = numpy_dtype(py, parts.buffer.dtype());
    let owner = owner_capsule(py, &parts.buffer)?;
    // SAFETY: NumPy API calls with a valid descr (reference stolen), dims and
    // strides of length nd, and data that lives as long as `owner`, which
    // becomes the array's base (reference stolen by SetBaseObject).
    unsafe {
        let subtype = npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type);
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            subtype,
            descr.into_ptr() as _,
            parts.dims.len() as _,
            parts.dims.as_mut_ptr(),
            parts.strides.as_mut_ptr(),
            data as *mut _,
            if writeable {
                flags::NPY_ARRAY_WRITEABLE
            } else {
                0
            },
            std::ptr::null_mut(),
        );
        let arr = Bound::from_owned_ptr_or_err(py, ptr)?;
        if PY_ARRAY_API.PyArray_SetBaseObject(py, ptr as *mut _, owner.into_ptr()) < 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(arr)
    }
}

/// A read-only NumPy view of a value crossover keeps (`__array__`, `.numpy()`).
pub fn readonly_view(py: Python<'_>, value: Value) -> PyResult<Bound<'_, PyAny>> {
    view(py, value, false)
}

/// [`readonly_view`] of parts read from a value ([`ViewParts::of`]).
pub fn readonly_view_of(py: Python<'_>, parts: ViewParts) -> PyResult<Bound<'_, PyAny>> {
    view_of_parts(py, parts, false)
}

/// A writeable NumPy array holding `value`: the engine's buffer itself when
/// nothing else references it, else a copy.
pub fn owned_numpy(py: Python<'_>, mut value: Value) -> PyResult<Bound<'_, PyAny>> {
    if !value.buffer.is_external() && Arc::get_mut(&mut value.buffer).is_some() {
        return view(py, value, true);
    }
    view(py, value, false)?.call_method1("copy", ("C",))
}

/// How NumPy inputs become engine arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intake {
    /// Read NumPy's memory directly: the call computes before returning.
    Borrow,
    /// Read NumPy's memory directly, marked volatile: a result that reads it
    /// is computed (and copied if it still views it) by
    /// [`crate::array::wrap`] before Python sees it.
    Volatile,
    /// Copy: the engine array may outlive the call.
    Copy,
}

/// Converts a NumPy array (or anything `numpy.asarray` accepts) to an engine
/// array.
pub fn numpy_to_engine(obj: &Bound<'_, PyAny>, intake: Intake) -> PyResult<Array> {
    if let Ok(arr) = obj.cast::<PyUntypedArray>() {
        return match intake {
            Intake::Borrow => borrow_numpy(arr),
            Intake::Volatile => borrow_numpy_as(arr, true),
            Intake::Copy => copy_numpy(arr),
        };
    }
    // Lists, tuples, NumPy scalars, objects with __array__: a fresh array is
    // safe to borrow only when NumPy made it from Python data.
    let py = obj.py();
    let fresh_from_python = obj.is_instance_of::<pyo3::types::PyList>()
        || obj.is_instance_of::<pyo3::types::PyTuple>()
        || obj.is_instance_of::<pyo3::types::PyFloat>()
        || obj.is_instance_of::<pyo3::types::PyInt>()
        || obj.is_instance_of::<pyo3::types::PyBool>();
    let arr = py.import("numpy")?.getattr("asarray")?.call1((obj,))?;
    let arr = arr.cast::<PyUntypedArray>()?;
    if fresh_from_python || intake == Intake::Borrow {
        borrow_numpy(arr)
    } else if intake == Intake::Volatile {
        borrow_numpy_as(arr, true)
    } else {
        copy_numpy(arr)
    }
}
