#!/usr/bin/env bash
# Long runs: `orchard run FAMILY ...` jobs of hours or days, one after another
# in the background at nice 19, carried across sessions and machines. A RUN
# is named after what it computes:
#
#   hip-RxC, hip-RxC-double   hip-solve on that board (table B; a large
#                             transposition table kept on disk)
#   queens-N                  n-queens on N x N (method `ring`)
#   queens-N-mirror           the same with `--method mirror` (the method
#                             of runs/queens-*-mirror.db.xz)
#   halves-N                  McCarthy's congruent halves of the N x N board
#   knights-RxC               knight-tours (closed knight's tours) on R x C
#   draws-RxC-kK              hip-draws with K colours (the profile DP; each
#                             unit's layers within DRAWS_MIB MiB, default
#                             6144: two units run at once)
#   draws-RxC-kK-sandwich     the same count by the sandwich method (inner
#                             rows walked, outer rows counted per leaf)
#   bb-N                      busy-beaver with N states: every machine of
#                             the tree normal form decided (the last
#                             resort with Debian's CaDiCaL as --far-solver;
#                             at 5 states with Coq-BB5's largest weighted
#                             automata as --certificates)
#   weak-schur-K-N            sat: is [1..N] weakly sum-free in K colours
#                             (examples/sat/schur.py --weak), cube-and-conquer
#                             with Debian's CaDiCaL (apt-get install cadical)
#
# Each run's database lives in RUN_DIR (default /work/runs) while it runs; a
# verified, compressed copy is kept in the repository (runs/RUN.db.xz), so
# that losing the machine loses only the work since the last checkpoint, and
# so that `orchard run ... --db <copy>` prints a finished run's answer
# without searching. Its results files are in RUN_DIR/results/RUN/.
#
#   bench/long-run.sh start RUN...     build, then run them one after another
#                                      in the background at nice NICE (default
#                                      19: a queue to finish first gets, say,
#                                      NICE=15 beside another), each resumed from
#                                      RUN_DIR, else from its checkpoint; a
#                                      finished one answers at once; one
#                                      killed by a signal, as by the OOM
#                                      killer, resumes, three times at most in
#                                      a row, then the queue stops). Several
#                                      queues may run side by side (they share
#                                      the cores: one per family is usual)
#   bench/long-run.sh status [RUN...]  one line a run: state, nodes, units,
#                                      the answer (read-only); of a run that
#                                      is running, also the answer so far
#                                      from its dashboard (the counts of the
#                                      units done)
#   bench/long-run.sh openings hip-RxC[-double] [MOVE...]  nodes and units
#                                      under each opening of a Hip run, or under
#                                      each move after the line MOVE... (cells
#                                      as a1, i4), in the order the search
#                                      reached them; "finished" when no unit
#                                      under it is left (read-only)
#   bench/long-run.sh checkpoint [RUN...]  `orchard backup` of each run's
#                                      database into runs/ (commit them)
#   bench/long-run.sh stop [RUN...]    SIGTERM to every run (or to these
#                                      runs and their queues only): units in
#                                      flight hand back their rest; queues stop
set -euo pipefail
# The whole script is one block, read before any of it runs: a queue runs
# for days, and bash reads a script as it goes, so an edit of this file
# under a running queue would otherwise run whatever text now stands where
# the queue's next command was.
{
cd "$(dirname "$0")/.."
repo="$(pwd)"
run_dir="${RUN_DIR:-/work/runs}"
target="${CARGO_TARGET_DIR:-target}"
# The table of a long Hip run: as much as the machine spares beside builds,
# because below the size a search needs, half the table costs about twice the
# nodes (BENCHMARKS.md, "The table's size against the nodes"). 16 GiB, halved
# until 6 GiB of the machine's memory are left for builds and tests (this
# machine has 24 GiB: 16 GiB). Not beside a draws-* run (DRAWS_MIB each).
table_mib="${TABLE_MIB:-16384}"
if [ -z "${TABLE_MIB:-}" ]; then
  mem_mib=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
  while [ "$table_mib" -gt 1024 ] && [ $((table_mib + 6144)) -gt "$mem_mib" ]; do
    table_mib=$((table_mib / 2))
  done
fi

# RUN -> the arguments of `orchard run` (without --db), or exit 2.
args_of() {
  if [[ "$1" =~ ^hip-([0-9]+)x([0-9]+)(-double)?$ ]]; then
    echo "hip-solve --rows ${BASH_REMATCH[1]} --cols ${BASH_REMATCH[2]}" \
      "$([ -n "${BASH_REMATCH[3]}" ] && echo --double)" \
      "--cache-dir $run_dir/tables --cache-mib $table_mib"
  elif [[ "$1" =~ ^queens-([0-9]+)(-mirror)?$ ]]; then
    echo "queens --n ${BASH_REMATCH[1]} --method $([ -n "${BASH_REMATCH[2]}" ] && echo mirror || echo ring)"
  elif [[ "$1" =~ ^halves-([0-9]+)$ ]]; then
    echo "halves --n ${BASH_REMATCH[1]}"
  elif [[ "$1" =~ ^knights-([0-9]+)x([0-9]+)$ ]]; then
    echo "knight-tours --rows ${BASH_REMATCH[1]} --cols ${BASH_REMATCH[2]}"
  elif [[ "$1" =~ ^weak-schur-([0-9]+)-([0-9]+)$ ]]; then
    local programs="$run_dir/programs" cnf="$run_dir/$1.cnf"
    mkdir -p "$programs"
    ln -sf /usr/bin/cadical "$programs/cadical"
    python3 "$repo/examples/sat/schur.py" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" --weak > "$cnf"
    echo "--programs $programs sat --cnf $cnf --solver $programs/cadical --cubes 8 --conflicts 1000000 --first-model"
  elif [[ "$1" =~ ^bb-([0-9]+)$ ]]; then
    # The last resort's SAT solver: Debian's CaDiCaL, as for weak-schur-*.
    local programs="$run_dir/programs"
    mkdir -p "$programs"
    ln -sf /usr/bin/cadical "$programs/cadical"
    # At 5 states, Coq-BB5's certificates with the largest weighted
    # automata, which the last resort's searches do not find.
    local certificates=""
    if [ "${BASH_REMATCH[1]}" = 5 ]; then
      certificates=" --certificates $repo/shared/families/busy-beaver/certificates/coq-bb5-large-wfar.txt"
    fi
    echo "--programs $programs busy-beaver --states ${BASH_REMATCH[1]} --far-solver $programs/cadical$certificates"
  elif [[ "$1" =~ ^draws-([0-9]+)x([0-9]+)-k([0-9]+)-sandwich$ ]]; then
    echo "hip-draws --rows ${BASH_REMATCH[1]} --cols ${BASH_REMATCH[2]}" \
      "--colors ${BASH_REMATCH[3]} --method sandwich"
  elif [[ "$1" =~ ^draws-([0-9]+)x([0-9]+)-k([0-9]+)$ ]]; then
    echo "hip-draws --rows ${BASH_REMATCH[1]} --cols ${BASH_REMATCH[2]}" \
      "--colors ${BASH_REMATCH[3]} --method profile --memory-limit ${DRAWS_MIB:-6144}"
  else
    echo "bad run '$1' (expected hip-RxC, hip-RxC-double, queens-N, queens-N-mirror, halves-N, knights-RxC, draws-RxC-kK, draws-RxC-kK-sandwich, bb-N or weak-schur-K-N)" >&2
    exit 2
  fi
}
# Each family's dashboard on its own port, so that two queues can run.
http_of() {
  case "$1" in
  hip-*) echo "${HTTP_ADDR:-127.0.0.1:7080}" ;;
  queens-*) echo "${HTTP_ADDR:-127.0.0.1:7081}" ;;
  bb-*) echo "${HTTP_ADDR:-127.0.0.1:7083}" ;;
  *) echo "${HTTP_ADDR:-127.0.0.1:7082}" ;;
  esac
}
# Nodes per unit: a DP unit (draws-*) keeps nothing when its budget runs
# out, so its budget is unbounded and only --memory-limit splits it.
budget_of() {
  case "$1" in
  draws-*-sandwich) echo 200000000 ;;
  draws-*) echo 1000000000000000000 ;;
  # About 10 s of a core a unit (bench/bb5.sh: ~120,000 machines/s).
  bb-*) echo 1000000 ;;
  *) echo 200000000 ;;
  esac
}
db_of() { echo "$run_dir/$1.db"; }
checkpoint_of() { echo "$repo/runs/$1.db.xz"; }
# Every run with a database in RUN_DIR, when none is named.
runs_or_all() {
  if [ $# -gt 0 ]; then
    echo "$@"
  else
    for f in "$run_dir"/*.db; do
      [ -e "$f" ] || continue
      f="${f##*/}"
      [ "$f" = backup.db ] || echo -n "${f%.db} "
    done
  fi
}

