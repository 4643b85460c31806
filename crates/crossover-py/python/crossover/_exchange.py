"""Zero-copy exchange with the Python GPU ecosystem (CuPy, PyTorch, JAX).

Out: a crossover array whose computed value is in CUDA memory exports
``__cuda_array_interface__`` (version 3) and a CUDA ``__dlpack__``
capsule, so ``cupy.asarray(x)``, ``torch.as_tensor(x, device="cuda")`` and
``torch.from_dlpack(x)`` read the device memory without a copy. Arrays in
host memory (or in OpenCL memory, which has no pointer other libraries can
use) hand DLPack consumers host memory and have no
``__cuda_array_interface__``.

In: ``crossover.asarray`` of anything with ``__cuda_array_interface__``
(CuPy arrays, PyTorch CUDA tensors, Numba device arrays), or with only a
CUDA ``__dlpack__`` (JAX arrays), wraps its memory without a host
round-trip; the array is then resident on the GPU and the producer (or the
DLPack tensor, whose deleter runs when crossover lets go) is kept alive
while crossover uses it.

What has run where: the host paths (and the DLPack capsule layout, read
by NumPy) are tested in CI; the CUDA paths ran with CuPy 14.2 and PyTorch
2.11 on an NVIDIA H200 on 2026-11-26 (docs/gpu.md).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from . import _crossover as _C
from . import _numpy

#: DLPack device codes.
KDL_CPU, KDL_CUDA = 1, 2


def _cuda_address(x: Any) -> tuple[int, int, tuple[int, ...]] | None:
    """(pointer, device ordinal, strides in elements) of ``x``'s CUDA copy."""
    at = _C._device_address(x.eval())
    if at is None or at[2] != "cuda":
        return None
    ptr, ordinal, _api, strides = at
    return ptr, ordinal, tuple(strides)


def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= max(d, 1)
    return tuple(reversed(out))


def cuda_array_interface(x: Any) -> dict[str, Any]:
    """The ``__cuda_array_interface__`` (v3) of a CUDA-resident array."""
    at = _cuda_address(x)
    if at is None:
        raise AttributeError(
            "__cuda_array_interface__: this crossover array is not in CUDA memory "
            f"(device {x.device!r}); xo.to_device(x, 'gpu') moves it there on a CUDA GPU, "
            "np.asarray(x) gives host memory")
    ptr, _ordinal, strides = at
    shape = tuple(x.shape)
    item = np.dtype(x.dtype).itemsize
    return {
        "shape": shape,
        "typestr": np.dtype(x.dtype).str,
        "data": (ptr, True),  # crossover arrays are immutable values
        "version": 3,
        "strides": None if strides == _c_strides(shape) else tuple(s * item for s in strides),
        # Every evaluation ends with the device synchronised: nothing to wait for.
        "stream": None,
    }


def dlpack_device(x: Any) -> tuple[int, int]:
    """(kDLCUDA, ordinal) for a CUDA-resident array, else (kDLCPU, 0)."""
    at = _cuda_address(x)
    return (KDL_CUDA, at[1]) if at is not None else (KDL_CPU, 0)


def dlpack(x: Any, stream: Any = None, max_version: Any = None, dl_device: Any = None,
           copy: bool | None = None) -> Any:
    """A DLPack capsule: the device memory of a CUDA-resident array (no
    copy), else the computed values in host memory (no copy unless
    ``copy=True`` or the consumer speaks the legacy protocol, which cannot
    mark memory read-only); read-only, as crossover arrays are."""
    at = _cuda_address(x)
    wants_host = dl_device is not None and tuple(dl_device)[0] == KDL_CPU
    if at is not None and not wants_host:
        if copy:
            raise BufferError("__dlpack__(copy=True) of a GPU-resident crossover array: "
                              "use np.asarray(x) for a host copy")
        # Every evaluation ends with the device synchronised, so any
        # consumer stream may read it now.
        return _C._dlpack_capsule(x, at[0], KDL_CUDA, at[1])
    if stream is not None and stream != -1:
        raise BufferError("this crossover array is in host memory: stream= must be None")
    # A consumer of the legacy protocol (no max_version) cannot be told the
    # memory is read-only, so NumPy refuses to export it: such a consumer
    # gets a writable copy instead of an error.
    view = x.numpy(copy=bool(copy) or max_version is None)
    kw: dict[str, Any] = {}
    if max_version is not None:
        kw["max_version"] = max_version
    if dl_device is not None:
        kw["dl_device"] = dl_device
    if copy is not None:
        kw["copy"] = copy
    return view.__dlpack__(**kw)


def has_cuda_interface(obj: Any) -> bool:
    """Whether ``obj`` (not a crossover array) offers CUDA memory, through
    ``__cuda_array_interface__`` or a CUDA ``__dlpack_device__``."""
    if isinstance(obj, _C.ndarray):
        return False
    try:
        if hasattr(obj, "__cuda_array_interface__"):
            return True
        device = getattr(obj, "__dlpack_device__", None)
        return device is not None and int(device()[0]) == KDL_CUDA
    except Exception:  # a property that fails (a host-side object)
        return False


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]

