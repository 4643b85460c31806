"""NumPy functions built from the engine's ops (exact compositions) and
creation functions whose values are built on the host.

Each entry is registered in ``_numpy._IMPL`` (so ``np.clip(x)`` on a
crossover array runs here) and, for ufuncs, in ``_numpy._UFUNC_IMPL`` (so
``np.isnan(x)`` does). ``crossover.clip`` and friends are made from the same
entries by ``_namespace``. An entry returns ``_FALLBACK`` (or ``_unsupported``)
for a call it does not take exactly; NumPy then runs it, with the warning.

A composition belongs here only when it gives NumPy's values: the same
formula NumPy uses (``outer``, ``deg2rad``), or one whose every step is exact
(``isnan`` is ``x != x``; ``round`` adds and removes 2**52, which rounds
half to even as ``rint`` does). Functions that would differ in the last bit
(``log10`` as ``log(x)/log(10)``) stay NumPy's until the engine has them.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import _crossover as _C
from ._numpy import (
    _FALLBACK,
    _IMPL,
    _UFUNC_IMPL,
    _NoValue,
    _from_host,
    _implements,
    _plain,
    _to_host,
    _unsupported,
    _x,
)

_FLOATS = {np.dtype(np.float32), np.dtype(np.float64)}

#: NumPy functions whose crossover version builds its values on the host
#: (creation from shapes and Python data, or a join of computed arrays):
#: no NumPy work on crossover data that the engine could do, so no warning.
HOST: dict[Callable[..., Any], str] = {}

#: NumPy functions made of engine ops, with the composition (for the docs).
COMPOSED: dict[Callable[..., Any], str] = {}


def _composed(func: Callable[..., Any], how: str, ufunc: bool = False):
    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        _IMPL[func] = f
        COMPOSED[func] = how
        if ufunc:
            _UFUNC_IMPL[func] = f
        return f

    return deco


def _is_float(a: Any) -> bool:
    return a.dtype in _FLOATS


def _int_or_bool(a: Any) -> bool:
    return a.dtype.kind in "biu"


def _ufunc(x: Any, name: str, *rest: Any) -> Any:
    return _C.ufunc(name, x, *rest)


# ---- elementwise -------------------------------------------------------------


@_composed(np.isnan, "x != x", ufunc=True)
def isnan(x: Any) -> Any:
    x = _x(x)
    return x != x


@_composed(np.isinf, "abs(x) == inf", ufunc=True)
def isinf(x: Any) -> Any:
    x = _x(x)
    if _int_or_bool(x):
        return _C.full(tuple(x.shape), False, dtype=np.bool_)
    return _ufunc(x, "absolute") == math.inf


@_composed(np.isfinite, "x - x == 0 (NaN for NaN and infinities)", ufunc=True)
def isfinite(x: Any) -> Any:
    x = _x(x)
    if _int_or_bool(x):
        return _C.full(tuple(x.shape), True, dtype=np.bool_)
    return (x - x) == 0


@_implements(np.sign)
def sign(x: Any) -> Any:
    """The engine's ``sign`` (``np.sign(x)`` on a crossover array reaches it
    natively); bool (no sign in NumPy) and complex (``x / |x|``) go to NumPy."""
    x = _x(x)
    if x.dtype.kind not in "iuf":
        return _FALLBACK
    return _ufunc(x, "sign")


@_composed(np.clip, "minimum(maximum(x, lo), hi)")
def clip(a: Any, a_min: Any = _NoValue, a_max: Any = _NoValue, out: Any = None, *,
         min: Any = _NoValue, max: Any = _NoValue, **kwargs: Any) -> Any:
    if out is not None or kwargs:
        return _unsupported(out=out, **kwargs)
    lo = min if a_min is _NoValue else a_min
    hi = max if a_max is _NoValue else a_max
    r = _x(a)
    if lo is not _NoValue and lo is not None:
        r = _ufunc(r, "maximum", lo)
    if hi is not _NoValue and hi is not None:
        r = _ufunc(r, "minimum", hi)
    return r


def _rint(x: Any) -> Any:
    """Round half to even, exactly: below 2**52 (2**23 for float32), adding
    and removing that power rounds in the FPU's own mode (half to even);
    larger values are already integers. Zero keeps the input's sign."""
    big = 2.0 ** (52 if x.dtype == np.float64 else 23)
    r = _C.where(x < 0, (x - big) + big, (x + big) - big)
    r = _C.where(_ufunc(x, "absolute") < big, r, x)
    return _C.where(r == 0, x * 0, r)


