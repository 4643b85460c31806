"""NumPy's legacy random functions under crossover.random: one module-level
Philox state that seed() replaces; shapes, dtypes and (loosely, but with
bounds that a wrong distribution fails) the distributions."""

import warnings

import numpy as np
import pytest

import crossover as xo

N = 100_003


def _host(x):
    return x.numpy() if isinstance(x, xo.ndarray) else np.asarray(x)


def test_same_seed_same_numbers_other_seed_other_numbers():
    xo.random.seed(1234)
    a = _host(xo.random.rand(1001)).copy()
    b = _host(xo.random.randn(7, 3)).copy()
    xo.random.seed(1234)
    np.testing.assert_array_equal(_host(xo.random.rand(1001)), a)
    np.testing.assert_array_equal(_host(xo.random.randn(7, 3)), b)
    xo.random.seed(1235)
    assert not np.array_equal(_host(xo.random.rand(1001)), a)
    xo.random.seed(1234)
    xo.random.rand(5)
    assert not np.array_equal(_host(xo.random.rand(1001)), a), "the stream advances"


def test_shapes_and_dtypes():
    xo.random.seed(0)
    x = xo.random.rand(33, 17, dtype=xo.float32)
    assert isinstance(x, xo.ndarray) and x.shape == (33, 17) and x.dtype == np.float32
    assert xo.random.rand(5).dtype == np.float64
    assert isinstance(xo.random.rand(), float)
    assert xo.random.randn(4, 5, 6).shape == (4, 5, 6)
    assert xo.random.randn(9, dtype=np.float32).dtype == np.float32
    for f in (xo.random.random, xo.random.random_sample, xo.random.standard_normal):
        assert f((3, 2)).shape == (3, 2) and f(4).dtype == np.float64
        assert isinstance(f(), float)
    assert xo.random.uniform(1, 2, size=(2, 3)).shape == (2, 3)
    assert xo.random.normal(size=7).shape == (7,)
    r = xo.random.randint(0, 5, size=(4, 4))
    assert r.shape == (4, 4) and r.dtype == np.int64
    assert xo.random.randint(3, 9, size=10, dtype=np.int32).dtype == np.int32
    assert isinstance(xo.random.randint(5), int)


def _mean_var(x):
    h = _host(x).astype(np.float64)
    return h.mean(), h.var()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_and_normal_moments(dtype):
    xo.random.seed(7)
    # Bounds: 5 standard errors of the sample mean/variance at N samples.
    u = _host(xo.random.rand(N, dtype=dtype))
    assert u.min() >= 0.0 and u.max() < 1.0
    m, v = _mean_var(u)
    assert abs(m - 0.5) < 5 * np.sqrt(1 / 12 / N) and abs(v - 1 / 12) < 5 * np.sqrt(1 / 180 / N)
    m, v = _mean_var(xo.random.randn(N, dtype=dtype))
    assert abs(m) < 5 / np.sqrt(N) and abs(v - 1) < 5 * np.sqrt(2 / N)
    m, v = _mean_var(xo.random.normal(3.0, 2.0, size=N))
    assert abs(m - 3) < 5 * 2 / np.sqrt(N) and abs(v - 4) < 5 * 4 * np.sqrt(2 / N)
    x = _host(xo.random.uniform(-2.0, 5.0, size=N))
    assert x.min() >= -2.0 and x.max() < 5.0
    assert abs(x.mean() - 1.5) < 5 * 7 * np.sqrt(1 / 12 / N)


