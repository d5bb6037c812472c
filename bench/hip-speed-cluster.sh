#!/usr/bin/env bash
# hip-solve through the cluster against an earlier build, side by side in one
# sitting (issue 19 part 2, the node rate "on two cores" the issue quotes):
# `orchard run hip-solve FLAGS --workers W` of BASE (a git revision) and of
# this working tree, each case run by one then the other, each on a fresh
# database. Prints the value, the nodes, the wall and CPU seconds of each, and
# the ratios new/base. `bench/hip-speed.sh` is the one-core counterpart (one
# search, no coordinator); this one includes what the cluster adds or saves
# (unit split, windows, shared table, lemmas, cancelled units).
#
# Usage: bench/hip-speed-cluster.sh [BASE] [WORKERS] [CASE...]
#   BASE     default 8690597 (the solver of the issue's time)
#   WORKERS  default 2 (the machine's cores)
#   CASE     hip-solve flags, quoted; default "--rows 4 --cols 7" and
#            "--rows 5 --cols 6" (the issue's two boards)
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-8690597}"
workers="${2:-2}"
shift 2 || shift $#
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  cases=("--rows 4 --cols 7" "--rows 5 --cols 6")
fi
target="${CARGO_TARGET_DIR:-target}"
work="$target/hip-speed"
mkdir -p "$work"
# The base build, from its own checkout of BASE.
bench/build-at.sh "$base" orchard "$work/orchard-$base" --bin orchard
cargo build --release --quiet --bin orchard
cp "$target/release/orchard" "$work/orchard-new"

# One run: "WINNER NODES WALL CPU" of binary $1 on flags $2.
measure() {
  local dir wall user sys
  dir="$(mktemp -d)"
  # shellcheck disable=SC2086 # the flags are a list on purpose
  /usr/bin/env time -f "%e %U %S" -o "$dir/time" \
    "$1" run hip-solve $2 --workers "$workers" --db "$dir/bench.db" --json > "$dir/out.json"
  read -r wall user sys < "$dir/time"
  python3 - "$dir/out.json" "$wall" "$user" "$sys" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["winner"], r["nodes"], sys.argv[2], float(sys.argv[3]) + float(sys.argv[4]))
PY
  rm -rf "$dir"
}
echo "base $base, new $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- shared/families/hip || echo '+changes'), $workers workers; $(date -u +%FT%TZ)"
printf '%-24s %14s %14s %7s %8s %8s %7s %8s %8s %7s\n' case "base nodes" "new nodes" nodes \
  "base wall" "new wall" wall "base CPU" "new CPU" CPU
for c in "${cases[@]}"; do
  read -r bv bn bw bc < <(measure "$work/orchard-$base" "$c")
  read -r nv nn nw nc < <(measure "$work/orchard-new" "$c")
  if [ "$bv" != "$nv" ]; then
    echo "WINNERS DIFFER on $c: base $bv, new $nv" >&2
    exit 1
  fi
  printf '%-24s %14s %14s %7.3f %8.1f %8.1f %7.3f %8.1f %8.1f %7.3f\n' "$c" "$bn" "$nn" \
    "$(echo "$nn / $bn" | bc -l)" "$bw" "$nw" "$(echo "$nw / $bw" | bc -l)" \
    "$bc" "$nc" "$(echo "$nc / $bc" | bc -l)"
done
