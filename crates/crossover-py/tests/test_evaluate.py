"""xo.evaluate: numexpr-style expression strings."""

import numpy as np
import pytest

import crossover as xo
from conftest import SIZES, check, nonzero


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_evaluate_caller_locals(n, dtype, rng):
    a = nonzero(rng, n, dtype)
    b = nonzero(rng, n, dtype)
    y = xo.evaluate("a*b + sin(a) + cos(b)")
    assert isinstance(y, np.ndarray) and y.dtype == dtype and y.flags.writeable
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    check(y, a64 * b64 + np.sin(a64) + np.cos(b64), "transcendental", dtype)


def test_evaluate_kwargs_and_dicts(rng):
    a = nonzero(rng, 1000, np.float64)
    np.testing.assert_allclose(xo.evaluate("x * 2 + y", x=a, y=1.5), a * 2 + 1.5)
    np.testing.assert_allclose(xo.evaluate("x - z", local_dict={"x": a}, global_dict={"z": a}), 0 * a)
    np.testing.assert_allclose(xo.evaluate("sum(x**2)", x=a), (a**2).sum(), rtol=1e-13)
    np.testing.assert_allclose(xo.evaluate("where(x > 0, x, 0)", x=a), np.where(a > 0, a, 0))
    np.testing.assert_allclose(xo.evaluate("mean(x, axis=0)", x=a.reshape(10, 100)),
                               a.reshape(10, 100).mean(axis=0), rtol=1e-13)


def test_evaluate_binds_its_arguments_as_a_python_function_would(rng):
    # evaluate(expression, local_dict=None, global_dict=None, **kwargs),
    # registered by hand (vectorcall keywords read in place): positional or
    # keyword parameters, None for a default, keywords in any order, and
    # Python's errors for a call that does not fit.
    a = nonzero(rng, 37, np.float64)
    np.testing.assert_array_equal(xo.evaluate("x - z", {"x": a}, {"z": 1.0}), a - 1)
    np.testing.assert_array_equal(xo.evaluate("x - z", None, {"x": a, "z": 2.0}), a - 2)
    np.testing.assert_array_equal(
        xo.evaluate(global_dict={"z": 3.0}, expression="x - z", local_dict={"x": a}), a - 3)
    np.testing.assert_array_equal(xo.evaluate("x - z", {"x": a}, z=4.0), a - 4)
    # Keywords beat the dicts; the names need not be interned.
    name = "".join(["x", "x"])
    np.testing.assert_array_equal(xo.evaluate("xx * 2", local_dict={"xx": a}, **{name: a + 1}),
                                  (a + 1) * 2)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'expression'"):
        xo.evaluate(x=a)
    with pytest.raises(TypeError, match="takes from 1 to 3 positional arguments but 4 were given"):
        xo.evaluate("x", {}, {}, {})
    with pytest.raises(TypeError, match="multiple values for argument 'local_dict'"):
        xo.evaluate("x", {"x": a}, local_dict={"x": a})
    with pytest.raises(TypeError, match="'expression' must be str, not int"):
        xo.evaluate(3, x=a)
    import inspect
    assert str(inspect.signature(xo.evaluate)) == \
        "(expression, local_dict=None, global_dict=None, **kwargs)"
    assert "numexpr" in xo.evaluate.__doc__


GLOBAL_ARRAY = np.arange(1.0, 6.0)


def test_evaluate_reads_globals():
    np.testing.assert_allclose(xo.evaluate("GLOBAL_ARRAY * 2"), GLOBAL_ARRAY * 2)


def test_evaluate_result_owns_engine_buffer_and_inputs_are_not_copied(rng):
    a = nonzero(rng, 100_000, np.float32)
    y = xo.evaluate("a + 1")
    assert y.flags.writeable and y.flags.c_contiguous
    assert not np.shares_memory(y, a)
    assert '"crossover.buffer"' in repr(y.base)  # the engine's buffer, no copy
    y[0] = 5  # ours to keep
    z = xo.evaluate("a")  # a passthrough result is copied, never an alias
    assert not np.shares_memory(z, a)


def test_evaluate_result_does_not_depend_on_later_mutation(rng):
    a = nonzero(rng, 5000, np.float64)
    orig = a.copy()
    y = xo.evaluate("a * 2")
    a[:] = 0
    np.testing.assert_array_equal(y, orig * 2)


