"""Call 4 probe (session 27): host time of a 4096 sparse product on the
GPU (cuSPARSE) and of a 4096 matmul call, by the engine's trace, and by
perf where the machine has it."""
import os, statistics, sys, time
import numpy as np
import crossover as xo
what = sys.argv[1]
if what == "sparse":
    from crossover.compare.workloads import make_sparse
    inp = make_sparse(4096)
    a, b = (xo.sparse.csr_matrix(m[:3], shape=m[3]) for m in (inp["a"], inp["b"]))
    with xo.device("gpu"):
        for _ in range(8):
            t0 = time.perf_counter(); c = a @ b; print(f"sparse gpu {1e3*(time.perf_counter()-t0):.2f} ms")
else:
    rng = np.random.default_rng(0)
    x = rng.random((4096, 4096), dtype=np.float32)
    xa, xb = xo.to_device(xo.asarray(x), "gpu"), xo.to_device(xo.asarray(x), "gpu")
    with xo.device("gpu"):
        for _ in range(40):
            (xa @ xb).eval()
