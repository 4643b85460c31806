#!/usr/bin/env bash
# Checks crossover on a machine with an NVIDIA GPU, in under 10 minutes.
#
#   scripts/gpu-check.sh build        # here (Rust installed): release CLI,
#                                     # the Python extension and the test
#                                     # executables into gpu-check/bin
#   scripts/gpu-check.sh pack         # here: gpu-check/bin as xz archives
#                                     # (gpu-check/xz) for a copy with a
#                                     # size limit; `run` unpacks them
#   scripts/gpu-check.sh run [OUT]    # there (no Rust needed): every GPU
#                                     # test with skips as failures, info,
#                                     # calibrate, bench --device all and
#                                     # the Python comparison beside CuPy
#                                     # and PyTorch; logs and JSON in OUT
#   scripts/gpu-check.sh large [OUT]  # there, after run: bench at 1e8
#                                     # elements beside a device copy,
#                                     # CuPy's fused kernel and PyTorch
#   scripts/gpu-check.sh session      # there, as ONE device call (about 7
#                                     # minutes on an H100): run, diag 2 3 4
#                                     # and the latencies, logs packed into
#                                     # $OUT/o.tgz after each step
#   scripts/gpu-check.sh diag [OUT [PARTS]]  # there, after run: sums
#                                     # under each reduction segment shape,
#                                     # small-call latency and copies beside
#                                     # CuPy and PyTorch, OpenCL in child
#                                     # processes (scripts/gpu_diag.py;
#                                     # PARTS: 1 2 3 4, default all)
#
# With no argument it builds, then runs when `nvidia-smi` sees a GPU, and
# otherwise prints the command to run there. docs/gpu.md records results.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${GPU_CHECK_BIN:-gpu-check/bin}

build() {
  set -e
  mkdir -p "$BIN"
  # One cargo invocation for all three, so the dependencies and the engine
  # library compile once: a separate `cargo test` resolves the test
  # target's dev-dependency features (proptest's) anew and built the
  # dependencies and the engine again (39 minutes in all on 2 cores,
  # 2026-11-28). The engine test executable holds every suite.
  cargo build --release -p crossover -p crossover-cli -p crossover-py \
    --lib --bin crossover --test engine --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "engine":
        print(m["executable"])' | while read -r exe; do cp "$exe" "$BIN/engine-tests"; done
  cp target/release/crossover "$BIN/"
  cp target/release/lib_crossover.so "$BIN/_crossover.abi3.so"
  echo "built into $BIN: $(ls "$BIN" | tr '\n' ' ')"
  set +e
}

# pack: the binaries as xz archives into gpu-check/xz (about 26 MB, where
# the binaries with line tables are 70-100 MB each), for copying to a GPU
# machine with a size limit; `run` unpacks them (Python's lzma, no xz tool
# needed) when gpu-check/bin lacks them.
pack() {
  set -e
  mkdir -p gpu-check/xz
  for f in crossover engine-tests _crossover.abi3.so; do
    xz -T0 -6 -c "$BIN/$f" >"gpu-check/xz/$f.xz"
  done
  ls -la gpu-check/xz
  set +e
}

unpack() {
  [ -x "$BIN/engine-tests" ] && return 0
  [ -d gpu-check/xz ] || return 0
  mkdir -p "$BIN"
  python3 - "$BIN" <<'PY'
import lzma, os, shutil, sys
for n in ("engine-tests", "crossover", "_crossover.abi3.so"):
    with lzma.open(f"gpu-check/xz/{n}.xz") as f, open(os.path.join(sys.argv[1], n), "wb") as g:
        shutil.copyfileobj(f, g)
    os.chmod(os.path.join(sys.argv[1], n), 0o755)
PY
}

