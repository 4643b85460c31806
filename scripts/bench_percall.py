"""Per-call cost of a few single ops, crossover beside NumPy (median us per
call, JSON on stdout). Run it once per build to compare two builds of the
extension side by side (alternate the processes; see docs/benchmarks.md):

    env -u OPENBLAS_CORETYPE PYTHONPATH=<package dir> python scripts/bench_percall.py
"""
import time, json, sys, numpy as np, crossover as xo
def med(f, n=1000):
    for _ in range(100): f()
    ts=[]
    for _ in range(n):
        t=time.perf_counter_ns(); f(); ts.append(time.perf_counter_ns()-t)
    ts.sort(); return ts[len(ts)//2]/1e3
out={}
for n in (1000, 100_000):
    a=np.random.rand(n).astype(np.float32)+0.5; b=np.random.rand(n).astype(np.float32)
    xa=xo.asarray(a); xb=xo.asarray(b)
    k=200 if n>1000 else 1000
    out[n]={
      "numpy a+b": med(lambda: a+b, k),
      "np.asarray(xa+xb)": med(lambda: np.asarray(xa+xb), k),
      "xo.asarray(a)": med(lambda: xo.asarray(a), k),
      "np.exp(a)": med(lambda: np.exp(a), k),
      "np.asarray(xo.exp(xa))": med(lambda: np.asarray(xo.exp(xa)), k),
      "a**0.5": med(lambda: a**0.5, k),
      "np.asarray(xa**0.5)": med(lambda: np.asarray(xa**0.5), k),
      "np.asarray(xo.add(a, b))": med(lambda: np.asarray(xo.add(a, b)), k),
      "a.sum()": med(lambda: a.sum(), k),
      "np.asarray(xa.sum())": med(lambda: np.asarray(xa.sum()), k),
    }
print(json.dumps(out))
