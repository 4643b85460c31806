"""Per-call cost of small evaluations from Python (docs/benchmarks-percall.md).

Times, in microseconds per call (median of rounds of many calls, inputs made
outside the timed region), the small cases whose fixed cost the per-call
work targets: a jitted Python loop (compare's conditional_accumulate_loop at
N = 100), the same sum written with NumPy calls, a scalar op after a
reduction, and a fused three-op expression, beside NumPy and (when
installed) Numba. Run it once per build to compare builds:

    PYTHONPATH=<build> env -u OPENBLAS_CORETYPE python scripts/bench_small_calls.py
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import crossover as xo
from crossover.compare.ops_causes import per_call_us
from crossover.compare.systems import conditional_accumulate_loop


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.random(10_000)
    xa = xo.asarray(x)
    small = rng.random(1_000)
    sa = xo.asarray(small)
    loop = xo.jit(conditional_accumulate_loop)
    # Issue 16's target 2: a fused three-op expression on 1,000 float32.
    a, b = rng.random(1_000, dtype=np.float32), rng.random(1_000, dtype=np.float32)
    fa, fb = xo.asarray(a), xo.asarray(b)
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("a*b + sin(a) + cos(b), 1,000 float32, operators to NumPy", lambda: np.asarray(fa * fb + xo.sin(fa) + xo.cos(fb))),
        ("  the same, recording only (nothing computed)", lambda: fa * fb + xo.sin(fa) + xo.cos(fb)),
        ("  the same, xo.evaluate on the NumPy arrays", lambda: xo.evaluate("a*b + sin(a) + cos(b)", a=a, b=b)),
        ("  the same (NumPy's five ufuncs)", lambda: a * b + np.sin(a) + np.cos(b)),
        ("jit loop, 10,000 float64 (crossover)", lambda: loop(x, 0.5)),
        ("where-sum, 10,000 float64 (crossover)", lambda: xo.where(xa > 0.5, xa * xa, -xa).sum().item()),
        ("0.0 + where-sum (crossover)", lambda: (0.0 + xo.where(xa > 0.5, xa * xa, -xa).sum()).item()),
        ("where-sum (NumPy)", lambda: np.where(x > 0.5, x * x, -x).sum()),
        ("sum / n, 10,000 float64 (crossover)", lambda: (xa.sum() / 10_000).item()),
        ("a*a + a, 1,000 float64, eval (crossover)", lambda: (sa * sa + sa).eval()),
        ("a*a + a, 1,000 float64, to NumPy (crossover)", lambda: np.asarray(sa * sa + sa)),
        ("a*a + a, 1,000 float64 (NumPy)", lambda: small * small + small),
    ]
    try:
        from crossover.compare.numba_kernels import _kernels

        numba_sum = _kernels()["conditional"]  # what compare times for Numba
        numba_sum(x)
        cases.append(("the same sum (Numba prange)", lambda: numba_sum(x)))
    except Exception as e:  # noqa: BLE001 - Numba is optional here
        print(f"(Numba skipped: {e})")
    width = max(len(name) for name, _ in cases)
    for name, fn in cases:
        for _ in range(50):  # warm-up: caches, compiled kernels, recycled memory
            fn()
        print(f"{name:<{width}}  {per_call_us(fn, batch_time=0.05):8.3f} us")


if __name__ == "__main__":
    main()
