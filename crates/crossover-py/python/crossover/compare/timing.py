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
            f"{self.max_time:g} s); the median and minimum are reported. Before each case's "
            "warm-up the run waits (at most 1 s) until no thread of the process is still busy "
            "from the previous case: OpenBLAS's threads (NumPy's and SciPy's matmul, solve, "
            "svd) spin for about 0.1 s after a call and would take a core from whatever runs "
            "next. Results are freed inside "
            "the timed region; crossover's are computed and read on the host there; GPU systems "
            "synchronise before the clock stops. Speedups are the numpy time divided by the "
            "other time (above 1: faster)."
        )


def settle(max_wait: float = 1.0, window: float = 0.012) -> float:
    """Waits until the process's other threads are idle and returns the
    seconds waited (at most ``max_wait``). A thread still spinning from the
    previous system's work (OpenBLAS keeps its threads busy about 0.1 s
    after each BLAS call; measured: 105 ms of CPU time after one 1024^2
    ``a @ b``) takes a core from the next system on a small machine: a
    crossover 1024^2 matmul run just after NumPy's took about 1.5x as long
    as alone for those 0.1 s. Idle means two windows in a row in which the process's
    CPU time grew by less than a quarter of the wall time. Windows span
    several scheduler ticks: the kernel adds other threads' CPU time a tick
    (4 ms here) at a time, so a 3 ms window of a spinning thread can read 0."""
    clock, cpu = time.perf_counter, time.process_time
    start = clock()
    quiet = 0
    while quiet < 2 and clock() - start < max_wait:
        w0, c0 = clock(), cpu()
        time.sleep(window)
        quiet = quiet + 1 if cpu() - c0 < 0.25 * (clock() - w0) else 0
    return clock() - start


FULL = Method(min_reps=5, min_time=1.0, max_time=30.0)
# The Rust bench's --quick stops a case at 5 s too.
QUICK = Method(min_reps=3, min_time=0.05, max_time=5.0)


@dataclass(frozen=True)
class Timing:
    median_s: float
    min_s: float
    reps: int
    #: Per-call time of each round, in round order (interleaved timings
    #: only): lets a caller pair systems round by round.
    rounds_s: tuple[float, ...] = ()


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


@dataclass(frozen=True)
class Interleaved:
    """Side-by-side timing of several systems on one case (the per-op
    table): ``rounds`` rounds, each running every system once for a batch of
    calls sized to about ``batch_time`` seconds, in an order rotated each
    round so that no system always runs right after another; per-call times
    are the batch time over its calls; a case stops after ``max_time``
    seconds once three rounds are done."""

    rounds: int
    batch_time: float
    max_time: float

    def describe(self) -> str:
        return (
            "Inputs are made and converted outside the timed region. Each system runs once as a "
            "warm-up, checked against a float64 reference computed with NumPy from the same "
            f"inputs; then {self.rounds} interleaved rounds (fewer past {self.max_time:g} s, at "
            "least 3) run each system for a batch of calls of about "
            f"{self.batch_time * 1e3:g} ms, in an order rotated every round; the per-call time "
            "of a round is its batch time over its calls, and the median and minimum over the "
            "rounds are reported. Results are freed inside the timed region. Ratios are the "
            "NumPy time divided by the other time (above 1: faster than NumPy)."
        )


def measure_interleaved(runs: dict[str, Callable[[], Any]], method: Interleaved) -> dict[str, Timing]:
    """Times every ``runs[name]()`` (already warmed up) in interleaved
    rounds; ``reps`` counts the calls timed."""
    clock = time.perf_counter
    names = list(runs)
    batch: dict[str, int] = {}
    for name in names:  # one call each sizes the batches
        t = clock()
        runs[name]()
        one = max(clock() - t, 1e-9)
        batch[name] = max(1, min(100_000, round(method.batch_time / one)))
    per_call: dict[str, list[float]] = {name: [] for name in names}
    start = clock()
    for r in range(method.rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            run, k = runs[name], batch[name]
            t = clock()
            for _ in range(k):
                run()
            per_call[name].append((clock() - t) / k)
        if r >= 2 and clock() - start > method.max_time:
            break
    out = {}
    for name, in_order in per_call.items():
        samples = sorted(in_order)
        n = len(samples)
        median = samples[n // 2] if n % 2 else 0.5 * (samples[n // 2 - 1] + samples[n // 2])
        out[name] = Timing(median_s=median, min_s=samples[0], reps=n * batch[name],
                           rounds_s=tuple(in_order))
    return out
