"""NumPy protocol plumbing: ``__array_function__`` dispatch and fallbacks.

NumPy calls on crossover arrays reach this module when the native fast path
(``ndarray.__array_ufunc__`` for the ufuncs the engine has) does not apply.
Functions the engine has are mapped to crossover calls in ``_IMPL``; every
other NumPy function *falls back*: its crossover inputs are computed, NumPy
runs on host arrays, the results come back as crossover arrays, and a
``FallbackWarning`` is issued once per function (``set_fallback``).

Binding a new engine op is one line: add ``np.some_function: <crossover
call>`` to ``_IMPL``.
"""

from __future__ import annotations

import operator
import threading
import warnings
from typing import Any, Callable

import numpy as np

from . import _crossover as _C

_MODES = ("warn", "ignore", "raise")
_mode = "warn"
_warned: set[str] = set()
_lock = threading.Lock()


def set_fallback(mode: str) -> None:
    """What happens when a NumPy function the engine lacks is called on
    crossover arrays: ``"warn"`` (default: run it with NumPy on host arrays
    and warn once per function), ``"ignore"`` (run it silently) or
    ``"raise"`` (raise ``FallbackError``). Setting the mode resets the
    warned-once record.
    """
    global _mode
    if mode not in _MODES:
        raise ValueError(f"fallback mode must be one of {_MODES}, not {mode!r}")
    with _lock:
        _mode = mode
        _warned.clear()


def get_fallback() -> str:
    """The current fallback mode (see ``set_fallback``)."""
    return _mode


def _name(func: Any) -> str:
    mod = getattr(func, "__module__", None) or "numpy"
    if isinstance(func, np.ufunc):
        mod = "numpy"
    return f"{mod}.{getattr(func, '__name__', repr(func))}"


def _notify(name: str) -> None:
    if _mode == "ignore":
        return
    if _mode == "raise":
        raise _C.FallbackError(
            f"{name} is not implemented by the crossover engine "
            "(set_fallback('warn') runs it with NumPy on host arrays)"
        )
    with _lock:
        if name in _warned:
            return
        _warned.add(name)
    warnings.warn(
        f"crossover: {name} is not in the engine yet; its inputs are computed and NumPy "
        "runs it on host arrays (warned once per function; crossover.set_fallback('ignore') "
        "silences this)",
        _C.FallbackWarning,
        stacklevel=4,
    )


def _to_host(obj: Any) -> Any:
    """Crossover arrays (also inside tuples, lists, dicts) as NumPy arrays."""
    if isinstance(obj, _C.ndarray):
        return obj.numpy()
    if type(obj) in (tuple, list):
        return type(obj)(_to_host(x) for x in obj)
    if type(obj) is dict:
        return {k: _to_host(v) for k, v in obj.items()}
    return obj


def _from_host(obj: Any) -> Any:
    """NumPy results as crossover arrays (fresh ones adopted without a copy)."""
    if isinstance(obj, np.ndarray):
        if obj.dtype not in _SUPPORTED:
            return obj
        if obj.flags.owndata and obj.flags.writeable:
            return _C._adopt(obj)
        return _C.asarray(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_from_host(x) for x in obj))
    if type(obj) in (tuple, list):
        return type(obj)(_from_host(x) for x in obj)
    return obj


