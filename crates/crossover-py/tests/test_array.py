"""The crossover.ndarray object: creation, properties, views, conversion,
immutability and the copy/borrow rules for NumPy data."""

import numpy as np
import pytest

import crossover as xo
from conftest import TOL, nonzero


def test_asarray_roundtrip_all_dtypes(rng):
    for dt in (np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128):
        a = (rng.uniform(-3, 3, (3, 5)) * 10).astype(dt)
        x = xo.asarray(a)
        assert isinstance(x, xo.ndarray)
        assert x.shape == (3, 5) and x.dtype == a.dtype and x.ndim == 2 and x.size == 15
        assert x.nbytes == a.nbytes and x.itemsize == a.itemsize and len(x) == 3
        np.testing.assert_array_equal(x.numpy(), a)
        np.testing.assert_array_equal(np.asarray(x), a)


def test_array_from_lists_and_scalars():
    np.testing.assert_array_equal(xo.array([[1, 2], [3, 4]]).numpy(), np.array([[1, 2], [3, 4]]))
    assert xo.array([1.5, 2.5]).dtype == np.float64
    assert xo.asarray(3.0).shape == ()
    assert xo.asarray([1, 2], dtype=np.float32).dtype == np.float32


def test_unsupported_dtype_is_a_dtype_error():
    with pytest.raises(xo.DTypeError) as e:
        xo.asarray(np.arange(4, dtype=np.float16))
    assert isinstance(e.value, TypeError)
    with pytest.raises(xo.DTypeError):
        xo.asarray(np.ones(3, dtype=np.float16))


def test_repr_str_and_format_show_values_like_numpy():
    # Issue 19: printing showed `crossover.ndarray(shape=..., pending: mul)`.
    x = xo.asarray(np.ones((2, 3), np.float32))
    assert repr(x) == repr(np.ones((2, 3), np.float32))
    y = x * 2 + 1
    assert not y.is_ready
    assert repr(y) == repr(np.full((2, 3), 3.0, np.float32))
    assert str(y) == str(np.full((2, 3), 3.0, np.float32))
    assert y.is_ready  # printing computed it
    z = xo.asarray(np.pi) * 1.0
    assert format(z, ".2f") == "3.14" == format(np.float64(np.pi), ".2f")
    assert f"{xo.asarray(np.arange(3.0))}" == f"{np.arange(3.0)}"
    with pytest.raises(TypeError):
        format(xo.asarray(np.arange(3.0)), ".2f")  # as NumPy: only 0-d takes a spec
    # Where the value was made: on the GPU under a GPU policy.
    assert x.device == ("gpu" if xo.get_device() in ("gpu", "gpu-prefer") else "cpu")


def test_repr_of_a_value_that_cannot_be_computed_says_why():
    big = xo.random.default_rng(0).random((10**6, 10**6))
    text = repr(big)
    assert "not computed" in text and "unable to allocate" in text and "(1000000, 1000000)" in text


def test_len_of_0d_raises():
    with pytest.raises(TypeError):
        len(xo.asarray(1.0))


