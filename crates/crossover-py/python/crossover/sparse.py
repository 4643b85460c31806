"""Sparse matrices in CSR form (float32/float64), like ``scipy.sparse``.

``csr_matrix`` builds from a SciPy sparse matrix, from ``(data, indices,
indptr)`` with a shape, or from a dense array; ``random`` draws one with a
density and a seed. ``A @ B`` (sparse), ``A @ x`` (dense vector or matrix,
a lazy crossover array), ``A.T``, ``A.sum(axis)``, ``A.toarray()`` and
``to_scipy(A)`` are supported. Unsorted or out-of-range indices raise
``ArgumentError`` (a ``ValueError``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._crossover import csr_matrix as _Csr

__all__ = ["csr_matrix", "random", "to_scipy", "issparse"]

def csr_matrix(arg: Any, shape: tuple[int, int] | None = None) -> Any:
    """A crossover CSR matrix from a SciPy sparse matrix (any format),
    ``(data, indices, indptr)`` plus ``shape``, or a dense 2-D array."""
    if isinstance(arg, _Csr):
        return arg
    if hasattr(arg, "tocsr") and hasattr(arg, "nnz"):  # a SciPy sparse matrix/array
        m = arg.tocsr()
        if not m.has_sorted_indices or not m.has_canonical_format:
            m = m.copy()
            m.sum_duplicates()
            m.sort_indices()
        return _Csr.from_parts(m.data, m.indices, m.indptr, tuple(m.shape))
    if isinstance(arg, tuple) and len(arg) == 3:
        if shape is None:
            raise ValueError("csr_matrix((data, indices, indptr)) needs shape=")
        data, indices, indptr = arg
        return _Csr.from_parts(data, indices, indptr, tuple(shape))
    return _Csr.from_dense(arg)


def random(m: int, n: int, density: float = 0.01, random_state: int = 0,
           dtype: Any = np.float64) -> Any:
    """An ``m x n`` matrix with ``round(density*m*n)`` values uniform in
    [0, 1) at distinct random positions (Philox from ``random_state``; not
    SciPy's numbers)."""
    return _Csr.random(m, n, density, random_state, dtype)


def to_scipy(a: Any) -> Any:
    """The matrix as a ``scipy.sparse.csr_matrix`` (a copy)."""
    import scipy.sparse

    return scipy.sparse.csr_matrix((a.data, a.indices, a.indptr), shape=a.shape)


def issparse(a: Any) -> bool:
    """Whether ``a`` is a crossover CSR matrix."""
    return isinstance(a, _Csr)
