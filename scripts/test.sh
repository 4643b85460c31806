#!/usr/bin/env bash
# The one test command (CI's .ci/run calls it): installs what the tests need
# on a fresh machine, builds the workspace once, then runs lints and every
# Rust and Python test, the GPU kernels included (executed by pocl, the CPU
# implementation of OpenCL, and checked for races by Oclgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
stage() { echo "== $1 ($(( $(date +%s) - start )) s)"; }

stage "installing test dependencies"
# OpenCL on the CPU (pocl) executes every generated GPU kernel; Oclgrind
# simulates OpenCL to find races and out-of-bounds accesses.
if ! dpkg -s ocl-icd-libopencl1 pocl-opencl-icd oclgrind >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends \
    ocl-icd-libopencl1 pocl-opencl-icd oclgrind >/dev/null
fi
python3 -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
# NVRTC (NVIDIA's runtime compiler, no GPU needed) compiles every generated
# kernel for NVIDIA GPUs; the pip wheel is where CuPy users have it too.
python3 -m pip install --quiet --disable-pip-version-check "nvidia-cuda-nvrtc==13.0.*"
CROSSOVER_CUDA_LIB_DIR="$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))')"
export CROSSOVER_CUDA_LIB_DIR

# NumPy's OpenBLAS, which large real matmuls call (under Python crossover
# finds it already loaded; the Rust tests load it from this path).
CROSSOVER_BLAS="$(python3 -c 'import glob, os, numpy; print((sorted(glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs", "libscipy_openblas*.so"))) or [""])[0])')"
export CROSSOVER_BLAS

# A missing OpenCL device, Oclgrind, NVRTC or OpenBLAS is a failure here,
# not a skip.
export CROSSOVER_REQUIRE_OPENCL=1 CROSSOVER_REQUIRE_OCLGRIND=1 CROSSOVER_REQUIRE_NVRTC=1
export CROSSOVER_REQUIRE_BLAS=1
# Tests leave the user's kernel cache alone (a test makes its own).
export CROSSOVER_KERNEL_CACHE=off
# pocl's compiled kernels stay with the build (reused by local reruns).
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$PWD/target/pocl-cache}"

stage "formatting"
cargo fmt --all -- --check

stage "building the workspace once, with clippy's lints (tests and the Python extension share it)"
# Clippy lints inside the build: clippy-driver compiles the workspace's own
# crates (the wrapper `cargo clippy` sets, RUSTC_WORKSPACE_WRAPPER), so the
# dependencies are compiled once instead of also being checked by a
# separate `cargo clippy` pass (about 4 minutes here). Every cargo command
# below keeps the wrapper, so it reuses these artifacts.
RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# One invocation builds the test executables and the Python extension with
# one feature resolution (`cargo build -p crossover-py` alone would resolve
# features without the dev-dependencies and compile the engine again).
cargo build --workspace --all-targets --quiet

stage "Rust tests, Python tests (CPU and pocl) and the Rust doc examples, side by side"
# The extension cargo just built, beside the package's Python sources (no
# second build through pip).
cp target/debug/lib_crossover.so crates/crossover-py/python/crossover/_crossover.abi3.so
export PYTHONPATH="$PWD/crates/crossover-py/python${PYTHONPATH:+:$PYTHONPATH}"
# The suites leave cores idle on their own (the Rust tests used 1.56 of 2
# cores; the Python suites are mostly single-threaded): run together they
# finish minutes sooner. Each writes its own log, printed when all end.
logs="target/test-logs"
mkdir -p "$logs"
side() {  # side NAME COMMAND...: runs COMMAND in the background
  local name=$1; shift
  rm -f "$logs/$name.rc"
  # (`if`, so that `set -e` does not end the subshell before the status
  # is written)
  ( if "$@" >"$logs/$name.log" 2>&1; then echo 0; else echo $?; fi >"$logs/$name.rc" ) &
}
# Unit and integration tests (the doc examples are the last suite).
side rust cargo test --workspace --lib --bins --tests --quiet
side python python3 -m pytest -q crates/crossover-py/tests
# The Python tests on the OpenCL device (pocl).
side python-pocl env CROSSOVER_GPU=opencl:pocl CROSSOVER_TEST_DEVICE=gpu-prefer \
  python3 -m pytest -q -p no:cacheprovider \
  crates/crossover-py/tests/test_evaluate.py crates/crossover-py/tests/test_ufuncs.py \
  crates/crossover-py/tests/test_random.py crates/crossover-py/tests/test_array.py \
  crates/crossover-py/tests/test_jit.py crates/crossover-py/tests/test_explain_device.py \
  crates/crossover-py/tests/test_dropin.py crates/crossover-py/tests/test_random_legacy.py \
  crates/crossover-py/tests/test_jit_loops.py crates/crossover-py/tests/test_jit_replay.py \
  crates/crossover-py/tests/test_library.py \
  crates/crossover-py/tests/test_matmul_join.py crates/crossover-py/tests/test_exchange.py \
  crates/crossover-py/tests/test_small_ints.py crates/crossover-py/tests/test_compare_gpu.py \
  crates/crossover-py/tests/test_hostile.py
side rust-doc cargo test --workspace --doc --quiet
wait
failed=0
for name in rust python python-pocl rust-doc; do
  rc=$(cat "$logs/$name.rc" 2>/dev/null || echo "no status")
  echo "-- $name (exit $rc)"
  tail -n 40 "$logs/$name.log"
  [ "$rc" = 0 ] || failed=1
done
[ "$failed" = 0 ] || { echo "FAILED: see the logs above ($logs/)"; exit 1; }

stage "all tests passed"
