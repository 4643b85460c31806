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


# Large real SVDs reduce to bidiagonal form in the loaded LAPACK (?gebrd,
# ?bdsdc; crates/crossover/src/linalg/lapack_svd.rs) from a matrix side
# CROSSOVER_SVD_LAPACK_MIN_DIM sets (0: never). Each shape and dtype is
# checked against float64: singular values against NumPy's float64 ones,
# reconstruction and orthogonality within 8 max(m, n) u. The two paths'
# results are printed so the test can tell that different routines ran.
SVDS = r"""
import numpy as np
import crossover as xo

rng = np.random.default_rng(20261207)
out = []
for dtype in (np.float32, np.float64):
    for shape in ((96, 96), (130, 100), (70, 120), (2, 40, 33)):
        a = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
        u, s, vt = (np.asarray(x) for x in xo.linalg.svd(xo.asarray(a), full_matrices=False))
        vals = np.asarray(xo.linalg.svdvals(xo.asarray(a)))
        m, n = shape[-2:]
        r = min(m, n)
        tol = 8 * max(m, n) * np.finfo(dtype).eps / 2
        a64 = a.astype(np.float64)
        want = np.linalg.svd(a64, compute_uv=False)
        assert u.dtype == dtype and u.shape == shape[:-2] + (m, r) and vt.shape == shape[:-2] + (r, n)
        for got in (s, vals):
            assert np.all(np.abs(got - want) <= tol * want[..., :1]), (shape, dtype)
        recon = (u.astype(np.float64) * s[..., None, :]) @ vt.astype(np.float64)
        rel = np.linalg.norm(recon - a64, axis=(-2, -1)) / np.linalg.norm(a64, axis=(-2, -1))
        assert np.all(rel <= tol), (shape, dtype, rel)
        eye = np.eye(r)
        for q in (np.swapaxes(u, -1, -2) @ u, vt @ np.swapaxes(vt, -1, -2)):
            assert np.max(np.abs(q.astype(np.float64) - eye)) <= tol, (shape, dtype)
        out.append(u.tobytes().hex()[:64])
print(" ".join(out))
"""


def test_svds_through_lapack_match_float64_and_differ_from_faers_bits():
    info = xo.info()
    _blas()
    if info["svd_lapack"] is None:
        if os.environ.get("CROSSOVER_REQUIRE_BLAS"):
            pytest.fail(f"CROSSOVER_REQUIRE_BLAS is set but {info['blas']} has no ?gebrd/?bdsdc")
        pytest.skip("the OpenBLAS exports no ?gebrd/?bdsdc")
    lapack, _ = _run(SVDS, CROSSOVER_SVD_LAPACK_MIN_DIM="1")
    faer, _ = _run(SVDS, CROSSOVER_SVD_LAPACK_MIN_DIM="0")
    # Same checks passed on both paths; their roundings differ, so
    # different routines ran (8 cases).
    assert len(lapack.split()) == len(faer.split()) == 8
    assert sum(x != y for x, y in zip(lapack.split(), faer.split())) >= 6


def test_svd_lapack_min_dim_sets_both_thresholds_and_warns_on_nonsense():
    def shown(**env):
        return _run("import crossover as xo; print(xo.info()['svd_lapack_min_dim'])", **env)

    out, _ = shown(CROSSOVER_SVD_LAPACK_MIN_DIM="3000")
    assert out == "{'float32': 3000, 'float64': 3000}"
    out, err = shown(CROSSOVER_SVD_LAPACK_MIN_DIM="big")
    assert "CROSSOVER_SVD_LAPACK_MIN_DIM" in err and "ignored" in err
    assert "3000" not in out