def test_evaluate_with_crossover_inputs_is_lazy(rng):
    a = nonzero(rng, 100, np.float32)
    x = xo.asarray(a)
    y = xo.evaluate("x * 2 + a")  # a NumPy input next to a crossover one is copied
    assert isinstance(y, xo.ndarray) and not y.is_ready
    a[:] = 0
    check(y.numpy(), x.numpy().astype(np.float64) * 3, "exact", np.float32)


def test_expression_errors_have_positions():
    a = np.ones(3)
    with pytest.raises(xo.ExpressionError) as e:
        xo.evaluate("a + * 2", a=a)
    assert isinstance(e.value, ValueError) and isinstance(e.value, xo.CrossoverError)
    assert e.value.position == 4
    assert "position 4" in str(e.value)
    with pytest.raises(xo.ExpressionError) as e:
        xo.evaluate("a + nosuchname", a=a)
    assert e.value.position == 4 and "nosuchname" in str(e.value)
    with pytest.raises(xo.ExpressionError):
        xo.evaluate("frobnicate(a)", a=a)
    with pytest.raises(xo.ExpressionError):
        xo.evaluate("", a=a)
    with pytest.raises(xo.ShapeError):
        xo.evaluate("a + b", a=np.ones(3), b=np.ones(4))


def test_parsed_expressions_are_cached():
    a = np.ones(4)
    before = xo._crossover._expression_cache_size()
    for _ in range(3):
        xo.evaluate("a * 3 + 17.25", a=a)
    assert xo._crossover._expression_cache_size() == before + 1


def test_evaluate_integer_and_bool_inputs(rng):
    i = rng.integers(1, 100, 1000)
    m = rng.random(1000) < 0.5
    np.testing.assert_array_equal(xo.evaluate("i * 2 + 1", i=i), i * 2 + 1)
    np.testing.assert_array_equal(xo.evaluate("where(m, i, -i)", m=m, i=i), np.where(m, i, -i))
    np.testing.assert_array_equal(xo.evaluate("(i > 50) & m", i=i, m=m), (i > 50) & m)


def test_evaluate_out_argument(rng):
    a = nonzero(rng, 100, np.float64)
    out = np.empty(100)
    r = xo.evaluate("a * 2", a=a, out=out)
    assert r is out
    np.testing.assert_array_equal(out, a * 2)
    # A variable that happens to be called `out` is a variable.
    np.testing.assert_array_equal(xo.evaluate("out + 1", out=a), a + 1)


