"""crossover as an Array API namespace (standard 2024.12), checked against
``array_api_strict``: the standard's names and signatures, the namespace
info, array attributes, DLPack, the dtype rule, type promotion, and
Hypothesis property tests of values, dtypes and shapes."""

import inspect
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import crossover as xo
from crossover import _array_api

xs = pytest.importorskip("array_api_strict")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

xs.set_array_api_strict_flags(api_version="2024.12")

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]
#: Every dtype of the standard, in the order ``dtypes()`` lists them.
ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float32", "float64", "complex64", "complex128"]
REAL = ["int32", "int64", "float32", "float64"]
FLOATS = ["float32", "float64"]
SETTINGS = settings(max_examples=6, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
P = inspect.Parameter


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    # Many standard functions run in NumPy (a FallbackWarning each); the
    # warnings are tested in test_fallback.
    xo.set_fallback("ignore")


# ---- names and signatures ---------------------------------------------------------


def _standard_functions():
    """(module, name, strict's function) for each function of 2024.12 (the
    names the flag hides, ``isin`` and ``broadcast_shapes``, are 2025.12)."""
    out = []
    for mod, names in (("", xs.__all__), ("linalg", xs.linalg.__all__), ("fft", xs.fft.__all__)):
        ns = getattr(xs, mod) if mod else xs
        for n in names:
            if n in ("isin", "broadcast_shapes") or "strict" in n.lower() or n == "Device":
                continue
            f = getattr(ns, n)
            if inspect.isfunction(f):
                out.append((mod, n, f))
    return out


STANDARD = _standard_functions()


def compatible(sig, stub):
    """The standard's rule (as its public suite applies it): its positional
    parameters in order, by name unless positional-only; its keyword-only
    parameters present by name, keyword-only or positional-or-keyword;
    further parameters (NumPy's) allowed. Returns the first mismatch."""
    params, stub_params = list(sig.parameters.values()), list(stub.parameters.values())
    positional = [p for p in stub_params if p.kind != P.KEYWORD_ONLY]
    for i, sp in enumerate(positional):
        if i >= len(params):
            return f"{sp.name} missing"
        p = params[i]
        if sp.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
            if p.kind != sp.kind:
                return f"*{sp.name}: {p.kind}"
            continue
        if sp.kind == P.POSITIONAL_OR_KEYWORD and (p.name != sp.name or p.kind != sp.kind):
            return f"{sp.name}: {p.name} {p.kind}"
        if sp.kind == P.POSITIONAL_ONLY and p.kind not in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
            return f"{sp.name}: {p.kind}"
    for sp in stub_params[len(positional):]:
        p = sig.parameters.get(sp.name)
        if p is None or p.kind not in (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD):
            return f"keyword {sp.name} missing"
    return None


@pytest.mark.parametrize("mod,name,ref", STANDARD, ids=[f"{m}.{n}".lstrip(".") for m, n, _ in STANDARD])
def test_signature_follows_the_standard(mod, name, ref):
    f = getattr(getattr(xo, mod) if mod else xo, name)
    assert callable(f)
    problem = compatible(inspect.signature(f), inspect.signature(ref))
    assert problem is None, f"{name}{inspect.signature(f)} against {inspect.signature(ref)}: {problem}"


def test_every_standard_name_and_constant_is_present():
    for group, names in _array_api.GROUPS.items():
        ns = getattr(xo, group) if group in _array_api.SUBMODULES else xo
        missing = [n for n in names if not hasattr(ns, n)]
        assert not missing, (group, missing)
    assert xo.__array_api_version__ == "2024.12"
    assert (xo.e, xo.pi, xo.newaxis) == (np.e, np.pi, None) and xo.inf == float("inf")
    # The table in _array_api is the standard's own list.
    ours = {n for g, names in _array_api.GROUPS.items() for n in names if g not in ("linalg", "fft")}
    theirs = {n for n in xs.__all__ if "strict" not in n.lower()} - {
        "isin", "broadcast_shapes", "Device", "linalg", "fft", "__version__", "__array_api_version__"}
    assert ours == theirs
    assert set(_array_api.GROUPS["linalg"]) == set(xs.linalg.__all__) - {"eig", "eigvals"}
    assert set(_array_api.GROUPS["fft"]) == set(xs.fft.__all__)


# ---- namespace info, array attributes, devices --------------------------------------


def test_namespace_info():
    info = xo.__array_namespace_info__()
    ref = xs.__array_namespace_info__()
    assert set(info.capabilities()) >= set(ref.capabilities()) - {"max rank"}
    assert info.default_device() == "cpu" and "cpu" in info.devices()
    assert ("gpu" in info.devices()) == ("gpu" in xo.info()["devices"])
    assert {k: str(v) for k, v in info.default_dtypes().items()} == {
        k: str(v).split(".")[-1] for k, v in ref.default_dtypes().items()}
    assert list(info.dtypes()) == ALL_DTYPES
    for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating",
                 "complex floating", "numeric", ("bool", "real floating")):
        expected = [n for n in ref.dtypes(kind=kind) if n in ALL_DTYPES]
        assert expected
        assert sorted(info.dtypes(kind=kind)) == sorted(expected), kind
    with pytest.raises(ValueError, match="device"):
        info.dtypes(device="tpu")