def test_creation_functions():
    np.testing.assert_array_equal(xo.zeros((2, 3)).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(xo.ones(4, dtype=np.int32).numpy(), np.ones(4, np.int32))
    np.testing.assert_array_equal(xo.full((2,), 7.5, dtype=np.float32).numpy(), np.full(2, 7.5, np.float32))
    np.testing.assert_array_equal(xo.arange(5).numpy(), np.arange(5))
    assert xo.arange(5).dtype == np.int64
    np.testing.assert_allclose(xo.arange(0.5, 3.0, 0.5).numpy(), np.arange(0.5, 3.0, 0.5))
    np.testing.assert_allclose(xo.linspace(0, 1, 11).numpy(), np.linspace(0, 1, 11), rtol=1e-15)
    x = xo.asarray(np.ones((3, 2), np.float32))
    assert xo.zeros_like(x).dtype == np.float32 and xo.zeros_like(x).shape == (3, 2)
    np.testing.assert_array_equal(xo.full_like(x, 2).numpy(), np.full((3, 2), 2, np.float32))
    np.testing.assert_array_equal(np.ones_like(x).numpy(), np.ones((3, 2), np.float32))


@pytest.mark.parametrize("key", [
    1, -1, slice(None), slice(1, None), slice(None, None, -1), slice(5, 1, -2),
    (slice(None), 2), (Ellipsis, 1), (None, 0), (1, None, slice(None, 3)),
    (slice(1, 3), Ellipsis), (slice(None), None), np.int64(2), (np.int32(0), slice(None, None, 3)),
])
def test_basic_indexing_matches_numpy(rng, key):
    a = nonzero(rng, (6, 7), np.float64)
    x = xo.asarray(a)
    np.testing.assert_array_equal(x[key].numpy(), a[key])
    # Indexing a pending array records a view that fuses into the consumer.
    np.testing.assert_allclose((x * 2)[key].numpy(), (a * 2)[key])


def test_index_errors():
    x = xo.asarray(np.ones((3, 4)))
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[..., ...]
    with pytest.raises(ValueError):
        x[::0]


def test_views_transpose_reshape(rng):
    a = nonzero(rng, (2, 3, 4), np.float32)
    x = xo.asarray(a)
    np.testing.assert_array_equal(x.T.numpy(), a.T)
    np.testing.assert_array_equal(x.transpose(1, 0, 2).numpy(), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(x.reshape(6, 4).numpy(), a.reshape(6, 4))
    np.testing.assert_array_equal(x.reshape((-1,)).numpy(), a.reshape(-1))
    np.testing.assert_array_equal(x.swapaxes(0, 2).numpy(), a.swapaxes(0, 2))
    np.testing.assert_array_equal(x.ravel().numpy(), a.ravel())
    np.testing.assert_array_equal(x[:, :1].squeeze(1).numpy(), a[:, :1].squeeze(1))
    np.testing.assert_array_equal((x.T * 1).reshape(4, 6).numpy(), (a.T * 1).reshape(4, 6))
    with pytest.raises(xo.ShapeError):
        x.reshape(5, 5)


def test_iteration_and_scalars(rng):
    a = nonzero(rng, (3, 2), np.float64)
    x = xo.asarray(a)
    rows = list(x)
    assert len(rows) == 3
    np.testing.assert_array_equal(rows[2].numpy(), a[2])
    s = x.sum()
    assert float(s) == pytest.approx(a.sum(), rel=1e-14)
    assert isinstance(s.item(), float)
    assert int(xo.asarray(np.array(7))) == 7
    assert [10, 20, 30][xo.asarray(np.array(1))] == 20  # __index__
    assert x.tolist() == a.tolist()
    assert bool(xo.asarray(np.array([True])))
    with pytest.raises(ValueError):
        bool(x)


def test_item_assignment_follows_numpy(rng):
    a = nonzero(rng, (37, 5), np.float64)
    x = xo.asarray(a)
    y = x  # another name for the same object sees the change
    lazy = x * 2  # computed from the value before the assignment
    ref = a.copy()
    for key, value in [
        ((0, 0), 5.0),
        (slice(3, 30, 4), -1.5),
        ((slice(None), 2), np.arange(37.0)),
        (a > 0.5, 0.0),
        (([1, 4, 4], [0, 1, 2]), 7),
        ((Ellipsis, -1), nonzero(rng, (37,), np.float32)),
    ]:
        x[key] = value
        ref[key] = value
        np.testing.assert_array_equal(np.asarray(x), ref)
    assert y is x
    np.testing.assert_array_equal(np.asarray(y), ref)
    np.testing.assert_allclose(np.asarray(lazy), a * 2)
    # A crossover value on the right; NumPy's cast into an integer array.
    i = xo.asarray(np.arange(10, dtype=np.int32))
    i[2:5] = xo.asarray(np.array([1.9, -2.7, 3.5]))
    np.testing.assert_array_equal(np.asarray(i), [0, 1, 1, -2, 3, 5, 6, 7, 8, 9])
    assert i.dtype == np.int32
    # NumPy's errors: a shape that does not broadcast, an index out of range.
    with pytest.raises(ValueError):
        x[0:3] = np.ones(4)
    with pytest.raises(IndexError):
        x[99] = 1.0
    np.testing.assert_array_equal(np.asarray(x), ref)


def test_item_assignment_never_changes_what_others_see(rng):
    a = nonzero(rng, (1000,), np.float32)
    original = a.copy()
    x = xo.asarray(a)
    x[0] = 1.0  # the first assignment copies into a private array
    view = np.asarray(x)  # shares that memory (read-only)
    before = view.copy()
    x[1] = 2.0  # so this one must not write it in place
    np.testing.assert_array_equal(view, before)
    assert np.asarray(x)[1] == 2.0
    s = x[10:20]  # a view taken before an assignment keeps its values
    pending = xo.sin(x)
    x[10:20] = 0.0
    np.testing.assert_array_equal(np.asarray(s), before[10:20])
    np.testing.assert_allclose(np.asarray(pending)[10:20], np.sin(before[10:20]), rtol=1e-6)
    c = __import__("copy").copy(x)
    x[5] = 9.0
    assert np.asarray(c)[5] == before[5] and np.asarray(x)[5] == 9.0
    np.testing.assert_array_equal(a, original)  # the user's NumPy input is never written
    assert not np.shares_memory(np.asarray(x), a)


def test_arrays_are_unhashable():
    x = xo.asarray(np.ones(3))
    with pytest.raises(TypeError):
        hash(x)
    v = x.numpy()
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0] = 2
    w = x.numpy(copy=True)
    w[0] = 2
    assert np.array(x).flags.writeable  # np.array copies
    np.testing.assert_array_equal(x.numpy(), np.ones(3))


def test_numpy_view_is_zero_copy_and_keeps_buffer_alive(rng):
    a = nonzero(rng, (1000,), np.float32)
    x = xo.asarray(a) * 2
    v1 = x.numpy()
    v2 = np.asarray(x)
    assert np.shares_memory(v1, v2)  # both view crossover's buffer
    del x
    import gc
    gc.collect()
    np.testing.assert_allclose(v1, a * 2)


def test_asarray_copies_so_later_numpy_mutation_does_not_leak(rng):
    a = nonzero(rng, (4096,), np.float64)
    orig = a.copy()
    x = xo.asarray(a)
    y = x * 3 + np.sin(x)  # pending, reads x's (copied) data later
    z = np.asarray(a) + x  # a NumPy operand is read before the op returns
    a[:] = 123.0
    np.testing.assert_allclose(y.numpy(), orig * 3 + np.sin(orig), rtol=1e-13)
    np.testing.assert_allclose(z.numpy(), orig * 2, rtol=1e-15)
    assert not np.shares_memory(x.numpy(), a)


@pytest.mark.parametrize("n", [1, 2049, 131073])  # 131073 float64: GIL released
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("strided", [False, True])
def test_asarray_copy_false_shares_numpy_memory_and_sees_its_changes(rng, n, dtype, strided):
    """``xo.asarray(a, copy=False)`` wraps NumPy's memory without a copy,
    as NumPy's own ``asarray`` does: the array sees later writes to ``a``,
    and each result made from it holds the values of the moment it was
    made (NumPy's eager semantics), on the CPU and on a device."""
    rtol, atol = TOL[("transcendental", dtype)]
    base = nonzero(rng, (3 * n,), np.float64).astype(dtype)
    a = base[::3] if strided else base[:n]
    x = xo.asarray(a, copy=False)
    assert np.shares_memory(np.asarray(x), a)
    old = a.astype(np.float64)
    y = x * 3 + xo.sin(x)
    s = x.sum()
    a[:] = nonzero(rng, (n,), np.float64).astype(dtype)
    new = a.astype(np.float64)
    assert not np.allclose(old, new)
    np.testing.assert_allclose(np.asarray(y), old * 3 + np.sin(old), rtol=rtol, atol=atol)
    np.testing.assert_allclose(float(s), old.sum(), rtol=1e-5 if dtype is np.float32 else 1e-12)
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_allclose(np.asarray(x * 3 + xo.sin(x)), new * 3 + np.sin(new), rtol=rtol, atol=atol)
    np.testing.assert_allclose(float(x.sum()), new.sum(), rtol=1e-5 if dtype is np.float32 else 1e-12)
    # Item assignment rebinds x to a private copy (crossover's values are
    # not NumPy views): a is left as it is.
    kept = a.copy()
    x[0] = 7.0
    assert float(x[0]) == 7.0 and not np.shares_memory(np.asarray(x), a)
    np.testing.assert_array_equal(a, kept)


def test_asarray_copy_false_raises_where_a_copy_is_needed(rng):
    a = nonzero(rng, (100,), np.float64)
    with pytest.raises(ValueError, match="dtype"):
        xo.asarray(a, dtype=np.float32, copy=False)
    with pytest.raises(ValueError, match="byte-swapped"):
        xo.asarray(a.astype(">f8"), copy=False)
    raw = np.zeros(8 * 100 + 1, np.uint8)
    misaligned = raw[1:].view(np.float64)
    assert not misaligned.flags.aligned
    with pytest.raises(ValueError, match="aligned"):
        xo.asarray(misaligned, copy=False)
    # The same dtype asked for explicitly is no cast.
    assert np.shares_memory(np.asarray(xo.asarray(a, dtype=np.float64, copy=False)), a)


# 131073 float64: above 1 MiB, computed with the GIL released.
@pytest.mark.parametrize("n", [1, 2049, 131073])
def test_numpy_operands_are_read_before_the_op_returns(rng, n):
    """A NumPy operand of a single op is read in place (no copy) and the op
    computes before it returns, like NumPy: writing the NumPy array later
    changes no result, lazy or not, whatever the op's shape."""
    a = nonzero(rng, (n,), np.float64)
    b = nonzero(rng, (n,), np.float64)
    orig_a, orig_b = a.copy(), b.copy()
    xb = xo.asarray(b)
    lazy = xb * 2.0  # a pending crossover chain
    results = {
        "ufunc": (xo.sin(a), np.sin(orig_a)),
        "operator": (lazy + a, orig_b * 2.0 + orig_a),
        "reflected": (a - lazy, orig_a - orig_b * 2.0),
        "numpy ufunc": (np.multiply(a, xb), orig_a * orig_b),
        "where": (xo.where(a > 0.5, a, xb), np.where(orig_a > 0.5, orig_a, orig_b)),
        "identity": (xo.positive(a), orig_a),
        "comparison": (xb < a, orig_b < orig_a),
    }
    a[:] = -7.0
    for name, (got, want) in results.items():
        got = np.asarray(got)
        assert not np.shares_memory(got, a), name
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0, err_msg=name)
    # Chains built on those results stay lazy crossover arrays and correct.
    chained = results["ufunc"][0] * 3.0 + results["operator"][0]
    a[:] = 11.0
    np.testing.assert_allclose(
        np.asarray(chained), np.sin(orig_a) * 3.0 + orig_b * 2.0 + orig_a, rtol=1e-13, atol=1e-14
    )


