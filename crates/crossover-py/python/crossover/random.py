"""Random numbers: ``default_rng(seed)`` returns a Philox4x32-10 generator
with NumPy's ``Generator`` methods (``random``, ``standard_normal``,
``uniform``, ``normal``; an extra ``dtype=`` picks float32 or float64).

NumPy's legacy functions (``rand``, ``randn``, ``random``,
``random_sample``, ``uniform``, ``normal``, ``standard_normal``,
``randint``, ``choice``, ``permutation``, ``shuffle``) draw from one
module-level Philox generator that ``seed(s)`` replaces, so the same seed
gives the same numbers. ``rand``/``randn``/``random`` take CuPy's ``dtype=``
(``rand(n, n, dtype=float32)``). The other legacy distributions (``beta``,
``poisson``...) run in NumPy from a ``RandomState`` over NumPy's own Philox,
seeded by the same ``seed`` (a ``FallbackWarning`` once each).

Results are lazy crossover arrays, generated inside the fused kernel that
uses them. The numbers are the same for a seed on every device, but they are
not NumPy's MT19937 or PCG64 streams.
"""

from __future__ import annotations

import operator
import threading
from typing import Any

import numpy as np

from . import _crossover as _C
from . import _numpy
from ._crossover import Generator, default_rng

__all__ = [
    "Generator", "default_rng", "seed", "rand", "randn", "random", "random_sample", "ranf",
    "sample", "uniform", "normal", "standard_normal", "randint", "random_integers", "choice",
    "permutation", "shuffle", "exponential", "standard_exponential", "get_state", "set_state",
]

_lock = threading.Lock()
_state: dict[str, Any] = {}


def seed(seed: Any = None) -> None:
    """Reseeds the module-level generators (``None``: a fresh seed). The
    engine's Philox draws ``rand``, ``randn``... and NumPy's ``RandomState``
    over Philox draws the distributions that run in NumPy."""
    if seed is not None:
        seed = operator.index(np.asarray(seed).ravel()[0]) if np.ndim(seed) else operator.index(seed)
    with _lock:
        _state["engine"] = default_rng(seed)
        _state["host"] = np.random.RandomState(np.random.Philox(_state["engine"].seed))


def _engine() -> Generator:
    with _lock:
        g = _state.get("engine")
    if g is None:
        seed()
        g = _state["engine"]
    return g


def _host() -> np.random.RandomState:
    _engine()
    return _state["host"]


def get_state() -> dict[str, Any]:
    """The seed of the module-level generator (Philox counters are not
    exposed; ``set_state`` of this value restarts the stream)."""
    return {"seed": _engine().seed}


def set_state(state: dict[str, Any]) -> None:
    """Restarts the module-level stream at ``state["seed"]`` (``get_state``)."""
    seed(state["seed"])


def _size(shape: tuple) -> Any:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        return tuple(shape[0])  # rand((2, 3)): CuPy and NumPy refuse, we take it
    return tuple(int(s) for s in shape) if shape else None


def random_sample(size: Any = None, dtype: Any = float) -> Any:
    """Uniform values on [0, 1); ``size=None`` gives one float."""
    return _engine().random(size, dtype=dtype)


def random(size: Any = None, dtype: Any = float) -> Any:  # noqa: A001 - NumPy's name
    """Uniform values on [0, 1) (``random_sample``)."""
    return random_sample(size, dtype)


ranf = sample = random


def rand(*shape: int, dtype: Any = float) -> Any:
    """Uniform values on [0, 1) of shape ``shape``; ``dtype=`` float32 or
    float64 (CuPy's extension); no shape gives one float."""
    return _engine().random(_size(shape), dtype=dtype)


def randn(*shape: int, dtype: Any = float) -> Any:
    """Standard normal values of shape ``shape`` (``dtype=`` as ``rand``)."""
    return _engine().standard_normal(_size(shape), dtype=dtype)


def standard_normal(size: Any = None, dtype: Any = float) -> Any:
    """Standard normal values."""
    return _engine().standard_normal(size, dtype=dtype)


def _scalar(v: Any) -> bool:
    return np.ndim(v) == 0 and not isinstance(v, _C.ndarray)


def _shape_for(size: Any, *params: Any) -> Any:
    if size is not None:
        return size
    shapes = [np.shape(p) for p in params]
    return None if all(s == () for s in shapes) else np.broadcast_shapes(*shapes)


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = float) -> Any:
    """Uniform values on [low, high); array ``low``/``high`` broadcast."""
    if _scalar(low) and _scalar(high):
        return _engine().uniform(float(low), float(high), size, dtype=dtype)
    u = _engine().random(_shape_for(size, low, high), dtype=dtype)
    return low + u * (_C.asarray(high) - low)


def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> Any:
    """Normal values with mean ``loc`` and standard deviation ``scale``."""
    if _scalar(loc) and _scalar(scale):
        if scale < 0:
            raise ValueError("scale < 0")
        return _engine().normal(float(loc), float(scale), size, dtype=dtype)
    z = _engine().standard_normal(_shape_for(size, loc, scale), dtype=dtype)
    return loc + z * _C.asarray(scale)


def standard_exponential(size: Any = None, dtype: Any = float) -> Any:
    """Exponential values of mean 1: ``-log(1 - u)`` of uniform ``u``."""
    u = _engine().random(size, dtype=dtype)
    if size is None:
        return -np.log1p(-u)
    return -_C.ufunc("log", 1.0 - u)


