#!/usr/bin/env bash
# hip-solve through the cluster, two builds side by side: BASE (an `orchard`
# binary built from an earlier commit) and this checkout's, alternated on
# the same boards, each run `orchard run hip-solve ... --workers W --json`
# on a fresh database. Prints one line a run (winner, nodes, wall and CPU
# seconds) and the medians' ratios a board (this build / BASE), as for the
# unit windows (docs/notes/hip-solver.md).
#
#   [HIP_BOARDS='--rows 3 --cols 9;...'] bench/hip-windows.sh BASE_BIN [ROUNDS] [WORKERS]
#
# Node counts of a run with two workers or more depend on the schedule, so
# each board runs ROUNDS times a build (default 2). HIP_BOARDS replaces the
# boards below (`orchard run hip-solve` arguments, separated by `;`).
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:?an orchard binary of the commit to compare with}"
rounds="${2:-2}"
workers="${3:-2}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
new="$target/release/orchard"
boards=(
  "--rows 3 --cols 6 --double"
  "--rows 3 --cols 7"
  "--rows 3 --cols 8"
  "--rows 3 --cols 8 --double"
  "--rows 4 --cols 6"
  "--rows 4 --cols 6 --double"
  "--rows 5 --cols 5"
  "--rows 5 --cols 5 --double"
  "--rows 4 --cols 7"
)
if [ -n "${HIP_BOARDS:-}" ]; then
  IFS=';' read -r -a boards <<< "$HIP_BOARDS"
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# One run: prints "winner nodes wall cpu".
run() {
  local bin="$1"
  shift
  rm -rf "$dir/db"
  mkdir "$dir/db"
  /usr/bin/env time -f "%e %U %S" -o "$dir/time" \
    "$bin" run hip-solve "$@" --workers "$workers" --db "$dir/db/x.db" \
    --results-dir "$dir/db/results" --json > "$dir/out.json"
  read -r wall user sys < "$dir/time"
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["winner"], r["nodes"], sys.argv[2], round(float(sys.argv[3]) + float(sys.argv[4]), 2))
' "$dir/out.json" "$wall" "$user" "$sys"
}
echo "base: $base; new: $new ($(git rev-parse --short HEAD)$(git diff --quiet || echo +changes)); $workers workers, $rounds rounds; $(date -u '+%F %T') UTC; load $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "${boards[@]}"; do
  : > "$dir/base.txt"
  : > "$dir/new.txt"
  for ((i = 0; i < rounds; i++)); do
    # Alternate which build goes first.
    if ((i % 2 == 0)); then order="base new"; else order="new base"; fi
    for which in $order; do
      if [ "$which" = base ]; then bin="$base"; else bin="$new"; fi
      line="$(run "$bin" $b)"
      echo "$line" >> "$dir/$which.txt"
      echo "$b | $which: winner nodes wall cpu = $line"
    done
  done
  python3 - "$b" "$dir/base.txt" "$dir/new.txt" <<'PY'
import statistics, sys
what, base, new = sys.argv[1], sys.argv[2], sys.argv[3]
def cols(path):
    rows = [l.split() for l in open(path) if l.strip()]
    return ({r[0] for r in rows}, [int(r[1]) for r in rows], [float(r[2]) for r in rows], [float(r[3]) for r in rows])
bw, bn, bt, bc = cols(base)
nw, nn, nt, nc = cols(new)
assert bw == nw and len(bw) == 1, f"{what}: winners differ: {bw} {nw}"
m = statistics.median
print(f"{what} | winner {bw.pop()} | nodes {m(bn):,.0f} -> {m(nn):,.0f} ({m(nn) / m(bn):.3f}) "
      f"| wall {m(bt):.1f} -> {m(nt):.1f} s ({m(nt) / m(bt):.3f}) | cpu {m(bc):.1f} -> {m(nc):.1f} s ({m(nc) / m(bc):.3f})")
PY
done