@pytest.mark.parametrize("n", [3, 2049, 131073])
def test_numpy_arrays_reduced_in_place_are_read_before_returning(rng, n):
    """Reductions, scans and library ops of NumPy arrays read them in place
    and compute before returning: a later write changes no result, and no
    result (a keepdims or empty-axis one included) shares their memory."""
    a = nonzero(rng, (n,), np.float64)
    m = nonzero(rng, (40, 24), np.float32)[::-1, ::2]  # a strided view
    orig_a, orig_m = a.copy(), m.copy()
    results = {
        "sum": (xo.sum(a), orig_a.sum()),
        "mean axis": (xo.mean(m, axis=0), orig_m.astype(np.float64).mean(axis=0)),
        "prod": (xo.prod(a[:3]), orig_a[:3].prod()),
        "std": (xo.std(a, ddof=1), orig_a.std(ddof=1)),
        "var fractional": (xo.var(a, ddof=0.5), orig_a.var(ddof=0.5)),
        "max keepdims": (xo.max(m, axis=1, keepdims=True), orig_m.max(axis=1, keepdims=True)),
        "min empty axis": (xo.min(m, axis=()), orig_m),
        "argmax": (xo.argmax(a), orig_a.argmax()),
        "cumsum": (xo.cumsum(a), np.cumsum(orig_a)),
        "matmul": (xo.matmul(m.T, m), orig_m.T.astype(np.float64) @ orig_m),
    }
    a[:] = -3.0
    m[:] = 5.0
    for name, (got, want) in results.items():
        got = np.asarray(got)
        assert not np.shares_memory(got, a) and not np.shares_memory(got, m), name
        # float32 sums of signed terms cancel: an absolute allowance too.
        f32 = got.dtype == np.float32
        atol = 1e-5 * float(np.abs(want).max()) if f32 else 0.0
        np.testing.assert_allclose(got, want, rtol=2e-5 if f32 else 1e-11, atol=atol, err_msg=name)
    # The argument was NumPy's: NumPy's own reductions still see the write.
    assert xo.sum(a) == pytest.approx(-3.0 * n)


