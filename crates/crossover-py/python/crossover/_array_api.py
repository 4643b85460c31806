"""``crossover`` as an Array API namespace (standard 2024.12), next to its
NumPy drop-in role.

NumPy 2 is itself a conforming namespace, and crossover mirrors NumPy's
names (``_namespace``), so most of the standard is already there with
NumPy's semantics. This module adds what the standard asks beyond NumPy's
namespace:

* ``__array_api_version__`` and ``__array_namespace_info__()`` (devices,
  dtypes, capabilities);
* ``device=`` on the creation functions, ``astype(x, dtype, /, *, copy,
  device)``, ``result_type``/``can_cast`` that take crossover arrays
  without computing them (NumPy's would), ``from_dlpack``,
  ``fft.fftfreq``/``rfftfreq`` with ``dtype=``;
* signatures: every routed function carries its NumPy function's signature
  (``_namespace``), which the standard's conformance rule accepts: the
  standard's positional parameters in order, its keyword-only ones present
  (NumPy's extra parameters may follow). Where the standard marks a
  parameter positional-only and NumPy does not, crossover keeps NumPy's
  kind, so that NumPy-style keyword calls keep working;
* the dtype rule: the engine holds every dtype of the standard (bool,
  int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32,
  float64, complex64, complex128). A function asked for another dtype
  (float16...), or whose NumPy fallback would produce one, raises
  ``DTypeError`` (a ``TypeError``) naming it: never a silent cast and never
  a NumPy array in place of a crossover one.

The array attributes (``__array_namespace__``, ``mT``, ``to_device``,
``__dlpack__``...) are added to the class by ``_methods``.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

import numpy as np

from . import _crossover as _C
from . import _numpy

__array_api_version__ = "2024.12"
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

#: The dtypes a crossover array can hold.
DTYPES = {n: np.dtype(n) for n in
          ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float32", "float64", "complex64", "complex128")}
#: The standard's dtypes that the engine does not hold (none since int8,
#: int16 and the unsigned integers were added).
MISSING_DTYPES: tuple[str, ...] = ()

#: The standard's names (2024.12), by the group its specification lists
#: them under (from ``array_api_strict`` with ``api_version="2024.12"``).
GROUPS: dict[str, tuple[str, ...]] = {k: tuple(v.split()) for k, v in {
    "constants": "e inf nan newaxis pi",
    "creation": "arange asarray empty empty_like eye from_dlpack full full_like linspace "
                "meshgrid ones ones_like tril triu zeros zeros_like",
    "data types": "astype broadcast_arrays broadcast_to can_cast finfo iinfo isdtype "
                  "result_type bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 "
                  "float32 float64 complex64 complex128",
    "elementwise": "abs acos acosh add asin asinh atan atan2 atanh bitwise_and "
                   "bitwise_invert bitwise_left_shift bitwise_or bitwise_right_shift "
                   "bitwise_xor ceil clip conj copysign cos cosh divide equal exp expm1 "
                   "floor floor_divide greater greater_equal hypot imag isfinite isinf "
                   "isnan less less_equal log log10 log1p log2 logaddexp logical_and "
                   "logical_not logical_or logical_xor maximum minimum multiply negative "
                   "nextafter not_equal positive pow real reciprocal remainder round sign "
                   "signbit sin sinh sqrt square subtract tan tanh trunc",
    "indexing": "take take_along_axis",
    "linear algebra": "matmul matrix_transpose tensordot vecdot",
    "manipulation": "concat expand_dims flip moveaxis permute_dims repeat reshape roll "
                    "squeeze stack tile unstack",
    "searching": "argmax argmin count_nonzero nonzero searchsorted where",
    "set": "unique_all unique_counts unique_inverse unique_values",
    "sorting": "argsort sort",
    "statistical": "cumulative_prod cumulative_sum max mean min prod std sum var",
    "utility": "all any diff",
    "inspection": "__array_namespace_info__",
    "linalg": "cholesky cross det diagonal eigh eigvalsh inv matmul matrix_norm "
              "matrix_power matrix_rank matrix_transpose outer pinv qr slogdet solve svd "
              "svdvals tensordot trace vecdot vector_norm",
    "fft": "fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftfreq rfftfreq "
           "fftshift ifftshift",
}.items()}
#: The groups that live in a submodule (``crossover.linalg``, ``crossover.fft``).
SUBMODULES = ("linalg", "fft")


# ---- devices -----------------------------------------------------------------


def devices() -> list[str]:
    """``"cpu"``, and ``"gpu"`` when the GPU core has a usable GPU: the
    names ``set_device`` and ``crossover.device(...)`` take."""
    return list(_C.info()["devices"])


def _check_device(device: Any) -> None:
    if device is not None and device not in devices():
        raise ValueError(f"device {device!r} is not one of this machine's devices {devices()}")


# ---- dtypes ------------------------------------------------------------------


def _dtype_error(d: Any, what: str) -> Exception:
    return _C.DTypeError(
        f"{what}: crossover arrays cannot hold {np.dtype(d).name} yet (the engine holds "
        f"{', '.join(DTYPES)}); convert on the host with NumPy if you need it")


def _check_dtype(dtype: Any, what: str) -> None:
    if dtype is not None and np.dtype(dtype).name not in DTYPES:
        raise _dtype_error(dtype, what)


def _strict(value: Any, what: str) -> Any:
    """A fallback's NumPy array of a dtype crossover cannot hold becomes the
    error the standard's namespace owes, not a NumPy array."""
    if type(value) is _C.ndarray:
        return value  # the common case, first: an engine result
    if isinstance(value, (np.ndarray, np.generic)):
        # NumPy gives 0-d results as scalars: the standard wants arrays.
        if value.dtype.name not in DTYPES:
            raise _dtype_error(value.dtype, what)
        return _C.asarray(np.asarray(value))
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_strict(v, what) for v in value))
    if type(value) in (tuple, list):
        return type(value)(_strict(v, what) for v in value)
    return value


