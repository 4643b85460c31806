"""A standing guard (issue 19): crossover against NumPy over dtypes x ops x
shapes x edge values (ints at their limits, NaN and infinities, empty and
0-d arrays, views), for value, dtype, shape and exception type.

Bounded in time: a fixed number of examples per property, no deadline per
example (the first call of a shape pays one-off costs), derandomized so CI
sees the same inputs every run (a failure is reproducible), well under a
minute in all.
"""

import os
import warnings

import numpy as np
import pytest

import crossover as xo

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]

# CROSSOVER_PROPERTY_EXAMPLES=2000 searches deeper (random inputs); the
# default is CI's bounded, reproducible run.
_EXAMPLES = int(os.environ.get("CROSSOVER_PROPERTY_EXAMPLES", "60"))
SETTINGS = settings(max_examples=_EXAMPLES, deadline=None, derandomize=_EXAMPLES == 60,
                    database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

UNARY = ["negative", "absolute", "sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "square",
         "floor", "ceil", "logical_not"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "minimum", "maximum", "less",
          "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
          "logical_or"]
TRANSCENDENTAL = {"sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "power", "divide"}


def elements(dtype):
    """Every value of the dtype, its limits and (floats) NaN and infinities
    weighted in."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans()
    if dt.kind == "i":
        info = np.iinfo(dt)
        return st.one_of(st.sampled_from([info.min, info.max, 0, -1, 1]),
                         st.integers(info.min, info.max), st.integers(-5, 5))
    width = dt.itemsize * 8
    return st.one_of(st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0]),
                     st.floats(width=width, allow_nan=True, allow_infinity=True),
                     st.floats(-10, 10, width=width))


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)


@st.composite
def arrays(draw, dtype=None, shape=None):
    dtype = dtype if dtype is not None else draw(st.sampled_from(DTYPES))
    shape = shape if shape is not None else draw(SHAPES)
    a = draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    view = draw(st.sampled_from(["none", "reverse", "step", "transpose"]))
    if a.ndim and view == "reverse":
        a = a[::-1]
    elif a.ndim and view == "step":
        a = a[::2]
    elif view == "transpose":
        a = a.T
    return a


def outcome(f):
    """(value, None) or (None, exception type), warnings silenced: the
    comparison is of values and exception types (NumPy's floating-point
    RuntimeWarnings have no crossover counterpart beyond the cast one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = f()
            if isinstance(r, xo.ndarray):
                r = r.numpy()
            return np.asarray(r), None
        except Exception as e:  # noqa: BLE001 -- the type is compared
            return None, e


def same(want, got, tol=0.0):
    """Equal dtype, shape and values (NaN where NaN; `tol` relative for
    floats, scaled by the magnitude of the values involved)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind != "f" or tol == 0.0:
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_allclose(got, want, rtol=tol, atol=0.0, equal_nan=True)


def check(np_f, xo_f, tol=0.0):
    want, np_err = outcome(np_f)
    got, xo_err = outcome(xo_f)
    if np_err is not None:
        assert xo_err is not None, f"NumPy raised {np_err!r}, crossover returned {got!r}"
        assert isinstance(xo_err, type(np_err)) or (
            isinstance(np_err, TypeError) and isinstance(xo_err, TypeError)
        ), f"NumPy raised {np_err!r}, crossover {xo_err!r}"
        return
    if xo_err is not None:
        # Loud, never silent: only dtypes NumPy has and crossover lacks
        # (float16, int8 results of bool inputs) may be refused.
        assert isinstance(xo_err, TypeError) and want.dtype in (np.float16, np.int8), (
            f"crossover raised {xo_err!r} where NumPy gave {want!r}")
        return
    same(want, got, tol)


def tolerance(name, dtype):
    if name in TRANSCENDENTAL:
        return 4e-6 if np.dtype(dtype) == np.float32 else 1e-13
    return 0.0


@SETTINGS
@given(st.sampled_from(UNARY), arrays())
def test_unary(name, a):
    f = getattr(np, name)
    check(lambda: f(a), lambda: f(xo.asarray(a)), tolerance(name, a.dtype))


@SETTINGS
@given(st.sampled_from(BINARY), st.data())
def test_binary_arrays(name, data):
    a = data.draw(arrays())
    # The other operand broadcasts: same shape, a trailing slice, or 0-d.
    shape = data.draw(st.sampled_from([a.shape, a.shape[1:], ()]))
    b = data.draw(arrays(shape=shape))
    f = getattr(np, name)
    dt = np.result_type(a, b)
    check(lambda: f(a, b), lambda: f(xo.asarray(a), xo.asarray(b)), tolerance(name, dt))


PY_SCALARS = st.one_of(
    st.booleans(), st.integers(-5, 5),
    st.sampled_from([2**31, -2**31 - 1, 2**40, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**70]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.5, -2.5, 1e300]),
)


@SETTINGS
@given(st.sampled_from(BINARY), arrays(), PY_SCALARS, st.booleans())
def test_binary_python_scalars(name, a, s, scalar_first):
    # NEP 50: Python scalars are weak; ints out of range are OverflowError.
    f = getattr(np, name)
    if scalar_first:
        check(lambda: f(s, a), lambda: f(s, xo.asarray(a)), tolerance(name, a.dtype))
    else:
        check(lambda: f(a, s), lambda: f(xo.asarray(a), s), tolerance(name, a.dtype))


@SETTINGS
@given(arrays(), st.sampled_from(DTYPES))
def test_astype(a, dtype):
    # NaN, infinities and out-of-range floats to ints: NumPy's values.
    check(lambda: a.astype(dtype), lambda: xo.asarray(a).astype(dtype))


REDUCTIONS = ["sum", "mean", "min", "max", "argmin", "argmax", "var", "std"]


@SETTINGS
@given(st.sampled_from(REDUCTIONS), arrays(), st.data())
def test_reductions(name, a, data):
    axes = [None] + list(range(-a.ndim - 1, a.ndim + 1))
    axis = data.draw(st.sampled_from(axes))
    if name.startswith("arg"):
        kw = {"axis": axis}
    else:
        kw = {"axis": axis, "keepdims": data.draw(st.booleans())}
    x = xo.asarray(a)
    tol = 0.0
    if a.dtype.kind == "f" or name in ("mean", "var", "std"):
        # Orders of summation differ (crossover: float64 lanes; NumPy:
        # pairwise in the dtype); scaled by the largest magnitude.
        tol = 1e-4 if a.dtype == np.float32 else 1e-9
    want, np_err = outcome(lambda: getattr(np, name)(a, **kw))
    got, xo_err = outcome(lambda: getattr(np, name)(x, **kw))
    if np_err is not None:
        assert xo_err is not None and isinstance(xo_err, type(np_err)), (np_err, xo_err, got)
        return
    assert xo_err is None, (xo_err, want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                  got.shape, want.shape)
    if tol == 0.0:
        np.testing.assert_array_equal(got, want)
        return
    finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    scale = float(np.max(np.abs(finite.astype(np.float64)), initial=1.0))
    if name in ("var", "std") and scale > 1e100:
        return  # squares overflow differently in float64 lanes and NumPy's
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol * scale * (scale if name == "var" else 1.0),
                               equal_nan=True)


@SETTINGS
@given(arrays(), st.sampled_from([(-1,), "ravel", "T", (slice(None, None, -1),), (None,)]))
def test_views(a, how):
    x = xo.asarray(a)
    if how == "ravel":
        f = np.ravel
    elif how == "T":
        def f(v):
            return v.T
    elif isinstance(how, tuple) and isinstance(how[0], int):
        def f(v):
            return v.reshape(how)
    else:
        def f(v):
            return v[how] if v.ndim else v[()]
    check(lambda: f(a), lambda: f(x))


@SETTINGS
@given(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=2**62))
def test_huge_shapes_never_crash(shape):
    # Any shape: an array, ValueError (too big) or MemoryError, as NumPy,
    # and never a wrong size.
    want, np_err = outcome(lambda: np.broadcast_to(np.zeros((), np.float32), shape))
    got_err = None
    try:
        v = xo.broadcast_to(xo.zeros((), dtype=np.float32), shape)
    except (ValueError, MemoryError) as e:
        got_err = e
    if np_err is not None:
        assert isinstance(got_err, (ValueError, MemoryError)), (np_err, got_err)
        return
    assert got_err is None, got_err
    assert v.shape == want.shape and v.size == want.size
