"""``python -m crossover.compare --ops``: the per-op table (issue 23).

Every elementwise ufunc the engine has, the ``x ** p`` forms users write,
and the reductions, each called one at a time the way users call NumPy:
``np.asarray(xo.sin(xa))`` on an input already converted with
``xo.asarray`` (column ``crossover``), the same with the NumPy array passed
straight in (``crossover_np_in``), NumPy's ``np.sin(a)`` and numexpr's
``ne.evaluate("sin(a)")`` where numexpr has the op, interleaved in one loop
(``timing.measure_interleaved``). Every result is checked against a float64
reference first, so a wrong op never shows up as a fast one.

Op definitions are here; the markdown, JSON and plot are in ``ops_report``.
"""

from __future__ import annotations

import argparse
import gc
import math
import platform
import shlex
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import machine
from .cli import _Progress, _short
from .timing import Interleaved, measure_interleaved

EXIT_OK, EXIT_FAILED_CHECK, EXIT_USAGE = 0, 1, 2
BASELINE, FOCUS = "numpy", "crossover"
#: The columns, in table order: crossover on converted inputs, crossover on
#: NumPy inputs, numexpr (NumPy is the baseline every ratio divides).
SYSTEMS = ("numpy", "crossover", "crossover_np_in", "numexpr")
SIZES = (1_000, 10_000, 100_000, 1_000_000, 10_000_000)
QUICK_SIZES = (1_000, 100_000)
DTYPES = ("float32", "float64")
FULL = Interleaved(rounds=7, batch_time=4e-3, max_time=6.0)
QUICK = Interleaved(rounds=3, batch_time=0.5e-3, max_time=1.0)

#: Input ranges (uniform, seeded): each op draws from one per argument,
#: inside its domain and away from poles, so no result is inf or NaN.
DOMAINS = {
    "signed": (-3.0, 3.0),
    "positive": (0.1, 4.0),
    "unit": (-0.999, 0.999),  # arcsin, arccos, arctanh
    "ge1": (1.0, 4.0),  # arccosh
    "tan": (-1.4, 1.4),  # inside (-pi/2, pi/2)
    "exponent": (-2.0, 2.0),  # power's second argument
    "near1": (0.999, 1.001),  # prod stays finite at 1e7 elements
}
SEED = 23  # the number

#: Value tolerance of the float64 check: max |got - want| / (1 + |want|)
#: for arrays, relative error for scalars; a result may also be as far off
#: as NUMPY_SLACK times NumPy's own error (f32 prod and cumsum at 1e7).
TOL = {"float32": 1e-5, "float64": 1e-12}
NUMPY_SLACK = 4.0


@dataclass(frozen=True)
class Op:
    name: str  # the table's label: a NumPy name or ``x**p``
    group: str  # for the plot: ops of one kind share a line
    domains: tuple[str, ...]  # one per argument
    numpy: Callable[..., Any]  # NumPy's call: the baseline, and the reference in float64
    # (crossover module, inputs are NumPy arrays) -> crossover's call; resolved
    # per case, outside the timed region (tests monkeypatch the module)
    crossover: Callable[[Any, bool], Callable[..., Any]]
    numexpr: str | None = None  # the expression over ``a`` (and ``b``)
    kind: str = "elementwise"  # elementwise | reduction | index | scan


def _xo_function(name: str) -> Callable[[Any, bool], Callable[..., Any]]:
    return lambda xo, np_in: getattr(xo, name)


def _xo_power(p: float) -> Callable[[Any, bool], Callable[..., Any]]:
    def make(xo: Any, np_in: bool) -> Callable[..., Any]:
        if np_in:  # `a ** p` on a NumPy array is NumPy's: xo.power is crossover's
            power = xo.power
            return lambda a: power(a, p)
        return lambda a: a ** p

    return make


def _np_power(p: float) -> Callable[[Any], Any]:
    return lambda a: a ** p


