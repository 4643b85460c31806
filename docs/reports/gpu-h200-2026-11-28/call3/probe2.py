"""Call 3 probe (session 27): (1) is the 4096 matmul's kernel slower than
PyTorch's because of the strided-batched entry point (bmm uses it, `@`
may not)? (2) the sum's step from one launch to two (segments of 4096
points); (3) where a 4096 sparse product's GPU time goes (cuSPARSE, the
core's kernel, the CPU)."""
import os, statistics, subprocess, sys, time
import numpy as np


def events_ms(run, n=10):
    import torch
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); run(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def wall_us(run, n=200):
    for _ in range(20):
        run()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); run(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def matmul():
    import torch
    import crossover as xo
    n = 4096
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32); b = rng.random((n, n), dtype=np.float32)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    print(f"torch a@b (events)            {events_ms(lambda: ta @ tb):7.3f} ms")
    print(f"torch bmm batch 1 (events)    {events_ms(lambda: torch.bmm(ta[None], tb[None])):7.3f} ms")
    xa, xb = xo.to_device(xo.asarray(a), "gpu"), xo.to_device(xo.asarray(b), "gpu")
    with xo.device("gpu"):
        s = [xo.explain(xa @ xb).seconds * 1e3 for _ in range(7)]
    print(f"crossover a@b (its events)    {statistics.median(s):7.3f} ms (of 7: {', '.join(f'{v:.3f}' for v in s)})")


def sums():
    import torch
    import crossover as xo
    for n in (1000, 4096, 4097, 8192, 90000, 1_000_000, 16_777_216):
        x = np.random.default_rng(1).random(n, dtype=np.float32)
        xg = xo.to_device(xo.asarray(x), "gpu")
        t = torch.from_numpy(x).cuda()

        def ts():
            t.sum(); torch.cuda.synchronize()
        with xo.device("gpu"):
            w = wall_us(lambda: xg.sum().eval())
            k = xo.explain(xg.sum()).seconds * 1e6
        print(f"sum {n:>9d}: crossover eval {w:7.1f} us (kernel events {k:6.1f}), torch sum+sync {wall_us(ts):7.1f} us", flush=True)


SPARSE_CHILD = """
import statistics, sys, time, numpy as np, crossover as xo
from crossover.compare.workloads import make_sparse
inp = make_sparse(4096)
a, b = (xo.sparse.csr_matrix(m[:3], shape=m[3]) for m in (inp["a"], inp["b"]))
dev = sys.argv[1]
with xo.device(dev):
    for _ in range(2):
        c = a @ b
    ts = []
    for _ in range(7):
        t0 = time.perf_counter(); c = a @ b; ts.append(time.perf_counter() - t0)
print(f"{dev}: {statistics.median(ts)*1e3:8.2f} ms, nnz a {a.nnz} b {b.nnz} product {c.nnz}")
"""


def sparse():
    for label, dev, extra in (("cpu", "cpu", {}), ("gpu cuSPARSE", "gpu", {}), ("gpu core kernel", "gpu", {"CROSSOVER_GPU_SPARSE": "core"})):
        r = subprocess.run([sys.executable, "-c", SPARSE_CHILD, dev], env=dict(os.environ, **extra),
                           capture_output=True, text=True, timeout=120)
        print(f"sparse 4096 {label:16s}: {r.stdout.strip()} {r.stderr.strip()[-300:]}", flush=True)


for name, f in (("matmul 4096 float32", matmul), ("sums", sums), ("sparse", sparse)):
    print(f"== {name}", flush=True)
    try:
        f()
    except Exception as ex:
        print(f"{name} failed: {ex!r}")
