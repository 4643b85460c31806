"""``python -m crossover.compare --memory``: memory-bound kernels against
the machine's memory bandwidth, measured in the same rounds.

Issue 16's target 4: on 16M+ float32 elements, ``sum``, ``mean``, ``std``,
the ``axis=0`` and ``axis=1`` reductions and ``a*b + c`` reach at least 80%
of the STREAM-triad bandwidth measured in the same run, counting each input
read once and each output written once. The virtual machines this project
runs on move between 31 and 77 GB/s from day to day, so every kernel is
timed interleaved with STREAM's triad (``crossover._crossover.StreamTriad``:
float64 arrays of at least four times the last-level cache each, all engine
threads, 24 bytes an element as STREAM counts) and with NumPy, round by
round (``timing.measure_interleaved``); the ratio to the triad is taken
round by round (the two ran milliseconds apart) and its median reported. Every result is checked against a
float64 reference first. Details: docs/benchmarks.md, "Memory-bound kernels
against STREAM's triad".

Issue 16's target 3 (the Python path within 10% of the engine) is measured
in the same rounds: ``engine`` is the same kernel written with the Rust API
over the same arrays (``crossover._crossover.EngineKernel``), and
``python_over_engine`` the median over the rounds of the Python path's
time over the engine's.
"""

from __future__ import annotations

import argparse
import math
import platform
import shlex
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import machine
from .cli import _Progress, _short
from .timing import Interleaved, measure_interleaved

EXIT_OK, EXIT_FAILED_CHECK, EXIT_USAGE = 0, 1, 2
#: The target: each kernel's bandwidth over the triad's (median of the per-round ratios).
TARGET = 0.8
ELEMENTS = 1 << 24  # 4096 x 4096 float32: 64 MiB, twice the L3 of most of this project's VMs
#: STREAM's rule: each triad array at least four times the last-level cache
#: (32 MiB on this project's VMs): 128 MiB of float64.
TRIAD_ELEMENTS = 1 << 24
FULL = Interleaved(rounds=11, batch_time=20e-3, max_time=20.0)
QUICK = Interleaved(rounds=3, batch_time=5e-3, max_time=2.0)
SEED = 16  # the number
TOL = {"float32": 2e-6, "float64": 1e-12}


@dataclass(frozen=True)
class Kernel:
    name: str
    inputs: int  # how many input arrays of the size (``a``, ``b``, ``c``)
    matrix: bool  # inputs shaped (rows, cols) rather than flat
    call: Callable[[Any, Any, Any], Any]  # (a, b, c) -> result, NumPy or crossover
    #: bytes a call must move: its inputs read once, its output written once
    moved: Callable[[int, int, int], int]  # (elements, rows, cols) in elements


def _reduction(method: str, axis: int | None) -> Callable[[Any, Any, Any], Any]:
    if axis is None:
        return lambda a, b, c: getattr(a, method)()
    return lambda a, b, c: getattr(a, method)(axis=axis)


#: The kernels of target 4, plus the column and row extremes (``max``) whose
#: passes Dask graphs run per chunk.
KERNELS: dict[str, Kernel] = {k.name: k for k in (
    Kernel("sum", 1, False, _reduction("sum", None), lambda n, r, c: n),
    Kernel("mean", 1, False, _reduction("mean", None), lambda n, r, c: n),
    Kernel("std", 1, False, _reduction("std", None), lambda n, r, c: n),
    Kernel("max", 1, False, _reduction("max", None), lambda n, r, c: n),
    Kernel("sum(axis=0)", 1, True, _reduction("sum", 0), lambda n, r, c: n + c),
    Kernel("sum(axis=1)", 1, True, _reduction("sum", 1), lambda n, r, c: n + r),
    Kernel("std(axis=1)", 1, True, _reduction("std", 1), lambda n, r, c: n + r),
    Kernel("mean(axis=0)", 1, True, _reduction("mean", 0), lambda n, r, c: n + c),
    Kernel("std(axis=0)", 1, True, _reduction("std", 0), lambda n, r, c: n + c),
    Kernel("max(axis=0)", 1, True, _reduction("max", 0), lambda n, r, c: n + c),
    Kernel("max(axis=1)", 1, True, _reduction("max", 1), lambda n, r, c: n + r),
    Kernel("a*b + c", 3, False, lambda a, b, c: a * b + c, lambda n, r, c: 4 * n),
    # Issue 16's conditional sum, ``sum(where(a > 0.5, a*a, -a))`` (the
    # compare workload's name; its float64 form: ``--dtypes float64``).
    Kernel("conditional_accumulate", 1, False,
           lambda a, b, c: _where(a)(a > 0.5, a * a, -a).sum(), lambda n, r, c: n),
)}


