import statistics, time
import numpy as np
import crossover as xo

def med(v): return statistics.median(v) * 1e6

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