_SUPPORTED = {np.dtype(t) for t in ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")}


def _has_crossover(obj: Any) -> bool:
    if isinstance(obj, _C.ndarray):
        return True
    if type(obj) in (tuple, list):
        return any(_has_crossover(x) for x in obj)
    return False


def fallback(func: Callable[..., Any], args: tuple, kwargs: dict, name: str | None = None) -> Any:
    """Runs a NumPy function on host copies of crossover inputs."""
    _notify(name or _name(func))
    out = kwargs.get("out")
    if out is not None and _has_crossover(out):
        raise TypeError("crossover arrays are immutable: they cannot be used as out=")
    result = func(*_to_host(args), **_to_host(kwargs))
    if out is not None:
        return result  # NumPy wrote into the caller's arrays
    return _from_host(result)


def getitem(x: Any, key: Any) -> Any:
    """Advanced indexing (integer or boolean arrays): NumPy on host arrays."""
    return fallback(operator.getitem, (x, key), {}, name="advanced indexing (integer/boolean arrays)")


# ---- ufuncs that the native fast path did not take ---------------------------

_UFUNC_REDUCE = {np.add: "sum", np.maximum: "max", np.minimum: "min"}


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    if method == "reduce" and ufunc in _UFUNC_REDUCE and isinstance(inputs[0], _C.ndarray):
        extra = set(kwargs) - {"axis", "keepdims", "dtype"}
        if len(inputs) == 1 and not extra and kwargs.get("dtype") is None:
            return getattr(inputs[0], _UFUNC_REDUCE[ufunc])(
                axis=kwargs.get("axis", 0), keepdims=kwargs.get("keepdims", False)
            )
    if ufunc is np.matmul and method == "__call__" and not kwargs and len(inputs) == 2:
        return _C.matmul(*inputs)
    func = ufunc if method == "__call__" else getattr(ufunc, method)
    name = _name(ufunc) + ("" if method == "__call__" else f".{method}")
    return fallback(func, inputs, kwargs, name=name)


# ---- __array_function__ ------------------------------------------------------

_IMPL: dict[Callable[..., Any], Callable[..., Any]] = {}
_FALLBACK = object()
_NoValue = getattr(np, "_NoValue", object())


def _implements(*funcs: Callable[..., Any]):
    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        for fn in funcs:
            _IMPL[fn] = f
        return f

    return deco


def _x(a: Any) -> Any:
    return a if isinstance(a, _C.ndarray) else _C.asarray(a)


def array_function(func: Callable[..., Any], types: tuple, args: tuple, kwargs: dict) -> Any:
    if not all(issubclass(t, (np.ndarray, _C.ndarray)) for t in types):
        return NotImplemented
    impl = _IMPL.get(func)
    if impl is not None:
        try:
            r = impl(*args, **kwargs)
        except TypeError as e:
            # A call signature this binding does not take (a keyword of a
            # newer NumPy...): let NumPy run it.
            if isinstance(e, _C.CrossoverError) or "argument" not in str(e):
                raise
            r = _FALLBACK
        if r is not _FALLBACK:
            return r
    return fallback(func, args, kwargs)


def _plain(*values: Any) -> bool:
    return all(v is _NoValue or v is None for v in values)


def _reduction(method: str):
    def impl(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
             where=_NoValue):
        if out is not None or not _plain(initial, where):
            return _FALLBACK
        return getattr(_x(a), method)(axis=axis, dtype=dtype, keepdims=bool(keepdims))

    return impl


_IMPL[np.sum] = _reduction("sum")
_IMPL[np.mean] = _reduction("mean")


def _moment(method: str):
    def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
             mean=_NoValue, correction=_NoValue):
        if out is not None or not _plain(where, mean, correction):
            return _FALLBACK
        return getattr(_x(a), method)(axis=axis, dtype=dtype, ddof=ddof, keepdims=bool(keepdims))

    return impl


_IMPL[np.std] = _moment("std")
_IMPL[np.var] = _moment("var")


