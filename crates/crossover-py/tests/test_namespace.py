"""NumPy's namespace under crossover: every public name resolves, native
routes give NumPy's values without a fallback, the others fall back with one
warning, and the ndarray methods people call exist."""

import types
import warnings

import numpy as np
import pytest

import crossover as xo
from crossover import _namespace

from conftest import nonzero

MODULES = [(np, xo), (np.linalg, xo.linalg), (np.fft, xo.fft), (np.random, xo.random)]


def _public(module):
    # Independent of the routing table: NumPy's dir(), not its __all__.
    return [n for n in dir(module) if not n.startswith("_")
            and not isinstance(getattr(module, n), types.ModuleType) or n in ("linalg", "fft", "random")]


@pytest.mark.parametrize("np_mod,xo_mod", MODULES, ids=lambda m: getattr(m, "__name__", ""))
def test_every_public_numpy_name_is_implemented_or_routed(np_mod, xo_mod):
    names = set(_public(np_mod)) | set(_namespace.public_names(np_mod))
    missing = sorted(n for n in names if not hasattr(xo_mod, n))
    assert not missing, f"{np_mod.__name__} names missing from crossover: {missing}"
    table = _namespace.table()[np_mod.__name__]
    unrouted = sorted(set(_namespace.public_names(np_mod)) - set(table))
    assert not unrouted
    for name, route in table.items():
        assert route in _namespace.ROUTES, (name, route)
        obj = getattr(xo_mod, name)
        if route == "object":
            continue
        assert callable(obj), name
        # A native route is crossover's own function, never NumPy's object.
        assert obj is not getattr(np_mod, name), name


def test_types_constants_and_submodules_are_numpys():
    assert xo.float32 is np.float32 and xo.float64 is np.float64 and xo.int32 is np.int32
    assert xo.bool_ is np.bool_ and xo.complex64 is np.complex64
    assert xo.pi == np.pi and xo.e == np.e and xo.inf == np.inf and np.isnan(xo.nan)
    assert xo.newaxis is None
    assert xo.finfo is np.finfo and xo.dtype is np.dtype
    x = xo.ones((2, 3))
    assert x[:, xo.newaxis].shape == (2, 1, 3)
    assert xo.linalg.LinAlgError is np.linalg.LinAlgError


def test_native_fraction_is_reported_and_plausible():
    native, functions = _namespace.native_fraction()
    assert functions > 400
    assert 0.3 < native / functions < 1.0


def test_a_routed_function_falls_back_once_and_returns_crossover_arrays(rng):
    a = nonzero(rng, (7, 5), np.float64)
    x = xo.asarray(a)
    with pytest.warns(xo.FallbackWarning, match="diff is not in the engine"):
        got = xo.diff(x, axis=1)
    assert isinstance(got, xo.ndarray)
    np.testing.assert_array_equal(got.numpy(), np.diff(a, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xo.diff(x)  # warned once per function
    xo.set_fallback("raise")
    with pytest.raises(xo.FallbackError, match="sort"):
        xo.sort(x)


def test_fallback_on_host_inputs_returns_crossover_arrays():
    with pytest.warns(xo.FallbackWarning, match="numpy.kron"):
        got = xo.kron(np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert isinstance(got, xo.ndarray)
    np.testing.assert_array_equal(got.numpy(), np.kron(np.eye(2), [[1.0, 2.0], [3.0, 4.0]]))


# ---- module-level functions with NumPy's signatures --------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_module_reductions_match_numpy(rng, dtype):
    a = nonzero(rng, (37, 23), dtype)
    x = xo.asarray(a)
    ref = a.astype(np.float64)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("sum", "mean", "std", "var", "min", "max", "amin", "amax"):
            for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}):
                got = getattr(xo, name)(x, **kw)
                assert isinstance(got, xo.ndarray)
                np.testing.assert_allclose(got.numpy(), getattr(np, name)(ref, **kw), rtol=rtol,
                                           err_msg=f"{name}{kw}")
        np.testing.assert_array_equal(xo.argmax(x, axis=0).numpy(), np.argmax(a, axis=0))
        np.testing.assert_array_equal(xo.argmin(x).numpy(), np.argmin(a))
        np.testing.assert_allclose(xo.sum(x, dtype=np.float64).numpy(), ref.sum(), rtol=1e-12)
        np.testing.assert_allclose(xo.std(x, ddof=1, axis=0).numpy(), ref.std(ddof=1, axis=0),
                                   rtol=rtol)
        want = ref @ ref.T
        np.testing.assert_allclose(xo.dot(x, x.T).numpy(), want, rtol=0,
                                   atol=rtol * 10 * np.abs(want).max())
        np.testing.assert_allclose(xo.sum(a.tolist()).numpy(), ref.sum(), rtol=rtol)


def test_diff_falls_back_with_numpy_values(rng):
    a = nonzero(rng, (4, 6), np.float64)
    with pytest.warns(xo.FallbackWarning, match="diff"):
        got = xo.diff(xo.asarray(a), axis=1)
    np.testing.assert_array_equal(got.numpy(), np.diff(a, axis=1))


# ---- compositions give NumPy's values, natively -------------------------------

SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 0.49999999999999994, -1e-300,
           2.0**52 + 1, -(2.0**53), 1e300, np.nan, np.inf, -np.inf]