def test_numpy_operand_views_and_strides_are_read_in_place(rng):
    """Strided, reversed and transposed NumPy operands borrowed as they are."""
    m = nonzero(rng, (300, 257), np.float32)
    orig = m.copy()
    xm = xo.asarray(orig)
    got = {
        "transposed": (xo.exp(m.T), np.exp(orig.T)),
        "reversed": (xm[::-1, ::2] + m[::-1, ::2], orig[::-1, ::2] * 2),
        "column": (m[:, 3] * xm[:, 3], orig[:, 3] * orig[:, 3]),
    }
    m[:] = 0.0
    for name, (g, want) in got.items():
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-6, atol=0, err_msg=name)


def test_numpy_views_of_crossover_memory_come_back_without_a_copy(rng):
    """``np.asarray(x)`` of a crossover array is a read-only view of its
    memory; handed back to crossover it is the same memory, and nothing can
    write it."""
    a = nonzero(rng, (64, 33), np.float32)
    x = xo.asarray(a) * 2.0
    r = np.asarray(x)  # x still holds the value: a read-only view
    assert not r.flags.writeable
    with pytest.raises(ValueError):
        r.flags.writeable = True
    for name, view in {"whole": r, "strided": r[::3, ::-2], "transposed": r.T}.items():
        back = xo.asarray(view, copy=False)
        assert np.shares_memory(np.asarray(back), r), name
        np.testing.assert_array_equal(np.asarray(back), a[...] * 2.0 if name == "whole" else view)
        np.testing.assert_allclose(np.asarray(xo.sin(view)), np.sin(view.astype(np.float64)), rtol=4e-6)
    # Copies when asked, and for views that reinterpret the dtype.
    assert not np.shares_memory(np.asarray(xo.asarray(r, copy=True)), r)
    as_int = r.view(np.int32)
    np.testing.assert_array_equal(np.asarray(xo.asarray(as_int)), as_int)
    # A writeable NumPy array is still copied by asarray, and so is a
    # read-only view of a result handed over writeable (its owner can write).
    w = a.copy()
    assert not np.shares_memory(np.asarray(xo.asarray(w)), w)
    owned = xo.evaluate("x + 1", x=a)  # crossover's memory, handed over writeable
    assert owned.flags.writeable and '"crossover.buffer"' in repr(owned.base)
    ro = owned[::2]
    ro.flags.writeable = False
    kept = xo.asarray(ro)
    owned[:] = -1.0
    np.testing.assert_array_equal(np.asarray(kept), a[::2] + 1.0)


