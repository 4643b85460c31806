"""The per-op table's outputs (``compare --ops``): markdown, JSON and the plot.

The plot is drawn by the same Rust report writer (plotters, in the
extension) as the rest of ``crossover.compare``: it is given one line per
(op group, dtype) whose times are the geometric means of the group's ops,
so the line is the geometric-mean ratio to NumPy of the group (ops that
do no work, group ``identity``, left out)."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections import defaultdict
from typing import Any

#: Column titles of the ratio tables.
TITLES = {
    "crossover": "crossover, inputs already converted: `np.asarray(xo.op(xa, xb))`",
    "crossover_np_in": "crossover, NumPy arrays passed in: `np.asarray(xo.op(a, b))`",
    "numexpr": "numexpr, where it has the op: `ne.evaluate(\"op(a, b)\")`",
}
DTYPE_SHORT = {"float32": "f32", "float64": "f64"}
#: Op groups left out of the plot: crossover returns the input itself
#: (``positive``), a ratio of thousands that says nothing about kernels.
UNPLOTTED = {"identity"}


def size_label(n: int) -> str:
    """``1e5`` for powers of ten from 1000, else the number."""
    e = round(math.log10(n)) if n > 0 else 0
    return f"1e{e}" if n >= 1000 and 10**e == n else str(n)


def target(n: int) -> float:
    """Issue 23's target ratio at ``n`` elements: 1.0x from 1e4, 0.7x below."""
    return 1.0 if n >= 10_000 else 0.7


def _index(report: dict[str, Any]) -> tuple[dict, list[str], list[str], list[int]]:
    rows: dict[tuple[str, str, int, str], dict] = {}
    ops: list[str] = []
    for r in report["rows"]:
        rows[(r["workload"], r["variant"], r["size"], r["system"])] = r
        if r["workload"] not in ops:
            ops.append(r["workload"])
    dtypes = sorted({r["variant"] for r in report["rows"]}, key=lambda d: d != "float32")
    sizes = sorted({r["size"] for r in report["rows"]})
    return rows, ops, dtypes, sizes


def _cell(r: dict | None, mark_below: bool) -> str:
    if r is None:
        return ""
    if not r["ok"]:
        return "FAIL"
    text = f"{r['ratio']:.2f}x" + ("†" if r["check"].startswith("dtype") else "")
    return f"**{text}**" if mark_below and r["ratio"] < target(r["size"]) else text


