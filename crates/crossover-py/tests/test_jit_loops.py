"""@xo.jit on Python loops: every translated form against the same function
run as plain Python (random and edge inputs), and every construct that falls
back, with its warning and a correct result."""

import inspect
import math
import warnings

import numpy as np
import pytest

import crossover as xo

SIZES = [0, 1, 7, 1000, 100_003]


def data(rng, n, dtype=np.float64, lo=0.5, hi=2.0):
    """Seeded values in +-[lo, hi) (never all zero)."""
    x = rng.uniform(lo, hi, n) * rng.choice([-1.0, 1.0], n)
    return x.astype(dtype)


def translated(fn, *args, rtol=1e-12, atol=0.0, **kwargs):
    """Runs ``fn`` jitted and as plain Python on copies of the arguments;
    checks that the loop was translated, then compares results and the
    arrays each wrote into. Returns the jitted result."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    f = xo.jit(fn, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", xo.FallbackWarning)
        got = f(*mine)
    assert f.fallback_reason is None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = fn(*ref)
    _same(got, want, rtol, atol)
    for m, r in zip(mine, ref):
        if isinstance(r, np.ndarray):
            _same(m, r, rtol, atol)
    return got


def _same(got, want, rtol, atol):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, rtol, atol)
        return
    if want is None:
        assert got is None
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


def falls_back(fn, *args, match, **kwargs):
    """``fn`` jitted warns once naming ``match`` and gives Python's result."""
    f = xo.jit(fn, **kwargs)
    with pytest.warns(xo.FallbackWarning, match=match):
        got = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    _same(got, want, 0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", xo.FallbackWarning)  # once per function
        _same(f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]), want, 0, 0)
    return f


# ---- reductions -------------------------------------------------------------


def conditional_accumulate(data, threshold):
    result = 0.0
    for i in range(len(data)):
        if data[i] > threshold:
            result += data[i] ** 2
        else:
            result -= data[i]
    return result


@pytest.mark.parametrize("n", SIZES)
def test_conditional_accumulate(rng, n):
    got = translated(conditional_accumulate, data(rng, n), 0.3)
    assert isinstance(got, float)  # a scalar, as the loop returns


def test_conditional_accumulate_is_one_reduction_kernel(rng):
    f = xo.jit(conditional_accumulate)
    e = xo.explain(f, data(rng, 5000), 0.3)
    assert "where" in e.translation[0] and "sum(" in e.translation[0], e.translation
    reductions = [k for k in e.kernels if "where" in k["name"]]
    assert len(reductions) == 1 and k_ops(reductions[0]) >= {"gt", "where"}, str(e)
    assert "loop translation" in str(e)


def k_ops(kernel):
    return set(kernel["name"].replace("(", ",").replace(")", ",").split(","))


def test_edge_values_nan_inf(rng):
    x = data(rng, 1000)
    x[[3, 70]] = np.nan
    x[[5, 90]] = [np.inf, -np.inf]
    translated(conditional_accumulate, x, 0.3)
    translated(conditional_accumulate, x[:10].copy(), 0.3)


def test_float32_elements_keep_float32(rng):
    got = translated(conditional_accumulate, data(rng, 1000, np.float32), 0.3, rtol=2e-5)
    assert isinstance(got, np.float32)


def initial_value_and_counter(x, t):
    total = 5.0
    count = 0
    for v in x:
        if v > t:
            total += v
            count += 1
    return total, count


@pytest.mark.parametrize("n", SIZES)
def test_initial_value_and_counter(rng, n):
    total, count = translated(initial_value_and_counter, data(rng, n), 0.2)
    assert isinstance(count, (int, np.integer))


def products_and_extremes(x):
    p = 1.0
    hi = -1e300
    lo = 1e300
    for i in range(len(x)):
        p *= 1.0 + x[i] * 1e-3
        hi = max(hi, x[i])
        lo = min(lo, x[i])
    return p, hi, lo


