"""The ``crossover-gpu`` row of `python -m crossover.compare`: NumPy inputs
moved to the GPU outside the timed region, results left where they were
computed (as the CuPy and PyTorch rows run). scripts/test.sh runs this file
in its OpenCL (pocl) pass, where crossover has a GPU device, and in the
plain pass, where the row is a note saying why it did not run."""

import crossover as xo
from conftest import DEVICE
from crossover.compare import compare

ARGS = ["elementwise", "reduction", "matmul", "--quick", "--sizes", "64",
        "--systems", "numpy,crossover,crossover-gpu"]


def test_the_gpu_row_runs_from_device_memory_or_says_why_not():
    rep, status = compare(ARGS)
    assert status == 0, [r for r in rep["rows"] if not r["ok"]]
    rows = [r for r in rep["rows"] if r["system"] == "crossover-gpu"]
    if "gpu" not in xo.info()["devices"]:
        assert rows == [] and "crossover-gpu" not in rep["gpu_systems"]
        assert any(n.startswith("crossover-gpu: skipped, not usable here") and "no usable GPU" in n
                   for n in rep["notes"]), rep["notes"]
        return
    want = {("elementwise", ""), ("reduction", "sum"), ("reduction", "mean"),
            ("reduction", "std"), ("matmul", "")}
    assert {(r["workload"], r["variant"]) for r in rows} == want
    assert all(r["ok"] and r["reps"] >= 3 for r in rows), rows
    assert "crossover-gpu" in rep["gpu_systems"]
    if DEVICE != "auto":
        # The pass's policy prefers the GPU, and the row says where the
        # planner put each kernel (not a placeholder).
        assert all(r["chosen"] == "gpu" for r in rows), [(r["workload"], r["chosen"]) for r in rows]