def ratio_table(report: dict[str, Any], system: str) -> str:
    """One row per op, a column per (dtype, size): NumPy time / ``system``
    time; below issue 23's target in bold (crossover columns)."""
    rows, ops, dtypes, sizes = _index(report)
    if not any(k[3] == system for k in rows):
        return ""
    cols = [(d, n) for d in dtypes for n in sizes]
    head = "| op | " + " | ".join(f"{DTYPE_SHORT.get(d, d)} {size_label(n)}" for d, n in cols) + " |"
    lines = [head, "|---|" + "---:|" * len(cols)]
    for op in ops:
        cells = [_cell(rows.get((op, d, n, system)), system.startswith("crossover")) for d, n in cols]
        if any(cells):
            lines.append(f"| {op} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def below_target(report: dict[str, Any], system: str = "crossover") -> list[dict]:
    return [r for r in report["rows"]
            if r["system"] == system and r["ok"] and r["ratio"] < target(r["size"])]


def summary(report: dict[str, Any], system: str = "crossover") -> str:
    mine = [r for r in report["rows"] if r["system"] == system]
    if not mine:
        return f"no {system} rows"
    below = below_target(report, system)
    slower = [r for r in mine if r["ok"] and r["ratio"] < 1.0]
    failed = [r for r in mine if not r["ok"]]
    errors = [e for e in report.get("errors", []) if e["system"] == system]
    worst = sorted(below, key=lambda r: r["ratio"])[:5]
    text = (f"{system}: {len(slower)} of {len(mine)} cells slower than NumPy; {len(below)} below "
            "the issue's target (1.0x from 1e4 elements, 0.7x below)")
    if failed:
        text += f"; {len(failed)} FAILED their float64 check"
    if errors:
        text += f"; {len(errors)} raised an error (no row)"
    if worst:
        text += "; worst: " + ", ".join(
            f"{r['workload']} {DTYPE_SHORT.get(r['variant'], r['variant'])} "
            f"{size_label(r['size'])} {r['ratio']:.2f}x" for r in worst)
    return text + "."


def markdown(report: dict[str, Any]) -> str:
    m = report.get("machine", {})
    out = [
        f"# {report['title']}",
        "",
        f"- date: {report['date']}",
        f"- command: `{report['command']}`",
        f"- machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, "
        f"{m.get('memory_gib', '?')} GiB, SIMD {m.get('simd', '?')}, crossover threads "
        f"{m.get('threads used', '?')}, copy bandwidth (one core, read+write) "
        f"{m.get('copy_bandwidth_gbps_one_core', '?')} GB/s, load average at start "
        f"{m.get('load_average_at_start', '?')} and end {m.get('load_average_at_end', '?')}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in report.get("versions", {}).items()),
        "- environment: " + (", ".join(f"{k}={v}" for k, v in report.get("environment", {}).items())
                             or "nothing set"),
        f"- method: {report['method']}",
        "",
        summary(report, "crossover"),
        "",
    ]
    same = [op for op in dict.fromkeys(r["workload"] for r in report["rows"]
                                       if r.get("group") in UNPLOTTED)]
    if same:
        out += [f"{', '.join(same)}: crossover returns its input (an immutable value) where "
                "NumPy copies, so those ratios measure no kernel; the plot leaves them out.", ""]
    for system, title in TITLES.items():
        table = ratio_table(report, system)
        if table:
            out += [f"## {title}", "", "NumPy time / this time (above 1: faster than NumPy)"
                    + ("; bold: below the target" if system.startswith("crossover") else
                       "; †: the result has another dtype than NumPy's (float64 for float32)")
                    + ".", "", table, ""]
    failed = [r for r in report["rows"] if not r["ok"]]
    if failed:
        out += ["## Failed checks", ""]
        out += [f"- {r['system']} {r['workload']} {r['variant']} {r['size']}: {r['check']}"
                for r in failed]
        out.append("")
    if report.get("errors"):
        out += ["## Errors (no row)", ""]
        out += [f"- {e['system']} {e['workload']} {e['variant']} {e['size']}: {e['error']}"
                for e in report["errors"]]
        out.append("")
    if report.get("notes"):
        out += ["## Notes", ""] + [f"- {n}" for n in report["notes"]] + [""]
    return "\n".join(out)


def group_report(report: dict[str, Any]) -> dict[str, Any]:
    """A report in the Rust writer's format with one workload per (op
    group, dtype): times are geometric means over the group's ops where
    every system of the plot has a passing row."""
    rows, ops, dtypes, sizes = _index(report)
    group_of = {r["workload"]: r.get("group", "other") for r in report["rows"]}
    logs: dict[tuple[str, str, int, str], list[float]] = defaultdict(list)
    for op in ops:
        if group_of[op] in UNPLOTTED:
            continue
        for d in dtypes:
            for n in sizes:
                pair = [rows.get((op, d, n, s)) for s in ("numpy", "crossover")]
                if all(r is not None and r["ok"] for r in pair):
                    for r in pair:
                        logs[(group_of[op], DTYPE_SHORT.get(d, d), n, r["system"])].append(
                            math.log(r["median_ms"]))
    out_rows = [
        {"workload": g, "variant": d, "size": n, "elements": n, "system": s,
         "median_ms": math.exp(sum(v) / len(v)), "ok": True, "check": f"{len(v)} ops"}
        for (g, d, n, s), v in logs.items()
    ]
    return {
        "title": "crossover per-op table by op group (geometric mean over the group's ops)",
        "baseline": "numpy", "focus": "crossover", "rows": out_rows,
        "workloads": [{"name": g, "dtype": "f32, f64", "size_meaning": "elements"}
                      for g in dict.fromkeys(k[0] for k in logs)],
    }


def write_plot(report: dict[str, Any], path: str) -> str | None:
    """``ops.png``: crossover's speedup over NumPy by size, a line per (op
    group, dtype), from the extension's report writer; None (and why, in
    the report's notes) when this build has none."""
    from .. import _C

    writer = getattr(_C, "report_write", None)
    grouped = group_report(report)
    if writer is None or not grouped["rows"]:
        report.setdefault("notes", []).append(
            "no plot: " + ("this build has no report writer (crossover._C.report_write)"
                           if writer is None else "no passing crossover rows"))
        return None
    with tempfile.TemporaryDirectory() as tmp:
        writer(json.dumps(grouped), tmp)
        shutil.copyfile(os.path.join(tmp, "plots", "summary.png"), path)
    return path


def write(report: dict[str, Any], out_dir: str) -> list[str]:
    """Writes ``ops.png``, ``ops.json`` and ``ops.md`` into ``out_dir``
    (created if missing); returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    plot = write_plot(report, os.path.join(out_dir, "ops.png"))  # first: it may add a note
    if plot:
        written.append(plot)
    path = os.path.join(out_dir, "ops.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    written.append(path)
    path = os.path.join(out_dir, "ops.md")
    text = markdown(report)
    if plot:
        text += "\n![crossover's speedup over NumPy by size, geometric mean per op group](ops.png)\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    written.append(path)
    return written
