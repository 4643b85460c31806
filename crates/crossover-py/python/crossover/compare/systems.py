"""The systems compared: how each one runs each workload it supports.

A system's ``cases`` maps a workload name to a *setup* function
``setup(inputs, variant) -> Case``: the setup converts the shared NumPy
inputs into the system's own form (outside the timed region); ``Case.run``
is the timed work; ``Case.host`` turns its result into the host form the
checks read (outside the timed region). Host forms: an ndarray, a float
(reductions, pi), ``(U, s, Vt)`` (svd) or ``(data, indices, indptr, shape)``
(sparse_matmul). The GPU systems are in ``gpu_systems.py``, numba's kernels
in ``numba_kernels.py``."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


def _same(x: Any) -> Any:
    return x


@dataclass
class Case:
    run: Callable[[], Any]
    host: Callable[[Any], Any] = _same
    #: The device the work ran on when it is not obvious (torch, crossover);
    #: a callable is asked after the timed runs (crossover's planner learns
    #: as it runs).
    chosen: str | Callable[[], str | None] | None = None
    #: crossover's cases: the lazy graph ``run`` builds, and how ``run``
    #: reads it on the host (``xo_resident`` times the graph's evaluation
    #: alone, leaving the result on the device).
    build: Callable[[], Any] | None = None
    force: Callable[[Any], Any] | None = None


Setup = Callable[[dict, str], Case]


@dataclass
class System:
    name: str
    #: Modules that must import for the system to run.
    modules: tuple[str, ...]
    describe: str
    gpu: bool = False
    cases: dict[str, Setup] = field(default_factory=dict)
    #: Variants supported, per workload, where not all are (numexpr: sum).
    only_variants: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def load(self) -> str:
        """Imports the system (ImportError/RuntimeError when it cannot run
        here) and returns its version."""
        mods = [importlib.import_module(m) for m in self.modules]
        return getattr(mods[0], "__version__", "?")

    def supports(self, workload: str, variant: str) -> bool:
        if workload not in self.cases:
            return False
        allowed = self.only_variants.get(workload)
        return allowed is None or variant in allowed

    def gpu_name(self) -> str | None:
        return None


def _csr_parts(m: Any) -> tuple:
    return (np.asarray(m.data), np.asarray(m.indices), np.asarray(m.indptr), tuple(m.shape))


# ---- numpy -----------------------------------------------------------------


def _np_elementwise(inp: dict, _: str) -> Case:
    a, b = inp["a"], inp["b"]
    return Case(lambda: a * b + np.sin(a) + np.cos(b))


def _np_reduction(inp: dict, variant: str) -> Case:
    x = inp["x"]
    f = {"sum": x.sum, "mean": x.mean, "std": x.std}[variant]
    return Case(f, float)


def _np_matmul(inp: dict, _: str) -> Case:
    a, b = inp["a"], inp["b"]
    return Case(lambda: a @ b)


def _np_fft2(inp: dict, _: str) -> Case:
    x = inp["x"]
    return Case(lambda: np.fft.fft2(x))


def _np_solve(inp: dict, _: str) -> Case:
    a, b = inp["a"], inp["b"]
    return Case(lambda: np.linalg.solve(a, b))  # NumPy has no SPD solver: LU


def _np_svd(inp: dict, _: str) -> Case:
    a = inp["a"]
    return Case(lambda: np.linalg.svd(a))


def _np_monte_carlo(inp: dict, _: str) -> Case:
    n, rng = inp["samples"], np.random.default_rng(inp["seed"])

    def run() -> float:
        x = rng.random(n, dtype=np.float32)
        y = rng.random(n, dtype=np.float32)
        return 4.0 * float(np.mean(x * x + y * y <= 1))

    return Case(run, float)


def _np_conditional(inp: dict, _: str) -> Case:
    x = inp["x"]
    return Case(lambda: np.where(x > 0.5, x * x, -x).sum(), float)


def image_numpy(x: np.ndarray) -> np.ndarray:
    m = x.mean(axis=(1, 2), keepdims=True)
    s = x.std(axis=(1, 2), keepdims=True)
    return np.sin((x - m) / (s + 1e-8)) * 0.5 + 0.5


def _np_image(inp: dict, _: str) -> Case:
    x = inp["x"]
    return Case(lambda: image_numpy(x))


NUMPY = System(
    "numpy", ("numpy",), "NumPy (its BLAS/LAPACK for matmul, solve, svd; pocketfft for fft2)",
    cases={
        "elementwise": _np_elementwise,
        "reduction": _np_reduction,
        "matmul": _np_matmul,
        "fft2": _np_fft2,
        "solve": _np_solve,
        "svd": _np_svd,
        "monte_carlo_pi": _np_monte_carlo,
        "conditional_accumulate": _np_conditional,
        "conditional_accumulate_loop": _np_conditional,
        "image_pipeline": _np_image,
    },
)

# ---- scipy -----------------------------------------------------------------


def _sp_fft2(inp: dict, _: str) -> Case:
    import scipy.fft

    x = inp["x"]
    return Case(lambda: scipy.fft.fft2(x, workers=-1))


def _sp_solve(inp: dict, _: str) -> Case:
    import scipy.linalg

    a, b = inp["a"], inp["b"]
    return Case(lambda: scipy.linalg.solve(a, b, assume_a="pos"))


def _sp_svd(inp: dict, _: str) -> Case:
    import scipy.linalg

    a = inp["a"]
    return Case(lambda: scipy.linalg.svd(a))


def _sp_sparse(inp: dict, _: str) -> Case:
    import scipy.sparse as sp

    make = getattr(sp, "csr_array", sp.csr_matrix)
    a, b = (make(m[:3], shape=m[3]) for m in (inp["a"], inp["b"]))
    return Case(lambda: a @ b, _csr_parts)


SCIPY = System(
    "scipy", ("scipy", "scipy.linalg", "scipy.fft", "scipy.sparse"),
    "SciPy: scipy.fft (workers=-1), scipy.linalg (solve assume_a='pos', svd), scipy.sparse CSR",
    cases={"fft2": _sp_fft2, "solve": _sp_solve, "svd": _sp_svd, "sparse_matmul": _sp_sparse},
)

# ---- numexpr ---------------------------------------------------------------


def _ne():
    import numexpr

    return numexpr


def _ne_elementwise(inp: dict, _: str) -> Case:
    ne, d = _ne(), {"a": inp["a"], "b": inp["b"]}
    return Case(lambda: ne.evaluate("a*b + sin(a) + cos(b)", local_dict=d))


def _ne_reduction(inp: dict, _: str) -> Case:
    ne, d = _ne(), {"x": inp["x"]}
    return Case(lambda: ne.evaluate("sum(x)", local_dict=d), float)


def _ne_monte_carlo(inp: dict, _: str) -> Case:
    ne, n, rng = _ne(), inp["samples"], np.random.default_rng(inp["seed"])

    def run() -> float:
        x = rng.random(n, dtype=np.float32)
        y = rng.random(n, dtype=np.float32)
        inside = ne.evaluate("sum(where(x*x + y*y <= 1, 1, 0))", local_dict={"x": x, "y": y})
        return 4.0 * int(inside) / n

    return Case(run, float)


def _ne_conditional(inp: dict, _: str) -> Case:
    ne, d = _ne(), {"x": inp["x"]}
    return Case(lambda: ne.evaluate("sum(where(x > 0.5, x*x, -x))", local_dict=d), float)


def _ne_image(inp: dict, _: str) -> Case:
    ne, x = _ne(), inp["x"]
    # float32 constants as variables: numexpr makes a literal 0.5 float64 and
    # would upcast the whole float32 result.
    half, eps = np.float32(0.5), np.float32(1e-8)

    def run() -> np.ndarray:
        m = x.mean(axis=(1, 2), keepdims=True)
        d = x.std(axis=(1, 2), keepdims=True) + eps
        return ne.evaluate("sin((x - m) / d) * h + h", local_dict={"x": x, "m": m, "d": d, "h": half})

    return Case(run)


NUMEXPR = System(
    "numexpr", ("numexpr",), "numexpr expression strings (image_pipeline: NumPy mean/std, then numexpr)",
    cases={
        "elementwise": _ne_elementwise,
        "reduction": _ne_reduction,
        "monte_carlo_pi": _ne_monte_carlo,
        "conditional_accumulate": _ne_conditional,
        "image_pipeline": _ne_image,
    },
    only_variants={"reduction": ("sum",)},
)

# ---- crossover -------------------------------------------------------------


def _xo():
    import crossover

    return crossover


def _xo_case(build: Callable[[], Any], force: Callable[[Any], Any], host: Callable = _same) -> Case:
    """A crossover case: ``build`` records the lazy graph, ``force`` computes
    it and reads it on the host (both timed). The planner's device choice is
    read from ``explain`` without running, after the timed runs."""
    xo = _xo()
    chosen = lambda: _devices(lambda: xo.explain(build(), run=False))
    return Case(lambda: force(build()), host, chosen, build=build, force=force)


def _devices(explain: Callable[[], Any]) -> str | None:
    """The devices an explanation's kernels are placed on (``cpu+gpu``)."""
    try:
        devices = sorted({k["device"] for k in explain().kernels if k.get("device")})
        return "+".join(devices) or None
    except Exception:  # explain is a report, never a reason to skip a case
        return None


