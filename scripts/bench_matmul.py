"""Square matrix products through Python beside NumPy's, paired in one loop.

For each N: NumPy's ``a @ b`` and crossover's ``(xa @ xb).numpy()`` (the
result's NumPy view, as ``python -m crossover.compare`` reads it) on the same
random inputs made outside the timed region, each the median of about 0.5 s
of calls after two warm-up calls, twice per size, each after the process's
other threads are idle (``compare.timing.settle``: OpenBLAS's threads spin
about 0.1 s after a call); prints the ratio NumPy time / crossover time
(above 1: crossover is faster) and which BLAS crossover's large products
used (``CROSSOVER_BLAS=none``: faer's). Speed is never asserted.

    env -u OPENBLAS_CORETYPE CROSSOVER_GPU=none python scripts/bench_matmul.py 100,256,512 float32
"""

import sys
import time

import numpy as np

import crossover as xo
from crossover.compare.timing import settle


def median_us(f, seconds=0.5):
    settle()
    f()
    f()
    times = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds or len(times) < 7:
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e6)
    times.sort()
    return times[len(times) // 2]


def main():
    sizes = [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "100,256,512,1024").split(",")]
    dtype = np.dtype(sys.argv[2] if len(sys.argv) > 2 else "float32")
    print(f"crossover blas: {xo.info()['blas'] or 'none (faer)'}")
    for n in sizes:
        rng = np.random.default_rng(0)
        a, b = rng.random((n, n), dtype=dtype), rng.random((n, n), dtype=dtype)
        xa, xb = xo.asarray(a), xo.asarray(b)
        got = (xa @ xb).numpy()
        want = a.astype(np.float64) @ b.astype(np.float64)
        err = np.abs(got - want).max() / np.abs(want).max()
        for _ in range(2):
            t_np = median_us(lambda: a @ b)
            t_xo = median_us(lambda: (xa @ xb).numpy())
            print(f"{dtype.name} N={n}: numpy {t_np:.0f} us, crossover {t_xo:.0f} us, "
                  f"ratio {t_np / t_xo:.2f}x (max rel err {err:.1e})")


if __name__ == "__main__":
    main()