@_composed(np.round, "add and remove 2**52 (rint), with NumPy's scaling by 10**decimals")
def round(a: Any, decimals: int = 0, out: Any = None) -> Any:  # noqa: A001 - NumPy's name
    a = _x(a)
    if out is not None:
        return _unsupported(out=out)
    if _int_or_bool(a) and decimals >= 0:
        return a.copy()
    if not _is_float(a):
        return _FALLBACK
    if decimals == 0:
        return _rint(a)
    # NumPy's own steps: scale, rint, unscale.
    if decimals > 0:
        f = 10.0 ** decimals
        return _rint(a * f) / f
    f = 10.0 ** -decimals
    return _rint(a / f) * f


_IMPL[np.around] = round
COMPOSED[np.around] = COMPOSED[np.round]


@_composed(np.rint, "add and remove 2**52 (round half to even)", ufunc=True)
def rint(x: Any) -> Any:
    x = _x(x)
    return _rint(x) if _is_float(x) else _FALLBACK


@_composed(np.trunc, "where(x < 0, ceil(x), floor(x))", ufunc=True)
def trunc(x: Any) -> Any:
    x = _x(x)
    if not _is_float(x):
        return _FALLBACK
    return _C.where(x < 0, _ufunc(x, "ceil"), _ufunc(x, "floor"))


_IMPL[np.fix] = trunc
COMPOSED[np.fix] = COMPOSED[np.trunc]