def _numpy_of(y: Any) -> np.ndarray:
    return y.numpy()


def _item(y: Any) -> float:
    return float(y.item())


def _xo_elementwise(inp: dict, _: str) -> Case:
    xo = _xo()
    a, b = xo.asarray(inp["a"]), xo.asarray(inp["b"])
    return _xo_case(lambda: a * b + xo.sin(a) + xo.cos(b), _numpy_of)


def _xo_reduction(inp: dict, variant: str) -> Case:
    x = _xo().asarray(inp["x"])
    build = {"sum": x.sum, "mean": x.mean, "std": x.std}[variant]
    return _xo_case(build, _item)


def _xo_matmul(inp: dict, _: str) -> Case:
    xo = _xo()
    a, b = xo.asarray(inp["a"]), xo.asarray(inp["b"])
    return _xo_case(lambda: a @ b, _numpy_of)


def _xo_fft2(inp: dict, _: str) -> Case:
    xo = _xo()
    x = xo.asarray(inp["x"])
    return _xo_case(lambda: xo.fft.fft2(x), _numpy_of)


def _xo_solve(inp: dict, _: str) -> Case:
    xo = _xo()
    a, b = xo.asarray(inp["a"]), xo.asarray(inp["b"])
    return _xo_case(lambda: xo.linalg.solve(a, b, assume_a="pos"), _numpy_of)


