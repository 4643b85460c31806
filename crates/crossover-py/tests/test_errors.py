"""The exception hierarchy: every class is a CrossoverError and the builtin a
NumPy user would catch."""

import numpy as np
import pytest

import crossover as xo

HIERARCHY = {
    xo.ShapeError: ValueError,
    xo.AxisError: np.exceptions.AxisError,
    xo.OutOfMemoryError: MemoryError,
    xo.IntegerOverflowError: OverflowError,
    xo.ArgumentError: ValueError,
    xo.DTypeError: TypeError,
    xo.ExpressionError: ValueError,
    xo.NumericalError: np.linalg.LinAlgError,
    xo.DeviceError: RuntimeError,
    xo.FileError: OSError,
    xo.InternalError: RuntimeError,
    xo.FallbackError: NotImplementedError,
}


@pytest.mark.parametrize("cls", list(HIERARCHY))
def test_classes(cls):
    assert issubclass(cls, xo.CrossoverError)
    assert issubclass(cls, HIERARCHY[cls])
    assert cls.__module__ == "crossover" and cls.__doc__
    assert issubclass(xo.FallbackWarning, UserWarning)


def test_shape_errors():
    x = xo.asarray(np.ones((2, 3)))
    with pytest.raises(xo.ShapeError, match="broadcast"):
        x + np.ones((4, 3))
    with pytest.raises(xo.ShapeError, match="axis"):
        x.sum(axis=5)
    with pytest.raises(ValueError):
        x.reshape(7)


def test_argument_errors():
    with pytest.raises(xo.ArgumentError):
        xo.arange(0, 10, 0)
    with pytest.raises(xo.ArgumentError):
        xo.random.default_rng(1).normal(0.0, -1.0, size=3)
    with pytest.raises(ValueError):
        xo.asarray(np.ones((2, 3))).sum(axis=(0, 0))


def test_dtype_errors():
    b = xo.asarray(np.array([True, False]))
    with pytest.raises(xo.DTypeError):
        b - b  # NumPy also rejects boolean subtract
    with pytest.raises(xo.DTypeError):
        -b
    with pytest.raises(xo.DTypeError):
        xo.asarray(np.ones(2, np.float16))
    with pytest.raises(xo.DTypeError):
        xo.asarray(np.ones(2, np.complex64)) < 1  # complex numbers have no order
    with pytest.raises(TypeError):
        xo.asarray(np.ones(3)).astype(np.float16)


def test_device_errors():
    if "gpu" in xo.info()["devices"]:
        pytest.skip(f"a GPU is usable here: {xo.info()['gpu']}")
    with pytest.raises(xo.DeviceError, match="no GPU can be used") as e:
        xo.set_device("gpu")
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(xo.DeviceError):
        with xo.device("gpu"):
            pass
    with pytest.raises(ValueError):
        xo.set_device("tpu")
    assert xo.get_device() != "gpu"


def test_operand_type_errors():
    x = xo.asarray(np.ones(3))
    with pytest.raises(TypeError):
        x + "text"
    with pytest.raises(TypeError):
        x + object()
    # Issue 19: NumPy compares with None elementwise (was a scalar False).
    np.testing.assert_array_equal((x == None).numpy(), np.ones(3) == None)  # noqa: E711
    np.testing.assert_array_equal((x != None).numpy(), np.ones(3) != None)  # noqa: E711
    with pytest.raises(TypeError):
        x < None


def test_errors_never_escape_as_panics():
    # Deeply nested expressions are rejected with a typed error, not a crash.
    with pytest.raises(xo.ExpressionError):
        xo.evaluate("(" * 100_000 + "a" + ")" * 100_000, a=np.ones(2))
    with pytest.raises(xo.ExpressionError):
        xo.evaluate("-" * 100_000 + "a", a=np.ones(2))


def test_rust_panics_become_internal_errors():
    for detached in (False, True):
        with pytest.raises(xo.InternalError, match="test panic") as e:
            xo._crossover._test_panic(detached)
        assert isinstance(e.value, RuntimeError)