def _specials(rng, dtype, n=101):
    vals = np.concatenate([np.array(SPECIAL), rng.uniform(-50, 50, n), rng.normal(0, 1e-3, 20)])
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        return vals.astype(dtype)


UNARY = ["isnan", "isinf", "isfinite", "sign", "rint", "trunc", "fix", "fabs", "reciprocal",
         "deg2rad", "rad2deg", "nan_to_num", "real", "imag", "conj", "conjugate", "round",
         "around", "radians", "degrees"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY)
def test_unary_compositions_equal_numpy(rng, dtype, name):
    a = _specials(rng, dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("error")
        got = getattr(xo, name)(xo.asarray(a))
        want = getattr(np, name)(a)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got.numpy(), want)
        if isinstance(getattr(np, name), np.ufunc):
            np.testing.assert_array_equal(getattr(np, name)(xo.asarray(a)).numpy(), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("decimals", [1, 2, 3, -1, -2])
def test_round_with_decimals_equals_numpy(rng, dtype, decimals):
    a = np.concatenate([rng.uniform(-1000, 1000, 500), [0.125, 2.675, -0.045, 15.0, 250.0]])
    a = a.astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = xo.round(xo.asarray(a), decimals)
        np.testing.assert_array_equal(got.numpy(), np.round(a, decimals))
        np.testing.assert_array_equal(xo.asarray(a).round(decimals).numpy(), np.round(a, decimals))


def test_integer_compositions_keep_dtype(rng):
    a = rng.integers(-9, 10, 50).astype(np.int32)
    x = xo.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("sign", "isnan", "isfinite", "isinf", "round"):
            got, want = getattr(xo, name)(x), getattr(np, name)(a)
            assert got.dtype == want.dtype, name
            np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(xo.clip(x, -3, 4).numpy(), np.clip(a, -3, 4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_compositions_equal_numpy(rng, dtype):
    a, b = _specials(rng, dtype), _specials(np.random.default_rng(5), dtype)[::-1].copy()
    x, y = xo.asarray(a), xo.asarray(b)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("error")
        for name in ("fmax", "fmin", "logical_xor"):
            np.testing.assert_array_equal(getattr(xo, name)(x, y).numpy(), getattr(np, name)(a, b))
            np.testing.assert_array_equal(getattr(np, name)(x, y).numpy(), getattr(np, name)(a, b))
        np.testing.assert_array_equal(xo.clip(x, -1.5, 2.0).numpy(), np.clip(a, -1.5, 2.0))
        np.testing.assert_array_equal(np.clip(x, None, 0.25).numpy(), np.clip(a, None, 0.25))
        np.testing.assert_array_equal(x.clip(-2, 3).numpy(), a.clip(-2, 3))
        for kw in ({}, {"equal_nan": True}, {"rtol": 1e-3, "atol": 0.1}):
            np.testing.assert_array_equal(xo.isclose(x, y, **kw).numpy(), np.isclose(a, b, **kw))
            np.testing.assert_array_equal(xo.isclose(x, x, **kw).numpy(), np.isclose(a, a, **kw))
        assert xo.allclose(x, x, equal_nan=True) is True
        assert xo.allclose(x, x) is False  # NaN != NaN
        assert xo.allclose(x, x * (1 + 1e-9), equal_nan=True) is bool(np.allclose(a, a * (1 + 1e-9), equal_nan=True))
        assert xo.array_equal(x, x) is False and xo.array_equal(x, x, equal_nan=True) is True
        assert xo.array_equal(x, y) is False


def test_reduction_compositions_equal_numpy(rng):
    a = nonzero(rng, (13, 17), np.float64)
    a[2, 3] = 0.0
    a[5, :] = 0.0
    a[7, 1] = np.nan
    x = xo.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("any", "all", "count_nonzero", "ptp", "nansum", "nanmean", "average"):
            for kw in ({}, {"axis": 0}, {"axis": 1}):
                got, want = getattr(xo, name)(x, **kw), getattr(np, name)(a, **kw)
                np.testing.assert_allclose(np.asarray(got.numpy(), dtype=np.float64),
                                           np.asarray(want, dtype=np.float64), rtol=1e-12,
                                           err_msg=f"{name}{kw}")
        assert bool(x.any()) and not bool(x.all())
        assert bool(xo.any(x[5])) is False and bool(xo.all(x[0])) is True


def test_products_triangles_and_creation_equal_numpy(rng):
    a, b = nonzero(rng, 11, np.float64), nonzero(rng, 7, np.float64)
    m = nonzero(rng, (9, 6), np.float64)
    x, y, xm = xo.asarray(a), xo.asarray(b), xo.asarray(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(xo.outer(x, y).numpy(), np.outer(a, b))
        np.testing.assert_array_equal(np.outer(x, y).numpy(), np.outer(a, b))
        np.testing.assert_allclose(xo.vdot(x, x).numpy(), np.vdot(a, a), rtol=1e-13)
        np.testing.assert_allclose(xo.inner(xm, xm).numpy(), np.inner(m, m), rtol=1e-13)
        for k in (-2, 0, 1):
            np.testing.assert_array_equal(xo.tril(xm, k).numpy(), np.tril(m, k))
            np.testing.assert_array_equal(xo.triu(xm, k).numpy(), np.triu(m, k))
        e = xo.eye(5, 7, k=1, dtype=np.float32)
        assert isinstance(e, xo.ndarray) and e.dtype == np.float32
        np.testing.assert_array_equal(e.numpy(), np.eye(5, 7, k=1, dtype=np.float32))
        np.testing.assert_array_equal(xo.identity(4).numpy(), np.identity(4))
        np.testing.assert_array_equal(xo.diag(x).numpy(), np.diag(a))
        np.testing.assert_array_equal(xo.diag(xm, 1).numpy(), np.diag(m, 1))
        assert xo.empty((3, 4)).shape == (3, 4)
        np.testing.assert_array_equal(xo.vstack([xm, xm]).numpy(), np.vstack([m, m]))


def test_linalg_and_fft_compositions_match_numpy(rng):
    a = nonzero(rng, (23, 23), np.float64) + 23 * np.eye(23)
    v = nonzero(rng, 29, np.float64)
    x = xo.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(xo.linalg.norm(xo.asarray(v)).numpy(), np.linalg.norm(v), rtol=1e-13)
        np.testing.assert_allclose(xo.linalg.norm(x).numpy(), np.linalg.norm(a), rtol=1e-13)
        np.testing.assert_allclose(xo.linalg.norm(x, axis=0).numpy(), np.linalg.norm(a, axis=0),
                                   rtol=1e-13)
        np.testing.assert_allclose(np.linalg.norm(x, 2).numpy(), np.linalg.norm(a, 2), rtol=1e-10)
        np.testing.assert_allclose(xo.linalg.cond(x).numpy(), np.linalg.cond(a), rtol=1e-9)
        np.testing.assert_allclose(xo.linalg.matrix_power(x, 3).numpy(),
                                   np.linalg.matrix_power(a, 3), rtol=1e-12)
        np.testing.assert_allclose(xo.linalg.matrix_power(x, -2).numpy(),
                                   np.linalg.matrix_power(a, -2), rtol=1e-9)
        np.testing.assert_allclose(xo.linalg.multi_dot([x, x, x]).numpy(),
                                   np.linalg.multi_dot([a, a, a]), rtol=1e-12)
        s = a + a.T
        np.testing.assert_allclose(np.linalg.eigvalsh(xo.asarray(s)).numpy(),
                                   np.linalg.eigvalsh(s), rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(xo.linalg.matrix_transpose(x).numpy(), a.T)
        np.testing.assert_allclose(xo.fft.fftn(x).numpy(), np.fft.fftn(a), rtol=1e-12, atol=1e-10)
        np.testing.assert_allclose(xo.fft.fftfreq(9, 0.5).numpy(), np.fft.fftfreq(9, 0.5))


# ---- methods ---------------------------------------------------------------------


def test_ndarray_methods_people_call(rng):
    a = nonzero(rng, (6, 10), np.float64)
    x = xo.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("sum", "mean", "std", "min", "max", "argmax", "argmin", "var"):
            np.testing.assert_allclose(getattr(x, name)(axis=1).numpy(), getattr(a, name)(axis=1),
                                       rtol=1e-12)
        assert x.astype(np.float32).dtype == np.float32
        assert x.reshape(3, 20).shape == (3, 20) and x.T.shape == (10, 6)
        np.testing.assert_allclose(x.dot(x.T).numpy(), a @ a.T, rtol=1e-13)
        np.testing.assert_array_equal(x.clip(-1, 1).numpy(), a.clip(-1, 1))
        np.testing.assert_array_equal(x.round(1).numpy(), a.round(1))
        np.testing.assert_array_equal(x.copy().numpy(), a)
        np.testing.assert_array_equal(x.ravel().numpy(), a.ravel())
        np.testing.assert_array_equal(x.flatten().numpy(), a.flatten())
        assert x.tolist() == a.tolist()
        assert x[2, 3].item() == a[2, 3]
        got = x.get()
        assert type(got) is np.ndarray and got.flags.writeable
        np.testing.assert_array_equal(got, a)
        np.testing.assert_array_equal(xo.asnumpy(x), a)
        np.testing.assert_array_equal(x.real.numpy(), a)
    with pytest.warns(xo.FallbackWarning, match="repeat"):
        np.testing.assert_array_equal(x.repeat(2, axis=0).numpy(), a.repeat(2, axis=0))


def test_cupy_helpers(rng):
    x = xo.asarray(nonzero(rng, 5, np.float64))
    assert xo.get_array_module(x) is xo
    assert xo.get_array_module(np.ones(2), 3) is np
    assert xo.get_array_module(np.ones(2), x) is xo
    assert xo.cuda.Stream.null.synchronize() is None
    assert xo.cuda.Device().synchronize() is None
    assert xo.synchronize() is None
    np.testing.assert_array_equal(xo.asnumpy([1.0, 2.0]), [1.0, 2.0])


def test_views_and_vector_products_match_numpy(rng):
    a = nonzero(rng, (5, 7), np.float64)
    b = nonzero(rng, (3, 4, 6), np.float64)
    x, y = xo.asarray(a), xo.asarray(b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in ((), (0,), (1,), ((0, 1),)):
            np.testing.assert_array_equal(xo.flip(x, *args).numpy(), np.flip(a, *args))
        np.testing.assert_array_equal(xo.flipud(x).numpy(), np.flipud(a))
        np.testing.assert_array_equal(xo.fliplr(x).numpy(), np.fliplr(a))
        for axis, start in ((0, 3), (2, 0), (1, 3), (-1, 1)):
            np.testing.assert_array_equal(xo.rollaxis(y, axis, start).numpy(),
                                          np.rollaxis(b, axis, start))
        np.testing.assert_array_equal(xo.matrix_transpose(y).numpy(), np.matrix_transpose(b))
        got = xo.broadcast_arrays(x, x[0])
        for g, w in zip(got, np.broadcast_arrays(a, a[0])):
            np.testing.assert_array_equal(g.numpy(), w)
        np.testing.assert_allclose(xo.vecdot(y, y).numpy(), np.vecdot(b, b), rtol=1e-14)
        np.testing.assert_allclose(xo.matvec(x, x[0, :7]).numpy(), np.matvec(a, a[0]),
                                   rtol=1e-13)
        for k in (-1, 0, 2):
            np.testing.assert_allclose(xo.trace(x, k).numpy(), np.trace(a, k), rtol=1e-14)
        np.testing.assert_allclose(xo.linalg.vector_norm(y, axis=1).numpy(),
                                   np.linalg.vector_norm(b, axis=1), rtol=1e-14)
        np.testing.assert_allclose(xo.linalg.matrix_norm(y).numpy(), np.linalg.matrix_norm(b),
                                   rtol=1e-14)
        v = xo.asarray(np.array([np.inf, -np.inf, 1.0, np.nan]))
        np.testing.assert_array_equal(xo.isposinf(v).numpy(), [True, False, False, False])
        np.testing.assert_array_equal(xo.isneginf(v).numpy(), [False, True, False, False])
        assert xo.isrealobj(x) and not xo.iscomplexobj(x)
        assert bool(xo.isreal(x).all()) and not bool(xo.iscomplex(x).any())
        np.testing.assert_array_equal(xo.positive(x).numpy(), a)
        np.testing.assert_array_equal(xo.true_divide(x, 3.0).numpy(), a / 3.0)


EINSUM = [("ij,jk->ik", [(4, 5), (5, 7)]), ("ij,jk", [(4, 5), (5, 7)]), ("ij,kj->ik", [(4, 5), (3, 5)]),
          ("bij,bjk->bik", [(3, 4, 5), (3, 5, 6)]), ("bij,bjk->kbi", [(3, 4, 5), (3, 5, 6)]),
          ("i,i->", [(9,), (9,)]), ("ij,j->i", [(4, 9), (9,)]), ("i,j->ij", [(5,), (3,)]),
          ("ij->ji", [(4, 5)]), ("ij->j", [(4, 5)]), ("ijk->", [(2, 3, 4)]),
          ("abc,cd->dba", [(2, 3, 4), (4, 5)])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("subscripts,shapes", EINSUM, ids=[s for s, _ in EINSUM])
def test_einsum_matmul_shapes_run_in_the_engine(rng, subscripts, shapes, dtype):
    ops = [nonzero(rng, s, dtype) for s in shapes]
    want = np.einsum(subscripts, *[o.astype(np.float64) for o in ops])
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = xo.einsum(subscripts, *[xo.asarray(o) for o in ops])
        assert got.dtype == dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol * np.abs(want).max())
        np.testing.assert_allclose(np.einsum(subscripts, *[xo.asarray(o) for o in ops]).numpy(),
                                   want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_einsum_other_subscripts_fall_back(rng):
    a = nonzero(rng, (4, 4), np.float64)
    with pytest.warns(xo.FallbackWarning, match="einsum"):
        got = xo.einsum("ii->", xo.asarray(a))
    np.testing.assert_allclose(float(got), np.trace(a), rtol=1e-14)
    got = xo.einsum("ij,jk,kl->il", a, a, a)
    np.testing.assert_allclose(got.numpy(), a @ a @ a, rtol=1e-12)