def _where(a: Any) -> Callable[..., Any]:
    """``where`` of the namespace ``a`` belongs to (NumPy or crossover)."""
    if isinstance(a, np.ndarray):
        return np.where
    import crossover as xo

    return xo.where


def matrix_shape(n: int) -> tuple[int, int]:
    """The (rows, cols) the matrix kernels see: square when ``n`` is a
    square, else rows of 4,096 (or fewer) columns."""
    side = math.isqrt(n)
    if side * side == n:
        return side, side
    cols = max(d for d in range(1, min(n, 4096) + 1) if n % d == 0)
    return n // cols, cols


def _error(got: Any, want: np.ndarray) -> float:
    """max |got - want| / (1 + |want|) over arrays, relative error of scalars."""
    g = np.asarray(got, dtype=np.float64)
    if g.shape != want.shape:
        return math.inf
    if want.ndim == 0:
        return abs(float(g) - float(want)) / max(abs(float(want)), np.finfo(float).tiny)
    return float(np.max(np.abs(g - want) / (1.0 + np.abs(want))))


def _median(values: list[float]) -> float:
    v, n = sorted(values), len(values)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def _paired_ratio(kernel: Any, triad: Any, moved: int, triad_bytes: int) -> float:
    """The kernel's bandwidth over the triad's, round by round (the two ran
    within milliseconds of each other), then the median: this VM's bandwidth
    drifts by half between rounds seconds apart, which a ratio of the two
    medians would keep."""
    return _median([(moved / k) / (triad_bytes / t) for k, t in zip(kernel.rounds_s, triad.rounds_s)])


