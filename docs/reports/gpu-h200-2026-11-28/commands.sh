# Fifth run on a real GPU (NVIDIA H200, 2026-11-28, session 27); see
# docs/gpu.md "Fifth run". Each call: the device tool's `run` in the
# repository root, carrying gpu-check/xz (and the probe named).

# call 1 (13:43 UTC): the release CLI and extension of 8aa1db2, packed with
# `xz` into gpu-check/xz beside a placeholder engine-tests (not built yet):
scripts/gpu-check.sh session
GPU_CHECK_LARGE_S=120 GPU_CHECK_PEERS_S=80 GPU_CHECK_LATENCY_S=1 scripts/gpu-check.sh large /tmp/o

# here: the OpenCL listing fix, then
scripts/gpu-check.sh build && scripts/gpu-check.sh pack     # 33.5 min

# call 2 (14:24 UTC; carry gpu-check/probe.py, here call2/probe.py):
scripts/gpu-check.sh session
PYTHONPATH=$PWD/crates/crossover-py/python CROSSOVER_GPU=cuda \
  CROSSOVER_PROFILE=/tmp/o/profile.json python3 gpu-check/probe.py

# call 3 (same binaries; probe2.py):
scripts/gpu-check.sh diag /tmp/o 4
PYTHONPATH=$PWD/crates/crossover-py/python CROSSOVER_GPU=cuda python3 gpu-check/probe2.py

# call 4 (same binaries; probe3.py; traces in call4/):
for w in sparse matmul; do
  CROSSOVER_TRACE=trace-$w.json PYTHONPATH=$PWD/crates/crossover-py/python \
    CROSSOVER_GPU=cuda python3 gpu-check/probe3.py $w
done
