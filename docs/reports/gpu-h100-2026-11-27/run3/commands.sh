# Run 3 on the H100 (2026-11-27, session 21), build of 7db68c2 plus the
# CROSSOVER_GPU_REDUCE_SEGMENTS knob and scripts/gpu_diag.py. One device
# call (349 s), then the whole engine suite again on the warm kernel cache
# (75 s). Logs and reports of the first call were under /tmp/o there.
set -o pipefail; O=/tmp/o; mkdir -p $O; pk(){ tar czf $OUT/o.tgz --exclude=kernels --exclude=icd -C /tmp o; }
GPU_CHECK_TESTS_S=180 GPU_CHECK_TEST_THREADS=12 scripts/gpu-check.sh run $O 2>&1 | tee $O/run.log; pk
GPU_CHECK_DIAG_S=110 scripts/gpu-check.sh diag $O > /dev/null 2>&1; tail -40 $O/diag.log; pk
GPU_CHECK_LARGE_S=70 GPU_CHECK_PEERS_S=45 GPU_CHECK_LATENCY_S=40 scripts/gpu-check.sh large $O 2>&1 | tee $O/large.log; pk
# second call (tests-rerun.log):
export CROSSOVER_REQUIRE_GPU=1 CROSSOVER_GPU=cuda CROSSOVER_KERNEL_CACHE=$O/kernels RUST_BACKTRACE=1 OCL_ICD_VENDORS=$O/icd
timeout -k 5 300 gpu-check/bin/engine-tests --test-threads 14 > $O/tests2.log 2>&1
# third call (a fresh machine; tests-call3*.log): a test build with the sign
# fix and a first (wrong: a lock) NVRTC fix, NVIDIA's OpenCL named.
export CROSSOVER_REQUIRE_GPU=1 CROSSOVER_GPU=cuda CROSSOVER_KERNEL_CACHE=/tmp/k RUST_BACKTRACE=1 CROSSOVER_TEST_OPENCL=NVIDIA
timeout -k 5 60 gpu-check/bin/engine-tests --test-threads 14 sign corpus:: > $OUT/fixed.log 2>&1
timeout -k 5 150 gpu-check/bin/engine-tests --test-threads 14 > $OUT/all.log 2>&1
