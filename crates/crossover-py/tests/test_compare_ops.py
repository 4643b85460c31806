"""`python -m crossover.compare --ops`: the per-op table's rows, checks,
outputs and command line. Sizes are tiny (a smoke run); no timing is
asserted, only that every cell was timed, checked and reported."""

import json
import math

import numpy as np
import pytest

import crossover as xo
from crossover.compare import cli, ops, ops_report

SIZE = 300
OPS = ["add", "divide", "less", "sin", "arccosh", "x**0.5", "sum", "argmax", "std", "cumsum"]
#: numexpr is a test requirement (requirements-dev.txt): missing, its rows
#: are missing and the test below fails rather than skips.
SYSTEMS = ["crossover", "crossover_np_in", "numexpr"]
NUMEXPR_OPS = {"add", "divide", "less", "sin", "arccosh", "x**0.5", "sum"}
ARGS = ["--quick", "--sizes", str(SIZE), "--op", ",".join(OPS), "--systems", ",".join(SYSTEMS)]
COLUMNS = {"workload", "variant", "size", "elements", "dtype", "system", "group", "median_ms",
           "min_ms", "reps", "ok", "check", "ratio"}


@pytest.fixture(scope="module")
def report():
    return ops.compare_ops(ARGS)


def test_every_cell_has_a_checked_row_with_every_column(report):
    rep, status = report
    assert status == 0, [r for r in rep["rows"] if not r["ok"]]
    got = {(r["workload"], r["variant"], r["system"]) for r in rep["rows"]}
    want = {(op, d, s) for op in OPS for d in ("float32", "float64")
            for s in ["numpy", "crossover", "crossover_np_in"] + (["numexpr"] if op in NUMEXPR_OPS else [])}
    assert got == want
    assert len(rep["rows"]) == len(want)
    for r in rep["rows"]:
        assert COLUMNS <= set(r), r
        assert r["size"] == r["elements"] == SIZE
        assert 0 < r["min_ms"] <= r["median_ms"]
        assert r["reps"] >= 3
        assert math.isfinite(r["ratio"]) and r["ratio"] > 0
        if r["system"] != "numexpr":  # numexpr's float32 sum is its own business
            assert r["ok"], r
        assert "err" in r["check"]
    assert rep["machine"]["copy_bandwidth_gbps_one_core"] > 0


def test_every_engine_ufunc_and_the_issue_ops_are_in_the_table():
    known = ops.all_ops()
    assert set(xo.info()["ufuncs"]) <= set(known)
    for name in ("reciprocal", "sign", "x**0.5", "x**2", "x**3", "x**-1", "x**2.5", "sum", "mean",
                 "max", "min", "argmax", "argmin", "prod", "std", "cumsum"):
        assert name in known


def test_inputs_are_in_their_domain_seeded_and_not_zero():
    a = ops.Inputs(1000, "float32", xo)
    b = ops.Inputs(1000, "float32", xo)
    for domain, (lo, hi) in ops.DOMAINS.items():
        x = a.host(domain, 0)
        assert x.dtype == np.float32 and np.any(x != 0)
        assert lo <= x.min() and x.max() <= hi
        np.testing.assert_array_equal(x, b.host(domain, 0))
    assert not np.array_equal(a.host("signed", 0), a.host("signed", 1))
    np.testing.assert_array_equal(np.asarray(a.converted("positive", 0)), a.host("positive", 0))


# Each wrong op is made from the real one (``f``), captured before the patch.
@pytest.mark.parametrize("op, wrong", [
    ("sin", lambda f: xo.cos),  # another function
    ("sum", lambda f: lambda x: f(x) * 1.0001),  # 1e-4 off: past float32's 1e-5
    ("argmax", lambda f: xo.argmin),  # an index
    ("less", lambda f: lambda a, b: f(b, a)),  # a boolean result
    ("add", lambda f: lambda a, b: f(a, b).astype(  # the values in another dtype
        np.float32 if a.dtype == np.float64 else np.float64)),
])
def test_a_wrong_crossover_result_is_flagged_and_fails_the_run(monkeypatch, op, wrong):
    monkeypatch.setattr(xo, op, wrong(getattr(xo, op)))
    rep, status = ops.compare_ops(["--quick", "--sizes", "200", "--op", op, "--systems", "crossover"])
    assert status == ops.EXIT_FAILED_CHECK
    bad = {(r["variant"], r["system"]) for r in rep["rows"] if not r["ok"]}
    assert bad == {("float32", "crossover"), ("float64", "crossover")}
    md = ops_report.markdown(rep)
    assert "FAIL" in md and "## Failed checks" in md