run() {
  unpack
  local out="${1:-gpu-check/out}"
  mkdir -p "$out"
  local started
  started=$(date +%s)
  export CROSSOVER_REQUIRE_GPU=1 CROSSOVER_GPU=cuda CROSSOVER_PROFILE="$out/profile.json"
  export CROSSOVER_KERNEL_CACHE="$out/kernels" RUST_BACKTRACE=1
  # NVIDIA's libraries from the Python environment's wheels (CuPy's and
  # PyTorch's), beside any toolkit under /usr/local/cuda*.
  if [ -z "${CROSSOVER_PYTHON_PATH:-}" ]; then
    CROSSOVER_PYTHON_PATH="$(python3 -c 'import site; print(":".join(site.getsitepackages()))' 2>/dev/null)"
    export CROSSOVER_PYTHON_PATH
  fi
  # NVIDIA's OpenCL as the tests' OpenCL device when the driver ships it
  # and the ICD loader does not list it (the H200 machine listed only pocl,
  # whose FFT tests alone outlast a step on one thread).
  local nv
  nv=$(ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 2>/dev/null | head -n 1)
  if [ -n "$nv" ] && [ -z "${OCL_ICD_VENDORS:-}" ]; then
    mkdir -p "$out/icd"
    echo "$nv" >"$out/icd/nvidia.icd"
    OCL_ICD_VENDORS="$(cd "$out/icd" && pwd)"
    export OCL_ICD_VENDORS
  fi
  local status=0
  # step NAME SECONDS COMMAND...: runs COMMAND with a time limit (a hang
  # must not eat the time of the steps after it), its output in NAME.log.
  step() {
    local name=$1 limit=$2
    shift 2
    echo "== $name ($(($(date +%s) - started)) s, limit $limit s)"
    timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1
    local rc=$?
    if [ $rc -ne 0 ]; then
      [ $rc -eq 124 ] && echo "   TIMED OUT after $limit s" >>"$out/$name.log"
      echo "   FAILED rc=$rc (see $out/$name.log)"
      status=1
    fi
    tail -n 5 "$out/$name.log"
  }
  {
    date -u +"%Y-%m-%dT%H:%MZ"
    nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv,noheader
    python3 -c 'import cupy, torch; print("cupy", cupy.__version__, "torch", torch.__version__)' 2>&1
    nproc
    echo "CROSSOVER_PYTHON_PATH=$CROSSOVER_PYTHON_PATH"
  } >"$out/machine.txt" 2>&1
  cat "$out/machine.txt"
  CROSSOVER_LOG=debug step info "${GPU_CHECK_INFO_S:-30}" "$BIN/crossover" info
  # The suite with NVIDIA's OpenCL as the OpenCL engine, where the ICD
  # loader lists it, in the background beside the CUDA run below (both are
  # compile-bound: NVIDIA's OpenCL compiles every variant the tests make,
  # more than 150 s with 14 threads on an H100, 2026-11-27). Running out
  # of time is a partial run, not a failure; a failed test is one.
  local ocl_pid="" ocl_limit="${GPU_CHECK_OPENCL_TESTS_S:-240}"
  if grep -q "on NVIDIA CUDA" "$out/info.log"; then
    echo "== tests-opencl ($(($(date +%s) - started)) s, limit $ocl_limit s; NVIDIA's OpenCL, in the background)"
    CROSSOVER_TEST_OPENCL=NVIDIA timeout -k 5 "$ocl_limit" "$BIN/engine-tests" \
      --test-threads "${GPU_CHECK_OPENCL_TEST_THREADS:-8}" >"$out/tests-opencl.log" 2>&1 &
    ocl_pid=$!
  else
    echo "== tests-opencl: skipped, the ICD loader lists no NVIDIA OpenCL device"
  fi
  # Every test body on the CPU, synthetic GPU and CUDA engines, with the
  # OpenCL engine off (`none` names no device, so its cases skip: the
  # machine lists pocl too, whose compile-heavy suites outlast the step),
  # and without the CUDA compute cache, so ptxas runs (and reports) for
  # every compile. About 75 s with 14 threads on an H100 (2026-11-27).
  CUDA_CACHE_DISABLE=1 CROSSOVER_TEST_OPENCL=none step tests "${GPU_CHECK_TESTS_S:-300}" \
    "$BIN/engine-tests" --test-threads "${GPU_CHECK_TEST_THREADS:-8}"
  # The timed steps below need a quiet machine: wait for the OpenCL run.
  if [ -n "$ocl_pid" ]; then
    wait "$ocl_pid"
    local rc=$?
    local passed failed
    passed=$(grep -c ' ok$' "$out/tests-opencl.log")
    failed=$(grep -c ' FAILED$' "$out/tests-opencl.log")
    echo "== tests-opencl done ($(($(date +%s) - started)) s): $passed passed, $failed failed$([ $rc -eq 124 ] && echo ", the rest cut at $ocl_limit s")"
    if [ "$failed" -gt 0 ] || { [ $rc -ne 0 ] && [ $rc -ne 124 ]; }; then
      echo "   FAILED rc=$rc (see $out/tests-opencl.log)"
      status=1
    fi
  fi
  step calibrate "${GPU_CHECK_CALIBRATE_S:-90}" "$BIN/crossover" calibrate --quick
  step advise "${GPU_CHECK_ADVISE_S:-30}" "$BIN/crossover" advise --no-measure
  # Sizes that cross from the CPU to the GPU (N means N x N elements).
  step bench "${GPU_CHECK_BENCH_S:-120}" "$BIN/crossover" bench --device all --quick \
    --sizes "${GPU_CHECK_SIZES:-300,1000,4096}" --out "$out/bench" \
    elementwise reduction monte_carlo_pi conditional_accumulate image_pipeline matmul sparse_matmul
  cp "$BIN/_crossover.abi3.so" crates/crossover-py/python/crossover/ 2>/dev/null
  # Zero-copy round trips with CuPy and PyTorch (skips fail here).
  PYTHONPATH="$PWD/crates/crossover-py/python" step exchange "${GPU_CHECK_EXCHANGE_S:-60}" \
    python3 -m pytest -q -p no:cacheprovider crates/crossover-py/tests/test_exchange.py
  PYTHONPATH="$PWD/crates/crossover-py/python" step compare "${GPU_CHECK_COMPARE_S:-120}" \
    python3 -m crossover.compare --quick --sizes "${GPU_CHECK_SIZES:-300,1000,4096}" \
    --out "$out/compare" elementwise reduction matmul monte_carlo_pi
  echo "== done in $(($(date +%s) - started)) s; logs in $out"
  return $status
}

