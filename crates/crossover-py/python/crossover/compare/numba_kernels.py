"""Numba: ``@njit(parallel=True, fastmath=False)`` kernels, written the way
a careful user would (float64 accumulators, two-pass std).

Numba itself is imported only when the system is loaded; the kernels are
compiled by the warm-up call, outside the timed region, and cached on disk
(``cache=True``) so later runs skip the compilation."""

from __future__ import annotations

from typing import Any

import numpy as np

from .systems import Case, System

_K: dict[str, Any] = {}


def _kernels() -> dict[str, Any]:
    """Defines the kernels on first use (numba imported here, not at
    module import, so a missing numba is a note, not a crash)."""
    if _K:
        return _K
    from numba import njit, prange

    def jit(f: Any) -> Any:
        try:
            return njit(parallel=True, fastmath=False, cache=True)(f)
        except RuntimeError:  # no writable cache directory: compile every run
            return njit(parallel=True, fastmath=False)(f)

    @jit
    def elementwise(a, b):
        out = np.empty_like(a)
        for i in prange(a.size):
            out[i] = a[i] * b[i] + np.sin(a[i]) + np.cos(b[i])
        return out

    @jit
    def total(x):
        s = 0.0
        for i in prange(x.size):
            s += x[i]
        return s

    @jit
    def std(x):
        m = 0.0
        for i in prange(x.size):
            m += x[i]
        m /= x.size
        q = 0.0
        for i in prange(x.size):
            d = x[i] - m
            q += d * d
        return np.sqrt(q / x.size)

    @jit
    def monte_carlo(n):
        # np.random inside njit: numba gives every thread its own state.
        inside = 0
        for i in prange(n):
            x = np.float32(np.random.random())
            y = np.float32(np.random.random())
            if x * x + y * y <= np.float32(1.0):
                inside += 1
        return 4.0 * inside / n

    @jit
    def conditional(x):
        s = 0.0
        for i in prange(x.size):
            v = x[i]
            s += v * v if v > 0.5 else -v
        return s

    @jit
    def image(x):
        # x: (images, pixels); statistics in float64, output float32.
        out = np.empty_like(x)
        p = x.shape[1]
        for k in range(x.shape[0]):
            m = 0.0
            for i in prange(p):
                m += x[k, i]
            m /= p
            q = 0.0
            for i in prange(p):
                d = x[k, i] - m
                q += d * d
            mf = np.float32(m)
            den = np.float32(np.sqrt(q / p)) + np.float32(1e-8)
            for i in prange(p):
                out[k, i] = np.sin((x[k, i] - mf) / den) * np.float32(0.5) + np.float32(0.5)
        return out

    _K.update(elementwise=elementwise, total=total, std=std, monte_carlo=monte_carlo,
              conditional=conditional, image=image)
    return _K


def _elementwise(inp: dict, _: str) -> Case:
    k, a, b = _kernels()["elementwise"], inp["a"], inp["b"]
    return Case(lambda: k(a.reshape(-1), b.reshape(-1)).reshape(a.shape))


def _reduction(inp: dict, variant: str) -> Case:
    k, x = _kernels(), inp["x"].reshape(-1)
    run = {
        "sum": lambda: k["total"](x),
        "mean": lambda: k["total"](x) / x.size,
        "std": lambda: k["std"](x),
    }[variant]
    return Case(run, float)


def _monte_carlo(inp: dict, _: str) -> Case:
    k, n = _kernels()["monte_carlo"], inp["samples"]
    return Case(lambda: k(n), float)


def _conditional(inp: dict, _: str) -> Case:
    k, x = _kernels()["conditional"], inp["x"]
    return Case(lambda: k(x), float)


def _image(inp: dict, _: str) -> Case:
    k, x = _kernels()["image"], inp["x"]
    flat = x.reshape(x.shape[0], -1)
    return Case(lambda: k(flat).reshape(x.shape))


NUMBA = System(
    "numba", ("numba",),
    "Numba @njit(parallel=True, fastmath=False) loops (compiled in the warm-up)",
    cases={
        "elementwise": _elementwise,
        "reduction": _reduction,
        "monte_carlo_pi": _monte_carlo,
        "conditional_accumulate": _conditional,
        "conditional_accumulate_loop": _conditional,
        "image_pipeline": _image,
    },
)
