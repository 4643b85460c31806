"""``python -m crossover.compare.ops_causes``: focused measurements of why
single-op calls lose to NumPy (issue 23), for whoever fixes them in the
engine. Each section isolates one cost:

- ``fixed``: time per call against size (1 ... 10,000 elements) and the
  fitted intercept (the per-call cost above the kernel) and slope;
- ``pieces``: one small call taken apart: building the lazy array, the
  evaluation, the NumPy view of the result, the Python wrapper;
- ``profile``: cProfile of small calls (the Python frames on the way);
- ``asarray``: ``xo.asarray(numpy_array)`` against a NumPy copy;
- ``np_in``: NumPy arrays passed straight into crossover calls;
- ``threads``: ``CROSSOVER_NUM_THREADS=1`` against the default, by size
  (child processes: the engine reads the variable once);
- ``faults``: minor page faults and time per call at 1e6-1e7 elements,
  NumPy with and without ``out=``;
- ``powers``: ``x ** p`` against the ufunc NumPy turns it into.

Times are medians of 7 batches of about 20 ms, in microseconds."""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

SECTIONS = ("fixed", "pieces", "profile", "asarray", "np_in", "threads", "faults", "powers")


def per_call_us(run: Callable[[], Any], batch_time: float = 0.02, rounds: int = 7) -> float:
    """Median over ``rounds`` batches of the time per call, microseconds."""
    run()
    t = time.perf_counter()
    run()
    k = max(1, round(batch_time / max(time.perf_counter() - t, 1e-9)))
    samples = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(k):
            run()
        samples.append((time.perf_counter() - t) / k)
    samples.sort()
    return samples[len(samples) // 2] * 1e6


def _inputs(n: int, dtype: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return ((0.1 + rng.random(n)).astype(dtype), (0.1 + rng.random(n)).astype(dtype))


def fit(ns: list[int], us: list[float]) -> tuple[float, float]:
    """Least-squares intercept (us) and slope (ns per element)."""
    slope, intercept = np.polyfit(np.asarray(ns, float), np.asarray(us), 1)
    return float(intercept), float(slope * 1e3)


def fixed(xo: Any) -> list[str]:
    ns = [1, 10, 100, 1000, 10_000]
    cases: dict[str, tuple[Callable, Callable]] = {
        "a + b": (lambda a, b: lambda: a + b, lambda xa, xb: lambda: np.asarray(xa + xb)),
        "add(a, b)": (lambda a, b: lambda: np.add(a, b),
                      lambda xa, xb: lambda: np.asarray(xo.add(xa, xb))),
        "sin(a)": (lambda a, b: lambda: np.sin(a), lambda xa, xb: lambda: np.asarray(xo.sin(xa))),
        "sum(a)": (lambda a, b: lambda: np.sum(a), lambda xa, xb: lambda: np.asarray(xo.sum(xa))),
        "a.sum()": (lambda a, b: lambda: a.sum(), lambda xa, xb: lambda: np.asarray(xa.sum())),
    }
    out = ["| call (float32) | system | " + " | ".join(f"n={n}" for n in ns)
           + " | intercept us | ns/elem |", "|---|---|" + "---:|" * (len(ns) + 2)]
    for name, (np_case, xo_case) in cases.items():
        for system, make in (("numpy", np_case), ("crossover", xo_case)):
            us = []
            for n in ns:
                a, b = _inputs(n)
                args = (a, b) if system == "numpy" else (xo.asarray(a), xo.asarray(b))
                us.append(per_call_us(make(*args)))
            c, s = fit(ns[:-1], us[:-1])  # up to 1000: the fixed cost, before threads start
            out.append(f"| `{name}` | {system} | " + " | ".join(f"{u:.2f}" for u in us)
                       + f" | {c:.2f} | {s:.2f} |")
    return out


def pieces(xo: Any) -> list[str]:
    from .. import _C

    a, b = _inputs(1000)
    xa, xb = xo.asarray(a), xo.asarray(b)
    done = xa + xb
    np.asarray(done)
    o = np.empty_like(a)
    rows = [
        ("numpy `a + b`", lambda: a + b),
        ("numpy `np.add(a, b, out=o)`", lambda: np.add(a, b, out=o)),
        ("`xa + xb` (lazy array built, dropped unevaluated)", lambda: xa + xb),
        ("`_C.ufunc('add', xa, xb)` (built, dropped)", lambda: _C.ufunc("add", xa, xb)),
        ("`xo.add(xa, xb)` (Python wrapper; built, dropped)", lambda: xo.add(xa, xb)),
        ("`(xa + xb).eval()` (built and computed)", lambda: (xa + xb).eval()),
        ("`np.asarray(xa + xb)` (the user's call)", lambda: np.asarray(xa + xb)),
        ("`np.asarray(r)`, r already computed (view only)", lambda: np.asarray(done)),
        ("`xo.sum(xa)` (Python route; built, dropped)", lambda: xo.sum(xa)),
        ("`xa.sum()` (method; built, dropped)", lambda: xa.sum()),
        ("`xa.sum().eval()`", lambda: xa.sum().eval()),
        ("`np.asarray(xo.sum(xa))`", lambda: np.asarray(xo.sum(xa))),
        ("numpy `np.sum(a)`", lambda: np.sum(a)),
    ]
    out = ["| piece (1000 float32 elements) | us per call |", "|---|---:|"]
    out += [f"| {name} | {per_call_us(run):.2f} |" for name, run in rows]
    return out


def profile(xo: Any) -> list[str]:
    a, b = _inputs(1000)
    xa, xb = xo.asarray(a), xo.asarray(b)
    out = []
    for name, run in (("np.asarray(xo.add(xa, xb))", lambda: np.asarray(xo.add(xa, xb))),
                      ("np.asarray(xo.sum(xa))", lambda: np.asarray(xo.sum(xa)))):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(20_000):
            run()
        prof.disable()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(8)
        lines = [ln for ln in text.getvalue().splitlines() if ln.strip()]
        start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
        out += [f"`{name}`, 20,000 calls (cProfile adds its own cost per Python frame):", "```"]
        out += lines[start:start + 9] + ["```", ""]
    return out


def asarray(xo: Any) -> list[str]:
    out = ["| n | dtype | `xo.asarray(a)` us | `a.copy()` us | `np.asarray(xa)` us | asarray GB/s |",
           "|---:|---|---:|---:|---:|---:|"]
    for dtype in ("float32", "float64"):
        for n in (1000, 100_000, 1_000_000, 10_000_000):
            a, _ = _inputs(n, dtype)
            xa = xo.asarray(a)
            t_x = per_call_us(lambda: xo.asarray(a))
            t_c = per_call_us(lambda: a.copy())
            t_v = per_call_us(lambda: np.asarray(xa))
            out.append(f"| {n} | {dtype} | {t_x:.2f} | {t_c:.2f} | {t_v:.2f} | "
                       f"{a.nbytes / (t_x * 1e-6) / 1e9:.1f} |")
    return out


def np_in(xo: Any) -> list[str]:
    out = ["| n (float32) | numpy `a + b` | `np.asarray(xo.add(xa, xb))` | `np.asarray(xo.add(a, b))` "
           "| extra for NumPy inputs | two `a.copy()` |", "|---:|---:|---:|---:|---:|---:|"]
    for n in (1000, 100_000, 1_000_000, 10_000_000):
        a, b = _inputs(n)
        xa, xb = xo.asarray(a), xo.asarray(b)
        t = [per_call_us(f) for f in (lambda: a + b, lambda: np.asarray(xo.add(xa, xb)),
                                      lambda: np.asarray(xo.add(a, b)),
                                      lambda: (a.copy(), b.copy()))]
        out.append(f"| {n} | {t[0]:.1f} | {t[1]:.1f} | {t[2]:.1f} | {t[2] - t[1]:.1f} | {t[3]:.1f} |")
    return out


THREAD_SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
THREAD_CASES = ("add", "sin", "sum")


def thread_child() -> dict[str, float]:
    """Run in a child process: time the thread cases at this process's
    ``CROSSOVER_NUM_THREADS``."""
    import crossover as xo

    res = {}
    for n in THREAD_SIZES:
        a, b = _inputs(n)
        xa, xb = xo.asarray(a), xo.asarray(b)
        res[f"add {n}"] = per_call_us(lambda: np.asarray(xa + xb))
        res[f"sin {n}"] = per_call_us(lambda: np.asarray(xo.sin(xa)))
        res[f"sum {n}"] = per_call_us(lambda: np.asarray(xo.sum(xa)))
        res[f"numpy add {n}"] = per_call_us(lambda: a + b)
        res[f"numpy sin {n}"] = per_call_us(lambda: np.sin(a))
        res[f"numpy sum {n}"] = per_call_us(lambda: np.sum(a))
    return res


def threads(xo: Any) -> list[str]:
    runs = {}
    for t in ("1", "2"):
        env = dict(os.environ, CROSSOVER_NUM_THREADS=t)
        done = subprocess.run([sys.executable, "-m", "crossover.compare.ops_causes", "--thread-child"], env=env,
                              capture_output=True, text=True, check=True)
        runs[t] = json.loads(done.stdout.strip().splitlines()[-1])
    out = ["| case (float32) | n | numpy us | crossover 1 thread us | crossover 2 threads us "
           "| ratio 1 thread | ratio 2 threads |", "|---|---:|---:|---:|---:|---:|---:|"]
    for case in THREAD_CASES:
        for n in THREAD_SIZES:
            base = runs["2"][f"numpy {case} {n}"]
            one, two = runs["1"][f"{case} {n}"], runs["2"][f"{case} {n}"]
            out.append(f"| {case} | {n} | {base:.1f} | {one:.1f} | {two:.1f} | "
                       f"{base / one:.2f}x | {base / two:.2f}x |")
    return out


def _faults(run: Callable[[], Any], calls: int = 5) -> float:
    run()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        run()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def faults(xo: Any) -> list[str]:
    out = ["| n | dtype | output pages (4 KiB) | call | us per call | minor faults per call |",
           "|---:|---|---:|---|---:|---:|"]
    for n in (1_000_000, 10_000_000):
        for dtype in ("float32", "float64"):
            a, b = _inputs(n, dtype)
            xa, xb = xo.asarray(a), xo.asarray(b)
            o = np.empty_like(a)
            for name, run in (("numpy `a + b`", lambda: a + b),
                              ("numpy `np.add(a, b, out=o)`", lambda: np.add(a, b, out=o)),
                              ("`np.asarray(xa + xb)`", lambda: np.asarray(xa + xb)),
                              ("numpy `np.sin(a)`", lambda: np.sin(a)),
                              ("numpy `np.sin(a, out=o)`", lambda: np.sin(a, out=o)),
                              ("`np.asarray(xo.sin(xa))`", lambda: np.asarray(xo.sin(xa)))):
                out.append(f"| {n} | {dtype} | {a.nbytes // 4096} | {name} | "
                           f"{per_call_us(run, batch_time=0.05, rounds=5):.0f} | {_faults(run):.0f} |")
    return out


def powers(xo: Any) -> list[str]:
    n = 100_000
    out = [f"| n={n} float32 | numpy us | crossover us | crossover's ufunc us | numpy's ufunc us |",
           "|---|---:|---:|---:|---:|"]
    a, _ = _inputs(n)
    xa = xo.asarray(a)
    for p, ufunc in ((0.5, "sqrt"), (2.0, "square"), (-1.0, "reciprocal"), (3.0, None), (2.5, None)):
        t_np = per_call_us(lambda: a ** p)
        t_xo = per_call_us(lambda: np.asarray(xa ** p))
        if ufunc:
            f, g = getattr(xo, ufunc), getattr(np, ufunc)
            t_u, t_g = per_call_us(lambda: np.asarray(f(xa))), per_call_us(lambda: g(a))
            tail = f"{t_u:.1f} ({ufunc}) | {t_g:.1f} |"
        else:
            tail = " | |"
        out.append(f"| `x ** {p:g}` | {t_np:.1f} | {t_xo:.1f} | {tail}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m crossover.compare.ops_causes", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sections", nargs="*", metavar="SECTION",
                   help=f"what to measure (default: all): {', '.join(SECTIONS)}")
    p.add_argument("--thread-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        p.error(f"unknown section {', '.join(unknown)}; known: {', '.join(SECTIONS)}")
    if args.thread_child:
        print(json.dumps(thread_child()))
        return 0
    import crossover as xo

    info = xo.info()
    print(f"crossover {info['version']}, SIMD {info['simd']}, {info['threads']} threads; "
          f"numpy {np.__version__}; CROSSOVER_NUM_THREADS="
          f"{os.environ.get('CROSSOVER_NUM_THREADS', '(unset)')}\n")
    for name in args.sections or SECTIONS:
        print(f"## {name}\n")
        print("\n".join(globals()[name](xo)) + "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