def run_kernel(k: Kernel, host: list[np.ndarray], xarrays: list[Any], triad: Any,
               method: Interleaved, dtype: str) -> list[dict[str, Any]]:
    """The rows of one kernel: crossover (results read back with
    ``np.asarray``), the same kernel through the Rust API, NumPy and the
    triad, interleaved."""
    from crossover import _C

    a, b, c = (host + [None, None])[:3]
    xa, xb, xc = (xarrays + [None, None])[:3]
    want = np.asarray(k.call(*[h.astype(np.float64) if h is not None else None for h in (a, b, c)]))
    numpy_err = _error(k.call(a, b, c), want)
    tol = max(TOL[dtype], 4 * numpy_err)
    asarray, call = np.asarray, k.call
    thunks: dict[str, Callable[[], Any]] = {
        "crossover": lambda: asarray(call(xa, xb, xc)),
        "engine": _C.EngineKernel(k.name, xarrays).run,
        "numpy": lambda: call(a, b, c),
        "triad": triad.run,
    }
    err = _error(thunks["crossover"](), want)  # the warm-up: plans, caches, pages
    thunks["engine"]()
    thunks["numpy"]()
    timings = measure_interleaved(thunks, method)
    rows_, cols = host[0].shape if k.matrix else (host[0].size, 1)
    n = host[0].size
    moved = k.moved(n, rows_, cols) * host[0].itemsize
    triad_gbps = triad.bytes / timings["triad"].median_s / 1e9
    out = []
    for system in ("crossover", "engine", "numpy"):
        t = timings[system]
        gbps = moved / t.median_s / 1e9
        row = {
            "workload": k.name, "variant": dtype, "size": n, "elements": n, "dtype": dtype,
            "system": system, "shape": list(host[0].shape),
            "median_ms": float(f"{t.median_s * 1e3:.6g}"), "min_ms": float(f"{t.min_s * 1e3:.6g}"),
            "reps": t.reps, "bytes": moved, "gbps": round(gbps, 2),
            "triad_gbps": round(triad_gbps, 2),
            "of_triad": round(_paired_ratio(t, timings["triad"], moved, triad.bytes), 3),
        }
        if system == "crossover":
            row["ok"] = bool(err <= tol)
            row["check"] = f"err {err:.1e} (tol {tol:.0e})"
            row["target_met"] = bool(row["of_triad"] >= TARGET)
            row["python_over_engine"] = round(_median(
                [p / e for p, e in zip(t.rounds_s, timings["engine"].rounds_s)]), 3)
        elif system == "engine":
            row["ok"] = True
            row["check"] = "the crossover row's result"
        else:
            row["ok"] = True
            row["check"] = f"err {numpy_err:.1e}"
        out.append(row)
    return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m crossover.compare --memory",
        description=(
            "Memory-bound kernels (sum, mean, std, axis reductions, a*b + c) through crossover "
            "from Python, beside NumPy and STREAM's triad timed in the same rounds: bandwidth "
            "(inputs read once, outputs written once) and its ratio to the triad's. Details: "
            "docs/benchmarks.md."
        ),
        epilog="exit status: 0, 1 when a crossover result failed its float64 check, 2 for bad arguments",
    )
    p.add_argument("--kernels", type=str, default=None,
                   help=f"comma-separated kernels (default: all): {', '.join(KERNELS)}")
    p.add_argument("--elements", type=str, default=None,
                   help=f"comma-separated element counts (default {ELEMENTS}; 4096x4096 for the "
                   "axis reductions)")
    p.add_argument("--dtypes", type=str, default="float32", help="float32 (default), float64 or both")
    p.add_argument("--triad-elements", type=int, default=TRIAD_ELEMENTS,
                   help=f"float64 elements per STREAM array (default {TRIAD_ELEMENTS})")
    p.add_argument("--quick", action="store_true", help="3 short rounds (a smoke run)")
    p.add_argument("--out", type=str, default=None, help="write memory.md and memory.json here")
    p.add_argument("--format", choices=("table", "json"), default="table", help="stdout: markdown or JSON")
    return p


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def parse(argv: Sequence[str]) -> argparse.Namespace:
    p = parser()
    args = p.parse_args(list(argv))
    names = _csv(args.kernels) if args.kernels else list(KERNELS)
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        p.error(f"unknown kernel {', '.join(map(repr, unknown))}; known: {', '.join(KERNELS)}")
    args.kernels = [KERNELS[n] for n in names]
    try:
        args.elements = [int(float(t)) for t in _csv(args.elements)] if args.elements else [ELEMENTS]
    except ValueError:
        p.error(f"--elements: expected comma-separated numbers, got {args.elements!r}")
    if not args.elements or min(args.elements) < 1:
        p.error("--elements: expected positive element counts")
    args.dtypes = _csv(args.dtypes)
    if not args.dtypes or any(d not in TOL for d in args.dtypes):
        p.error(f"--dtypes: expected float32 and/or float64, got {','.join(args.dtypes)!r}")
    if args.triad_elements < 1:
        p.error("--triad-elements: expected a positive count")
    return args