case "${1:-}" in
start)
  shift
  [ $# -gt 0 ] || { echo "usage: bench/long-run.sh start RUN..." >&2; exit 2; }
  for r in "$@"; do args_of "$r" > /dev/null; done
  mkdir -p "$run_dir/tables"
  rm -f "$run_dir/stopping"
  queue="$run_dir/queue-$1.pid"
  if [ -f "$queue" ] && kill -0 "$(cat "$queue")" 2> /dev/null; then
    echo "already running (queue pid $(cat "$queue"))" >&2
    exit 1
  fi
  cargo build --release --quiet --bin orchard
  # A copy per queue: neither rebuilding the repository nor starting another
  # queue changes the binary of the runs this queue has yet to start.
  bin="$run_dir/orchard-bin-$1"
  cp "$target/release/orchard" "$bin.new"
  mv "$bin.new" "$bin"
  QUEUE_BIN="$bin" nohup nice -n "${NICE:-19}" bash "$repo/bench/long-run.sh" _queue "$@" \
    >> "$run_dir/queue.log" 2>&1 &
  echo $! > "$queue"
  echo "queue started (pid $!): $*; log $run_dir/queue.log, dashboard http://$(http_of "$1")/"
  ;;
_queue)
  shift
  for r in "$@"; do
    [ -f "$run_dir/stopping" ] && break
    read -r -a args <<< "$(args_of "$r")"
    db="$(db_of "$r")"
    checkpoint="$(checkpoint_of "$r")"
    if [ ! -f "$db" ] && [ -f "$checkpoint" ]; then
      xz -dc "$checkpoint" > "$db.restoring"
      mv "$db.restoring" "$db"
      echo "$(date -u +%FT%TZ) restored $db from $checkpoint"
    fi
    cd "$run_dir"
    # A run killed by a signal it was not sent by `stop` (the kernel's OOM
    # killer, say: a Hip run holds most of the memory) resumes from its
    # database, at most three times in a row (a run that lived an hour or
    # more starts the count again); then the queue stops rather than start
    # a larger run on a machine that cannot hold this one.
    kills=0
    while :; do
      started=$SECONDS
      echo "$(date -u +%FT%TZ) $r: start (orchard run ${args[*]})"
      RUST_LOG="${RUST_LOG:-warn}" \
        "${QUEUE_BIN:?}" run "${args[@]}" --db "$db" --workers 2 --unit-budget "$(budget_of "$r")" \
        --results-dir "$run_dir/results/$r" --http "$(http_of "$r")" \
        > "$run_dir/$r.out" 2>> "$run_dir/$r.log" &
      echo $! > "$run_dir/$r.pid"
      rc=0
      wait "$!" || rc=$?
      rm -f "$run_dir/$r.pid"
      [ "$rc" -eq 0 ] || echo "$(date -u +%FT%TZ) $r: orchard exited with $rc"
      if [ "$rc" -gt 128 ] && [ ! -f "$run_dir/stopping" ]; then
        [ $((SECONDS - started)) -lt 3600 ] || kills=0
        kills=$((kills + 1))
        if [ "$kills" -gt 3 ]; then
          echo "$(date -u +%FT%TZ) $r: killed by signal $((rc - 128)) $kills times in a row; the queue stops"
          exit 1
        fi
        echo "$(date -u +%FT%TZ) $r: killed by signal $((rc - 128)); resuming it from its database"
        sleep 10
        continue
      fi
      break
    done
    echo "$(date -u +%FT%TZ) $r: $(head -1 "$run_dir/$r.out")"
  done
  ;;
