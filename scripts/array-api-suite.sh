#!/usr/bin/env bash
# Runs the public Array API conformance suite (data-apis/array-api-tests,
# not vendored: pass a checkout with its `array-api` submodule) against
# crossover and, in the same run, NumPy, and prints each one's pass count.
#
#   scripts/array-api-suite.sh /path/to/array-api-tests [max-examples]
#
# Needs the Python package built (see README) and `pip install hypothesis
# ndindex pytest-json-report`. Reports go to target/array-api-suite/.
set -euo pipefail
cd "$(dirname "$0")/.."
suite="${1:?usage: $0 /path/to/array-api-tests [max-examples]}"
examples="${2:-20}"
out="$PWD/target/array-api-suite"
mkdir -p "$out"
export PYTHONPATH="$PWD/crates/crossover-py/python${PYTHONPATH:+:$PYTHONPATH}"
for module in crossover numpy; do
  (cd "$suite" && ARRAY_API_TESTS_MODULE=$module ARRAY_API_TESTS_VERSION=2024.12 \
    python3 -m pytest array_api_tests -q -p no:cacheprovider \
      --max-examples="$examples" --hypothesis-disable-deadline \
      --json-report --json-report-file="$out/$module.json" >"$out/$module.log" 2>&1) || true
  python3 - "$out/$module.json" "$module" <<'EOF'
import collections, json, sys
tests = json.load(open(sys.argv[1]))["tests"]
counts = collections.Counter(t["outcome"] for t in tests)
total = len(tests)
print(f"{sys.argv[2]:>10}: {counts['passed']} of {total} passed "
      f"({100 * counts['passed'] / total:.1f}%), {counts['failed']} failed, "
      f"{counts['skipped']} skipped")
EOF
done
