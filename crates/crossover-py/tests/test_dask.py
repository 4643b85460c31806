"""crossover.dask on a real dask.distributed cluster: a LocalCluster of 2
worker processes on loopback (no dashboard), started once for this module
and closed in a finalizer (also when a test fails). Workers run with
``set_fallback("raise")``, so a chunk task that silently fell back to NumPy
fails its test. Results are compared with float64 NumPy references."""

import os
import sys

import numpy as np
import pytest

dask = pytest.importorskip(
    "dask", reason="crossover.dask tests need Dask: pip install 'crossover[dask]'"
)
pytest.importorskip(
    "distributed", reason="crossover.dask tests need distributed: pip install 'crossover[dask]'"
)
import cloudpickle  # noqa: E402  (installed with distributed)
import dask.array as da  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import crossover as xo  # noqa: E402
import crossover.dask as xd  # noqa: E402
from conftest import nonzero  # noqa: E402

# Helpers below run on the workers, which cannot import this test module.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def client(request):
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        worker_dashboard_address=None,
        env={"CROSSOVER_NUM_THREADS": "1"},
    )
    c = Client(cluster)

    def close():
        c.close()
        cluster.close()

    request.addfinalizer(close)
    c.register_plugin(xd.CrossoverPlugin(fallback="raise"))
    return c


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def f64(a):
    return np.asarray(a, dtype=np.float64)


def test_meta_and_chunks_are_crossover(client, rng):
    a = nonzero(rng, (50, 40), np.float32)
    x = xd.from_array(a, chunks=(20, 16))
    assert isinstance(x._meta, xo.ndarray) and x._meta.shape == (0, 0)
    assert x.dtype == np.float32 and x.chunks == ((20, 20, 10), (16, 16, 8))
    y = np.sin(x) * 2 + 1
    assert isinstance(y, da.Array) and isinstance(y._meta, xo.ndarray)
    assert isinstance(x.sum(axis=0)._meta, xo.ndarray)
    block = client.compute(y.to_delayed()[1, 2]).result()
    assert isinstance(block, xo.ndarray) and block.shape == (20, 8)
    np.testing.assert_allclose(block.numpy(), np.sin(f64(a[20:40, 32:])) * 2 + 1, rtol=1e-5)
    # from a crossover array and from a Dask array of NumPy chunks
    for src in (xo.asarray(a) + 0, da.from_array(a, chunks=(25, 40))):
        z = xd.from_array(src, chunks=(25, 20))
        assert isinstance(z._meta, xo.ndarray) and z.chunks == ((25, 25), (20, 20))
        np.testing.assert_array_equal(xd.compute(z), a)
    out = (x + 1).compute()  # Dask's own compute: a crossover array
    assert isinstance(out, xo.ndarray)
    np.testing.assert_allclose(out.numpy(), f64(a) + 1, rtol=1e-6)


def test_elementwise_chain(client, rng):
    a = nonzero(rng, (130, 90), np.float32)
    b = nonzero(rng, (130, 90), np.float32)
    x = xd.from_array(a, chunks=(64, 40))
    y = xd.from_array(b, chunks=(64, 40))
    z = np.sin(x) * 2 + np.exp(-x * y) - np.sqrt(np.abs(y)) / 3 + np.maximum(x, y) ** 2
    got = xd.compute(z)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    A, B = f64(a), f64(b)
    want = np.sin(A) * 2 + np.exp(-A * B) - np.sqrt(np.abs(B)) / 3 + np.maximum(A, B) ** 2
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
    w = xd.compute(da.where(z > 2, z, -z))
    np.testing.assert_allclose(w, np.where(want > 2, want, -want), rtol=2e-5, atol=2e-6)


