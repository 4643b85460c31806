#!/usr/bin/env python3
"""NumPy/SciPy reference timings for crates/crossover/examples/bench_library.rs.

Prints one JSON line per case, {"impl", "op", "size", "median_ms", "min_ms"},
timed the same way as the Rust example: inputs made outside the timed region,
one warm-up call, then the median (and min) of several runs.

Run with OPENBLAS_CORETYPE unset (it halves OpenBLAS's speed here):
    env -u OPENBLAS_CORETYPE python3 scripts/bench_library_ref.py [OPS...]
"""
import json
import sys
import time

import numpy as np
import scipy
import scipy.fft
import scipy.linalg
import scipy.sparse


def timed(reps, f):
    f()  # warm-up
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    return ts[len(ts) // 2], ts[0]


def report(impl, op, size, t):
    print(json.dumps({"impl": impl, "op": op, "size": size,
                      "median_ms": round(t[0], 3), "min_ms": round(t[1], 3)}),
          flush=True)


def main():
    want = sys.argv[1:]
    ok = lambda op: not want or op in want
    rng = np.random.default_rng(7)
    if ok("matmul"):
        for n in (2048, 4096):
            a = rng.standard_normal((n, n), dtype=np.float32)
            b = rng.standard_normal((n, n), dtype=np.float32)
            report("numpy", "matmul", n, timed(5 if n >= 4096 else 9, lambda: a @ b))
    if ok("solve_spd"):
        n = 2048
        r = rng.standard_normal((n, n), dtype=np.float32)
        a = (r @ r.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        report("scipy", "solve_spd", n,
               timed(9, lambda: scipy.linalg.solve(a, b, assume_a="pos")))
    if ok("svd"):
        n = 2048
        a = rng.standard_normal((n, n), dtype=np.float32)
        report("scipy", "svd", n,
               timed(5, lambda: scipy.linalg.svd(a, full_matrices=False)))
    if ok("fft2"):
        n = 2048
        x = rng.standard_normal((n, n), dtype=np.float32)
        report("scipy", "fft2", n, timed(9, lambda: scipy.fft.fft2(x, workers=-1)))
    if ok("sparse_matmul"):
        n = 4096
        a = scipy.sparse.random(n, n, density=0.01, format="csr", dtype=np.float32, random_state=1)
        b = scipy.sparse.random(n, n, density=0.01, format="csr", dtype=np.float32, random_state=2)
        report("scipy", "sparse_matmul", n, timed(9, lambda: a @ b))


if __name__ == "__main__":
    main()
