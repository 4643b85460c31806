"""CuPy and PyTorch. Inputs are copied to the device outside the timed
region; every timed run ends with a device synchronisation, so the clock
stops when the GPU has finished (the result stays on the device, as these
libraries are used; reading it back for the check is not timed).

Torch runs on CUDA when available, else on the CPU (the row's ``chosen``
says which). Neither is installed on every machine: loading raises, and the
comparison turns that into a note."""

from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np

from .systems import Case, System


class _Cupy(System):
    def load(self) -> str:
        cp = importlib.import_module("cupy")
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device visible to CuPy")
        return cp.__version__

    def gpu_name(self) -> str | None:
        import cupy as cp

        name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)


def _cp_timed(f: Callable[[], Any]) -> Callable[[], Any]:
    import cupy as cp

    dev = cp.cuda.Device()

    def run() -> Any:
        r = f()
        dev.synchronize()
        return r

    return run


def _cp_host(r: Any) -> Any:
    import cupy as cp

    return cp.asnumpy(r)


def _cp_inputs(inp: dict, *names: str) -> list:
    import cupy as cp

    out = [cp.asarray(inp[n]) for n in names]
    cp.cuda.Device().synchronize()
    return out


def _cp_case(f: Callable[[], Any], host: Callable[[Any], Any] = _cp_host) -> Case:
    return Case(_cp_timed(f), host)  # always the GPU: no ``chosen`` needed


def _cp_elementwise(inp: dict, _: str) -> Case:
    import cupy as cp

    a, b = _cp_inputs(inp, "a", "b")
    return _cp_case(lambda: a * b + cp.sin(a) + cp.cos(b))


def _cp_reduction(inp: dict, variant: str) -> Case:
    (x,) = _cp_inputs(inp, "x")
    f = {"sum": x.sum, "mean": x.mean, "std": x.std}[variant]
    return _cp_case(f, lambda r: float(r))


def _cp_matmul(inp: dict, _: str) -> Case:
    a, b = _cp_inputs(inp, "a", "b")
    return _cp_case(lambda: a @ b)


def _cp_fft2(inp: dict, _: str) -> Case:
    import cupy as cp

    (x,) = _cp_inputs(inp, "x")
    return _cp_case(lambda: cp.fft.fft2(x))


def _cp_solve(inp: dict, _: str) -> Case:
    import cupy as cp

    a, b = _cp_inputs(inp, "a", "b")
    try:
        from cupyx.lapack import posv  # Cholesky (potrf + potrs), copies its inputs

        return _cp_case(lambda: posv(a, b))
    except ImportError:
        return _cp_case(lambda: cp.linalg.solve(a, b))


def _cp_svd(inp: dict, _: str) -> Case:
    import cupy as cp

    (a,) = _cp_inputs(inp, "a")
    return _cp_case(lambda: cp.linalg.svd(a, full_matrices=False),
                    lambda usv: tuple(cp.asnumpy(p) for p in usv))


def _cp_sparse(inp: dict, _: str) -> Case:
    import cupy as cp
    import cupyx.scipy.sparse as csp

    a, b = (csp.csr_matrix((cp.asarray(m[0]), cp.asarray(m[1]), cp.asarray(m[2])), shape=m[3])
            for m in (inp["a"], inp["b"]))
    cp.cuda.Device().synchronize()
    host = lambda c: (cp.asnumpy(c.data), cp.asnumpy(c.indices), cp.asnumpy(c.indptr), tuple(c.shape))
    return _cp_case(lambda: a @ b, host)


def _cp_monte_carlo(inp: dict, _: str) -> Case:
    import cupy as cp

    n, rng = inp["samples"], cp.random.default_rng(inp["seed"])

    def run() -> Any:
        x = rng.random(n, dtype=cp.float32)
        y = rng.random(n, dtype=cp.float32)
        return 4.0 * cp.mean(x * x + y * y <= 1)

    return _cp_case(run, lambda r: float(r))


def _cp_conditional(inp: dict, _: str) -> Case:
    import cupy as cp

    (x,) = _cp_inputs(inp, "x")
    return _cp_case(lambda: cp.where(x > 0.5, x * x, -x).sum(), lambda r: float(r))


def _cp_image(inp: dict, _: str) -> Case:
    import cupy as cp

    (x,) = _cp_inputs(inp, "x")

    def run() -> Any:
        m = x.mean(axis=(1, 2), keepdims=True)
        s = x.std(axis=(1, 2), keepdims=True)
        return cp.sin((x - m) / (s + 1e-8)) * 0.5 + 0.5

    return _cp_case(run)


CUPY = _Cupy(
    "cupy", ("cupy",), "CuPy on the GPU (cuBLAS, cuFFT, cuSOLVER, cuSPARSE)", gpu=True,
    cases={
        "elementwise": _cp_elementwise,
        "reduction": _cp_reduction,
        "matmul": _cp_matmul,
        "fft2": _cp_fft2,
        "solve": _cp_solve,
        "svd": _cp_svd,
        "sparse_matmul": _cp_sparse,
        "monte_carlo_pi": _cp_monte_carlo,
        "conditional_accumulate": _cp_conditional,
        "image_pipeline": _cp_image,
    },
)