#: (name, group, domains, numexpr expression) of the elementwise ufuncs.
#: Engine ufuncs missing here are still run (signed inputs, no numexpr).
#: Group "identity": ops that return their (immutable) input on real
#: floats, where NumPy copies; left out of the plot's group means.
_UFUNCS: list[tuple[str, str, tuple[str, ...], str | None]] = [
    ("add", "arithmetic", ("signed", "signed"), "a + b"),
    ("subtract", "arithmetic", ("signed", "signed"), "a - b"),
    ("multiply", "arithmetic", ("signed", "signed"), "a * b"),
    ("divide", "arithmetic", ("signed", "positive"), "a / b"),
    ("maximum", "arithmetic", ("signed", "signed"), "maximum(a, b)"),
    ("minimum", "arithmetic", ("signed", "signed"), "minimum(a, b)"),
    ("negative", "arithmetic", ("signed",), "-a"),
    ("positive", "identity", ("signed",), None),
    ("absolute", "arithmetic", ("signed",), "abs(a)"),
    ("conjugate", "identity", ("signed",), None),
    ("square", "arithmetic", ("signed",), "a**2"),
    ("sqrt", "arithmetic", ("positive",), "sqrt(a)"),
    ("reciprocal", "arithmetic", ("positive",), "1 / a"),
    ("sign", "arithmetic", ("signed",), "sign(a)"),
    ("floor", "arithmetic", ("signed",), "floor(a)"),
    ("ceil", "arithmetic", ("signed",), "ceil(a)"),
    ("less", "compare/logic", ("signed", "signed"), "a < b"),
    ("less_equal", "compare/logic", ("signed", "signed"), "a <= b"),
    ("greater", "compare/logic", ("signed", "signed"), "a > b"),
    ("greater_equal", "compare/logic", ("signed", "signed"), "a >= b"),
    ("equal", "compare/logic", ("signed", "signed"), "a == b"),
    ("not_equal", "compare/logic", ("signed", "signed"), "a != b"),
    ("logical_and", "compare/logic", ("signed", "signed"), None),
    ("logical_or", "compare/logic", ("signed", "signed"), None),
    ("logical_not", "compare/logic", ("signed",), None),
    ("exp", "exp/log", ("signed",), "exp(a)"),
    ("expm1", "exp/log", ("signed",), "expm1(a)"),
    ("exp2", "exp/log", ("signed",), None),
    ("log", "exp/log", ("positive",), "log(a)"),
    ("log1p", "exp/log", ("positive",), "log1p(a)"),
    ("log10", "exp/log", ("positive",), "log10(a)"),
    ("log2", "exp/log", ("positive",), "log2(a)"),
    ("sin", "trig/hyperbolic", ("signed",), "sin(a)"),
    ("cos", "trig/hyperbolic", ("signed",), "cos(a)"),
    ("tan", "trig/hyperbolic", ("tan",), "tan(a)"),
    ("arcsin", "trig/hyperbolic", ("unit",), "arcsin(a)"),
    ("arccos", "trig/hyperbolic", ("unit",), "arccos(a)"),
    ("arctan", "trig/hyperbolic", ("signed",), "arctan(a)"),
    ("arctan2", "trig/hyperbolic", ("signed", "signed"), "arctan2(a, b)"),
    ("hypot", "trig/hyperbolic", ("signed", "signed"), "hypot(a, b)"),
    ("sinh", "trig/hyperbolic", ("signed",), "sinh(a)"),
    ("cosh", "trig/hyperbolic", ("signed",), "cosh(a)"),
    ("tanh", "trig/hyperbolic", ("signed",), "tanh(a)"),
    ("arcsinh", "trig/hyperbolic", ("signed",), "arcsinh(a)"),
    ("arccosh", "trig/hyperbolic", ("ge1",), "arccosh(a)"),
    ("arctanh", "trig/hyperbolic", ("unit",), "arctanh(a)"),
    ("power", "power", ("positive", "exponent"), "a**b"),
]
_POWERS = (0.5, 2.0, 3.0, -1.0, 2.5)
#: (name, domain, kind, numexpr expression) of the reductions and the scan.
_REDUCTIONS: list[tuple[str, str, str, str | None]] = [
    ("sum", "positive", "reduction", "sum(a)"),
    ("mean", "positive", "reduction", None),
    ("max", "signed", "reduction", "max(a)"),
    ("min", "signed", "reduction", "min(a)"),
    ("argmax", "signed", "index", None),
    ("argmin", "signed", "index", None),
    ("prod", "near1", "reduction", "prod(a)"),
    ("std", "positive", "reduction", None),
    ("cumsum", "positive", "scan", None),
]


