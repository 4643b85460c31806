import json, os, statistics, subprocess, sys, time
import numpy as np
import cupy as cp
import crossover as xo

def med(v): return statistics.median(v) * 1e6

print("== 1. auto placement of a small kernel on CuPy data")
a = cp.random.default_rng(6).standard_normal((200, 300), dtype=cp.float32)
x = xo.asarray(a)
for i in range(3):
    y = xo.cos(x) * 3.0 + 0.5
    print("call", i, y.device, flush=True)
time.sleep(3)
print(xo.explain(xo.cos(x) * 3.0 + 0.5))

print("== 2. forced gpu, 1000 resident elements")
a2 = np.random.default_rng(1).random(1000, dtype=np.float32)
x2 = xo.to_device(xo.asarray(a2), "gpu")
with xo.device("gpu"):
    for _ in range(30):
        (xo.sin(x2) * 3.0 - 0.25).eval()
    rec, ev = [], []
    for _ in range(200):
        t0 = time.perf_counter(); y = xo.sin(x2) * 3.0 - 0.25; t1 = time.perf_counter(); y.eval(); t2 = time.perf_counter()
        rec.append(t1 - t0); ev.append(t2 - t1)
    print(f"record {med(rec):.1f} us, eval {med(ev):.1f} us")
    print(xo.explain(xo.sin(x2) * 3.0 - 0.25))
with xo.device("auto"):
    ev = []
    for _ in range(200):
        y = xo.sin(x2) * 3.0 - 0.25; t1 = time.perf_counter(); y.eval(); ev.append(time.perf_counter() - t1)
    print(f"auto: eval {med(ev):.1f} us on {y.device}")

print("== 3. sum on the GPU by size (forced)")
for n in (10**5, 10**6, 4 * 10**6, 16 * 10**6):
    xs = xo.to_device(xo.asarray(np.random.default_rng(2).random(n, dtype=np.float32)), "gpu")
    with xo.device("gpu"):
        for _ in range(5):
            xs.sum().eval()
        ev = []
        for _ in range(50):
            t1 = time.perf_counter(); xs.sum().eval(); ev.append(time.perf_counter() - t1)
    print(f"sum {n}: {med(ev):.1f} us")
    if n == 16 * 10**6:
        with xo.device("gpu"):
            print(xo.explain(xs.sum()))

print("== 4. CuPy: one thread merging 1024 88-byte states (the merge stage's shape)")
k = cp.RawKernel(r'''
typedef struct { long long n; double s, m, q, a, b, c, d, e, f, g; } st;
extern "C" __global__ void merge(const st* part, int segs, double* out) {
  st acc = part[0];
  for (int s = 1; s < segs; ++s) { st b = part[s]; if (b.n != 0) { acc.n += b.n; acc.s += b.s; acc.m = acc.m > b.m ? acc.m : b.m; } }
  out[0] = acc.s + acc.m + (double)acc.n;
}''', "merge")
part = cp.random.random(1024 * 11).astype(cp.float64)
out = cp.zeros(1, cp.float64)
for segs in (16, 256, 1024):
    for _ in range(3): k((1,), (1,), (part, cp.int32(segs), out))
    ts = []
    for _ in range(20):
        s0, s1 = cp.cuda.Event(), cp.cuda.Event(); s0.record(); k((1,), (1,), (part, cp.int32(segs), out)); s1.record(); s1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s0, s1) / 1e3)
    print(f"merge of {segs} states in one thread: {med(ts):.1f} us")
