"""``python -m crossover.compare``: the command line, the run loop and the
report dict.

The report is written by the Rust report writer in the extension
(``crossover._C.report_tables`` / ``report_write``), the same one that
serves ``crossover bench --out``, so both commands give the same files."""

from __future__ import annotations

import argparse
import gc
import json
import platform
import shlex
import shutil
import sys
import warnings
from datetime import datetime, timezone
from typing import Any, Sequence

from . import checks, machine
from .systems import System, all_systems
from .timing import FULL, QUICK, Method, measure, settle
from .workloads import SIZE_NOTES, WORKLOADS, Workload, sizes_for, work

EXIT_OK, EXIT_FAILED_CHECK, EXIT_USAGE = 0, 1, 2
BASELINE, FOCUS = "numpy", "crossover"


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _parser(systems: dict[str, System]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m crossover.compare",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="systems:\n" + "\n".join(f"  {k:<10} {s.describe}" for k, s in systems.items())
        + "\n\nexit status: 0, 1 when a crossover result failed its float64 check (a peer's "
        "failed check is reported, not fatal), 2 for bad arguments",
        description=(
            "Runs the crossover benchmark workloads through crossover and its peers\n"
            "(NumPy, SciPy, numexpr, Numba, CuPy, PyTorch: each when importable), checks\n"
            "every result against float64, and reports median and minimum times side by\n"
            "side. Details: docs/compare.md."
        ),
    )
    p.add_argument("workloads", nargs="*", metavar="WORKLOAD",
                   help=f"workloads to run (default: all): {', '.join(WORKLOADS)}")
    p.add_argument("--quick", action="store_true",
                   help="sizes 100 and 1000, >= 3 runs and >= 0.05 s per case (a smoke run)")
    p.add_argument("--sizes", type=str, default=None,
                   help="comma-separated N for every workload (default: per-workload lists)")
    p.add_argument("--systems", type=str, default=None,
                   help=f"comma-separated systems (default: all): {', '.join(systems)}")
    p.add_argument("--out", type=str, default=None,
                   help="write report.md, results.json, results.csv and plots into this directory")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="stdout: markdown tables (default) or the report JSON")
    p.add_argument("--ops", action="store_true",
                   help="the per-op table instead (every ufunc and reduction beside NumPy; "
                   "`--ops --help` lists its options)")
    p.add_argument("--memory", action="store_true",
                   help="memory-bound kernels beside STREAM's triad timed in the same rounds "
                   "(`--memory --help` lists its options)")
    return p


