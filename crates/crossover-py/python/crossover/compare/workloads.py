"""The workloads: names, variants, sizes and input makers.

The definitions match the Rust ``crossover bench``; size N always means an
NxN problem. Inputs are NumPy arrays made from fixed seeds (NumPy's PCG64,
not crossover's Philox: every system gets the same numbers) and are shared
by all systems at one size. Checks are in ``checks.py``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

#: Density of the sparse operands.
SPARSE_DENSITY = 0.01
#: Images per batch in image_pipeline.
IMAGES = 8

_BASE = (100, 256, 512, 1024, 2048, 4096)
_BIG = _BASE + (10000,)

#: Default sizes per workload: 10000 where memory and time allow; the
#: reasons for stopping earlier are SIZE_NOTES below.
DEFAULT_SIZES: dict[str, tuple[int, ...]] = {
    "elementwise": _BIG,
    "reduction": _BIG,
    "matmul": _BIG,
    "fft2": _BIG,
    "solve": _BIG,
    "svd": _BASE[:-1],
    "sparse_matmul": _BIG,
    "monte_carlo_pi": _BIG,
    "conditional_accumulate": _BIG,
    "conditional_accumulate_loop": _BIG,
    "image_pipeline": _BASE,
}
QUICK_SIZES = (100, 300, 1000)

#: Why a default list stops below 10000, for the report's notes.
SIZE_NOTES = {
    "svd": "svd stops at 2048 by default: its time grows as N^3, and one 4096 SVD takes minutes "
           "on a few CPU cores (pass --sizes to go further)",
    "image_pipeline": "image_pipeline stops at 4096 by default: 8 images of 10000x10000 need "
                      "6.4 GB for input and output, and the float64 check as much again",
}


@dataclass(frozen=True)
class Workload:
    name: str
    dtype: str
    size_meaning: str
    make: Callable[[int], dict[str, Any]]
    variants: tuple[str, ...] = ("",)
    per_size: int = 1  # elements = per_size * N * N

    def elements(self, n: int) -> int:
        return self.per_size * n * n


def _rng(seed: int, n: int) -> np.random.Generator:
    # One stream per (workload seed, size): a case is reproducible alone.
    return np.random.default_rng([seed, n])


def _uniform32(rng: np.random.Generator, shape: Any) -> np.ndarray:
    return rng.random(shape, dtype=np.float32)


def make_elementwise(n: int) -> dict[str, Any]:
    r = _rng(1, n)
    return {"a": _uniform32(r, (n, n)), "b": _uniform32(r, (n, n))}


def make_reduction(n: int) -> dict[str, Any]:
    return {"x": _uniform32(_rng(3, n), (n, n))}


def make_matmul(n: int) -> dict[str, Any]:
    r = _rng(11, n)
    return {"a": _uniform32(r, (n, n)), "b": _uniform32(r, (n, n))}


def make_fft2(n: int) -> dict[str, Any]:
    return {"x": _uniform32(_rng(14, n), (n, n))}


def make_solve(n: int) -> dict[str, Any]:
    r = _rng(15, n)
    m = _uniform32(r, (n, n)) - np.float32(0.5)
    a = (m @ m.T) / np.float32(n)  # m @ m.T is computed symmetric (syrk)
    a[np.diag_indices(n)] += np.float32(1.0)
    return {"a": np.ascontiguousarray(a, dtype=np.float32), "b": _uniform32(r, n)}


def make_svd(n: int) -> dict[str, Any]:
    return {"a": _uniform32(_rng(17, n), (n, n)) - np.float32(0.5)}


def random_csr(n: int, density: float, rng: np.random.Generator) -> tuple:
    """An NxN float32 CSR matrix as ``(data, indices, indptr, shape)``:
    ``round(density*N*N)`` values uniform in [0, 1) at distinct positions,
    indices sorted within rows (canonical, so every library accepts it)."""
    k = int(round(density * n * n))
    pos = np.unique(rng.integers(0, n * n, size=int(k * 1.05) + 16, dtype=np.int64))
    while pos.size < k:  # rare: too many collisions
        more = rng.integers(0, n * n, size=k, dtype=np.int64)
        pos = np.unique(np.concatenate([pos, more]))
    pos = np.sort(rng.choice(pos, size=k, replace=False))
    rows, cols = np.divmod(pos, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    data = _uniform32(rng, k)
    return data, cols.astype(np.int32), indptr.astype(np.int32), (n, n)


def make_sparse(n: int) -> dict[str, Any]:
    r = _rng(20, n)
    return {"a": random_csr(n, SPARSE_DENSITY, r), "b": random_csr(n, SPARSE_DENSITY, r)}


def make_monte_carlo(n: int) -> dict[str, Any]:
    # Nothing to make: the samples are drawn inside the timed region.
    return {"samples": n * n, "seed": 2024}


def make_conditional(n: int) -> dict[str, Any]:
    return {"x": _rng(4, n).random(n * n, dtype=np.float64)}


def make_image(n: int) -> dict[str, Any]:
    return {"x": _uniform32(_rng(5, n), (IMAGES, n, n))}


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("elementwise", "float32", "N for NxN float32 arrays; y = a*b + sin(a) + cos(b)",
                 make_elementwise),
        Workload("reduction", "float32", "N for an NxN float32 array reduced to one number",
                 make_reduction, variants=("sum", "mean", "std")),
        Workload("matmul", "float32", "N for NxN float32 matrices", make_matmul),
        Workload("fft2", "float32", "N for an NxN float32 input (complex output)", make_fft2),
        Workload("solve", "float32", "N for an NxN symmetric positive definite float32 system",
                 make_solve),
        Workload("svd", "float32", "N for an NxN float32 matrix (U, s, Vt)", make_svd),
        Workload("sparse_matmul", "float32",
                 f"N for NxN float32 CSR matrices of density {SPARSE_DENSITY}", make_sparse),
        Workload("monte_carlo_pi", "float32", "N*N float32 samples drawn in the timed region",
                 make_monte_carlo),
        Workload("conditional_accumulate", "float64",
                 "N*N float64 elements; sum(where(x > 0.5, x*x, -x))", make_conditional),
        Workload("conditional_accumulate_loop", "float64",
                 "N*N float64 elements; the same sum written as a Python loop (crossover: the "
                 "loop under @xo.jit; NumPy: np.where; Numba: a prange loop)", make_conditional),
        Workload("image_pipeline", "float32",
                 f"N for a batch of {IMAGES} NxN float32 images (standardise, then sin)",
                 make_image, per_size=IMAGES),
    )
}


def work(name: str, n: int, inputs: dict) -> tuple[float, float, float]:
    """``(bytes, flops, samples)`` of one run, the conventions of the Rust
    bench's ``Work`` (minimal memory traffic; 2 N^3 for matmul, 5 N^2
    log2(N^2) for the FFT, 22 N^3 for the SVD), for the rates in the report.
    The same figures for every system, whatever algorithm it uses."""
    e = float(n) * n
    if name == "elementwise":
        return 12 * e, 43 * e, 0.0
    if name == "reduction":
        return 4 * e, e, 0.0
    if name == "matmul":
        return 12 * e, 2 * e * n, 0.0
    if name == "fft2":
        return 12 * e, 5 * e * math.log2(max(e, 2.0)), 0.0
    if name == "solve":
        return 4 * e, e * n / 3 + 2 * e, 0.0
    if name == "svd":
        return 12 * e, 22 * e * n, 0.0
    if name == "sparse_matmul":
        nnz_a, nnz_b = len(inputs["a"][0]), len(inputs["b"][0])
        return 8.0 * (nnz_a + nnz_b), 2.0 * nnz_a * nnz_b / n, 0.0
    if name == "monte_carlo_pi":
        return 0.0, 65 * e, e
    if name in ("conditional_accumulate", "conditional_accumulate_loop"):
        return 8 * e, 3 * e, 0.0
    if name == "image_pipeline":
        return 12 * IMAGES * e, 30 * IMAGES * e, 0.0
    raise KeyError(name)


def sizes_for(name: str, quick: bool, override: list[int] | None) -> tuple[int, ...]:
    if override:
        return tuple(override)
    return QUICK_SIZES if quick else DEFAULT_SIZES[name]
