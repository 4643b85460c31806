"""xo.random.default_rng: Philox numbers with NumPy's Generator methods."""

import numpy as np
import pytest

import crossover as xo


def test_determinism_and_shapes():
    a = xo.random.default_rng(42).random((3, 4)).numpy()
    b = xo.random.default_rng(42).random((3, 4)).numpy()
    c = xo.random.default_rng(43).random((3, 4)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.shape == (3, 4) and a.dtype == np.float64
    g = xo.random.default_rng(1)
    assert not np.array_equal(g.random(10).numpy(), g.random(10).numpy())
    assert isinstance(g.random(), float)
    assert g.seed == 1 and "Philox" in repr(g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_distributions(dtype):
    g = xo.random.default_rng(7)
    n = 400_000
    u = g.random(n, dtype=dtype).numpy()
    assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 5e-3 and abs(u.var() - 1 / 12) < 2e-3
    z = g.standard_normal(n, dtype=dtype).numpy()
    assert abs(z.mean()) < 1e-2 and abs(z.std() - 1) < 1e-2
    v = g.uniform(-2.0, 3.0, size=n, dtype=dtype).numpy()
    assert v.min() >= -2 and v.max() < 3 and abs(v.mean() - 0.5) < 2e-2
    w = g.normal(10.0, 2.0, size=(n,), dtype=dtype).numpy()
    assert abs(w.mean() - 10) < 2e-2 and abs(w.std() - 2) < 2e-2


def test_lazy_random_fuses_with_work():
    g = xo.random.default_rng(3)
    x = g.random(1_000_000, dtype=np.float32)
    y = g.random(1_000_000, dtype=np.float32)
    inside = ((x * x + y * y) < 1).astype(np.float64).mean()
    assert not x.is_ready
    e = xo.explain(inside, run=False)
    assert len(e) == 1, str(e)  # random numbers made inside the one kernel
    assert abs(4 * float(inside) - np.pi) < 1e-2


def test_bad_arguments():
    with pytest.raises(ValueError):
        xo.random.default_rng(-1)
    with pytest.raises(xo.DTypeError):
        xo.random.default_rng(0).random(3, dtype=np.int32)
    with pytest.raises(ValueError):
        xo.random.default_rng(0).random((-1, 2))