def test_array_parameters_broadcast():
    xo.random.seed(3)
    lo = np.array([0.0, 10.0, 100.0])
    x = _host(xo.random.uniform(lo, lo + 1, size=(N // 3, 3)))
    assert np.all(x >= lo) and np.all(x < lo + 1)
    np.testing.assert_allclose(x.mean(axis=0), lo + 0.5, atol=0.01)
    y = _host(xo.random.normal(np.array([-5.0, 5.0]), np.array([1.0, 3.0]), size=(N // 2, 2)))
    np.testing.assert_allclose(y.mean(axis=0), [-5, 5], atol=0.05)
    np.testing.assert_allclose(y.std(axis=0), [1, 3], rtol=0.02)


def test_randint_covers_its_range_uniformly():
    xo.random.seed(11)
    r = _host(xo.random.randint(3, 17, size=N))
    assert r.min() == 3 and r.max() == 16
    counts = np.bincount(r - 3, minlength=14)
    expected = N / 14
    # 8 standard deviations of a binomial count: fails for a skewed range.
    assert np.all(np.abs(counts - expected) < 8 * np.sqrt(expected))
    assert set(np.unique(_host(xo.random.randint(4, size=1000)))) == {0, 1, 2, 3}
    with pytest.raises(ValueError):
        xo.random.randint(5, 5)


def test_choice_permutation_shuffle():
    xo.random.seed(5)
    c = _host(xo.random.choice(6, size=N))
    counts = np.bincount(c, minlength=6)
    assert np.all(np.abs(counts - N / 6) < 8 * np.sqrt(N / 6))
    p = np.array([0.1, 0.0, 0.6, 0.3])
    c = _host(xo.random.choice([10, 20, 30, 40], size=N, p=p))
    freq = np.array([(c == v).mean() for v in (10, 20, 30, 40)])
    np.testing.assert_allclose(freq, p, atol=0.01)
    assert freq[1] == 0.0
    u = _host(xo.random.choice(50, size=50, replace=False))
    assert sorted(u.tolist()) == list(range(50))
    with pytest.raises(ValueError):
        xo.random.choice(3, size=4, replace=False)
    perm = _host(xo.random.permutation(97))
    assert sorted(perm.tolist()) == list(range(97)) and perm.tolist() != list(range(97))
    a = np.arange(40.0).reshape(20, 2)
    pa = _host(xo.random.permutation(xo.asarray(a)))
    assert sorted(map(tuple, pa)) == sorted(map(tuple, a)) and not np.array_equal(pa, a)
    s = np.arange(30)
    xo.random.shuffle(s)
    assert sorted(s.tolist()) == list(range(30)) and s.tolist() != list(range(30))
    c = xo.arange(50.0).reshape(25, 2)
    xo.random.shuffle(c)
    hc = _host(c)
    assert sorted(map(tuple, hc)) == sorted(map(tuple, np.arange(50.0).reshape(25, 2)))
    assert not np.array_equal(hc, np.arange(50.0).reshape(25, 2))


def test_exponential_is_native_and_has_its_mean():
    xo.random.seed(9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = _host(xo.random.exponential(2.0, size=N))
    assert x.min() >= 0
    assert abs(x.mean() - 2.0) < 5 * 2.0 / np.sqrt(N)


def test_other_distributions_run_in_numpy_seeded_by_seed():
    xo.random.seed(21)
    with pytest.warns(xo.FallbackWarning, match="numpy.random.poisson"):
        a = _host(xo.random.poisson(4.0, size=N))
    assert abs(a.mean() - 4.0) < 5 * 2 / np.sqrt(N)
    xo.random.seed(21)
    np.testing.assert_array_equal(_host(xo.random.poisson(4.0, size=N)), a)
    assert xo.random.RandomState is np.random.RandomState
    assert xo.random.default_rng(3).seed == 3


@pytest.mark.parametrize("call", [
    lambda: xo.random.rand(10**8, 10**8).numpy(),
    lambda: xo.random.randn(10**8, 10**8, dtype=np.float32).eval(),
    lambda: xo.random.randint(0, 9, size=(10**8, 10**8)).numpy(),
    lambda: xo.random.choice(7, size=(10**8, 10**8)),
    lambda: xo.random.permutation(10**16),
    lambda: xo.eye(10**7),
    lambda: xo.sparse.random(10**9, 10**9, density=0.5, format="csr"),
], ids=["rand", "randn", "randint", "choice", "permutation", "eye", "sparse.random"])
def test_huge_sizes_raise_memory_error(call):
    with pytest.raises(MemoryError):
        call()
