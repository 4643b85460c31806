"""Large real matrix products through the OpenBLAS NumPy has loaded
(crates/crossover/src/linalg/blas.rs): found, correct in every layout and
dtype against a float64 reference whichever library runs them, chosen by
CROSSOVER_BLAS_MIN_MNK, and switched off by CROSSOVER_BLAS."""

import os
import subprocess
import sys

import numpy as np
import pytest

import crossover as xo


def _blas():
    found = xo.info()["blas"]
    if found is None:
        if os.environ.get("CROSSOVER_REQUIRE_BLAS"):
            pytest.fail("CROSSOVER_REQUIRE_BLAS is set but crossover found no OpenBLAS")
        pytest.skip("no OpenBLAS in this process (NumPy built without one)")
    return found


def _run(code, **env):
    """Runs `code` in a fresh interpreter (the BLAS and its thresholds are
    settled once per process) with `env` added; its stdout."""
    full = dict(os.environ, **env)
    # A thread count of OpenBLAS's own differing from crossover's keeps
    # the BLAS out; the tests mean it to run.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "CROSSOVER_NUM_THREADS"):
        full.pop(var, None)
    p = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip(), p.stderr


def test_numpys_openblas_is_found():
    assert "OpenBLAS" in _blas()


def test_info_gives_the_thresholds():
    from_ = xo.info()["blas_min_mnk"]
    assert set(from_) == {"float32", "float64"}
    # Built-in defaults: 768^3 without AVX-512, never (float max) with it;
    # a calibrated profile's value is positive.
    assert all(v > 0 for v in from_.values())


# Every layout the BLAS interface takes (plain, either operand transposed,
# padded rows), one it cannot read (faer runs it), and a batch; odd sizes
# that cross OpenBLAS's 16 x 4 kernels and its panels. Each product is
# checked against float64 within (k + 2) u sum_p |a_ip b_pj|; where the BLAS
# runs, the plain product must be NumPy's own bits (the same call).
PRODUCTS = r"""
import sys
import numpy as np
import crossover as xo

rng = np.random.default_rng(20240607)
m, k, n = 301, 263, 277

def nonzero(shape, dtype):
    x = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return x.astype(dtype)

blas_runs = sys.argv[1] == "blas"
checked = 0
for dtype in (np.float32, np.float64):
    for layout in ("plain", "a.T", "b.T", "sliced", "strided", "batched"):
        a, b = nonzero((m, k), dtype), nonzero((k, n), dtype)
        xa, xb = xo.asarray(a), xo.asarray(b)
        if layout == "a.T":
            xa = xo.asarray(np.ascontiguousarray(a.T)).T
        elif layout == "b.T":
            xb = xo.asarray(np.ascontiguousarray(b.T)).T
        elif layout == "sliced":  # a leading dimension > columns
            a = nonzero((m, k + 9), dtype)[:, 3:3 + k]
            xa = xo.asarray(a)
        elif layout == "strided":  # every other column
            b = nonzero((k, 2 * n), dtype)[:, ::2]
            xb = xo.asarray(b)
        elif layout == "batched":
            a = nonzero((3, m, k), dtype)
            xa = xo.asarray(a)
        got = np.asarray(xa @ xb)
        want = a.astype(np.float64) @ b.astype(np.float64)
        assert got.dtype == dtype and got.shape == want.shape, (dtype, layout)
        u = np.finfo(dtype).eps / 2
        bound = (k + 2) * u * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
        worst = float(np.max(np.abs(got - want) / bound))
        assert worst <= 1.0, (np.dtype(dtype).name, layout, worst)
        if layout == "plain" and blas_runs:
            assert np.array_equal(got, a @ b), (np.dtype(dtype).name, "not NumPy's bits")
        checked += 1
print(checked, xo.info()["blas_min_mnk"]["float32"])
"""


def test_products_through_the_blas_match_float64_and_numpys_bits():
    _blas()
    out, _ = _run(PRODUCTS.replace("sys.argv[1]", '"blas"'), CROSSOVER_BLAS_MIN_MNK="1")
    checked, threshold = out.split()
    assert int(checked) == 12 and float(threshold) == 1.0


def test_products_through_faer_match_float64():
    out, _ = _run(PRODUCTS.replace("sys.argv[1]", '"faer"'), CROSSOVER_BLAS="none")
    assert out.split()[0] == "12"


def _info_blas_with(**env):
    out, err = _run("import crossover as xo; i = xo.info(); print(repr(i['blas']), i['blas_min_mnk'])",
                    **env)
    return out, err


def test_crossover_blas_none_turns_it_off():
    _blas()
    out, _ = _info_blas_with(CROSSOVER_BLAS="none")
    assert out.startswith("None")


def test_a_bad_crossover_blas_path_warns_and_uses_faer():
    out, err = _info_blas_with(CROSSOVER_BLAS="/nonexistent/libopenblas.so")
    assert out.startswith("None")
    assert "CROSSOVER_BLAS" in err and "using faer" in err


def test_crossover_blas_min_mnk_sets_both_thresholds_and_warns_on_nonsense():
    out, _ = _info_blas_with(CROSSOVER_BLAS_MIN_MNK="1e9")
    assert "'float32': 1000000000.0" in out and "'float64': 1000000000.0" in out
    for bad in ("-5", "lots", "0"):
        out, err = _info_blas_with(CROSSOVER_BLAS_MIN_MNK=bad)
        assert "CROSSOVER_BLAS_MIN_MNK" in err and "ignored" in err, (bad, err)
        assert "1000000000.0" not in out
