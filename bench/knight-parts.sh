#!/usr/bin/env bash
# knight-tours' meeting parts through a real cluster of processes: one
# coordinator and WORKERS (default 2) worker processes, each worker under
# /usr/bin/time -v (its CPU and peak RSS), the job `knight-tours --rows R
# --cols C` with `--method halves` (the default) and its part units.
#
#   bench/knight-parts.sh R C [extra knight-tours flags...]
#
# Prints the answer (tours, nodes, rebuilt_states), the wall time, each
# worker's user+sys CPU and maximum RSS, and the largest report's stored
# bytes: per unit, its summary plus the units it handed back (payload and
# position), from the coordinator's database; the gRPC message adds its
# framing to that. The coordinator's --unit-budget is UNIT_BUDGET (default
# 200000000, as bench/long-run.sh: the root unit sweeps to the meeting in
# one go and hands back the parts). Everything runs in a temporary
# directory, removed after.
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:?rows}"
cols="${2:?cols}"
shift 2
workers="${WORKERS:-2}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
case "$target" in
/*) bin="$target/release/orchard" ;;
*) bin="$(pwd)/$target/release/orchard" ;;
esac
tmp="$(mktemp -d /tmp/knight-parts.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null && wait "$p" 2> /dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$port"
"$bin" coordinator --listen "127.0.0.1:$port" --db "$tmp/coord.db" \
  --results-dir "$tmp/results" --unit-budget "${UNIT_BUDGET:-200000000}" > "$tmp/coordinator.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  "$bin" status --coordinator "$url" --json > /dev/null 2>&1 && break
  sleep 0.2
done
start=$(date +%s.%N)
job="$("$bin" submit knight-tours --rows "$rows" --cols "$cols" "$@" --coordinator "$url" --json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["job_id"])')"
times=()
for i in $(seq "$workers"); do
  /usr/bin/time -v -o "$tmp/worker-$i.time" "$bin" worker --coordinator "$url" --threads 1 \
    --name "worker-$i" > "$tmp/worker-$i.log" 2>&1 &
  times+=($!)
done
while :; do
  state="$("$bin" status "$job" --coordinator "$url" --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])')"
  [ "$state" = running ] || break
  sleep 1
done
end=$(date +%s.%N)
# SIGTERM to each worker (the child of its /usr/bin/time), then its figures.
for t in "${times[@]}"; do
  w="$(pgrep -P "$t" || true)"
  [ -n "$w" ] && kill -TERM "$w" 2> /dev/null || true
done
for t in "${times[@]}"; do wait "$t" || true; done
"$bin" results "$job" --coordinator "$url" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("state=%s tours=%s nodes=%s rebuilt_states=%s peak_table_bytes=%s" % (
    r.get("state"), r.get("tours"), r.get("nodes"), r.get("rebuilt_states"),
    r.get("peak_table_bytes")))'
echo "wall $(python3 -c "print('%.1f s' % ($end - $start))") for $workers workers"
for i in $(seq "$workers"); do
  python3 - "$tmp/worker-$i.time" "$i" << 'EOF'
import sys
f = dict(l.strip().split(": ", 1) for l in open(sys.argv[1]) if ": " in l)
cpu = float(f["User time (seconds)"]) + float(f["System time (seconds)"])
print("worker %s: cpu %.1f s, max RSS %.0f MiB" % (sys.argv[2], cpu,
      int(f["Maximum resident set size (kbytes)"]) / 1024))
EOF
done
python3 - "$tmp/coord.db" << 'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
units, parts = c.execute("SELECT count(*), max(length(payload)) FROM units").fetchone()
row = c.execute("""
  SELECT p.id,
         coalesce((SELECT length(summary) FROM results r WHERE r.unit_id = p.id), 0),
         coalesce((SELECT sum(length(payload) + length(position)) FROM units k
                   WHERE k.parent_id = p.id), 0)
  FROM units p ORDER BY 2 + 3 DESC LIMIT 1""").fetchone()
print("units %d, largest unit payload %d bytes; largest report: unit %d, summary %d + "
      "handed back %d = %d bytes" % (units, parts, row[0], row[1], row[2], row[1] + row[2]))
EOF
