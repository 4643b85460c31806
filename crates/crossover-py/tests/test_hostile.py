"""Hostile but ordinary inputs (issue 19): no crash, hang or silent wrong
answer where NumPy raises a clear error; NumPy 2's values and exception
types. Every test here failed before the fix it covers."""

import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import crossover as xo

ROOT = Path(__file__).resolve().parents[3]


def run_python(code, env=None, timeout=60):
    """Runs `code` in a fresh interpreter with extra environment variables."""
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=e)


def numpy_outcome(f):
    """NumPy's result (or exception type) and the warnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = f()
        except Exception as e:  # noqa: BLE001 -- the type is the point
            r = type(e)
    return r, [str(x.message) for x in w]


# ---- sizes that overflow, arrays that cannot fit ---------------------------


@pytest.mark.parametrize("shape", [(2**32, 2**32), (2**62, 4), (2**63 - 1, 2)])
def test_shapes_whose_bytes_overflow_are_too_big(shape):
    # Was a segfault for (2**32, 2**32): the size wrapped to 0.
    with pytest.raises(ValueError, match="array is too big"):
        np.ones(shape)
    with pytest.raises(ValueError, match="array is too big"):
        xo.ones(shape)
    with pytest.raises(ValueError, match="array is too big"):
        xo.broadcast_to(xo.ones(1), shape)


def test_dimensions_beyond_the_address_space_are_value_errors():
    with pytest.raises(ValueError):
        np.ones(2**64)
    with pytest.raises(ValueError):
        xo.ones(2**64)


def test_arrays_that_cannot_fit_in_memory_are_memory_errors():
    with pytest.raises(MemoryError):
        np.ones((10**6, 10**6))
    with pytest.raises(MemoryError, match="7.28 TiB"):
        xo.ones((10**6, 10**6))
    # A lazy array is refused when read, before any work starts.
    big = xo.random.default_rng(0).random((10**6, 10**6))
    start = time.perf_counter()
    with pytest.raises(MemoryError):
        big.sum(axis=0).numpy()
    assert time.perf_counter() - start < 10
    assert issubclass(xo.OutOfMemoryError, (MemoryError, xo.CrossoverError))
    # A broadcast view allocates nothing, in NumPy as here.
    v = xo.broadcast_to(xo.ones(1), (10**13,))
    assert v.shape == np.broadcast_to(np.ones(1), (10**13,)).shape


@pytest.mark.parametrize("what", ["matmul", "fft2", "solve", "cumsum", "legacy rand"])
def test_library_ops_on_huge_shapes_are_memory_errors(what):
    # Lazy inputs record fine; the op is refused with MemoryError before it
    # allocates (never an abort), as NumPy refuses the inputs themselves.
    big = xo.random.default_rng(0).random((10**6, 10**6))
    start = time.perf_counter()
    with pytest.raises(MemoryError):
        if what == "matmul":
            (big @ big).numpy()
        elif what == "fft2":
            xo.fft.fft2(big).numpy()
        elif what == "solve":
            xo.linalg.solve(big, big[:, 0]).numpy()
        elif what == "cumsum":
            xo.cumsum(big, axis=0).numpy()
        else:
            xo.random.rand(10**6, 10**6).numpy()
    assert time.perf_counter() - start < 10


def test_sparse_random_too_big_is_a_memory_error_not_an_abort():
    # Was an abort (an allocation of 1.25e17 bytes) that killed the process.
    with pytest.raises(MemoryError):
        xo.sparse.random(10**9, 10**9, density=0.5)


def test_ctrl_c_stops_a_long_computation():
    # 1e13 additions: hours of work, which Ctrl-C did not stop.
    script = (
        "import time, crossover as xo\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    xo.broadcast_to(xo.ones(1), (10**13,)).sum().item()\n"
        "    print('finished', flush=True)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "print(float(xo.ones(10**6).sum()), flush=True)\n"
        # Long enough for the evaluation thread again: it serves the next
        # call after an interrupted one.
        "print(float(xo.broadcast_to(xo.ones(1), (2**26,)).sum()), flush=True)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         # A background job may inherit SIGINT ignored.
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # inside the computation
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 0, err
    assert out.split() == ["interrupted", "1000000.0", "67108864.0"], (out, err)


def test_long_evaluations_work_in_a_forked_child():
    # Long evaluations from the main thread run on one evaluation thread
    # kept for the process; a child forked after it started has the
    # thread's handle but not the thread, and must start its own.
    script = (
        "import multiprocessing as mp, numpy as np, crossover as xo\n"
        "x = xo.asarray(np.arange(2**24, dtype=np.float64) % 7)\n"
        "def long_sum():\n"
        "    # 5 pending ops of 2**24 points: past the hand-over threshold\n"
        "    return float(xo.where(x > 3, x * x, -x).sum())\n"
        "def child(q):\n"
        "    q.put(long_sum())\n"
        "if __name__ == '__main__':\n"
        "    print(long_sum(), flush=True)\n"
        "    ctx = mp.get_context('fork')\n"
        "    q = ctx.Queue()\n"
        "    p = ctx.Process(target=child, args=(q,))\n"
        "    p.start()\n"
        "    print(q.get(timeout=60), flush=True)\n"
        "    p.join(60)\n"
        "    print(p.exitcode, flush=True)\n"
    )
    r = run_python(script, timeout=120)
    assert r.returncode == 0, r.stderr
    x = np.arange(2**24, dtype=np.float64) % 7
    want = float(np.where(x > 3, x * x, -x).sum())
    assert r.stdout.split() == [repr(want), repr(want), "0"], (r.stdout, r.stderr)


@pytest.mark.parametrize("value,why", [
    ("10000", "more than 4x"), ("0", "not a positive integer"),
    ("abc", "not a positive integer"), ("-3", "not a positive integer"),
])
def test_crossover_num_threads_is_validated_and_capped(value, why):
    # 10000 threads never finished `import crossover`.
    r = run_python("import crossover as xo; print(xo.info()['threads'])",
                   {"CROSSOVER_NUM_THREADS": value}, timeout=60)
    assert r.returncode == 0, r.stderr
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert 1 <= int(r.stdout) <= 4 * cores
    assert "CROSSOVER_NUM_THREADS" in r.stderr and why in r.stderr


def test_crossover_simd_typo_warns():
    r = run_python("import crossover as xo; print(xo.info()['simd'])", {"CROSSOVER_SIMD": "sse9"})
    assert r.returncode == 0 and "CROSSOVER_SIMD" in r.stderr and "sse9" in r.stderr


def test_a_profile_that_is_not_one_is_refused_not_read_forever():
    # CROSSOVER_PROFILE=/dev/zero was read until memory ran out.
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    r = run_python("import crossover as xo; print(float(xo.ones(4).sum()))",
                   {"CROSSOVER_PROFILE": "/dev/zero"}, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "4.0"
    assert "not a profile" in r.stderr


# ---- NumPy 2's values ------------------------------------------------------


@pytest.mark.parametrize("m", [np.ones((3, 3)), np.diag([1.0, 0.0, 2.0]),
                               np.array([[1.0, 2.0], [2.0, 4.0]]), np.zeros((2, 2))])
def test_det_of_a_singular_matrix_is_zero(m):
    # Was nan.
    got = np.linalg.det(xo.asarray(m))
    assert float(got) == np.linalg.det(m) == 0.0


@pytest.mark.parametrize("dtype,big", [(np.int32, 2**40), (np.int32, -2**40),
                                       (np.int64, 2**63), (np.int64, -2**63 - 1),
                                       (np.bool_, 2**63)])
def test_python_ints_out_of_range_follow_nep50(dtype, big):
    a = np.array([1, 0], dtype=dtype)
    x = xo.asarray(a)
    # Arithmetic: OverflowError, as NumPy (was a wrap to [0, 0], or float64).
    for f in (lambda v: v * big, lambda v: v + big, lambda v: big - v, lambda v: np.add(v, big)):
        assert numpy_outcome(lambda: f(a))[0] is OverflowError
        with pytest.raises(OverflowError):
            f(x)
    # Comparisons: NumPy 2's exact answers.
    for f in (lambda v: v == big, lambda v: v != big, lambda v: v < big, lambda v: v <= big,
              lambda v: v > big, lambda v: v >= big, lambda v: big > v, lambda v: big <= v,
              lambda v: np.less(v, big)):
        want, _ = numpy_outcome(lambda: f(a))
        if isinstance(want, type):
            with pytest.raises(want):
                f(x)
        else:
            np.testing.assert_array_equal(np.asarray(f(x)), want)


def test_full_with_an_out_of_range_int_is_an_overflow_error():
    with pytest.raises(OverflowError):
        np.full(3, 2**40, dtype=np.int32)
    with pytest.raises(OverflowError):
        xo.full(3, 2**40, dtype=np.int32)


def test_integers_to_negative_integer_powers_are_value_errors():
    a = np.array([2, 3])
    # Was [0, 0].
    for f in (lambda v: v ** -1, lambda v: np.power(v, -2), lambda v: v ** np.array([1, -1])):
        assert numpy_outcome(lambda: f(a))[0] is ValueError
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            np.asarray(f(xo.asarray(a)))
    np.testing.assert_array_equal((xo.asarray(a) ** 3).numpy(), a ** 3)
    np.testing.assert_array_equal((xo.asarray(a.astype(float)) ** -1).numpy(), a ** -1.0)


@pytest.mark.parametrize("da,db", [(np.int64, np.int64), (np.int32, np.int32),
                                   (np.int32, np.int64), (np.bool_, np.bool_),
                                   (np.int32, np.float32), (np.int64, np.float64)])
def test_integer_matmul_keeps_numpys_dtype(da, db, rng):
    a = rng.integers(-50, 50, (7, 5)).astype(da)
    b = rng.integers(-50, 50, (5, 3)).astype(db)
    want = a @ b
    got = xo.asarray(a) @ xo.asarray(b)
    assert got.dtype == want.dtype  # int matmul was float64
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal((xo.asarray(a) @ b[:, 0]).numpy(), a @ b[:, 0])


def test_int32_matmul_wraps_like_numpy():
    a = np.full((2, 3), 2**20, dtype=np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = a @ a.T
    np.testing.assert_array_equal((xo.asarray(a) @ xo.asarray(a).T).numpy(), want)


def test_bool_math_numpy_does_in_float16_or_int8_runs_in_numpy():
    # The engine lacks float16 and int8: sqrt(bool) was float32, bool ** 2
    # float64. Now NumPy runs them (a fallback) and its dtype comes back.
    b = np.array([True, False])
    x = xo.asarray(b)
    xo.set_fallback("ignore")
    for f in (lambda v: v ** 2, lambda v: v ** v, np.sqrt, np.sin, np.square,
              lambda v: np.power(v, True)):
        want, got = f(b), np.asarray(f(x))
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
    for f in (lambda v: v ** 3, lambda v: v ** 0.5, lambda v: v + 1):  # int64, float64
        want, got = f(b), f(x).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_masked_arrays_keep_their_mask():
    m = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
    for got, want in [(xo.ones(3) + m, np.ones(3) + m), (m + xo.ones(3), m + np.ones(3)),
                      (xo.ones(3) * m, np.ones(3) * m)]:
        assert isinstance(got, np.ma.MaskedArray)  # the mask was silently dropped
        np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
        np.testing.assert_array_equal(got.filled(0), want.filled(0))
    with pytest.warns(xo.FallbackWarning, match="MaskedArray"):
        got = np.add(xo.ones(3), m)
    assert isinstance(got, np.ma.MaskedArray)
    np.testing.assert_array_equal(np.ma.getmaskarray(got), m.mask)


@pytest.mark.parametrize("src", [np.float32, np.float64])
@pytest.mark.parametrize("dst", [np.int32, np.int64])
def test_float_to_int_casts_give_numpys_values_and_warning(src, dst):
    a = np.array([np.nan, np.inf, -np.inf, 1e30, 3e9, -3e9, 2.7, -2.7], dtype=src)
    want, warned = numpy_outcome(lambda: a.astype(dst))
    assert warned == ["invalid value encountered in cast"]
    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
        got = xo.asarray(a).astype(dst).numpy()
    np.testing.assert_array_equal(got, want)  # nan gave 0, inf saturated
    ok = np.array([2.7, -2.7, 0.0, 1e9], dtype=src)
    np.testing.assert_array_equal(xo.asarray(ok).astype(dst).numpy(), ok.astype(dst))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e30])
def test_full_of_a_float_that_no_int_holds_matches_numpy(value):
    want, warned = numpy_outcome(lambda: np.full(3, value, dtype=np.int64))
    if want is ValueError:  # older NumPy 2 releases
        with pytest.raises(ValueError):
            xo.full(3, value, dtype=np.int64).numpy()
        return
    assert warned == ["invalid value encountered in cast"]
    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
        got = xo.full(3, value, dtype=np.int64).numpy()
    np.testing.assert_array_equal(got, want)  # was [0, 0, 0]


def test_bitwise_operators_in_expressions_need_bools():
    a, b = np.array([1.0, 0.0]), np.array([1.0, 1.0])
    with pytest.raises(TypeError):
        a & b  # NumPy
    for expr in ("a & b", "a | b", "~a"):
        with pytest.raises(TypeError):
            xo.evaluate(expr, a=a, b=b)  # was a bool array
    np.testing.assert_array_equal(xo.evaluate("(a > 0) & (b > 0)", a=a, b=b), (a > 0) & (b > 0))


# ---- NumPy's exception types and words ----------------------------------------


def test_out_of_range_axes_are_numpy_axis_errors():
    x = xo.ones((2, 3))
    for f in (lambda: x.sum(axis=5), lambda: x.mean(axis=-3), lambda: xo.expand_dims(x, 4),
              lambda: x.swapaxes(0, 7), lambda: xo.transpose(x, (0, -5)), lambda: x.argmax(axis=2)):
        with pytest.raises(np.exceptions.AxisError):
            f()
    assert issubclass(xo.AxisError, (xo.ShapeError, np.exceptions.AxisError, IndexError))


@pytest.mark.parametrize("f", [
    lambda m: m.ones(-1), lambda m: m.zeros((2, -1)), lambda m: m.full((-3,), 1.0),
    lambda m: m.linspace(0, 1, -1),
])
def test_negative_sizes_are_value_errors(f):
    with pytest.raises(ValueError):
        f(np)
    with pytest.raises(ValueError) as e:
        f(xo)
    assert not isinstance(e.value, OverflowError)  # was "can't convert negative int"


def test_negative_sizes_elsewhere_are_value_errors():
    for f in (lambda: xo.sparse.random(-1, 3), lambda: xo.sparse.random(3, -1),
              lambda: xo.random.default_rng(0).random(-1)):
        with pytest.raises(ValueError):
            f()


def test_singular_matrices_are_linalg_errors():
    for f in (lambda m: np.linalg.solve(m, np.ones(3)), np.linalg.inv):
        with pytest.raises(np.linalg.LinAlgError):
            f(np.ones((3, 3)))
        with pytest.raises(np.linalg.LinAlgError):
            np.asarray(f(xo.ones((3, 3))))


def test_a_forced_gpu_without_one_fails_in_user_words():
    r = run_python("import crossover as xo\n"
                   "try:\n"
                   "    print(float((xo.ones(3) * 2).sum()))\n"
                   "except xo.DeviceError as e:\n"
                   "    print('DeviceError:', e)\n", {"CROSSOVER_DEVICE": "gpu"})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    if "DeviceError" not in out:
        pytest.skip("this machine can run the work on a GPU")
    assert "policy" in out and "'auto' or 'cpu'" in out
    assert "fused(" not in out and "kernel" not in out  # no internal names


# ---- output a user reads -------------------------------------------------------


def test_explain_prints_each_kernel_once_with_integer_points(rng):
    a = xo.asarray(rng.random(1_000_000))
    y = (a * 2 + np.sin(a)).sum()
    text = str(xo.explain(y))
    assert text.count("kernel 0:") == 1, text  # was a plan block and a placement block
    assert "(1,000,000 points)" in text, text
    assert not re.search(r"fused ops :\s*\n", text), text
    assert "-0.0" not in text
    again = str(xo.explain(y))  # nothing left to run
    assert "nothing to run" in again and "-0.0" not in again, again
    c = str(xo.explain(xo.ones((4, 5)).sum(), run=False))
    assert not re.search(r"fused ops :\s*\n", c), c


def test_explain_flags_uncalibrated_predictions(tmp_path):
    r = run_python("import crossover as xo; print(xo.explain(xo.ones(10) * 2, run=False))",
                   {"CROSSOVER_PROFILE": str(tmp_path / "none.json")})
    assert r.returncode == 0, r.stderr
    assert "not calibrated" in r.stdout and "crossover calibrate" in r.stdout


def test_fallback_warnings_name_the_real_cause():
    x = xo.asarray(np.arange(5.0))
    with pytest.warns(xo.FallbackWarning, match=r"initial=0") as w:
        assert float(np.max(x, initial=7.0 - 7.0)) == 4.0
    assert "is not in the engine" not in str(w[0].message)  # numpy.max is in the engine
    with pytest.warns(xo.FallbackWarning, match=r"where="):
        np.add(x, 1, where=np.array([True, False, True, False, True]), out=None)


def test_readme_dask_example_does_not_oversubscribe():
    text = (ROOT / "README.md").read_text()
    block = text[text.index("## Dask"):text.index("## Environment")]
    assert "LocalCluster(" in block and "CROSSOVER_NUM_THREADS" in block


def test_python_docs_do_not_call_engine_functions_fallbacks():
    from crossover import _numpy
    text = (ROOT / "docs" / "python.md").read_text()
    # The functions the docs say fall back: the list after the lead-in.
    para = text[text.index("Every other NumPy function called on crossover arrays ("):]
    para = para[:para.index(")")]
    names = re.findall(r"`(np\.[a-z_.]+)", para)
    in_engine = []
    for n in names:
        obj = np
        for part in n.split(".")[1:]:
            obj = getattr(obj, part.rstrip("*"), None) if part != "*" else None
        if obj is not None and obj in _numpy._IMPL:
            in_engine.append(n)
    assert not in_engine, f"docs/python.md calls engine functions fallbacks: {in_engine}"
    for gone in ("`@`", "np.linalg.*", "np.fft.*", "complex arithmetic"):
        assert gone not in para, gone
