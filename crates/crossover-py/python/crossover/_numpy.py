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
    ``"raise"`` (raise ``FallbackError``; ``"error"`` is the same).
    Setting the mode resets the warned-once record.
    """
    global _mode
    mode = "raise" if mode == "error" else mode
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


def _notify(name: str, why: str | None = None) -> None:
    # The cause in the user's terms: the function itself, or (``why``) the
    # argument of an engine function that the engine does not take.
    cause = f"{name} is not in the engine yet" if why is None else f"{name}: {why}"
    if _mode == "ignore":
        return
    if _mode == "raise":
        raise _C.FallbackError(
            f"{cause} (set_fallback('warn') runs it with NumPy on host arrays)"
        )
    with _lock:
        if cause in _warned:
            return
        _warned.add(cause)
    warnings.warn(
        f"crossover: {cause}; its inputs are computed and NumPy runs it on host arrays "
        "(warned once per cause; crossover.set_fallback('ignore') silences this)",
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
    """NumPy results as crossover arrays (fresh ones adopted without a copy).
    Subclasses (masked arrays...) stay as NumPy made them: a conversion
    would drop what they add (the mask)."""
    if type(obj) is np.ndarray:
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


_SUPPORTED = {np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                     "uint32", "uint64", "float32", "float64", "complex64",
                                     "complex128")}


def _has_crossover(obj: Any) -> bool:
    if isinstance(obj, _C.ndarray):
        return True
    if type(obj) in (tuple, list):
        return any(_has_crossover(x) for x in obj)
    return False


def fallback(func: Callable[..., Any], args: tuple, kwargs: dict, name: str | None = None,
             why: str | None = None) -> Any:
    """Runs a NumPy function on host copies of crossover inputs (``why``:
    the reason an engine function could not take the call)."""
    _notify(name or _name(func), why)
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


# Ufuncs whose loop dtype is their result dtype: ``dtype=d`` casts the inputs
# to ``d`` and runs the engine's op (as NumPy's loop selection does).
_SAME_DTYPE_UFUNCS = {
    "add", "subtract", "multiply", "divide", "true_divide", "power", "minimum", "maximum",
    "negative", "positive", "absolute", "sqrt", "exp", "log", "sin", "cos", "tan", "tanh",
    "square", "floor", "ceil", "log1p", "expm1", "log10", "log2", "exp2", "arcsin", "arccos",
    "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "arctan2", "hypot", "sign",
}
_FLOAT_DTYPES = {np.dtype(np.float32), np.dtype(np.float64)}


def _ufunc_with_dtype(ufunc: np.ufunc, inputs: tuple, dtype: Any) -> Any:
    """``np.add(x, y, dtype=d)`` (Dask's reductions pass ``dtype``) and
    ``out=None`` calls in the engine for float ``d``; other cases go to NumPy."""
    name = ufunc.__name__
    if name not in _SAME_DTYPE_UFUNCS:
        return _FALLBACK
    if dtype is not None:
        try:
            d = np.dtype(dtype)
        except TypeError:
            return _FALLBACK
        if d not in _FLOAT_DTYPES:
            return _FALLBACK
        inputs = tuple(
            i if isinstance(i, (int, float)) and not isinstance(i, (bool, np.generic))
            else _C.asarray(i, dtype=d)
            for i in inputs
        )
    try:
        return _C.ufunc(name, *inputs)
    except _C.DTypeError:
        return _FALLBACK


def _no_out(kwargs: dict) -> bool:
    out = kwargs.get("out")
    return out is None or (isinstance(out, tuple) and all(o is None for o in out))


#: Ufuncs made of engine ops (``_functions``): ``np.isnan(x)`` runs there.
_UFUNC_IMPL: dict[np.ufunc, Callable[..., Any]] = {}


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    impl = _UFUNC_IMPL.get(ufunc)
    if impl is not None and method == "__call__" and not kwargs and len(inputs) == ufunc.nin:
        r = impl(*inputs)
        if not isinstance(r, _Fallback):
            return r
    if method == "reduce" and ufunc in _UFUNC_REDUCE and isinstance(inputs[0], _C.ndarray):
        extra = set(kwargs) - {"axis", "keepdims", "dtype"}
        if len(inputs) == 1 and not extra and kwargs.get("dtype") is None:
            return getattr(inputs[0], _UFUNC_REDUCE[ufunc])(
                axis=kwargs.get("axis", 0), keepdims=kwargs.get("keepdims", False)
            )
    if method == "__call__" and kwargs and set(kwargs) <= {"dtype", "out"} and _no_out(kwargs):
        r = _ufunc_with_dtype(ufunc, inputs, kwargs.get("dtype"))
        if not isinstance(r, _Fallback):
            return r
    if ufunc is np.matmul and method == "__call__" and not kwargs and len(inputs) == 2:
        return _C.matmul(*inputs)
    func = ufunc if method == "__call__" else getattr(ufunc, method)
    name = _name(ufunc) + ("" if method == "__call__" else f".{method}")
    if method == "__call__" and "where" in kwargs and "out" not in kwargs:
        # NumPy drops out=None before calling us; without it, NumPy would
        # warn about uninitialised output the caller did not ask for.
        kwargs = dict(kwargs, out=None)
    why = None
    given = sorted(k for k, v in kwargs.items() if v is not None)
    if method == "__call__" and given:
        why = "the engine does not take the argument(s) " + ", ".join(f"{k}=" for k in given)
    elif any(type(i) is not np.ndarray and isinstance(i, np.ndarray) for i in inputs):
        why = "an operand is a NumPy subclass (" + ", ".join(
            sorted({type(i).__name__ for i in inputs
                    if type(i) is not np.ndarray and isinstance(i, np.ndarray)})
        ) + ") whose meaning NumPy keeps"
    return fallback(func, inputs, kwargs, name=name, why=why)


# ---- __array_function__ ------------------------------------------------------

_IMPL: dict[Callable[..., Any], Callable[..., Any]] = {}
_NoValue = getattr(np, "_NoValue", object())


class _Fallback:
    """Returned by an ``_IMPL`` entry that cannot take a call: NumPy runs
    it, and the warning names ``why`` (the argument the engine lacks)."""

    __slots__ = ("why",)

    def __init__(self, why: str | None = None) -> None:
        self.why = why


_FALLBACK = _Fallback()


def _unsupported(**kw: Any) -> _Fallback:
    """A fallback naming the first argument given that the engine lacks."""
    for k, v in kw.items():
        if not (v is _NoValue or v is None or v is False):
            return _Fallback(f"the engine does not take the argument {k}={v!r}")
    return _FALLBACK


def _implements(*funcs: Callable[..., Any]):
    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        for fn in funcs:
            _IMPL[fn] = f
        return f

    return deco


def _x(a: Any) -> Any:
    return a if isinstance(a, _C.ndarray) else _C.asarray(a)


def _xr(a: Any) -> Any:
    """``a`` for one reduction whose result is returned: NumPy memory is read
    in place, not copied (the reduction computes before returning, as
    NumPy's does). Never return the array this gives."""
    return a if isinstance(a, _C.ndarray) else _C._borrow_volatile(a)


def array_function(func: Callable[..., Any], types: tuple, args: tuple, kwargs: dict) -> Any:
    if not all(issubclass(t, (np.ndarray, _C.ndarray)) for t in types):
        return NotImplemented
    return dispatch(func, args, kwargs)


def dispatch(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` in the engine when ``_IMPL`` has it and
    takes these arguments, else NumPy's on host arrays (a fallback)."""
    method = ONE_ARGUMENT_METHODS.get(func)
    if method is not None and not kwargs and len(args) == 1 and type(args[0]) is _C.ndarray:
        return getattr(args[0], method)()
    impl = _IMPL.get(func)
    if impl is None:
        return fallback(func, args, kwargs, why=None)
    try:
        r = impl(*args, **kwargs)
    except TypeError as e:
        r = signature_fallback(e)
    if isinstance(r, _Fallback):
        return fallback(func, args, kwargs, why=r.why)
    return r


def signature_fallback(e: TypeError) -> "_Fallback":
    """A fallback when ``e`` says an engine binding does not take a call's
    signature (a keyword of a newer NumPy...), so that NumPy runs it;
    re-raises any other ``TypeError``."""
    if isinstance(e, _C.CrossoverError) or "argument" not in str(e):
        raise e
    return _Fallback(f"the engine's version does not take this call ({e})")


def _plain(*values: Any) -> bool:
    # A loop, not all(<generator>): this runs on every reduction call, and
    # a generator costs more than the reduction of 1,000 elements.
    for v in values:
        if v is not _NoValue and v is not None:
            return False
    return True


def _reduction(method: str):
    def impl(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
             where=_NoValue):
        if out is not None or not _plain(initial, where):
            return _unsupported(out=out, initial=initial, where=where)
        if axis is None and dtype is None and not keepdims:
            return getattr(_xr(a), method)()  # keywords cost a third of a small call
        return getattr(_xr(a), method)(axis=axis, dtype=dtype, keepdims=bool(keepdims))

    return impl


_IMPL[np.sum] = _reduction("sum")
_IMPL[np.mean] = _reduction("mean")
_IMPL[np.prod] = _reduction("prod")


def _scan(prod: bool):
    def impl(a, axis=None, dtype=None, out=None):
        x = _xr(a)
        if out is not None or x.dtype.kind == "c":
            return _unsupported(out=out, complex=x.dtype.kind == "c")
        if dtype is not None:
            x = x.astype(dtype)
        return _C.scan(x, axis=None if axis is None else int(axis), prod=prod)

    return impl


_IMPL[np.cumsum] = _scan(False)
_IMPL[np.cumprod] = _scan(True)


def _cumulative(prod: bool):
    scan = _scan(prod)

    def impl(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        a = _x(x)
        if include_initial:
            return _unsupported(include_initial=include_initial)
        if axis is None and a.ndim > 1:
            return _FALLBACK  # NumPy's error for multi-dimensional input
        return scan(a, axis=axis, dtype=dtype, out=out)

    return impl


if hasattr(np, "cumulative_sum"):  # NumPy 2.1+
    _IMPL[np.cumulative_sum] = _cumulative(False)
    _IMPL[np.cumulative_prod] = _cumulative(True)


def _moment(method: str):
    def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
             mean=_NoValue, correction=_NoValue):
        if correction is not _NoValue and ddof == 0:
            ddof, correction = correction, _NoValue  # the Array API's name for ddof
        if out is not None or not _plain(where, mean, correction):
            return _unsupported(out=out, where=where, mean=mean, correction=correction)
        x = _xr(a)
        if isinstance(ddof, float) and not ddof.is_integer():
            return _fractional_moment(x, method, axis, dtype, ddof, bool(keepdims))
        return getattr(x, method)(axis=axis, dtype=dtype, ddof=int(ddof), keepdims=bool(keepdims))

    return impl


def _fractional_moment(x, method, axis, dtype, ddof, keepdims):
    """var/std with a fractional ``ddof`` (the Array API's ``correction``
    is a float): the engine's ``ddof=0`` variance times ``n / (n - ddof)``,
    and like NumPy, an infinite factor where ``n - ddof <= 0``."""
    v = x.var(axis=axis, dtype=dtype, ddof=0, keepdims=keepdims)
    axes = range(x.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    n = 1
    for ax in axes:
        n *= x.shape[ax]
    v = v * (n / (n - ddof) if n > ddof else float("inf"))
    return v ** 0.5 if method == "std" else v


_IMPL[np.std] = _moment("std")
_IMPL[np.var] = _moment("var")


def _extremum(method: str):
    def impl(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
        if out is not None or not _plain(initial, where):
            return _unsupported(out=out, initial=initial, where=where)
        if axis is None and not keepdims:
            return getattr(_xr(a), method)()
        return getattr(_xr(a), method)(axis=axis, keepdims=bool(keepdims))

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
            return _unsupported(out=out, keepdims=keepdims)
        if axis is None:
            return getattr(_xr(a), method)()
        return getattr(_xr(a), method)(axis=axis)

    return impl


_IMPL[np.argmax] = _argext("argmax")
_IMPL[np.argmin] = _argext("argmin")

# `np.<f>(x)` on a crossover `x` with no other argument is `x.<method>()`
# (what the entries above do then): the namespace's wrappers call it
# straight (`_namespace.routed`), a third of the cost of a small call.
ONE_ARGUMENT_METHODS = {
    f: m for f, m in (
        (np.sum, "sum"), (np.prod, "prod"), (np.mean, "mean"),
        (np.min, "min"), (getattr(np, "amin", None), "min"),
        (np.max, "max"), (getattr(np, "amax", None), "max"),
        (np.argmin, "argmin"), (np.argmax, "argmax"),
    ) if f is not None
}


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
        if order not in ("K", "C"):
            return _FALLBACK
        if kind == "full":
            fill_value, *rest = args
        else:
            fill_value, rest = (0 if kind == "zeros" else 1), list(args)
        if rest:
            dtype = rest[0]  # positional dtype
        if dtype is None:
            dtype = _dtype_of(a)
        if shape is None:
            shape = tuple(np.shape(a))
        elif isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        return _C.full(tuple(shape), fill_value, dtype=dtype)

    return impl


_IMPL[np.zeros_like] = _like("zeros")
_IMPL[np.ones_like] = _like("ones")
_IMPL[np.full_like] = _like("full")

def _creation(np_func: Callable[..., Any]) -> Callable[..., Any]:
    """``np.array(data, like=x)``, ``np.empty(shape, like=x)``...: creation
    dispatched to crossover by ``like=`` (Dask builds its small constants this
    way). NumPy builds the values; the result is a crossover array."""

    def impl(*args, **kwargs):
        kwargs.pop("like", None)
        r = np_func(*_to_host(args), **_to_host(kwargs))
        return _from_host(r) if isinstance(r, np.ndarray) else r

    return impl


for _f in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.empty, np.zeros,
           np.ones, np.full, np.arange):
    _IMPL[_f] = _creation(_f)


_MATMUL_DTYPES = {np.dtype(np.float32), np.dtype(np.float64)}


def _dtype_of(a: Any) -> Any:
    return a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype


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


# ---- tensordot and joins (Dask relies on them) ---------------------------------


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """``np.tensordot`` as transposes and reshapes (views) around one engine
    matmul (float32/float64; other dtypes run in NumPy)."""
    if _dtype_of(a) not in _MATMUL_DTYPES or _dtype_of(b) not in _MATMUL_DTYPES:
        return fallback(np.tensordot, (a, b), {"axes": axes})
    a, b = _x(a), _x(b)
    if isinstance(axes, (int, np.integer)):
        axes_a, axes_b = list(range(a.ndim - int(axes), a.ndim)), list(range(int(axes)))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise _C.ShapeError(f"tensordot: {len(axes_a)} axes of a against {len(axes_b)} of b")
    axes_a = [int(x) % a.ndim for x in axes_a] if a.ndim else []
    axes_b = [int(x) % b.ndim for x in axes_b] if b.ndim else []
    for i, j in zip(axes_a, axes_b):
        if a.shape[i] != b.shape[j]:
            raise _C.ShapeError(
                f"tensordot: shape mismatch for sum: a {tuple(a.shape)} axis {i} against "
                f"b {tuple(b.shape)} axis {j}"
            )
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [j for j in range(b.ndim) if j not in axes_b]
    k = int(np.prod([a.shape[i] for i in axes_a], dtype=np.int64))
    m = int(np.prod([a.shape[i] for i in free_a], dtype=np.int64))
    n = int(np.prod([b.shape[j] for j in free_b], dtype=np.int64))
    at = _C.transpose(a, free_a + axes_a).reshape((m, k))
    bt = _C.transpose(b, axes_b + free_b).reshape((k, n))
    out_shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b)
    return _C.matmul(at, bt).reshape(out_shape)


_IMPL[np.tensordot] = tensordot


def _host_values(arrays: Any) -> list:
    """NumPy views of the (computed) values of a sequence of arrays."""
    return [a.numpy() if isinstance(a, _C.ndarray) else np.asarray(a) for a in arrays]


def _join(func: Callable[..., Any], arrays: Any, kwargs: dict) -> Any:
    if kwargs.get("out") is not None:
        return _FALLBACK
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    r = func(_host_values(arrays), **kwargs)
    if r.dtype not in _SUPPORTED:
        return r
    return _C._adopt(r) if r.flags.owndata and r.flags.writeable else _C.asarray(r)


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    """``np.concatenate`` of crossover (or NumPy) arrays: the inputs are
    computed and joined into a new crossover array with one copy (the engine
    has no lazy join yet; the copy is the join itself, as in NumPy)."""
    r = _join(np.concatenate, arrays, {"axis": axis, "out": out, "dtype": dtype, "casting": casting})
    return fallback(np.concatenate, (arrays,), {"axis": axis, "out": out}) if isinstance(r, _Fallback) else r


def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    """``np.stack`` of crossover (or NumPy) arrays (computed, one copy; see
    ``concatenate``)."""
    r = _join(np.stack, arrays, {"axis": axis, "out": out, "dtype": dtype, "casting": casting})
    return fallback(np.stack, (arrays,), {"axis": axis, "out": out}) if isinstance(r, _Fallback) else r


_IMPL[np.concatenate] = concatenate
_IMPL[np.stack] = stack