def test_array_attributes():
    x = xo.asarray(np.arange(1.0, 7.0).reshape(2, 3))
    assert x.__array_namespace__() is xo
    assert x.__array_namespace__(api_version="2023.12") is xo
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2099.01")
    assert x.mT.shape == (3, 2) and np.array_equal(np.asarray(x.mT), np.arange(1.0, 7.0).reshape(2, 3).T)
    assert x.device == "cpu" and x.to_device("cpu") is x
    with pytest.raises(ValueError, match="device"):
        x.to_device("tpu")
    assert complex(xo.asarray(2.5)) == 2.5 + 0j
    i = xo.asarray(np.array([1, 2, 3], dtype=np.int32))
    assert np.array_equal(np.asarray(i << 2), [4, 8, 12]) and (i << 2).dtype == np.int32
    assert np.array_equal(np.asarray(i >> 1), [0, 1, 1])
    assert np.array_equal(np.asarray(i ^ 6), [7, 4, 5])
    assert np.array_equal(np.asarray(6 ^ i), [7, 4, 5])


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "eye", "arange", "asarray",
                                  "linspace", "full", "fftfreq"])
def test_creation_takes_the_device_keyword(name):
    args = {"zeros": ((2,),), "ones": ((2,),), "empty": ((2,),), "eye": (2,), "arange": (2,),
            "asarray": ([1.5, 2.5],), "linspace": (0.0, 1.0, 3), "full": ((2,), 3.5),
            "fftfreq": (4,)}[name]
    f = xo.fft.fftfreq if name == "fftfreq" else getattr(xo, name)
    for d in xo.__array_namespace_info__().devices():
        r = f(*args, device=d)
        # asarray's device= moves the data there (documented); the others
        # are lazy and computed where their first use is placed.
        want = d if name == "asarray" else "cpu"
        assert isinstance(r, xo.ndarray) and r.device == want
    with pytest.raises(ValueError, match="device"):
        f(*args, device="tpu")
    like = xo.asarray(np.array([1.0, 2.0], dtype=np.float32))
    for g in (xo.zeros_like, xo.ones_like, xo.empty_like):
        r = g(like, device="cpu")
        assert r.dtype == np.float32 and r.shape == (2,)


# ---- the dtype rule: no silent casts ---------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16"])
def test_dtypes_the_engine_lacks_raise_type_error_naming_them(dtype):
    x = xo.asarray(np.array([1, 2, 3], dtype=np.int64))
    calls = [lambda: xo.zeros(3, dtype=dtype), lambda: xo.ones((2,), dtype=dtype),
             lambda: xo.full((2,), 1, dtype=dtype), lambda: xo.arange(3, dtype=dtype),
             lambda: xo.asarray([1, 2], dtype=dtype), lambda: xo.astype(x, dtype),
             lambda: xo.asarray(np.ones(2, dtype=dtype)), lambda: xo.empty(2, dtype=dtype),
             lambda: xo.eye(2, dtype=dtype), lambda: xo.zeros_like(x, dtype=dtype)]
    for call in calls:
        with pytest.raises(TypeError, match=dtype):
            call()


