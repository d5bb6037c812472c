#!/usr/bin/env bash
# hip-solve against an earlier solver, side by side in one sitting (issue 19
# part 2): the `hip_one_core` example of BASE (a git revision) and of this
# working tree, each case run by one then the other, one search on one core
# (`direct R C`: the empty board, one search with the job's table; `tune R C
# FILE`: every position of FILE, each with a fresh table). Prints the value,
# the nodes and the user seconds of each, and the ratios new/base of the
# nodes and of the medians of user, CPU (user and system) and wall seconds
# over ROUNDS runs of each, taken in turn (ROUNDS=5 for the figures in
# README). Node counts do not depend on the machine's load; times do.
#
# Usage: [ROUNDS=N] bench/hip-speed.sh [BASE] [CASE...]
#   BASE  default 8690597 (the solver before Gardner's pairing bound)
#   CASE  "direct R C" or "tune R C FILE"; default: the draw boards with an
#         even side 3x8, 2x12, 4x6, the second-player boards 4x7 and 5x6,
#         and bench/hip-positions/6x6-deep.txt
# ORCHARD_CACHE_MIB, if set, is the table size of both (the long runs' 8192:
#   ORCHARD_CACHE_MIB=8192 bench/hip-speed.sh d0342e7 \
#     "tune 4 9 bench/hip-positions/4x9-deep.txt"
#   measures the table's near part, which d0342e7 lacks).
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-8690597}"
shift || true
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  cases=("direct 3 8" "direct 2 12" "direct 4 6" "direct 4 7" "direct 5 6"
         "tune 6 6 bench/hip-positions/6x6-deep.txt")
fi
target="${CARGO_TARGET_DIR:-target}"
work="$target/hip-speed"
mkdir -p "$work"
# The base solver, built from its own checkout of BASE.
bench/build-at.sh "$base" examples/hip_one_core "$work/base-$base" -p orchard-hip --example hip_one_core
cargo build --release --quiet -p orchard-hip --example hip_one_core
cp "$target/release/examples/hip_one_core" "$work/new"

# One run: "VALUE NODES USER CPU WALL" of binary $1 on case $2 (CPU is
# user plus system time: a table's fresh pages cost system time).
measure() {
  local out times nodes value
  out=$( { /usr/bin/time -f "times %U %S %e" "$1" $2 2>&1; } 2>&1)
  times=$(grep -oP '^times \K.*' <<<"$out")
  if [[ "$2" == tune* ]]; then
    nodes=$(grep -oP 'total \K[0-9]+' <<<"$out")
    # Every position's nodes stand for its value (tune stops on a disagreement).
    value="$(grep -oP 'per position \K.*' <<<"$out" | wc -w)-positions"
  else
    nodes=$(grep -oP '^[0-9]+(?= nodes)' <<<"$out")
    value=$(grep -oP 'first player: \K-?[0-9]+' <<<"$out")
  fi
  read -r user sys wall <<<"$times"
  echo "$value $nodes $user $(echo "$user + $sys" | bc -l) $wall"
}
median() { python3 -c 'import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))' "$@"; }
rounds="${ROUNDS:-1}"
echo "base $base, new $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- shared/families/hip || echo '+changes'); $rounds round(s), medians; $(date -u +%FT%TZ)"
printf '%-44s %14s %14s %7s %8s %8s %7s %7s %7s\n' case "base nodes" "new nodes" nodes \
  "base s" "new s" user CPU wall
for c in "${cases[@]}"; do
  bu=(); bc=(); bw=(); nu=(); nc=(); nw=()
  for _ in $(seq "$rounds"); do
    read -r bv bn u cpu w < <(measure "$work/base-$base" "$c")
    bu+=("$u"); bc+=("$cpu"); bw+=("$w")
    read -r nv nn u cpu w < <(measure "$work/new" "$c")
    nu+=("$u"); nc+=("$cpu"); nw+=("$w")
    if [ "$bv" != "$nv" ]; then
      echo "VALUES DIFFER on $c: base $bv, new $nv" >&2
      exit 1
    fi
  done
  read -r mbu mbc mbw mnu mnc mnw <<<"$(median "${bu[@]}") $(median "${bc[@]}") $(median "${bw[@]}") \
$(median "${nu[@]}") $(median "${nc[@]}") $(median "${nw[@]}")"
  printf '%-44s %14s %14s %7.3f %8.2f %8.2f %7.3f %7.3f %7.3f\n' "$c" "$bn" "$nn" \
    "$(echo "$nn / $bn" | bc -l)" "$mbu" "$mnu" "$(echo "$mnu / $mbu" | bc -l)" \
    "$(echo "$mnc / $mbc" | bc -l)" "$(echo "$mnw / $mbw" | bc -l)"
done