def _extremum(method: str):
    def impl(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
        if out is not None or not _plain(initial, where):
            return _FALLBACK
        return getattr(_x(a), method)(axis=axis, keepdims=bool(keepdims))

    return impl


for _f in (np.min, getattr(np, "amin", None)):
    if _f is not None:
        _IMPL[_f] = _extremum("min")
for _f in (np.max, getattr(np, "amax", None)):
    if _f is not None:
        _IMPL[_f] = _extremum("max")


def _argext(method: str):
    def impl(a, axis=None, out=None, *, keepdims=False):
        if out is not None or keepdims:
            return _FALLBACK
        return getattr(_x(a), method)(axis=axis)

    return impl


_IMPL[np.argmax] = _argext("argmax")
_IMPL[np.argmin] = _argext("argmin")


@_implements(np.where)
def _where(condition, x=_NoValue, y=_NoValue):
    if x is _NoValue or y is _NoValue:
        return _FALLBACK  # where(condition) is nonzero(): data-dependent shape
    return _C.where(condition, x, y)


@_implements(np.reshape)
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C" or copy is False:
        return _FALLBACK
    s = shape if shape is not None else newshape
    if isinstance(s, (int, np.integer)):
        s = (int(s),)
    return _x(a).reshape(tuple(s))


@_implements(np.transpose)
def _transpose(a, axes=None):
    return _C.transpose(_x(a), None if axes is None else list(axes))


@_implements(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    return _x(a).swapaxes(axis1, axis2)


@_implements(np.moveaxis)
def _moveaxis(a, source, destination):
    x = _x(a)
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        return _FALLBACK
    n = x.ndim
    src = [s % n for s in src]
    dst = [d % n for d in dst]
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _C.transpose(x, order)


@_implements(np.expand_dims)
def _expand_dims(a, axis):
    if not isinstance(axis, (int, np.integer)):
        return _FALLBACK
    return _C.expand_dims(_x(a), int(axis))


@_implements(np.squeeze)
def _squeeze(a, axis=None):
    if axis is not None and not isinstance(axis, (int, np.integer)):
        return _FALLBACK
    return _x(a).squeeze(None if axis is None else int(axis))


@_implements(np.ravel)
def _ravel(a, order="C"):
    if order != "C":
        return _FALLBACK
    return _x(a).ravel()


@_implements(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    return _C.broadcast_to(_x(array), shape)


@_implements(np.copy)
def _copy(a, order="K", subok=False):
    return _x(a).copy()


if hasattr(np, "astype"):

    @_implements(np.astype)
    def _astype(x, dtype, /, *, copy=True, device=None):
        return _x(x).astype(dtype)


@_implements(np.shape)
def _shape(a):
    return tuple(a.shape)


@_implements(np.ndim)
def _ndim(a):
    return a.ndim


@_implements(np.size)
def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


def _like(kind: str):
    def impl(a, *args, dtype=None, order="K", subok=True, shape=None, device=None):
        from . import full_like, ones_like, zeros_like

        if shape is not None or order not in ("K", "C"):
            return _FALLBACK
        if kind == "full":
            (fill_value,) = args
            return full_like(a, fill_value, dtype=dtype)
        if args:
            dtype = args[0]
        return (zeros_like if kind == "zeros" else ones_like)(a, dtype=dtype)

    return impl


_IMPL[np.zeros_like] = _like("zeros")
_IMPL[np.ones_like] = _like("ones")
_IMPL[np.full_like] = _like("full")

# ---- library ops: np.matmul/np.dot, np.linalg.*, np.fft.* --------------------

from . import fft as _fft  # noqa: E402
from . import linalg as _linalg  # noqa: E402


@_implements(np.dot)
def _dot(a, b, out=None):
    if out is not None or np.ndim(a) == 0 or np.ndim(b) == 0 or np.ndim(b) > 2:
        return _FALLBACK  # scalars, out=, or dot's N-D rule (unlike matmul's)
    return _C.matmul(a, b)


@_implements(np.linalg.solve)
def _solve(a, b):
    return _linalg.solve(a, b)


@_implements(np.linalg.svd)
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    if hermitian or (full_matrices and compute_uv and a.shape[-1] != a.shape[-2]):
        return _FALLBACK  # a full SVD of a non-square matrix needs the complement basis
    return _linalg.svd(a, full_matrices=False, compute_uv=compute_uv)


@_implements(np.linalg.qr)
def _qr(a, mode="reduced"):
    return _linalg.qr(a) if mode == "reduced" else _FALLBACK


@_implements(np.linalg.eigh)
def _eigh(a, UPLO="L"):
    return _linalg.eigh(a) if UPLO == "L" else _FALLBACK


for _f in ("cholesky", "inv", "det"):
    _IMPL[getattr(np.linalg, _f)] = getattr(_linalg, _f)


def _fft1(name: str):
    def impl(a, n=None, axis=-1, norm=None, out=None):
        return _FALLBACK if out is not None else getattr(_fft, name)(a, n, axis, norm)

    return impl


def _fft2(name: str):
    def impl(a, s=None, axes=(-2, -1), norm=None, out=None):
        if out is not None or tuple(axes) != (-2, -1) or (s is not None and name != "irfft2"):
            return _FALLBACK
        return getattr(_fft, name)(a, s, axes, norm)

    return impl


for _f in ("fft", "ifft", "rfft", "irfft"):
    _IMPL[getattr(np.fft, _f)] = _fft1(_f)
for _f in ("fft2", "ifft2", "rfft2", "irfft2"):
    _IMPL[getattr(np.fft, _f)] = _fft2(_f)
