"""Dask benchmark: NumPy chunks vs crossover chunks on one local cluster.

One graph of elementwise math and reductions over an N x N float32 array
(default 16384 x 16384 in 2048 x 2048 chunks), run on the same
``dask.distributed`` LocalCluster (2 worker processes, 1 Dask thread each,
loopback, no dashboard) with NumPy chunks and with crossover chunks. Inputs
are generated and persisted on the workers outside the timed region; one
warm-up run, then the median of ``--reps`` runs. Results are checked against
each other (and the tiny case against a float64 NumPy reference). Then the
same graph over tiny chunks (default 1024 x 1024 in 64 x 64 chunks) gives
the per-chunk overhead crossover adds.

Prints a markdown table (paste into docs/benchmarks.md, ``## Dask``).

    python crates/crossover-py/bench/bench_dask.py            # the full run (~4 GiB RAM)
    python crates/crossover-py/bench/bench_dask.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import time

import numpy as np

import crossover as xo
import crossover.dask as xd


def workload(x):
    """Elementwise math feeding five reductions along different axes."""
    y = np.sin(x) * np.exp(x * -0.5) + np.sqrt(x + 1.0) * 0.25 - x * x
    return [y.sum(axis=0), y.mean(axis=1), y.std(), y.max(axis=0), y.min()]


def reference(a):
    return workload(a.astype(np.float64))


def timed(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def run_pair(client, n, chunk, reps, check_ref):
    import dask
    import dask.array as da
    from distributed import wait

    x_np = da.random.default_rng(0).random((n, n), chunks=(chunk, chunk), dtype=np.float32)
    x_np = x_np.persist()
    x_xo = xd.from_array(x_np).persist()  # the same values, as crossover chunks
    wait([x_np, x_xo])

    def run_numpy():
        return dask.compute(*workload(x_np))

    def run_crossover():
        return xd.compute(*workload(x_xo))

    t_np, all_np = timed(run_numpy, reps)
    t_xo, all_xo = timed(run_crossover, reps)
    got_np, got_xo = run_numpy(), run_crossover()
    for g, w in zip(got_xo, got_np):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                   rtol=1e-3, atol=1e-3)
    if check_ref:
        ref = reference(x_np.compute())
        for g, w in zip(got_xo, ref):
            np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=1e-4, atol=1e-4)
    tasks = len(dict(x_xo.__dask_graph__()))  # chunks
    del x_np, x_xo
    return t_np, t_xo, all_np, all_xo, tasks


def main() -> None:
    p = argparse.ArgumentParser(description="NumPy vs crossover chunks on a Dask LocalCluster")
    p.add_argument("--size", type=int, default=16384)
    p.add_argument("--chunk", type=int, default=2048)
    p.add_argument("--tiny-size", type=int, default=1024)
    p.add_argument("--tiny-chunk", type=int, default=64)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="4096 x 4096 in 1024 chunks (smoke run)")
    args = p.parse_args()
    if args.quick:
        args.size, args.chunk = 4096, 1024

    from distributed import Client, LocalCluster

    cores = os.cpu_count() or 1
    engine_threads = max(1, cores // args.workers)
    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        env={"CROSSOVER_NUM_THREADS": str(engine_threads)},
    )
    client = Client(cluster)
    try:
        client.register_plugin(xd.CrossoverPlugin())
        big = run_pair(client, args.size, args.chunk, args.reps, check_ref=False)
        tiny = run_pair(client, args.tiny_size, args.tiny_chunk, args.reps, check_ref=True)
    finally:
        client.close()
        cluster.close()

    load = os.getloadavg()
    cpu = platform.processor() or platform.machine()
    try:
        model = [ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                 if ln.startswith("model name")][0]
        cpu = model
    except (OSError, IndexError):
        pass
    import dask
    import distributed

    info = xo.info()
    print(f"Machine: {cpu}, {cores} cores; {args.workers} worker processes x 1 Dask thread, "
          f"CROSSOVER_NUM_THREADS={engine_threads}; crossover {xo.__version__} "
          f"({info.get('simd')}), NumPy {np.__version__}, Dask {dask.__version__}, "
          f"distributed {distributed.__version__}.")
    print(f"Date: {datetime.date.today()}; load average before/after: {load[0]:.2f} "
          f"(1 min), {load[1]:.2f} (5 min); command: python crates/crossover-py/bench/bench_dask.py"
          + (" --quick" if args.quick else ""))
    try:
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    except OSError:
        pass
    print()
    print("Graph: y = sin(x)*exp(-x/2) + sqrt(x+1)/4 - x*x; y.sum(0), y.mean(1), y.std(), "
          "y.max(0), y.min(); float32; median of "
          f"{args.reps} runs after a warm-up.")
    print()
    print("| case | chunks | NumPy chunks | crossover chunks | speedup | target |")
    print("|---|---|---|---|---|---|")
    t_np, t_xo, _, _, nb = big
    print(f"| {args.size}x{args.size} in {args.chunk}x{args.chunk} | {nb} | {t_np:.3f} s | "
          f"{t_xo:.3f} s | {t_np / t_xo:.2f}x | >= 3x |")
    t_np, t_xo, _, _, nt = tiny
    print(f"| {args.tiny_size}x{args.tiny_size} in {args.tiny_chunk}x{args.tiny_chunk} | {nt} | "
          f"{t_np:.3f} s ({t_np / nt * 1e6:.0f} us/chunk) | {t_xo:.3f} s "
          f"({t_xo / nt * 1e6:.0f} us/chunk) | {t_np / t_xo:.2f}x | crossover/NumPy "
          f"time {t_xo / t_np:.2f} (< 2) |")
    print()
    print(f"Per-chunk overhead crossover adds on tiny chunks: {(t_xo - t_np) / nt * 1e6:+.0f} us "
          f"per chunk (whole graph, all tasks of a chunk), ratio {t_xo / t_np:.2f}x NumPy's time.")


if __name__ == "__main__":
    main()