def engine_ufuncs() -> list[str]:
    """The elementwise ufuncs of this build, as the extension lists them."""
    import crossover

    return list(crossover.info().get("ufuncs", []))


def all_ops() -> dict[str, Op]:
    """Every op of the table, keyed by label, in table order."""
    ops: dict[str, Op] = {}
    for name, group, domains, expr in _UFUNCS:
        ops[name] = Op(name, group, domains, getattr(np, name), _xo_function(name), expr)
    for name in engine_ufuncs():  # a ufunc added to the engine joins the table
        if name not in ops and hasattr(np, name):
            nin = getattr(np, name).nin
            ops[name] = Op(name, "other", ("signed",) * nin, getattr(np, name), _xo_function(name))
    for p in _POWERS:
        label = f"x**{p:g}"
        ops[label] = Op(label, "power", ("positive",), _np_power(p), _xo_power(p), f"a**{p:g}")
    for name, domain, kind, expr in _REDUCTIONS:
        group = "scan" if kind == "scan" else "reduction"
        ops[name] = Op(name, group, (domain,), getattr(np, name), _xo_function(name), expr, kind)
    return ops


# ---- inputs ------------------------------------------------------------------


class Inputs:
    """The inputs of one (size, dtype), made on first use: NumPy arrays per
    (domain, argument position), and their ``xo.asarray`` conversions. The
    values are drawn in float64 from a seed fixed by size, domain and
    position, so float32 inputs are the float64 ones rounded."""

    def __init__(self, n: int, dtype: str, xo: Any) -> None:
        self.n, self.dtype, self.xo = n, np.dtype(dtype), xo
        self.numpy: dict[tuple[str, int], np.ndarray] = {}
        self.crossover: dict[tuple[str, int], Any] = {}

    def host(self, domain: str, position: int) -> np.ndarray:
        key = (domain, position)
        if key not in self.numpy:
            lo, hi = DOMAINS[domain]
            rng = np.random.default_rng([SEED, self.n, list(DOMAINS).index(domain), position])
            self.numpy[key] = (lo + (hi - lo) * rng.random(self.n)).astype(self.dtype)
        return self.numpy[key]

    def converted(self, domain: str, position: int) -> Any:
        key = (domain, position)
        if key not in self.crossover:
            self.crossover[key] = self.xo.asarray(self.host(domain, position))
        return self.crossover[key]


# ---- checks ------------------------------------------------------------------


def value_error(got: np.ndarray, want: np.ndarray, kind: str) -> float:
    """How far ``got`` is from the reference: 0 for exact; for floats the
    largest ``|got - want| / (1 + |want|)`` (arrays) or relative error
    (scalars); inf for a wrong shape or a NaN where a number belongs."""
    if got.shape != want.shape:
        return math.inf
    if kind == "index" or want.dtype == bool:
        return 0.0 if np.array_equal(got, want) else 1.0
    g = got.astype(np.float64)
    diff = np.abs(g - want)
    scale = (1.0 + np.abs(want)) if want.ndim else max(abs(float(want)), np.finfo(float).tiny)
    err = diff / scale
    err = np.where(np.isnan(g) & np.isnan(want), 0.0, err)
    if np.isnan(err).any():
        return math.inf
    return float(np.max(err)) if err.size else 0.0


