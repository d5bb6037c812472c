#!/usr/bin/env bash
# Hip benchmarks: `orchard run hip-solve|hip-draws ...` from scratch on a fresh
# database (orchard run resumes a job on the same database, so every run gets
# its own temporary one) with N local workers, reporting the answer, wall
# time, CPU time and nodes.
# Usage: bench/hip.sh WORKERS FAMILY FLAGS...
#   bench/hip.sh 1 hip-solve --rows 5 --cols 5
#   bench/hip.sh 2 hip-solve --rows 5 --cols 5 --double
#   bench/hip.sh 2 hip-draws --rows 7 --cols 7
set -euo pipefail
cd "$(dirname "$0")/.."
workers="${1:?workers}"
family="${2:?family}"
shift 2
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
/usr/bin/env time -f "%e %U %S" -o "$dir/time" \
  "$target/release/orchard" run "$family" "$@" --workers "$workers" --db "$dir/bench.db" --json > "$dir/out.json"
read -r wall user sys < "$dir/time"
python3 - "$dir/out.json" "$wall" "$user" "$sys" "$workers" "$family $*" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, user, sys_, n, what = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
if r["family"] == "hip-solve":
    answer = f"winner {r['winner']} (value {r['value']})"
else:
    answer = f"draws {r['draws']}, playable {r['playable']}, distinct {r['distinct']}"
print(f"{what}: {answer}, nodes = {r['nodes']:.4e}, discarded = {r['nodes_discarded']:.4e}")
print(f"workers = {n}: wall {wall:.1f} s, cpu {user + sys_:.1f} s, {r['nodes'] / max(wall, 1e-9):.3e} nodes/s")
PY
