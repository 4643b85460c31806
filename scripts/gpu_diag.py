"""Diagnostics for docs/gpu.md, on a machine with an NVIDIA GPU, CuPy and
PyTorch (`scripts/gpu-check.sh diag` runs it after `run` and `large`):

1. sums by size under each reduction segment shape
   (`CROSSOVER_GPU_REDUCE_SEGMENTS=points,most`, one process per shape),
   crossover's kernel time from its CUDA events (`explain(...).seconds`)
   beside PyTorch's and CuPy's sums timed by CUDA events;
2. call to result of a small kernel (1,000 float32, resident): crossover
   forced onto the GPU, CuPy and PyTorch, each read back to the host;
3. host-device copies of 400 MB: the host's memcpy into and out of pinned
   memory (what staging can reach), PyTorch from pinned and pageable
   memory (the link's rate here), crossover's `to_device` and `np.asarray`
   (with where each array was and whether the values came back right);
4. OpenCL platforms seen by child processes of a process holding an NVIDIA
   OpenCL context and a CUDA context (environment, inherited descriptors),
   and whether crossover's listing leaves OCL_ICD_FILENAMES as it was.

Medians; inputs made before timing; one process per shape so the knob,
read once, takes effect. Arguments name the parts to run (`gpu_diag.py 2
3`); none runs all four."""

import ctypes
import os
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES = (1_000_000, 16_000_000, 100_000_000)
SHAPES = ("4096,1024", "4096,528", "4096,1056", "4096,2112", "4096,4224", "1024,4224", "16384,1056")


def med_us(v):
    return statistics.median(v) * 1e6


def shape_child():
    import crossover as xo

    out = []
    for n in SIZES:
        x = xo.to_device(xo.asarray(np.random.default_rng(2).random(n, dtype=np.float32)), "gpu")
        with xo.device("gpu"):
            for _ in range(5):
                x.sum().eval()
            wall, kern = [], []
            for _ in range(30):
                s = x.sum()
                t0 = time.perf_counter()
                s.eval()
                wall.append(time.perf_counter() - t0)
                kern.append(xo.explain(x.sum()).seconds)
        out.append(f"{n:>11,d}: kernel {med_us(kern):8.1f} us ({4 * n / statistics.median(kern) / 1e12:5.2f} TB/s), call {med_us(wall):8.1f} us")
    print(" | ".join(out), flush=True)


def peer_sums():
    import cupy as cp
    import torch
    from gpu_peers import median_s as ev

    for n in SIZES:
        t = torch.rand(n, device="cuda", dtype=torch.float32)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            tt = ev(lambda: t.sum())
            c = cp.asarray(t)
            tc = ev(lambda: c.sum())
        print(f"  peers {n:>11,d}: torch {tt * 1e6:8.1f} us ({4 * n / tt / 1e12:5.2f} TB/s), cupy {tc * 1e6:8.1f} us", flush=True)


TRACE_CHILD = r"""
import numpy as np
import crossover as xo
a = np.random.default_rng(1).random(1000, dtype=np.float32)
x = xo.to_device(xo.asarray(a), "gpu")
with xo.device("gpu"):
    for _ in range(330):
        (xo.sin(x) * 3.0 - 0.25).eval()
"""


