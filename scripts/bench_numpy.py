#!/usr/bin/env python3
"""NumPy/SciPy timings of the `crossover bench` workloads, measured the same way.

Prints one JSON line per case: {"system", "workload", "variant", "size",
"median_ms", "min_ms", "reps"}. Inputs are made outside the timed region
(except Monte Carlo pi, whose work *is* drawing the samples), one warm-up
call, then at least 5 runs and at least 1 s; median and min are reported.

Run with OPENBLAS_CORETYPE unset (it halves OpenBLAS's speed here):
    env -u OPENBLAS_CORETYPE python3 scripts/bench_numpy.py [WORKLOAD ...] [--size N]
scripts/bench_compare.py runs this beside `crossover bench` and prints ratios.
"""
import argparse
import json
import os
import time

import numpy as np
import scipy.fft
import scipy.linalg
import scipy.sparse

DEFAULT_SIZES = {
    "elementwise": [3162],
    "reduction": [10000],
    "matmul": [2048, 4096],
    "fft2": [2048],
    "solve": [2048],
    "svd": [2048],
    "sparse_matmul": [4096],
    # Size N is always an NxN problem (as in `crossover bench`): N*N samples,
    # N*N float64 elements, a batch of 8 NxN images (2862: 65.5M pixels).
    "monte_carlo_pi": [10000],
    "conditional_accumulate": [3162],
    "image_pipeline": [2862],
}


def timed(f, reps=5, min_time=1.0):
    f()  # warm-up
    ts = []
    start = time.perf_counter()
    while len(ts) < reps or time.perf_counter() - start < min_time:
        t = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t) * 1e3)
        if len(ts) >= 200:
            break
    ts.sort()
    return ts[len(ts) // 2], ts[0], len(ts)


def cases(workload, n, rng):
    """(system, variant, fn) triples for one workload at size n."""
    f32 = np.float32
    if workload == "elementwise":
        a, b = rng.random((n, n), dtype=f32), rng.random((n, n), dtype=f32)
        yield "numpy", "", lambda: a * b + np.sin(a) + np.cos(b)
    elif workload == "reduction":
        a = rng.random((n, n), dtype=f32)
        yield "numpy", "sum", lambda: np.sum(a)
        yield "numpy", "mean", lambda: np.mean(a)
        yield "numpy", "std", lambda: np.std(a)
    elif workload == "matmul":
        a, b = rng.random((n, n), dtype=f32), rng.random((n, n), dtype=f32)
        yield "numpy", "", lambda: a @ b
    elif workload == "fft2":
        x = rng.random((n, n), dtype=f32)
        yield "scipy", "", lambda: scipy.fft.fft2(x, workers=-1)
        yield "numpy", "", lambda: np.fft.fft2(x)
    elif workload == "solve":
        r = rng.random((n, n), dtype=f32) - f32(0.5)
        a = (r @ r.T / f32(n) + np.eye(n, dtype=f32)).astype(f32)
        b = rng.random(n, dtype=f32)
        yield "scipy", "", lambda: scipy.linalg.solve(a, b, assume_a="pos")
    elif workload == "svd":
        a = rng.random((n, n), dtype=f32) - f32(0.5)
        yield "scipy", "", lambda: scipy.linalg.svd(a, full_matrices=False)
    elif workload == "sparse_matmul":
        a = scipy.sparse.random(n, n, density=0.01, format="csr", dtype=f32, random_state=1)
        b = scipy.sparse.random(n, n, density=0.01, format="csr", dtype=f32, random_state=2)
        yield "scipy", "", lambda: a @ b
    elif workload == "monte_carlo_pi":
        def pi(dtype):
            g = np.random.default_rng(0)
            x, y = g.random(n * n, dtype=dtype), g.random(n * n, dtype=dtype)
            return 4.0 * np.mean(x * x + y * y <= 1.0)
        yield "numpy", "", lambda: pi(np.float64)
        yield "numpy-f32", "", lambda: pi(f32)
    elif workload == "conditional_accumulate":
        x = rng.random(n * n)
        yield "numpy", "", lambda: np.sum(np.where(x > 0.5, x * x, -x))
    elif workload == "image_pipeline":
        x = rng.random((8, n, n), dtype=f32)

        def pipeline():
            m = x.mean(axis=(1, 2), keepdims=True)
            s = x.std(axis=(1, 2), keepdims=True)
            return np.sin((x - m) / (s + f32(1e-8))) * f32(0.5) + f32(0.5)
        yield "numpy", "", pipeline
    else:
        raise SystemExit(f"unknown workload {workload!r}; known: {', '.join(DEFAULT_SIZES)}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workloads", nargs="*", default=list(DEFAULT_SIZES))
    p.add_argument("--size", type=int, action="append", help="override the default sizes")
    args = p.parse_args()
    if os.environ.get("OPENBLAS_CORETYPE"):
        print(f"# warning: OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} "
              "cripples OpenBLAS on this CPU; unset it for fair figures", flush=True)
    rng = np.random.default_rng(7)
    for w in args.workloads:
        for n in args.size or DEFAULT_SIZES[w]:
            for system, variant, fn in cases(w, n, rng):
                med, lo, reps = timed(fn)
                print(json.dumps({"system": system, "workload": w, "variant": variant,
                                  "size": n, "median_ms": round(med, 3),
                                  "min_ms": round(lo, 3), "reps": reps}), flush=True)


if __name__ == "__main__":
    main()
