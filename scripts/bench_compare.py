#!/usr/bin/env python3
"""Side-by-side: `crossover bench` against NumPy/SciPy, in one run.

For each workload and round, runs the release `crossover` binary and then
scripts/bench_numpy.py (with OPENBLAS_CORETYPE unset, so NumPy's BLAS is at
its best), back to back so both see the same machine state, and prints a
markdown table of medians and ratios (reference time / crossover time; above
1 means crossover is faster). Reproduce the figures in docs/benchmarks.md:

    cargo build --release && python3 scripts/bench_compare.py --rounds 3
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from bench_numpy import DEFAULT_SIZES  # noqa: E402  (the same sizes on both sides)
BIN = ROOT / "target" / "release" / "crossover"
# The issues' targets: (workload, variant) -> minimum ratio vs the reference.
TARGETS = {
    ("elementwise", ""): 6, ("reduction", "sum"): 3, ("reduction", "std"): 10,
    ("monte_carlo_pi", ""): 20, ("conditional_accumulate", ""): 15,
    ("image_pipeline", ""): 5, ("matmul", ""): 0.9, ("solve", ""): 1.3,
    ("svd", ""): 1.0, ("fft2", ""): 1.0, ("sparse_matmul", ""): 1.5,
}
# Which reference system a target is measured against.
REFERENCE = {"fft2": "scipy", "solve": "scipy", "svd": "scipy", "sparse_matmul": "scipy"}


def lines(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workloads", nargs="*", default=[
        "elementwise", "reduction", "monte_carlo_pi", "conditional_accumulate",
        "image_pipeline", "matmul", "fft2", "solve", "svd", "sparse_matmul"])
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args()
    if not BIN.exists():
        sys.exit(f"{BIN} not found: run `cargo build --release` first")
    ref_env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    ours, ref, gbps = {}, {}, {}
    for _ in range(args.rounds):
        for w in args.workloads:
            sizes = ",".join(map(str, DEFAULT_SIZES[w]))
            for r in lines([str(BIN), "bench", w, "--device", "auto", "--format", "json",
                            "--sizes", sizes]):
                variant = r.get("variant") or ""
                key = (w, "" if variant == w else variant, r["size"])
                ours.setdefault(key, []).append(r["median_ms"])
                if not r.get("ok", False):
                    print(f"# check failed: {r}", file=sys.stderr)
                if w == "reduction" and variant == "sum":
                    gbps.setdefault(r["size"], []).append(r.get("gbps") or 0)
            for r in lines([sys.executable, str(ROOT / "scripts" / "bench_numpy.py"), w],
                           env=ref_env):
                key = (w, r["variant"], r["size"], r["system"])
                ref.setdefault(key, []).append(r["median_ms"])
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"date {datetime.date.today()}; OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')} in the environment, "
          "unset for the reference runs")
    if gbps:
        print("crossover's sum read rate (a bandwidth measure): "
              + ", ".join(f"{statistics.median(v):.1f} GB/s" for v in gbps.values()))
    print()
    print("| workload | size | crossover ms | reference | reference ms | ratio | target |")
    print("|---|---|---:|---|---:|---:|---|")
    for (w, v, n), ts in ours.items():
        t = statistics.median(ts)
        for (rw, rv, rn, system), rts in ref.items():
            if (rw, rv, rn) != (w, v, n):
                continue
            rt = statistics.median(rts)
            target = TARGETS.get((w, v))
            main_ref = system == REFERENCE.get(w, "numpy")
            verdict = ""
            if target and main_ref:
                verdict = f"{target}x: {'met' if rt / t >= target else 'NOT met'}"
            name = f"{w} {v}".strip()
            print(f"| {name} | {n} | {t:.2f} | {system} | {rt:.2f} | {rt / t:.2f}x | {verdict} |")


if __name__ == "__main__":
    main()
