"""NumPy ``ndarray`` methods that the Rust array class lacks, added to
``crossover.ndarray`` from Python: each calls the crossover function of the
same name (engine, composition or NumPy fallback, as ``_namespace`` routes it),
so a method and its function never disagree.

The class's own methods (``sum``, ``mean``, ``std``, ``min``, ``max``,
``argmax``, ``astype``, ``reshape``, ``T``, ``copy``, ``ravel``,
``flatten``, ``tolist``, ``item``...) are the engine's and stay.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _crossover as _C

#: Method names that call ``crossover.<name>(self, ...)``.
DELEGATED = ("dot", "clip", "round", "cumsum", "cumprod", "prod", "any", "all", "ptp",
             "conj", "conjugate", "argsort", "diagonal", "trace", "repeat", "take", "nonzero",
             "searchsorted", "compress", "choose", "partition", "argpartition")


def _delegate(name: str):
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        import crossover

        return getattr(crossover, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``crossover.{name}(self, ...)``, as ``numpy.ndarray.{name}``."
    return method


def _get(self: Any, stream: Any = None, order: str = "C", out: Any = None,
         blocking: bool = True) -> np.ndarray:
    """The values as a writeable NumPy array (CuPy's ``ndarray.get``)."""
    if out is not None:
        out[...] = self.numpy()
        return out
    return self.numpy(copy=True)


def _real(self: Any) -> Any:
    import crossover

    return crossover.real(self)


def _imag(self: Any) -> Any:
    import crossover

    return crossover.imag(self)


# ---- the Array API standard's array attributes ---------------------------------


def _array_namespace(self: Any, /, *, api_version: str | None = None) -> Any:
    """The namespace of the standard that this array follows: ``crossover``."""
    import crossover
    from ._array_api import API_VERSIONS

    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"crossover implements Array API versions {API_VERSIONS}, "
                         f"not {api_version!r}")
    return crossover


def _mT(self: Any) -> Any:
    """The last two axes swapped (a view); the standard's ``mT``."""
    if self.ndim < 2:
        raise ValueError(f"mT needs at least 2 dimensions, not {self.ndim}")
    return self.swapaxes(-1, -2)


def _to_device(self: Any, device: Any, /, *, stream: Any = None) -> Any:
    """The array with its values valid on ``device`` ("cpu", or "gpu" when
    one is usable), copied there now if needed (the standard's
    ``to_device``; see ``crossover._exchange``)."""
    from ._exchange import to_device

    return to_device(self, device, stream)


def _dlpack(self: Any, /, *, stream: Any = None, max_version: Any = None,
            dl_device: Any = None, copy: bool | None = None) -> Any:
    """A DLPack capsule: CUDA memory for a CUDA-resident array, else host
    memory (no copy unless ``copy=True``); read-only."""
    from ._exchange import dlpack

    return dlpack(self, stream, max_version, dl_device, copy)


def _dlpack_device(self: Any, /) -> tuple[int, int]:
    """(kDLCUDA, ordinal) for a CUDA-resident array, else (kDLCPU, 0)."""
    from ._exchange import dlpack_device

    return dlpack_device(self)


def _cuda_array_interface(self: Any) -> dict[str, Any]:
    """CuPy's and PyTorch's zero-copy protocol (v3), for arrays in CUDA
    memory; AttributeError otherwise."""
    from ._exchange import cuda_array_interface

    return cuda_array_interface(self)


def _complex(self: Any, /) -> complex:
    return complex(self.item())


def _binary(name: str, reflected: bool):
    def method(self: Any, other: Any, /) -> Any:
        import crossover

        f = getattr(crossover, name)
        return f(other, self) if reflected else f(self, other)

    method.__name__ = method.__qualname__ = f"__{'r' if reflected else ''}{name}__"
    method.__doc__ = f"``crossover.{name}`` (the standard's operator)."
    return method


#: Operators the standard names, by the function each calls.
OPERATORS = {"lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
             "xor": "bitwise_xor"}


def install() -> list[str]:
    """Adds the missing methods; returns the names added."""
    added = []
    for name in DELEGATED:
        if not hasattr(_C.ndarray, name):
            setattr(_C.ndarray, name, _delegate(name))
            added.append(name)
    extras = {"get": _get, "real": property(_real), "imag": property(_imag),
              "__array_namespace__": _array_namespace, "mT": property(_mT),
              "to_device": _to_device, "__dlpack__": _dlpack,
              "__dlpack_device__": _dlpack_device, "__complex__": _complex,
              "__cuda_array_interface__": property(_cuda_array_interface)}
    for op, func in OPERATORS.items():
        extras[f"__{op}__"] = _binary(func, False)
        extras[f"__r{op}__"] = _binary(func, True)
    for name, value in extras.items():
        if not hasattr(_C.ndarray, name):
            setattr(_C.ndarray, name, value)
            added.append(name)
    return added
