#!/usr/bin/env bash
# The long runs of table B (issue "Hip to the last row"): `orchard run
# hip-solve` on one board after another, in the background at nice 19,
# carried across sessions and machines. Each board's database lives in RUN_DIR
# (default /work/runs) while it runs; a verified, compressed copy is kept in
# the repository (runs/hip-RxC.db.xz, runs/hip-RxC-double.db.xz), so that
# losing the machine loses only the work since the last checkpoint, and so
# that `orchard run hip-solve --rows R --cols C [--double] --db <copy>` prints
# a finished board's answer without searching.
#
# A BOARD is RxC or RxC-double (2x13, 3x10-double).
#
#   bench/hip-long.sh start BOARD...   build, then run the boards one after
#                                      another in the background (each resumed
#                                      from RUN_DIR, else from its checkpoint;
#                                      a finished one answers at once)
#   bench/hip-long.sh status [BOARD...] one line a board: state, nodes, units,
#                                      the openings' values (read-only)
#   bench/hip-long.sh openings BOARD   nodes and units under each opening
#   bench/hip-long.sh checkpoint [BOARD...]  `orchard backup` of each board's
#                                      database into runs/ (commit them)
#   bench/hip-long.sh stop             SIGTERM: units in flight hand back their
#                                      rest; the queue stops after it
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
run_dir="${RUN_DIR:-/work/runs}"
http="${HTTP_ADDR:-127.0.0.1:7080}"
target="${CARGO_TARGET_DIR:-target}"
# The table of a long run: as much as the machine spares beside builds and CI.
table_mib="${TABLE_MIB:-8192}"

# BOARD -> "rows cols double(0|1)"
parse() {
  if [[ "$1" =~ ^([0-9]+)x([0-9]+)(-double)?$ ]]; then
    echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} $([ -n "${BASH_REMATCH[3]}" ] && echo 1 || echo 0)"
  else
    echo "bad board '$1' (expected RxC or RxC-double)" >&2
    exit 2
  fi
}
db_of() { echo "$run_dir/hip-$1.db"; }
checkpoint_of() { echo "$repo/runs/hip-$1.db.xz"; }
# Every board with a database in RUN_DIR, when none is named.
boards_or_all() {
  if [ $# -gt 0 ]; then
    echo "$@"
  else
    for f in "$run_dir"/hip-*.db; do
      [ -e "$f" ] || continue
      f="${f##*/hip-}"
      echo -n "${f%.db} "
    done
  fi
}

case "${1:-}" in
start)
  shift
  [ $# -gt 0 ] || { echo "usage: bench/hip-long.sh start BOARD..." >&2; exit 2; }
  for b in "$@"; do parse "$b" > /dev/null; done
  mkdir -p "$run_dir/tables"
  rm -f "$run_dir/stopping"
  if [ -f "$run_dir/queue.pid" ] && kill -0 "$(cat "$run_dir/queue.pid")" 2> /dev/null; then
    echo "already running (queue pid $(cat "$run_dir/queue.pid"))" >&2
    exit 1
  fi
  cargo build --release --quiet --bin orchard
  # A copy: rebuilding the repository does not change the binary under the run.
  cp "$target/release/orchard" "$run_dir/orchard-bin"
  nohup nice -n 19 bash "$repo/bench/hip-long.sh" _queue "$@" >> "$run_dir/queue.log" 2>&1 &
  echo $! > "$run_dir/queue.pid"
  echo "queue started (pid $!): $*; log $run_dir/queue.log, dashboard http://$http/"
  ;;
_queue)
  shift
  for b in "$@"; do
    [ -f "$run_dir/stopping" ] && break
    read -r rows cols double <<< "$(parse "$b")"
    db="$(db_of "$b")"
    checkpoint="$(checkpoint_of "$b")"
    if [ ! -f "$db" ] && [ -f "$checkpoint" ]; then
      xz -dc "$checkpoint" > "$db.restoring"
      mv "$db.restoring" "$db"
      echo "$(date -u +%FT%TZ) restored $db from $checkpoint"
    fi
    flags=(--rows "$rows" --cols "$cols")
    [ "$double" = 1 ] && flags+=(--double)
    echo "$(date -u +%FT%TZ) $b: start"
    cd "$run_dir"
    RUST_LOG="${RUST_LOG:-warn}" \
      ./orchard-bin run hip-solve "${flags[@]}" --db "$db" --workers 2 \
      --cache-dir "$run_dir/tables" --cache-mib "$table_mib" \
      --unit-budget 200000000 --http "$http" > "$run_dir/hip-$b.out" 2>> "$run_dir/hip-$b.log" &
    echo $! > "$run_dir/pid"
    wait "$!" || echo "$(date -u +%FT%TZ) $b: orchard exited with $?"
    echo "$(date -u +%FT%TZ) $b: $(head -1 "$run_dir/hip-$b.out")"
  done
  rm -f "$run_dir/stopping" "$run_dir/pid"
  ;;
