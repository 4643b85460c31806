#!/usr/bin/env bash
# Side-by-side benchmark of crossover's library ops against NumPy/SciPy.
# Builds the Rust example, then for each op runs crossover and the reference
# back to back (so both see the same machine state), several rounds, and
# prints the JSON lines plus a summary of the ratios (reference / crossover,
# >1 means crossover is faster).
#
#   scripts/bench_library.sh [ROUNDS] [OPS...]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-1}
shift || true
ops=("$@")
[ ${#ops[@]} -eq 0 ] && ops=(matmul solve_spd svd fft2 sparse_matmul)
cargo build --release -q -p crossover --example bench_library
out=$(mktemp)
for r in $(seq "$rounds"); do
  for op in "${ops[@]}"; do
    ./target/release/examples/bench_library "$op" | tee -a "$out"
    env -u OPENBLAS_CORETYPE python3 scripts/bench_library_ref.py "$op" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
best = collections.defaultdict(list)
for r in rows:
    best[(r["op"], r["size"], r["impl"] == "crossover")].append(r["median_ms"])
print("\nop             size   crossover_ms   reference_ms   ratio(ref/ours)")
for (op, size, ours) in sorted(k for k in best if k[2]):
    o = sorted(best[(op, size, True)])[len(best[(op, size, True)]) // 2]
    ref = best.get((op, size, False))
    if not ref:
        continue
    f = sorted(ref)[len(ref) // 2]
    print(f"{op:<14} {size:<6} {o:>12.2f}   {f:>12.2f}   {f / o:>8.2f}")
PY
rm -f "$out"
