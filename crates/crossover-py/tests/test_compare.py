"""`python -m crossover.compare`: rows, checks, notes, exit codes, report files.

Sizes 64 and 130 are small, not powers of two, and cross no special edge;
the systems are the CPU ones installed with the test requirements."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

import crossover as xo
from crossover.compare import checks, cli, compare, main
from crossover.compare.systems import NUMPY
from crossover.compare.workloads import WORKLOADS

SIZES = [64, 130]
#: numexpr and numba are test requirements (requirements-dev.txt): if one is
#: missing, its rows are missing and the tests below fail rather than skip.
SYSTEMS = ["numpy", "crossover", "numexpr", "numba"]

#: What each system runs of the workloads below, written out here rather than
#: read from the code under test.
EXPECTED = {
    "numpy": {("elementwise", ""), ("reduction", "sum"), ("reduction", "mean"),
              ("reduction", "std"), ("conditional_accumulate", ""), ("matmul", "")},
    "crossover": {("elementwise", ""), ("reduction", "sum"), ("reduction", "mean"),
                  ("reduction", "std"), ("conditional_accumulate", ""), ("matmul", "")},
    "numexpr": {("elementwise", ""), ("reduction", "sum"), ("conditional_accumulate", "")},
    "numba": {("elementwise", ""), ("reduction", "sum"), ("reduction", "mean"),
              ("reduction", "std"), ("conditional_accumulate", "")},
}
ARGS = ["elementwise", "reduction", "conditional_accumulate", "matmul", "--quick",
        "--sizes", ",".join(map(str, SIZES)), "--systems", ",".join(SYSTEMS)]


@pytest.fixture(scope="module")
def report():
    rep, status = compare(ARGS)
    return rep, status


def test_every_requested_case_has_a_checked_row(report):
    rep, status = report
    assert status == 0, [r for r in rep["rows"] if not r["ok"]]
    got = {(r["system"], r["workload"], r["variant"], r["size"]) for r in rep["rows"]}
    want = {(s, w, v, n) for s, cases in EXPECTED.items() for (w, v) in cases for n in SIZES}
    assert got == want
    assert len(rep["rows"]) == len(want)  # no duplicates
    for r in rep["rows"]:
        assert r["ok"], r
        assert "tol" in r["check"]
        assert 0 < r["min_ms"] <= r["median_ms"]
        assert r["reps"] >= 3
        n = r["size"]
        assert r["elements"] == n * n
        assert r["dtype"] == ("float64" if r["workload"] == "conditional_accumulate" else "float32")
        assert r["gflops"] > 0 and r["gbps"] > 0  # rates from the bench's work figures
    crossover_rows = [r for r in rep["rows"] if r["system"] == "crossover"]
    # The planner's choice, from explain: the CPU where it is the only
    # device; with a GPU (pocl in CI's other step) either may be chosen.
    choices = {"cpu"} if xo.info()["devices"] == ["cpu"] else {"cpu", "gpu"}
    assert all(r["chosen"] in choices for r in crossover_rows), [r["chosen"] for r in crossover_rows]


def test_report_header(report):
    rep, _ = report
    assert rep["title"] == "crossover compare"
    assert rep["command"].startswith("python -m crossover.compare elementwise reduction")
    assert rep["baseline"] == "numpy" and rep["focus"] == "crossover"
    assert rep["gpu_systems"] == []
    assert rep["machine"]["cores"] >= 1 and rep["machine"]["gpu"] == "none"
    assert set(SYSTEMS) <= set(rep["versions"])
    assert rep["versions"]["crossover"] == xo.__version__
    assert "blas" in rep["environment"]
    assert [w["name"] for w in rep["workloads"]] == [
        "elementwise", "reduction", "matmul", "conditional_accumulate"]
    assert "warm-up" in rep["method"]
    json.dumps(rep)  # the Rust writer gets it as JSON


def test_unknown_workload_is_a_usage_error(capsys):
    assert main(["elementwise", "no_such_workload", "--sizes", "64"]) == 2
    err = capsys.readouterr().err
    assert "unknown workload 'no_such_workload'" in err
    assert "image_pipeline" in err  # the known names are listed


def test_unknown_system_and_bad_sizes_are_usage_errors(capsys):
    assert main(["--systems", "numpy,nosuchlib", "--sizes", "64"]) == 2
    assert "unknown system 'nosuchlib'" in capsys.readouterr().err
    assert main(["--sizes", "64,x"]) == 2
    assert main(["--sizes", "0"]) == 2


def test_usage_error_exit_code_from_the_command_line():
    p = subprocess.run([sys.executable, "-m", "crossover.compare", "bogus"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "unknown workload 'bogus'" in p.stderr
    assert p.stdout == ""


def test_a_system_that_does_not_import_is_a_note(monkeypatch):
    monkeypatch.setitem(sys.modules, "numexpr", None)  # import numexpr raises ImportError
    rep, status = compare(["elementwise", "--quick", "--sizes", "64", "--systems", "numpy,numexpr"])
    assert status == 0
    assert any(n.startswith("numexpr: skipped, not usable here") and "numexpr" in n[8:]
               for n in rep["notes"])
    assert {r["system"] for r in rep["rows"]} == {"numpy"}
    assert "numexpr" not in rep["versions"]


def test_an_exception_in_one_case_is_a_note_and_the_run_goes_on(monkeypatch):
    def broken(inputs, variant):
        raise MemoryError("simulated: 64x64 does not fit")

    monkeypatch.setitem(NUMPY.cases, "matmul", broken)
    rep, status = compare(["matmul", "--quick", "--sizes", "64", "--systems", "numpy,crossover"])
    assert status == 0
    assert any("numpy matmul 64: error" in n and "MemoryError" in n for n in rep["notes"])
    assert [(r["system"], r["ok"]) for r in rep["rows"]] == [("crossover", True)]


def test_a_failed_check_is_in_the_row_and_the_exit_code(monkeypatch, capsys):
    monkeypatch.setitem(checks.TOL, "elementwise", 0.0)  # float32 never meets 0
    monkeypatch.setattr(cli, "_writer", lambda name: lambda text, *a: "" if name == "report_tables" else [])
    args = ["elementwise", "--quick", "--sizes", "64", "--systems", "numpy,crossover"]
    rep, status = compare(args)
    assert status == 1
    assert [r["ok"] for r in rep["rows"]] == [False, False]
    assert rep["rows"][0]["check"].endswith("(tol 0e+00)")
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "FAILED CHECK: crossover elementwise" in err
    # A peer's failed check is reported but does not fail the run.
    assert "FAILED CHECK: numpy elementwise" in err and "not fatal" in err
    peer_only = ["elementwise", "--quick", "--sizes", "64", "--systems", "numpy"]
    rep, status = compare(peer_only)
    assert status == 0 and [r["ok"] for r in rep["rows"]] == [False]


def test_openblas_coretype_is_warned_and_noted_never_unset(monkeypatch, capsys):
    args = ["reduction", "--quick", "--sizes", "64", "--systems", "numpy"]
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    rep, _ = compare(args)
    note = [n for n in rep["notes"] if "OPENBLAS_CORETYPE=Haswell" in n]
    assert len(note) == 1
    assert "env -u OPENBLAS_CORETYPE python -m crossover.compare reduction --quick" in note[0]
    assert rep["environment"]["OPENBLAS_CORETYPE"] == "Haswell"
    assert "OPENBLAS_CORETYPE=Haswell" in capsys.readouterr().err
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    rep, _ = compare(args)
    assert not any("OPENBLAS_CORETYPE" in n for n in rep["notes"])
    assert "OPENBLAS_CORETYPE" not in rep["environment"]


# ---- the checks themselves must catch wrong results --------------------------


def _numpy_result(workload, variant, inputs):
    case = NUMPY.cases[workload](inputs, variant)
    return case.host(case.run())


def _sparse_result(inputs):
    import scipy.sparse  # a test requirement

    a, b = (scipy.sparse.csr_matrix(m[:3], shape=m[3]) for m in (inputs["a"], inputs["b"]))
    c = (a @ b).tocsr()
    return (c.data.copy(), c.indices, c.indptr, c.shape)


def _corrupt(workload, got):
    """A plausible wrong answer: one entry (or the scalar) off."""
    if workload == "svd":
        u, s, vt = (p.copy() for p in got)
        u[5, 2] += 0.05
        return u, s, vt
    if workload == "sparse_matmul":
        data = got[0].copy()
        data[len(data) // 2] += 0.5
        return (data,) + tuple(got[1:])
    if workload == "monte_carlo_pi":
        return 3.0
    if isinstance(got, float):
        return got * (1 + 1e-8) if workload == "conditional_accumulate" else got * 1.001
    bad = np.array(got, copy=True)
    bad.reshape(-1)[bad.size // 3] += 0.05 * np.abs(bad).max()
    return bad


CASES = [(w, v) for w in WORKLOADS for v in WORKLOADS[w].variants]


@pytest.mark.parametrize("workload,variant", CASES, ids=[f"{w}-{v}" if v else w for w, v in CASES])
def test_check_passes_numpy_and_fails_a_corrupted_result(workload, variant):
    n = 48 if workload != "monte_carlo_pi" else 1000  # 1e6 samples: 6 sigma = 0.01
    inputs = WORKLOADS[workload].make(n)
    if workload == "sparse_matmul":
        good = _sparse_result(inputs)
    else:
        good = _numpy_result(workload, variant, inputs)
    ok = checks.check(workload, variant, inputs, good, {})
    assert ok.ok, ok.detail
    bad = checks.check(workload, variant, inputs, _corrupt(workload, good), {})
    assert not bad.ok, bad.detail


def test_checks_fail_nan_and_wrong_shapes():
    inputs = WORKLOADS["matmul"].make(40)
    c = inputs["a"] @ inputs["b"]
    c[0, 0] = np.nan
    assert not checks.check_matmul(inputs, c).ok
    assert not checks.check_matmul(inputs, (inputs["a"] @ inputs["b"])[:, :39]).ok
    e = WORKLOADS["elementwise"].make(40)
    y = e["a"] * e["b"] + np.sin(e["a"]) + np.cos(e["b"])
    y[3, 3] = np.nan
    assert not checks.check_elementwise(e, y).ok
    s = WORKLOADS["svd"].make(40)
    u, sv, vt = np.linalg.svd(s["a"])
    assert checks.check_svd(s, (u, sv, vt)).ok
    assert not checks.check_svd(s, (u, sv[::-1].copy(), vt)).ok  # not descending


# ---- report files, through the Rust writer ----------------------------------


def test_out_writes_the_report_files(tmp_path, capsys):
    out = tmp_path / "report"
    args = ["elementwise", "reduction", "--quick", "--sizes", "64,130", "--systems",
            "numpy,crossover", "--out", str(out), "--format", "json"]
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    names = {p.name for p in out.iterdir()}
    assert {"report.md", "results.json", "results.csv"} <= names
    assert list(out.rglob("*.png"))
    saved = json.loads((out / "results.json").read_text())

    def present(row):  # the writer leaves out null optional fields (chosen)
        return {k: v for k, v in row.items() if v is not None}

    assert [present(r) for r in saved["rows"]] == [present(r) for r in printed["rows"]]
    assert saved["notes"] == printed["notes"] and saved["command"] == printed["command"]
    with open(out / "results.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == len(printed["rows"])
    assert [(t["system"], t["workload"], t["variant"], int(t["size"])) for t in table] == [
        (r["system"], r["workload"], r["variant"], r["size"]) for r in printed["rows"]]
    assert "crossover" in (out / "report.md").read_text()


def test_an_unwritable_out_keeps_the_results_on_stdout(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    args = ["reduction", "--quick", "--sizes", "64", "--systems", "numpy", "--out", str(blocker / "x")]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert "error:" in err
    assert len(json.loads(out)["rows"]) == 3


def test_table_format_prints_the_writer_tables(capsys):
    assert main(["reduction", "--quick", "--sizes", "64", "--systems", "numpy,crossover"]) == 0
    text = capsys.readouterr().out
    assert "reduction" in text and "crossover" in text and "numpy" in text
    assert all(f"reduction-{v}" in text for v in ("sum", "mean", "std"))  # a table per variant


def test_settle_waits_for_a_busy_thread_and_not_for_an_idle_process():
    """Before a case, the run waits while another thread of the process is
    still busy (OpenBLAS spins after a call), and not when all are idle."""
    import threading
    import time

    from crossover.compare.timing import settle

    stop = time.perf_counter() + 0.4

    def spin():
        x = 0
        while time.perf_counter() < stop:
            x += 1  # holds the GIL in turns with the sleeping main thread

    t = threading.Thread(target=spin)
    t.start()
    waited = settle(max_wait=2.0)
    t.join()
    assert waited >= 0.3, f"returned after {waited:.3f} s while a thread spun for 0.4 s"
    assert settle(max_wait=2.0) < 1.0, "an idle process was not seen as idle"