def test_a_fallback_that_would_make_a_missing_dtype_raises_instead_of_returning_numpy():
    x = xo.asarray(np.array([1.5, -2.0]))
    with pytest.raises(TypeError, match="float16"):
        xo.astype(x, "float16")
    # int8 is held since the small integer dtypes were added; float
    # functions of it are float16 in NumPy, a dtype crossover lacks.
    with pytest.raises(TypeError, match="float16"):
        xo.sin(xo.astype(x, "int8"))
    # A standard function that runs in NumPy and returns a supported dtype
    # is a crossover array.
    r = xo.unique_values(xo.asarray(np.array([3, 1, 3], dtype=np.int32)))
    assert isinstance(r, xo.ndarray) and r.dtype == np.int32


# ---- type promotion: the standard's table and NEP 50 -------------------------------------

BINARY_PROMOTION = ["add", "subtract", "multiply", "divide", "pow", "maximum", "minimum",
                    "equal", "less", "floor_divide", "remainder", "atan2", "logical_and",
                    "bitwise_and", "bitwise_left_shift", "hypot", "copysign", "logaddexp"]


def _strict_name(d):
    return str(d).split(".")[-1]


@pytest.mark.parametrize("op", BINARY_PROMOTION)
def test_promotion_table_matches_the_standard(op):
    checked = 0
    for a in DTYPES:
        for b in DTYPES:
            try:
                ref = getattr(xs, op)(xs.ones(2, dtype=getattr(xs, a)), xs.ones(2, dtype=getattr(xs, b)))
            except TypeError:
                continue  # not defined by the standard
            r = getattr(xo, op)(xo.ones(2, dtype=a), xo.ones(2, dtype=b))
            assert isinstance(r, xo.ndarray), (op, a, b)
            assert str(r.dtype) == _strict_name(ref.dtype), (op, a, b, r.dtype)
            assert str(xo.result_type(xo.ones(2, dtype=a), b)) == str(xs.result_type(
                getattr(xs, a), getattr(xs, b))) .split(".")[-1] or op in ("equal", "less")
            checked += 1
    assert checked >= 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_python_scalars_follow_nep50(dtype):
    for scalar in (True, 3, 2.5, 1.5j):
        for op in ("add", "multiply", "equal", "maximum"):
            if isinstance(scalar, complex) and op == "maximum":
                continue  # the standard defines maximum for real values only
            try:
                ref = getattr(xs, op)(xs.ones(2, dtype=getattr(xs, dtype)), scalar)
            except (TypeError, ValueError):
                continue
            r = getattr(xo, op)(xo.ones(2, dtype=dtype), scalar)
            assert str(r.dtype) == _strict_name(ref.dtype), (op, dtype, scalar)
            np.testing.assert_allclose(np.asarray(r), np.asarray(ref), rtol=1e-6)
    assert xo.result_type(xo.ones(2, dtype=dtype), 1) == np.dtype(dtype) or dtype == "bool"
    assert xo.can_cast(xo.ones(2, dtype="int32"), xo.int64)
    assert not xo.can_cast(xo.float64, xo.float32)


def test_int32_matmul_stays_int32():
    a = xo.asarray(np.array([[1, 2], [3, 4]], dtype=np.int32))
    r = a @ a
    assert r.dtype == np.int32 and np.array_equal(np.asarray(r), [[7, 10], [15, 22]])


# ---- DLPack on the host --------------------------------------------------------------------


