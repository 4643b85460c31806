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

__all__ = ["csr_matrix", "random", "to_scipy", "issparse", "isspmatrix_csr", "spmatrix"]

_FORMATS = ("csr", "coo", "csc", "bsr", "dia", "dok", "lil", None)


def csr_matrix(arg1: Any, shape: tuple[int, int] | None = None, dtype: Any = None,
               copy: bool = False) -> Any:
    """A crossover CSR matrix, with ``scipy.sparse.csr_matrix``'s
    signature: from a SciPy sparse matrix (any format), ``(data, indices,
    indptr)`` or ``(data, (row, col))`` with ``shape``, a shape ``(M, N)``
    (empty), or a dense 2-D array (NumPy or crossover). ``dtype`` float32 or
    float64 (the engine's sparse dtypes)."""
    if isinstance(arg1, _Csr) and dtype is None:
        return arg1
    if isinstance(arg1, tuple) and len(arg1) == 3 and dtype is None:
        if shape is None:
            raise ValueError("csr_matrix((data, indices, indptr)) needs shape=")
        data, indices, indptr = (np.asarray(_host(v)) for v in arg1)
        return _Csr.from_parts(data, indices, indptr, tuple(shape))
    if not (hasattr(arg1, "tocsr") and hasattr(arg1, "nnz")) and not isinstance(arg1, tuple) \
            and dtype is None and shape is None:
        return _Csr.from_dense(arg1)
    # The other forms, and dtype=: SciPy builds the CSR arrays on the host.
    import scipy.sparse

    if isinstance(arg1, _Csr):
        arg1 = to_scipy(arg1)
    elif isinstance(arg1, tuple):
        arg1 = tuple(_host(v) if not isinstance(v, tuple) else tuple(_host(w) for w in v)
                     for v in arg1)
    else:
        arg1 = _host(arg1)
    m = scipy.sparse.csr_matrix(arg1, shape=shape, dtype=dtype)
    if m.dtype not in (np.float32, np.float64):
        m = m.astype(np.float64)
    m.sum_duplicates()
    m.sort_indices()
    return _Csr.from_parts(m.data, m.indices, m.indptr, tuple(m.shape))


def _host(v: Any) -> Any:
    return v.numpy() if hasattr(v, "numpy") and hasattr(v, "eval") else v


def _seed(random_state: Any) -> int:
    """An integer seed from SciPy's ``random_state``/``rng`` forms."""
    if random_state is None:
        return int(np.random.default_rng().integers(2**63))
    if isinstance(random_state, (int, np.integer)):
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**63))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31))
    if hasattr(random_state, "seed") and isinstance(random_state.seed, int):
        return random_state.seed  # a crossover Generator
    raise TypeError(f"random_state must be None, an int or a Generator, not {random_state!r}")


def random(m: int, n: int, density: float = 0.01, format: str | None = "coo",
           dtype: Any = None, random_state: Any = None, data_rvs: Any = None, *,
           rng: Any = None) -> Any:
    """An ``m x n`` matrix with ``round(density*m*n)`` values uniform in
    [0, 1) at distinct random positions, with ``scipy.sparse.random``'s
    signature (Philox from ``random_state``/``rng``; not SciPy's numbers).
    The result is CSR whatever ``format`` names (crossover has only CSR;
    its products and ``toarray`` are the same); ``data_rvs`` draws the
    values on the host."""
    if format not in _FORMATS:
        raise ValueError(f"unknown sparse format {format!r}")
    if not 0 <= density <= 1:
        raise ValueError("density expected to be 0 <= density <= 1")
    dtype = np.float64 if dtype is None else np.dtype(dtype)
    a = _Csr.random(int(m), int(n), float(density), _seed(rng if rng is not None else random_state),
                    dtype)
    if data_rvs is not None:
        values = np.asarray(data_rvs(a.nnz), dtype=dtype)
        a = _Csr.from_parts(values, a.indices, a.indptr, tuple(a.shape))
    return a


def to_scipy(a: Any) -> Any:
    """The matrix as a ``scipy.sparse.csr_matrix`` (a copy)."""
    import scipy.sparse

    return scipy.sparse.csr_matrix((a.data, a.indices, a.indptr), shape=a.shape)


def issparse(a: Any) -> bool:
    """Whether ``a`` is a crossover CSR matrix."""
    return isinstance(a, _Csr)


def _dot(self: Any, other: Any) -> Any:
    """``self @ other`` (SciPy's ``A.dot``)."""
    return self @ other


def _get(self: Any, stream: Any = None) -> Any:
    """The matrix as a ``scipy.sparse.csr_matrix`` (CuPy's ``get``)."""
    return to_scipy(self)


for _name, _value in (("dot", _dot), ("get", _get), ("tocsr", lambda self, copy=False: self),
                      ("format", "csr"), ("todense", lambda self: self.toarray())):
    if not hasattr(_Csr, _name):
        setattr(_Csr, _name, _value)

isspmatrix_csr = issparse
spmatrix = _Csr
