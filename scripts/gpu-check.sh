#!/usr/bin/env bash
# Checks crossover on a machine with an NVIDIA GPU, in under 10 minutes.
#
#   scripts/gpu-check.sh build        # here (Rust installed): release CLI,
#                                     # the Python extension and the test
#                                     # executables into gpu-check/bin
#   scripts/gpu-check.sh run [OUT]    # there (no Rust needed): every GPU
#                                     # test with skips as failures, info,
#                                     # calibrate, bench --device all and
#                                     # the Python comparison beside CuPy
#                                     # and PyTorch; logs and JSON in OUT
#
# With no argument it builds, then runs when `nvidia-smi` sees a GPU, and
# otherwise prints the command to run there. docs/gpu.md records results.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=gpu-check/bin

build() {
  set -e
  mkdir -p "$BIN"
  cargo build --release -p crossover-cli -p crossover-py --quiet
  cp target/release/crossover "$BIN/"
  cp target/release/lib_crossover.so "$BIN/_crossover.abi3.so"
  # The engine test executable (one binary holds every suite).
  cargo test --release -p crossover --test engine --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "engine":
        print(m["executable"])' | while read -r exe; do cp "$exe" "$BIN/engine-tests"; done
  echo "built into $BIN: $(ls "$BIN" | tr '\n' ' ')"
  set +e
}

run() {
  local out="${1:-gpu-check/out}"
  mkdir -p "$out"
  local started
  started=$(date +%s)
  export CROSSOVER_REQUIRE_GPU=1 CROSSOVER_GPU=cuda CROSSOVER_PROFILE="$out/profile.json"
  export CROSSOVER_KERNEL_CACHE="$out/kernels"
  local status=0
  step() {
    local name=$1
    shift
    echo "== $name ($(($(date +%s) - started)) s)"
    if ! "$@" >"$out/$name.log" 2>&1; then
      echo "   FAILED (see $out/$name.log)"
      status=1
    fi
    tail -n 5 "$out/$name.log"
  }
  {
    date -u +"%Y-%m-%dT%H:%MZ"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    python3 -c 'import cupy, torch; print("cupy", cupy.__version__, "torch", torch.__version__)' 2>&1
  } >"$out/machine.txt" 2>&1
  cat "$out/machine.txt"
  step info "$BIN/crossover" info
  # Every test body on every engine, the CUDA device included.
  step tests "$BIN/engine-tests" --test-threads 1
  step calibrate "$BIN/crossover" calibrate --quick
  step bench "$BIN/crossover" bench --device all --quick --format json \
    elementwise reduction monte_carlo_pi conditional_accumulate image_pipeline matmul sparse_matmul
  cp "$BIN/_crossover.abi3.so" crates/crossover-py/python/crossover/ 2>/dev/null
  # Zero-copy round trips with CuPy and PyTorch (skips fail here).
  PYTHONPATH="$PWD/crates/crossover-py/python" step exchange \
    python3 -m pytest -q -p no:cacheprovider crates/crossover-py/tests/test_exchange.py
  PYTHONPATH="$PWD/crates/crossover-py/python" step compare \
    python3 -m crossover.compare --quick --out "$out/compare"
  echo "== done in $(($(date +%s) - started)) s; logs in $out"
  return $status
}

case "${1:-}" in
  build) build ;;
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
  *) echo "usage: $0 [build | run [OUT]]" >&2; exit 2 ;;
esac
