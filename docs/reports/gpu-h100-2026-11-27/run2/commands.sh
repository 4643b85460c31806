# Run 2 on the H100 (2026-11-27). .devcarry/diag2.py was sections 2 and 3 of
# ../run1/diag.py (forced-gpu eval of a 1,000-element kernel; sums by size).
set -u
mkdir -p /tmp/f gpu-check/bin
python3 - <<'PY'
import lzma, os, shutil
for n in ("engine-tests", "crossover", "_crossover.abi3.so"):
    with lzma.open(f"gpu-check/xz/{n}.xz") as f, open(f"gpu-check/bin/{n}", "wb") as g:
        shutil.copyfileobj(f, g)
    os.chmod(f"gpu-check/bin/{n}", 0o755)
PY
B=gpu-check/bin
export CROSSOVER_REQUIRE_GPU=1 CROSSOVER_GPU=cuda CROSSOVER_PROFILE=$PWD/.devcarry/profile.json CROSSOVER_KERNEL_CACHE=/tmp/f/kernels RUST_BACKTRACE=1
export CROSSOVER_PYTHON_PATH="$(python3 -c 'import site; print(":".join(site.getsitepackages()))')"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/f/machine.txt; date -u >> /tmp/f/machine.txt
timeout 70 $B/crossover bench --device all --quick --sizes 1000,4096,10000 --out /tmp/f/bench reduction > /tmp/f/bench.log 2>&1; echo "bench rc=$?"
tar czf $OUT/f.tgz --exclude=kernels -C /tmp f
cp $B/_crossover.abi3.so crates/crossover-py/python/crossover/
export PYTHONPATH=$PWD/crates/crossover-py/python
CROSSOVER_LOG=debug timeout 40 python3 .devcarry/diag2.py > /tmp/f/diag.log 2>&1; echo "diag rc=$?"; grep -v "^  \|^profile\|^warning" /tmp/f/diag.log | head -30
tar czf $OUT/f.tgz --exclude=kernels -C /tmp f
timeout 40 python3 scripts/gpu_latency.py > /tmp/f/latency.log 2>&1; echo "latency rc=$?"; cat /tmp/f/latency.log
tar czf $OUT/f.tgz --exclude=kernels -C /tmp f
timeout 35 $B/crossover bench --device all --quick --sizes 4096 --out /tmp/f/bench-sparse sparse_matmul > /tmp/f/bench-sparse.log 2>&1; echo "sparse rc=$?"
tar czf $OUT/f.tgz --exclude=kernels -C /tmp f
timeout 45 python3 -m pytest -q -p no:cacheprovider crates/crossover-py/tests/test_exchange.py > /tmp/f/exchange.log 2>&1; echo "exchange rc=$?"; tail -3 /tmp/f/exchange.log
tar czf $OUT/f.tgz --exclude=kernels -C /tmp f
timeout 90 $B/engine-tests --test-threads 6 reductions gpu:: corpus cuda_sparse sparse_products > /tmp/f/tests.log 2>&1; echo "tests rc=$?"; grep "test result" /tmp/f/tests.log
tar czf $OUT/f.tgz --exclude=kernels -C /tmp f
grep -A8 "^| workload" /tmp/f/bench/report.md | head -12; grep -A6 "^|     N" /tmp/f/bench-sparse/report.md | head -8
