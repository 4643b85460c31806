"""Python-level benchmarks of crossover against NumPy and numexpr.

Run (from the repository root, after `pip install ./crates/crossover-py`):

    env -u OPENBLAS_CORETYPE python crates/crossover-py/bench/bench_python.py

Every case runs its contenders side by side in one process, interleaved
round-robin (A, B, C, A, B, C, ...) so machine noise hits all of them alike;
inputs are made outside the timed region; each contender is warmed up first;
figures are medians over the repetitions, and ratios are medians of the
per-round ratios. `--json FILE` also writes the raw figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

import crossover as xo

try:
    import numexpr as ne
except ImportError:  # pragma: no cover - numexpr is optional
    ne = None

EXPR = "a*b + sin(a) + cos(b)"


def image_pipeline(x):
    x = (x - x.mean(axis=(1, 2), keepdims=True)) / (x.std(axis=(1, 2), keepdims=True) + 1e-8)
    return np.sin(x) * 0.5 + 0.5


def run_case(name, contenders, rounds, inner):
    """Times each contender `inner` calls per sample, `rounds` samples,
    interleaved. Returns {label: [seconds per call]}."""
    for f in contenders.values():  # warm-up (also traces @jit, fills caches)
        for _ in range(max(1, min(inner, 3))):
            f()
    times = {k: [] for k in contenders}
    for _ in range(rounds):
        for label, f in contenders.items():
            t = time.perf_counter()
            for _ in range(inner):
                f()
            times[label].append((time.perf_counter() - t) / inner)
    return times


def summarize(name, times, base, targets):
    rows = []
    med = {k: statistics.median(v) for k, v in times.items()}
    for label, m in med.items():
        ratios = {b: statistics.median(tb / tx for tb, tx in zip(times[b], times[label]))
                  for b in base if b != label}
        rows.append((label, m, ratios))
    print(f"\n## {name}")
    for label, m, ratios in rows:
        unit = (m * 1e3, "ms") if m >= 1e-4 else (m * 1e6, "us")
        rs = "  ".join(f"{b}/{label} = {r:.2f}x" for b, r in ratios.items())
        print(f"  {label:<10} {unit[0]:10.3f} {unit[1]}   {rs}")
    for text, ok in targets(med, times):
        print(f"  target: {text}: {'MET' if ok else 'MISSED'}")
    return {"median_s": med, "samples_s": times}


def ratio(times, num, den):
    return statistics.median(a / b for a, b in zip(times[num], times[den]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--json", default=None)
    p.add_argument("--quick", action="store_true", help="smaller image batch (for smoke runs)")
    args = p.parse_args()
    if os.environ.get("OPENBLAS_CORETYPE"):
        print("warning: OPENBLAS_CORETYPE is set (NumPy is slowed); run with `env -u OPENBLAS_CORETYPE`")

    info = xo.info()
    print(f"# crossover {info['version']} Python benchmarks, {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"{info['simd']}, engine threads {info['threads']}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"numexpr {ne.__version__ if ne else 'absent'} ({ne.detect_number_of_cores() if ne else 0} threads)")
    out = {"info": info, "cases": {}}
    rng = np.random.default_rng(0)

    for n, inner in ((10_000_000, 1), (10_000, 300)):
        a = rng.random(n, dtype=np.float32) + np.float32(0.5)
        b = rng.random(n, dtype=np.float32) + np.float32(0.5)
        want = a.astype(np.float64) * b + np.sin(a.astype(np.float64)) + np.cos(b.astype(np.float64))
        got = xo.evaluate(EXPR, a=a, b=b)
        assert isinstance(got, np.ndarray) and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=4e-6, atol=1e-6)
        # a and b are the callers' locals, as in numexpr-style code.
        def xo_eval(a=a, b=b):
            return xo.evaluate(EXPR)

        def ne_eval(a=a, b=b):
            return ne.evaluate(EXPR)

        contenders = {"numpy": lambda: a * b + np.sin(a) + np.cos(b), "xo": xo_eval}
        if ne is not None:
            contenders["numexpr"] = ne_eval
        times = run_case(EXPR, contenders, args.rounds, inner)
        if n > 1_000_000:
            targets = lambda med, t: [
                (f"xo >= 5x numpy (got {ratio(t, 'numpy', 'xo'):.2f}x)", ratio(t, "numpy", "xo") >= 5),
            ] + ([(f"xo >= 10x numexpr (got {ratio(t, 'numexpr', 'xo'):.2f}x)", ratio(t, "numexpr", "xo") >= 10)]
                 if ne else [])
        else:
            targets = lambda med, t: [
                (f"xo no slower than 2x numpy (xo/numpy = {ratio(t, 'xo', 'numpy'):.2f})",
                 ratio(t, "xo", "numpy") <= 2),
            ]
        out["cases"][f"evaluate_{n}"] = summarize(
            f"evaluate('{EXPR}'), {n:,} float32, result as a NumPy array", times,
            list(contenders), targets)

    # Call overhead: a tiny input (pure per-call cost).
    a = rng.random(8, dtype=np.float32) + np.float32(0.5)
    b = rng.random(8, dtype=np.float32) + np.float32(0.5)

    def xo_small(a=a, b=b):
        return xo.evaluate(EXPR)

    def ne_small(a=a, b=b):
        return ne.evaluate(EXPR)

    times = run_case("overhead", {
        "numpy": lambda: a * b + np.sin(a) + np.cos(b),
        "xo": xo_small,
        "xo-kwargs": lambda: xo.evaluate(EXPR, a=a, b=b),
        **({"numexpr": ne_small} if ne else {}),
    }, args.rounds, 2000)
    out["cases"]["overhead_8"] = summarize("call overhead: the same on 8 elements", times,
                                           ["numpy"], lambda m, t: [])

    shape = (100, 256, 256) if args.quick else (1000, 256, 256)
    x = rng.random(shape, dtype=np.float32)
    jitted = xo.jit(image_pipeline)
    got = jitted(x)
    np.testing.assert_allclose(got, image_pipeline(x.astype(np.float64)), rtol=1e-5, atol=2e-6)
    times = run_case("image", {"numpy": lambda: image_pipeline(x), "xo.jit": lambda: jitted(x)},
                     max(5, args.rounds // 2 + 1), 1)
    assert jitted.traces == 1
    out["cases"]["image_pipeline"] = summarize(
        f"image pipeline (normalize per image, then sin*0.5+0.5), {shape} float32, @xo.jit vs plain NumPy",
        times, ["numpy"],
        lambda med, t: [(f"xo.jit >= 4x numpy (got {ratio(t, 'numpy', 'xo.jit'):.2f}x)",
                         ratio(t, "numpy", "xo.jit") >= 4)])
    print("\n" + str(xo.explain(jitted, x)))

    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    sys.exit(main())
