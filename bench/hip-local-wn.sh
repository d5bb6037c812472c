#!/usr/bin/env bash
# Work inflation of hip-solve on one table: W(N) = nodes searched by
# `orchard run --workers N` (N local workers of one thread, all on the one
# table of the process; nodes of units cancelled as moot included) / nodes
# of one worker, for each N given (default 1 2 4 8 16): what N machines
# would do if they shared a table as well as one machine's threads do.
# bench/hip-wn.sh is the same with N processes, a table each. On a 2-core
# machine the work means something at every N, the wall time beyond 2 not.
# Usage: [ORCHARD_BIN=...] bench/hip-local-wn.sh "FLAGS" [N...]
#   bench/hip-local-wn.sh "--rows 4 --cols 7 --double --cache-mib 128"
#   bench/hip-local-wn.sh "--rows 5 --cols 6 --double --cache-mib 128" 1 2
set -euo pipefail
cd "$(dirname "$0")/.."
# Beside a long run, the kernel is to kill this first, never the long run.
echo 1000 > /proc/self/oom_score_adj 2> /dev/null || true
flags="${1:?hip-solve flags, quoted}"
shift
ns=("$@")
[[ $# -gt 0 ]] || ns=(1 2 4 8 16)
target="${CARGO_TARGET_DIR:-target}"
bin="${ORCHARD_BIN:-$target/release/orchard}"
[[ -n "${ORCHARD_BIN:-}" ]] || cargo build --release --quiet --bin orchard
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
base=""
for n in "${ns[@]}"; do
  rm -f "$dir"/run.db*
  # shellcheck disable=SC2086 # flags is a list of flags
  out=$("$bin" run hip-solve $flags --workers "$n" --db "$dir/run.db" --json 2> "$dir/run.log") \
    || { echo "orchard run failed:" >&2; tail -5 "$dir/run.log" >&2; exit 1; }
  total=$(python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print(r["nodes"] + r["nodes_discarded"])' "$out")
  [[ -n "$base" ]] || base="$total"
  w=$(python3 -c "print(f'{$total / $base:.3f}')")
  winner=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["winner"])' "$out")
  echo "N=$n nodes+discarded=$total W=$w winner=$winner"
done