#: DLPack (type code, bits) -> NumPy dtype name, for the dtypes crossover holds.
_DL_DTYPES = {(6, 8): "bool", (0, 8): "int8", (0, 16): "int16", (0, 32): "int32",
              (0, 64): "int64", (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32",
              (1, 64): "uint64",
              (2, 32): "float32", (2, 64): "float64", (5, 64): "complex64",
              (5, 128): "complex128"}

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                        ctypes.c_char_p]
_capsule_rename = ctypes.pythonapi.PyCapsule_SetName
_capsule_rename.restype, _capsule_rename.argtypes = ctypes.c_int, [ctypes.py_object,
                                                                   ctypes.c_char_p]


class _DLPackOwner:
    """Holds a consumed DLPack tensor; its deleter runs when this goes."""

    def __init__(self, managed: Any) -> None:
        self.managed = managed

    def __del__(self) -> None:
        m, self.managed = self.managed, None
        if m is not None and m.contents.deleter:
            m.contents.deleter(m)


def read_dlpack(capsule: Any) -> tuple[int, int, int, tuple[int, ...], str, Any]:
    """Consumes a ``"dltensor"`` capsule: (device type, device id, data
    pointer, shape, dtype name, owner). The owner runs the tensor's deleter
    when it is collected; the capsule is renamed ``"used_dltensor"`` as the
    protocol asks, so its own destructor no longer does."""
    address = _capsule_pointer(capsule, b"dltensor")
    managed = ctypes.cast(address, ctypes.POINTER(_DLManagedTensor))
    owner = _DLPackOwner(managed)
    _capsule_rename(capsule, b"used_dltensor")
    t = managed.contents.dl_tensor
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    code = (int(t.dtype.code), int(t.dtype.bits))
    if t.dtype.lanes != 1 or code not in _DL_DTYPES:
        raise _C.DTypeError(f"asarray: crossover arrays cannot hold DLPack dtype code {code[0]} "
                            f"of {code[1]} bits and {t.dtype.lanes} lanes")
    if t.strides and tuple(int(t.strides[i]) for i in range(t.ndim)) != _c_strides(shape) \
            and np.prod(shape) > 1:
        raise ValueError("asarray: a strided DLPack tensor needs a contiguous copy first "
                         "(its library's ascontiguousarray)")
    data = int(t.data or 0) + int(t.byte_offset)
    return (int(t.device.device_type), int(t.device.device_id), data, shape,
            _DL_DTYPES[code], owner)


def from_cuda_dlpack(obj: Any, dtype: Any = None) -> Any:
    """A crossover array over the CUDA memory of ``obj``'s ``__dlpack__``
    (a producer without ``__cuda_array_interface__``, such as JAX), without
    a copy."""
    kind, _ordinal, ptr, shape, name, owner = read_dlpack(obj.__dlpack__())
    if kind != KDL_CUDA:
        raise ValueError(f"asarray: the DLPack tensor is on device type {kind}, not CUDA")
    x = _C._import_cuda(ptr, list(shape), name, (owner, obj))
    return x if dtype is None or np.dtype(dtype) == np.dtype(name) else x.astype(dtype)


def from_cuda(obj: Any, dtype: Any = None) -> Any:
    """A crossover array over ``obj``'s CUDA memory, without a copy (a
    strided or offset producer array is made contiguous by the producer
    first, when it can)."""
    if not hasattr(obj, "__cuda_array_interface__"):
        return from_cuda_dlpack(obj, dtype)
    cai = obj.__cuda_array_interface__
    shape = tuple(int(d) for d in cai["shape"])
    src = np.dtype(cai["typestr"])
    if cai.get("mask") is not None:
        raise ValueError("asarray: masked CUDA arrays are not supported")
    strides = cai.get("strides")
    if strides is not None and tuple(strides) != tuple(s * src.itemsize for s in _c_strides(shape)):
        contiguous = getattr(obj, "copy", None)
        if contiguous is None:
            raise ValueError("asarray: a strided CUDA array needs a contiguous copy first "
                             "(its library's ascontiguousarray)")
        obj = contiguous()
        cai = obj.__cuda_array_interface__
    if src not in _numpy._SUPPORTED:
        raise _C.DTypeError(f"asarray: crossover arrays cannot hold {src.name} (from a CUDA array)")
    ptr = int(cai["data"][0]) if cai.get("data") else 0
    x = _C._import_cuda(ptr, list(shape), src.name, obj)
    return x if dtype is None or np.dtype(dtype) == src else x.astype(dtype)


def to_device(x: Any, device: Any, stream: Any = None) -> Any:
    """``x`` with its values on ``device`` ("cpu" or "gpu"): ``"gpu"``
    uploads them now if needed (the same array, now also valid on the GPU);
    ``"cpu"`` of an array with a GPU copy is a new array over a host copy,
    so that its ``device`` is ``"cpu"``. Later kernels run where the
    planner puts them."""
    from ._array_api import _check_device

    if stream is not None:
        raise ValueError("crossover orders its device work itself (stream= must be None)")
    _check_device(device)
    moved = _C._move(x, str(device)) if device is not None else None
    return x if moved is None else moved