@dataclass(frozen=True)
class Check:
    ok: bool
    detail: str
    err: float


def check(got: Any, want: np.ndarray, want_dtype: np.dtype, kind: str, tol: float,
          strict_dtype: bool = True) -> Check:
    """``got`` against the reference. A result dtype other than NumPy's
    fails crossover (a drop-in must give NumPy's dtype); a peer's is noted
    (numexpr has no float32 ``maximum``: it returns float64)."""
    got = np.asarray(got)
    dtype_note = "" if got.dtype == want_dtype else f"dtype {got.dtype} (NumPy: {want_dtype}); "
    if dtype_note and strict_dtype:
        return Check(False, dtype_note.rstrip("; "), math.inf)
    err = value_error(got, want, kind)
    if got.shape != want.shape:
        return Check(False, f"shape {got.shape}, expected {want.shape}", err)
    return Check(bool(err <= tol), f"{dtype_note}err {err:.1e} (tol {tol:.0e})", err)


# ---- one case ----------------------------------------------------------------


def _thunk(f: Callable[..., Any], args: list[Any], to_host: bool) -> Callable[[], Any]:
    """``f(*args)`` (read back with ``np.asarray`` for crossover), with the
    arguments bound as defaults so the call does the least Python work."""
    asarray = np.asarray
    if len(args) == 1:
        (a,) = args
        return (lambda f=f, a=a: asarray(f(a))) if to_host else (lambda f=f, a=a: f(a))
    a, b = args
    return (lambda f=f, a=a, b=b: asarray(f(a, b))) if to_host else (lambda f=f, a=a, b=b: f(a, b))


def _numexpr_thunk(ne: Any, expr: str, args: list[np.ndarray]) -> Callable[[], Any]:
    names = dict(zip("ab", args))
    evaluate = ne.evaluate
    return lambda: evaluate(expr, local_dict=names)


