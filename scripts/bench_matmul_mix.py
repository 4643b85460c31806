"""A smaller matrix product right after a larger one, against the same
product after the process went idle: what OpenBLAS's spinning thread
(about 0.1 s after each call) costs a faer product that follows a BLAS one.

With AVX-512 the default sends no product to the BLAS, so force the large
one there with a threshold between the two sizes:

    CROSSOVER_BLAS_MIN_MNK=3e9 env -u OPENBLAS_CORETYPE CROSSOVER_GPU=none python scripts/bench_matmul_mix.py 1024 2048

Medians of 12 pairs (float32); speed is never asserted.
"""

import sys
import time

import numpy as np

import crossover as xo
from crossover.compare.timing import settle


def main():
    small, large = (int(s) for s in (sys.argv[1:3] if len(sys.argv) > 2 else ("1024", "2048")))
    rng = np.random.default_rng(0)
    big = [xo.asarray(rng.random((large, large), dtype=np.float32)) for _ in range(2)]
    mid = [xo.asarray(rng.random((small, small), dtype=np.float32)) for _ in range(2)]

    def product(pair):
        return (pair[0] @ pair[1]).numpy()

    for _ in range(2):
        product(big)
        product(mid)
    quiet, after = [], []
    for _ in range(12):
        settle()
        t = time.perf_counter()
        product(mid)
        quiet.append(time.perf_counter() - t)
        product(big)
        t = time.perf_counter()
        product(mid)
        after.append(time.perf_counter() - t)
    print(f"blas: {xo.info()['blas'] or 'none'}, thresholds {xo.info()['blas_min_mnk']}")
    print(f"{small}^2 float32 alone {np.median(quiet) * 1e3:.2f} ms, right after a {large}^2 "
          f"product {np.median(after) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