def _sizes(p: argparse.ArgumentParser, text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        sizes = [int(t) for t in _csv(text)]
    except ValueError:
        p.error(f"--sizes: expected comma-separated integers, got {text!r}")
    if not sizes or min(sizes) < 1:
        p.error(f"--sizes: expected positive integers, got {text!r}")
    return sizes


def _select(p: argparse.ArgumentParser, names: list[str], known: Sequence[str], what: str) -> list[str]:
    unknown = [n for n in names if n not in known]
    if unknown:
        p.error(f"unknown {what} {', '.join(repr(u) for u in unknown)}; known: {', '.join(known)}")
    return [k for k in known if k in names] if names else list(known)


class _Progress:
    """One ``\\r`` line on stderr, only when stderr is a terminal."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.on = sys.stderr.isatty()
        self.width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)

    def show(self, text: str) -> None:
        if self.on:
            line = f"[{self.done}/{self.total}] {text}"[: self.width]
            sys.stderr.write("\r" + line.ljust(self.width))
            sys.stderr.flush()

    def step(self) -> None:
        self.done += 1

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def _short(e: BaseException) -> str:
    text = " ".join(str(e).split()) or "(no message)"
    return f"{type(e).__name__}: {text[:300]}"


def _sig(x: float) -> float:
    return float(f"{x:.6g}")


def run_case(system: System, w: Workload, variant: str, n: int, inputs: dict,
             cache: dict, method: Method) -> dict[str, Any]:
    """One row: set up, warm up and check, then time."""
    case = system.cases[w.name](inputs, variant)
    settle()  # the previous case's threads (OpenBLAS spins after a call) go idle first
    result = case.run()  # warm-up; compiles (numba), fills caches and plans
    got = case.host(result)
    del result
    chk = checks.check(w.name, variant, inputs, got, cache)
    del got
    t = measure(case.run, method)
    chosen = case.chosen() if callable(case.chosen) else case.chosen
    row = {
        "workload": w.name, "variant": variant, "size": n, "elements": w.elements(n),
        "dtype": w.dtype, "system": system.name,
        "median_ms": _sig(t.median_s * 1e3), "min_ms": _sig(t.min_s * 1e3), "reps": t.reps,
        "ok": chk.ok, "check": chk.detail, "chosen": chosen,
    }
    nbytes, flops, samples = work(w.name, n, inputs)
    for key, amount, unit in (("gbps", nbytes, 1e9), ("gflops", flops, 1e9),
                              ("msamples_per_s", samples, 1e6)):
        if amount > 0:
            row[key] = _sig(amount / t.median_s / unit)
    return row


def _load(names: list[str], known: dict[str, System], notes: list[str]) -> tuple[list[System], dict]:
    loaded, versions = [], {}
    for name in names:
        s = known[name]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # import-time chatter is not a result
                versions[name] = s.load()
            loaded.append(s)
        except Exception as e:  # ImportError, no device, broken install
            notes.append(f"{name}: skipped, not usable here ({_short(e)})")
    return loaded, versions


def _gpu_name(systems: list[System]) -> str:
    for s in systems:
        if s.gpu:
            try:
                name = s.gpu_name()
            except Exception:
                name = None
            if name:
                return name
    return "none"


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The checked arguments; a usage error raises SystemExit(2) (argparse)."""
    known = all_systems()
    p = _parser(known)
    args = p.parse_args(list(argv))
    args.workloads = _select(p, args.workloads, list(WORKLOADS), "workload")
    args.systems = _select(p, _csv(args.systems) if args.systems else [], list(known), "system")
    args.sizes = _sizes(p, args.sizes)
    return args


def compare(argv: Sequence[str]) -> tuple[dict[str, Any], int]:
    """Runs every case of ``argv`` and returns the report dict and the exit
    status (1 when a check failed)."""
    return run(parse(argv), argv)


def run(args: argparse.Namespace, argv: Sequence[str]) -> tuple[dict[str, Any], int]:
    known = all_systems()
    workload_names, system_names, sizes = args.workloads, args.systems, args.sizes
    method = QUICK if args.quick else FULL
    command = "python -m crossover.compare" + ("" if not argv else " " + shlex.join(argv))
    notes: list[str] = []
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    load = machine.load_average()  # before anything of ours runs
    busy = machine.busy_note(load)
    if busy:
        print(f"warning: {busy}", file=sys.stderr)
        notes.append(busy)
    blas_note = machine.coretype_note(command)
    if blas_note:
        print(f"warning: {blas_note}", file=sys.stderr)
        notes.append(blas_note)
    systems, versions = _load(system_names, known, notes)
    versions = {"python": platform.python_version(), **versions}
    workloads = [WORKLOADS[n] for n in workload_names]
    if not sizes and not args.quick:
        notes += [SIZE_NOTES[w.name] for w in workloads if w.name in SIZE_NOTES]
    plan = [(w, n) for w in workloads for n in sizes_for(w.name, args.quick, sizes)]
    total = sum(1 for w, _ in plan for v in w.variants for s in systems if s.supports(w.name, v))
    progress = _Progress(total)
    rows: list[dict[str, Any]] = []
    warned: set[tuple[str, str]] = set()
    for w, n in plan:
        todo = [(v, s) for v in w.variants for s in systems if s.supports(w.name, v)]
        if not todo:
            continue
        progress.show(f"{w.name} {n}: making inputs")
        try:
            inputs = w.make(n)
        except Exception as e:  # MemoryError at sizes this machine cannot hold
            notes.append(f"{w.name} {n}: inputs not made, cases skipped ({_short(e)})")
            progress.done += len(todo)
            continue
        cache: dict = {}
        for v, s in todo:
            label = f"{s.name} {w.name}{'/' + v if v else ''} {n}"
            progress.show(label)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("default")
                try:
                    rows.append(run_case(s, w, v, n, inputs, cache, method))
                except Exception as e:  # out of memory, unsupported, a bug: the run goes on
                    notes.append(f"{label}: error, no row ({_short(e)})")
            for m in caught:
                key = (s.name, f"{m.category.__name__}: {m.message}")
                if key not in warned:
                    warned.add(key)
                    notes.append(f"{label}: warning {key[1]}")
            progress.step()
        del inputs, cache
        gc.collect()
    progress.close()
    ran = {r["system"] for r in rows}
    report = {
        "title": "crossover compare",
        "date": started,
        "command": command,
        "machine": machine.machine(_gpu_name(systems), load),
        "versions": versions,
        "environment": machine.environment(),
        "notes": notes,
        "method": method.describe(),
        "baseline": BASELINE,
        # NumPy has no sparse product: those speedups are against SciPy.
        "fallback_baselines": ["scipy"],
        "focus": FOCUS,
        "gpu_systems": [s.name for s in systems if s.gpu and s.name in ran],
        "workloads": [{"name": w.name, "dtype": w.dtype, "size_meaning": w.size_meaning}
                      for w in workloads],
        "rows": rows,
    }
    # A peer that misses a tolerance (numexpr sums float32 in float32) is a
    # finding for the report; only crossover's own failures fail the run.
    failed = [r for r in rows if not r["ok"] and r["system"] == FOCUS]
    return report, (EXIT_FAILED_CHECK if failed else EXIT_OK)


def _writer(name: str) -> Any:
    from .. import _C

    f = getattr(_C, name, None)
    if f is None:
        raise RuntimeError(
            f"this build of crossover has no report writer (crossover._C.{name}); "
            "reinstall the extension (pip install ./crates/crossover-py)"
        )
    return f


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--ops" in argv:  # the per-op table has its own options (ops.py)
        from .ops import main as ops_main

        return ops_main([a for a in argv if a != "--ops"])
    if "--memory" in argv:  # memory-bound kernels against STREAM's triad (memory.py)
        from .memory import main as memory_main

        return memory_main([a for a in argv if a != "--memory"])
    try:
        args = parse(argv)
    except SystemExit as e:  # argparse: usage errors are exit status 2, --help 0
        return int(e.code) if isinstance(e.code, int) else EXIT_USAGE
    report, status = run(args, argv)
    text = json.dumps(report)
    try:
        if args.out:
            for path in _writer("report_write")(text, args.out):
                print(f"wrote {path}", file=sys.stderr)
        if args.format == "json":
            print(json.dumps(report, indent=1))
        else:
            print(_writer("report_tables")(text))
    except Exception as e:  # no writer in this build, an unwritable --out: keep the results
        print(f"error: {_short(e)}; the report JSON follows on stdout", file=sys.stderr)
        print(json.dumps(report, indent=1))
        return max(status, EXIT_FAILED_CHECK)
    failed = [r for r in report["rows"] if not r["ok"]]
    for r in failed:
        peer = "" if r["system"] == FOCUS else " (a peer's result; not fatal)"
        print(f"FAILED CHECK: {r['system']} {r['workload']} {r['variant']} {r['size']}: "
              f"{r['check']}{peer}", file=sys.stderr)
    return status


__all__ = ["compare", "main", "parse", "run", "run_case"]
