"""Checks of one result against a float64 reference computed from the same
inputs with NumPy.

Products and factorisations are checked through random probe vectors
(Freivalds: ``C x`` against ``A (B x)``), which catches a wrong entry with
high probability at O(N^2) cost instead of a second O(N^3) computation; the
FFT the same way (``Y v`` against ``F (X (F v))`` with 1-D float64 DFTs of
vectors; ``F`` is symmetric), plus Parseval's identity and a few bins
computed directly from the definition. Big arrays are
converted to float64 in row blocks, so a check needs little more memory than
the result itself. Results come in host form (see ``systems.py``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

#: Tolerances, by workload (and variant).
TOL = {
    "elementwise": 1e-5,  # max |got - want| / (1 + |want|)
    "sum": 1e-5,
    "mean": 1e-5,
    "std": 1e-4,
    "matmul": 1e-4,  # probe: ||C x - A(B x)|| / ||A(B x)||
    "fft2": 1e-4,  # Parseval and direct bins, relative
    "solve": 1e-4,  # ||A x - b|| / ||b||
    "svd": 1e-4,  # reconstruction and orthogonality through probes
    "sparse_matmul": 1e-4,
    "conditional_accumulate": 1e-10,
    "conditional_accumulate_loop": 1e-10,
    "image_pipeline": 1e-4,  # max |got - want|
}
#: Monte Carlo: within this many standard deviations of pi.
SIGMAS = 6.0
_BLOCK = 1 << 22  # elements per float64 block


@dataclass(frozen=True)
class Check:
    ok: bool
    detail: str


def within(err: float, tol: float, what: str) -> Check:
    ok = bool(err <= tol)  # NaN compares false: a NaN error fails
    return Check(ok, f"{what} {err:.1e} (tol {tol:.0e})")


def _rows_per_block(cols: int) -> int:
    return max(1, _BLOCK // max(cols, 1))


def probe(n: int, seed: int) -> np.ndarray:
    """A seeded vector with entries in [-1, 1)."""
    return 2.0 * np.random.default_rng(seed).random(n) - 1.0


def matvec64(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``m @ x`` in float64 (complex128 if either is complex), converting
    ``m`` a block of rows at a time."""
    m = np.asarray(m)
    wide = np.result_type(np.float64, m.dtype)
    out = np.empty(m.shape[0], dtype=np.result_type(wide, x.dtype))
    step = _rows_per_block(m.shape[1])
    for i in range(0, m.shape[0], step):
        out[i : i + step] = m[i : i + step].astype(wide) @ x
    return out


def spmv64(csr: tuple, x: np.ndarray) -> np.ndarray:
    """``M @ x`` in float64 for ``(data, indices, indptr, shape)``;
    duplicates and unsorted indices are summed as CSR means them."""
    data, indices, indptr, shape = csr
    indptr = np.asarray(indptr, dtype=np.int64)
    rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
    vals = np.asarray(data, dtype=np.float64) * x[np.asarray(indices, dtype=np.int64)]
    return np.bincount(rows, weights=vals, minlength=shape[0])


def rel_norm_err(got: np.ndarray, want: np.ndarray) -> float:
    if got.shape != want.shape:
        return math.inf
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), np.finfo(float).tiny))


def rel_err(got: float, want: float) -> float:
    return abs(float(got) - want) / max(abs(want), np.finfo(float).tiny)


def _shape_fail(got: Any, want: tuple) -> Check | None:
    shape = tuple(np.shape(got))
    return None if shape == tuple(want) else Check(False, f"shape {shape}, expected {tuple(want)}")


def _cached(cache: dict, key: str, make: Callable[[], Any]) -> Any:
    if key not in cache:
        cache[key] = make()
    return cache[key]


def check_elementwise(inp: dict, got: np.ndarray, cache: dict | None = None) -> Check:
    a, b = inp["a"], inp["b"]
    bad = _shape_fail(got, a.shape)
    if bad:
        return bad
    err, step = 0.0, _rows_per_block(a.shape[1])
    for i in range(0, a.shape[0], step):
        x, z = a[i : i + step].astype(np.float64), b[i : i + step].astype(np.float64)
        want = x * z + np.sin(x) + np.cos(z)
        e = np.abs(got[i : i + step].astype(np.float64) - want) / (1.0 + np.abs(want))
        err = max(err, float(np.max(e)) if not np.isnan(e).any() else math.inf)
    return within(err, TOL["elementwise"], "max err")


