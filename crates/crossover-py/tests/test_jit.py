"""@xo.jit on whole NumPy functions: results, fusion, trace caching, control
flow, lazy mode and the copy rules."""

import numpy as np
import pytest

import crossover as xo
from conftest import check, nonzero


def image_pipeline(x):
    x = (x - x.mean(axis=(1, 2), keepdims=True)) / (x.std(axis=(1, 2), keepdims=True) + 1e-8)
    return np.sin(x) * 0.5 + 0.5


@pytest.mark.parametrize("shape", [(3, 17, 19), (4, 64, 64), (2, 1, 2049)])
def test_image_pipeline(shape, rng):
    a = nonzero(rng, shape, np.float32)
    f = xo.jit(image_pipeline)
    got = f(a)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.flags.writeable
    check(got, image_pipeline(a.astype(np.float64)), "transcendental", np.float32)
    got2 = f(nonzero(rng, shape, np.float32) * 3)
    assert f.traces == 1  # second call replayed the cached trace
    assert got2.shape == shape


def test_image_pipeline_fuses_into_few_kernels(rng):
    a = nonzero(rng, (4, 32, 32), np.float32)
    e = xo.explain(xo.jit(image_pipeline), a)
    # mean+std share one pass; the normalise/sin chain is one more kernel
    # (plus a tiny one for std + 1e-8, which is broadcast).
    assert 2 <= len(e) <= 3, str(e)
    assert any("std" in k["name"] and "mean" in k["name"] for k in e.kernels)
    assert e.ran and all(k["seconds"] is not None for k in e.kernels)


def test_cache_by_shape_dtype_and_static_values(rng):
    calls = []

    @xo.jit
    def f(x, scale, mode="add"):
        calls.append(1)
        return x * scale + 1 if mode == "add" else x * scale - 1

    a32 = nonzero(rng, 100, np.float32)
    for _ in range(3):
        np.testing.assert_allclose(f(a32, 2.0), a32 * 2 + 1, rtol=1e-6)
    assert len(calls) == 1
    f(a32, 3.0)                         # a new value of a non-array argument
    f(a32.astype(np.float64), 2.0)      # a new dtype
    f(nonzero(rng, 7, np.float32), 2.0)  # a new shape
    np.testing.assert_allclose(f(a32, 2.0, mode="sub"), a32 * 2 - 1, rtol=1e-6)
    assert len(calls) == 5
    assert f.cache_size() == 5


def test_multiple_outputs_and_containers(rng):
    @xo.jit
    def stats(x, y):
        s = x + y
        return s.mean(), {"max": s.max(axis=0), "n": x.shape[0]}, [np.sqrt(abs(s))]

    a, b = nonzero(rng, (50, 4), np.float64), nonzero(rng, (50, 4), np.float64)
    for _ in range(2):
        m, d, (r,) = stats(a, b)
        assert isinstance(m, np.ndarray) and m.shape == ()
        np.testing.assert_allclose(m, (a + b).mean(), rtol=1e-13)
        np.testing.assert_allclose(d["max"], (a + b).max(axis=0))
        assert d["n"] == 50
        np.testing.assert_allclose(r, np.sqrt(abs(a + b)), rtol=1e-15)
    assert stats.traces == 1


def test_control_flow_on_values_forces_evaluation_and_disables_cache(rng):
    @xo.jit
    def f(x):
        if x.sum() > 0:  # Python reads a value: evaluated here
            return x * 2
        return -x

    a = nonzero(rng, 64, np.float64)
    np.testing.assert_allclose(f(np.abs(a)), np.abs(a) * 2)
    np.testing.assert_allclose(f(-np.abs(a)), np.abs(a))  # same signature, other branch
    assert "reads array values" in f.last_reason
    assert f.traces == 1  # known uncacheable: later calls just run Python


def test_lazy_mode_returns_crossover_arrays_and_copies_inputs(rng):
    @xo.jit(lazy=True)
    def f(x):
        return np.exp(x) - 1

    a = nonzero(rng, 1000, np.float32, 0.01, 1.0)
    orig = a.copy()
    y = f(a)
    assert isinstance(y, xo.ndarray) and not y.is_ready
    a[:] = 0  # the lazy result must not see this
    check(y.numpy(), np.exp(orig.astype(np.float64)) - 1, "transcendental", np.float32)
    y2 = f(a)  # replayed
    assert isinstance(y2, xo.ndarray) and f.traces == 1
    check(y2, np.zeros(1000), "transcendental", np.float32)