def test_dlpack_both_ways_without_a_copy():
    x = xo.asarray(np.arange(1.0, 5.0))
    assert x.__dlpack_device__() == (1, 0)
    n = np.from_dlpack(x)
    assert np.shares_memory(n, x.numpy()) and np.array_equal(n, [1.0, 2.0, 3.0, 4.0])
    host = np.arange(1, 6, dtype=np.int32)
    y = xo.from_dlpack(host)
    assert isinstance(y, xo.ndarray) and y.dtype == np.int32
    assert np.shares_memory(y.numpy(), host)
    z = xo.from_dlpack(host, copy=True)
    assert not np.shares_memory(z.numpy(), host) and np.array_equal(np.asarray(z), host)
    u = xo.from_dlpack(np.ones(3, dtype=np.uint8))
    assert isinstance(u, xo.ndarray) and u.dtype == np.uint8
    with pytest.raises(TypeError, match="float16"):
        xo.from_dlpack(np.ones(3, dtype=np.float16))
    back = xo.from_dlpack(x)
    assert np.array_equal(np.asarray(back), np.asarray(x))
    # A legacy consumer (no max_version) cannot be told the memory is
    # read-only: it gets a capsule of a copy instead of NumPy's BufferError.
    legacy = x.__dlpack__()
    assert type(legacy).__name__ == "PyCapsule"
    assert x.__dlpack__(max_version=(1, 0)) is not None


# ---- properties against array_api_strict -------------------------------------------------

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def _elements(dtype, lo=-8, hi=8):
    if dtype == "bool":
        return st.booleans()
    if "int" in dtype:
        return st.integers(lo, hi)
    width = 32 if dtype in ("float32", "complex64") else 64
    real = st.floats(lo, hi, width=width)
    return st.complex_numbers(max_magnitude=hi, width=2 * width) if "complex" in dtype else real


@st.composite
def arrays(draw, dtypes, shape=SHAPES, lo=-8, hi=8):
    dtype = draw(st.sampled_from(dtypes))
    a = draw(hnp.arrays(np.dtype(dtype), draw(shape) if not isinstance(shape, tuple) else shape,
                        elements=_elements(dtype, lo, hi)))
    assume(a.size == 0 or np.any(a != 0))
    return a


def _pair(a):
    return xo.asarray(a), xs.asarray(a)


def _check(got, ref, dtype_name=None, tol=None):
    """Values (explicit tolerances), dtype and shape of a crossover result
    against array_api_strict's."""
    assert isinstance(got, xo.ndarray), type(got)
    ref_np = np.asarray(ref)
    assert tuple(got.shape) == tuple(ref.shape)
    assert str(got.dtype) == _strict_name(ref.dtype)
    g = np.asarray(got)
    if g.dtype.kind in "fc":
        rtol, atol = tol or ((2e-5, 1e-6) if g.dtype in (np.float32, np.complex64) else (1e-12, 1e-13))
        np.testing.assert_allclose(g, ref_np, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, ref_np)


