"""Library ops from Python (matmul, linalg, fft, sparse) against float64
NumPy/SciPy references, on odd sizes and transposed views, and their errors."""

import numpy as np
import pytest

import crossover as xo

LINALG_SIZES = [1, 7, 65]
#: Relative tolerances against float64 references (per input dtype).
RTOL = {np.float32: 2e-4, np.float64: 1e-10}


def rel(got, want):
    got, want = np.asarray(got, dtype=np.complex128), np.asarray(want, dtype=np.complex128)
    return np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300)


def spd(rng, n, dtype):
    r = rng.standard_normal((n, n))
    return (r @ r.T / n + np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((7, 5), (5, 3)), ((65, 129), (129,)), ((129,), (129, 9)),
                                    ((3, 1, 4, 6), (2, 6, 5)), ((1, 1), (1, 1))])
def test_matmul_matches_numpy(rng, dtype, shapes):
    a = rng.standard_normal(shapes[0]).astype(dtype)
    b = rng.standard_normal(shapes[1]).astype(dtype)
    want = a.astype(np.float64) @ b.astype(np.float64)
    for got in (xo.matmul(a, b), xo.asarray(a) @ b, np.matmul(xo.asarray(a), xo.asarray(b))):
        assert isinstance(got, xo.ndarray)
        assert got.dtype == dtype and got.shape == want.shape
        assert rel(got, want) < RTOL[dtype]


def test_matmul_of_transposed_views_and_dot(rng):
    a = rng.standard_normal((33, 17))
    b = rng.standard_normal((33, 9))
    got = xo.asarray(a).T @ xo.asarray(b)
    assert rel(got, a.T @ b) < 1e-12
    assert rel(np.dot(xo.asarray(a).T, b), a.T @ b) < 1e-12


def test_matmul_fuses_with_a_following_reduction(rng):
    a, b = rng.standard_normal((40, 30)), rng.standard_normal((30, 20))
    got = (xo.asarray(a) @ b).sum()
    assert abs(float(got) - (a @ b).sum()) < 1e-9 * np.abs(a @ b).sum()


