#!/usr/bin/env bash
# The cost of `exec` per unit: UNITS units (a units file) of a trivial
# program (reads its unit, prints one count and `done`) through
# `orchard run` on 1 and on 2 workers; units per second of wall time.
#
#   bench/exec-units.sh [UNITS]     default 2000
set -euo pipefail
cd "$(dirname "$0")/.."
units="${1:-2000}"
cargo build --quiet --release --bin orchard
bin="$PWD/target/release/orchard"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/programs"
printf '#!/bin/sh\nread unit\necho "count units 1"\necho done\n' > "$dir/programs/trivial"
chmod +x "$dir/programs/trivial"
seq 1 "$units" > "$dir/units.txt"
for workers in 1 2; do
  start=$(date +%s.%N)
  "$bin" run --programs "$dir/programs" --workers "$workers" --db "$dir/w$workers.db" --json \
    exec --program "$dir/programs/trivial" --units-file "$dir/units.txt" > "$dir/out.json"
  end=$(date +%s.%N)
  grep -q "\"units\":$units" "$dir/out.json" || { echo "wrong count: $(cat "$dir/out.json")"; exit 1; }
  awk -v w="$workers" -v u="$units" -v s="$start" -v e="$end" \
    'BEGIN { printf "%d worker(s): %d units in %.2f s: %.0f units/s\n", w, u, e - s, u / (e - s) }'
done