def run_case(op: Op, inputs: Inputs, systems: Sequence[str], method: Interleaved,
             modules: dict[str, Any], errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of one (op, dtype, size): warm up and check every system,
    then time them together. A system that raises gets an entry in
    ``errors`` and no row."""
    dtype, n = str(inputs.dtype), inputs.n

    def error(system: str, e: BaseException) -> None:
        errors.append({"workload": op.name, "variant": dtype, "size": n, "system": system,
                       "error": _short(e)})
    args = [inputs.host(d, i) for i, d in enumerate(op.domains)]
    expected = op.numpy(*args)
    wide = [a.astype(np.float64) for a in args]
    want = np.asarray(op.numpy(*wide) if op.kind != "index" else expected)
    want_dtype = np.asarray(expected).dtype
    numpy_err = value_error(np.asarray(expected), want, op.kind)
    tol = 0.0 if op.kind == "index" or want.dtype == bool else max(TOL[dtype], NUMPY_SLACK * numpy_err)
    xo = modules["crossover"]
    thunks: dict[str, Callable[[], Any]] = {"numpy": _thunk(op.numpy, args, False)}
    for system in systems:
        try:
            if system == "crossover":
                xargs = [inputs.converted(d, i) for i, d in enumerate(op.domains)]
                thunks[system] = _thunk(op.crossover(xo, False), xargs, True)
            elif system == "crossover_np_in":
                thunks[system] = _thunk(op.crossover(xo, True), args, True)
            elif system == "numexpr" and op.numexpr and "numexpr" in modules:
                thunks[system] = _numexpr_thunk(modules["numexpr"], op.numexpr, args)
        except Exception as e:  # an op this build lacks
            error(system, e)
    checks: dict[str, Check] = {}
    for system, run in list(thunks.items()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a fallback warning is in explain, not a result
                got = run()  # the warm-up: plans, caches and first-touch pages
            checks[system] = check(got, want, want_dtype, op.kind, tol, system != "numexpr")
            del got
        except Exception as e:
            error(system, e)
            del thunks[system]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        timings = measure_interleaved(thunks, method)
    base = timings["numpy"].median_s
    rows = []
    for system, t in timings.items():
        c = checks[system]
        rows.append({
            # workload/variant/size/system/median_ms...: the report format of
            # crates/crossover-report, so `crossover report` can read ops.json
            "workload": op.name, "variant": dtype, "size": n, "elements": n, "dtype": dtype,
            "system": system, "group": op.group,
            "median_ms": float(f"{t.median_s * 1e3:.6g}"), "min_ms": float(f"{t.min_s * 1e3:.6g}"),
            "reps": t.reps, "ok": c.ok, "check": c.detail,
            "ratio": float(f"{base / t.median_s:.4g}"),
        })
    return rows


# ---- the run -----------------------------------------------------------------


def copy_bandwidth_gbps(nbytes: int = 1 << 27) -> float:
    """One core's memory bandwidth: the best of 5 NumPy copies of 128 MiB,
    bytes read plus written per second (the VM's varies from day to day)."""
    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    best = math.inf
    for _ in range(5):
        t = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t)
    return round(2 * nbytes / best / 1e9, 1)


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m crossover.compare --ops",
        description=(
            "The per-op table: every elementwise ufunc of the engine, x**p and the reductions, "
            "called one at a time (np.asarray(xo.op(xa))) beside NumPy and numexpr, float32 "
            "and float64, by size. Ratios are NumPy time / other time. Details: "
            "docs/benchmarks-ops.md."
        ),
        epilog="exit status: 0, 1 when a crossover result failed its float64 check, 2 for bad arguments",
    )
    p.add_argument("--op", type=str, default=None, help="comma-separated ops (default: all; --list names them)")
    p.add_argument("--sizes", type=str, default=None,
                   help="comma-separated element counts (default 1e3,1e4,1e5,1e6,1e7; --quick 1e3,1e5)")
    p.add_argument("--dtypes", type=str, default=None, help="float32, float64 or both (default)")
    p.add_argument("--systems", type=str, default=None,
                   help="comma-separated columns beside numpy (default: crossover,crossover_np_in,numexpr)")
    p.add_argument("--quick", action="store_true", help="sizes 1e3 and 1e5, 3 short rounds (a smoke run)")
    p.add_argument("--out", type=str, default=None, help="write ops.md, ops.json and ops.png here")
    p.add_argument("--format", choices=("table", "json"), default="table", help="stdout: markdown or JSON")
    p.add_argument("--list", action="store_true", help="print the ops with their groups and exit")
    return p


