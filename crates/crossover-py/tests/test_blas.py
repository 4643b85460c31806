"""Large real matrix products through the OpenBLAS NumPy has loaded
(crates/crossover/src/linalg/blas.rs): found, correct in every layout and
dtype against a float64 reference, and switched off by CROSSOVER_BLAS."""

import os
import subprocess
import sys

import numpy as np
import pytest

import crossover as xo
from conftest import nonzero


def _blas():
    found = xo.info()["blas"]
    if found is None:
        if os.environ.get("CROSSOVER_REQUIRE_BLAS"):
            pytest.fail("CROSSOVER_REQUIRE_BLAS is set but crossover found no OpenBLAS")
        pytest.skip("no OpenBLAS in this process (NumPy built without one)")
    return found


def test_numpys_openblas_is_found():
    assert "OpenBLAS" in _blas()


def test_info_gives_the_thresholds():
    from_ = xo.info()["blas_min_mnk"]
    assert set(from_) == {"float32", "float64"}
    # Built-in defaults (no calibrated profile): 768^3 without AVX-512,
    # 1536^3 with it; a calibrated profile's value is positive.
    assert all(v > 0 for v in from_.values())


# Above the default thresholds (1536^3 multiply-adds with AVX-512), odd
# sizes that cross the kernels' 16 x 4 and panel edges.
M, K, N = 1601, 1501, 1553
# Where one is set, OpenBLAS's thread count may differ from crossover's,
# which then runs faer.
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "CROSSOVER_NUM_THREADS")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["plain", "a.T", "b.T", "sliced", "strided", "batched"])
def test_large_products_match_float64(rng, dtype, layout):
    _blas()
    m, k, n = M, K, N
    a = nonzero(rng, (m, k), dtype)
    b = nonzero(rng, (k, n), dtype)
    if layout == "a.T":
        a = np.asfortranarray(a)
    elif layout == "b.T":
        b = np.asfortranarray(b)
    elif layout == "sliced":  # rows padded: a leading dimension > columns
        a = nonzero(rng, (m, k + 9), dtype)[:, 3 : 3 + k]
    elif layout == "strided":  # every other column: faer reads it instead
        b = nonzero(rng, (k, 2 * n), dtype)[:, ::2]
    elif layout == "batched":
        a = nonzero(rng, (2, m, k), dtype)
    xa = xo.asarray(a)
    xb = xo.asarray(b)
    if layout == "a.T":
        xa = xo.asarray(np.ascontiguousarray(a.T)).T
    if layout == "b.T":
        xb = xo.asarray(np.ascontiguousarray(b.T)).T
    got = np.asarray(xa @ xb)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert got.dtype == dtype and got.shape == want.shape
    # Rounding bound: (k + 2) u sum_p |a_ip b_pj|.
    u = np.finfo(dtype).eps / 2
    bound = (k + 2) * u * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert np.all(np.abs(got - want) <= bound)
    threads_set = any(os.environ.get(v) for v in THREAD_VARS)
    if layout == "plain" and not threads_set and m * n * k >= xo.info()["blas_min_mnk"][
        np.dtype(dtype).name
    ]:
        # The same OpenBLAS call as NumPy's, on as many threads: its bits.
        assert np.array_equal(got, a @ b)


def _info_blas_with(value):
    env = dict(os.environ, CROSSOVER_BLAS=value)
    p = subprocess.run(
        [sys.executable, "-c", "import crossover as xo; print(repr(xo.info()['blas']))"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.strip(), p.stderr


def test_crossover_blas_none_turns_it_off():
    _blas()
    out, _ = _info_blas_with("none")
    assert out == "None"


def test_a_bad_crossover_blas_path_warns_and_uses_faer():
    out, err = _info_blas_with("/nonexistent/libopenblas.so")
    assert out == "None"
    assert "CROSSOVER_BLAS" in err and "using faer" in err
