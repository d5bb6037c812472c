#!/usr/bin/env bash
# The h(4) benchmark: `orchard run hc --columns 4` from scratch on a fresh
# database with N local workers, reporting wall time, CPU time and how busy
# the cores were. Usage: bench/hc4.sh [WORKERS] [extra orchard run flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
workers="${1:-2}"
shift || true
cargo build --release --quiet
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
/usr/bin/env time -f "%e %U %S" -o "$dir/time" \
  ./target/release/orchard run hc --columns 4 --workers "$workers" --db "$dir/bench.db" --json "$@" > "$dir/out.json"
read -r wall user sys < "$dir/time"
python3 - "$dir/out.json" "$wall" "$user" "$sys" "$workers" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, user, sys_, n = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
cores = min(n, __import__("os").cpu_count())
print(f"h(4) = {r['h']}, maximal games = {r['maximal_count']}, nodes = {r['nodes']:.4e}")
print(f"workers = {n}: wall {wall:.1f} s, cpu {user + sys_:.1f} s, cores busy {100 * (user + sys_) / (wall * cores):.1f}%, {r['nodes'] / wall:.3e} nodes/s")
PY
