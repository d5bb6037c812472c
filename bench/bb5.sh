#!/usr/bin/env bash
# The busy-beaver pipeline on samples of the 5-state tree: for each seed,
# SAMPLES subtrees at depth DEPTH (drawn uniformly from the 19,384 there)
# explored whole in one thread, every stage timed, each machine also run
# plainly for the step limit (the rate of a simulator that decides
# nothing). Prints per seed the machines/s, what each stage settles and
# costs, the undecided machines, the estimate for the whole tree
# (machines, undecided, CPU hours of a full run at this machine's speed),
# and the node rate: the sample's halting machines run to their halt
# (steps counted exactly) in the pipeline's watched run, in its plain
# simulator and in a plain array-tape simulator, steps/s and ratios.
# With LAST=1 it runs instead the last-resort stage alone on the undecided
# machines of a results file (RESULTS, a 5-state run's), one line per
# machine: verdict, certificate check, time; with FAR_SOLVER=FILE the last
# resort asks that SAT solver for DFAs (as `--far-solver`), and FAR_ONLY=1
# runs that step alone.
#
#   bench/bb5.sh                      # seeds 1 2 3, 400 subtrees each
#   SEEDS="7" SAMPLES=1000 bench/bb5.sh
#   PARAMS='{"long_limit":0}' bench/bb5.sh
#   PARAMS='{"last_resort":true}' bench/bb5.sh   # as `orchard run` does;
#                                     # without it the sample skips the last
#                                     # resort (minutes a machine it fails on)
#   LAST=1 RESULTS=results/job-1-busy-beaver.txt bench/bb5.sh
#   LAST=1 FAR_SOLVER=/usr/bin/cadical FAR_ONLY=1 RESULTS=... bench/bb5.sh
#
# Each run is bounded (timeout 1200 s) and niced: the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-"1 2 3"}
SAMPLES=${SAMPLES:-400}
DEPTH=${DEPTH:-5}
PARAMS=${PARAMS:-'{}'}
TARGET=${CARGO_TARGET_DIR:-/work/target-bb}
if [ "${LAST:-0}" = 1 ]; then
  RESULTS=${RESULTS:?LAST=1 needs RESULTS, a results file of a 5-state run}
  CARGO_TARGET_DIR=$TARGET nice -n 10 cargo build -q -p orchard-busy-beaver --release --example bb_last
  far=()
  [ -n "${FAR_SOLVER:-}" ] && far+=(--far-solver "$FAR_SOLVER")
  [ "${FAR_ONLY:-0}" = 1 ] && far+=(--far-only)
  exec nice -n 19 "$TARGET/release/examples/bb_last" "${far[@]}" --results "$RESULTS"
fi
CARGO_TARGET_DIR=$TARGET nice -n 10 cargo build -q -p orchard-busy-beaver --release --example bb5_sample
for seed in $SEEDS; do
  echo "== seed $seed, $SAMPLES subtrees at depth $DEPTH, params $PARAMS"
  timeout 1200 nice -n 19 "$TARGET/release/examples/bb5_sample" \
    --states 5 --depth "$DEPTH" --samples "$SAMPLES" --seed "$seed" --list 50 --params "$PARAMS"
done
