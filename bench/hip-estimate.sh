#!/usr/bin/env bash
# What a hip-solve board will cost before it is run (issue 65 part 3), from
# random positions DEPTH stones deep (bench/hip-sample-positions.py), each
# solved completely on one core with a fresh table (`hip_one_core tune`).
#
# For each board it prints the mean nodes of a solved sample position and its
# standard error. Run on boards whose whole cost is known (the ledger,
# docs/hip-table-b.md) beside the board to estimate: the ratio
# whole cost / sample mean, at the same depth, of the known boards is what
# multiplies the new board's sample mean (docs/notes/hip-6x7.md reads the
# figures). The counts do not depend on the machine's load.
#
# Usage: [COUNT=16] [SEED=1] bench/hip-estimate.sh DEPTH [double] BOARD...
#   BOARD  RxC, e.g. 5x7 6x6 6x7
set -euo pipefail
cd "$(dirname "$0")/.."
depth="${1:?usage: bench/hip-estimate.sh DEPTH [double] BOARD...}"
shift
double=""
if [ "${1:-}" = double ]; then
  double=double
  shift
fi
[ $# -gt 0 ] || { echo "hip-estimate: name at least one board (RxC)" >&2; exit 2; }
count="${COUNT:-16}"
seed="${SEED:-1}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet -p orchard-hip --example hip_one_core
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$target/release/examples/hip_one_core" "$work/hip_one_core"
printf '%-6s %-7s %5s %6s %14s %10s %14s %14s %8s\n' board rules depth count "mean nodes" "std err" min max "user s"
for board in "$@"; do
  [[ "$board" =~ ^([0-9]+)x([0-9]+)$ ]] || { echo "hip-estimate: board '$board' is not RxC" >&2; exit 2; }
  rows=${BASH_REMATCH[1]}
  cols=${BASH_REMATCH[2]}
  bench/hip-sample-positions.py "$rows" "$cols" "$depth" "$count" "$seed" $double >"$work/positions"
  out=$( { /usr/bin/time -f "user %U" "$work/hip_one_core" tune "$rows" "$cols" "$work/positions" $double; } 2>&1)
  nodes=$(grep -oP 'per position \K.*' <<<"$out")
  user=$(grep -oP '^user \K.*' <<<"$out")
  python3 - "$board" "${double:-standard}" "$depth" "$user" $nodes <<'EOF'
import statistics, sys
board, rules, depth, user = sys.argv[1:5]
nodes = [int(x) for x in sys.argv[5:]]
mean = statistics.mean(nodes)
err = statistics.stdev(nodes) / len(nodes) ** 0.5 if len(nodes) > 1 else float("nan")
print(f"{board:<6} {rules:<7} {depth:>5} {len(nodes):>6} {mean:>14.4g} {err:>10.3g} {min(nodes):>14} {max(nodes):>14} {float(user):>8.1f}")
EOF
done