status)
  shift
  for b in $(boards_or_all "$@"); do
    db="$(db_of "$b")"
    [ -f "$db" ] || { echo "$b: no database"; continue; }
    python3 - "$db" "$b" << 'EOF'
import json, sqlite3, sys
conn = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
row = conn.execute("SELECT state, result_json FROM jobs ORDER BY id DESC LIMIT 1").fetchone()
if row is None:
    print("%s: no job yet" % sys.argv[2]); sys.exit()
state, result = row
nodes = conn.execute("SELECT coalesce(sum(nodes), 0) FROM results").fetchone()[0]
units = dict(conn.execute("SELECT state, count(*) FROM units GROUP BY state").fetchall())
r = json.loads(result or "{}").get("result", {})
o = " ".join("%s=%s" % (x["cell"], x.get("winner", "?")) for x in r.get("openings", []))
print("%s: state=%s winner=%s nodes=%.4g units=%s %s" % (sys.argv[2], state, r.get("winner", "?"), nodes, units, o))
EOF
  done
  ;;
openings)
  b="${2:?board}"
  read -r rows cols double <<< "$(parse "$b")"
  # A unit's payload is its moves (a version byte, a length byte, then the
  # cells): the first cell is the opening, named column letter + row number.
  python3 - "$(db_of "$b")" "$cols" << 'EOF'
import collections, sqlite3, sys
cols = int(sys.argv[2])
name = lambda c: "%s%d" % (chr(ord("a") + c % cols), c // cols + 1)
conn = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
nodes, states = collections.Counter(), collections.defaultdict(collections.Counter)
q = "SELECT u.payload, u.state, coalesce(r.nodes, 0) FROM units u LEFT JOIN results r ON r.unit_id = u.id"
for payload, state, n in conn.execute(q):
    key = name(payload[2]) if len(payload) > 2 else "root"
    nodes[key] += n
    states[key][state] += 1
for key in sorted(nodes, key=lambda k: (k[0] == "r", int(k[1:]) if k[1:].isdigit() else 0, k)):
    print("%s %.4g nodes in done units; units %s" % (key, nodes[key], dict(sorted(states[key].items()))))
EOF
  ;;
checkpoint)
  shift
  cargo build --release --quiet --bin orchard
  for b in $(boards_or_all "$@"); do
    db="$(db_of "$b")"
    checkpoint="$(checkpoint_of "$b")"
    "$target/release/orchard" backup --db "$db" "$run_dir/backup.db"
    xz -6 -T2 -c "$run_dir/backup.db" > "$checkpoint.tmp"
    xz -t "$checkpoint.tmp"
    mv "$checkpoint.tmp" "$checkpoint"
    ls -l "$checkpoint"
  done
  ;;
stop)
  touch "$run_dir/stopping"
  if [ -f "$run_dir/pid" ]; then
    pid="$(cat "$run_dir/pid")"
    kill -TERM "$pid" 2> /dev/null || true
    while kill -0 "$pid" 2> /dev/null; do sleep 1; done
  fi
  echo "stopped"
  ;;
*)
  echo "usage: bench/hip-long.sh start BOARD...|status [BOARD...]|openings BOARD|checkpoint [BOARD...]|stop" >&2
  exit 2
  ;;
esac