def test_matmul_shape_mismatch_is_a_shape_error(rng):
    with pytest.raises(xo.ShapeError, match="matmul"):
        xo.matmul(np.ones((3, 4)), np.ones((5, 2)))
    with pytest.raises(ValueError):
        xo.asarray(np.ones((3, 4))) @ np.ones((5, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", LINALG_SIZES)
def test_solve_general_and_spd(rng, dtype, n):
    a = spd(rng, n, dtype)
    b = rng.standard_normal((n, 3)).astype(dtype)
    for assume in ("gen", "pos"):
        x = np.asarray(xo.linalg.solve(a, b, assume_a=assume), dtype=np.float64)
        resid = np.linalg.norm(a.astype(np.float64) @ x - b) / np.linalg.norm(b)
        assert resid < RTOL[dtype], assume
    x = np.linalg.solve(xo.asarray(a), xo.asarray(b[:, 0]))
    assert isinstance(x, xo.ndarray) and x.shape == (n,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", LINALG_SIZES)
def test_factorisations_reconstruct(rng, dtype, n):
    a = rng.standard_normal((n, n)).astype(dtype)
    s_ = spd(rng, n, dtype)
    tol = RTOL[dtype] * max(n, 1)
    l = np.asarray(xo.linalg.cholesky(s_), dtype=np.float64)
    assert np.allclose(np.triu(l, 1), 0) and rel(l @ l.T, s_) < tol
    q, r = (np.asarray(m, dtype=np.float64) for m in xo.linalg.qr(a))
    assert rel(q @ r, a) < tol and rel(q.T @ q, np.eye(n)) < tol
    u, s, vt = (np.asarray(m, dtype=np.float64) for m in np.linalg.svd(xo.asarray(a)))
    assert rel(u * s @ vt, a) < tol and np.all(np.diff(s) <= 0)
    assert rel(xo.linalg.svdvals(a), np.linalg.svd(a.astype(np.float64), compute_uv=False)) < tol
    w, v = (np.asarray(m, dtype=np.float64) for m in xo.linalg.eigh(s_))
    assert rel(v * w @ v.T, s_) < tol and np.all(np.diff(w) >= 0)
    inv = np.asarray(xo.linalg.inv(s_), dtype=np.float64)
    assert rel(inv @ s_, np.eye(n)) < tol * 10
    assert abs(float(xo.linalg.det(s_)) / np.linalg.det(s_.astype(np.float64)) - 1) < tol


def test_linalg_errors_name_the_problem():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(xo.NumericalError, match="singular"):
        np.asarray(xo.linalg.solve(singular, np.ones(2)))
    with pytest.raises(np.linalg.LinAlgError):
        np.asarray(xo.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])))
    with pytest.raises(xo.NumericalError):
        np.asarray(xo.linalg.inv(np.array([[np.nan, 0.0], [0.0, 1.0]])))
    with pytest.raises(xo.ShapeError):
        xo.linalg.solve(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="assume_a"):
        xo.linalg.solve(np.eye(2), np.ones(2), assume_a="sym")
    # NumPy's default full_matrices=True: the engine's thin SVD for a square
    # matrix; a non-square one needs the complement basis (NumPy runs it).
    u, s, vt = xo.linalg.svd(np.diag([3.0, 2.0]))
    np.testing.assert_allclose(np.asarray(s), [3.0, 2.0], rtol=1e-15)
    wide = np.arange(6.0).reshape(2, 3) + 1
    with pytest.warns(xo.FallbackWarning, match="full_matrices"):
        u, s, vt = xo.linalg.svd(wide)
    assert vt.shape == (3, 3)
    np.testing.assert_allclose((np.asarray(u)[:, :2] * np.asarray(s)) @ np.asarray(vt)[:2], wide,
                               rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 1023, 1025])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fft_1d_family(rng, dtype, n, norm):
    x = rng.standard_normal((3, n)).astype(dtype)
    z = (x + 1j * rng.standard_normal((3, n))).astype(np.complex64 if dtype == np.float32 else np.complex128)
    tol = RTOL[dtype]
    assert rel(xo.fft.fft(z, norm=norm), np.fft.fft(z.astype(np.complex128), norm=norm)) < tol
    assert rel(np.fft.ifft(xo.asarray(z), norm=norm), np.fft.ifft(z.astype(np.complex128), norm=norm)) < tol
    got = xo.fft.rfft(x, norm=norm)
    assert got.dtype == (np.complex64 if dtype == np.float32 else np.complex128)
    assert rel(got, np.fft.rfft(x.astype(np.float64), norm=norm)) < tol
    spec = np.fft.rfft(x.astype(np.float64))
    assert rel(xo.fft.irfft(spec, n=n), x) < tol * 10
    assert rel(xo.fft.fft(x, n=n + 3, axis=0), np.fft.fft(x.astype(np.float64), n=n + 3, axis=0)) < tol


@pytest.mark.parametrize("shape", [(7, 9), (64, 33), (2, 5, 6)])
def test_fft_2d_family(rng, shape):
    x = rng.standard_normal(shape)
    assert rel(np.fft.fft2(xo.asarray(x)), np.fft.fft2(x)) < 1e-12
    assert rel(xo.fft.ifft2(np.fft.fft2(x)), x) < 1e-12
    assert rel(xo.fft.rfft2(x, norm="ortho"), np.fft.rfft2(x, norm="ortho")) < 1e-12
    assert rel(xo.fft.irfft2(np.fft.rfft2(x), s=shape[-2:]), x) < 1e-12
    with pytest.raises(ValueError, match="norm"):
        xo.fft.fft(x, norm="sideways")


