"""explain, device policy and info."""

import os
import signal
import time

import pytest
import numpy as np

import crossover as xo
from conftest import check, nonzero


def test_explain_array_before_and_after_run(rng):
    a, b = nonzero(rng, 10_000, np.float32), nonzero(rng, 10_000, np.float32)
    x, y = xo.asarray(a), xo.asarray(b)
    z = x * y + np.sin(x) + np.cos(y)
    e = xo.explain(z, run=False)
    assert len(e) == 1 and not e.ran and e.seconds is None
    k = e.kernels[0]
    assert k["name"].startswith("fused(") and {"mul", "sin", "cos", "add"} <= set(k["fused"])
    assert k["reasons"] == ["requested output"] and k["points"] == 10_000
    assert k["bytes"] == 3 * 4 * 10_000 and k["flops"] > 0 and k["device"] in ("cpu", "gpu")
    assert not z.is_ready
    e2 = xo.explain(z)
    assert e2.ran and e2.seconds > 0 and z.is_ready
    text = str(e2)
    assert "kernel 0: fused(" in text and "measured" in text and "requested output" in text
    assert "nothing to run" in str(xo.explain(z))


def test_explain_without_running_gives_the_planned_device(rng):
    # The planner's choice, not a placeholder: `compare` labels its columns
    # with it (an H100 run showed "cpu" beside GPU-speed times).
    x = xo.asarray(nonzero(rng, 100_000, np.float32))
    with xo.device("cpu"):
        assert xo.explain(x * 2 + 1, run=False).kernels[0]["device"] == "cpu"
    if "gpu" in xo.info()["devices"]:
        with xo.device("gpu"):
            e = xo.explain(x * 2 + 1, run=False)
            assert e.kernels[0]["device"] == "gpu" and not e.ran


def test_explain_function(rng):
    def f(x):
        return (x - x.mean()) / x.std()

    e = xo.explain(f, nonzero(rng, (100, 100), np.float64))
    assert e.ran and len(e) == 2
    assert "reduction result" in str(e)


def test_device_context_and_policy(rng):
    start = xo.get_device()
    with xo.device("cpu") as d:
        assert xo.get_device() == "cpu" and "cpu" in repr(d)
        np.testing.assert_allclose(xo.evaluate("a + 1", a=np.ones(3)), 2)
        # The policy reaches the planner: explain says so.
        e = xo.explain(lambda a: a * 2 + 1, np.ones(1000))
        assert "policy cpu" in str(e)
    assert xo.get_device() == start
    xo.set_device("cpu")
    assert xo.get_device() == "cpu"
    assert "policy cpu" in str(xo.explain(lambda a: a * 2 + 1, np.ones(1000)))
    np.testing.assert_allclose((xo.asarray(np.ones(3)) * 2).numpy(), 2)
    with pytest.raises(ValueError):
        xo.set_device("tpu")


def test_a_device_scope_reaches_long_evaluations(rng):
    # Long work from the main thread (over 2^25 pending points) runs on the
    # evaluation thread while the main thread handles Ctrl-C. A
    # `with xo.device(...)` scope belongs to the thread that opened it: the
    # evaluation thread must take it on (it ran such work under the
    # process-wide policy instead).
    a = nonzero(rng, 1 << 24, np.float32)
    x = xo.asarray(a)
    devices = ["cpu", "gpu"] if "gpu" in xo.info()["devices"] else ["cpu"]
    for outer in devices:
        for inner in devices:
            xo.set_device(outer)
            with xo.device(inner):
                y = x * 2 + 1 - x  # three pending ops of 2^24 points each
                got = np.asarray(y)
            assert y.device == inner, (outer, inner)
            check(got, a.astype(np.float64) + 1, "exact", np.float32)


def test_info():
    i = xo.info()
    assert i["version"] == xo.__version__
    assert i["threads"] >= 1 and i["simd"] and i["devices"][0] == "cpu"
    assert isinstance(i["gpu"], str) and i["gpu"]  # the GPU's name, or why none
    assert "sin" in i["ufuncs"] and i["numpy"] == np.__version__


def report_of_forked_child(body, timeout=60.0):
    """Runs ``body()`` in a forked child and returns the text it returns;
    fails the test if the child raises or is still running after
    ``timeout`` seconds (it is then killed, not left behind)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, never return into pytest
        code = 1
        try:
            os.close(r)
            os.write(w, body().encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    deadline = time.monotonic() + timeout
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            pytest.fail(f"the forked child did not finish in {timeout:g} s")
        time.sleep(0.01)
    with os.fdopen(r) as f:
        report = f.read()
    status = done[1]
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, report
    return report


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_computes_on_the_cpu(rng):
    # Dask and multiprocessing fork workers: a GPU context does not survive
    # fork, so the child must plan on its CPU and still be right.
    a = nonzero(rng, 10_000, np.float64)
    want = a * 2 + np.sin(a)
    e = xo.explain(lambda x: x * 2 + np.sin(x), a)  # the parent uses its device
    parent_device = e.kernels[0]["device"]

    def child():
        ec = xo.explain(lambda x: x * 2 + np.sin(x), a)
        got = np.asarray((xo.asarray(a) * 2 + np.sin(xo.asarray(a))).numpy())
        ok = np.allclose(got, want, rtol=1e-13, atol=1e-15)
        return f"{ec.kernels[0]['device']} {ok}\n{ec}"

    report = report_of_forked_child(child)
    device, ok = report.split("\n")[0].split()
    assert ok == "True", report
    assert device == "cpu", report
    if parent_device == "gpu":
        assert "forked child" in report, report


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_runs_all_work_after_the_parent_used_its_threads(rng):
    # The engine's threads do not survive fork. A child that handed them
    # work waited forever: a parallel matmul, solve or FFT every time, a
    # fused kernel now and then (a worker holding one of rayon's locks at
    # the fork). A child computes on its calling thread, and says so.
    import scipy.sparse

    a = nonzero(rng, (512, 512), np.float64)
    s = scipy.sparse.random(512, 512, density=0.02, random_state=7, format="csr")
    x = xo.asarray(a)
    xs = xo.sparse.csr_matrix((s.data, s.indices, s.indptr), shape=s.shape)
    spd = a + 512 * np.eye(512)
    work = {
        "matmul": (lambda: x @ x, lambda: a @ a),
        "solve": (lambda: xo.linalg.solve(xo.asarray(spd), x[:, 0]),
                  lambda: np.linalg.solve(spd, a[:, 0])),
        "fft2": (lambda: xo.fft.fft2(x), lambda: np.fft.fft2(a)),
        "cumsum": (lambda: xo.cumsum(x, axis=0), lambda: np.cumsum(a, axis=0)),
        "sparse @ dense": (lambda: xs @ x, lambda: s @ a),
        "fused": (lambda: x * 2 + xo.sin(x), lambda: a * 2 + np.sin(a)),
    }
    for mine, _ in work.values():  # the parent's threads run all of it
        np.asarray(mine())

    def child():
        lines = [f"threads {xo.info()['threads']}"]
        for name, (mine, numpy) in work.items():
            got = np.asarray(mine())
            lines.append(f"{name}: {np.allclose(got, numpy(), rtol=1e-9, atol=1e-9)}")
        return "\n".join(lines)

    report = report_of_forked_child(child)
    assert report.split("\n") == ["threads 1"] + [f"{name}: True" for name in work], report