def test_chunk_chain_is_one_fused_kernel(client, rng):
    a = nonzero(rng, (64, 64), np.float32)
    x = xd.from_array(a, chunks=(32, 32))
    z = np.sin(x) * 2 + np.exp(-x * x) - x / 3  # six NumPy passes per chunk
    text = xd.explain(z, (1, 0))
    pids = set(client.run(os.getpid).values())
    assert any(f"pid {p}" in text for p in pids), text  # explained on a worker
    assert text.count("kernel") >= 1 and "sin" in text and "exp" in text
    kernels = [ln for ln in text.splitlines() if ln.lstrip().startswith(("k0", "k1", "#0", "#1"))]
    assert len(kernels) <= 1, text
    assert "1 kernel" in text or "kernels: 1" in text, text


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_reductions_along_axes(client, rng, dtype, axis):
    a = nonzero(rng, (97, 83), dtype) + 3
    x = xd.from_array(a, chunks=(20, 30))
    y = x * 1.5 - 1  # reductions swallow the chain that feeds them
    A = f64(a) * 1.5 - 1
    results = dask.compute(
        xd.to_numpy(y.sum(axis=axis, split_every=2)),
        xd.to_numpy(y.mean(axis=axis, split_every=2)),
        xd.to_numpy(y.std(axis=axis, split_every=2)),
        xd.to_numpy(y.var(axis=axis, ddof=1, split_every=2)),
        xd.to_numpy(y.min(axis=axis)),
        xd.to_numpy(y.max(axis=axis)),
    )
    wants = (A.sum(axis=axis), A.mean(axis=axis), A.std(axis=axis), A.var(axis=axis, ddof=1),
             A.min(axis=axis), A.max(axis=axis))
    rtol = 2e-5 if dtype == np.float32 else 1e-11
    for name, got, want in zip(("sum", "mean", "std", "var", "min", "max"), results, wants):
        assert np.shape(got) == np.shape(want), name
        np.testing.assert_allclose(f64(got), want, rtol=rtol, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_of_chunked_arrays(client, rng, dtype):
    a = nonzero(rng, (90, 70), dtype)
    b = nonzero(rng, (70, 50), dtype)
    x = xd.from_array(a, chunks=(30, 25))
    y = xd.from_array(b, chunks=(25, 20))
    want = f64(a) @ f64(b)
    rtol = 5e-5 if dtype == np.float32 else 1e-11
    c = x @ y
    assert isinstance(c._meta, xo.ndarray)
    np.testing.assert_allclose(xd.compute(c), want, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(xd.compute(da.matmul(x, y)), want, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(xd.compute(da.dot(x, y)), want, rtol=rtol, atol=rtol)
    v = xd.from_array(b[:, 0], chunks=25)
    np.testing.assert_allclose(xd.compute(x @ v), f64(a) @ f64(b[:, 0]), rtol=rtol, atol=rtol)
    # a chain after the product
    np.testing.assert_allclose(xd.compute(np.tanh(c * 0.01).sum(axis=0)),
                               np.tanh(want * 0.01).sum(axis=0), rtol=1e-4)


def image_pipeline(x):
    x = (x - x.mean(axis=(1, 2), keepdims=True)) / (x.std(axis=(1, 2), keepdims=True) + 1e-8)
    return np.sin(x) * 0.5 + 0.5


def test_image_pipeline_over_chunked_images(client, rng):
    imgs = rng.random((12, 48, 40), dtype=np.float32) + 0.1
    want = image_pipeline(f64(imgs))
    # whole images per chunk: the pipeline runs inside each chunk
    x = xd.from_array(imgs, chunks=(5, 48, 40))
    np.testing.assert_allclose(xd.compute(x.map_blocks(image_pipeline)), want, rtol=1e-4, atol=2e-5)
    # images split into tiles: Dask tree-reduces the per-image statistics
    t = xd.from_array(imgs, chunks=(4, 16, 20))
    np.testing.assert_allclose(xd.compute(image_pipeline(t)), want, rtol=1e-4, atol=2e-5)


def test_worker_info_and_plugin(client):
    info = xd.worker_info(client)
    assert len(info) == 2
    for d in info.values():
        assert d["version"] == xo.__version__
        assert d["CROSSOVER_NUM_THREADS"] == "1" and d["threads"] == 1
        assert d["device_policy"] == "auto"


def _kill_once(block, flag):
    # The first task to get here kills its worker process (as a crash
    # would); the retry on a restarted or other worker finds the flag.
    try:
        fd = os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return block
    os.close(fd)
    os._exit(1)


def test_killed_worker_is_retried(client, rng, tmp_path):
    flag = str(tmp_path / "killed")
    a = nonzero(rng, (64, 48), np.float32)
    x = xd.from_array(a, chunks=(16, 48))
    y = (np.exp(x * 0.5) + 1).map_blocks(_kill_once, flag, dtype=np.float32, meta=x._meta)
    before = set(client.run(os.getpid).values())
    got = xd.compute(y.sum(axis=1) / 3)
    assert os.path.exists(flag)  # a worker really died
    np.testing.assert_allclose(got, (np.exp(f64(a) * 0.5) + 1).sum(axis=1) / 3, rtol=2e-5)
    client.wait_for_workers(2, timeout=60)
    after = set(client.run(os.getpid).values())
    assert before != after  # the nanny restarted the killed worker


def test_a_chunk_read_by_several_tasks_is_computed_once(client, rng):
    from dask.highlevelgraph import HighLevelGraph

    a = nonzero(rng, (64, 64), np.float32)
    x = xd.from_array(a, chunks=(32, 32))
    y = np.sin(x) * 3 + x  # read by both reductions below
    s, m = y.sum(axis=0), y.max()
    keys = [s.__dask_keys__(), m.__dask_keys__()]
    dsk = xd.optimize(HighLevelGraph.merge(s.dask, m.dask), keys)
    wrapped = [k for k, t in dsk.items() if getattr(t, "func", None) is xd._evaluated]
    assert len(wrapped) == 4, wrapped  # the four chunks of y, computed where they are made
    got_s, got_m = xd.compute(s, m)
    Y = np.sin(f64(a)) * 3 + f64(a)
    np.testing.assert_allclose(got_s, Y.sum(axis=0), rtol=2e-5)
    np.testing.assert_allclose(got_m, Y.max(), rtol=1e-6)