def exponential(scale: Any = 1.0, size: Any = None, dtype: Any = float) -> Any:
    """Exponential values of mean ``scale``."""
    if np.any(np.asarray(scale) < 0):
        raise ValueError("scale < 0")
    return standard_exponential(_shape_for(size, scale), dtype) * scale


def randint(low: int, high: int | None = None, size: Any = None, dtype: Any = int) -> Any:
    """Integers uniform on [low, high) (``high=None``: [0, low)), NumPy's
    default dtype int64; ``floor(low + u * (high - low))`` of a float64
    uniform ``u`` (uniform for ranges below 2**53)."""
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    if high <= low:
        raise ValueError(f"low >= high ({low} >= {high})")
    dt = np.dtype(dtype)
    if dt.kind not in "iu" or dt not in _numpy._SUPPORTED:
        return _numpy._from_host(_host().randint(low, high, size, dtype=dt))
    info = np.iinfo(dt)
    if low < info.min or high - 1 > info.max:
        raise ValueError(f"high is out of bounds for {dt}")
    u = _engine().random(1 if size is None else size)
    r = _C.ufunc("floor", low + u * float(high - low))
    r = _C.ufunc("minimum", r, float(high - 1)).astype(dt)  # u * span may round up to span
    return r.reshape(()).item() if size is None else r


def random_integers(low: int, high: int | None = None, size: Any = None) -> Any:
    """Integers on [low, high], inclusive (NumPy's deprecated form)."""
    if high is None:
        low, high = 1, low
    return randint(low, int(high) + 1, size)


def permutation(x: Any) -> Any:
    """A permuted ``arange(x)`` (for an int) or a permuted copy of ``x``
    along its first axis: the order of engine uniform values, argsorted on
    the host."""
    n = int(x) if isinstance(x, (int, np.integer)) else len(x)
    order = np.argsort(_engine().random(n).numpy(), kind="stable")
    if isinstance(x, (int, np.integer)):
        return _C.asarray(order)
    host = x.numpy() if isinstance(x, _C.ndarray) else np.asarray(x)
    return _numpy._from_host(host[order])


def shuffle(x: Any) -> None:
    """Shuffles an array (crossover or NumPy) or a list in place along its
    first axis."""
    order = np.argsort(_engine().random(len(x)).numpy(), kind="stable")
    if isinstance(x, _C.ndarray):
        x[...] = x.numpy()[order]
    else:
        x[:] = np.asarray(x)[order] if isinstance(x, np.ndarray) else [x[i] for i in order]


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
    """Values of ``a`` (or of ``arange(a)`` for an int) at random; with
    ``p``, by inverse CDF of engine uniforms; ``replace=False`` takes the
    first of a permutation."""
    pool = None if isinstance(a, (int, np.integer)) else (
        a.numpy() if isinstance(a, _C.ndarray) else np.asarray(a))
    n = int(a) if pool is None else len(pool)
    if n <= 0:
        raise ValueError("a must be a positive integer or a non-empty sequence")
    count = int(np.prod(size)) if size is not None else 1
    if not replace:
        if count > n:
            raise ValueError("Cannot take a larger sample than population when replace=False")
        if p is not None:
            return _numpy._from_host(_host().choice(a if pool is None else pool, size, False, p))
        idx = permutation(n).numpy()[:count]
    elif p is None:
        idx = np.asarray(randint(0, n, count).numpy())
    else:
        p = np.asarray(p, dtype=np.float64)
        if p.shape != (n,) or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
            raise ValueError("p must be 1-D, as long as a, non-negative and sum to 1")
        cdf = np.cumsum(p)
        cdf /= cdf[-1]
        idx = np.searchsorted(cdf, _engine().random(count).numpy(), side="right")
        idx = np.minimum(idx, n - 1)
    values = idx if pool is None else pool[idx]
    if size is None:
        return values[0].item() if hasattr(values[0], "item") else values[0]
    return _numpy._from_host(np.ascontiguousarray(values.reshape(size)))


def _host_distribution(np_func: Any, qualname: str) -> Any:
    """A legacy distribution the engine lacks: NumPy's ``RandomState``
    method of the same name, seeded by ``seed`` (a FallbackWarning once)."""
    name = qualname.rsplit(".", 1)[-1]

    def f(*args: Any, **kwargs: Any) -> Any:
        return _numpy.fallback(getattr(_host(), name), args, kwargs, name=qualname)

    return f


def _complete() -> None:
    import sys

    from . import _namespace

    # Engine uniforms ordered on the host: the "host" route of the table.
    for f in (permutation, shuffle):
        f._crossover_route = "host"  # type: ignore[attr-defined]

    def route(np_func: Any, qualname: str) -> Any:
        name = qualname.rsplit(".", 1)[-1]
        if hasattr(np.random.RandomState, name):
            f = _host_distribution(np_func, qualname)
            f.__doc__ = (f"``{qualname}`` from NumPy's RandomState over Philox, seeded by "
                         "``crossover.random.seed`` (a FallbackWarning once).")
            return _namespace._mark(f, "numpy", np_func, qualname)
        return _namespace.through_numpy(np_func, qualname)

    _namespace.install(sys.modules[__name__], np.random, numpy_route=route)
