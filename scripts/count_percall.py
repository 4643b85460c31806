"""Instructions per small call, counted by callgrind (docs/benchmarks-percall.md).

Wall-clock time on a shared VM moves by 2x within minutes; callgrind's
instruction counts repeat to the instruction, so two builds can be compared
one after the other. Each case converts a small crossover expression to
NumPy 20,400 times; the count is collected inside `__array__` (the
evaluation and the NumPy view), divided by the calls:

    PYTHONPATH=<build> CROSSOVER_GPU=none python scripts/count_percall.py

(valgrind runs the AVX2 loops, not AVX-512: the loops' share is larger
than on the real CPU.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

CALLS = 20_400
CASES = ["fused", "direct", "sum", "sumdiv", "where"]


def run_case(case: str) -> None:
    import numpy as np

    import crossover as xo

    rng = np.random.default_rng(0)
    a, b = xo.asarray(rng.random(1_000)), xo.asarray(rng.random(1_000))
    x = xo.asarray(rng.random(10_000))
    f = {
        "fused": lambda: np.asarray(a * a + a),
        "direct": lambda: np.asarray(a + b),
        "sum": lambda: np.asarray(x.sum()),
        "sumdiv": lambda: np.asarray(x.sum() / 10_000),
        "where": lambda: np.asarray(xo.where(x > 0.5, x * x, -x).sum()),
    }[case]
    for _ in range(CALLS):
        f()


def count(case: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             "--collect-atstart=no",
             "--toggle-collect=_crossover::array::PyArr::__pymethod___array____",
             sys.executable, __file__, "--case", case],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        with open(out) as fh:
            total = re.search(r"^totals: (\d+)", fh.read(), re.M)
    if total is None:
        raise RuntimeError(f"no totals in callgrind's output for {case}")
    return int(total.group(1)) // CALLS


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        run_case(sys.argv[2])
        return
    for case in CASES:
        print(f"{case:8s} {count(case):8d} instructions a call")


if __name__ == "__main__":
    main()