@_composed(np.nan_to_num, "where(isnan(x), nan, where(x == inf, posinf, ...))")
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    x = _x(x)
    if not _is_float(x):
        return x.copy() if _int_or_bool(x) else _FALLBACK
    info = np.finfo(x.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    r = _C.where(x == math.inf, hi, _C.where(x == -math.inf, lo, x))
    return _C.where(x != x, nan, r)


@_composed(np.fabs, "absolute(x) (floats)", ufunc=True)
def fabs(x: Any) -> Any:
    x = _x(x)
    return _ufunc(x, "absolute") if _is_float(x) else _FALLBACK


@_composed(np.reciprocal, "1 / x (floats)", ufunc=True)
def reciprocal(x: Any) -> Any:
    x = _x(x)
    return 1.0 / x if _is_float(x) else _FALLBACK


@_composed(np.deg2rad, "x * (pi / 180), NumPy's formula", ufunc=True)
def deg2rad(x: Any) -> Any:
    x = _x(x)
    if not _is_float(x):
        return _FALLBACK
    t = x.dtype.type
    return x * float(t(np.pi) / t(180.0))


@_composed(np.rad2deg, "x * (180 / pi), NumPy's formula", ufunc=True)
def rad2deg(x: Any) -> Any:
    x = _x(x)
    if not _is_float(x):
        return _FALLBACK
    t = x.dtype.type
    return x * float(t(180.0) / t(np.pi))


_IMPL[np.radians] = _UFUNC_IMPL[np.radians] = deg2rad
_IMPL[np.degrees] = _UFUNC_IMPL[np.degrees] = rad2deg
COMPOSED[np.radians] = COMPOSED[np.deg2rad]
COMPOSED[np.degrees] = COMPOSED[np.rad2deg]


def _nan_pick(name: str):
    def impl(x1: Any, x2: Any) -> Any:
        a, b = _x(x1), _x(x2)
        if not (_is_float(a) and _is_float(b)):
            return _FALLBACK
        m = _ufunc(a, name, b)
        return _C.where(b != b, a, _C.where(a != a, b, m))

    return impl


_composed(np.fmax, "maximum, ignoring a NaN operand", ufunc=True)(_nan_pick("maximum"))
_composed(np.fmin, "minimum, ignoring a NaN operand", ufunc=True)(_nan_pick("minimum"))


@_composed(np.logical_xor, "(x != 0) != (y != 0)", ufunc=True)
def logical_xor(x1: Any, x2: Any) -> Any:
    return (_x(x1) != 0) != (_x(x2) != 0)


@_composed(np.real, "the engine's real part (identity for real dtypes)")
def real(val: Any) -> Any:
    return _C.ufunc("real", _x(val))


@_composed(np.imag, "the engine's imaginary part (zeros for real dtypes)")
def imag(val: Any) -> Any:
    x = _x(val)
    if x.dtype.kind == "b":
        return _FALLBACK
    return _C.ufunc("imag", x)


@_composed(np.conjugate, "the engine's conjugate (identity for real dtypes)", ufunc=True)
def conjugate(x: Any) -> Any:
    return _C.ufunc("conjugate", _x(x))


_IMPL[np.conj] = conjugate
COMPOSED[np.conj] = COMPOSED[np.conjugate]


# ---- reductions --------------------------------------------------------------


def _axis_kw(axis: Any, keepdims: Any) -> dict:
    return {"axis": axis, "keepdims": bool(keepdims)}


@_composed(np.any, "sum(x != 0) > 0")
def any(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False, *,  # noqa: A001
        where: Any = _NoValue) -> Any:
    if out is not None or not _plain(where):
        return _unsupported(out=out, where=where)
    return (_x(a) != 0).sum(**_axis_kw(axis, keepdims)) > 0


@_composed(np.all, "sum(x == 0) == 0")
def all(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False, *,  # noqa: A001
        where: Any = _NoValue) -> Any:
    if out is not None or not _plain(where):
        return _unsupported(out=out, where=where)
    return (_x(a) == 0).sum(**_axis_kw(axis, keepdims)) == 0


@_composed(np.count_nonzero, "sum(x != 0)")
def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return (_x(a) != 0).sum(**_axis_kw(axis, keepdims))


@_composed(np.ptp, "max - min")
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False) -> Any:
    if out is not None:
        return _unsupported(out=out)
    x = _x(a)
    kw = _axis_kw(axis, keepdims)
    return x.max(**kw) - x.min(**kw)


@_composed(np.average, "mean (no weights)")
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: Any = False) -> Any:
    if weights is not None or returned:
        return _unsupported(weights=weights, returned=returned)
    x = _x(a)
    if x.dtype.kind != "f":
        return _FALLBACK
    return x.mean(**_axis_kw(axis, keepdims))


@_composed(np.nansum, "sum(where(isnan(x), 0, x))")
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False,
           initial: Any = _NoValue, where: Any = _NoValue) -> Any:
    if out is not None or not _plain(initial, where):
        return _unsupported(out=out, initial=initial, where=where)
    x = _x(a)
    if x.dtype.kind == "f":
        x = _C.where(x != x, 0, x)
    return x.sum(axis=axis, dtype=dtype, keepdims=bool(keepdims))


@_composed(np.nanmean, "nansum(x) / count of non-NaN, NumPy's formula")
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: Any = False, *, where: Any = _NoValue) -> Any:
    if out is not None or dtype is not None or not _plain(where):
        return _unsupported(out=out, dtype=dtype, where=where)
    x = _x(a)
    if x.dtype.kind != "f":
        return _FALLBACK
    kw = _axis_kw(axis, keepdims)
    ok = x == x
    return _C.where(ok, x, 0).sum(**kw) / ok.sum(**kw)


