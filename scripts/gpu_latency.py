"""Latency on a GPU (`scripts/gpu-check.sh large` runs it): a small fused
kernel's call to result on GPU-resident data, and its first call in a
fresh process, compiled (an empty kernel cache) and then loaded from the
disk cache by a second process. Each process first runs another kernel,
so the CUDA context's start is not counted."""

import os
import subprocess
import sys
import tempfile

CHILD = r"""
import time
import numpy as np
import crossover as xo

a = np.random.default_rng(1).random(1000, dtype=np.float32)
x = xo.to_device(xo.asarray(a), "gpu")
with xo.device("gpu"):
    (x + 1.0).eval()
    t0 = time.perf_counter()
    y = (xo.sin(x) * 3.0 - 0.25).eval()
    first = time.perf_counter() - t0
    runs = []
    for _ in range(300):
        t0 = time.perf_counter()
        (xo.sin(x) * 3.0 - 0.25).eval()
        runs.append(time.perf_counter() - t0)
assert y.device == "gpu", y.device
np.testing.assert_allclose(y.numpy(), np.sin(a) * 3.0 - 0.25, rtol=2e-6, atol=2e-6)
runs.sort()
print(f"{first * 1e3:.3f} {runs[len(runs) // 2] * 1e6:.1f}")
"""


def child(cache: str) -> tuple[float, float]:
    env = dict(os.environ, CROSSOVER_KERNEL_CACHE=cache)
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120
    )
    if out.returncode != 0:
        sys.exit(f"child failed:\n{out.stdout}\n{out.stderr}")
    first, median = out.stdout.split()
    return float(first), float(median)


with tempfile.TemporaryDirectory() as cache:
    cold, steady = child(cache)
    warm, steady2 = child(cache)
print(f"first call, empty kernel cache (a compile):     {cold:8.3f} ms")
print(f"first call, new process, disk cache hit:        {warm:8.3f} ms")
print(f"call to result, compiled (median of 300):       {steady:8.1f} us, {steady2:.1f} us (second process)")
