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


def install() -> list[str]:
    """Adds the missing methods; returns the names added."""
    added = []
    for name in DELEGATED:
        if not hasattr(_C.ndarray, name):
            setattr(_C.ndarray, name, _delegate(name))
            added.append(name)
    extras = {"get": _get, "real": property(_real), "imag": property(_imag)}
    for name, value in extras.items():
        if not hasattr(_C.ndarray, name):
            setattr(_C.ndarray, name, value)
            added.append(name)
    return added