status)
  shift
  for r in $(runs_or_all "$@"); do
    db="$(db_of "$r")"
    [ -f "$db" ] || { echo "$r: no database"; continue; }
    # The dashboard speaks for this run only while this run's process lives
    # (a family's port serves whichever of its runs is running).
    live=""
    if [ -f "$run_dir/$r.pid" ] && kill -0 "$(cat "$run_dir/$r.pid")" 2> /dev/null; then
      live="$(http_of "$r")"
    fi
    python3 - "$db" "$r" "$live" << 'EOF'
import json, sqlite3, sys, urllib.request
conn = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
row = conn.execute("SELECT state, result_json FROM jobs ORDER BY id DESC LIMIT 1").fetchone()
if row is None:
    print("%s: no job yet" % sys.argv[2]); sys.exit()
state, result = row
nodes = conn.execute("SELECT coalesce(sum(nodes), 0) FROM results").fetchone()[0]
units = dict(conn.execute("SELECT state, count(*) FROM units GROUP BY state").fetchall())
r = json.loads(result or "{}").get("result", {})
if "openings" in r:
    answer = "winner=%s " % r.get("winner", "?") + " ".join(
        "%s=%s" % (x["cell"], x.get("winner", "?")) for x in r["openings"])
else:
    answer = " ".join("%s=%s" % (k, v) for k, v in r.items() if not isinstance(v, (list, dict)))
if sys.argv[3] and not answer:
    try:
        with urllib.request.urlopen("http://%s/api/jobs" % sys.argv[3], timeout=3) as f:
            jobs = json.load(f)["jobs"]
        so_far = (jobs[-1].get("interim") or {}).get("result") or {}
        answer = "so far: " + " ".join("%s=%s" % (k, v) for k, v in so_far.items()
                                       if not isinstance(v, (list, dict)) and v is not None)
    except (OSError, ValueError, KeyError, IndexError) as e:
        answer = "(dashboard http://%s: %s)" % (sys.argv[3], e)
