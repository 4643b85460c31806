"""Complex functions at special and extreme inputs against NumPy (which
returns C99's Annex G values through the C library): infinities and NaNs
in either part, signed zeros, magnitudes where textbook formulas overflow
or cancel."""

import itertools
import warnings

import numpy as np
import pytest

import crossover as xo

PARTS = [0.0, -0.0, 0.5, -1.0, 1.0, 2.5, -3.0, 1e8, -7e7, 1e300, np.inf, -np.inf, np.nan]
GRID = np.array([complex(a, b) for a, b in itertools.product(PARTS, PARTS)])

FUNCS = ["sqrt", "exp", "expm1", "sin", "cos", "tan", "sinh", "cosh", "tanh",
         "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]


def _numpy(name, z):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return getattr(np, name)(z)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", FUNCS)
def test_special_and_extreme_inputs_match_numpy(name, dtype):
    with np.errstate(over="ignore"):
        z = GRID.astype(dtype)  # 1e300 is inf in complex64
    if name == "expm1":
        # NumPy's complex expm1 is its own formula, NaN for non-finite
        # inputs and for exp overflowing (inf * 0); crossover follows
        # C99's cexp table there (the Array API's special cases, tested in
        # the engine).
        z = z[np.isfinite(z) & (np.abs(z.real) < 700)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = np.asarray(getattr(xo, name)(xo.asarray(z)))
    want = _numpy(name, z)
    assert got.dtype == want.dtype
    rtol = 1e-12 if dtype == np.complex128 else 2e-6
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        close = np.zeros(g.shape, bool)
        both = np.isfinite(g) & np.isfinite(w)
        close[both] = np.abs(g[both] - w[both]) <= rtol * np.abs(w[both]) + 1e-300
        # Infinities and NaNs exactly where NumPy has them; finite values
        # to rounding (a zero's sign is unspecified in C99 where it says ±0).
        bad = ~((np.isnan(g) & np.isnan(w)) | (g == w) | close)
        assert not bad.any(), (
            f"{name}: {[(z[i], got[i], want[i]) for i in np.flatnonzero(bad)][:6]}")
