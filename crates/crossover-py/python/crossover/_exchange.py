"""Zero-copy exchange with the Python GPU ecosystem (CuPy, PyTorch, JAX).

Out: a crossover array whose computed value is in CUDA memory exports
``__cuda_array_interface__`` (version 3) and a CUDA ``__dlpack__``
capsule, so ``cupy.asarray(x)``, ``torch.as_tensor(x, device="cuda")`` and
``torch.from_dlpack(x)`` read the device memory without a copy. Arrays in
host memory (or in OpenCL memory, which has no pointer other libraries can
use) hand DLPack consumers host memory and have no
``__cuda_array_interface__``.

In: ``crossover.asarray`` of anything with ``__cuda_array_interface__``
(CuPy arrays, PyTorch CUDA tensors, Numba device arrays) wraps its memory
without a host round-trip; the array is then resident on the GPU and the
producer is kept alive while crossover uses it.

What has run where: the host paths (and the DLPack capsule layout, read
by NumPy) are tested in CI; the CUDA paths have not run on a GPU yet
(docs/gpu.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _crossover as _C

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
    ``copy=True``); read-only, as crossover arrays are."""
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
    view = x.numpy(copy=bool(copy))
    kw: dict[str, Any] = {}
    if max_version is not None:
        kw["max_version"] = max_version
    if dl_device is not None:
        kw["dl_device"] = dl_device
    if copy is not None:
        kw["copy"] = copy
    return view.__dlpack__(**kw)


def has_cuda_interface(obj: Any) -> bool:
    """Whether ``obj`` (not a crossover array) offers CUDA memory."""
    if isinstance(obj, _C.ndarray):
        return False
    try:
        return hasattr(obj, "__cuda_array_interface__")
    except Exception:  # a property that fails (a host-side object)
        return False


def from_cuda(obj: Any, dtype: Any = None) -> Any:
    """A crossover array over ``obj``'s CUDA memory, without a copy (a
    strided or offset producer array is made contiguous by the producer
    first, when it can)."""
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
    if src.name not in ("bool", "int32", "int64", "float32", "float64", "complex64",
                        "complex128"):
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