CPU_ONLY = xo.info()["devices"] == ["cpu"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_repeated_calls_run_the_captured_kernels_with_the_general_paths_bits(dtype, rng):
    # From the second call on NumPy inputs, the expression's captured fused
    # kernels run straight on the new inputs; their results must be the
    # general (lazy) path's, bit for bit, at every size and after the inputs
    # change dtype, length or layout (each a new capture or the general path).
    expr = "a*b + sin(a) + cos(b) - 0.25*a"
    runs = xo._crossover._expression_compiled_runs(expr)
    calls = 0
    for n in SIZES:
        for _ in range(3):
            a, b = nonzero(rng, n, dtype), nonzero(rng, n, dtype)
            y = xo.evaluate(expr, a=a, b=b)
            calls += 1
            lazy = np.asarray(xo.evaluate(expr, a=xo.asarray(a), b=xo.asarray(b)))
            assert y.dtype == dtype and y.shape == (n,)
            np.testing.assert_array_equal(y, lazy)
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            check(y, a64 * b64 + np.sin(a64) + np.cos(b64) - 0.25 * a64, "transcendental", dtype)
    # Strided and 2-D inputs: new layouts, captured or declined, never misread.
    base_a, base_b = nonzero(rng, (64, 130), dtype), nonzero(rng, (64, 130), dtype)
    for a, b in [(base_a[:, ::2], base_b[:, ::2]), (base_a, base_b), (base_a[::3], base_b[::3]),
                 (base_a.T, base_b.T), (base_a[:, 1], base_b[:, 1])]:
        for _ in range(2):
            y = xo.evaluate(expr, a=a, b=b)
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            check(y, a64 * b64 + np.sin(a64) + np.cos(b64) - 0.25 * a64, "transcendental", dtype)
    gained = xo._crossover._expression_compiled_runs(expr) - runs
    # With a GPU policy every run is placed by the general path instead.
    assert (gained >= 2 * len(SIZES)) if CPU_ONLY else gained == 0


def test_captured_kernels_read_the_inputs_of_each_call(rng):
    # The captured kernels bind each call's arrays: a NumPy input changed
    # in place, or another array of the same layout, is read afresh.
    a = nonzero(rng, 4099, np.float64)
    b = nonzero(rng, 4099, np.float64)
    first = xo.evaluate("a * b + 1", a=a, b=b)
    np.testing.assert_array_equal(first, a * b + 1)
    a *= 3.0
    for _ in range(3):
        np.testing.assert_array_equal(xo.evaluate("a * b + 1", a=a, b=b), a * b + 1)
    # The same array for both names (a kernel reads a shared input once).
    np.testing.assert_array_equal(xo.evaluate("a * b + 1", a=b, b=b), b * b + 1)
    np.testing.assert_array_equal(xo.evaluate("a * b + 1", a=a, b=b), a * b + 1)
    # A reduction ending the expression.
    for _ in range(3):
        np.testing.assert_allclose(xo.evaluate("sum(a * b)", a=a, b=b), (a * b).sum(), rtol=1e-12)


def test_captured_kernels_leave_errors_to_the_general_path(rng):
    a = nonzero(rng, 100, np.float64)
    for _ in range(3):
        xo.evaluate("a + b", a=a, b=a)
    with pytest.raises(ValueError, match="broadcast"):
        xo.evaluate("a + b", a=a, b=nonzero(rng, 7, np.float64))
    with pytest.raises(xo.ExpressionError):
        xo.evaluate("a + b", a=a)


def test_long_calls_leave_the_captured_kernels_of_short_ones_in_place(rng):
    # Work past the calling thread's limit (2**25 points) takes the general
    # path to the evaluation thread every time; it must neither run on the
    # calling thread nor push out the short calls' captured kernels.
    expr = "a*a + 0.5"
    big = rng.random(2**25 + 7, dtype=np.float32)
    small = nonzero(rng, 1000, np.float32)
    runs = xo._crossover._expression_compiled_runs(expr)
    for _ in range(2):
        np.testing.assert_allclose(xo.evaluate(expr, a=small), small * small + np.float32(0.5), rtol=1e-6)
    for _ in range(2):
        y = xo.evaluate(expr, a=big)
        np.testing.assert_allclose(y[::4099], (big * big + np.float32(0.5))[::4099], rtol=1e-6)
    del y
    for _ in range(2):
        np.testing.assert_allclose(xo.evaluate(expr, a=small), small * small + np.float32(0.5), rtol=1e-6)
    assert xo._crossover._expression_compiled_runs(expr) - runs == (3 if CPU_ONLY else 0)


def test_captured_kernels_take_numpy_values_and_leave_copies_to_the_general_path(rng):
    # Captured kernels read NumPy inputs as values, in place. Inputs that
    # need a copy first (byte-swapped, misaligned) take the general path;
    # NumPy views of crossover's own memory and `out=` run the kernels.
    expr = "a - 2*b"
    n = 1001
    a, b = nonzero(rng, n, np.float64), nonzero(rng, n, np.float64)
    want = a - 2 * b
    runs = xo._crossover._expression_compiled_runs(expr)
    for _ in range(3):
        np.testing.assert_array_equal(xo.evaluate(expr, a=a, b=b), want)
    swapped = a.astype(a.dtype.newbyteorder())
    np.testing.assert_array_equal(xo.evaluate(expr, a=swapped, b=b), want)
    misaligned = np.zeros(n * 8 + 1, np.uint8)[1:].view(np.float64)
    misaligned[:] = a
    assert not misaligned.flags.aligned
    np.testing.assert_array_equal(xo.evaluate(expr, a=misaligned, b=b), want)
    engine_view = np.asarray(xo.asarray(a) + 0.0)
    for _ in range(2):
        np.testing.assert_array_equal(xo.evaluate(expr, a=engine_view, b=b), want)
    out = np.full(n, 7.0)
    assert xo.evaluate(expr, a=a, b=b, out=out) is out
    np.testing.assert_array_equal(out, want)
    # The first call captured; two more, two views and `out=` ran captured.
    gained = xo._crossover._expression_compiled_runs(expr) - runs
    assert gained == (5 if CPU_ONLY else 0)
