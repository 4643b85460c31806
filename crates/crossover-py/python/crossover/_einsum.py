"""``einsum`` for its matmul-shaped cases in the engine: one or two
operands, explicit or implicit output, indices that are batch (in both
operands and the output), contracted (in both, not the output) or free (in
one operand and the output). Those are transposes and reshapes (views)
around one batched engine matmul, or a sum for one operand. Other
subscripts (repeated indices such as traces, ``...``, three operands,
an index summed within one operand) return ``_FALLBACK``: NumPy runs them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _crossover as _C
from ._functions import COMPOSED
from ._numpy import _FALLBACK, _IMPL, _x

_FLOATS = {np.dtype(np.float32), np.dtype(np.float64)}


def _parse(subscripts: str, n_ops: int) -> Any:
    s = subscripts.replace(" ", "")
    if "." in s:
        return None
    ins, arrow, out = s.partition("->")
    terms = ins.split(",")
    if len(terms) != n_ops or not all(t.isalpha() for t in terms) or (out and not out.isalpha()):
        return None
    if any(len(set(t)) != len(t) for t in terms + [out]):
        return None  # a repeated index (trace, diagonal)
    if not arrow:
        # Implicit output: the indices seen once, in alphabetical order.
        counts = {c: sum(t.count(c) for t in terms) for c in set("".join(terms))}
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    return terms, out


def einsum(*operands: Any, out: Any = None, dtype: Any = None, order: str = "K",
           casting: str = "safe", optimize: Any = False) -> Any:
    if out is not None or dtype is not None or not operands or not isinstance(operands[0], str):
        return _FALLBACK
    subscripts, arrays = operands[0], [_x(a) for a in operands[1:]]
    parsed = _parse(subscripts, len(arrays))
    if parsed is None or any(a.dtype not in _FLOATS for a in arrays):
        return _FALLBACK
    terms, out_idx = parsed
    if any(len(t) != a.ndim for t, a in zip(terms, arrays)):
        raise ValueError(f"einsum: subscripts {subscripts!r} do not match the operands' dimensions")
    if len(arrays) == 1:
        (t,), (a,) = terms, arrays
        summed = tuple(i for i, c in enumerate(t) if c not in out_idx)
        r = a.sum(axis=summed) if summed else a
        kept = [c for c in t if c in out_idx]
        return _C.transpose(r, [kept.index(c) for c in out_idx]) if kept else r
    if len(arrays) != 2:
        return _FALLBACK
    (ta, tb), (a, b) = terms, arrays
    batch = [c for c in ta if c in tb and c in out_idx]
    contracted = [c for c in ta if c in tb and c not in out_idx]
    free_a = [c for c in ta if c not in tb]
    free_b = [c for c in tb if c not in ta]
    if any(c not in out_idx for c in free_a + free_b):
        return _FALLBACK  # an index summed within one operand
    size = {c: d for t, x in ((ta, a), (tb, b)) for c, d in zip(t, x.shape)}
    for c in batch + contracted:
        if a.shape[ta.index(c)] != b.shape[tb.index(c)]:
            raise ValueError(f"einsum: index {c!r} has sizes {a.shape[ta.index(c)]} and "
                             f"{b.shape[tb.index(c)]}")

    def prod(cs: list) -> int:
        return math.prod(size[c] for c in cs)

    at = _C.transpose(a, [ta.index(c) for c in batch + free_a + contracted])
    bt = _C.transpose(b, [tb.index(c) for c in batch + contracted + free_b])
    at = at.reshape((prod(batch), prod(free_a), prod(contracted)))
    bt = bt.reshape((prod(batch), prod(contracted), prod(free_b)))
    r = _C.matmul(at, bt)
    have = batch + free_a + free_b
    r = r.reshape(tuple(size[c] for c in have))
    return _C.transpose(r, [have.index(c) for c in out_idx]) if have else r.reshape(())


_IMPL[np.einsum] = einsum
COMPOSED[np.einsum] = ("transposes and reshapes around one batched matmul "
                       "(matmul-shaped subscripts; others run in NumPy)")