@_composed(np.isclose, "abs(a - b) <= atol + rtol * abs(b), infinities equal")
def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    x, y = _x(a), _x(b)
    if x.dtype.kind == "c" or y.dtype.kind == "c":
        return _FALLBACK
    finite = ((x - x) == 0) & ((y - y) == 0)
    near = _ufunc(x - y, "absolute") <= atol + rtol * _ufunc(y, "absolute")
    close = _C.where(finite, near, x == y)
    if equal_nan:
        close = close | ((x != x) & (y != y))
    return close


@_composed(np.allclose, "all(isclose(a, b))")
def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Any:
    c = isclose(a, b, rtol, atol, equal_nan)
    if not isinstance(c, _C.ndarray):
        return c
    return bool((c == False).sum() == 0)  # noqa: E712 - elementwise


@_composed(np.array_equal, "shapes equal and all(a == b)")
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    x, y = _x(a1), _x(a2)
    if tuple(x.shape) != tuple(y.shape):
        return False
    eq = x == y
    if equal_nan:
        eq = eq | ((x != x) & (y != y))
    return bool((eq == False).sum() == 0)  # noqa: E712 - elementwise


# ---- products ----------------------------------------------------------------


@_composed(np.outer, "a.ravel()[:, None] * b.ravel()[None, :], NumPy's formula")
def outer(a: Any, b: Any, out: Any = None) -> Any:
    if out is not None:
        return _unsupported(out=out)
    x, y = _x(a).ravel(), _x(b).ravel()
    return x.reshape((x.size, 1)) * y.reshape((1, y.size))


@_composed(np.vdot, "matmul of the flattened operands (real dtypes)")
def vdot(a: Any, b: Any) -> Any:
    x, y = _x(a), _x(b)
    if x.dtype not in _FLOATS or y.dtype not in _FLOATS:
        return _FALLBACK
    return _C.matmul(x.ravel(), y.ravel())


@_composed(np.inner, "matmul for 1-D and 2-D operands (b transposed)")
def inner(a: Any, b: Any) -> Any:
    x, y = _x(a), _x(b)
    if x.ndim == 0 or y.ndim == 0 or x.ndim > 2 or y.ndim > 2:
        return _FALLBACK
    if x.dtype not in _FLOATS or y.dtype not in _FLOATS:
        return _FALLBACK
    return _C.matmul(x, y if y.ndim == 1 else y.T)


# ---- triangles: a host-built mask over the engine's where -------------------


def _tri_mask(n: int, m: int, k: int, lower: bool) -> Any:
    mask = np.tri(n, m, k, dtype=bool)
    return mask if lower else ~np.tri(n, m, k - 1, dtype=bool)


@_composed(np.tril, "where(host mask, x, 0)")
def tril(m: Any, k: int = 0) -> Any:
    x = _x(m)
    if x.ndim < 2:
        return _FALLBACK
    return _C.where(_tri_mask(x.shape[-2], x.shape[-1], k, True), x, 0)


@_composed(np.triu, "where(host mask, x, 0)")
def triu(m: Any, k: int = 0) -> Any:
    x = _x(m)
    if x.ndim < 2:
        return _FALLBACK
    return _C.where(_tri_mask(x.shape[-2], x.shape[-1], k, False), x, 0)


# ---- creation on the host ---------------------------------------------------


