"""int8, int16, uint8, uint16, uint32 and uint64 against NumPy 2: every
operator and function per dtype pair (values, dtype), the promotion table,
NEP 50's weak Python ints, casts, reductions, and the conversions to and
from NumPy."""

import itertools

import numpy as np
import pytest

import crossover as xo

SMALL = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
ALL = ["bool"] + INTS + ["float32", "float64", "complex64", "complex128"]
SIZES = [1, 2047, 2049, 5000]


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    """Floor division, remainder, bitwise ops and shifts of integers run in
    NumPy (a fallback, which warns once by default)."""
    xo.set_fallback("ignore")
    yield


def data(dtype, n, seed, nonzero=True):
    """Values over the dtype's whole range (never zero when asked)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    v = rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    if nonzero:
        v[v == 0] = 1
    # The extremes, where wrapping shows.
    v[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
    return v


def same(got, want, what):
    got_np = np.asarray(got)
    assert got_np.dtype == np.asarray(want).dtype, f"{what}: {got_np.dtype} != {np.asarray(want).dtype}"
    np.testing.assert_array_equal(got_np, want, err_msg=what)


BINARY = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "floor_divide": lambda a, b: a // b,
    "remainder": lambda a, b: a % b,
    "maximum": lambda a, b, m=None: (m or np).maximum(a, b),
    "less": lambda a, b: a < b,
    "greater_equal": lambda a, b: a >= b,
    "equal": lambda a, b: a == b,
    "bitwise_and": lambda a, b: a & b,
    "bitwise_or": lambda a, b: a | b,
    "bitwise_xor": lambda a, b: a ^ b,
}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dtype", SMALL)
def test_binary_ops_match_numpy_for_every_size(op, dtype):
    f = BINARY[op]
    for n in SIZES:
        a, b = data(dtype, n, 1), data(dtype, n, 2)
        with np.errstate(all="ignore"):
            want = f(a, b)
            got = f(xo.asarray(a), xo.asarray(b))
        same(got, want, f"{op} {dtype} n={n}")


@pytest.mark.parametrize("dtype", SMALL)
def test_division_by_zero_gives_numpy_values(dtype):
    a = data(dtype, 64, 3)
    b = np.zeros(64, dtype)
    b[::2] = data(dtype, 32, 4)
    with np.errstate(all="ignore"):
        for f in (lambda x, y: x // y, lambda x, y: x % y, lambda x, y: x / y):
            same(f(xo.asarray(a), xo.asarray(b)), f(a, b), f"division by zero {dtype}")


@pytest.mark.parametrize("dtype", SMALL)
def test_shifts_match_numpy(dtype):
    bits = np.dtype(dtype).itemsize * 8
    a = data(dtype, 2049, 5)
    s = (np.arange(2049) % bits).astype(dtype)
    same(xo.asarray(a) << xo.asarray(s), a << s, f"left_shift {dtype}")
    same(xo.asarray(a) >> xo.asarray(s), a >> s, f"right_shift {dtype}")
    same(~xo.asarray(a), ~a, f"invert {dtype}")


@pytest.mark.parametrize("dtype", SMALL)
def test_unary_ops_and_fused_chains_wrap_like_numpy(dtype):
    a, b, c = data(dtype, 5000, 6), data(dtype, 5000, 7), data(dtype, 5000, 8)
    xa, xb, xc = xo.asarray(a), xo.asarray(b), xo.asarray(c)
    with np.errstate(all="ignore"):
        same(-xa, -a, f"negative {dtype}")
        same(abs(xa), abs(a), f"abs {dtype}")
        same(xo.square(xa), np.square(a), f"square {dtype}")
        same(xa ** 3, a ** 3, f"power {dtype}")
        # Each result wraps before the next op reads it.
        same((xa + xb) // xc, (a + b) // c, f"(a+b)//c {dtype}")
        same((xa * xb) > xc, (a * b) > c, f"(a*b)>c {dtype}")
        same(xo.where(xa < xb, xa * xb, xc - xa), np.where(a < b, a * b, c - a), f"where {dtype}")
        same((xa * xb).astype("float64"), (a * b).astype("float64"), f"cast of a*b {dtype}")
        same(xo.floor(xa), np.floor(a), f"floor {dtype}")


@pytest.mark.parametrize("dtype", SMALL)
def test_weak_python_ints_keep_the_dtype_or_overflow(dtype):
    a = data(dtype, 100, 9)
    info = np.iinfo(dtype)
    with np.errstate(all="ignore"):
        same(xo.asarray(a) + 1, a + 1, f"{dtype} + 1")
        same(3 * xo.asarray(a), 3 * a, f"3 * {dtype}")
        same(xo.asarray(a) - int(info.max), a - int(info.max), f"{dtype} - max")
    for v in (int(info.max) + 1, int(info.min) - 1):
        with pytest.raises(OverflowError):
            np.asarray(a) + v
        with pytest.raises(OverflowError, match=dtype):
            xo.asarray(a) + v


def test_the_overflow_examples_of_numpy_2():
    u = xo.asarray(np.array([1, 2], np.uint8))
    with pytest.raises(OverflowError, match="300"):
        u + 300
    with pytest.raises(OverflowError, match="-1"):
        u + (-1)
    # Comparisons are answered exactly, as NumPy 2 does.
    same(u < 300, np.array([1, 2], np.uint8) < 300, "uint8 < 300")
    big = np.array([0, 1, 2**63, 2**64 - 1], np.uint64)
    xb = xo.asarray(big)
    for v in (-1, -(2**63), 2**63, 2**64 - 1, 5):
        for f in (lambda a, b: a < b, lambda a, b: a >= b, lambda a, b: a == b,
                  lambda a, b: a != b, lambda a, b: b > a, lambda a, b: b <= a):
            same(f(xb, v), f(big, v), f"uint64 compared with {v}")
    same(xb + (2**63), big + (2**63), "uint64 + 2**63")
    same((2**64 - 1) - xb, (2**64 - 1) - big, "2**64-1 - uint64")
    with pytest.raises(OverflowError):
        xb + 2**64


@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)))
def test_promotion_table_matches_numpy(a, b):
    assert xo.result_type(xo.asarray(np.ones(2, a)), b) == np.result_type(a, b)
    if "complex" in a + b:
        return
    x = xo.asarray(np.ones(3, a))
    y = xo.asarray(np.full(3, 2, b))
    got = x + y if "bool" not in (a, b) else x * y
    want = np.ones(3, a) + np.full(3, 2, b) if "bool" not in (a, b) else np.ones(3, a) * np.full(3, 2, b)
    same(got, want, f"{a} op {b}")


@pytest.mark.parametrize("dtype", SMALL)
def test_float_functions_raise_for_float16_or_give_numpy_dtypes(dtype):
    a = data(dtype, 50, 10, nonzero=True)
    a = np.abs(a.astype(np.int64)).astype(dtype) if dtype.startswith("int") else a
    x = xo.asarray(a)
    if dtype in ("int8", "uint8"):
        for f in (xo.sin, xo.sqrt, xo.exp, xo.log):
            with pytest.raises(TypeError, match="float16"):
                f(x)
        with pytest.raises(TypeError, match="float16"):
            xo.arctan2(x, x)
        return
    with np.errstate(all="ignore"):
        for name in ("sin", "sqrt", "exp", "log1p", "tanh"):
            got = np.asarray(getattr(xo, name)(x))
            want = getattr(np, name)(a)
            assert got.dtype == want.dtype, name
            np.testing.assert_allclose(got, want, rtol=4e-6 if want.dtype == np.float32 else 1e-13)
        same(x / x, a / a, f"true_divide {dtype}")


@pytest.mark.parametrize("src", INTS + ["bool", "float32", "float64"])
@pytest.mark.parametrize("dst", SMALL)
def test_casts_between_every_pair_match_numpy(src, dst):
    if src in INTS:
        a = data(src, 2049, 11)
    elif src == "bool":
        a = data("int8", 2049, 11) > 0
    else:
        # In range of the target (out of range is undefined in C).
        info = np.iinfo(dst)
        lo, hi = max(float(info.min), -2.0**31), min(float(info.max), 2.0**31)
        a = np.random.default_rng(12).uniform(lo, hi, 2049).astype(src)
        a = a[(a >= info.min) & (a < float(info.max))]
    same(xo.asarray(a).astype(dst), a.astype(dst), f"{src} -> {dst}")
    same(xo.asarray(a.astype(dst) if src not in INTS else data(dst, 50, 3)).astype(src),
         (a.astype(dst) if src not in INTS else data(dst, 50, 3)).astype(src), f"{dst} -> {src}")


@pytest.mark.parametrize("dtype", SMALL)
def test_reductions_and_scans_match_numpy(dtype):
    a = data(dtype, 5000 * 3, 13).reshape(5000, 3)
    x = xo.asarray(a)
    with np.errstate(all="ignore"):
        for name in ("sum", "prod", "max", "min"):
            for axis in (None, 0, 1):
                same(getattr(x, name)(axis=axis), getattr(a, name)(axis=axis), f"{name} {dtype} {axis}")
        np.testing.assert_allclose(np.asarray(x.mean()), a.mean(), rtol=1e-12)
        assert np.asarray(x.mean()).dtype == np.float64
        same(x.argmax(axis=0), a.argmax(axis=0), f"argmax {dtype}")
        same(xo.cumsum(x, axis=0), np.cumsum(a, axis=0), f"cumsum {dtype}")
        same(xo.cumprod(x[:20], axis=1), np.cumprod(a[:20], axis=1), f"cumprod {dtype}")


@pytest.mark.parametrize("dtype", SMALL)
def test_matmul_keeps_the_dtype(dtype):
    a, b = data(dtype, 6 * 40, 14).reshape(6, 40), data(dtype, 40 * 5, 15).reshape(40, 5)
    with np.errstate(all="ignore"):
        same(xo.asarray(a) @ xo.asarray(b), a @ b, f"matmul {dtype}")


@pytest.mark.parametrize("dtype", SMALL)
def test_conversions_namespace_and_views(dtype):
    a = data(dtype, 24, 16).reshape(4, 6)
    x = xo.asarray(a)
    assert x.dtype == np.dtype(dtype)
    assert getattr(xo, dtype) == np.dtype(dtype).type
    assert xo.iinfo(getattr(xo, dtype)).max == np.iinfo(dtype).max
    assert xo.iinfo(x).min == np.iinfo(dtype).min
    assert dtype in xo.__array_namespace_info__().dtypes()
    assert dtype in xo.__array_namespace_info__().dtypes(kind="integral")
    same(x.T[1:3, ::2], a.T[1:3, ::2], f"view {dtype}")
    same(np.asarray(x[::-1] + x[::-1]), a[::-1] + a[::-1], f"reversed {dtype}")
    same(xo.asarray(a.T.copy()).T, a, f"round trip {dtype}")
    same(xo.zeros(3, dtype=dtype), np.zeros(3, dtype), f"zeros {dtype}")
    same(xo.full(3, 7, dtype=dtype), np.full(3, 7, dtype), f"full {dtype}")
    same(xo.arange(10, dtype=dtype), np.arange(10, dtype=dtype), f"arange {dtype}")
    same(xo.astype(xo.asarray(np.arange(5.0)), dtype), np.arange(5.0).astype(dtype), "astype")
    same(xo.from_dlpack(a), a, f"from_dlpack {dtype}")
    assert np.from_dlpack(x).dtype == np.dtype(dtype)
