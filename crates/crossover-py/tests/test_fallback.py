"""NumPy functions the engine lacks: computed on host arrays with NumPy,
warned once per function, configurable."""

import warnings

import numpy as np
import pytest

import crossover as xo
from conftest import nonzero


def test_library_functions_stay_in_crossover_without_warnings(rng):
    a = nonzero(rng, (6, 6), np.float64) + 6 * np.eye(6)
    x = xo.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cases = [
            (x @ x, a @ a),
            (np.matmul(x, x), a @ a),
            (np.dot(x, x), a @ a),
            (np.linalg.solve(x, x[:, 0]), np.linalg.solve(a, a[:, 0])),
            (np.linalg.inv(x), np.linalg.inv(a)),
            (np.linalg.det(x), np.linalg.det(a)),
            (np.linalg.cholesky(x @ x.T), np.linalg.cholesky(a @ a.T)),
            (np.fft.fft(x), np.fft.fft(a)),
        ]
        for got, want in cases:
            assert isinstance(got, xo.ndarray)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)
        u, s, vt = np.linalg.svd(x)
        assert isinstance(s, xo.ndarray)
        np.testing.assert_allclose(s.numpy(), np.linalg.svd(a)[1], rtol=1e-12)
        w, v = np.linalg.eigh(x + x.T)
        np.testing.assert_allclose(w.numpy(), np.linalg.eigh(a + a.T)[0], rtol=1e-10)


def test_missing_library_functions_fall_back_with_one_warning(rng):
    a = nonzero(rng, (6, 6), np.float64) + 6 * np.eye(6)
    x = xo.asarray(a)
    with pytest.warns(xo.FallbackWarning, match="eigvals"):
        got = np.linalg.eigvals(x)
    np.testing.assert_allclose(np.sort_complex(np.asarray(got)), np.sort_complex(np.linalg.eigvals(a)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.linalg.eigvals(x)  # no second warning
    with pytest.warns(xo.FallbackWarning, match="fftn"):  # 3-D: the engine's fftn is 2-D
        got = np.fft.fftn(x.reshape((2, 3, 6)))
    np.testing.assert_allclose(np.asarray(got), np.fft.fftn(a.reshape(2, 3, 6)), rtol=1e-12,
                               atol=1e-12)


def test_fallback_modes(rng):
    x = xo.asarray(nonzero(rng, 5, np.float64))
    xo.set_fallback("ignore")
    assert xo.get_fallback() == "ignore"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.diff(x)
    xo.set_fallback("raise")
    with pytest.raises(xo.FallbackError) as e:
        np.diff(x)
    assert isinstance(e.value, NotImplementedError)
    with pytest.raises(ValueError):
        xo.set_fallback("sometimes")


def test_unsupported_ufunc_kwargs_and_operators(rng):
    a = nonzero(rng, 20, np.float64)
    x = xo.asarray(a)
    with pytest.warns(xo.FallbackWarning, match="floor_divide"):
        np.testing.assert_allclose((x // 0.3).numpy(), a // 0.3)
    with pytest.warns(xo.FallbackWarning, match="remainder"):
        np.testing.assert_allclose((x % 0.3).numpy(), a % 0.3)
    out = np.empty(20)
    with pytest.warns(xo.FallbackWarning, match="sin"):
        r = np.sin(x, out=out)
    assert r is out
    np.testing.assert_allclose(out, np.sin(a))
    with pytest.raises(TypeError, match="immutable"):
        np.sin(x, out=x)


def test_advanced_indexing_falls_back(rng):
    a = nonzero(rng, (10, 4), np.float64)
    x = xo.asarray(a)
    with pytest.warns(xo.FallbackWarning, match="advanced indexing"):
        np.testing.assert_array_equal(x[[0, 3, 3]].numpy(), a[[0, 3, 3]])
    np.testing.assert_array_equal(x[x > 0].numpy(), a[a > 0])
    np.testing.assert_array_equal(x[np.array([True] * 5 + [False] * 5)].numpy(), a[:5])


def test_mixed_with_unsupported_dtype_falls_back():
    x = xo.asarray(np.ones(4))
    with pytest.warns(xo.FallbackWarning):
        r = np.add(x, np.ones(4, np.float16))
    np.testing.assert_array_equal(np.asarray(r), np.full(4, 2.0))
