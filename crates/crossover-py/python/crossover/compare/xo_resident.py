"""crossover with its inputs on the GPU, measured the way the CuPy and
PyTorch rows are: every NumPy input is moved to the GPU outside the timed
region (``xo.to_device``), the timed run evaluates the same lazy graph as
the ``crossover`` row and leaves the result where it was computed, and
reading it back for the check is not timed.

The ``crossover`` row starts from NumPy arrays and reads its result on the
host, copies included: what a NumPy user gets. This row is what a user who
keeps data on the GPU gets (the planner still places each kernel; its
choice is the row's device). It loads only where crossover has a usable
GPU (``xo.info()["devices"]``)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .systems import CROSSOVER, Case, Setup, System


class _CrossoverGpu(System):
    def load(self) -> str:
        import crossover as xo

        info = xo.info()
        if "gpu" not in info["devices"]:
            raise RuntimeError(f"crossover has no usable GPU here: {info['gpu']}")
        return xo.__version__

    def gpu_name(self) -> str | None:
        import crossover as xo

        return str(xo.info()["gpu"])


def _evaluated(y: Any) -> Any:
    """``y`` (an array, or a tuple of them such as svd's) computed."""
    for a in y if isinstance(y, tuple) else (y,):
        a.eval()
    return y


def _resident(setup: Setup) -> Setup:
    """``setup`` of the ``crossover`` row over inputs on the GPU, timing the
    evaluation alone."""

    def wrapped(inp: dict, variant: str) -> Case:
        import crossover as xo

        moved = {k: xo.to_device(xo.asarray(v), "gpu") if isinstance(v, np.ndarray) else v
                 for k, v in inp.items()}
        case = setup(moved, variant)
        build, force = case.build, case.force
        if build is None or force is None:
            raise RuntimeError("not a lazy crossover case")
        host: Callable[[Any], Any] = case.host
        return Case(lambda: _evaluated(build()), lambda y: host(force(y)), case.chosen)

    return wrapped


#: The workloads CuPy and PyTorch run from device memory too (sparse
#: products are computed when made; the loop form is the same kernel as
#: conditional_accumulate).
_WORKLOADS = ("elementwise", "reduction", "matmul", "fft2", "solve", "svd", "monte_carlo_pi",
              "conditional_accumulate", "image_pipeline")

CROSSOVER_GPU = _CrossoverGpu(
    "crossover-gpu", ("crossover",),
    "crossover with NumPy inputs moved to the GPU outside the timed region and results left "
    "where they were computed (as the CuPy and PyTorch rows run); the planner places each kernel",
    gpu=True,
    cases={w: _resident(CROSSOVER.cases[w]) for w in _WORKLOADS},
)