@pytest.mark.parametrize("n", SIZES)
def test_products_and_extremes(rng, n):
    translated(products_and_extremes, data(rng, n))


def test_python_max_skips_nan_like_the_loop(rng):
    x = data(rng, 100)
    x[[0, 50]] = np.nan
    p, hi, lo = translated(products_and_extremes, x)
    assert not np.isnan(hi) and not np.isnan(lo)


def numpy_maximum(x):
    m = -np.inf
    for i in range(len(x)):
        m = np.maximum(m, x[i])
    return m


def test_numpy_maximum_propagates_nan(rng):
    x = data(rng, 100)
    translated(numpy_maximum, x)
    x[7] = np.nan
    assert np.isnan(translated(numpy_maximum, x))


def elif_chain(x, y):
    a = 0.0
    b = 0.0
    n = 0
    for i in range(len(x)):
        if x[i] > 1.0:
            a += x[i] * y[i]
        elif x[i] < -1.0 and not y[i] > 0:
            b -= abs(y[i])
            n += 1
        elif x[i] == 0.0 or y[i] > 1.5:
            if y[i] > 1.8:
                a += 1
            else:
                b += min(x[i], y[i])
        else:
            n += 2
    return a, b, n


@pytest.mark.parametrize("n", SIZES)
def test_elif_chain_nested_if_several_accumulators(rng, n):
    x = data(rng, n)
    if n > 10:
        x[::9] = 0.0
    translated(elif_chain, x, data(rng, n))


def temps_and_functions(x, k):
    s = 0.0
    for i in range(len(x)):
        t = math.sin(x[i]) * k
        u = np.exp(-abs(t)) if t > 0 else np.sqrt(abs(x[i]))
        s += max(t, u) + math.hypot(t, 1.0)
    return s


def test_temporaries_math_and_numpy_functions(rng):
    translated(temps_and_functions, data(rng, 1000), 0.5)


SCALE = 3.0


def uses_closure(x):
    offset = 2.0

    def inner(y):
        acc = 0.0
        for v in y:
            acc += v * SCALE + offset
        return acc

    return xo.jit(inner)(x), inner(x)