def run(args: argparse.Namespace, argv: Sequence[str]) -> tuple[dict[str, Any], int]:
    import crossover as xo
    from crossover import _C

    method = QUICK if args.quick else FULL
    command = "python -m crossover.compare --memory" + ("" if not argv else " " + shlex.join(argv))
    notes, started, load = machine.start_notes(command)
    facts = machine.machine("none", load)
    triad = _C.StreamTriad(args.triad_elements)
    facts["triad_elements"] = args.triad_elements
    progress = _Progress(len(args.kernels) * len(args.elements) * len(args.dtypes))
    rows: list[dict[str, Any]] = []
    for n in args.elements:
        shape = matrix_shape(n)
        for dtype in args.dtypes:
            progress.show(f"{dtype} {n}: making inputs")
            rng = np.random.default_rng([SEED, n])
            flat = [(0.5 + rng.random(n)).astype(dtype) for _ in range(3)]
            for k in args.kernels:
                progress.show(f"{k.name} {dtype} {n}")
                host = [f.reshape(shape) if k.matrix else f for f in flat[: k.inputs]]
                try:
                    xarrays = [xo.asarray(h) for h in host]
                    rows += run_kernel(k, host, xarrays, triad, method, dtype)
                except Exception as e:  # MemoryError at sizes this machine cannot hold
                    notes.append(f"{k.name} {dtype} {n}: no rows ({_short(e)})")
                    rows.append({"workload": k.name, "variant": dtype, "size": n, "system": "crossover",
                                 "ok": False, "check": _short(e)})
                progress.step()
            del flat
    progress.close()
    triad.check()
    facts["load_average_at_end"] = machine.load_average()
    report = {
        "title": "crossover compare --memory: memory-bound kernels against STREAM's triad",
        "date": started, "command": command, "machine": facts,
        "versions": {"python": platform.python_version(), "numpy": np.__version__,
                     "crossover": xo.__version__},
        "environment": machine.environment(), "notes": notes, "method": method.describe()
        + " The triad (float64, all engine threads, STREAM's count of 24 bytes an element) runs "
        "in the same rounds, and so does the same kernel written with crossover's Rust API over "
        "the same arrays ('Rust API', timed around its call from Python, which adds well under "
        "a microsecond); each kernel's bandwidth counts its inputs read "
        "once and its output written once. 'of triad' is the median over the rounds of the "
        "kernel's bandwidth over the triad's in the same round (the GB/s columns are medians "
        "of their own).",
        "target": f"crossover at least {TARGET:.0%} of the triad's bandwidth (issue 16, target 4); "
        "the Python path at most 1.10x the Rust API's time ('Python / Rust': the median of the "
        "per-round ratios; issue 16, target 3)",
        "rows": rows,
    }
    failed = [r for r in rows if r["system"] == "crossover" and not r["ok"]]
    return report, (EXIT_FAILED_CHECK if failed else EXIT_OK)


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        f"# {report['title']}", "",
        f"- date: {report['date']}",
        f"- command: `{report['command']}`",
        f"- machine: {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory_gib')} GiB, SIMD "
        f"{m.get('simd')}, crossover threads {m.get('threads used')}, load average at start "
        f"{m.get('load_average_at_start')} and end {m.get('load_average_at_end')}",
        f"- versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()),
        f"- environment: " + "; ".join(f"{k}={v}" for k, v in report["environment"].items()),
        f"- triad: {m.get('triad_elements')} float64 elements per array",
        f"- method: {report['method']}",
        f"- target: {report['target']}",
    ]
    lines += [f"- note: {n}" for n in report["notes"]]
    lines += [
        "", "| kernel | dtype | shape | MB moved | crossover ms | GB/s | of triad | Rust API ms | "
        "Python / Rust | NumPy ms | NumPy GB/s | triad GB/s | check |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    by_key: dict[tuple, dict[str, dict]] = {}
    for r in report["rows"]:
        by_key.setdefault((r["workload"], r["variant"], r["size"]), {})[r["system"]] = r
    for (name, dtype, _n), systems in by_key.items():
        x, npr, eng = (systems.get(s, {}) for s in ("crossover", "numpy", "engine"))
        if "gbps" not in x:
            lines.append(f"| {name} | {dtype} | | | | | | | | | | | {x.get('check', '')} |")
            continue
        share = f"{x['of_triad']:.0%}"
        if not x.get("target_met"):
            share = f"**{share}**"
        lines.append(
            f"| {name} | {dtype} | {'x'.join(map(str, x['shape']))} | {x['bytes'] / 1e6:.0f} | "
            f"{x['median_ms']:.3g} | {x['gbps']:.1f} | {share} | {eng.get('median_ms', 0):.3g} | "
            f"{x.get('python_over_engine', 0):.2f} | {npr.get('median_ms', 0):.3g} | "
            f"{npr.get('gbps', 0):.1f} | {x['triad_gbps']:.1f} | {x['check']} |"
        )
    return "\n".join(lines) + "\n"


def write(report: dict[str, Any], out: str) -> list[str]:
    import json
    import os

    os.makedirs(out, exist_ok=True)
    paths = [os.path.join(out, "memory.md"), os.path.join(out, "memory.json")]
    with open(paths[0], "w", encoding="utf-8") as f:
        f.write(markdown(report))
    with open(paths[1], "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parse(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else EXIT_USAGE
    report, status = run(args, argv)
    if args.out:
        for path in write(report, args.out):
            print(f"wrote {path}", file=sys.stderr)
    if args.format == "json":
        import json

        print(json.dumps(report, indent=1))
    else:
        print(markdown(report))
    for r in report["rows"]:
        if r["system"] == "crossover" and not r["ok"]:
            print(f"FAILED CHECK: crossover {r['workload']} {r['variant']} {r['size']}: {r['check']}",
                  file=sys.stderr)
    return status


__all__ = ["KERNELS", "Kernel", "main", "matrix_shape", "parse", "run", "run_kernel"]
