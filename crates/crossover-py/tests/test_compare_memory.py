"""`python -m crossover.compare --memory`: memory-bound kernels beside
STREAM's triad. Sizes are tiny (a smoke run); no speed is asserted, only
that every kernel was timed, checked against float64 and reported."""

import json
import math

import numpy as np
import pytest

import crossover as xo
from crossover import _C
from crossover.compare import cli, memory
from crossover.compare.timing import Timing

# Not a square, and not a multiple of 4,096: the matrix kernels get
# (rows, cols) of a divisor, and the flat ones an odd length.
ELEMENTS = 3 * 7 * 1009
ARGS = ["--quick", "--elements", str(ELEMENTS), "--triad-elements", "70001", "--dtypes",
        "float32,float64"]


@pytest.fixture(scope="module")
def report():
    return memory.run(memory.parse(ARGS), ARGS)


def test_every_kernel_has_checked_rows_beside_numpy_and_the_triad(report):
    rep, status = report
    assert status == 0, [r for r in rep["rows"] if not r["ok"]]
    got = {(r["workload"], r["variant"], r["system"]) for r in rep["rows"]}
    assert got == {(k, d, s) for k in memory.KERNELS for d in ("float32", "float64")
                   for s in ("crossover", "engine", "numpy")}
    rows, cols = memory.matrix_shape(ELEMENTS)
    for r in rep["rows"]:
        k = memory.KERNELS[r["workload"]]
        assert r["ok"], r
        assert r["shape"] == ([rows, cols] if k.matrix else [ELEMENTS])
        item = 4 if r["dtype"] == "float32" else 8
        assert r["bytes"] == k.moved(ELEMENTS, rows, cols) * item
        assert 0 < r["min_ms"] <= r["median_ms"]
        assert r["gbps"] > 0 and r["triad_gbps"] > 0
        assert r["of_triad"] > 0
        if r["system"] == "crossover":
            assert r["target_met"] == (r["of_triad"] >= memory.TARGET)
            assert "err" in r["check"]
            assert r["python_over_engine"] > 0
    assert rep["machine"]["triad_elements"] == 70001
    text = memory.markdown(rep)
    for k in memory.KERNELS:
        assert f"| {k} | float32 |" in text


def test_the_ratio_to_the_triad_pairs_the_rounds():
    # Bandwidth halves in round 2 for both: paired, the kernel is always
    # half the triad; a ratio of the two medians would say otherwise.
    kernel = Timing(median_s=2.0, min_s=1.0, reps=3, rounds_s=(1.0, 2.0, 4.0))
    triad = Timing(median_s=1.0, min_s=0.25, reps=3, rounds_s=(0.25, 0.5, 1.0))
    got = memory._paired_ratio(kernel, triad, moved=100, triad_bytes=100)
    assert math.isclose(got, 0.25)
    # The same triad times in another order: the medians' ratio stays 0.25,
    # the rounds' ratios are 1, 1/8, 1/8.
    shuffled = Timing(median_s=0.5, min_s=0.25, reps=3, rounds_s=(1.0, 0.25, 0.5))
    assert math.isclose(memory._paired_ratio(kernel, shuffled, 100, 100), 0.125)
    # Bytes scale it: a kernel moving twice the bytes in the same time.
    assert math.isclose(memory._paired_ratio(kernel, triad, moved=200, triad_bytes=100), 0.5)


def test_the_byte_counts_read_each_input_once_and_write_each_output_once():
    n, r, c = 12, 3, 4
    assert memory.KERNELS["sum"].moved(n, r, c) == n
    assert memory.KERNELS["sum(axis=0)"].moved(n, r, c) == n + c
    assert memory.KERNELS["sum(axis=1)"].moved(n, r, c) == n + r
    assert memory.KERNELS["a*b + c"].moved(n, r, c) == 4 * n


@pytest.mark.parametrize("n, shape", [(1 << 24, (4096, 4096)), (ELEMENTS, (7, 3027)),
                                      (5 * 4096 * 3, (15, 4096)), (7, (1, 7))])
def test_matrix_shapes(n, shape):
    assert memory.matrix_shape(n) == shape