def test_closure_and_global_values(rng):
    x = data(rng, 1000)
    got, want = uses_closure(x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def integer_sums(x):
    total = 0
    evens = 0
    for i in range(len(x)):
        total += x[i]
        if x[i] % 2 == 0:
            evens += 1
    return total, evens


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_accumulation_wraps_like_numpy_scalars(rng, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(info.max // 4, info.max // 2, 50, dtype=dtype)  # the total overflows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", xo.FallbackWarning)  # % runs in NumPy
        f = xo.jit(integer_sums)
        got = f(x)
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = integer_sums(x)
    assert type(got[0]) is type(want[0]) and got[0] == want[0]
    assert got[1] == want[1]


def index_values(n):
    s = 0
    for i in range(3, n, 2):
        s += i * i
    return s


@pytest.mark.parametrize("n", [0, 3, 4, 1001])
def test_loop_index_as_a_value(n):
    translated(index_values, n)


def ternary_and_bool_ops(x, y):
    c = 0.0
    for i in range(len(x)):
        c += x[i] if (x[i] > 0) != (y[i] > 0) else -y[i]
    return c


def test_conditional_expression_and_comparisons(rng):
    translated(ternary_and_bool_ops, data(rng, 1000), data(rng, 1000))


# ---- ranges ----------------------------------------------------------------


def ranged_sum(x, a, b, step):
    s = 0.0
    for i in range(a, b, step):
        s += x[i] * (i + 1)
    return s


@pytest.mark.parametrize("a,b,step", [(0, 100, 1), (5, 90, 7), (99, -1, -1), (99, 3, -5), (50, 50, 1),
                                      (80, 10, 1), (0, 0, -1), (10, 11, 3)])
def test_range_start_stop_step(rng, a, b, step):
    translated(ranged_sum, data(rng, 100), a, b, step)


# ---- element writes --------------------------------------------------------


def sin_mix(a, b):
    out = np.empty_like(a)
    for i in range(len(a)):
        out[i] = a[i] * b[i] + math.sin(a[i])
    return out


@pytest.mark.parametrize("n", SIZES)
def test_write_into_new_array(rng, n):
    got = translated(sin_mix, data(rng, n), data(rng, n))
    assert isinstance(got, np.ndarray) and got.flags.writeable


def test_write_loop_is_one_kernel(rng):
    e = xo.explain(xo.jit(sin_mix), data(rng, 5000), data(rng, 5000))
    assert len(e) == 1 and {"mul", "sin", "add"} <= k_ops(e.kernels[0]), str(e)
    assert e.translation[0].startswith("line")


def write_into_argument(x, out):
    for i in range(len(x)):
        if x[i] > 0:
            out[i] = x[i] * 2
        else:
            out[i] += 1


@pytest.mark.parametrize("n", SIZES)
def test_write_into_argument_mutates_it(rng, n):
    out = data(rng, n)
    x = data(rng, n)
    keep = out
    translated(write_into_argument, x, out)
    f = xo.jit(write_into_argument)
    assert f(x, out) is None
    assert out is keep


def partial_stencil(x):
    out = np.zeros(len(x))
    for i in range(1, len(x) - 1):
        out[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 1000])
def test_shifted_reads_and_partial_write(rng, n):
    translated(partial_stencil, data(rng, n))


def reverse_write(x, out):
    for i in range(len(x) - 1, -1, -1):
        out[i] = x[i] + i
    return out


def test_negative_step_write_returns_the_argument(rng):
    x, out = data(rng, 100), np.zeros(100)
    got = xo.jit(reverse_write)(x, out)
    assert got is out
    np.testing.assert_allclose(out, x + np.arange(100))


def int_writes(x):
    out = np.zeros(len(x), dtype=np.int64)
    for i in range(len(x)):
        out[i] = x[i] * 3 - i
    return out


def test_integer_writes(rng):
    translated(int_writes, rng.integers(-1000, 1000, 500))


# ---- rows and nested loops ---------------------------------------------------


def row_loop(m, w):
    acc = np.zeros(m.shape[1])
    out = np.empty_like(m)
    for i, row in enumerate(m):
        acc += row * w
        out[i] = row * 2.0 + i
    return acc, out


@pytest.mark.parametrize("rows", [1, 5, 300])
def test_rows_of_a_2d_array(rng, rows):
    translated(row_loop, data(rng, (rows, 7)), data(rng, 7))


def nested(a, b):
    out = np.empty_like(a)
    rowsum = np.empty(a.shape[0])
    total = 0.0
    for i in range(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * b[j] + i
            s += a[i, j]
            total += abs(a[i, j]) * b[j]
        rowsum[i] = s
    return out, rowsum, total


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (64, 33)])
def test_nested_loops_over_both_axes(rng, shape):
    translated(nested, data(rng, shape), data(rng, shape[1]))


def transposed(a):
    out = np.zeros((a.shape[1], a.shape[0]))
    for i in range(a.shape[1]):
        for j in range(a.shape[0]):
            out[i, j] = a[j, i]
    return out


def test_nested_transposed_read(rng):
    translated(transposed, data(rng, (4, 6)))


# ---- what falls back ----------------------------------------------------------


def with_break(x):
    s = 0.0
    for v in x:
        if v > 1.5:
            break
        s += v
    return s


def test_break_falls_back(rng):
    f = falls_back(with_break, data(rng, 100), match=r"line \d+: `break`")
    assert "break" in f.fallback_reason


def recurrence(x, a):
    y = np.zeros_like(x)
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
    return y


def test_loop_carried_write_falls_back(rng):
    falls_back(recurrence, data(rng, 50), 0.5, match="carried between iterations")


def carried_scalar(x):
    prev = 0.0
    s = 0.0
    for v in x:
        s += v - prev
        prev = v
    return s


def test_loop_carried_scalar_falls_back(rng):
    falls_back(carried_scalar, data(rng, 50), match="`prev` is read before it is assigned")


def _helper(v):
    return v * 2


def unknown_call(x):
    s = 0.0
    for v in x:
        s += _helper(v)
    return s


def test_unknown_function_falls_back(rng):
    falls_back(unknown_call, data(rng, 30), match="call to `_helper`")


def over_list(xs):
    s = 0.0
    for v in xs:
        s += v
    return s


def test_python_list_falls_back():
    falls_back(over_list, [1.0, 2.5, 3.0], match="not an array")


def wraps_around(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] - x[i - 1]
    return s


def test_negative_index_wrap_falls_back(rng):
    falls_back(wraps_around, data(rng, 20), match="wraps around")


def reads_past_end(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i + 1]
    return s


def test_out_of_bounds_raises_index_error_like_python(rng):
    f = xo.jit(reads_past_end)
    with pytest.warns(xo.FallbackWarning, match="out of bounds"), pytest.raises(IndexError):
        f(data(rng, 20))


def with_while(x):
    i = 0
    s = 0.0
    while i < len(x):
        s += x[i]
        i += 1
    return s


def test_while_falls_back(rng):
    falls_back(with_while, data(rng, 20), match="`while` loop")


def temp_after_loop(x):
    for v in x:
        last = v * 2
    return last


def test_temporary_read_after_the_loop_falls_back(rng):
    falls_back(temp_after_loop, data(rng, 20), match="`last` is used outside the loop")


def test_numba_fallback(rng):
    pytest.importorskip("numba")
    f = falls_back(recurrence, data(rng, 50), 0.5, match="runs as Numba", fallback="numba")
    assert f._numba


def test_written_argument_must_be_writeable_numpy(rng):
    x = data(rng, 10)
    out = np.zeros(10)
    out.flags.writeable = False
    f = xo.jit(write_into_argument)
    with pytest.warns(xo.FallbackWarning, match="not a writeable NumPy array"), \
            pytest.raises(ValueError, match="read-only"):
        f(x, out)


def test_explain_names_the_fallback(rng):
    e = xo.explain(xo.jit(with_break), data(rng, 10))
    assert "not translated" in str(e) and "break" in str(e)


# ---- several loops, caching, index arithmetic ------------------------------------


def two_loops_reusing_i(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = x[i] * 2
    s = 0.0
    for i in range(len(x)):
        s += out[i] + x[i]
    return s, out


def test_second_loop_reads_the_first_loops_writes(rng):
    translated(two_loops_reusing_i, data(rng, 1000))


def index_parity(x, k):
    s = 0.0
    c = 0
    for i in range(len(x) - 1, -1, -1):
        if i % k == 0:
            s += x[i]
        c += i // k
    return s, c


@pytest.mark.parametrize("k", [2, 3, -4])
def test_modulo_and_floor_division_of_the_index(rng, k):
    translated(index_parity, data(rng, 1001), k)
    e = xo.explain(xo.jit(index_parity), data(rng, 1001), k)
    assert not any("remainder" in k_["name"] for k_ in e.kernels)  # composed in the engine


def test_replayed_calls_write_arguments_and_trace_once(rng):
    f = xo.jit(write_into_argument)
    for _ in range(3):
        x, out = data(rng, 64), data(rng, 64)
        want = out.copy()
        write_into_argument(x, want)
        assert f(x, out) is None
        np.testing.assert_allclose(out, want, rtol=1e-15)
    assert f.traces == 1 and f.last_reason is None


def loop_in_branch(x, flag):
    s = 1.0
    if flag:
        for v in x:
            s += v
    return s


@pytest.mark.parametrize("flag", [True, False])
def test_loop_inside_a_branch(rng, flag):
    translated(loop_in_branch, data(rng, 100), flag)


class Scaler:
    def __init__(self, k):
        self.k = k

    @xo.jit
    def total(self, x):
        s = 0.0
        for v in x:
            s += v * self.k
        return s


def test_method_with_a_loop(rng):
    x = data(rng, 100)
    np.testing.assert_allclose(Scaler(3.0).total(x), 3.0 * x.sum(), rtol=1e-12)


# ---- more constructs that fall back, each with Python's result ---------------


def fb_continue(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s += v
    return s


def fb_acc_read(x):
    s = 0.0
    for v in x:
        if s < 3:
            s += v
    return s


def fb_int_of_float(x):
    s = 0
    for v in x:
        s += int(v)
    return s


def fb_max_order(x):
    m = -np.inf
    for v in x:
        m = max(v, m)
    return m


def fb_alias(x):
    out = x
    for i in range(len(x)):
        out[i] = x[i] * 2
    return out


def fb_two_indices(x):
    out = np.zeros(len(x) + 1)
    for i in range(len(x)):
        out[i] = x[i]
        out[i + 1] = x[i]
    return out


def fb_strided_index(x):
    s = 0.0
    for i in range(len(x) // 2):
        s += x[2 * i]
    return s


def fb_one_branch_temp(x):
    s = 0.0
    for v in x:
        if v > 0:
            t = v
        s += t
    return s


def fb_triangular(a):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(i):
            s += a[i, j]
    return s


def fb_complex(x):
    s = 0
    for v in x:
        s += v * v
    return s


FALLBACKS = [
    (fb_continue, "`continue`"),
    (fb_acc_read, "`s` is read before it is assigned"),
    (fb_int_of_float, r"`int\(\)` of a float element"),
    (fb_max_order, r"max\(value, m\)"),
    (fb_alias, "neither an argument nor a new array"),
    (fb_two_indices, "written at two different indices"),
    (fb_strided_index, r"the index `2 \* i`"),
    (fb_one_branch_temp, "assigned in one branch only"),
    (fb_triangular, "depends on an outer loop's index"),
    (fb_complex, "complex"),
]


@pytest.mark.parametrize("fn,match", FALLBACKS, ids=[f.__name__ for f, _ in FALLBACKS])
def test_construct_falls_back_with_its_line(rng, fn, match):
    arg = data(rng, (5, 5)) if fn is fb_triangular else data(rng, 21)
    if fn is fb_complex:
        arg = arg + 1j * data(rng, 21)
    if fn is fb_one_branch_temp:
        arg = np.abs(arg)  # Python needs `t` set on the first iteration
    f = falls_back(fn, arg, match=match)
    line = int(f.fallback_reason.split(":")[0].split()[1])
    lines, first = inspect.getsourcelines(fn)
    assert first < line < first + len(lines), (line, f.fallback_reason)  # a line of the loop's function


def loop_in_handler(x):
    try:
        s = float(x.sum())
    except TypeError:
        s = 0.0
    for v in x:
        s += v
    return s


def test_loop_after_try_block(rng):
    translated(loop_in_handler, data(rng, 100))


def float_total_of_int_squares(x):
    total = 0.0
    for v in x:
        total += v * v
    return total


def test_integer_elements_into_a_float_accumulator_do_not_wrap():
    x = np.full(8, 2**31 + 7, dtype=np.int64)  # each square fits int64, the total does not
    got = translated(float_total_of_int_squares, x)
    assert got > 2**63


def fb_alias_before_loop(x):
    out = np.zeros(len(x))
    kept = out
    for i in range(len(x)):
        out[i] = x[i] + 1
    return kept


def test_alias_of_a_written_array_falls_back(rng):
    falls_back(fb_alias_before_loop, data(rng, 9), match="`kept = out` refers to the array `out`")
