"""NumPy functions on crossover arrays (__array_function__): reductions,
where, shape functions; results stay crossover arrays."""

import numpy as np
import pytest

import crossover as xo
from conftest import SIZES, check, nonzero

FLOATS = [np.float32, np.float64]
AXES = [None, 0, 1, -1, (0, 2), (1, 2), (0, 1, 2), ()]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["sum", "mean", "std", "var", "min", "max"])
def test_reductions_match_numpy(name, axis, keepdims, dtype, rng):
    a = nonzero(rng, (13, 37, 129), dtype)  # 129 * 37 * 13 crosses chunk edges
    f = getattr(np, name)
    got = f(xo.asarray(a), axis=axis, keepdims=keepdims)
    want = f(a.astype(np.float64), axis=axis, keepdims=keepdims)
    assert isinstance(got, xo.ndarray)
    assert got.shape == want.shape
    assert got.dtype == f(a, axis=axis, keepdims=keepdims).dtype
    kind = "exact" if name in ("min", "max") else "reduction"
    check(got, want, kind, dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_full_reductions_sizes(n, dtype, rng):
    a = nonzero(rng, n, dtype)
    x = xo.asarray(a)
    a64 = a.astype(np.float64)
    check(np.sum(x), a64.sum(), "reduction", dtype)
    check(np.mean(x), a64.mean(), "reduction", dtype)
    check(x.max(), a64.max(), "exact", dtype)
    if n > 1:
        check(np.std(x, ddof=1), a64.std(ddof=1), "reduction", dtype)
        check(np.var(x), a64.var(), "reduction", dtype)
    assert int(np.argmax(x)) == int(np.argmax(a))
    assert int(np.argmin(x)) == int(np.argmin(a))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_argmax_argmin_axis(axis, rng):
    a = nonzero(rng, (17, 2050), np.float32)
    x = xo.asarray(a)
    np.testing.assert_array_equal(np.argmax(x, axis=axis).numpy(), np.argmax(a, axis=axis))
    np.testing.assert_array_equal(x.argmin(axis=axis).numpy(), np.argmin(a, axis=axis))


def test_reduction_methods_and_dtype_arg(rng):
    a = nonzero(rng, (40, 50), np.float32)
    x = xo.asarray(a)
    check(x.sum(axis=1, dtype=np.float64), a.astype(np.float64).sum(axis=1), "reduction", np.float64)
    assert x.sum(dtype=np.float64).dtype == np.float64
    check(x.std(axis=0, ddof=1), a.astype(np.float64).std(axis=0, ddof=1), "reduction", np.float32)
    i = xo.asarray(np.arange(10, dtype=np.int32))
    assert i.sum().dtype == np.int64 and int(i.sum()) == 45
    assert i.mean().dtype == np.float64
    with pytest.raises(TypeError, match="immutable"):
        x.sum(out=np.empty(()))


def test_fused_mean_std_normalize(rng):
    a = nonzero(rng, (8, 33, 65), np.float32)
    x = xo.asarray(a)
    y = (x - x.mean(axis=(1, 2), keepdims=True)) / (x.std(axis=(1, 2), keepdims=True) + 1e-8)
    a64 = a.astype(np.float64)
    want = (a64 - a64.mean(axis=(1, 2), keepdims=True)) / (a64.std(axis=(1, 2), keepdims=True) + 1e-8)
    check(y, want, "transcendental", np.float32)


@pytest.mark.parametrize("dtype", FLOATS)
def test_where(dtype, rng):
    a, b = nonzero(rng, (300, 7), dtype), nonzero(rng, (7,), dtype)
    x = xo.asarray(a)
    got = np.where(x > 0, x, b * 2)
    want = np.where(a > 0, a, b * 2)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(np.where(x > 0, 1.0, -1.0).numpy(), np.where(a > 0, 1.0, -1.0))
    np.testing.assert_array_equal(xo.where(a < 0, 0.0, a).numpy(), np.where(a < 0, 0.0, a))


def test_shape_functions(rng):
    a = nonzero(rng, (2, 3, 4), np.float64)
    x = xo.asarray(a)
    cases = [
        (np.reshape(x, (4, 6)), a.reshape(4, 6)),
        (np.reshape(x, -1), a.reshape(-1)),
        (np.transpose(x), a.transpose()),
        (np.transpose(x, (2, 0, 1)), a.transpose(2, 0, 1)),
        (np.swapaxes(x, 0, 1), a.swapaxes(0, 1)),
        (np.moveaxis(x, 0, -1), np.moveaxis(a, 0, -1)),
        (np.expand_dims(x, 1), np.expand_dims(a, 1)),
        (np.squeeze(x[:, :1]), np.squeeze(a[:, :1])),
        (np.ravel(x), np.ravel(a)),
        (np.broadcast_to(x[:, :1], (2, 5, 4)), np.broadcast_to(a[:, :1], (2, 5, 4))),
        (np.copy(x), a),
        (np.zeros_like(x), np.zeros_like(a)),
        (np.full_like(x, 3.0), np.full_like(a, 3.0)),
    ]
    for got, want in cases:
        assert isinstance(got, xo.ndarray), type(got)
        np.testing.assert_array_equal(got.numpy(), want)
    assert np.shape(x) == (2, 3, 4) and np.ndim(x) == 3 and np.size(x) == 24


def test_shape_queries_do_not_compute(rng):
    x = xo.asarray(nonzero(rng, (5, 5), np.float32)) * 2
    assert np.shape(x) == (5, 5)
    assert not x.is_ready
