"""The CPU kernels on NumPy's own accuracy data: every
``umath-validation-set-<ufunc>.csv`` that NumPy ships in its tests holds
inputs, correctly rounded results and the largest error, in ulps, that
NumPy accepts from its own loops for each dtype. crossover's float32 and
float64 kernels are held to the same bound on the same points.

GPU kernels follow their vendors' libraries (OpenCL's built-ins, CUDA's
libdevice), whose documented bounds are looser, so the test pins the CPU.
"""

import pathlib
import warnings

import numpy as np
import pytest

import crossover as xo

DATA = pathlib.Path(np.__file__).parent / "_core" / "tests" / "data"
FILES = sorted(DATA.glob("umath-validation-set-*.csv"))
BITS = {"np.float32": (np.float32, np.uint32), "np.float64": (np.float64, np.uint64)}

#: Ufuncs with validation data that the engine does not run: NumPy computes
#: them (a FallbackWarning), so their points would test NumPy.
NOT_IN_ENGINE = {"cbrt"}


def _cases():
    for path in FILES:
        name = path.stem.rsplit("-", 1)[1]
        if name in NOT_IN_ENGINE:
            continue
        rows = [line.strip().split(",") for line in path.read_text().splitlines()
                if line.strip() and line[0] not in "$#"]
        for dtype_name, (dtype, bits) in BITS.items():
            sub = [r for r in rows[1:] if len(r) == 4 and r[0] == dtype_name]
            if not sub:
                continue
            x = np.array([int(r[1], 16) for r in sub], dtype=bits).view(dtype)
            want = np.array([int(r[2], 16) for r in sub], dtype=bits).view(dtype)
            tol = max(int(r[3]) for r in sub)
            yield pytest.param(name, x, want, tol, id=f"{name}-{dtype.__name__}")


CASES = list(_cases())


def _ulps(got, want):
    """Integer distance in ulps (ordered bit patterns); NaN against NaN is 0,
    NaN against a number is infinitely far."""
    signed = np.int32 if got.dtype == np.float32 else np.int64
    top = np.iinfo(signed).min

    def key(v):
        b = v.view(signed).astype(np.int64)
        return np.where(b < 0, np.int64(top) - b, b)

    both_nan = np.isnan(got) & np.isnan(want)
    one_nan = np.isnan(got) ^ np.isnan(want)
    d = np.abs(key(got) - key(want)).astype(np.float64)
    return np.where(both_nan, 0.0, np.where(one_nan, np.inf, d))


def test_numpy_ships_its_validation_data():
    # Without the files every parametrised case below would vanish silently.
    assert len(CASES) >= 30, f"found {len(CASES)} cases in {DATA}"


@pytest.mark.parametrize("name", sorted(NOT_IN_ENGINE))
def test_the_ufuncs_left_out_are_not_in_the_engine(name):
    # Once the engine runs one of them, it belongs in the cases above.
    xo.set_fallback("raise")
    with pytest.raises(xo.FallbackError):
        getattr(xo, name)(xo.asarray(np.linspace(0.5, 2.0, 9)))


@pytest.mark.parametrize("name, x, want, tol", CASES)
def test_within_numpys_own_ulp_bound(name, x, want, tol):
    xo.set_device("cpu")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = np.asarray(getattr(xo, name)(xo.asarray(x)))
    assert got.dtype == x.dtype
    u = _ulps(got, want)
    worst = int(np.argmax(u))
    assert u[worst] <= tol, (
        f"{name}({x[worst]!r}) = {got[worst]!r}, correctly rounded {want[worst]!r}: "
        f"{u[worst]} ulp (NumPy accepts {tol})")