@pytest.mark.parametrize("n", [0, 1, 1000, 131072, 131073])  # 1 MiB of float64: GIL released above
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.bool_, np.complex128])
def test_asarray_copies_contiguous_arrays_of_any_size(rng, n, dtype):
    a = nonzero(rng, (n,), np.float64).astype(dtype)
    if dtype is np.complex128:
        a = a + 1j * nonzero(rng, (n,), np.float64)
    orig = a.copy()
    x = xo.asarray(a)
    y = xo.asarray(a.reshape(1, n))  # a second shape of the same memory
    a[...] = 0
    assert x.dtype == orig.dtype and x.shape == (n,) and y.shape == (1, n)
    np.testing.assert_array_equal(x.numpy(), orig)
    np.testing.assert_array_equal(y.numpy()[0], orig)
    assert not np.shares_memory(np.asarray(x), a)
    s = xo.asarray(np.float32(2.5))  # 0-d
    assert s.shape == () and float(s) == 2.5


def test_strided_and_byteswapped_numpy_inputs(rng):
    a = nonzero(rng, (50, 40), np.float64)
    for view in (a[::3, ::-2], a.T, a[5:, 7], np.asfortranarray(a), a.astype(">f8"), a[::-1, ::-1]):
        np.testing.assert_allclose(xo.evaluate("v * 2 + 1", v=view), np.asarray(view) * 2 + 1)
        np.testing.assert_allclose(xo.asarray(view).numpy(), view)


def test_empty_arrays():
    x = xo.asarray(np.zeros((0, 3), np.float32))
    assert x.shape == (0, 3)
    assert (x + 1).numpy().shape == (0, 3)
    assert float(x.sum()) == 0.0
    with pytest.raises(xo.ShapeError):
        x.max().numpy()


