"""NumPy functions the engine lacks: computed on host arrays with NumPy,
warned once per function, configurable."""

import warnings

import numpy as np
import pytest

import crossover as xo
from conftest import nonzero


def test_library_functions_fall_back_with_one_warning(rng):
    a = nonzero(rng, (6, 6), np.float64) + 6 * np.eye(6)
    x = xo.asarray(a)
    # Float products run in the engine; integer ones keep NumPy's integer
    # semantics through the fallback.
    ai = np.arange(36, dtype=np.int64).reshape(6, 6) - 17
    xi = xo.asarray(ai)
    with pytest.warns(xo.FallbackWarning, match="matmul"):
        y = xi @ xi
    assert isinstance(y, xo.ndarray) and y.dtype == np.int64
    np.testing.assert_array_equal(y.numpy(), ai @ ai)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(np.matmul(xi, xi).numpy(), ai @ ai)  # no second warning
    cases = [
        (np.linalg.solve, (x, x[:, 0]), (a, a[:, 0])),
        (np.linalg.inv, (x,), (a,)),
        (np.linalg.det, (x,), (a,)),
        (np.linalg.cholesky, (x @ x.T,), (a @ a.T,)),
        (np.fft.fft, (x,), (a,)),
    ]
    for func, xargs, aargs in cases:
        with pytest.warns(xo.FallbackWarning, match=func.__name__):
            got = func(*xargs)
        want = func(*aargs)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)
    with pytest.warns(xo.FallbackWarning, match="svd"):
        u, s, vt = np.linalg.svd(x)
    assert isinstance(s, xo.ndarray)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a)[1], rtol=1e-12)
    with pytest.warns(xo.FallbackWarning, match="eigh"):
        w, v = np.linalg.eigh(x + x.T)
    np.testing.assert_allclose(w.numpy(), np.linalg.eigh(a + a.T)[0], rtol=1e-10)


def test_fallback_modes(rng):
    x = xo.asarray(nonzero(rng, 5, np.float64))
    xo.set_fallback("ignore")
    assert xo.get_fallback() == "ignore"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.cumsum(x)
    xo.set_fallback("raise")
    with pytest.raises(xo.FallbackError) as e:
        np.cumsum(x)
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
        r = np.add(x, np.ones(4, np.uint8))
    np.testing.assert_array_equal(np.asarray(r), np.full(4, 2.0))
