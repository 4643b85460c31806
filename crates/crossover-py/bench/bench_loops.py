"""Python loops under ``@xo.jit`` beside the plain loop, NumPy and Numba.

Run (from the repository root, with a release build of the extension):

    env -u OPENBLAS_CORETYPE python crates/crossover-py/bench/bench_loops.py

Two cases on 10M float64 elements: the issue's ``conditional_accumulate``
loop and a per-element write loop ``out[i] = a[i]*b[i] + sin(a[i])``. The
contenders run interleaved round-robin in one process (medians of the warm
calls); the first call of each compiled contender (translation, tracing and
kernel compilation for crossover; Numba's JIT compilation) is timed
separately. The plain Python loop is timed on the first 1M elements and
scaled by 10 (a 10M Python loop takes seconds per call).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

import crossover as xo


# The loop, the same function `python -m crossover.compare` runs.
from crossover.compare.systems import conditional_accumulate_loop as conditional_accumulate  # noqa: E402


def sin_mix(a, b):
    out = np.empty_like(a)
    for i in range(len(a)):
        out[i] = a[i] * b[i] + math.sin(a[i])
    return out


def numba_kernels():
    """Numba's ``@njit(parallel=True)`` versions with ``prange``, or None."""
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(parallel=True)
    def nb_conditional(data, threshold):
        # One reduction operator per variable: Numba's prange rejects the
        # loop above (`+=` and `-=` on `result`), so `-=` is written `+= -`.
        result = 0.0
        for i in numba.prange(len(data)):
            if data[i] > threshold:
                result += data[i] ** 2
            else:
                result += -data[i]
        return result

    @numba.njit(parallel=True)
    def nb_sin_mix(a, b):
        out = np.empty_like(a)
        for i in numba.prange(len(a)):
            out[i] = a[i] * b[i] + math.sin(a[i])
        return out

    return nb_conditional, nb_sin_mix


def first_call(f):
    t = time.perf_counter()
    r = f()
    return time.perf_counter() - t, r


def interleaved(contenders, rounds):
    """{label: median seconds} over ``rounds`` interleaved warm calls."""
    for f in contenders.values():
        f()
    times = {k: [] for k in contenders}
    for _ in range(rounds):
        for k, f in contenders.items():
            t = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def report(py, xo_first, nb_first, med):
    """Prints one case's figures, ratios against the translated loop."""
    print(f"  plain Python loop (1M timed, x10): {ms(py)}")
    print(f"  crossover first call (translate + trace + compile): {ms(xo_first)}")
    if nb_first is not None:
        print(f"  Numba first call (compile): {ms(nb_first)}")
    base = med["crossover @jit loop"]
    for k, v in med.items():
        print(f"  {k:28s} {ms(v):>10s}   crossover loop speedup: {v / base:.2f}x")
    print(f"  crossover loop vs plain Python: {py / base:,.0f}x")


def ms(s):
    return f"{s * 1e3:.2f} ms" if s < 10 else f"{s:.1f} s"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args()
    n = args.n
    rng = np.random.default_rng(2026)
    x = rng.standard_normal(n)
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    kernels = numba_kernels()
    print(f"n = {n:,} float64, {args.rounds} interleaved rounds; crossover {xo.__version__}, "
          f"{xo.info()['simd']}, {xo.info()['threads']} threads")

    # ---- conditional_accumulate ----
    small = x[: n // 10]
    t0 = time.perf_counter()
    want_small = conditional_accumulate(small, 0.5)
    py = (time.perf_counter() - t0) * 10
    jf = xo.jit(conditional_accumulate)
    xo_first, got = first_call(lambda: jf(x, 0.5))
    assert jf.fallback_reason is None, jf.fallback_reason
    want = float(np.sum(np.where(x > 0.5, x * x, -x)))
    assert math.isclose(got, want, rel_tol=1e-10), (got, want)
    assert math.isclose(jf(small, 0.5), want_small, rel_tol=1e-10)
    xa = xo.asarray(x)  # copied in outside the timed region, as in crossover.compare
    contenders = {
        "crossover @jit loop": lambda: jf(x, 0.5),
        "crossover vectorised": lambda: float(xo.where(xa > 0.5, xa * xa, -xa).sum()),
        "NumPy np.where": lambda: float(np.sum(np.where(x > 0.5, x * x, -x))),
    }
    nb_first = None
    if kernels:
        nb_first, nb_got = first_call(lambda: kernels[0](x, 0.5))
        assert math.isclose(nb_got, want, rel_tol=1e-10)
        contenders["Numba parallel prange"] = lambda: kernels[0](x, 0.5)
    med = interleaved(contenders, args.rounds)
    print("\nconditional_accumulate (10M f64)")
    report(py, xo_first, nb_first, med)

    # ---- sin_mix ----
    js = xo.jit(sin_mix)
    xo_first, got = first_call(lambda: js(a, b))
    assert js.fallback_reason is None, js.fallback_reason
    np.testing.assert_allclose(got, a * b + np.sin(a), rtol=1e-13, atol=1e-15)
    t0 = time.perf_counter()
    sin_mix(a[: n // 10], b[: n // 10])
    py = (time.perf_counter() - t0) * 10
    contenders = {
        "crossover @jit loop": lambda: js(a, b),
        "crossover evaluate": lambda: xo.evaluate("a*b + sin(a)", local_dict={"a": a, "b": b}),
        "NumPy": lambda: a * b + np.sin(a),
    }
    nb_first = None
    if kernels:
        nb_first, _ = first_call(lambda: kernels[1](a, b))
        contenders["Numba parallel prange"] = lambda: kernels[1](a, b)
    med = interleaved(contenders, args.rounds)
    print("\nout[i] = a[i]*b[i] + sin(a[i]) (10M f64, new array)")
    report(py, xo_first, nb_first, med)


if __name__ == "__main__":
    main()