def test_astype_and_copy(rng):
    a = nonzero(rng, (10,), np.float64) * 10
    x = xo.asarray(a)
    np.testing.assert_array_equal(x.astype(np.int32).numpy(), a.astype(np.int32))
    np.testing.assert_array_equal(x.astype("float32").numpy(), a.astype(np.float32))
    np.testing.assert_array_equal(x.copy().numpy(), a)
    np.testing.assert_array_equal(np.astype(x, np.float32).numpy(), a.astype(np.float32))


def test_pickle_and_copy(rng):
    import copy
    import pickle

    a = nonzero(rng, (3, 4), np.float32)
    x = xo.asarray(a) * 2
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, xo.ndarray) and y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), a * 2)
    # Copies are new objects (an assignment to one leaves the other alone).
    c, d = copy.copy(x), copy.deepcopy(x)
    assert c is not x and d is not x
    c[0, 0] = 100.0
    np.testing.assert_array_equal(x.numpy(), a * 2)
    np.testing.assert_array_equal(d.numpy(), a * 2)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.bool_])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_prod_runs_in_the_engine_like_numpy(dt, axis, rng):
    # Values near 1 keep float products finite; nonzero ints overflow and
    # wrap in int64 as NumPy's do; bools are mostly True.
    if dt in (np.float32, np.float64):
        a = rng.uniform(0.97, 1.03, (2049, 7)).astype(dt)
    elif dt == np.bool_:
        a = rng.random((2049, 7)) < 0.9995
    else:
        a = rng.choice(np.array([-3, -2, -1, 1, 2, 3], dtype=dt), (2049, 7))
    xo.set_fallback("raise")
    got = np.prod(xo.asarray(a), axis=axis)
    want = np.prod(a.astype(np.float64) if a.dtype.kind == "f" else a, axis=axis)
    assert got.dtype == np.prod(a, axis=axis).dtype
    if a.dtype.kind == "f":
        rtol = 1e-6 if dt == np.float32 else 1e-12
        np.testing.assert_allclose(np.asarray(got.numpy(), np.float64), want, rtol=rtol)
    else:
        np.testing.assert_array_equal(got.numpy(), want)
    assert xo.asarray(a).prod(axis=axis, keepdims=True).shape == np.prod(a, axis=axis,
                                                                        keepdims=True).shape


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.bool_])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
def test_scans_run_in_the_engine_like_numpy(fn, dt, axis, rng):
    shape = (2049, 3, 5)
    if dt in (np.float32, np.float64):
        a = rng.uniform(0.98, 1.02, shape).astype(dt)
    elif dt == np.bool_:
        a = rng.random(shape) < 0.9
    else:
        a = rng.choice(np.array([-3, -2, -1, 1, 2, 3], dtype=dt), shape)
    xo.set_fallback("raise")
    f = getattr(np, fn)
    got = f(xo.asarray(a), axis=axis)
    assert got.dtype == f(a, axis=axis).dtype and got.shape == f(a, axis=axis).shape
    if a.dtype.kind == "f":
        want = f(a.astype(np.float64), axis=axis)
        rtol = 2e-6 if dt == np.float32 else 1e-12
        np.testing.assert_allclose(np.asarray(got.numpy(), np.float64), want, rtol=rtol, atol=1e-6)
    else:
        np.testing.assert_array_equal(got.numpy(), f(a, axis=axis))  # int64 wraps as NumPy's
    # A scan of a fused chain and a view, and the method form.
    x = xo.asarray(a)
    chained = getattr(np.abs(x)[::2], fn)(axis=0).numpy()
    want = f(np.abs(a)[::2], axis=0)
    assert chained.dtype == want.dtype
    np.testing.assert_allclose(chained.astype(np.float64), want.astype(np.float64), rtol=2e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("expr", ["x + 1j", "1j + x", "x * (2 - 1j)", "(2 - 1j) * x", "x - 1j",
                                  "1j - x", "x / (1 + 2j)", "(1 + 2j) / x", "x ** (0.5 + 1j)",
                                  "x == (2 + 0j)", "x != 1j"])
def test_operators_take_complex_python_scalars_like_numpy(dtype, expr):
    a = np.random.default_rng(7).integers(1, 9, 50).astype(dtype)
    x = xo.asarray(a)
    got, want = eval(expr, {"x": x}), eval(expr, {"x": a})
    assert isinstance(got, xo.ndarray)
    got = np.asarray(got)
    assert got.dtype == want.dtype, (expr, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.complex64 else 1e-13)
