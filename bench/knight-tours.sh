#!/usr/bin/env bash
# Closed knight's tours through the cluster: `orchard run knight-tours --rows R
# --cols C --workers 2` on a fresh database for each board given, one line
# each: the board, the tours, the states expanded (nodes), the peak states of
# one layer, wall and CPU seconds and the peak memory (maximum resident KiB).
# Usage: bench/knight-tours.sh RxC [RxC ...]
#   bench/knight-tours.sh 3x30 5x14 6x10
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for board in "$@"; do
  rows="${board%x*}"
  cols="${board#*x}"
  rm -rf "$dir/db" && mkdir "$dir/db"
  /usr/bin/env time -f "%e %U %S %M" -o "$dir/time" "$target/release/orchard" run knight-tours \
    --rows "$rows" --cols "$cols" --workers 2 --db "$dir/db/k.db" --json > "$dir/out.json" 2> /dev/null
  read -r wall user sys rss < "$dir/time"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], "tours", r["tours"], "nodes", r["nodes"], "peak", r["peak_states"], "wall", sys.argv[3], "cpu", round(float(sys.argv[4])+float(sys.argv[5]),2), "maxrss_kib", sys.argv[6])' \
    "$dir/out.json" "$board" "$wall" "$user" "$sys" "$rss"
done
