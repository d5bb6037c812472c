#!/usr/bin/env bash
# McCarthy's problem (`halves`) on one board: `orchard run halves --n N`
# with WORKERS local workers (default 2), timed, printing the figures, the
# wall and CPU time and the node rate.
#
#   bench/halves.sh N [WORKERS] [DB] [extra orchard run flags...]
#
# Without DB (or with DB "-") the run uses a fresh database in a temporary
# directory: a benchmark. With DB it keeps its database there, so the same
# command resumes it after a stop (Ctrl-C or SIGTERM hand back the units in
# flight; a lost machine loses only the units then running): that is how a
# board too long for one sitting runs (n = 12: about 2.3e13 nodes by
# `orchard estimate halves --n 12 --probes 2000000`, some 80 CPU hours at
# the n = 10 node rate). Add `--backup-to FILE` for a verified copy on
# another disk, `--http 127.0.0.1:7080` for the dashboard.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/halves.sh N [WORKERS] [DB] [flags...]" >&2; exit 2; }
n="$1"
workers="${2:-2}"
db="${3:--}"
shift $(( $# < 3 ? $# : 3 ))
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
keep=1
if [ "$db" = "-" ]; then
  db="$dir/bench.db"
  keep=0
fi
/usr/bin/env time -f "%e %U %S" -o "$dir/time" \
  "$target/release/orchard" run halves --n "$n" --workers "$workers" --db "$db" --json "$@" > "$dir/out.json"
read -r wall user sys < "$dir/time"
python3 - "$dir/out.json" "$wall" "$user" "$sys" "$workers" "$keep" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, user, sys_, n = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
board = f"{r['n']} x {r['n']}" + (" without its centre" if r["centre_removed"] else "")
print(f"{board}: count = {r['count']}, cuts = {r['cuts']}, nodes = {r['nodes']:.4e}, state = {r['state']}")
print(f"workers = {n}: wall {wall:.1f} s, cpu {user + sys_:.1f} s, {r['nodes'] / max(user + sys_, 1e-9):.3e} nodes per CPU second")
if sys.argv[6] == "1":
    print(f"results file: {r.get('results_file')}")
PY