def _host(np_func: Callable[..., Any], note: str) -> None:
    """NumPy builds the values from shapes and Python data; the result is a
    crossover array (one copy in)."""

    def impl(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("like", None)
        return _from_host(np_func(*_to_host(args), **_to_host(kwargs)))

    impl.__name__ = np_func.__name__
    _IMPL[np_func] = impl
    HOST[np_func] = note


for _f in (np.eye, np.identity, np.tri, np.empty, np.empty_like, np.diag, np.diagflat,
           np.logspace, np.geomspace, np.indices, np.meshgrid, np.frombuffer, np.fromiter,
           np.fromstring, np.fromfile, np.fromfunction, np.loadtxt, np.genfromtxt, np.load,
           np.asarray_chkfinite, np.require, np.copy, np.fft.fftfreq, np.fft.rfftfreq,
           np.atleast_1d, np.atleast_2d, np.atleast_3d):
    if _f not in _IMPL:
        _host(_f, "built on the host, copied in once")
for _f in (np.hstack, np.vstack, np.dstack, np.column_stack, np.block):
    _host(_f, "a join of the computed inputs, one copy (as concatenate)")
for _f in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.empty, np.zeros, np.ones,
           np.full, np.arange, np.concatenate, np.stack):
    HOST[_f] = "built on the host or joined from computed inputs, one copy"


# ---- numpy.linalg and numpy.fft beyond the library ops -------------------------

from . import fft as _fft  # noqa: E402
from . import linalg as _linalg  # noqa: E402


def _linalg_composed(name: str, how: str, impl: Callable[..., Any] | None = None) -> None:
    func = getattr(np.linalg, name)
    _IMPL[func] = impl or getattr(_linalg, name)
    COMPOSED[func] = how


_linalg_composed("eigvalsh", "eigh(a)[0]")
_linalg_composed("matrix_transpose", "swapaxes(-1, -2)")
_linalg_composed("multi_dot", "matmul, left to right")
_linalg_composed("matrix_power", "repeated squaring with matmul (inv for n < 0)")
_linalg_composed("norm", "sqrt(sum(x*x)) for 2-norms and Frobenius; svdvals for ord=2 matrices")
_linalg_composed("cond", "svdvals: s[0] / s[-1] (p=None or 2)")
_linalg_composed("outer", "as numpy.outer", outer)
_linalg_composed("svdvals", "the engine's svdvals")
_IMPL[np.linalg.matmul] = _linalg.matmul
_IMPL[np.linalg.tensordot] = _IMPL[np.tensordot]
COMPOSED.pop(np.linalg.svdvals)