def test_a_wrong_crossover_result_fails_its_check():
    rng = np.random.default_rng(0)
    a = (0.5 + rng.random(5000)).astype(np.float32)
    triad = _C.StreamTriad(10_000)
    k = memory.KERNELS["sum"]
    good = memory.run_kernel(k, [a], [xo.asarray(a)], triad, memory.QUICK, "float32")
    assert all(r["ok"] for r in good)
    # 1e-5 off: past float32's tolerance of 2e-6
    bad = memory.run_kernel(k, [a], [xo.asarray(a) * np.float32(1 + 1e-5)], triad,
                            memory.QUICK, "float32")
    assert not [r for r in bad if r["system"] == "crossover"][0]["ok"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_engine_kernels_compute_what_the_python_path_computes(dtype):
    # The Rust API's graph of each kernel (`EngineKernel.graph()`) against
    # the harness's Python call on the same arrays: the same engine ops, so
    # the same values; and both near the float64 reference.
    rng = np.random.default_rng(3)
    flat = [(0.5 + rng.random(ELEMENTS)).astype(dtype) for _ in range(3)]
    shape = memory.matrix_shape(ELEMENTS)
    tol = memory.TOL[dtype]
    for k in memory.KERNELS.values():
        host = [f.reshape(shape) if k.matrix else f for f in flat[: k.inputs]]
        xs = [xo.asarray(h) for h in host]
        engine = _C.EngineKernel(k.name, xs)
        got = np.asarray(engine.graph())
        python = np.asarray(k.call(*(xs + [None, None])[:3]))
        want = np.asarray(k.call(*([h.astype(np.float64) for h in host] + [None, None])[:3]))
        assert got.shape == want.shape, k.name
        np.testing.assert_allclose(got, python, rtol=tol, atol=0, err_msg=k.name)
        assert memory._error(got, want) <= 4 * tol, k.name
        engine.run()  # computes (nothing to read back) without error


def test_an_engine_kernel_refuses_unknown_names_and_wrong_arity():
    x = xo.asarray(np.arange(1.0, 7.0))
    for name in ("median", "sum(axis=x)", "sum(axis=0", "a*b - c", ""):
        with pytest.raises(ValueError, match="unknown kernel"):
            _C.EngineKernel(name, [x])
    with pytest.raises(ValueError, match="takes 3 arrays, got 1"):
        _C.EngineKernel("a*b + c", [x])
    with pytest.raises(ValueError, match="takes 1 arrays, got 2"):
        _C.EngineKernel("sum", [x, x])
    with pytest.raises(TypeError):
        _C.EngineKernel("sum", [np.arange(3.0)])  # NumPy arrays: convert first
    # An axis beyond the array's dimensions is the engine's error at run().
    with pytest.raises(Exception, match="axis"):
        _C.EngineKernel("sum(axis=1)", [x]).run()


def test_the_triad_checks_its_result_and_refuses_bad_sizes():
    t = _C.StreamTriad(1000)
    assert t.elements == 1000 and t.bytes == 24_000
    assert t.run() > 0
    t.check()
    with pytest.raises(ValueError, match="stream_triad"):
        _C.StreamTriad(0)
    with pytest.raises(MemoryError, match="stream_triad"):
        _C.StreamTriad(1 << 60)


def test_command_line_writes_its_files_and_rejects_bad_arguments(tmp_path, capsys):
    out = tmp_path / "mem"
    argv = ["--memory", "--quick", "--kernels", "sum,a*b + c", "--elements", "4096",
            "--triad-elements", "5000", "--out", str(out), "--format", "json"]
    assert cli.main(argv) == 0
    rep = json.loads(capsys.readouterr().out)
    assert {r["workload"] for r in rep["rows"]} == {"sum", "a*b + c"}
    assert json.loads((out / "memory.json").read_text())["rows"] == rep["rows"]
    assert "| sum | float32 |" in (out / "memory.md").read_text()
    for bad in (["--kernels", "nope"], ["--elements", "0"], ["--dtypes", "int8"],
                ["--triad-elements", "0"]):
        assert cli.main(["--memory", *bad]) == 2