def _dtype_of(x: Any) -> Any:
    return x.dtype if isinstance(x, _C.ndarray) else x


def result_type(*arrays_and_dtypes: Any) -> Any:
    """The standard's promotion (NEP 50 for Python scalars: ``int32`` with
    ``1`` stays ``int32``), from dtypes, arrays and scalars, without
    computing any array."""
    return np.result_type(*(_dtype_of(a) for a in arrays_and_dtypes))


def can_cast(from_: Any, to: Any, /, casting: str = "safe") -> bool:
    """Whether ``from_`` (a dtype or an array) casts to ``to`` under the
    standard's rules (NumPy's "safe" casting)."""
    return bool(np.can_cast(_dtype_of(from_), to, casting=casting))


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (the engine's cast); ``copy=False``
    returns ``x`` itself when the dtype already matches."""
    _check_device(device)
    x = _numpy._x(x)
    if isinstance(dtype, str) and dtype not in DTYPES and dtype not in MISSING_DTYPES:
        raise TypeError(f"astype: {dtype!r} is not a dtype")
    _check_dtype(dtype, "astype")
    if not copy and x.dtype == np.dtype(dtype):
        return x
    return x.astype(dtype)


# ---- creation with device= ---------------------------------------------------


def _host(value: Any) -> Any:
    return _strict(_numpy._from_host(value), "creation")


# Array types `asarray` takes as they are (host memory, no CUDA interface).
_PLAIN_ARRAYS = (_C.ndarray, np.ndarray)


def asarray(obj: Any, /, dtype: Any = None, copy: bool | None = None, *,
            device: Any = None) -> Any:
    """A crossover array from an array, a nested sequence, a scalar or a
    buffer. NumPy data is copied in; with ``copy=False`` its memory is
    shared instead (the array sees later writes to it, and each operation
    on it computes at once), or ValueError where that needs a copy (another
    dtype, misaligned or byte-swapped memory). CUDA arrays of other libraries (CuPy, PyTorch: anything
    with ``__cuda_array_interface__``) are wrapped without a copy and stay
    on the GPU; ``device=`` moves the result there."""
    if dtype is None and device is None and type(obj) in _PLAIN_ARRAYS:
        return _C.asarray(obj, None, copy)  # the common calls, without the checks below
    from . import _exchange

    _check_device(device)
    _check_dtype(dtype, "asarray")
    if _exchange.has_cuda_interface(obj):
        return _exchange.to_device(_exchange.from_cuda(obj, dtype), device)
    if device is not None:
        return _exchange.to_device(asarray(obj, dtype, copy), device)
    if isinstance(obj, complex) or (
            type(obj) in (list, tuple) and any(isinstance(v, complex) for v in obj)):
        # The engine's scalars are real: NumPy builds complex data.
        return _host(np.asarray(obj, dtype=dtype))
    if isinstance(obj, (list, tuple)) and _has_arrays(obj):
        obj = _numpy._to_host(obj)
    return _C.asarray(obj, dtype, copy)


def _has_arrays(seq: Any) -> bool:
    return any(isinstance(v, _C.ndarray) or (isinstance(v, (list, tuple)) and _has_arrays(v))
               for v in seq)


def arange(start: Any, /, stop: Any = None, step: Any = 1, dtype: Any = None, *,
           device: Any = None) -> Any:
    """Evenly spaced values in ``[start, stop)``."""
    _check_device(device)
    _check_dtype(dtype, "arange")
    return _C.arange(start, stop, step, dtype)


def _shaped(name: str, fill: Any):
    def f(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
        _check_device(device)
        _check_dtype(dtype, name)
        if name == "empty":
            return _host(np.empty(shape, dtype=dtype))
        return _C.full(shape, fill, dtype=np.float64 if dtype is None else dtype)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"An array of {'uninitialised values' if fill is None else fill} of ``shape``."
    return f


zeros = _shaped("zeros", 0)
ones = _shaped("ones", 1)
empty = _shaped("empty", None)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of ``fill_value`` (complex values are built on the host)."""
    _check_device(device)
    _check_dtype(dtype, "full")
    if isinstance(fill_value, complex) or (dtype is not None and np.dtype(dtype).kind == "c"):
        return _host(np.full(shape, fill_value, dtype=dtype))
    if dtype is None and isinstance(fill_value, (bool, int, float)):
        dtype = {bool: np.bool_, int: np.int64, float: np.float64}[type(fill_value)]
    return _C.full(shape, fill_value, dtype=dtype)


def _like(name: str):
    def f(x: Any, /, dtype: Any = None, *, device: Any = None) -> Any:
        _check_device(device)
        d = _dtype_of(x) if dtype is None else dtype
        shape = tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
        return {"zeros_like": zeros, "ones_like": ones, "empty_like": empty}[name](shape, d)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``{name[:-5]}`` with the shape (and dtype) of ``x``."
    return f


zeros_like = _like("zeros_like")
ones_like = _like("ones_like")
empty_like = _like("empty_like")


def full_like(x: Any, /, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """``full`` with the shape (and dtype) of ``x``."""
    return full(tuple(x.shape), fill_value, _dtype_of(x) if dtype is None else dtype,
                device=device)


def eye(n_rows: int, n_cols: int | None = None, /, k: int = 0, dtype: Any = None, *,
        device: Any = None) -> Any:
    """Ones on the ``k``-th diagonal (built on the host)."""
    _check_device(device)
    _check_dtype(dtype, "eye")
    return _host(np.eye(n_rows, n_cols, k=k, dtype=np.float64 if dtype is None else dtype))


def linspace(start: Any, stop: Any, /, num: int = 50, endpoint: bool = True,
             dtype: Any = None, *, device: Any = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    _check_device(device)
    _check_dtype(dtype, "linspace")
    if isinstance(start, complex) or isinstance(stop, complex):
        return _host(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))
    return _C.linspace(start, stop, num, endpoint, dtype)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """A crossover array over the memory of any DLPack producer on the host
    (NumPy, PyTorch on CPU, crossover): no copy unless ``copy=True``. The
    engine never writes the memory; a producer that writes it later
    changes the array (the standard leaves that to the producer)."""
    _check_device(device)
    if isinstance(x, _C.ndarray) and not copy:
        return x
    host = np.from_dlpack(x, copy=copy)
    _check_dtype(host.dtype, "from_dlpack")
    return _C._adopt(host) if not copy else _C.asarray(host)


def meshgrid(*arrays: Any, indexing: str = "xy", sparse: bool = False,
             copy: bool = True) -> list[Any]:
    """Coordinate matrices from coordinate vectors, as a list (the standard's
    return type up to 2024.12; NumPy returns a tuple). Built on the host."""
    return list(_host(np.meshgrid(*_numpy._to_host(arrays), indexing=indexing,
                                  sparse=sparse, copy=copy)))


# ---- linalg and fft additions -------------------------------------------------


def _freq(name: str):
    np_func = getattr(np.fft, name)

    def f(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
        _check_device(device)
        _check_dtype(dtype, name)
        return _host(np_func(n, d).astype(np.float64 if dtype is None else dtype))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``numpy.fft.{name}`` in ``dtype`` (float64 by default), built on the host."
    f._crossover_route = "host"  # type: ignore[attr-defined]
    return f


# ---- sorting and clip with the standard's keywords ------------------------------


def _host_sort(a: Any, axis: int, kind: Any, order: Any, descending: bool, stable: Any,
               indices: bool) -> Any:
    f = np.argsort if indices else np.sort
    if not descending:
        return f(a, axis=axis, kind=kind, order=order, stable=stable)
    # Sorting the reversed array and reversing back keeps equal elements in
    # their original order (a stable descending sort).
    r = np.flip(f(np.flip(a, axis), axis=axis, kind=kind, order=order, stable=stable), axis)
    return a.shape[axis] - 1 - r if indices else r


def _sorter(indices: bool):
    name = "argsort" if indices else "sort"

    def f(a: Any, /, axis: int = -1, kind: Any = None, order: Any = None, *,
          descending: bool = False, stable: Any = None) -> Any:
        r = _numpy.fallback(_host_sort, (a, axis, kind, order, descending, stable, indices), {},
                            name=f"numpy.{name}")
        return _strict(r, name)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``numpy.{name}`` (run by NumPy on host data), with the standard's "
                 "``descending=`` (stable when ``stable`` is true or None).")
    f._crossover_route = "numpy"  # type: ignore[attr-defined]
    f.__wrapped_numpy__ = getattr(np, name)  # type: ignore[attr-defined]
    return f


sort = _sorter(False)
argsort = _sorter(True)


def clip(x: Any, /, min: Any = None, max: Any = None, out: Any = None,  # noqa: A002
         **kwargs: Any) -> Any:
    """``minimum(maximum(x, min), max)`` in the engine (``None``: no bound);
    NumPy's ``a_min=``/``a_max=`` keywords are taken too."""
    lo, hi = kwargs.pop("a_min", min), kwargs.pop("a_max", max)
    return _numpy.dispatch(np.clip, (x,), dict(kwargs, min=lo, max=hi, out=out))


clip._crossover_route = "composed"  # type: ignore[attr-defined]
clip.__wrapped_numpy__ = np.clip  # type: ignore[attr-defined]


# ---- the namespace info object -------------------------------------------------


class Info:
    """What ``crossover.__array_namespace_info__()`` returns."""

    __module__ = "crossover"

    def capabilities(self) -> dict[str, Any]:
        # Boolean indexing and unique/nonzero run in NumPy on host data (a
        # fallback), so data-dependent shapes are supported.
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> str:
        return "cpu"

    def devices(self) -> list[str]:
        return devices()

    def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
        _check_device(device)
        return {"real floating": DTYPES["float64"], "complex floating": DTYPES["complex128"],
                "integral": DTYPES["int64"], "indexing": DTYPES["int64"]}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, Any]:
        _check_device(device)
        if kind is None:
            return dict(DTYPES)
        if isinstance(kind, tuple):
            out: dict[str, Any] = {}
            for k in kind:
                out.update(self.dtypes(device=device, kind=k))
            return out
        return {n: d for n, d in DTYPES.items() if np.isdtype(d, kind)}


def __array_namespace_info__() -> Info:
    """The namespace's inspection object (devices, dtypes, capabilities)."""
    return Info()


# ---- installation --------------------------------------------------------------

_TOP = ("result_type", "can_cast", "astype", "asarray", "arange", "zeros",
        "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "eye",
        "linspace", "from_dlpack", "meshgrid", "__array_namespace_info__", "sort", "argsort",
        "clip")
_ROUTES = {"empty": "host", "empty_like": "host", "eye": "host", "from_dlpack": "host",
           "meshgrid": "host",
           "asarray": "host", "arange": "host", "zeros": "host", "ones": "host", "full": "host",
           "zeros_like": "engine", "ones_like": "engine", "full_like": "engine",
           "linspace": "engine", "astype": "engine"}


def install(module: types.ModuleType) -> None:
    """Makes ``module`` (crossover) the standard's namespace."""
    from . import _namespace

    module.__array_api_version__ = __array_api_version__
    this = sys.modules[__name__]
    for name in _TOP:
        f = getattr(this, name)
        if name in _ROUTES:
            f._crossover_route = _ROUTES[name]
            f.__wrapped_numpy__ = getattr(np, name, None)
        setattr(module, name, f)
    for name in ("fftfreq", "rfftfreq"):
        setattr(module.fft, name, _freq(name))
    # Functions that run in NumPy may make dtypes crossover cannot hold:
    # in the standard's names that is an error, not a NumPy array.
    for group, names in GROUPS.items():
        target = getattr(module, group) if group in SUBMODULES else module
        for name in names:
            f = target.__dict__.get(name)
            if target is module and name in _TOP:
                continue
            route = getattr(f, "_crossover_route", None)
            if route == "numpy":
                setattr(target, name, _namespace.through_numpy(
                    f.__wrapped_numpy__, f"{target.__name__}.{name}", _strict))
            elif route is not None and hasattr(f, "__wrapped_numpy__"):
                setattr(target, name, _namespace.routed(
                    f.__wrapped_numpy__, f"{target.__name__}.{name}", _strict))