def host_enqueue():
    """The host's time inside the backend's run (binding to a launch: launch
    plan, kernel lookup, output blocks, parameters, the launch and its
    events), from the engine's trace: a GPU kernel's span there ends when
    it is enqueued, not when it finishes."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        env = dict(os.environ, CROSSOVER_TRACE=path)
        r = subprocess.run([sys.executable, "-c", TRACE_CHILD], env=env, capture_output=True, text=True, timeout=60)
        if r.returncode != 0 or not os.path.exists(path):
            print(f"  trace child failed: {r.stderr.strip()[-300:]}")
            return
        with open(path) as fh:
            events = [e for e in json.load(fh)["traceEvents"] if e.get("cat") == "kernel"]
    durs = sorted(e["dur"] for e in events[30:])
    starts = [e["ts"] for e in events[30:]]
    gaps = sorted(b - a for a, b in zip(starts, starts[1:]))
    print(f"  crossover host time in the backend's run (trace):    {statistics.median(durs):7.1f} us (of {len(durs)} kernels)")
    print(f"  crossover kernel start to next kernel start (trace): {statistics.median(gaps):7.1f} us")


def small_calls():
    import cupy as cp
    import torch

    import crossover as xo

    a = np.random.default_rng(1).random(1000, dtype=np.float32)
    x = xo.to_device(xo.asarray(a), "gpu")
    c = cp.asarray(a)
    t = torch.from_numpy(a).cuda()

    def timed(run, n=300):
        for _ in range(30):
            run()
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            run()
            ts.append(time.perf_counter() - t0)
        return med_us(ts)

    with xo.device("gpu"):
        print(f"  crossover sin(x)*3-0.25, eval on the GPU (resident):  {timed(lambda: (xo.sin(x) * 3.0 - 0.25).eval()):7.1f} us")
        print(f"  crossover the same, np.asarray of the result:        {timed(lambda: np.asarray(xo.sin(x) * 3.0 - 0.25)):7.1f} us")
        print(f"  crossover x.sum() eval (resident):                   {timed(lambda: x.sum().eval()):7.1f} us")
        e = xo.explain(xo.sin(x) * 3.0 - 0.25)
        print(f"  crossover kernel by its events:                      {e.seconds * 1e6:7.1f} us")
        # Where the host's time goes: building the expression, planning it
        # (no run), and the CPU's whole call on the same data in host memory.
        print(f"  crossover building sin(x)*3-0.25 (no evaluation):    {timed(lambda: xo.sin(x) * 3.0 - 0.25):7.1f} us")
        print(f"  crossover building + planning (explain, run=False):  {timed(lambda: xo.explain(xo.sin(x) * 3.0 - 0.25, run=False)):7.1f} us")
    host_enqueue()
    h = xo.asarray(a)
    with xo.device("cpu"):
        print(f"  crossover the same on the CPU, np.asarray:           {timed(lambda: np.asarray(xo.sin(h) * 3.0 - 0.25)):7.1f} us")
    print(f"  CuPy (cp.sin(c)*3-0.25).get():                       {timed(lambda: (cp.sin(c) * 3.0 - 0.25).get()):7.1f} us")
    print(f"  CuPy the same, synchronize only:                     {timed(lambda: ((cp.sin(c) * 3.0 - 0.25), cp.cuda.Device().synchronize())):7.1f} us")
    print(f"  PyTorch (torch.sin(t)*3-0.25).cpu():                 {timed(lambda: (torch.sin(t) * 3.0 - 0.25).cpu()):7.1f} us")
    print(f"  PyTorch t.sum().item():                              {timed(lambda: t.sum().item()):7.1f} us")


def copies():
    import torch

    import crossover as xo

    n = 100_000_000
    host = np.random.default_rng(3).random(n, dtype=np.float32)
    th = torch.from_numpy(host)
    pinned = th.pin_memory()
    dev = torch.empty(n, dtype=torch.float32, device="cuda")

    def wall(run, k=7):
        run()
        torch.cuda.synchronize()
        ts = []
        for _ in range(k):
            t0 = time.perf_counter()
            run()
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    gb = 4 * n / 1e9
    # What staging through pinned buffers can reach at best: the host's own
    # memcpy into and out of pinned memory (PyTorch's CPU copy uses all its
    # threads; NumPy's copyto one).
    other = np.empty_like(host)
    for name, run in (
        ("numpy copyto, 1 thread", lambda: np.copyto(other, host)),
        (f"torch pageable -> pinned ({torch.get_num_threads()} thr)", lambda: pinned.copy_(th)),
        (f"torch pinned -> pageable ({torch.get_num_threads()} thr)", lambda: th.copy_(pinned)),
    ):
        s = wall(run)
        print(f"  {name:28s} {s * 1e3:8.2f} ms  {gb / s:6.1f} GB/s")
    for name, run in (
        ("torch pinned -> gpu", lambda: dev.copy_(pinned, non_blocking=True)),
        ("torch pageable -> gpu", lambda: dev.copy_(th)),
        ("torch gpu -> pinned", lambda: pinned.copy_(dev, non_blocking=True)),
        ("torch gpu -> pageable", lambda: th.copy_(dev)),
    ):
        s = wall(run)
        print(f"  {name:28s} {s * 1e3:8.2f} ms  {gb / s:6.1f} GB/s")
    # Fresh arrays each time: an array already valid on a device is not
    # copied again.
    # A run with no calibrated profile (2026-11-28) read a GPU result back
    # in 0.15 ms, too fast for 400 MB: where each array was and whether the
    # values came back right are printed beside the times.
    ups, downs, seen = [], [], set()
    for _ in range(7):
        xa = xo.asarray(host)
        t0 = time.perf_counter()
        xg = xo.to_device(xa, "gpu")
        ups.append(time.perf_counter() - t0)
        del xa
        with xo.device("gpu"):
            y = (xg * 2.0).eval()
        where = (xg.device, y.device)
        t0 = time.perf_counter()
        back = np.asarray(xo.to_device(y, "cpu"))
        downs.append(time.perf_counter() - t0)
        seen.add((where, bool(np.array_equal(back, host * np.float32(2.0)))))
    print(f"  crossover (x, 2x) devices and result right: {sorted(seen)}")
    for name, s in (("crossover to_device(gpu)", statistics.median(ups)), ("crossover gpu -> np.asarray", statistics.median(downs))):
        print(f"  {name:28s} {s * 1e3:8.2f} ms  {gb / s:6.1f} GB/s")


# Part 4: a child of the engine's OpenCL suite on an H100 (2026-11-28) listed
# no NVIDIA OpenCL device while the same command alone did. A parent lists
# the platforms, opens an NVIDIA OpenCL context, then a CUDA context; after
# each step children list the platforms with the parent's C environment
# (what Rust's Command passes) and its descriptors inherited or closed.
libc = ctypes.CDLL(None)
OPENCL_START = dict(os.environ)


def opencl_listing():
    cl = ctypes.CDLL("libOpenCL.so.1")
    n = ctypes.c_uint()
    rc = cl.clGetPlatformIDs(0, None, ctypes.byref(n))
    if rc != 0:
        return f"clGetPlatformIDs rc={rc}"
    ids = (ctypes.c_void_p * n.value)()
    cl.clGetPlatformIDs(n, ids, None)
    out = []
    for p in ids:
        buf = ctypes.create_string_buffer(256)
        cl.clGetPlatformInfo(ctypes.c_void_p(p), 0x0902, 256, buf, None)
        nd = ctypes.c_uint()
        rc = cl.clGetDeviceIDs(ctypes.c_void_p(p), ctypes.c_ulong(0xFFFFFFFF), 0, None, ctypes.byref(nd))
        out.append(f"{buf.value.decode()}: rc={rc} devices={nd.value}")
    return "; ".join(out)


def c_environ():
    env = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, "environ")
    out, i = {}, 0
    while env[i]:
        k, _, v = env[i].decode(errors="replace").partition("=")
        out[k] = v
        i += 1
    return out


def inheritable_fds():
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            flags = int(open(f"/proc/self/fdinfo/{fd}").read().split("flags:")[1].split()[0], 8)
            if not flags & 0o2000000 and int(fd) > 2:
                out.append(f"{fd}->{os.readlink(f'/proc/self/fd/{fd}')}")
        except (OSError, IndexError, ValueError):
            pass
    return out


def report(step):
    env = c_environ()
    changed = {k: v for k, v in env.items() if OPENCL_START.get(k) != v}
    print(f"== {step}\n  C environ changed: {changed or 'nothing'}\n  fds without close-on-exec: {inheritable_fds() or 'none'}")
    for label, kw in (
        ("C environ, fds inherited", dict(env=env, close_fds=False)),
        ("C environ, fds closed", dict(env=env, close_fds=True)),
        ("start environ, fds inherited", dict(env=OPENCL_START, close_fds=False)),
    ):
        r = subprocess.run([sys.executable, __file__, "--list-opencl"], capture_output=True, text=True, timeout=60, **kw)
        print(f"  child ({label}): {r.stdout.strip()} {r.stderr.strip()[-200:]}", flush=True)


def opencl_child():
    report("before anything")
    cl = ctypes.CDLL("libOpenCL.so.1")
    n = ctypes.c_uint()
    cl.clGetPlatformIDs(0, None, ctypes.byref(n))
    plats = (ctypes.c_void_p * n.value)()
    cl.clGetPlatformIDs(n, plats, None)
    report("parent listed platforms")
    nv_dev = None
    for p in plats:
        buf = ctypes.create_string_buffer(256)
        cl.clGetPlatformInfo(ctypes.c_void_p(p), 0x0902, 256, buf, None)
        if b"NVIDIA" in buf.value:
            d = ctypes.c_void_p()
            cl.clGetDeviceIDs(ctypes.c_void_p(p), ctypes.c_ulong(0xFFFFFFFF), 1, ctypes.byref(d), None)
            nv_dev = d
    if nv_dev is not None:
        err = ctypes.c_int()
        cl.clCreateContext.restype = ctypes.c_void_p
        _ctx = cl.clCreateContext(None, 1, ctypes.byref(nv_dev), None, None, ctypes.byref(err))
        print(f"  NVIDIA OpenCL context: err={err.value}")
        report("parent holds an NVIDIA OpenCL context")
    try:
        cu = ctypes.CDLL("libcuda.so.1")
        c = ctypes.c_void_p()
        print(f"  cuInit={cu.cuInit(0)} retain={cu.cuDevicePrimaryCtxRetain(ctypes.byref(c), 0)}")
        report("parent also holds a CUDA context")
    except OSError as e:
        print(f"  no CUDA driver: {e}")
    crossover_keeps_icd_filenames()


CROSSOVER_OPENCL_CHILD = """
import ctypes, crossover as xo
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
print(xo.info()["gpu"], "| after:", (libc.getenv(b"OCL_ICD_FILENAMES") or b"(unset)").decode())
"""


def crossover_keeps_icd_filenames():
    """crossover's own OpenCL listing in a fresh process: the ICD loader
    splits OCL_ICD_FILENAMES in place (above); crossover puts it back, so
    the children it starts see every platform."""
    env = dict(OPENCL_START, CROSSOVER_GPU="opencl:NVIDIA")
    r = subprocess.run([sys.executable, "-c", CROSSOVER_OPENCL_CHILD], env=env, capture_output=True, text=True, timeout=120)
    print(f"== crossover listed platforms (CROSSOVER_GPU=opencl:NVIDIA)\n"
          f"  before: {OPENCL_START.get('OCL_ICD_FILENAMES', '(unset)')}; {r.stdout.strip()} {r.stderr.strip()[-300:]}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--shape-child":
        shape_child()
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--list-opencl":
        print(opencl_listing())
        return
    parts = set(sys.argv[1:]) or {"1", "2", "3", "4"}
    if "1" in parts:
        print("== 1. sums by segment shape (points per segment, most segments)", flush=True)
        for shape in SHAPES:
            env = dict(os.environ, CROSSOVER_GPU_REDUCE_SEGMENTS=shape)
            r = subprocess.run([sys.executable, __file__, "--shape-child"], env=env, capture_output=True, text=True, timeout=60)
            print(f"  {shape:>11s}: {r.stdout.strip() or r.stderr.strip()[-300:]}", flush=True)
        peer_sums()
    if "2" in parts:
        print("== 2. call to result, 1,000 float32 resident on the GPU", flush=True)
        small_calls()
    if "3" in parts:
        print("== 3. host-device copies of 400 MB", flush=True)
        copies()
    if "4" in parts:
        print("== 4. OpenCL platforms seen by child processes", flush=True)
        opencl_child()


if __name__ == "__main__":
    main()