def _xo_svd(inp: dict, _: str) -> Case:
    xo = _xo()
    a = xo.asarray(inp["a"])
    # Reading U computes the one SVD kernel that makes all three.
    return _xo_case(lambda: xo.linalg.svd(a), lambda usv: tuple(p.numpy() for p in usv))


def _xo_sparse(inp: dict, _: str) -> Case:
    xo = _xo()
    a, b = (xo.sparse.csr_matrix(m[:3], shape=m[3]) for m in (inp["a"], inp["b"]))
    # CSR products are computed when made (no lazy graph, nothing to explain).
    return Case(lambda: a @ b, _csr_parts)


def _xo_monte_carlo(inp: dict, _: str) -> Case:
    xo, n = _xo(), inp["samples"]
    rng = xo.random.default_rng(inp["seed"])

    def build() -> Any:
        x = rng.random(n, dtype=np.float32)
        y = rng.random(n, dtype=np.float32)
        return 4.0 * (x * x + y * y <= 1).mean()

    return _xo_case(build, _item)


def _xo_conditional(inp: dict, _: str) -> Case:
    xo = _xo()
    x = xo.asarray(inp["x"])
    return _xo_case(lambda: xo.where(x > 0.5, x * x, -x).sum(), _item)


def conditional_accumulate_loop(data: Any, threshold: float) -> float:
    """The issue's loop, as users write it (run under ``@xo.jit``)."""
    result = 0.0
    for i in range(len(data)):
        if data[i] > threshold:
            result += data[i] ** 2
        else:
            result -= data[i]
    return result


def _xo_conditional_loop(inp: dict, _: str) -> Case:
    xo = _xo()
    f = xo.jit(conditional_accumulate_loop)
    x = inp["x"]
    return Case(lambda: f(x, 0.5), float, lambda: _devices(lambda: xo.explain(f, x, 0.5, run=False)))


def _xo_image(inp: dict, _: str) -> Case:
    xo = _xo()
    x = xo.asarray(inp["x"])

    def build() -> Any:
        m = x.mean(axis=(1, 2), keepdims=True)
        s = x.std(axis=(1, 2), keepdims=True)
        return xo.sin((x - m) / (s + 1e-8)) * 0.5 + 0.5

    return _xo_case(build, _numpy_of)


CROSSOVER = System(
    "crossover", ("crossover",),
    "crossover's public Python API (lazy arrays forced and read on the host inside the timed region)",
    cases={
        "elementwise": _xo_elementwise,
        "reduction": _xo_reduction,
        "matmul": _xo_matmul,
        "fft2": _xo_fft2,
        "solve": _xo_solve,
        "svd": _xo_svd,
        "sparse_matmul": _xo_sparse,
        "monte_carlo_pi": _xo_monte_carlo,
        "conditional_accumulate": _xo_conditional,
        "conditional_accumulate_loop": _xo_conditional_loop,
        "image_pipeline": _xo_image,
    },
)


def all_systems() -> dict[str, System]:
    """Every known system, in report order (baseline first, focus second)."""
    from .gpu_systems import CUPY, TORCH
    from .numba_kernels import NUMBA
    from .xo_resident import CROSSOVER_GPU

    return {s.name: s for s in (NUMPY, CROSSOVER, SCIPY, NUMEXPR, NUMBA, CROSSOVER_GPU, CUPY, TORCH)}