def _fftn(name: str):
    def impl(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
        x = _x(a)
        if out is not None or s is not None or x.ndim != 2 or axes not in (None, (-2, -1), (0, 1), [0, 1], [-2, -1]):
            return _FALLBACK
        return getattr(_fft, name)(x, None, (-2, -1), norm)

    return impl


_IMPL[np.fft.fftn] = _fftn("fft2")
_IMPL[np.fft.ifftn] = _fftn("ifft2")
COMPOSED[np.fft.fftn] = COMPOSED[np.fft.ifftn] = "fft2 / ifft2 of a 2-D array"


# ---- views, tests of dtype and value, vector products -------------------------


def _flip_impl(m: Any, axis: Any = None) -> Any:
    x = _x(m)
    axes = range(x.ndim) if axis is None else (
        [axis] if isinstance(axis, (int, np.integer)) else list(axis))
    key = [slice(None)] * x.ndim
    for ax in axes:
        key[int(ax) % x.ndim] = slice(None, None, -1)
    return x[tuple(key)]


_composed(np.flip, "a view with negative steps")(_flip_impl)
_composed(np.flipud, "a view with negative steps")(lambda m: _flip_impl(m, 0))
_composed(np.fliplr, "a view with negative steps")(
    lambda m: _flip_impl(m, 1) if _x(m).ndim >= 2 else _FALLBACK)


@_composed(np.rollaxis, "transpose (a view)")
def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    x = _x(a)
    n = x.ndim
    axis, start = int(axis) % n, int(start) + (n if start < 0 else 0)
    order = [i for i in range(n) if i != axis]
    order.insert(start - (start > axis), axis)
    return _C.transpose(x, order)


@_composed(np.matrix_transpose, "swapaxes(-1, -2) (a view)")
def matrix_transpose(x: Any, /) -> Any:
    return _x(x).swapaxes(-1, -2) if _x(x).ndim >= 2 else _FALLBACK


@_composed(np.broadcast_arrays, "broadcast_to of each (views)")
def broadcast_arrays(*args: Any, subok: bool = False) -> Any:
    xs = [_x(a) for a in args]
    shape = np.broadcast_shapes(*(tuple(x.shape) for x in xs))
    return tuple(_C.broadcast_to(x, shape) for x in xs)


@_composed(np.isposinf, "x == inf", ufunc=False)
def isposinf(x: Any, out: Any = None) -> Any:
    return _x(x) == math.inf if out is None and _x(x).dtype.kind != "c" else _FALLBACK


@_composed(np.isneginf, "x == -inf", ufunc=False)
def isneginf(x: Any, out: Any = None) -> Any:
    return _x(x) == -math.inf if out is None and _x(x).dtype.kind != "c" else _FALLBACK


_composed(np.iscomplexobj, "the dtype's kind")(lambda x: np.dtype(_x(x).dtype).kind == "c")
_composed(np.isrealobj, "the dtype's kind")(lambda x: np.dtype(_x(x).dtype).kind != "c")
_composed(np.iscomplex, "all False for real dtypes")(
    lambda x: _C.full(tuple(_x(x).shape), False, dtype=np.bool_)
    if _x(x).dtype.kind != "c" else _FALLBACK)
_composed(np.isreal, "all True for real dtypes")(
    lambda x: _C.full(tuple(_x(x).shape), True, dtype=np.bool_)
    if _x(x).dtype.kind != "c" else _FALLBACK)


def _vecdot(x1: Any, x2: Any, /, *, axis: int = -1, **kw: Any) -> Any:
    a, b = _x(x1), _x(x2)
    if kw or a.dtype.kind == "c" or b.dtype.kind == "c":
        return _FALLBACK
    return (a * b).sum(axis=axis)


_composed(np.vecdot, "sum(a * b, axis) (real dtypes)")(_vecdot)
_linalg_composed("vecdot", "sum(a * b, axis) (real dtypes)",
                 lambda x1, x2, /, *, axis=-1: _vecdot(x1, x2, axis=axis))


@_composed(np.matvec, "matmul(A, v[..., None])[..., 0]")
def matvec(x1: Any, x2: Any, /, **kw: Any) -> Any:
    a, v = _x(x1), _x(x2)
    if kw or a.dtype not in _FLOATS or v.dtype not in _FLOATS or a.ndim < 2:
        return _FALLBACK
    return _C.matmul(a, _C.expand_dims(v, -1))[..., 0]


@_composed(np.trace, "sum of where(diagonal mask, x, 0) over the last two axes")
def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    x = _x(a)
    if out is not None or x.ndim != 2 or (axis1, axis2) != (0, 1):
        return _unsupported(out=out) if out is not None else _FALLBACK
    mask = np.eye(x.shape[0], x.shape[1], k=offset, dtype=bool)
    return _C.where(mask, x, 0).sum(dtype=dtype)


def _vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    v = _x(x)
    if ord != 2 or v.dtype not in _FLOATS:
        return _FALLBACK
    return _C.ufunc("sqrt", (v * v).sum(axis=None if axis is None else axis, keepdims=keepdims))


_linalg_composed("vector_norm", "sqrt(sum(x*x)) (ord=2)", _vector_norm)
_linalg_composed(
    "matrix_norm", "sqrt(sum(x*x)) over the last two axes (ord='fro')",
    lambda x, /, *, keepdims=False, ord="fro": _vector_norm(x, axis=(-2, -1), keepdims=keepdims)
    if ord == "fro" else _FALLBACK)
_linalg_composed("trace", "as numpy.trace",
                 lambda x, /, *, offset=0, dtype=None: trace(x, offset, dtype=dtype))
