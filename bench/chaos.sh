#!/usr/bin/env bash
# Chaos, the long version of tests/e2e/chaos.rs: ROUNDS rounds (default 10), each
# a fresh h'(4) job (hc --columns 4 --variant subsets --min-length 1) on a
# coordinator and three workers, SIGKILLed 30 times at random points of the
# job's progress (the coordinator one time in four) and restarted; every
# round's results file and node count must be byte for byte a clean run's.
# With `network`, the workers reach the coordinator through a fault proxy
# and half the 30 faults are the network's: connection resets, added
# latency, partitions shorter and longer than the 2 s lease, and one
# partition of one to three minutes a round (several minutes a round).
# Seeds SEED, SEED+1, ... (default 1): any failing round is re-run alone
# with ORCHARD_CHAOS_SEED=its seed ORCHARD_CHAOS_ROUNDS=1.
# The last line: faults of each kind, results lost and wrong, the time a
# restarted coordinator takes to answer, and the seconds of chaos.
# Usage: bench/chaos.sh [ROUNDS] [SEED] [network]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-10}"
seed="${2:-1}"
test=a_job_under_random_kills_answers_byte_for_byte_as_a_clean_run
ignored=()
if [ "${3:-}" = network ]; then
  test=a_job_under_random_kills_and_network_faults_answers_byte_for_byte_as_a_clean_run
  ignored=(--ignored)
elif [ -n "${3:-}" ]; then
  echo "bench/chaos.sh: the third argument is 'network' or nothing, not '$3'" >&2
  exit 2
fi
ORCHARD_CHAOS_ROUNDS="$rounds" ORCHARD_CHAOS_SEED="$seed" \
  cargo test --workspace --release --quiet --test e2e -- --exact "chaos::$test" "${ignored[@]}" --nocapture 2>&1 \
  | grep -E '^(chaos:|test result|thread|.*panicked|seed [0-9]+:)' -A3