def parse(argv: Sequence[str]) -> argparse.Namespace:
    p = parser()
    args = p.parse_args(list(argv))
    known = all_ops()
    names = _csv(args.op) if args.op else list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        p.error(f"unknown op {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    args.ops = [known[n] for n in names]
    if args.sizes is None:
        args.sizes = list(QUICK_SIZES if args.quick else SIZES)
    else:
        try:
            args.sizes = [int(float(t)) for t in _csv(args.sizes)]  # 1e6 is welcome
        except ValueError:
            p.error(f"--sizes: expected comma-separated numbers, got {args.sizes!r}")
        if not args.sizes or min(args.sizes) < 1:
            p.error("--sizes: expected positive element counts")
    args.dtypes = _csv(args.dtypes) if args.dtypes else list(DTYPES)
    if any(d not in DTYPES for d in args.dtypes):
        p.error(f"--dtypes: expected {' or '.join(DTYPES)}, got {','.join(args.dtypes)!r}")
    systems = _csv(args.systems) if args.systems else list(SYSTEMS[1:])
    if any(s not in SYSTEMS[1:] for s in systems):
        p.error(f"--systems: expected some of {', '.join(SYSTEMS[1:])}")
    args.systems = [s for s in SYSTEMS[1:] if s in systems]
    return args


def run(args: argparse.Namespace, argv: Sequence[str]) -> tuple[dict[str, Any], int]:
    """Every case of ``args``; the report dict and the exit status."""
    import crossover as xo

    method = QUICK if args.quick else FULL
    command = "python -m crossover.compare --ops" + ("" if not argv else " " + shlex.join(argv))
    notes, started, load = machine.start_notes(command)
    modules: dict[str, Any] = {"crossover": xo}
    versions = {"python": platform.python_version(), "numpy": np.__version__, "crossover": xo.__version__}
    if "numexpr" in args.systems:
        try:
            import numexpr

            modules["numexpr"], versions["numexpr"] = numexpr, numexpr.__version__
        except ImportError as e:
            notes.append(f"numexpr: skipped, not usable here ({_short(e)})")
    facts = machine.machine("none", load)
    facts["copy_bandwidth_gbps_one_core"] = copy_bandwidth_gbps()
    progress = _Progress(len(args.ops) * len(args.dtypes) * len(args.sizes))
    rows: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for n in args.sizes:
        for dtype in args.dtypes:
            progress.show(f"{dtype} {n}: making inputs")
            inputs = Inputs(n, dtype, xo)
            for op in args.ops:
                progress.show(f"{op.name} {dtype} {n}")
                try:
                    rows += run_case(op, inputs, args.systems, method, modules, errors)
                except Exception as e:  # MemoryError at sizes this machine cannot hold
                    notes.append(f"{op.name} {dtype} {n}: no rows ({_short(e)})")
                progress.step()
            del inputs
            gc.collect()
    progress.close()
    facts["load_average_at_end"] = machine.load_average()  # other jobs during the run show here
    report = {
        "title": "crossover compare --ops: one op per call, ratio to NumPy",
        "date": started, "command": command, "machine": facts, "versions": versions,
        "environment": machine.environment(), "notes": notes, "method": method.describe(),
        "baseline": BASELINE, "focus": FOCUS,
        "targets": "1.0x NumPy from 1e4 elements, 0.7x below (issue 23, target 2)",
        "workloads": [{"name": op.name, "dtype": "float32, float64", "size_meaning": "elements"}
                      for op in args.ops],
        "rows": rows,
        "errors": errors,
    }
    # A peer's miss (numexpr sums float32 in float32) is a finding for the
    # table; crossover's wrong results and errors fail the run.
    failed = [r for r in rows + errors if not r.get("ok") and r["system"].startswith("crossover")]
    return report, (EXIT_FAILED_CHECK if failed else EXIT_OK)


def compare_ops(argv: Sequence[str]) -> tuple[dict[str, Any], int]:
    """Runs ``argv`` (the ``--ops`` options) and returns the report and the
    exit status without printing."""
    return run(parse(argv), argv)


def main(argv: Sequence[str] | None = None) -> int:
    from . import ops_report

    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parse(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else EXIT_USAGE
    if args.list:
        for op in args.ops:
            print(f"{op.name:<14} {op.group:<16} inputs {', '.join(op.domains)}"
                  + (f"; numexpr {op.numexpr!r}" if op.numexpr else ""))
        return EXIT_OK
    report, status = run(args, argv)
    if args.out:
        for path in ops_report.write(report, args.out):
            print(f"wrote {path}", file=sys.stderr)
    if args.format == "json":
        import json

        print(json.dumps(report, indent=1))
    else:
        print(ops_report.markdown(report))
    for r in report["rows"] + report["errors"]:
        if not r.get("ok"):
            peer = "" if r["system"].startswith("crossover") else " (a peer's; not fatal)"
            what = "FAILED CHECK" if "check" in r else "ERROR"
            print(f"{what}: {r['system']} {r['workload']} {r['variant']} {r['size']}: "
                  f"{r.get('check') or r.get('error')}{peer}", file=sys.stderr)
    return status


__all__ = ["Op", "all_ops", "check", "compare_ops", "main", "run_case", "value_error"]
