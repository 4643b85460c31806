"""crossover: NumPy-style array math fused into single kernels.

Operations on crossover arrays (``crossover.ndarray``) record work and return
at once; when a value is needed, elementwise chains and the reductions that
end them run as single fused passes over memory, on all CPU cores with SIMD.
NumPy functions applied to crossover arrays stay in crossover.

Entry points:

* ``evaluate("a*b + sin(a) + cos(b)")`` -- numexpr-style expression strings
  over NumPy (or crossover) arrays.
* ``@jit`` -- run a plain NumPy function as one fused, cached graph.
* ``asarray`` / ``array`` -- crossover arrays from NumPy data (copied in).
* ``matmul`` / ``tensordot`` (and ``@``, ``np.dot``) -- the engine's matrix
  product; ``concatenate`` / ``stack`` join computed arrays.
* ``explain`` -- the kernels that run, what was fused, bytes, flops, times.
* ``random.default_rng(seed)`` -- Philox random numbers, lazily generated.
* ``linalg``, ``fft``, ``sparse`` -- library ops (faer, rustfft, CSR), also
  reached through ``np.linalg``/``np.fft``/``@`` on crossover arrays.
* ``set_device`` / ``device`` -- where work runs: "auto" (the cost model),
  "cpu", "gpu" (forced; ``DeviceError`` when no GPU is usable, naming why),
  "gpu-prefer" (the GPU where it can run a kernel, else the fastest device).
"""

from __future__ import annotations

import operator as _operator
import os as _os
import sys as _sys
from typing import Any

import numpy as _np

# NVIDIA's libraries from pip wheels (nvidia-cuda-nvrtc, CuPy's and
# PyTorch's) live under site-packages/nvidia; the engine looks for them in
# the folders named here (read when a CUDA device is first opened).
_os.environ.setdefault(
    "CROSSOVER_PYTHON_PATH",
    _os.pathsep.join(p for p in _sys.path if p and _os.path.isdir(_os.path.join(p, "nvidia"))),
)

from . import _crossover as _C  # noqa: E402
from ._crossover import (
    ArgumentError,
    AxisError,
    CrossoverError,
    DeviceError,
    DTypeError,
    Explanation,
    ExpressionError,
    FallbackError,
    FallbackWarning,
    FileError,
    IntegerOverflowError,
    InternalError,
    NumericalError,
    OutOfMemoryError,
    ShapeError,
    __version__,
    arange,
    array,
    asarray,
    broadcast_to,
    device,
    evaluate,
    expand_dims,
    full,
    get_device,
    linspace,
    ndarray,
    ones,
    set_device,
    transpose,
    where,
    zeros,
)
from ._jit import explain, jit
from ._numpy import concatenate, get_fallback, set_fallback, stack, tensordot
from . import fft, linalg, random, sparse
from . import _einsum, _functions  # noqa: E402,F401 - register the engine compositions
from . import cuda  # noqa: E402
from .linalg import matmul

__all__ = [
    "log1p",
    "expm1",
    "log10",
    "log2",
    "exp2",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "arctan2",
    "hypot",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "atan2",
    "linalg",
    "matmul",
    "sparse",
    "ArgumentError",
    "AxisError",
    "CrossoverError",
    "DTypeError",
    "DeviceError",
    "Explanation",
    "ExpressionError",
    "FallbackError",
    "FallbackWarning",
    "FileError",
    "IntegerOverflowError",
    "InternalError",
    "NumericalError",
    "OutOfMemoryError",
    "ShapeError",
    "__version__",
    "abs",
    "absolute",
    "add",
    "arange",
    "array",
    "asarray",
    "broadcast_to",
    "ceil",
    "concatenate",
    "cos",
    "device",
    "divide",
    "equal",
    "evaluate",
    "exp",
    "expand_dims",
    "explain",
    "fft",
    "floor",
    "full",
    "full_like",
    "get_device",
    "get_fallback",
    "greater",
    "greater_equal",
    "info",
    "jit",
    "less",
    "less_equal",
    "linspace",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "maximum",
    "minimum",
    "multiply",
    "ndarray",
    "negative",
    "not_equal",
    "ones",
    "ones_like",
    "power",
    "random",
    "set_device",
    "set_fallback",
    "sin",
    "sqrt",
    "square",
    "stack",
    "subtract",
    "tan",
    "tanh",
    "tensordot",
    "transpose",
    "where",
    "zeros",
    "zeros_like",
]


def info() -> dict[str, Any]:
    """Version, SIMD level, engine threads and devices of this build."""
    d = _C.info()
    d["numpy"] = _np.__version__
    return d


def _complex_scalar(v: Any, other: Any) -> Any:
    """A Python complex as a 0-d array, of the precision NEP 50 gives it
    beside ``other`` (the engine's scalars are real)."""
    if not isinstance(v, complex):
        return v
    single = getattr(other, "dtype", None) in (_np.float32, _np.complex64)
    return asarray(_np.asarray(v, dtype=_np.complex64 if single else _np.complex128))


# Binary ufuncs whose operator on two crossover arrays is the same engine op.
_OPERATOR_OF = {
    "add": _operator.add, "subtract": _operator.sub, "multiply": _operator.mul,
    "divide": _operator.truediv, "true_divide": _operator.truediv,
    "less": _operator.lt, "less_equal": _operator.le, "greater": _operator.gt,
    "greater_equal": _operator.ge, "equal": _operator.eq, "not_equal": _operator.ne,
}


