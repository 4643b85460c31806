"""Matrix products (``@``, ``np.matmul``, ``np.dot``, ``np.tensordot``) in the
engine, and ``concatenate``/``stack`` of crossover arrays: no fallback
warning (warnings are errors), results against float64 references."""

import numpy as np
import pytest

import crossover as xo
from conftest import nonzero


def _tol(dtype, k):
    # float32 products: errors grow ~ sqrt(k) ulps; float64 tight.
    return (2e-5 * max(1.0, np.sqrt(k) / 8), 1e-5) if dtype == np.float32 else (1e-12, 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "sa,sb",
    [((7, 5), (5, 3)), ((65, 130), (130, 33)), ((5,), (5, 4)), ((4, 5), (5,)), ((6,), (6,)),
     ((3, 4, 5), (5, 2)), ((2, 1, 4, 5), (3, 5, 6))],
)
def test_matmul_matches_float64(rng, dtype, sa, sb):
    a = nonzero(rng, sa, dtype)
    b = nonzero(rng, sb, dtype)
    x, y = xo.asarray(a), xo.asarray(b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    for got in (x @ y, np.matmul(x, y), xo.matmul(x, y), x @ b, a @ y):
        assert isinstance(got, xo.ndarray)
        assert got.dtype == dtype and got.shape == want.shape
        rtol, atol = _tol(dtype, sa[-1])
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol, atol=atol)


def test_matmul_is_lazy_and_fuses_with_its_consumer(rng):
    a = nonzero(rng, (40, 30), np.float32)
    b = nonzero(rng, (30, 20), np.float32)
    z = np.sin(xo.asarray(a) @ xo.asarray(b)) + 1
    assert not z.is_ready
    want = np.sin(a.astype(np.float64) @ b.astype(np.float64)) + 1
    np.testing.assert_allclose(z.numpy(), want, rtol=1e-4, atol=1e-5)


def test_matmul_errors_and_mixed_dtypes(rng):
    x = xo.asarray(nonzero(rng, (3, 4), np.float32))
    with pytest.raises(xo.ShapeError, match="matmul"):
        xo.matmul(x, x)
    with pytest.raises(ValueError):
        x @ x  # NumPy's error through the operator
    d = nonzero(rng, (4, 2), np.float64)
    got = x @ xo.asarray(d)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), x.numpy().astype(np.float64) @ d, rtol=1e-6)


def test_dot_and_tensordot(rng):
    a = nonzero(rng, (6, 7), np.float64)
    b = nonzero(rng, (7, 3), np.float64)
    np.testing.assert_allclose(np.dot(xo.asarray(a), xo.asarray(b)).numpy(), a @ b, rtol=1e-12)
    t = nonzero(rng, (3, 4, 5), np.float64)
    u = nonzero(rng, (5, 4, 2), np.float64)
    for axes in (1, ([1, 2], [1, 0]), ([2], [0])):
        if axes == 1:
            got, want = xo.tensordot(xo.asarray(t), xo.asarray(u), axes), np.tensordot(t, u, axes)
        else:
            got = np.tensordot(xo.asarray(t), xo.asarray(u), axes=axes)
            want = np.tensordot(t, u, axes=axes)
        assert isinstance(got, xo.ndarray) and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(xo.ShapeError, match="tensordot"):
        xo.tensordot(xo.asarray(t), xo.asarray(u), axes=([0], [0]))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_and_stack(rng, axis):
    parts = [nonzero(rng, (3, 4), np.float32) for _ in range(3)]
    lazy = [np.exp(xo.asarray(p)) * 2 for p in parts]  # pending inputs are computed
    got = np.concatenate(lazy, axis=axis)
    assert isinstance(got, xo.ndarray) and got.dtype == np.float32
    want = np.concatenate([np.exp(p.astype(np.float64)) * 2 for p in parts], axis=axis)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    got = np.stack(lazy, axis=axis)
    want = np.stack([np.exp(p.astype(np.float64)) * 2 for p in parts], axis=axis)
    assert isinstance(got, xo.ndarray) and got.shape == want.shape
    np.testing.assert_allclose(xo.stack(lazy, axis=axis).numpy(), want, rtol=1e-6)
    mixed = xo.concatenate([lazy[0], parts[1]], axis=0)
    np.testing.assert_allclose(mixed.numpy()[3:], parts[1])


def test_concatenate_errors_are_numpys(rng):
    with pytest.raises(ValueError):
        np.concatenate([xo.ones((2, 3)), xo.ones((2, 4))], axis=0)


