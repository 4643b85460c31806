//! Zero-copy exchange of GPU-resident arrays with the Python GPU ecosystem
//! (CuPy, PyTorch, JAX): where an array's device copy is (for
//! `__cuda_array_interface__`), DLPack capsules over device memory, CUDA
//! memory of other libraries taken in without a copy, and explicit moves.
//! The protocol dictionaries and the choice of path are Python's
//! (`crossover/_exchange.py`).

use crate::array::{wrap, PyArr};
use crate::errors;
use crossover::{DType, DeviceKind};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::ffi::{c_void, CStr};
use std::sync::Arc;

/// `(pointer, device ordinal, api, strides in elements)` of a computed
/// array's GPU copy, or `None` (pending, not on a GPU, or on one whose
/// memory has no address other libraries can use, such as OpenCL's).
#[pyfunction]
pub fn _device_address(a: PyRef<'_, PyArr>) -> Option<(u64, usize, &'static str, Vec<isize>)> {
    let (at, layout) = a.inner().device_address()?;
    Some((at.ptr, at.ordinal, at.api, layout.strides))
}

/// A crossover array over CUDA memory another library allocated: `ptr`,
/// row-major `shape` of `dtype`, kept alive through `owner`.
#[pyfunction]
pub fn _import_cuda(
    py: Python<'_>,
    ptr: u64,
    shape: Vec<usize>,
    dtype: &str,
    owner: Py<PyAny>,
) -> PyResult<Py<PyAny>> {
    let dtype = DType::parse(dtype)
        .ok_or_else(|| PyTypeError::new_err(format!("crossover arrays cannot hold {dtype}")))?;
    let keep: Arc<dyn std::any::Any + Send + Sync> = Arc::new(owner);
    let a = errors::engine(py, || {
        crossover::engine::with_current(|e| e.import_gpu_memory(ptr, &shape, dtype, keep))
    })?;
    wrap(py, a)
}

/// Makes the array's values valid on `device` (`"cpu"` or `"gpu"`),
/// copying them there if needed. `"cpu"` of an array with a GPU copy
/// returns a new array over a host copy (made on the CPU whatever the
/// device policy), so that it lives on the host only; else `None`.
#[pyfunction]
pub fn _move(py: Python<'_>, a: PyRef<'_, PyArr>, device: &str) -> PyResult<Option<Py<PyAny>>> {
    let d = match device {
        "cpu" => DeviceKind::Cpu,
        "gpu" => DeviceKind::Gpu,
        other => {
            return Err(PyValueError::new_err(format!(
                "device {other:?}: crossover's devices are 'cpu' and 'gpu'"
            )))
        }
    };
    let arr = a.inner();
    let on_gpu = arr.residency().is_some_and(|l| l.contains(DeviceKind::Gpu));
    if d == DeviceKind::Cpu && on_gpu {
        let host = errors::engine(py, || {
            let c = arr.copy()?;
            c.eval_with(crossover::Policy::Force(DeviceKind::Cpu))?;
            Ok(c)
        })?;
        return wrap(py, host).map(Some);
    }
    errors::engine(py, || {
        crossover::engine::with_current(|e| e.to_device(&arr, d))
    })?;
    Ok(None)
}

// DLPack's C structures (dlpack.h, the unversioned `dltensor` capsule).
#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// What a capsule's tensor points into: its shape and strides, and the
/// array whose memory it is.
struct Holder {
    _shape: Vec<i64>,
    _strides: Vec<i64>,
    _array: Py<PyAny>,
}

const DLTENSOR: &CStr = c"dltensor";

unsafe extern "C" fn delete_managed(m: *mut DLManagedTensor) {
    if m.is_null() {
        return;
    }
    // SAFETY: `m` and its context were made by `Box::into_raw` in
    // `_dlpack_capsule`, and DLPack calls the deleter once.
    unsafe {
        let m = Box::from_raw(m);
        drop(Box::from_raw(m.manager_ctx as *mut Holder));
    }
}

unsafe extern "C" fn capsule_destructor(capsule: *mut pyo3::ffi::PyObject) {
    // SAFETY: called by Python with the capsule; a consumer that took the
    // tensor renamed it (`used_dltensor`) and owns it, else we free it.
    unsafe {
        if pyo3::ffi::PyCapsule_IsValid(capsule, DLTENSOR.as_ptr()) == 1 {
            let m =
                pyo3::ffi::PyCapsule_GetPointer(capsule, DLTENSOR.as_ptr()) as *mut DLManagedTensor;
            delete_managed(m);
        }
    }
}

/// A DLPack capsule over the array's memory at `ptr` on device
/// `(device_type, device_id)` (DLPack's codes: 1 CPU, 2 CUDA), with the
/// array's shape, strides and dtype; the capsule keeps the array alive.
///
/// # Errors
/// A dtype DLPack has no code for.
#[pyfunction]
pub fn _dlpack_capsule(
    py: Python<'_>,
    a: Bound<'_, PyArr>,
    ptr: u64,
    device_type: i32,
    device_id: i32,
) -> PyResult<Py<PyAny>> {
    let (shape, strides, dtype) = {
        let r = a.borrow();
        let arr = r.inner();
        let strides = match arr.device_address() {
            Some((_, layout)) => layout.strides,
            None => crossover::shape::Layout::contiguous(arr.shape()).strides,
        };
        (arr.shape().to_vec(), strides, arr.dtype())
    };
    let (code, bits) = match dtype {
        DType::Bool => (6u8, 8u8),
        DType::I32 => (0, 32),
        DType::I64 => (0, 64),
        DType::I8 => (0, 8),
        DType::I16 => (0, 16),
        DType::U8 => (1, 8),
        DType::U16 => (1, 16),
        DType::U32 => (1, 32),
        DType::U64 => (1, 64),
        DType::F32 => (2, 32),
        DType::F64 => (2, 64),
        DType::C64 => (5, 64),
        DType::C128 => (5, 128),
    };
    let mut holder = Box::new(Holder {
        _shape: shape.iter().map(|&d| d as i64).collect(),
        _strides: strides.iter().map(|&s| s as i64).collect(),
        _array: a.clone().into_any().unbind(),
    });
    let managed = Box::new(DLManagedTensor {
        dl_tensor: DLTensor {
            data: ptr as *mut c_void,
            device: DLDevice {
                device_type,
                device_id,
            },
            ndim: shape.len() as i32,
            dtype: DLDataType {
                code,
                bits,
                lanes: 1,
            },
            shape: holder._shape.as_mut_ptr(),
            strides: holder._strides.as_mut_ptr(),
            byte_offset: 0,
        },
        manager_ctx: Box::into_raw(holder) as *mut c_void,
        deleter: Some(delete_managed),
    });
    let raw = Box::into_raw(managed);
    // SAFETY: a named capsule over a pointer we own until a consumer
    // renames it; the destructor frees it otherwise.
    let cap = unsafe {
        pyo3::ffi::PyCapsule_New(
            raw as *mut c_void,
            DLTENSOR.as_ptr(),
            Some(capsule_destructor),
        )
    };
    if cap.is_null() {
        // SAFETY: the capsule was not made, so nothing else owns `raw`.
        unsafe { delete_managed(raw) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference returned by PyCapsule_New.
    Ok(unsafe { Bound::from_owned_ptr(py, cap) }.unbind())
}