def test_sparse_times_sparse_explains_its_placement():
    sp = pytest.importorskip("scipy.sparse")
    a = sp.random(300, 200, density=0.05, format="csr", random_state=4, dtype=np.float64)
    b = sp.random(200, 150, density=0.05, format="csr", random_state=5, dtype=np.float64)
    xa, xb = xo.sparse.csr_matrix(a), xo.sparse.csr_matrix(b)
    planned = xa.explain_matmul(xb, run=False)
    assert "sparse" in planned and "choice" in planned and "cpu" in planned, planned
    # A run's line (`measured  : kernel ...`), not a calibrated profile's
    # "measured curve", which a plan that has not run may show.
    assert "measured  :" not in planned, planned
    ran = xa.explain_matmul(xb)
    assert "measured  :" in ran, ran
    if xo.get_device() == "gpu-prefer":  # the pocl stage: the device runs it
        assert "gpu" in ran.split("choice")[1].split("\n")[0], ran
    with pytest.raises(TypeError, match="explain_matmul"):
        xa.explain_matmul(np.ones((200, 3)))
    with pytest.raises(xo.ShapeError):
        xa.explain_matmul(xa, run=False)


def test_sparse_round_trip_and_products(rng):
    sp = pytest.importorskip("scipy.sparse")
    a = sp.random(300, 200, density=0.05, format="csr", random_state=1, dtype=np.float64)
    b = sp.random(200, 150, density=0.05, format="csr", random_state=2, dtype=np.float64)
    xa, xb = xo.sparse.csr_matrix(a), xo.sparse.csr_matrix(b)
    assert xa.shape == (300, 200) and xa.nnz == a.nnz
    assert rel(np.asarray(xa.toarray()), a.toarray()) == 0
    c = xa @ xb
    assert xo.sparse.issparse(c)
    assert rel(xo.sparse.to_scipy(c).toarray(), (a @ b).toarray()) < 1e-12
    v = rng.standard_normal(200)
    m = rng.standard_normal((200, 4))
    assert rel(xa @ v, a @ v) < 1e-12 and rel(xa @ m, a @ m) < 1e-12
    assert rel(xa.T.toarray(), a.T.toarray()) == 0
    assert rel(xa.sum(axis=0), np.asarray(a.sum(axis=0)).ravel()) < 1e-12
    assert rel(xa.sum(axis=1), np.asarray(a.sum(axis=1)).ravel()) < 1e-12
    assert abs(float(xa.sum()) - a.sum()) < 1e-9
    r = xo.sparse.random(100, 80, density=0.1, random_state=3, dtype=np.float32)
    assert r.nnz == 800 and r.dtype == np.float32
    dense = rng.standard_normal((5, 6)) * (rng.random((5, 6)) < 0.3)
    assert rel(xo.sparse.csr_matrix(dense).toarray(), dense) == 0


def test_sparse_bad_input_is_an_argument_error():
    with pytest.raises(xo.ArgumentError, match="increasing|sorted"):
        xo.sparse.csr_matrix((np.ones(2), np.array([2, 0]), np.array([0, 2])), shape=(1, 3))
    with pytest.raises(xo.ArgumentError, match="range"):
        xo.sparse.csr_matrix((np.ones(1), np.array([5]), np.array([0, 1])), shape=(1, 3))
    with pytest.raises(ValueError, match="shape"):
        xo.sparse.csr_matrix((np.ones(1), np.array([0]), np.array([0, 1])))
    a = xo.sparse.random(4, 5, density=0.5)
    with pytest.raises(xo.ShapeError):
        a @ a


def test_jit_replays_library_calls(rng):
    @xo.jit
    def f(a, b):
        return np.sin(a @ b).sum(axis=0)

    a, b = rng.standard_normal((20, 10)), rng.standard_normal((10, 8))
    for _ in range(3):
        assert rel(f(a, b), np.sin(a @ b).sum(axis=0)) < 1e-12
    a2 = rng.standard_normal((20, 10))
    assert rel(f(a2, b), np.sin(a2 @ b).sum(axis=0)) < 1e-12