def test_zero_size_arrays_for_dask_meta():
    m = xo.zeros((0, 0), dtype=np.float32)
    assert m.shape == (0, 0) and m.dtype == np.float32
    assert (np.sin(m) + 1).shape == (0, 0)
    assert np.sum(m, axis=0, keepdims=True).shape == (1, 0)
    assert (m @ m).shape == (0, 0)
    assert m[0:0, 0:0].shape == (0, 0)
    assert np.concatenate([m, m]).shape == (0, 0)


# ---- protocol details Dask relies on -------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ufunc_with_dtype_keyword_stays_in_crossover(rng, dtype):
    a = nonzero(rng, (5, 6), np.float32)
    b = nonzero(rng, (5, 6), np.float64)
    x, y = xo.asarray(a), xo.asarray(b)
    got = np.add(x, y, dtype=dtype)
    assert isinstance(got, xo.ndarray) and got.dtype == dtype
    np.testing.assert_allclose(got.numpy(), np.add(a, b, dtype=dtype), rtol=1e-6)
    got = np.multiply(x, 2.5, dtype=dtype)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.numpy(), np.multiply(a, 2.5, dtype=dtype), rtol=1e-6)
    got = np.sin(x, dtype=np.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), np.sin(a.astype(np.float64)), rtol=1e-12)
    assert np.add(x, y, out=None).dtype == np.float64
    ai = np.arange(30, dtype=np.int32).reshape(5, 6)
    with pytest.warns(xo.FallbackWarning, match="add"):  # integer loop: NumPy's
        r = np.add(xo.asarray(ai), ai, dtype=np.int64)
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r.numpy(), np.add(ai, ai, dtype=np.int64))


def test_like_functions_take_shape_and_dtype():
    m = xo.zeros((0, 0), dtype=np.float32)
    z = np.zeros_like(m, shape=(1, 1), dtype=np.float64)
    assert isinstance(z, xo.ndarray) and z.shape == (1, 1) and z.dtype == np.float64
    o = np.ones_like(m, shape=3)
    assert o.shape == (3,) and o.dtype == np.float32 and o.numpy().tolist() == [1, 1, 1]
    f = np.full_like(m, 7, shape=(2, 2))
    assert f.dtype == np.float32 and f.numpy().tolist() == [[7, 7], [7, 7]]


def test_array_priority_is_above_numpys():
    assert xo.ndarray.__array_priority__ > np.empty(0).__array_priority__
    assert xo.ones(2).__array_priority__ == xo.ndarray.__array_priority__


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_misaligned_contiguous_input(rng, dtype):
    # A NumPy array viewing memory at an odd address (as arrays rebuilt from
    # network frames can): it used to recurse without end and crash.
    a = nonzero(rng, (7, 9), np.float64).astype(dtype)
    buf = bytearray(a.nbytes + 1)
    u = np.frombuffer(buf, dtype=dtype, offset=1, count=a.size).reshape(a.shape)
    u[...] = a
    assert not u.flags.aligned and u.flags.c_contiguous
    x = xo.asarray(u)
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal((x + 1).numpy(), a + 1)
    np.testing.assert_array_equal(xo.evaluate("u + 1"), a + 1)


def test_creation_with_like_gives_crossover_arrays():
    m = xo.zeros((0, 0), dtype=np.float32)
    a = np.array([], like=m, ndmin=2, dtype=np.float32)
    assert isinstance(a, xo.ndarray) and a.shape == (1, 0) and a.dtype == np.float32  # as NumPy
    b = np.asarray([1.5, 2.5], like=m)
    assert isinstance(b, xo.ndarray) and b.numpy().tolist() == [1.5, 2.5]
    e = np.empty((2, 3), dtype=np.float64, like=m)
    assert isinstance(e, xo.ndarray) and e.shape == (2, 3)
    r = np.arange(4, like=m)
    assert isinstance(r, xo.ndarray) and r.numpy().tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_square_fast_path_keeps_numpys_dtypes(rng, dtype):
    # x**2 runs as square(x) (Dask's moments use d**2): same values and
    # dtypes as NumPy, including int ** 2.0 -> float64.
    a = (nonzero(rng, (4, 5), np.float64) * 10).astype(dtype)
    x = xo.asarray(a)
    for e in (2, 2.0, 3):
        got, want = x ** e, a ** e
        assert got.dtype == want.dtype, (e, got.dtype, want.dtype)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert (x ** np.float32(2)).dtype == (a ** np.float32(2)).dtype
