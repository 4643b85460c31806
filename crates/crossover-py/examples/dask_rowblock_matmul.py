"""Row-block distributed matmul with Dask and crossover chunks.

The scheme from the article this project grew from: B is broadcast to every
worker once, A is split by rows, each worker multiplies its row blocks by
its copy of B (crossover's engine matmul, on all the worker's cores), and
the row blocks of C are gathered. The result is checked against NumPy in
float64.

    python examples/dask_rowblock_matmul.py                  # a local cluster
    python examples/dask_rowblock_matmul.py --scheduler tcp://host:8786

With ``--scheduler`` it runs on an existing cluster (``dask scheduler`` and
``dask worker`` processes, see docs/dask.md); otherwise it starts a
LocalCluster of ``--workers`` processes on loopback.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import crossover.dask as xd


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--m", type=int, default=4096, help="rows of A and C")
    p.add_argument("--k", type=int, default=2048, help="columns of A, rows of B")
    p.add_argument("--n", type=int, default=2048, help="columns of B and C")
    p.add_argument("--blocks", type=int, default=8, help="row blocks of A")
    p.add_argument("--workers", type=int, default=2, help="local worker processes")
    p.add_argument("--scheduler", help="address of a running dask scheduler")
    args = p.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster, wait

    if args.scheduler:
        cluster, client = None, Client(args.scheduler)
    else:
        cores = os.cpu_count() or 1
        cluster = LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # each worker's engine takes its share of the cores
            env={"CROSSOVER_NUM_THREADS": str(max(1, cores // args.workers))},
        )
        client = Client(cluster)
    try:
        client.register_plugin(xd.CrossoverPlugin())
        rows = -(-args.m // args.blocks)
        # A split by rows and B in one chunk, both made on the workers.
        gen = da.random.default_rng(0)
        A = xd.from_array(gen.standard_normal((args.m, args.k), chunks=(rows, args.k),
                                              dtype=np.float32)).persist()
        B = xd.from_array(gen.standard_normal((args.k, args.n), chunks=(args.k, args.n),
                                              dtype=np.float32)).persist()
        wait([A, B])
        client.replicate(B)  # every worker holds B: broadcast once, before the product

        t = time.perf_counter()
        C = A @ B  # row block i of C = A_i @ B, on a worker holding A_i and B
        c = xd.compute(C)  # the row blocks gathered as one NumPy array
        took = time.perf_counter() - t

        a, b = xd.compute(A, B)  # gathered as NumPy, for the float64 check
        want = a.astype(np.float64) @ b.astype(np.float64)
        err = np.abs(c - want).max() / np.abs(want).max()
        print(f"C = A @ B: A {a.shape}, B {b.shape} float32, {A.numblocks[0]} row blocks "
              f"on {len(client.scheduler_info()['workers'])} workers: {took:.3f} s")
        print(f"max |C - C_ref| / max |C_ref| = {err:.2e} (float64 NumPy reference)")
        assert err < 1e-5, err
        print(xd.explain(C, (0, 0), run=False))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