# large [OUT]: there, after `run`: bench at 2048 and 10000 (1e8 elements:
# the bandwidth-bound sizes), the peers' device figures beside it
# (scripts/gpu_peers.py: a device copy, CuPy's fused kernel, PyTorch) and
# the small-kernel latencies (scripts/gpu_latency.py: call to result, a
# compile, a disk-cache hit).
large() {
  unpack
  local out="${1:-gpu-check/out}"
  mkdir -p "$out"
  export CROSSOVER_REQUIRE_GPU=1 CROSSOVER_GPU=cuda CROSSOVER_PROFILE="$out/profile.json"
  export CROSSOVER_KERNEL_CACHE="$out/kernels"
  if [ -z "${CROSSOVER_PYTHON_PATH:-}" ]; then
    CROSSOVER_PYTHON_PATH="$(python3 -c 'import site; print(":".join(site.getsitepackages()))' 2>/dev/null)"
    export CROSSOVER_PYTHON_PATH
  fi
  if [ -z "${GPU_CHECK_LATENCY_ONLY:-}" ]; then
    timeout -k 5 "${GPU_CHECK_LARGE_S:-150}" "$BIN/crossover" bench --device all --quick \
      --sizes 2048,10000 --out "$out/bench-large" elementwise reduction matmul >"$out/bench-large.log" 2>&1
    echo "bench-large rc=$?"
    tail -n 12 "$out/bench-large.log"
    timeout -k 5 "${GPU_CHECK_PEERS_S:-90}" python3 scripts/gpu_peers.py >"$out/peers.log" 2>&1
    echo "peers rc=$?"
    cat "$out/peers.log"
  fi
  cp "$BIN/_crossover.abi3.so" crates/crossover-py/python/crossover/ 2>/dev/null
  PYTHONPATH="$PWD/crates/crossover-py/python" timeout -k 5 "${GPU_CHECK_LATENCY_S:-60}" \
    python3 scripts/gpu_latency.py >"$out/latency.log" 2>&1
  echo "latency rc=$?"
  cat "$out/latency.log"
}

# diag [OUT]: there, after `run`: scripts/gpu_diag.py (what the next
# change to the GPU path needs measured; see its docstring).
diag() {
  unpack
  local out="${1:-gpu-check/out}"
  shift || true
  mkdir -p "$out"
  export CROSSOVER_GPU=cuda CROSSOVER_PROFILE="$out/profile.json" CROSSOVER_KERNEL_CACHE="$out/kernels"
  if [ -z "${CROSSOVER_PYTHON_PATH:-}" ]; then
    CROSSOVER_PYTHON_PATH="$(python3 -c 'import site; print(":".join(site.getsitepackages()))' 2>/dev/null)"
    export CROSSOVER_PYTHON_PATH
  fi
  cp "$BIN/_crossover.abi3.so" crates/crossover-py/python/crossover/ 2>/dev/null
  PYTHONPATH="$PWD/crates/crossover-py/python" PYTHONUNBUFFERED=1 timeout -k 5 "${GPU_CHECK_DIAG_S:-120}" \
    python3 scripts/gpu_diag.py "$@" 2>&1 | tee "$out/diag.log"
}

# session: what a session lent a GPU runs there, in one call of the
# device tool (carry gpu-check/xz, made here by `build` then `pack`):
# the whole check, the small-call breakdown, copies and the OpenCL child
# probe (diag 2 3 4) and the latencies, each step's logs packed into
# $OUT/o.tgz as it ends (a call cut at its limit still returns what ran). Sized for a 560 s limit.
session() {
  local o=/tmp/o
  mkdir -p "$o"
  pk() { [ -n "${OUT:-}" ] && tar czf "$OUT/o.tgz" --exclude=kernels --exclude=icd -C "$(dirname "$o")" "$(basename "$o")"; }
  GPU_CHECK_TESTS_S=200 GPU_CHECK_TEST_THREADS=8 GPU_CHECK_OPENCL_TESTS_S=240 GPU_CHECK_OPENCL_TEST_THREADS=8 \
    run "$o" 2>&1 | tee "$o/run.log"
  pk
  GPU_CHECK_DIAG_S=100 diag "$o" 2 3 4 >/dev/null 2>&1
  tail -n 60 "$o/diag.log"
  pk
  GPU_CHECK_LATENCY_ONLY=1 GPU_CHECK_LATENCY_S=60 large "$o"
  pk
}

case "${1:-}" in
  build) build ;;
  session) session ;;
  diag) shift; diag "$@" ;;
  large) shift; large "$@" ;;
  pack) pack ;;
  run) shift; run "$@" ;;
  "")
    build
    if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
      run
    else
      echo "no NVIDIA GPU here; copy the repository with $BIN to a GPU machine and run:"
      echo "  scripts/gpu-check.sh run gpu-check/out"
    fi
    ;;
  *) echo "usage: $0 [build | pack | run [OUT] | session | large [OUT] | diag [OUT [PARTS]]]" >&2; exit 2 ;;
esac
