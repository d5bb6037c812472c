#!/usr/bin/env bash
# Takefuji & Lee's knight's tour network through the cluster: RUNS runs of
# `orchard run knight-nn` per board on WORKERS local workers (fresh database
# each); one row per board: single closed tours, several closed loops,
# unconverged (each with its share), the mean iterations of the converged
# runs (of tours, of several-loop runs), the loops histogram, runs/s.
# Usage: bench/knight-nn.sh RUNS [UPDATE] [SEED] [WORKERS] [BOARDS]
#   bench/knight-nn.sh 1000 parallel
#   nice -n 10 bench/knight-nn.sh 1000 sequential 1 2 "6x6 8x8 5x6"
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:?RUNS}"
update="${2:-parallel}"
seed="${3:-1}"
workers="${4:-2}"
boards="${5:-6x6 8x8 10x10 12x12 14x14 16x16 18x18 20x20 5x6 5x8 7x8 3x10 7x7}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for b in $boards; do
  r="${b%%x*}"
  c="${b##*x}"
  /usr/bin/env time -f "%e %U" -o "$dir/time" "$target/release/orchard" run knight-nn \
    --rows "$r" --cols "$c" --runs "$runs" --seed "$seed" --update "$update" \
    --workers "$workers" --db "$dir/$b.db" --json > "$dir/$b.json" 2> /dev/null
  read -r wall user < "$dir/time"
  python3 - "$dir/$b.json" "$wall" "$user" << 'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, user = float(sys.argv[2]), float(sys.argv[3])
n = r["runs"]
pct = lambda k: f"{k} ({100 * k / n:.1f}%)"
f = lambda x: "-" if x is None else f"{x:.1f}"
loops = dict(sorted((int(k), v) for k, v in r["loops"].items()))
print(f"{r['rows']}x{r['cols']}: runs {n} tours {pct(r['tours'])} several loops {pct(r['multi_loop'])} "
      f"unconverged {pct(r['unconverged'])} rejected {r['rejected']} | mean iterations {f(r['mean_iterations'])} "
      f"(tours {f(r['mean_iterations_tours'])}, loops {f(r['mean_iterations_multi_loop'])}) | loops {loops} "
      f"| nodes {r['nodes']} wall {wall:.2f} s cpu {user:.2f} s {n / max(wall, 0.01):.0f} runs/s")
PY
done