UNARY = {  # name: dtypes
    "abs": REAL, "negative": REAL, "positive": REAL, "square": REAL, "sign": REAL,
    "sqrt": FLOATS, "exp": FLOATS, "expm1": FLOATS, "log": FLOATS, "log1p": FLOATS,
    "log2": FLOATS, "log10": FLOATS, "sin": FLOATS, "cos": FLOATS, "tan": FLOATS,
    "sinh": FLOATS, "cosh": FLOATS, "tanh": FLOATS, "asin": FLOATS, "acos": FLOATS,
    "atan": FLOATS, "asinh": FLOATS, "acosh": FLOATS, "atanh": FLOATS, "floor": REAL,
    "ceil": REAL, "trunc": REAL, "round": REAL, "isnan": REAL, "isinf": REAL,
    "isfinite": REAL, "signbit": FLOATS, "reciprocal": FLOATS, "logical_not": ["bool"],
    "bitwise_invert": ["bool", "int32", "int64"], "real": DTYPES[5:], "imag": DTYPES[5:],
    "conj": DTYPES[5:],
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_elementwise_unary(name):
    @SETTINGS
    @given(arrays(UNARY[name]))
    def run(a):
        x, r = _pair(a)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            _check(getattr(xo, name)(x), getattr(xs, name)(r))

    run()


BINARY = {
    "add": REAL, "subtract": REAL, "multiply": REAL, "divide": FLOATS, "pow": FLOATS,
    "maximum": REAL, "minimum": REAL, "equal": DTYPES, "not_equal": REAL, "less": REAL,
    "less_equal": REAL, "greater": REAL, "greater_equal": REAL, "atan2": FLOATS,
    "hypot": FLOATS, "copysign": FLOATS, "nextafter": FLOATS, "logaddexp": FLOATS,
    "floor_divide": FLOATS, "remainder": FLOATS, "logical_and": ["bool"],
    "logical_or": ["bool"], "logical_xor": ["bool"], "bitwise_and": ["int32", "int64"],
    "bitwise_or": ["int32", "int64"], "bitwise_xor": ["int32", "int64"],
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_elementwise_binary(name):
    @SETTINGS
    @given(st.data())
    def run(data):
        dtype = data.draw(st.sampled_from(BINARY[name]))
        shape = data.draw(SHAPES)
        a = data.draw(arrays([dtype], shape=shape))
        # The second operand broadcasts from a suffix of the first's shape.
        b = data.draw(arrays([dtype], shape=shape[data.draw(st.integers(0, len(shape))):]))
        (x1, r1), (x2, r2) = _pair(a), _pair(b)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            _check(getattr(xo, name)(x1, x2), getattr(xs, name)(r1, r2))

    run()


REDUCTIONS = {"sum": REAL, "prod": REAL, "max": REAL, "min": REAL, "mean": FLOATS,
              "std": FLOATS, "var": FLOATS, "all": ["bool"] + REAL, "any": ["bool"] + REAL,
              "argmax": REAL, "argmin": REAL, "count_nonzero": REAL,
              "cumulative_sum": REAL, "cumulative_prod": FLOATS}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    @SETTINGS
    @given(st.data())
    def run(data):
        nonempty = name in ("max", "min", "argmax", "argmin")
        a = data.draw(arrays(REDUCTIONS[name], shape=hnp.array_shapes(
            min_dims=0 if name[:3] != "cum" else 1, max_dims=3, min_side=int(nonempty), max_side=4),
            lo=-3, hi=3))
        kw = {}
        axes = [None] + list(range(-a.ndim, a.ndim))
        if name.startswith("cum"):
            axes = list(range(a.ndim)) if a.ndim > 1 else [None, 0]
            kw["include_initial"] = data.draw(st.booleans())
        elif name not in ("argmax", "argmin") or True:
            kw["keepdims"] = data.draw(st.booleans())
        kw["axis"] = data.draw(st.sampled_from(axes))
        if name in ("std", "var"):
            kw["correction"] = data.draw(st.sampled_from([0, 1]))
        if name in ("mean", "std", "var"):
            assume(a.size > kw.get("correction", 0))
        x, r = _pair(a)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            _check(getattr(xo, name)(x, **kw), getattr(xs, name)(r, **kw), tol=(1e-5, 1e-5)
                   if a.dtype == np.float32 else None)

    run()


MANIPULATION = {
    "flip": lambda ns, x: ns.flip(x),
    "roll": lambda ns, x: ns.roll(x, 2),
    "reshape": lambda ns, x: ns.reshape(x, (-1,)),
    "permute_dims": lambda ns, x: ns.permute_dims(x, tuple(reversed(range(x.ndim)))),
    "expand_dims": lambda ns, x: ns.expand_dims(x, axis=0),
    "squeeze": lambda ns, x: ns.squeeze(ns.expand_dims(x, axis=0), axis=0),
    "concat": lambda ns, x: ns.concat([x, x], axis=None),
    "stack": lambda ns, x: ns.stack([x, x], axis=0),
    "tile": lambda ns, x: ns.tile(x, (2,)),
    "repeat": lambda ns, x: ns.repeat(x, 2),
    "broadcast_to": lambda ns, x: ns.broadcast_to(x, (2,) + tuple(x.shape)),
    "moveaxis": lambda ns, x: ns.moveaxis(x, 0, -1) if x.ndim else ns.flip(x),
    "unstack": lambda ns, x: ns.unstack(x, axis=0)[0] if x.ndim and x.shape[0] else ns.flip(x),
    "matrix_transpose": lambda ns, x: ns.matrix_transpose(ns.reshape(x, (1, -1))),
    "astype": lambda ns, x: ns.astype(x, ns.float64),
    "sort": lambda ns, x: ns.sort(x, axis=-1, descending=True) if x.ndim else ns.flip(x),
    "argsort": lambda ns, x: ns.argsort(x, axis=-1, stable=True) if x.ndim else ns.flip(x),
    "unique_values": lambda ns, x: ns.unique_values(x),
    "take": lambda ns, x: ns.take(ns.reshape(x, (-1,)), ns.asarray([0, 0]), axis=0)
    if x.size else ns.flip(x),
    "where": lambda ns, x: ns.where(x > 0, x, ns.zeros_like(x)) if x.dtype != ns.bool else x,
    "diff": lambda ns, x: ns.diff(x, axis=-1) if x.ndim else ns.flip(x),
    "zeros_like": lambda ns, x: ns.zeros_like(x),
    "full_like": lambda ns, x: ns.full_like(x, 1),
}


@pytest.mark.parametrize("name", sorted(MANIPULATION))
def test_manipulation(name):
    @SETTINGS
    @given(arrays(["bool"] + REAL if name not in ("sort", "argsort", "diff") else REAL))
    def run(a):
        x, r = _pair(a)
        _check(MANIPULATION[name](xo, x), MANIPULATION[name](xs, r))

    run()


CREATION = {
    "zeros": lambda ns, n, d: ns.zeros((n, 2), dtype=d),
    "ones": lambda ns, n, d: ns.ones((n,), dtype=d),
    "full": lambda ns, n, d: ns.full((n,), 3, dtype=d),
    "arange": lambda ns, n, d: ns.arange(1, n + 1, 2, dtype=d),
    "linspace": lambda ns, n, d: ns.linspace(-1.5, 2.5, n, dtype=d if d in (ns.float32, ns.float64) else None),
    "eye": lambda ns, n, d: ns.eye(n, n + 1, k=1, dtype=d),
    "tril": lambda ns, n, d: ns.tril(ns.ones((n, n), dtype=d), k=-1),
    "asarray": lambda ns, n, d: ns.asarray([[1, 2]] * n, dtype=d),
    "meshgrid": lambda ns, n, d: ns.meshgrid(ns.arange(n, dtype=d), ns.arange(3, dtype=d))[1],
    "fftfreq": lambda ns, n, d: ns.fft.fftfreq(n + 1, d=0.5),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation(name):
    @SETTINGS
    @given(st.integers(0, 5), st.sampled_from(REAL))
    def run(n, dtype):
        _check(CREATION[name](xo, n, getattr(xo, dtype)), CREATION[name](xs, n, getattr(xs, dtype)))

    run()


def test_meshgrid_returns_a_list_in_both_indexings():
    x, y = xo.arange(3, dtype=xo.float32), xo.arange(4, dtype=xo.float32)
    for indexing in ("xy", "ij"):
        got, want = xo.meshgrid(x, y, indexing=indexing), xs.meshgrid(
            xs.arange(3, dtype=xs.float32), xs.arange(4, dtype=xs.float32), indexing=indexing)
        assert type(got) is list and len(got) == 2
        for g, w in zip(got, want):
            _check(g, w)


def test_full_scalar_kinds_and_complex_fill():
    for v in (True, 2, 2.5, 1.5 - 2j):
        _check(xo.full((), v), xs.full((), v))
        _check(xo.full((2, 0), v), xs.full((2, 0), v))


def test_linalg_and_fft_follow_the_standard():
    rng = np.random.default_rng(5)
    m = rng.normal(size=(4, 4))
    spd = m @ m.T + 4 * np.eye(4)
    x, r = _pair(spd)
    _check(xo.linalg.cholesky(x, upper=True), xs.linalg.cholesky(r, upper=True))
    _check(xo.linalg.cholesky(x), xs.linalg.cholesky(r))
    v = rng.normal(size=(3, 4))
    (a, ra), (b, rb) = _pair(v), _pair(v[::-1].copy())
    _check(xo.linalg.vecdot(a, b), xs.linalg.vecdot(ra, rb))
    _check(xo.linalg.outer(a[0], b[1]), xs.linalg.outer(ra[0, ...], rb[1, ...]))
    _check(xo.vecdot(a, b, axis=-2), xs.vecdot(ra, rb, axis=-2))
    _check(xo.linalg.matrix_norm(x), xs.linalg.matrix_norm(r))
    _check(xo.linalg.vector_norm(a, axis=1), xs.linalg.vector_norm(ra, axis=1))
    _check(xo.fft.rfftn(a), xs.fft.rfftn(ra))
    _check(xo.fft.fftfreq(6, d=0.1, dtype=xo.float32), xs.fft.fftfreq(6, d=0.1, dtype=xs.float32))
    _check(xo.fft.rfftfreq(7), xs.fft.rfftfreq(7))
    _check(xo.linalg.det(x), xs.linalg.det(r))


def test_linalg_results_are_named_tuples_as_the_standard_says():
    rng = np.random.default_rng(6)
    m = rng.normal(size=(5, 5))
    x, r = _pair(m)
    s, rs = _pair(m + m.T)
    svd, qr, eigh = xo.linalg.svd(x, full_matrices=False), xo.linalg.qr(x), xo.linalg.eigh(s)
    ref_svd, ref_qr, ref_eigh = (xs.linalg.svd(r, full_matrices=False), xs.linalg.qr(r),
                                 xs.linalg.eigh(rs))
    assert svd._fields == ref_svd._fields == ("U", "S", "Vh")
    assert qr._fields == ref_qr._fields == ("Q", "R")
    assert eigh._fields == ref_eigh._fields == ("eigenvalues", "eigenvectors")
    # Vectors are unique up to sign: check values and reconstructions.
    _check(svd.S, ref_svd.S)
    _check(eigh.eigenvalues, ref_eigh.eigenvalues)
    np.testing.assert_allclose(np.asarray(svd.U * svd.S @ svd.Vh), m, atol=1e-12)
    np.testing.assert_allclose(np.asarray(qr.Q @ qr.R), m, atol=1e-12)


@pytest.mark.parametrize("correction", [0.5, 1.0, 1, 1.75])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_std_and_var_take_a_fractional_correction(correction, axis):
    a = np.random.default_rng(7).normal(size=(3, 4, 2))
    x, r = _pair(a)
    for name in ("std", "var"):
        _check(getattr(xo, name)(x, axis=axis, correction=correction),
               getattr(xs, name)(r, axis=axis, correction=correction))


# ---- SciPy and scikit-learn dispatch --------------------------------------------------------

DISPATCH_EXAMPLE = """
import numpy as np, scipy.stats, crossover as xo
xo.set_fallback("ignore")
X = np.random.default_rng(0).normal(size=(50, 4)) + 3.0
s = scipy.stats.skew(xo.asarray(X), axis=0)
assert isinstance(s, xo.ndarray), type(s)
np.testing.assert_allclose(np.asarray(s), scipy.stats.skew(X, axis=0), rtol=1e-12)
# zscore assigns into arrays (item assignment).
z = scipy.stats.zscore(xo.asarray(X), axis=0)
assert isinstance(z, xo.ndarray), type(z)
np.testing.assert_allclose(np.asarray(z), scipy.stats.zscore(X, axis=0), rtol=1e-10, atol=1e-12)
try:
    import sklearn
    from sklearn.metrics.pairwise import linear_kernel
except ImportError:
    print("no sklearn"); raise SystemExit(0)
sklearn.set_config(array_api_dispatch=True)
k = linear_kernel(xo.asarray(X))
assert isinstance(k, xo.ndarray), type(k)
np.testing.assert_allclose(np.asarray(k), X @ X.T, rtol=1e-12)
from sklearn.preprocessing import MinMaxScaler, StandardScaler
for scaler in (StandardScaler, MinMaxScaler):
    t = scaler().fit_transform(xo.asarray(X))
    assert isinstance(t, xo.ndarray), type(t)
    np.testing.assert_allclose(np.asarray(t), scaler().fit_transform(X), rtol=1e-10, atol=1e-12)
print("ok")
"""


def test_scipy_and_sklearn_array_api_dispatch_run_on_crossover():
    # SCIPY_ARRAY_API is read when SciPy is imported, so a fresh process.
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    p = subprocess.run([sys.executable, "-c", DISPATCH_EXAMPLE], env=env, capture_output=True,
                       text=True, timeout=50)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() in ("ok", "no sklearn")
