#!/usr/bin/env bash
# Runs per second of the two network families through `orchard run` on 1
# and 2 local workers (fresh database each, ROUNDS rounds, default 3), and
# the summaries of 1 and 2 workers compared field by field (they must be
# identical: every run once, whatever the split).
# Usage: bench/nn-throughput.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
jobs=(
  "hip-nn --players 2 --size 4 --runs 200000 --seed 1"
  "hip-nn --players 3 --size 6 --runs 50000 --seed 1"
  "knight-nn --rows 6 --cols 6 --runs 100000 --seed 1 --update sequential"
)
for job in "${jobs[@]}"; do
  for w in 1 2; do
    for round in $(seq "$rounds"); do
      rm -rf "$dir/db" && mkdir "$dir/db"
      # shellcheck disable=SC2086
      /usr/bin/env time -f "%e %U" -o "$dir/time" "$target/release/orchard" run $job \
        --workers "$w" --db "$dir/db/j.db" --json > "$dir/out-$w.json" 2> /dev/null
      read -r wall user < "$dir/time"
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], "workers", sys.argv[3], "round", sys.argv[4], "runs", r["runs"], "nodes", r["nodes"], "wall", sys.argv[5], "cpu", sys.argv[6], "runs/s", round(r["runs"]/float(sys.argv[5])))' \
        "$dir/out-$w.json" "$job" "$w" "$round" "$wall" "$user"
    done
  done
  python3 - "$dir/out-1.json" "$dir/out-2.json" << 'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
skip = {"elapsed_secs", "results_file", "units_file", "job_id", "nodes_discarded"}
diff = [k for k in a if k not in skip and a[k] != b.get(k)]
print("   1 and 2 workers:", "identical summaries" if not diff else f"DIFFER in {diff}")
PY
done
