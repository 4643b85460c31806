#!/usr/bin/env bash
# The one test command (CI's .ci/run calls it): installs what the tests need
# on a fresh machine, then runs lints and every Rust and Python test.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing test dependencies"
python3 -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt

echo "== formatting and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings

echo "== Rust tests"
cargo test --workspace --quiet

echo "== Python package and its tests"
# The dev profile (optimised, no LTO) reuses what `cargo test` just compiled;
# a user's `pip install ./crates/crossover-py` builds the release profile.
MATURIN_PEP517_ARGS="--profile dev" \
  python3 -m pip install --quiet --disable-pip-version-check ./crates/crossover-py
python3 -m pytest -q crates/crossover-py/tests

echo "== all tests passed"