def test_a_crossover_error_is_reported_and_fails_the_run(monkeypatch):
    def broken(x):
        raise xo.InternalError("injected")

    monkeypatch.setattr(xo, "exp", broken)
    rep, status = ops.compare_ops(["--quick", "--sizes", "200", "--op", "exp", "--dtypes", "float64",
                                   "--systems", "crossover"])
    assert status == ops.EXIT_FAILED_CHECK
    assert {r["system"] for r in rep["rows"]} == {"numpy"}
    assert [(e["system"], e["workload"]) for e in rep["errors"]] == [("crossover", "exp")]
    assert "injected" in ops_report.markdown(rep)


def test_value_error_catches_nan_shape_and_off_values():
    want = np.array([1.0, 2.0, 3.0])
    assert ops.value_error(want.copy(), want, "elementwise") == 0.0
    assert ops.value_error(np.array([1.0, np.nan, 3.0]), want, "elementwise") == math.inf
    assert ops.value_error(want[:2], want, "elementwise") == math.inf
    assert ops.value_error(np.array([1.0, 2.0, 3.3]), want, "elementwise") == pytest.approx(0.3 / 4)
    assert ops.value_error(np.asarray(2.2), np.asarray(2.0), "reduction") == pytest.approx(0.1)
    assert ops.value_error(np.asarray(3), np.asarray(4), "index") == 1.0


def test_out_writes_the_table_json_and_plot(tmp_path, capsys):
    status = cli.main(["--ops", *ARGS[:-2], "--systems", "crossover", "--out", str(tmp_path)])
    assert status == 0
    printed = capsys.readouterr().out
    for name in ("ops.md", "ops.json", "ops.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "ops.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "ops.md").read_text()
    assert md.startswith(printed.split("\n", 1)[0])
    assert "| op | f32 300 | f64 300 |" in md
    for op in OPS:
        assert f"| {op} |" in md
    rep = json.loads((tmp_path / "ops.json").read_text())
    assert rep["command"].startswith("python -m crossover.compare --ops")
    assert len(rep["rows"]) == len(OPS) * 2 * 2  # numpy and crossover
    # ops.json is in the report format the Rust writer reads.
    assert "sum" in xo._C.report_tables(json.dumps(rep))


def test_ratios_and_targets_in_the_table():
    rows = [{"workload": "add", "variant": "float32", "size": n, "system": "crossover", "ok": True,
             "check": "err 0", "ratio": r} for n, r in ((1000, 0.69), (10_000, 0.99), (100_000, 1.5))]
    rep = {"rows": rows}
    assert [r["size"] for r in ops_report.below_target(rep)] == [1000, 10_000]
    table = ops_report.ratio_table(rep, "crossover")
    assert "| add | **0.69x** | **0.99x** | 1.50x |" in table
    assert ops_report.size_label(10_000_000) == "1e7" and ops_report.size_label(300) == "300"


@pytest.mark.parametrize("argv", [["--op", "nosuchop"], ["--sizes", "0"], ["--dtypes", "int8"],
                                  ["--systems", "torch"]])
def test_bad_arguments_exit_2(argv, capsys):
    assert cli.main(["--ops", *argv]) == 2
    assert "error" in capsys.readouterr().err


def test_cause_fit_recovers_intercept_and_slope():
    from crossover.compare import ops_causes

    intercept, slope_ns = ops_causes.fit([1, 10, 100, 1000], [10.0 + 0.002 * n for n in (1, 10, 100, 1000)])
    assert intercept == pytest.approx(10.0) and slope_ns == pytest.approx(2.0)


def test_cause_measurements_reject_an_unknown_section():
    from crossover.compare import ops_causes

    with pytest.raises(SystemExit) as e:
        ops_causes.main(["nosuchsection"])
    assert e.value.code == 2