def test_results_are_independent_of_input_mutation_after_call(rng):
    f = xo.jit(lambda x: x * 2)
    a = nonzero(rng, 300, np.float64)
    orig = a.copy()
    y = f(a)
    a[:] = 1
    np.testing.assert_array_equal(y, orig * 2)
    z = f(a)  # returns a fresh array, not a view of the input
    assert not np.shares_memory(z, a)
    ident = xo.jit(lambda x: x)
    w = ident(a)
    assert not np.shares_memory(w, a)
    np.testing.assert_array_equal(w, a)


def test_captured_numpy_array_is_not_baked_in(rng):
    w = np.ones(10)

    @xo.jit
    def f(x):
        return x + w

    a = nonzero(rng, 10, np.float64)
    np.testing.assert_allclose(f(a), a + 1)
    w[:] = 5
    np.testing.assert_allclose(f(a), a + 5)
    assert "outside the recorded ops" in f.last_reason


def test_numpy_scalars_and_literals_are_trace_constants(rng):
    @xo.jit
    def f(x):
        return x * np.float32(0.5) + [1.0, 2.0, 3.0]

    a = nonzero(rng, (4, 3), np.float32)
    for _ in range(2):
        got = f(a)
        want = a * np.float32(0.5) + [1.0, 2.0, 3.0]
        assert got.dtype == want.dtype  # the list is float64, like in NumPy
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert f.traces == 1 and f.last_reason is None


def test_fallback_inside_jit(rng):
    @xo.jit
    def f(x):
        return np.diff(x) * 2  # not in the engine: NumPy runs it

    a = nonzero(rng, 10, np.float64)
    with pytest.warns(xo.FallbackWarning, match="diff"):
        np.testing.assert_allclose(f(a), np.diff(a) * 2)
    np.testing.assert_allclose(f(a), np.diff(a) * 2)  # warned once only


def test_nested_jit_is_inlined_and_methods_work(rng):
    inner = xo.jit(lambda x: np.sin(x) + 1)

    @xo.jit
    def outer(x):
        return inner(x) * inner(x * 2)

    a = nonzero(rng, 100, np.float64)
    np.testing.assert_allclose(outer(a), (np.sin(a) + 1) * (np.sin(a * 2) + 1), rtol=1e-14)

    class Model:
        def __init__(self, k):
            self.k = k

        @xo.jit
        def apply(self, x):
            return x * 3

    np.testing.assert_allclose(Model(1).apply(a), a * 3)


def test_jit_exceptions_propagate_and_leave_no_trace(rng):
    @xo.jit
    def bad(x):
        return x + np.ones(5)

    with pytest.raises(xo.ShapeError):
        bad(np.ones(3))
    assert not xo._crossover._tracing()
    np.testing.assert_allclose(xo.jit(lambda x: x + 1)(np.ones(3)), 2)


def test_jit_accepts_crossover_inputs_and_kwargs(rng):
    f = xo.jit(lambda x, *, y: np.maximum(x, y))
    a, b = nonzero(rng, 50, np.float32), nonzero(rng, 50, np.float32)
    np.testing.assert_array_equal(f(xo.asarray(a), y=b), np.maximum(a, b))
    np.testing.assert_array_equal(f(a, y=xo.asarray(b)), np.maximum(a, b))


def test_float_arguments_are_keyed_by_their_bits(rng):
    # 0.0 and -0.0 compare equal but are different constants to bake in;
    # NaN never equals itself but must not trace on every call.
    f = xo.jit(lambda x, s: x * s)
    a = nonzero(rng, 33, np.float64)
    assert np.all(np.signbit(f(a, 0.0)) == np.signbit(a * 0.0))
    assert np.all(np.signbit(f(a, -0.0)) == np.signbit(a * -0.0))
    assert np.any(np.signbit(f(a, -0.0)) != np.signbit(f(a, 0.0)))
    for _ in range(3):
        assert np.all(np.isnan(f(a, float("nan"))))
    assert f.traces == 3 and f.cache_size() == 3
    # The same values passed by keyword: their own entries, same results.
    np.testing.assert_array_equal(f(a, s=2.5), a * 2.5)
    np.testing.assert_array_equal(f(x=a, s=2.5), f(a, 2.5))
    # An unhashable argument: traced every call, still right.
    g = xo.jit(lambda x, t: x + t[0])
    for v in (1.0, 2.0):
        np.testing.assert_array_equal(g(a, [v]), a + v)
    assert g.cache_size() == 0