def _moments(x: np.ndarray) -> tuple[float, float, float]:
    flat = x.reshape(-1)
    total = float(np.sum(flat, dtype=np.float64))
    mean = total / flat.size
    sq = sum(
        float(np.sum((flat[i : i + _BLOCK].astype(np.float64) - mean) ** 2))
        for i in range(0, flat.size, _BLOCK)
    )
    return total, mean, math.sqrt(sq / flat.size)


def check_reduction(inp: dict, got: float, variant: str, cache: dict | None = None) -> Check:
    total, mean, std = _cached({} if cache is None else cache, "moments", lambda: _moments(inp["x"]))
    want = {"sum": total, "mean": mean, "std": std}[variant]
    return within(rel_err(got, want), TOL[variant], "rel err")


def check_matmul(inp: dict, got: np.ndarray, cache: dict | None = None) -> Check:
    a, b = inp["a"], inp["b"]
    bad = _shape_fail(got, (a.shape[0], b.shape[1]))
    if bad:
        return bad
    x = probe(b.shape[1], 13)
    want = _cached({} if cache is None else cache, "abx", lambda: matvec64(a, matvec64(b, x)))
    return within(rel_norm_err(matvec64(got, x), want), TOL["matmul"], "probe rel err")


def _fft_reference(x: np.ndarray) -> tuple[float, float, dict, np.ndarray, np.ndarray]:
    n = x.shape[0]
    energy = float(sum(np.sum(x[i : i + 256].astype(np.float64) ** 2) for i in range(0, n, 256)))
    scale = float(np.sum(np.abs(x), dtype=np.float64))
    bins = {}
    cols = np.arange(x.shape[1])
    for k, l in {(0, 0), (1, 0), (0, 1), (3, n // 2), (n - 1, n // 3 + 1)}:
        # Y[k, l] = sum_r e^{-2 pi i k r / N} sum_c x[r, c] e^{-2 pi i l c / N};
        # phases reduced mod N so they are exact for any N.
        ph_c = 2.0 * np.pi * ((l * cols) % x.shape[1]) / x.shape[1]
        inner = matvec64(x, np.cos(ph_c)) - 1j * matvec64(x, np.sin(ph_c))
        ph_r = 2.0 * np.pi * ((k * np.arange(n)) % n) / n
        bins[(k, l)] = complex(np.sum(inner * np.exp(-1j * ph_r)))
    v = probe(x.shape[1], 23)
    fxfv = np.fft.fft(matvec64(x, np.fft.fft(v)))  # F X F v: Y = F X F^T, F^T = F
    return energy * x.size, scale, bins, v, fxfv


def check_fft2(inp: dict, got: np.ndarray, cache: dict | None = None) -> Check:
    x = inp["x"]
    bad = _shape_fail(got, x.shape)
    if bad:
        return bad
    energy, scale, bins, v, fxfv = _cached({} if cache is None else cache, "fft",
                                           lambda: _fft_reference(x))
    step = _rows_per_block(x.shape[1])
    ey = sum(
        float(np.sum(np.abs(got[i : i + step].astype(np.complex128)) ** 2))
        for i in range(0, x.shape[0], step)
    )
    err = max(rel_err(ey, energy), rel_norm_err(matvec64(got, v), fxfv))
    for (k, l), want in bins.items():
        err = max(err, abs(complex(got[k, l]) - want) / scale)
    return within(err, TOL["fft2"], "probe/parseval/bin rel err")


def check_solve(inp: dict, got: np.ndarray, cache: dict | None = None) -> Check:
    a, b = inp["a"], inp["b"]
    bad = _shape_fail(got, b.shape)
    if bad:
        return bad
    ax = matvec64(a, np.asarray(got, dtype=np.float64))
    return within(rel_norm_err(ax, b.astype(np.float64)), TOL["solve"], "residual ||Ax-b||/||b||")


def check_svd(inp: dict, got: tuple, cache: dict | None = None) -> Check:
    a = inp["a"]
    u, s, vt = (np.asarray(p) for p in got)
    n, k = a.shape[0], min(a.shape)
    if u.shape[0] != n or u.shape[1] < k or s.shape != (k,) or vt.shape[1] != a.shape[1] or vt.shape[0] < k:
        return Check(False, f"shapes U {u.shape}, s {s.shape}, Vt {vt.shape} do not fit {a.shape}")
    u, vt = u[:, :k], vt[:k]  # full_matrices=True extras do not enter A
    x = probe(a.shape[1], 18)
    want = _cached({} if cache is None else cache, "ax", lambda: matvec64(a, x))
    recon = rel_norm_err(matvec64(u, s.astype(np.float64) * matvec64(vt, x)), want)
    w = probe(k, 19)
    orth = rel_norm_err(matvec64(u.T, matvec64(u, w)), w)
    c = within(max(recon, orth), TOL["svd"], "recon/orth rel err")
    if not np.all(s[:-1] >= s[1:]):
        return Check(False, c.detail + "; singular values not descending")
    return c


def check_sparse_matmul(inp: dict, got: tuple, cache: dict | None = None) -> Check:
    a, b = inp["a"], inp["b"]
    if tuple(got[3]) != (a[3][0], b[3][1]):
        return Check(False, f"shape {tuple(got[3])}, expected {(a[3][0], b[3][1])}")
    x = probe(b[3][1], 22)
    want = _cached({} if cache is None else cache, "abx", lambda: spmv64(a, spmv64(b, x)))
    return within(rel_norm_err(spmv64(got, x), want), TOL["sparse_matmul"], "probe rel err")


def check_monte_carlo(inp: dict, got: float, cache: dict | None = None) -> Check:
    n, p = inp["samples"], math.pi / 4.0
    sigma = 4.0 * math.sqrt(p * (1.0 - p) / n)
    dev = abs(float(got) - math.pi)
    ok = bool(dev <= SIGMAS * sigma)
    return Check(ok, f"|pi - {float(got):.6f}| = {dev:.1e} (tol {SIGMAS:g} sigma = {SIGMAS * sigma:.0e})")


def _conditional_ref(x: np.ndarray) -> float:
    return float(sum(
        np.sum(np.where(c > 0.5, c * c, -c)) for c in (x[i : i + _BLOCK] for i in range(0, x.size, _BLOCK))
    ))


def check_conditional(inp: dict, got: float, cache: dict | None = None) -> Check:
    want = _cached({} if cache is None else cache, "ref", lambda: _conditional_ref(inp["x"]))
    return within(rel_err(got, want), TOL["conditional_accumulate"], "rel err")


def check_image(inp: dict, got: np.ndarray, cache: dict | None = None) -> Check:
    x = inp["x"]
    bad = _shape_fail(got, x.shape)
    if bad:
        return bad
    err = 0.0
    for img, out in zip(x, got):
        v = img.astype(np.float64)
        want = np.sin((v - v.mean()) / (v.std() + 1e-8)) * 0.5 + 0.5
        e = np.abs(out.astype(np.float64) - want)
        err = max(err, math.inf if np.isnan(e).any() else float(e.max()))
    return within(err, TOL["image_pipeline"], "max abs err")


def check(workload: str, variant: str, inp: dict, got: Any, cache: dict) -> Check:
    """Checks ``got`` (host form) for one case; ``cache`` keeps the float64
    reference of these inputs for the next system."""
    if workload == "reduction":
        return check_reduction(inp, got, variant, cache)
    return {
        "elementwise": check_elementwise,
        "matmul": check_matmul,
        "fft2": check_fft2,
        "solve": check_solve,
        "svd": check_svd,
        "sparse_matmul": check_sparse_matmul,
        "monte_carlo_pi": check_monte_carlo,
        "conditional_accumulate": check_conditional,
        "conditional_accumulate_loop": check_conditional,
        "image_pipeline": check_image,
    }[workload](inp, got, cache)
