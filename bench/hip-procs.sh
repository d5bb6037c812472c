#!/usr/bin/env bash
# hip-solve with workers in separate processes, as on separate machines (each
# process has its own transposition table, unlike the local workers of
# `orchard run`, which share one): `orchard coordinator` on a fresh database,
# PROCS x `orchard worker --threads THREADS`, one job submitted, timed from
# submission to the result.
# Usage: [UNIT_BUDGET=N] [WORKER_FLAGS=...] bench/hip-procs.sh PROCS THREADS FLAGS...
#   bench/hip-procs.sh 2 1 --rows 5 --cols 5
#   UNIT_BUDGET=1000000 bench/hip-procs.sh 2 1 --rows 5 --cols 5   (units split every 1e6 nodes)
#   WORKER_FLAGS=--no-lemmas bench/hip-procs.sh 2 1 --rows 5 --cols 6   (workers share no lemmas)
set -euo pipefail
cd "$(dirname "$0")/.."
# Sixteen workers' tables beside a long run's can exhaust the memory: the
# kernel is to kill these processes first, never the long run.
echo 1000 > /proc/self/oom_score_adj 2> /dev/null || true
procs="${1:?processes}"
threads="${2:?threads per process}"
shift 2
target="${CARGO_TARGET_DIR:-target}"
# ORCHARD_BIN: a binary to time instead of this checkout's (to compare builds).
# KEEP_DIR=1: keep the database and the results and units files.
bin="${ORCHARD_BIN:-$target/release/orchard}"
[[ -n "${ORCHARD_BIN:-}" ]] || cargo build --release --quiet --bin orchard
dir="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
addr="http://127.0.0.1:$port"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ -n "${KEEP_DIR:-}" ]]; then echo "kept: $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT
"$bin" coordinator --db "$dir/bench.db" --listen "127.0.0.1:$port" ${UNIT_BUDGET:+--unit-budget "$UNIT_BUDGET"} \
  2> "$dir/coordinator.log" &
pids+=($!)
for i in $(seq "$procs"); do
  # shellcheck disable=SC2086 # WORKER_FLAGS is a list of flags
  "$bin" worker --coordinator "$addr" --threads "$threads" --name "bench-$i" ${WORKER_FLAGS:-} \
    2> "$dir/worker-$i.log" &
  pids+=($!)
done
sleep 1
start=$(date +%s.%N)
job=$("$bin" submit hip-solve "$@" --coordinator "$addr" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])')
while :; do
  # Exit code 3: not final (the job is not done).
  code=0
  "$bin" results "$job" --coordinator "$addr" --json > "$dir/out.json" || code=$?
  [[ $code == 0 || $code == 3 ]] || { echo "orchard results failed ($code)" >&2; exit 1; }
  state=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["state"])' "$dir/out.json")
  case "$state" in
    done) break ;;
    running | pending) sleep 0.2 ;;
    *) echo "job ended $state" >&2; cat "$dir/out.json" >&2; exit 1 ;;
  esac
done
end=$(date +%s.%N)
# The coordinator's CPU seconds (user + system) over the whole job.
coord_cpu=$(python3 -c '
import os, sys
f = open(f"/proc/{sys.argv[1]}/stat").read().rsplit(")", 1)[1].split()
print("%.2f" % ((int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")))' "${pids[0]}")
python3 - "$dir/out.json" "$start" "$end" "$procs" "$threads" "$*" "$coord_cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"hip-solve {sys.argv[6]}: winner {r['winner']} (value {r['value']}), nodes = {r['nodes']:.4e}, "
      f"discarded (searched in units cancelled as moot) = {r['nodes_discarded']:.4e}")
print(f"{sys.argv[4]} processes x {sys.argv[5]} threads: wall {wall:.1f} s, {r['nodes'] / wall:.3e} nodes/s, "
      f"lemmas shared: {r.get('lemma_bytes', 0) / 1e6:.2f} MB, coordinator CPU {sys.argv[7]} s")
PY