def _elementwise(name: str, nin: int):
    if nin == 1:
        # The extension's own function: no Python frame, the op resolved
        # once (0.15 us of a 1.4 us call on 1,000 points).
        return getattr(_C, name)
    operator = _OPERATOR_OF.get(name)
    array = _C.ndarray

    def f(x1: Any, x2: Any, /) -> ndarray:
        # Two crossover arrays: the operator records the same op without
        # looking the ufunc up by name (0.2 us of a 2 us call).
        if operator is not None and type(x1) is array and type(x2) is array:
            return operator(x1, x2)
        if isinstance(x1, complex) or isinstance(x2, complex):
            x1, x2 = _complex_scalar(x1, x2), _complex_scalar(x2, x1)
        return _C.ufunc(name, x1, x2)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"Elementwise ``{name}`` in crossover (like ``numpy.{name}``); "
        "takes crossover arrays, NumPy arrays or scalars and returns a lazy crossover array."
    )
    return f


negative = _elementwise("negative", 1)
absolute = abs = _elementwise("absolute", 1)
sqrt = _elementwise("sqrt", 1)
exp = _elementwise("exp", 1)
log = _elementwise("log", 1)
sin = _elementwise("sin", 1)
cos = _elementwise("cos", 1)
tan = _elementwise("tan", 1)
tanh = _elementwise("tanh", 1)
square = _elementwise("square", 1)
floor = _elementwise("floor", 1)
ceil = _elementwise("ceil", 1)
logical_not = _elementwise("logical_not", 1)
add = _elementwise("add", 2)
subtract = _elementwise("subtract", 2)
multiply = _elementwise("multiply", 2)
divide = _elementwise("divide", 2)
power = _elementwise("power", 2)
minimum = _elementwise("minimum", 2)
maximum = _elementwise("maximum", 2)
less = _elementwise("less", 2)
less_equal = _elementwise("less_equal", 2)
greater = _elementwise("greater", 2)
greater_equal = _elementwise("greater_equal", 2)
equal = _elementwise("equal", 2)
not_equal = _elementwise("not_equal", 2)
logical_and = _elementwise("logical_and", 2)
logical_or = _elementwise("logical_or", 2)
positive = _elementwise("positive", 1)
log1p = _elementwise("log1p", 1)
expm1 = _elementwise("expm1", 1)
log10 = _elementwise("log10", 1)
log2 = _elementwise("log2", 1)
exp2 = _elementwise("exp2", 1)
arcsin = _elementwise("arcsin", 1)
arccos = _elementwise("arccos", 1)
arctan = _elementwise("arctan", 1)
sinh = _elementwise("sinh", 1)
cosh = _elementwise("cosh", 1)
arcsinh = _elementwise("arcsinh", 1)
arccosh = _elementwise("arccosh", 1)
arctanh = _elementwise("arctanh", 1)
arctan2 = _elementwise("arctan2", 2)
hypot = _elementwise("hypot", 2)
# NumPy 2's (and the Array API's) names for the same ufuncs.
asin, acos, atan, asinh, acosh, atanh, atan2 = arcsin, arccos, arctan, arcsinh, arccosh, arctanh, arctan2
true_divide = divide
pow = power  # noqa: A001 - NumPy's name
del _elementwise


# ---- CuPy's names for code that moves between NumPy and CuPy ----------------


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None, *,
            blocking: bool = True) -> Any:
    """The values of ``a`` as a NumPy array (a copy), like ``cupy.asnumpy``;
    CUDA arrays of other libraries are copied to the host by their own
    library (CuPy's ``get``, Numba's ``copy_to_host``, PyTorch's
    ``cpu()``); NumPy arrays and other array-likes pass through
    ``numpy.asarray``."""
    if isinstance(a, ndarray):
        return a.get(out=out)
    from ._exchange import has_cuda_interface

    if has_cuda_interface(a):
        for to_host in ("get", "copy_to_host", "cpu"):
            if callable(getattr(a, to_host, None)):
                a = getattr(a, to_host)()
                break
        else:
            if not hasattr(a, "__array__"):  # JAX arrays copy through __array__
                raise TypeError(f"asnumpy: {type(a).__name__} is in CUDA memory and has no "
                                "get(), copy_to_host(), cpu() or __array__ to copy it to "
                                "the host")
    r = _np.asarray(a, order=order)
    if out is not None:
        out[...] = r
        return out
    return r


def to_device(a: Any, device: Any, /) -> Any:
    """``a`` as a crossover array with its values valid on ``device``
    ("cpu" or "gpu"), copied there now if needed: ``to_device(x, "gpu")``
    uploads once, and kernels on the GPU then read it without a copy."""
    from ._exchange import to_device as move

    return move(a if isinstance(a, ndarray) else asarray(a), device)


def get_array_module(*args: Any) -> Any:
    """``crossover`` when any argument is a crossover array, else ``numpy``
    (``cupy.get_array_module``)."""
    for a in args:
        if isinstance(a, ndarray):
            return _sys.modules[__name__]
    return _np


def synchronize() -> None:
    """Waits for queued device work (``cupy.cuda.Device().synchronize()``):
    a no-op, as crossover computes when a value is read."""
    cuda.synchronize()


# ---- the rest of NumPy's namespace (see _namespace) --------------------------

from . import _methods, _namespace  # noqa: E402

_namespace.install(_sys.modules[__name__], _np)


def __getattr__(name: str) -> Any:
    # Names added to numpy after this import (numexpr adds numpy.expm1x).
    return _namespace.late_name(_sys.modules[__name__], _np, name)


_namespace.install(linalg, _np.linalg)
_namespace.install(fft, _np.fft)
random._complete()
_methods.install()

# The Array API standard's additions (device=, namespace info, dtype rule).
from . import _array_api  # noqa: E402

_array_api.install(_sys.modules[__name__])
