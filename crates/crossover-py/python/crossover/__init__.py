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


# The ufuncs are the extension's own functions (`xo.add is _crossover.add`):
# no Python frame, the op resolved once, crossover arrays straight to the
# engine's op, anything else through `_C.ufunc` (`src/ufunc.rs`).
negative = _C.negative
absolute = abs = _C.absolute
sqrt = _C.sqrt
exp = _C.exp
log = _C.log
sin = _C.sin
cos = _C.cos
tan = _C.tan
tanh = _C.tanh
square = _C.square
floor = _C.floor
ceil = _C.ceil
logical_not = _C.logical_not
add = _C.add
subtract = _C.subtract
multiply = _C.multiply
divide = _C.divide
power = _C.power
minimum = _C.minimum
maximum = _C.maximum
less = _C.less
less_equal = _C.less_equal
greater = _C.greater
greater_equal = _C.greater_equal
equal = _C.equal
not_equal = _C.not_equal
logical_and = _C.logical_and
logical_or = _C.logical_or
positive = _C.positive
log1p = _C.log1p
expm1 = _C.expm1
log10 = _C.log10
log2 = _C.log2
exp2 = _C.exp2
arcsin = _C.arcsin
arccos = _C.arccos
arctan = _C.arctan
sinh = _C.sinh
cosh = _C.cosh
arcsinh = _C.arcsinh
arccosh = _C.arccosh
arctanh = _C.arctanh
arctan2 = _C.arctan2
hypot = _C.hypot
# NumPy 2's (and the Array API's) names for the same ufuncs.
asin, acos, atan, asinh, acosh, atanh, atan2 = arcsin, arccos, arctan, arcsinh, arccosh, arctanh, arctan2
true_divide = divide
pow = power  # noqa: A001 - NumPy's name


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
