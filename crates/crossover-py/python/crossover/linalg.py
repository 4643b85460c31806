"""Dense linear algebra on crossover arrays (float32/float64), like
``numpy.linalg`` and ``scipy.linalg``: faer's factorisations on all cores.

Results are crossover arrays. A singular matrix in ``solve``, a matrix that
is not positive definite in ``cholesky``/``solve(assume_a="pos")``, or a
non-finite input raises ``NumericalError`` (a ``ValueError``) when the
result is computed: never a silent NaN.
"""

from __future__ import annotations

from typing import Any

from . import _crossover as _C

__all__ = ["matmul", "solve", "cholesky", "inv", "det", "svd", "svdvals", "qr", "eigh"]


def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` with NumPy's rules (1-D operands, broadcast batch axes)."""
    return _C.matmul(a, b)


def solve(a: Any, b: Any, assume_a: str = "gen") -> Any:
    """Solves ``a @ x = b`` (``b`` a vector or a matrix of right-hand
    sides); ``assume_a="pos"`` uses Cholesky for symmetric positive definite
    ``a`` (about twice as fast)."""
    return _C.solve(a, b, assume_a)


def cholesky(a: Any) -> Any:
    """Lower-triangular ``L`` with ``a = L @ L.T``."""
    return _C.linalg_unary("cholesky", a)


def inv(a: Any) -> Any:
    """The inverse matrix."""
    return _C.linalg_unary("inv", a)


def det(a: Any) -> Any:
    """The determinant (a 0-d array; batched over leading axes)."""
    return _C.linalg_unary("det", a)


def svdvals(a: Any) -> Any:
    """Singular values, descending."""
    return _C.linalg_unary("svdvals", a)


def svd(a: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """Thin SVD ``(U, s, Vt)`` with ``a = U @ diag(s) @ Vt``. Only
    ``full_matrices=False`` is supported (raises ``ValueError`` otherwise);
    ``compute_uv=False`` returns ``s`` alone."""
    if not compute_uv:
        return svdvals(a)
    if full_matrices:
        raise ValueError("svd: only the thin SVD (full_matrices=False) is supported")
    return _C.linalg_multi("svd", a)


def qr(a: Any, mode: str = "reduced") -> Any:
    """Reduced QR ``(Q, R)``; only ``mode="reduced"`` is supported."""
    if mode != "reduced":
        raise ValueError(f"qr: only mode='reduced' is supported, not {mode!r}")
    return _C.linalg_multi("qr", a)


def eigh(a: Any, UPLO: str = "L") -> Any:
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix;
    reads the lower triangle (``UPLO="L"``)."""
    if UPLO != "L":
        raise ValueError("eigh: only UPLO='L' is supported")
    return _C.linalg_multi("eigh", a)
