#!/usr/bin/env bash
# hip-solve's cost in counted events, against an earlier solver: the
# `hip_one_core` example of BASE (a git revision) and of this working tree run
# under Valgrind's cachegrind, which counts the instructions executed and
# simulates the data caches. The counts do not depend on the machine's load,
# so a change of a few percent shows in one run, where CPU seconds on this
# (shared, virtual) machine move by a tenth or more from run to run
# (docs/notes/hip-solver.md). What they leave out: memory latency and how
# much of it the out-of-order core and the prefetches hide (cachegrind runs
# no prefetch and counts every miss alike), and the instructions' cost.
# So the counts judge changes to the work (instructions, table probes);
# changes to prefetching or memory layout still need `bench/hip-speed.sh` or
# paired timings.
#
# Printed per case: the nodes, the instructions (Ir) and instructions per
# node, and the last-level misses (a simulated last level of LL_MIB, default
# 32 MiB, 16-way: smaller than this machine's 300 MiB L3, which the
# machine's other tenants share, so that the 256 MiB table misses as it does
# in practice), each base and new, with the ratios new/base. About 50 times
# slower than a plain run: `direct 4 6` about a minute each.
#
# Usage: bench/hip-cost.sh [BASE] [CASE...]
#   BASE  default HEAD (the committed tree, against the working tree)
#   CASE  "direct R C [double]" or "tune R C FILE"; default "direct 4 6",
#         "direct 5 5" and "direct 3 8"
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "hip-cost: needs valgrind (cachegrind)" >&2; exit 2; }
base="${1:-HEAD}"
shift || true
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  cases=("direct 4 6" "direct 5 5" "direct 3 8")
fi
ll_bytes=$(( ${LL_MIB:-32} * 1024 * 1024 ))
target="${CARGO_TARGET_DIR:-target}"
work="$target/hip-speed"
mkdir -p "$work"
rev=$(git rev-parse --short "$base")
bench/build-at.sh "$rev" examples/hip_one_core "$work/base-$rev" -p orchard-hip --example hip_one_core
cargo build --release --quiet -p orchard-hip --example hip_one_core
cp "$target/release/examples/hip_one_core" "$work/new"

# One run: "NODES IR LLMISSES" of binary $1 on case $2.
measure() {
  local out nodes
  # shellcheck disable=SC2086 # the case is a list of words on purpose
  out=$(valgrind --tool=cachegrind --cache-sim=yes --LL="$ll_bytes,16,64" \
    --cachegrind-out-file=/dev/null "$1" $2 2>&1)
  if [[ "$2" == tune* ]]; then
    nodes=$(grep -oP 'total \K[0-9]+' <<<"$out")
  else
    nodes=$(grep -oP '^[0-9]+(?= nodes)' <<<"$out")
  fi
  echo "$nodes $(grep -oP 'I\s+refs:\s+\K[0-9,]+' <<<"$out" | tr -d ,)" \
    "$(grep -oP 'LL misses:\s+\K[0-9,]+' <<<"$out" | tr -d ,)"
}
echo "base $rev, new $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- shared/families/hip || echo '+changes');" \
  "simulated last level $((ll_bytes >> 20)) MiB; $(date -u +%FT%TZ)"
printf '%-34s %12s %12s %7s %14s %14s %7s %6s %6s %11s %11s %7s\n' case "base nodes" "new nodes" \
  nodes "base Ir" "new Ir" Ir "b Ir/n" "n Ir/n" "base LL" "new LL" LL
for c in "${cases[@]}"; do
  read -r bn bi bl < <(measure "$work/base-$rev" "$c")
  read -r nn ni nl < <(measure "$work/new" "$c")
  printf '%-34s %12s %12s %7.3f %14s %14s %7.3f %6.0f %6.0f %11s %11s %7.3f\n' "$c" "$bn" "$nn" \
    "$(echo "$nn / $bn" | bc -l)" "$bi" "$ni" "$(echo "$ni / $bi" | bc -l)" \
    "$(echo "$bi / $bn" | bc -l)" "$(echo "$ni / $nn" | bc -l)" "$bl" "$nl" \
    "$(echo "$nl / $bl" | bc -l)"
done
