"""The timing method, the same as the Rust ``crossover bench``
(``crates/crossover-cli/src/bench/measure.rs``): after one checked warm-up,
timed runs until at least ``min_reps`` runs *and* ``min_time`` seconds, never
past ``max_time``; median and minimum reported."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Method:
    min_reps: int
    min_time: float
    # Only very slow cases reach it; the row's ``reps`` shows the real count.
    max_time: float

    def describe(self) -> str:
        return (
            "Inputs are made outside the timed region (and converted to each system's arrays "
            "there). Each case runs once as a warm-up (Numba compiles here), checked against a "
            "float64 reference computed with NumPy from the same inputs; then timed runs repeat "
            f"until at least {self.min_reps} runs and {self.min_time:g} s (stopping at "
            f"{self.max_time:g} s); the median and minimum are reported. Results are freed inside "
            "the timed region; crossover's are computed and read on the host there; GPU systems "
            "synchronise before the clock stops. Speedups are the numpy time divided by the "
            "other time (above 1: faster)."
        )


FULL = Method(min_reps=5, min_time=1.0, max_time=30.0)
# The Rust bench's --quick stops a case at 5 s too.
QUICK = Method(min_reps=3, min_time=0.05, max_time=5.0)


@dataclass(frozen=True)
class Timing:
    median_s: float
    min_s: float
    reps: int


def measure(run: Callable[[], Any], method: Method) -> Timing:
    """Times ``run()`` (already warmed up). The result is discarded inside
    the timed region, as the Rust bench drops it: freeing big outputs is part
    of what each system costs."""
    samples: list[float] = []
    clock = time.perf_counter
    start = clock()
    while True:
        t = clock()
        run()
        now = clock()
        samples.append(now - t)
        total = now - start
        enough = len(samples) >= method.min_reps and total >= method.min_time
        if enough or total >= method.max_time or len(samples) >= 100_000:
            break
    samples.sort()
    n = len(samples)
    median = samples[n // 2] if n % 2 else 0.5 * (samples[n // 2 - 1] + samples[n // 2])
    return Timing(median_s=median, min_s=samples[0], reps=n)
