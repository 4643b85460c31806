"""CuPy-style benchmark scripts, as articles write them, run with
``import crossover as cp`` and nothing else changed; their results are
checked against NumPy float64 references computed from the same inputs.

Each script must run natively: a FallbackWarning fails it, except those a
test names as known gaps (``.real`` of a complex array needs the engine's
real-part op exposed to Python). Sizes are not powers of two.
"""

import textwrap
import warnings

import numpy as np
import pytest

import crossover as xo


def run(source: str, known_gaps: tuple = ()) -> dict:
    """Runs a script's text as a module would; returns its globals. Any
    fallback other than ``known_gaps`` (names in the warning) fails."""
    scope: dict = {"__name__": "seed_script"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", xo.FallbackWarning)
        exec(compile(textwrap.dedent(source), "<seed script>", "exec"), scope)
    fallbacks = [str(w.message) for w in caught if issubclass(w.category, xo.FallbackWarning)]
    unexpected = [m for m in fallbacks if not any(g in m for g in known_gaps)]
    assert not unexpected, unexpected
    for gap in known_gaps:
        assert any(gap in m for m in fallbacks), f"{gap} is native now: drop it from known_gaps"
    return scope


def host(x):
    return xo.asnumpy(x).astype(np.float64) if np.asarray(x).dtype.kind != "c" else xo.asnumpy(x)


def test_matmul_script():
    s = run("""
        import time
        import crossover as cp

        n = 333
        cp.random.seed(42)
        x_gpu = cp.random.rand(n, n, dtype=cp.float32)
        y_gpu = cp.random.rand(n, n, dtype=cp.float32)
        start = time.time()
        z_gpu = cp.dot(x_gpu, y_gpu)
        w_gpu = x_gpu @ y_gpu
        cp.cuda.Stream.null.synchronize()
        elapsed = time.time() - start
        """)
    x, y = host(s["x_gpu"]), host(s["y_gpu"])
    assert s["x_gpu"].dtype == np.float32 and s["z_gpu"].dtype == np.float32
    ref = x @ y
    # float32 products of n terms in [0, 1): relative error well under 1e-5.
    np.testing.assert_allclose(host(s["z_gpu"]), ref, rtol=2e-5, atol=0)
    np.testing.assert_allclose(host(s["w_gpu"]), ref, rtol=2e-5, atol=0)
    assert s["elapsed"] >= 0


def test_elementwise_and_reductions_script():
    s = run("""
        import crossover as cp

        x = cp.random.rand(1000, 777)
        y = cp.sin(x) ** 2 + cp.cos(x) ** 2
        z = cp.exp(-x) * cp.sqrt(x) + 3 * x - 1
        total = cp.sum(z)
        avg = cp.mean(z)
        spread = cp.std(z)
        col_max = cp.max(z, axis=0)
        row_min = z.min(axis=1)
        """)
    x = host(s["x"])
    z = np.exp(-x) * np.sqrt(x) + 3 * x - 1
    np.testing.assert_allclose(host(s["y"]), 1.0, rtol=1e-15, atol=4e-16)
    np.testing.assert_allclose(host(s["z"]), z, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(float(s["total"]), z.sum(), rtol=1e-12)
    np.testing.assert_allclose(float(s["avg"]), z.mean(), rtol=1e-12)
    np.testing.assert_allclose(float(s["spread"]), z.std(), rtol=1e-12)
    # Same tolerance as z: a GPU's exp and sqrt may differ from the host's
    # by an ulp, and the fused reduction recomputes z.
    np.testing.assert_allclose(host(s["col_max"]), z.max(axis=0), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(host(s["row_min"]), z.min(axis=1), rtol=1e-14, atol=1e-15)


def test_fft2_script():
    s = run("""
        import crossover as cp

        img = cp.random.rand(300, 250, dtype=cp.float32)
        spectrum = cp.fft.fft2(img)
        power = cp.abs(spectrum) ** 2
        back = cp.fft.ifft2(spectrum).real
        """)
    img = host(s["img"])
    ref = np.fft.fft2(img)
    got = xo.asnumpy(s["spectrum"])
    assert got.dtype == np.complex64
    scale = np.abs(ref).max()
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-6 * scale)
    np.testing.assert_allclose(host(s["power"]), np.abs(ref) ** 2, rtol=0, atol=4e-6 * scale**2)
    np.testing.assert_allclose(host(s["back"]), img, rtol=0, atol=1e-5)


def test_solve_and_svd_script():
    s = run("""
        import crossover as cp

        n = 301
        A = cp.random.rand(n, n) + n * cp.eye(n)
        b = cp.random.rand(n)
        x = cp.linalg.solve(A, b)
        residual = cp.linalg.norm(A @ x - b)
        M = cp.random.rand(400, 123)
        u, s, vt = cp.linalg.svd(M, full_matrices=False)
        recon = u @ cp.diag(s) @ vt
        """)
    a, b = host(s["A"]), host(s["b"])
    np.testing.assert_allclose(host(s["x"]), np.linalg.solve(a, b), rtol=1e-12, atol=1e-15)
    assert float(s["residual"]) < 1e-10
    m = host(s["M"])
    assert s["u"].shape == (400, 123) and s["s"].shape == (123,) and s["vt"].shape == (123, 123)
    np.testing.assert_allclose(host(s["s"]), np.linalg.svd(m, compute_uv=False), rtol=1e-11)
    np.testing.assert_allclose(host(s["recon"]), m, rtol=0, atol=1e-11)


def test_sparse_script():
    s = run("""
        import crossover as cp
        import crossover.sparse as cpx_sparse

        m, n = 1000, 700
        A = cpx_sparse.random(m, n, density=0.01, format='csr', dtype=cp.float32, random_state=1)
        B = cpx_sparse.random(n, 300, density=0.02, format='csr', dtype=cp.float32, random_state=2)
        v = cp.random.rand(n, dtype=cp.float32)
        Av = A @ v
        AB = A @ B
        AM = A @ cp.ones((n, 5), dtype=cp.float32)
        """)
    a = xo.sparse.to_scipy(s["A"]).astype(np.float64)
    b = xo.sparse.to_scipy(s["B"]).astype(np.float64)
    assert s["A"].shape == (1000, 700) and s["A"].nnz == 7000 and s["A"].dtype == np.float32
    v = host(s["v"])
    np.testing.assert_allclose(host(s["Av"]), a @ v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s["AB"].toarray(), (a @ b).toarray(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host(s["AM"]), a @ np.ones((700, 5)), rtol=1e-5, atol=1e-6)


def test_monte_carlo_pi_script():
    s = run("""
        import crossover as cp

        N = 2_000_003
        cp.random.seed(0)
        x = cp.random.rand(N)
        y = cp.random.rand(N)
        inside = (x * x + y * y) <= 1.0
        pi_estimate = 4.0 * cp.sum(inside) / N
        """)
    x, y = host(s["x"]), host(s["y"])
    exact = 4.0 * np.count_nonzero(x * x + y * y <= 1.0) / s["N"]
    assert float(s["pi_estimate"]) == exact
    # 5 standard errors of the estimate (sd of 4*Bernoulli(pi/4) is ~1.64).
    assert abs(float(s["pi_estimate"]) - np.pi) < 5 * 1.65 / np.sqrt(s["N"])


@pytest.mark.parametrize("module", ["numpy", "crossover"])
def test_numpy_style_script_runs_under_both(module):
    s = run(f"""
        import {module} as np

        a = np.linspace(0.0, 1.0, 1001).reshape(7, 143)
        b = np.clip(np.sin(a * np.pi) - 0.5, -0.25, 0.25)
        c = np.where(np.isfinite(b), b, 0.0)
        d = np.round(np.abs(c).sum(axis=1), 3)
        e = np.allclose(np.outer(d, d), np.outer(d, d).T)
        """)
    a = np.linspace(0.0, 1.0, 1001).reshape(7, 143)
    b = np.clip(np.sin(a * np.pi) - 0.5, -0.25, 0.25)
    np.testing.assert_allclose(host(s["b"]), b, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(host(s["d"]), np.round(np.abs(b).sum(axis=1), 3), rtol=1e-14)
    assert s["e"] is True or s["e"] == np.True_
