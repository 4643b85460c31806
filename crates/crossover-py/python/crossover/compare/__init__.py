"""Side-by-side comparison of crossover with NumPy, SciPy, numexpr, Numba,
CuPy and PyTorch on the benchmark workloads of ``crossover bench``.

Run ``python -m crossover.compare --help``; docs/compare.md explains the
systems, the method and the report files. In Python, ``compare(argv)``
returns the report dict and the exit status without printing the report.

Modules: ``workloads`` (definitions, sizes, inputs), ``checks`` (float64
references), ``systems``/``numba_kernels``/``gpu_systems`` (how each system
runs each workload), ``timing`` (the method), ``machine`` (the header),
``cli`` (command line and report); the per-op table (``--ops``):
``ops`` (ops, inputs, checks, run), ``ops_report`` (markdown, JSON, plot)
and ``ops_causes`` (measurements of where single-op calls spend time)."""

from .cli import compare, main

__all__ = ["compare", "main"]