# ---- torch -----------------------------------------------------------------


class _Torch(System):
    def load(self) -> str:
        torch = importlib.import_module("torch")
        self.gpu = bool(torch.cuda.is_available())
        return torch.__version__

    def gpu_name(self) -> str | None:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def _t():
    import torch

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    return torch, dev


def _t_inputs(inp: dict, *names: str) -> list:
    torch, dev = _t()
    out = [torch.from_numpy(np.ascontiguousarray(inp[n])).to(dev) for n in names]
    if dev == "cuda":
        torch.cuda.synchronize()
    return out


def _t_case(f: Callable[[], Any], host: Callable[[Any], Any] | None = None) -> Case:
    torch, dev = _t()

    def run() -> Any:
        r = f()
        if dev == "cuda":
            torch.cuda.synchronize()
        return r

    return Case(run, host or (lambda r: r.cpu().numpy()), dev)


def _scalar(r: Any) -> float:
    return float(r.item())


def _t_elementwise(inp: dict, _: str) -> Case:
    torch, _d = _t()
    a, b = _t_inputs(inp, "a", "b")
    return _t_case(lambda: a * b + torch.sin(a) + torch.cos(b))


def _t_reduction(inp: dict, variant: str) -> Case:
    (x,) = _t_inputs(inp, "x")
    f = {"sum": x.sum, "mean": x.mean, "std": lambda: x.std(correction=0)}[variant]
    return _t_case(f, _scalar)


def _t_matmul(inp: dict, _: str) -> Case:
    a, b = _t_inputs(inp, "a", "b")
    return _t_case(lambda: a @ b)


def _t_fft2(inp: dict, _: str) -> Case:
    torch, _d = _t()
    (x,) = _t_inputs(inp, "x")
    return _t_case(lambda: torch.fft.fft2(x))


def _t_solve(inp: dict, _: str) -> Case:
    torch, _d = _t()
    a, b = _t_inputs(inp, "a", "b")

    def run() -> Any:  # the SPD route: Cholesky, then two triangular solves
        low = torch.linalg.cholesky(a)
        return torch.cholesky_solve(b[:, None], low)[:, 0]

    return _t_case(run)


def _t_svd(inp: dict, _: str) -> Case:
    torch, _d = _t()
    (a,) = _t_inputs(inp, "a")
    return _t_case(lambda: torch.linalg.svd(a, full_matrices=False),
                   lambda usv: tuple(p.cpu().numpy() for p in usv))


def _t_sparse(inp: dict, _: str) -> Case:
    torch, dev = _t()
    a, b = (
        torch.sparse_csr_tensor(torch.from_numpy(m[2].astype(np.int64)),
                                torch.from_numpy(m[1].astype(np.int64)),
                                torch.from_numpy(m[0]), size=m[3]).to(dev)
        for m in (inp["a"], inp["b"])
    )

    def host(c: Any) -> tuple:
        c = c.to_sparse_csr().cpu()
        return (c.values().numpy(), c.col_indices().numpy(), c.crow_indices().numpy(), tuple(c.shape))

    return _t_case(lambda: a @ b, host)


def _t_monte_carlo(inp: dict, _: str) -> Case:
    torch, dev = _t()
    n, gen = inp["samples"], torch.Generator(device=dev)
    gen.manual_seed(inp["seed"])

    def run() -> Any:
        x = torch.rand(n, generator=gen, device=dev, dtype=torch.float32)
        y = torch.rand(n, generator=gen, device=dev, dtype=torch.float32)
        return 4.0 * (x * x + y * y <= 1).to(torch.float64).mean()

    return _t_case(run, _scalar)


def _t_conditional(inp: dict, _: str) -> Case:
    torch, _d = _t()
    (x,) = _t_inputs(inp, "x")
    return _t_case(lambda: torch.where(x > 0.5, x * x, -x).sum(), _scalar)


def _t_image(inp: dict, _: str) -> Case:
    torch, _d = _t()
    (x,) = _t_inputs(inp, "x")

    def run() -> Any:
        m = x.mean(dim=(1, 2), keepdim=True)
        s = x.std(dim=(1, 2), keepdim=True, correction=0)
        return torch.sin((x - m) / (s + 1e-8)) * 0.5 + 0.5

    return _t_case(run)


TORCH = _Torch(
    "torch", ("torch",), "PyTorch on CUDA when available, else on the CPU",
    cases={
        "elementwise": _t_elementwise,
        "reduction": _t_reduction,
        "matmul": _t_matmul,
        "fft2": _t_fft2,
        "solve": _t_solve,
        "svd": _t_svd,
        "sparse_matmul": _t_sparse,
        "monte_carlo_pi": _t_monte_carlo,
        "conditional_accumulate": _t_conditional,
        "image_pipeline": _t_image,
    },
)

__all__ = ["CUPY", "TORCH"]
