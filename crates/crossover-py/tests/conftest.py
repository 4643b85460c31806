"""Shared fixtures: seeded inputs, tolerances, a clean fallback state."""

import os

import numpy as np
import pytest

import crossover as xo

#: Sizes that cross the engine's 2048-element chunk edges.
SIZES = [1, 7, 2047, 2048, 2049, 100_003]

#: Explicit tolerances (rtol, atol) against float64 references.
TOL = {
    ("exact", np.float32): (2e-7, 0.0),
    ("exact", np.float64): (1e-15, 0.0),
    ("transcendental", np.float32): (4e-6, 2e-7),
    ("transcendental", np.float64): (1e-13, 1e-15),
    ("power", np.float32): (2e-5, 1e-7),
    ("power", np.float64): (1e-12, 1e-15),
    ("reduction", np.float32): (1e-6, 1e-7),
    ("reduction", np.float64): (1e-12, 1e-14),
}


#: The device policy every test starts with: "auto", or "gpu-prefer" when
#: the suite runs its device tests on an OpenCL device (scripts/test.sh sets
#: CROSSOVER_TEST_DEVICE with CROSSOVER_GPU=opencl:pocl).
DEVICE = os.environ.get("CROSSOVER_TEST_DEVICE", "auto")


@pytest.fixture(autouse=True, scope="session")
def _device_was_used():
    """A run on a GPU device must really have run kernels there."""
    yield
    if DEVICE != "auto":
        runs = xo.info()["kernels_run"]
        assert runs["gpu"] > 0, f"CROSSOVER_TEST_DEVICE={DEVICE} but no kernel ran on the GPU: {runs}"


@pytest.fixture(autouse=True)
def _clean_state():
    """Every test starts with fallback warnings armed and the test device."""
    xo.set_fallback("warn")
    xo.set_device(DEVICE)
    yield
    xo.set_fallback("warn")
    xo.set_device(DEVICE)


@pytest.fixture
def rng():
    return np.random.default_rng(20240607)


def nonzero(rng, shape, dtype, lo=0.5, hi=2.0, signed=True):
    """Seeded random values with magnitude in [lo, hi) (never zero)."""
    x = rng.uniform(lo, hi, size=shape)
    if signed:
        x = x * rng.choice([-1.0, 1.0], size=shape)
    return x.astype(dtype)


def check(got, want, kind, dtype):
    """Compares a result with a float64 reference using TOL[kind, dtype]."""
    rtol, atol = TOL[(kind, np.dtype(dtype).type)]
    got = np.asarray(got)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, dtype=np.float64),
                               rtol=rtol, atol=atol)