print("%s: state=%s nodes=%.4g units=%s %s" % (sys.argv[2], state, nodes, units, answer))
EOF
  done
  ;;
openings)
  r="${2:?run}"
  [[ "$r" =~ ^hip-([0-9]+)x([0-9]+)(-double)?$ ]] || { echo "openings: a hip-RxC run" >&2; exit 2; }
  rows="${BASH_REMATCH[1]}"
  cols="${BASH_REMATCH[2]}"
  shift 2
  [ -f "$(db_of "$r")" ] || { echo "openings: no database $(db_of "$r")" >&2; exit 1; }
  # A unit's payload is its moves (a version byte, a length byte, then the
  # cells; a last byte of 0x80 and up is the unit's window, not a move):
  # cell c is named column letter + row number (c % cols, c / cols).
  python3 - "$(db_of "$r")" "$rows" "$cols" "$@" << 'EOF'
import collections, signal, sqlite3, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
rows, cols = int(sys.argv[2]), int(sys.argv[3])
name = lambda c: "%s%d" % (chr(ord("a") + c % cols), c // cols + 1)
cells = {name(c): c for c in range(rows * cols)}
line = []
for m in sys.argv[4:]:
    if m not in cells:
        sys.exit("openings: %s is not a cell of %dx%d (a1 to %s)" % (m, rows, cols, name(rows * cols - 1)))
    line.append(cells[m])
where = " ".join(sys.argv[4:]) or "the root"
conn = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
nodes, states, first = collections.Counter(), collections.defaultdict(collections.Counter), {}
q = ("SELECT u.id, u.payload, u.state, coalesce(r.nodes, 0) FROM units u"
     " LEFT JOIN results r ON r.unit_id = u.id ORDER BY u.id")
d = len(line)
for uid, payload, state, n in conn.execute(q):
    moves = [b for b in payload[2:2 + payload[1]] if b < 0x80] if len(payload) > 1 else []
    if moves[:d] != line:
        continue
    key = name(moves[d]) if len(moves) > d else "(%s itself)" % where
    nodes[key] += n
    states[key][state] += 1
    first.setdefault(key, uid)
if not nodes:
    sys.exit("openings: no unit under %s" % where)
print("%.4g nodes in done units under %s" % (sum(nodes.values()), where))
for key in sorted(nodes, key=first.get):
    # A leased unit stays pending in the database until it reports.
    print("%s %.4g nodes in done units; units %s%s" % (
        key, nodes[key], dict(sorted(states[key].items())),
        "" if states[key]["pending"] else "; finished"))
EOF
  ;;
checkpoint)
  shift
  cargo build --release --quiet --bin orchard
  for r in $(runs_or_all "$@"); do
    db="$(db_of "$r")"
    checkpoint="$(checkpoint_of "$r")"
    "$target/release/orchard" backup --db "$db" "$run_dir/backup.db"
    xz -6 -T2 -c "$run_dir/backup.db" > "$checkpoint.tmp"
    xz -t "$checkpoint.tmp"
    mv "$checkpoint.tmp" "$checkpoint"
    ls -l "$checkpoint"
  done
  ;;
stop)
  shift
  if [ $# -eq 0 ]; then
    touch "$run_dir/stopping"
    for f in "$run_dir"/*.pid; do
      [ -e "$f" ] || continue
      case "$f" in */queue-*.pid) continue ;; esac
      pid="$(cat "$f")"
      kill -TERM "$pid" 2> /dev/null || true
      while kill -0 "$pid" 2> /dev/null; do sleep 1; done
    done
    echo "stopped"
    exit 0
  fi
  # Only the queues running these runs: the queue (the run's parent) first,
  # so that it does not go on to its next run, then the run itself.
  for r in "$@"; do
    args_of "$r" > /dev/null
    f="$run_dir/$r.pid"
    pid="$(cat "$f" 2> /dev/null || true)"
    if [ -z "$pid" ] || ! kill -0 "$pid" 2> /dev/null; then
      echo "$r: not running" >&2
      continue
    fi
    queue="$(ps -o ppid= -p "$pid" | tr -d ' ')"
    kill -TERM "$queue" 2> /dev/null || true
    for q in "$run_dir"/queue-*.pid; do
      [ "$(cat "$q" 2> /dev/null)" = "$queue" ] && rm -f "$q"
    done
    kill -TERM "$pid" 2> /dev/null || true
    while kill -0 "$pid" 2> /dev/null; do sleep 1; done
    rm -f "$f"
    echo "$r: stopped (and its queue, pid $queue)"
  done
  ;;
*)
  echo "usage: bench/long-run.sh start RUN...|status [RUN...]|openings RUN|checkpoint [RUN...]|stop [RUN...]" >&2
  exit 2
  ;;
esac
exit
}
