"""Dense linear algebra on crossover arrays (float32/float64), like
``numpy.linalg`` and ``scipy.linalg``: faer's factorisations on all cores.

Results are crossover arrays. A singular matrix in ``solve``, a matrix that
is not positive definite in ``cholesky``/``solve(assume_a="pos")``, or a
non-finite input raises ``NumericalError`` (a ``ValueError``) when the
result is computed: never a silent NaN.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import _crossover as _C


# NumPy's (and the Array API's) result types: tuples whose fields have names.
class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any

__all__ = ["SVDResult", "QRResult", "EighResult", "matmul", "solve", "cholesky", "inv", "det", "svd", "svdvals", "qr", "eigh",
           "eigvalsh", "matrix_transpose", "multi_dot", "matrix_power", "norm", "cond"]


def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` with NumPy's rules (1-D operands, broadcast batch axes)."""
    return _C.matmul(a, b)


def solve(a: Any, b: Any, assume_a: str = "gen") -> Any:
    """Solves ``a @ x = b`` (``b`` a vector or a matrix of right-hand
    sides); ``assume_a="pos"`` uses Cholesky for symmetric positive definite
    ``a`` (about twice as fast)."""
    return _C.solve(a, b, assume_a)


def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    """Lower-triangular ``L`` with ``x = L @ L.T``; ``upper=True`` gives the
    upper factor ``U = L.T`` (a view; complex input runs in NumPy)."""
    L = _C.linalg_unary("cholesky", x)
    if not upper:
        return L
    if L.dtype.kind == "c":
        return _numpy_runs("cholesky", (x,), {"upper": True}, "complex upper=True")
    return L.swapaxes(-1, -2)


def inv(a: Any) -> Any:
    """The inverse matrix."""
    return _C.linalg_unary("inv", a)


def det(a: Any) -> Any:
    """The determinant (a 0-d array; batched over leading axes)."""
    return _C.linalg_unary("det", a)


def svdvals(a: Any) -> Any:
    """Singular values, descending."""
    return _C.linalg_unary("svdvals", a)


def _numpy_runs(name: str, args: tuple, kwargs: dict, why: str) -> Any:
    """NumPy's ``numpy.linalg.<name>`` on host arrays (a FallbackWarning
    naming ``why``), for the forms the engine lacks."""
    import numpy as np

    from . import _numpy

    return _numpy.fallback(getattr(np.linalg, name), args, kwargs, why=why)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """``(U, s, Vt)`` with ``a = U @ diag(s) @ Vt``, NumPy's signature.
    The engine computes the thin SVD, which is the full one for square
    matrices; ``full_matrices=True`` for a non-square matrix (the
    complement basis) and ``hermitian=True`` run in NumPy (a
    FallbackWarning). ``compute_uv=False`` returns ``s`` alone."""
    if hermitian:
        return _named(SVDResult, _numpy_runs(
            "svd", (a, full_matrices, compute_uv, hermitian), {},
            "the engine does not take the argument hermitian=True"), compute_uv)
    if not compute_uv:
        return svdvals(a)
    shape = getattr(a, "shape", None)
    if shape is None:
        import numpy as np

        shape = np.shape(a)
    if full_matrices and len(shape) >= 2 and shape[-1] != shape[-2]:
        return SVDResult(*_numpy_runs(
            "svd", (a, True, True), {},
            "full_matrices=True of a non-square matrix (the engine's SVD is thin)"))
    return SVDResult(*_C.linalg_multi("svd", a))


def qr(a: Any, mode: str = "reduced") -> Any:
    """Reduced QR ``(Q, R)``; other ``mode`` values run in NumPy."""
    if mode != "reduced":
        out = _numpy_runs("qr", (a, mode), {}, f"the engine does not take the argument mode={mode!r}")
        return _named(QRResult, out, mode != "r")
    return QRResult(*_C.linalg_multi("qr", a))


def eigh(a: Any, UPLO: str = "L") -> Any:
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix,
    from the lower triangle; ``UPLO="U"`` runs in NumPy."""
    if UPLO != "L":
        return EighResult(*_numpy_runs("eigh", (a, UPLO), {},
                                       f"the engine does not take the argument UPLO={UPLO!r}"))
    return EighResult(*_C.linalg_multi("eigh", a))


def _named(kind: type, out: Any, is_tuple: bool) -> Any:
    """A fallback's result as ``kind`` when it is a tuple (``svd`` with
    ``compute_uv=False`` and ``qr(mode="r")`` return one array)."""
    return kind(*out) if is_tuple else out


# ---- compositions of the above (NumPy's formulas) ---------------------------


def eigvalsh(a: Any, UPLO: str = "L") -> Any:
    """Eigenvalues (ascending) of a symmetric matrix (``eigh``'s first)."""
    return eigh(a, UPLO)[0]


def matrix_transpose(x: Any) -> Any:
    """The last two axes swapped (a view)."""
    x = x if isinstance(x, _C.ndarray) else _C.asarray(x)
    if x.ndim < 2:
        raise ValueError("matrix_transpose needs at least 2 dimensions")
    return x.swapaxes(-1, -2)


def multi_dot(arrays: Any, *, out: Any = None) -> Any:
    """``A @ B @ C ...``, left to right (NumPy picks the cheapest order for
    three or more; the values agree to rounding)."""
    if out is not None:
        raise TypeError("crossover arrays are immutable: they cannot be used as out=")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot needs at least two arrays")
    r = arrays[0]
    for b in arrays[1:]:
        r = _C.matmul(r, b)
    return r


def matrix_power(a: Any, n: int) -> Any:
    """``a`` multiplied by itself ``n`` times (squaring; ``inv`` for n < 0)."""
    n = int(n)
    a = a if isinstance(a, _C.ndarray) else _C.asarray(a)
    if n < 0:
        a, n = inv(a), -n
    if n == 0:
        import numpy as np

        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), tuple(a.shape))
        return _C.asarray(np.ascontiguousarray(eye))
    result = None
    while n:
        if n & 1:
            result = a if result is None else _C.matmul(result, a)
        n >>= 1
        if n:
            a = _C.matmul(a, a)
    return result


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """The 2-norm of a vector or the Frobenius norm of a matrix
    (``sqrt(sum(x*x))``, NumPy's formula for these); ``ord=2`` of a matrix is
    its largest singular value. Other ``ord`` values run in NumPy."""
    import numpy as np

    from . import _numpy

    x = x if isinstance(x, _C.ndarray) else _C.asarray(x)
    if x.dtype.kind != "f":
        return _numpy.fallback(np.linalg.norm, (x, ord, axis, keepdims), {})
    if ord is None or (ord == "fro" and (axis is not None or x.ndim == 2)) or (
            ord == 2 and (x.ndim == 1 or isinstance(axis, (int, np.integer)))):
        return _C.ufunc("sqrt", (x * x).sum(axis=axis, keepdims=keepdims))
    if ord == 2 and x.ndim == 2 and axis is None and not keepdims:
        return svdvals(x)[0]
    return _numpy.fallback(np.linalg.norm, (x, ord, axis, keepdims), {})


def cond(x: Any, p: Any = None) -> Any:
    """The 2-norm condition number, ``s[0] / s[-1]`` of the singular
    values (``p=None`` or 2); other ``p`` run in NumPy."""
    if p not in (None, 2):
        import numpy as np

        from . import _numpy

        return _numpy.fallback(np.linalg.cond, (x, p), {})
    s = svdvals(x)
    return s[..., 0] / s[..., -1]
