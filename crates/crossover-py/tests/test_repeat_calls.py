"""Repeated calls of one structure (the engine reuses the kernels it fused
for a graph of the same structure): every change a cached kernel must not
survive, a shape, dtype, stride, offset, scalar or input aliasing, gives
NumPy's result, and NumPy inputs changed after a call are read afresh."""

import numpy as np

import crossover as xo
from conftest import nonzero


def test_same_expression_other_shapes_and_dtypes():
    for dt in (np.float32, np.float64, np.int32, np.int64):
        for shape in ((5,), (7,), (2, 3), (3, 2), (1,), (0,), ()):
            a = (np.arange(int(np.prod(shape))).reshape(shape) * 3 - 4).astype(dt)
            b = (np.arange(int(np.prod(shape))).reshape(shape) + 1).astype(dt)
            xa, xb = xo.asarray(a), xo.asarray(b)
            np.testing.assert_array_equal(np.asarray(xa + xb), a + b)
            np.testing.assert_array_equal(np.asarray(xo.add(a, b)), np.add(a, b))
            np.testing.assert_array_equal(np.asarray(xa.sum()), a.sum())


def test_same_expression_other_strides_and_offsets():
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    other = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    views = [
        base[:4, :6],
        base[1:5, 2:8],
        base[::-1, ::-1][:4, :6],
        base[::2, ::1][:, :6][:3].repeat(2, axis=0)[:4],
        base.T[:4, :6],
        base[2:6, 1:7],
    ]
    for v in views:
        assert v.shape == (4, 6)
        np.testing.assert_array_equal(np.asarray(xo.add(v, other)), v + other)
        np.testing.assert_array_equal(np.asarray(xo.asarray(v) * 2 + other), v * 2 + other)
    # Broadcast where a full operand was before.
    row = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(xo.add(other, other)), other + other)
    np.testing.assert_array_equal(np.asarray(xo.add(row, other)), row + other)


def test_same_expression_other_scalars_and_aliasing():
    a = np.linspace(0, 1, 9, dtype=np.float32)
    b = np.linspace(2, 3, 9, dtype=np.float32)
    xa, xb = xo.asarray(a), xo.asarray(b)
    for k in (1.0, 2.0, -0.0, 0.5, 3):
        np.testing.assert_array_equal(np.asarray(xa + k), a + np.float32(k))
    # Powers the engine computes exactly (3 and 4 are within 2 ulp of pow).
    for k in (2.0, 0.5, 1.0, 2.0):
        np.testing.assert_array_equal(np.asarray(xa**k), a ** np.float32(k))
    np.testing.assert_array_equal(np.asarray(xa + xa), a + a)
    np.testing.assert_array_equal(np.asarray(xa + xb), a + b)
    np.testing.assert_array_equal(np.asarray(xb + xb), b + b)


def test_numpy_inputs_changed_after_a_call_are_seen():
    a = np.arange(10, dtype=np.float64)
    b = np.ones(10)
    for step in range(4):
        np.testing.assert_array_equal(np.asarray(xo.add(a, b)), a + b)
        # float64 exp is vectorised (cpu/math64.rs), within 1 ulp of NumPy's.
        np.testing.assert_allclose(np.asarray(xo.exp(a)), np.exp(a), rtol=2.3e-16, atol=0)
        assert float(np.asarray(xo.sum(a))) == a.sum()
        a[step] = 100.0 + step
        b *= 2


def test_one_argument_reductions_take_the_method_and_agree_with_numpy(rng):
    """``xo.sum(x)``, ``np.sum(x)`` and the other one-argument reductions
    call ``x.sum()`` straight; with arguments they take the general route.
    Both against NumPy's float64 result, at sizes around the interpreter's
    chunk (2,048) and beyond the calling thread's share."""
    funcs = ("sum", "prod", "mean", "min", "max", "amin", "amax", "argmin", "argmax")
    for dt, rtol in ((np.float32, 2e-5), (np.float64, 1e-12)):
        for n in (1, 1000, 2049, 70001):
            a = nonzero(rng, n, dt, lo=0.999, hi=1.001)  # products stay in range
            x = xo.asarray(a)
            for name in funcs:
                want = getattr(np, name)(a.astype(np.float64))
                for got in (getattr(xo, name)(x), getattr(np, name)(x), getattr(x, name.lstrip("a"))()
                            if name in ("amin", "amax") else getattr(x, name)()):
                    assert isinstance(got, xo.ndarray), (name, type(got))
                    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, err_msg=name)
            m = a.reshape(1, n)
            np.testing.assert_allclose(np.asarray(xo.sum(xo.asarray(m), axis=1, keepdims=True)),
                                       m.astype(np.float64).sum(axis=1, keepdims=True), rtol=rtol)
            kept = xo.max(x, keepdims=True)  # an argument: the general route
            assert kept.shape == (1,) and kept.item() == a.max()
            assert np.asarray(xo.argmax(x, axis=0)) == np.argmax(a)


def test_asarray_of_arrays_keeps_values_and_copy_rules(rng):
    a = nonzero(rng, 1000, np.float32)
    x = xo.asarray(a)
    assert not np.shares_memory(np.asarray(x), a)  # NumPy data is copied in
    a[0] = 99.0
    assert np.asarray(x)[0] != 99.0
    y = xo.asarray(x)
    assert isinstance(y, xo.ndarray) and y.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    assert xo.asarray(x, dtype=np.float64).dtype == np.float64
    assert xo.asarray(a, dtype=np.float64).dtype == np.float64
