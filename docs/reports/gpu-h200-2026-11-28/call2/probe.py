"""Call 2 probe (session 27): where the Python path's extra time on a
4096 float32 matmul goes (compare: crossover-gpu 3.81 ms, bench's engine
2.78 ms, PyTorch 2.81 ms), and whether crossover's OpenCL discovery leaves
OCL_ICD_FILENAMES as it found it."""
import ctypes, json, os, statistics, subprocess, sys, time
import numpy as np

OUT = os.environ.get("OUT", "/tmp")


def med_ms(run, n=10):
    for _ in range(3):
        run()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        run()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def matmul():
    import crossover as xo
    import torch
    n = 4096
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    xa = xo.to_device(xo.asarray(a), "gpu")
    xb = xo.to_device(xo.asarray(b), "gpu")
    keep = []
    print(f"xo (a@b).eval(), result dropped     {med_ms(lambda: (xa @ xb).eval()):8.3f} ms")
    print(f"xo (a@b).eval(), results kept        {med_ms(lambda: keep.append((xa @ xb).eval())):8.3f} ms")
    keep.clear()
    with xo.device("gpu"):
        print(f"xo under device('gpu'), dropped      {med_ms(lambda: (xa @ xb).eval()):8.3f} ms")
    e = xo.explain(xa @ xb)
    print(f"xo explain seconds (events)          {e.seconds * 1e3:8.3f} ms")
    print(str(e)[:1500])
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()

    def tm():
        (ta @ tb)
        torch.cuda.synchronize()
    print(f"torch a@b + synchronize              {med_ms(tm):8.3f} ms")


TRACE_CHILD = """
import numpy as np, crossover as xo
rng = np.random.default_rng(0)
a = rng.random((4096, 4096), dtype=np.float32)
xa = xo.to_device(xo.asarray(a), "gpu"); xb = xo.to_device(xo.asarray(a), "gpu")
for _ in range(8):
    (xa @ xb).eval()
"""

ENV_CHILD = """
import ctypes, os, crossover as xo
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
before = os.environ.get("OCL_ICD_FILENAMES")
info = xo.info()
print("gpu:", info.get("gpu"), "| devices:", info.get("devices"))
print("OCL_ICD_FILENAMES before:", before, "| C environ after:", libc.getenv(b"OCL_ICD_FILENAMES"))
"""


def main():
    print("== matmul 4096 float32, resident", flush=True)
    try:
        matmul()
    except Exception as ex:  # the probe reports, never stops the call
        print("matmul probe failed:", repr(ex))
    path = os.path.join(OUT, "matmul-trace.json")
    r = subprocess.run([sys.executable, "-c", TRACE_CHILD], env=dict(os.environ, CROSSOVER_TRACE=path),
                       capture_output=True, text=True, timeout=120)
    print("trace child rc", r.returncode, r.stderr[-500:])
    print("== crossover's OpenCL discovery and OCL_ICD_FILENAMES", flush=True)
    for gpu in ("opencl:NVIDIA", "opencl"):
        r = subprocess.run([sys.executable, "-c", ENV_CHILD], env=dict(os.environ, CROSSOVER_GPU=gpu),
                           capture_output=True, text=True, timeout=120)
        print(f"CROSSOVER_GPU={gpu}: rc={r.returncode}\n{r.stdout.strip()}\n{r.stderr.strip()[-400:]}")


main()
