#!/usr/bin/env bash
# The long run of standard Hip on 6x6 through the cluster (BENCHMARKS.md,
# "Long runs"; finished in session 12: second player wins), carried across sessions and machines: its
# database lives in RUN_DIR (default /work/runs) while it runs, and a
# verified, compressed copy is kept in the repository (runs/hip-6x6.db.xz),
# so that losing the machine loses only the work since the last checkpoint.
#
#   bench/hip-6x6.sh start       build, then resume the run in the background
#                                (restoring the database from the checkpoint
#                                when RUN_DIR has none)
#   bench/hip-6x6.sh status      one line: nodes, units, the openings' values
#                                (from the database when it is not running)
#   bench/hip-6x6.sh openings    nodes and units under each opening, from the
#                                database (read-only; works while it runs)
#   bench/hip-6x6.sh checkpoint  `orchard backup` of the running database,
#                                compressed into runs/hip-6x6.db.xz (commit it)
#   bench/hip-6x6.sh stop        SIGTERM: units in flight hand back their rest
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
run_dir="${RUN_DIR:-/work/runs}"
db="$run_dir/hip-6x6.db"
checkpoint="$repo/runs/hip-6x6.db.xz"
http="${HTTP_ADDR:-127.0.0.1:7080}"
target="${CARGO_TARGET_DIR:-target}"

case "${1:-}" in
start)
  mkdir -p "$run_dir/tables"
  if [ -f "$run_dir/pid" ] && kill -0 "$(cat "$run_dir/pid")" 2> /dev/null; then
    echo "already running (pid $(cat "$run_dir/pid"))" >&2
    exit 1
  fi
  cargo build --release --quiet --bin orchard
  # A copy: rebuilding the repository does not change the binary under the run.
  cp "$target/release/orchard" "$run_dir/orchard-bin"
  if [ ! -f "$db" ] && [ -f "$checkpoint" ]; then
    xz -dc "$checkpoint" > "$db.restoring"
    mv "$db.restoring" "$db"
    echo "restored $db from $checkpoint"
  fi
  cd "$run_dir"
  RUST_LOG="${RUST_LOG:-warn,orchard_worker=info}" \
    nohup ./orchard-bin run hip-solve --rows 6 --cols 6 --db "$db" --workers 2 \
    --cache-dir "$run_dir/tables" --cache-mib 8192 \
    --unit-budget 200000000 --http "$http" >> "$run_dir/hip-6x6.log" 2>&1 &
  echo $! > "$run_dir/pid"
  echo "started (pid $!), log $run_dir/hip-6x6.log, dashboard http://$http/"
  ;;
status)
  if ! json="$(curl -sf "http://$http/api/jobs")"; then
    # Not running: the job's state and answer as the database keeps them.
    python3 - "$db" << 'EOF'
import json, sqlite3, sys
conn = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
state, result = conn.execute("SELECT state, result_json FROM jobs WHERE id = 1").fetchone()
r = json.loads(result or "{}").get("result", {})
o = " ".join("%s=%s" % (x["cell"], x.get("winner", "?")) for x in r.get("openings", []))
print("not running; state=%s nodes=%s winner=%s openings: %s" % (state, r.get("nodes", "?"), r.get("winner", "?"), o))
EOF
    exit 0
  fi
  echo "$json" | python3 -c '
import json, sys, time
j = json.load(sys.stdin)["jobs"][0]
r = j["interim"]["result"] if j.get("interim") else json.loads(j.get("result_json") or "{}")
o = " ".join("%s=%s" % (x["cell"], x["winner"] if x.get("winner") is not None else "?") for x in r.get("openings", []))
print("%s state=%s nodes=%.4g units=%s/%s openings: %s" % (time.strftime("%H:%M"), j["state"], j["nodes"], j["units_done"], j["units_done"] + j["units_pending"], o))'
  ;;
openings)
  # A unit's payload is its moves (a version byte, a length byte, then the
  # cells): the first cell is the opening.
  python3 - "$db" << 'EOF'
import collections, sqlite3, sys
names = {0: "a1", 1: "b1", 2: "c1", 7: "b2", 8: "c2", 14: "c3"}
conn = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
nodes, states = collections.Counter(), collections.defaultdict(collections.Counter)
q = "SELECT u.payload, u.state, coalesce(r.nodes, 0) FROM units u LEFT JOIN results r ON r.unit_id = u.id"
for payload, state, n in conn.execute(q):
    name = names.get(payload[2], str(payload[2]))
    nodes[name] += n
    states[name][state] += 1
for name in names.values():
    print("%s %.4g nodes in done units; units %s" % (name, nodes[name], dict(sorted(states[name].items()))))
EOF
  ;;
checkpoint)
  cargo build --release --quiet --bin orchard
  "$target/release/orchard" backup --db "$db" "$run_dir/backup.db"
  xz -6 -T2 -c "$run_dir/backup.db" > "$checkpoint.tmp"
  xz -t "$checkpoint.tmp"
  mv "$checkpoint.tmp" "$checkpoint"
  ls -l "$checkpoint"
  ;;
stop)
  pid="$(cat "$run_dir/pid")"
  kill -TERM "$pid"
  while kill -0 "$pid" 2> /dev/null; do sleep 1; done
  echo "stopped"
  ;;
*)
  echo "usage: bench/hip-6x6.sh start|status|openings|checkpoint|stop" >&2
  exit 2
  ;;
esac
