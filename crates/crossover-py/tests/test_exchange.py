"""Zero-copy exchange with the GPU ecosystem (``crossover._exchange``).

Without a CUDA GPU: host arrays have no ``__cuda_array_interface__`` and
hand DLPack consumers host memory; the DLPack capsule crossover builds for
device memory is read by NumPy over host memory (same structures, same
code, another device code); ``to_device`` moves values and ``device``
reports it; CUDA arrays of other libraries are refused with a clear error
where there is no CUDA backend (producers with ``__cuda_array_interface__``
or only a CUDA ``__dlpack__``); DLPack tensors are parsed and their
deleters run once. With a CUDA GPU (``scripts/gpu-check.sh``),
round trips through CuPy and PyTorch keep the values and the pointer.
"""

import gc
import os
import time

import numpy as np
import pytest

import crossover as xo
from crossover import _crossover as _C


class Producer:
    """A DLPack producer around a ready-made capsule."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **_kw):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (2, 3, 4)])
def test_crossovers_dlpack_capsule_is_read_by_numpy(dtype, shape):
    rng = np.random.default_rng(len(shape))
    host = (rng.standard_normal(shape) > 0 if dtype == "bool"
            else (rng.standard_normal(shape) * 5 + 1).astype(dtype))
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        host = host + 1j * rng.standard_normal(shape).astype(host.real.dtype)
    x = xo.asarray(host)
    view = np.asarray(x)
    cap = _C._dlpack_capsule(x, view.ctypes.data, 1, 0)
    del x, view
    gc.collect()  # the capsule keeps the array (and its memory) alive
    got = np.from_dlpack(Producer(cap, (1, 0)))
    assert got.dtype == np.dtype(dtype) and got.shape == shape
    np.testing.assert_array_equal(got, host)


def test_unconsumed_capsules_are_freed():
    x = xo.asarray(np.arange(1000.0))
    ptr = np.asarray(x).ctypes.data
    for _ in range(2000):
        _C._dlpack_capsule(x, ptr, 1, 0)
    gc.collect()
    np.testing.assert_array_equal(np.asarray(x), np.arange(1000.0))


def test_host_arrays_have_no_cuda_interface_and_give_host_dlpack():
    a = np.random.default_rng(3).standard_normal((4, 6))
    x = xo.asarray(a) * 2.0
    assert not hasattr(x, "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="not in CUDA memory"):
        x.__cuda_array_interface__
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), a * 2.0)
    with pytest.raises(BufferError, match="stream"):
        x.__dlpack__(stream=5)


def test_to_device_moves_values_and_device_says_where_they_are():
    a = np.random.default_rng(4).standard_normal(5000)
    x = xo.asarray(a)  # made on the GPU under CROSSOVER_TEST_DEVICE=gpu-prefer
    h = xo.to_device(x, "cpu")
    assert h.device == "cpu" and (h is x) == (x.device == "cpu")
    np.testing.assert_array_equal(np.asarray(h), a)
    with pytest.raises(ValueError, match="not one of this machine's devices"):
        xo.to_device(x, "tpu")
    with pytest.raises(ValueError, match="stream"):
        x.to_device("cpu", stream=1)
    if "gpu" not in xo.__array_namespace_info__().devices():
        with pytest.raises(ValueError, match="devices"):
            xo.to_device(x, "gpu")
        return
    y = xo.to_device(x, "gpu")
    assert y is x and x.device == "gpu"
    np.testing.assert_array_equal(np.asarray(x), a)
    z = xo.asarray(a, device="gpu")
    assert z.device == "gpu"
    np.testing.assert_allclose(np.asarray(xo.sin(z)), np.sin(a), rtol=1e-15, atol=1e-15)


class FakeCuda:
    """An object offering CUDA memory it does not have (never dereferenced
    where no CUDA backend exists)."""

    def __init__(self, typestr="<f4", strides=None, shape=(3, 4)):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (0xDEAD000, False), "version": 3,
                                         "strides": strides}


def test_cuda_arrays_of_other_libraries_are_refused_clearly_without_cuda():
    if cuda_gpu():
        pytest.skip("a CUDA GPU is here: the round trips below run instead")
    with pytest.raises(xo.DeviceError, match="CUDA backend"):
        xo.asarray(FakeCuda())
    with pytest.raises(ValueError, match="contiguous"):
        xo.asarray(FakeCuda(strides=(4, 12)))
    with pytest.raises(xo.DTypeError, match="float16"):
        xo.asarray(FakeCuda(typestr="<f2"))


def test_dlpack_tensors_are_read_and_their_deleter_runs_once():
    from crossover import _exchange

    a = np.arange(12.0).reshape(3, 4)
    for _ in range(200):  # a double or missing deleter call would show
        kind, ordinal, ptr, shape, name, owner = _exchange.read_dlpack(a.__dlpack__())
        assert (kind, ordinal, ptr, shape, name) == (1, 0, a.ctypes.data, (3, 4), "float64")
        del owner
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(12.0).reshape(3, 4))
    with pytest.raises(ValueError, match="contiguous"):
        _exchange.read_dlpack(a.T.__dlpack__())
    with pytest.raises(xo.DTypeError, match="DLPack dtype code 2 of 16 bits"):
        _exchange.read_dlpack(a.astype(np.float16).__dlpack__())
    # crossover's own capsule, marked as CUDA memory (device 2, ordinal 3).
    x = xo.asarray(np.arange(6, dtype=np.int32))
    at = np.asarray(x).ctypes.data
    kind, ordinal, ptr, shape, name, _ = _exchange.read_dlpack(_C._dlpack_capsule(x, at, 2, 3))
    assert (kind, ordinal, ptr, shape, name) == (2, 3, at, (6,), "int32")


def test_dlpack_only_cuda_producers_are_refused_clearly_without_cuda():
    if cuda_gpu():
        pytest.skip("a CUDA GPU is here")
    x = xo.asarray(np.arange(6.0))
    at = np.asarray(x).ctypes.data
    jax_like = Producer(_C._dlpack_capsule(x, at, 2, 0), (2, 0))
    with pytest.raises(xo.DeviceError, match="CUDA backend"):
        xo.asarray(jax_like)


def cuda_gpu() -> bool:
    info = xo.info()
    return "gpu" in info["devices"] and "(cuda" in (info.get("gpu") or "")


def need_cuda(module: str):
    if not cuda_gpu():
        if os.environ.get("CROSSOVER_REQUIRE_GPU") == "1":
            pytest.fail("CROSSOVER_REQUIRE_GPU=1 but crossover has no CUDA GPU")
        pytest.skip("no CUDA GPU (these run in scripts/gpu-check.sh)")
    return pytest.importorskip(module)


def test_cupy_round_trip_shares_device_memory():
    cp = need_cuda("cupy")
    a = cp.random.default_rng(5).standard_normal((300, 200), dtype=cp.float32)
    x = xo.asarray(a)
    assert x.device == "gpu"
    ptr, _ordinal, _strides = xo._exchange._cuda_address(x)
    assert ptr == a.data.ptr, "asarray wrapped CuPy's memory"
    # Placed on the GPU: under auto, a kernel not compiled yet costs its
    # compile (18 ms on an H200), so this first call of 60,000 elements
    # runs on the CPU (the GPU compiles it in the background for the next)
    # and the result lives on the host (seen 2026-11-26); this test is the
    # exchange.
    with xo.device("gpu-prefer"):
        y = xo.sin(x) * 2.0
        b = cp.asarray(y)
    assert b.data.ptr == y.__cuda_array_interface__["data"][0], "CuPy reads ours"
    np.testing.assert_allclose(cp.asnumpy(b), np.sin(cp.asnumpy(a)) * 2.0, rtol=2e-6, atol=2e-6)


def test_small_kernel_on_cupy_data_moves_to_the_gpu_once_compiled():
    # Under auto, a small kernel's first call on GPU-resident data may run
    # on the CPU while the GPU compiles it in the background (the compile
    # would cost more than the work); a later call must find it compiled
    # and stay on the GPU beside its inputs.
    cp = need_cuda("cupy")
    a = cp.random.default_rng(6).standard_normal((200, 300), dtype=cp.float32)
    x = xo.asarray(a)
    seen = []
    deadline = time.monotonic() + 20.0
    with xo.device("auto"):
        while time.monotonic() < deadline:
            # `.device` of a pending array says where a value is, not where
            # it would be computed: evaluate first.
            y = (xo.cos(x) * 3.0 + 0.5).eval()
            seen.append(y.device)
            if y.device == "gpu":
                break
            time.sleep(0.05)
    assert seen[-1] == "gpu", f"calls placed on {seen}"
    np.testing.assert_allclose(
        cp.asnumpy(cp.asarray(y)), np.cos(cp.asnumpy(a)) * 3.0 + 0.5, rtol=2e-6, atol=2e-6
    )


def test_torch_round_trip_shares_device_memory():
    torch = need_cuda("torch")
    t = torch.randn(257, 33, device="cuda", dtype=torch.float64)
    x = xo.asarray(t)
    assert xo._exchange._cuda_address(x)[0] == t.data_ptr()
    y = x @ x.T
    u = torch.from_dlpack(y)
    assert u.device.type == "cuda" and u.data_ptr() == y.__cuda_array_interface__["data"][0]
    np.testing.assert_allclose(u.cpu().numpy(), (t @ t.T).cpu().numpy(), rtol=1e-12, atol=1e-12)


def test_dlpack_only_cuda_producer_is_wrapped_in_place():
    torch = need_cuda("torch")
    t = torch.randn(100, 7, device="cuda", dtype=torch.float32)
    # Like a JAX array: a CUDA __dlpack__ and no __cuda_array_interface__.
    jax_like = Producer(t.__dlpack__(), (2, t.device.index or 0))
    x = xo.asarray(jax_like)
    assert xo._exchange._cuda_address(x)[0] == t.data_ptr()
    np.testing.assert_allclose(np.asarray(x * 2), (t * 2).cpu().numpy(), rtol=1e-6)


class HostCopyable(FakeCuda):
    """A CUDA array stand-in that copies itself to the host like CuPy."""

    def __init__(self, values, method):
        super().__init__(shape=values.shape)
        setattr(self, method, lambda: values)

    def __array__(self, *a, **k):
        raise TypeError("Implicit conversion to a NumPy array is not allowed")


@pytest.mark.parametrize("method", ["get", "copy_to_host", "cpu"])
def test_asnumpy_copies_cuda_arrays_through_their_library(method):
    values = np.random.default_rng(6).standard_normal((3, 4))
    np.testing.assert_array_equal(xo.asnumpy(HostCopyable(values, method)), values)
    with pytest.raises(TypeError, match="no get"):
        xo.asnumpy(FakeCuda())
