#!/usr/bin/env bash
# Predicted work inflation of hip-solve across machines, by replay: one
# worker process solves the job (bench/hip-procs.sh, database kept), then
# `orchard-scale replay` replays its scheduling with N simulated workers in
# virtual time: W(N), makespan in nodes and efficiency T(1)/(N T(N)) per N.
# Units the run never finished are searched in the replay's process (the
# census; kept in DB.census). Compare with bench/hip-wn.sh's real W(N).
# Usage: [WORKER_FLAGS=...] [REPLAY_FLAGS=...] bench/hip-replay.sh "FLAGS" [N,N,...]
#   bench/hip-replay.sh "--rows 5 --cols 5" 1,2,4,8,16,64,1024
#   WORKER_FLAGS="--cache-mib 256" REPLAY_FLAGS="--cache-mib 256" bench/hip-replay.sh "--rows 4 --cols 7"
set -euo pipefail
cd "$(dirname "$0")/.."
# A replay's tables beside a long run's: the kernel is to kill this first.
echo 1000 > /proc/self/oom_score_adj 2> /dev/null || true
flags="${1:?hip-solve flags, quoted}"
workers="${2:-1,2,4,8,16,32,64,128,256,512,1024}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet -p orchard -p orchard-scale
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086 # flags is a list of flags
KEEP_DIR=1 bench/hip-procs.sh 1 1 $flags 2> "$log"
dir=$(sed -n 's/^kept: //p' "$log")
[[ -n "$dir" ]] || { cat "$log" >&2; exit 1; }
echo "the one-worker run's database: $dir/bench.db"
# shellcheck disable=SC2086 # REPLAY_FLAGS is a list of flags
"$target/release/orchard-scale" replay "$dir/bench.db" --workers "$workers" ${REPLAY_FLAGS:-}
