#!/usr/bin/env bash
# Chaos, the long version of tests/chaos.rs: ROUNDS rounds (default 10), each
# a fresh h'(4) job (hc --columns 4 --variant subsets --min-length 1) on a
# coordinator and three workers, SIGKILLed 30 times at random points of the
# job's progress (the coordinator one time in four) and restarted; every
# round's results file and node count must be byte for byte a clean run's.
# Seeds SEED, SEED+1, ... (default 1): any failing round is re-run alone
# with ORCHARD_CHAOS_SEED=its seed ORCHARD_CHAOS_ROUNDS=1.
# The last line: kills of each kind, results lost and wrong, the time a
# restarted coordinator takes to answer, and the seconds of chaos.
# Usage: bench/chaos.sh [ROUNDS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-10}"
seed="${2:-1}"
ORCHARD_CHAOS_ROUNDS="$rounds" ORCHARD_CHAOS_SEED="$seed" \
  cargo test --release --quiet --test chaos -- --nocapture 2>&1 \
  | grep -E '^(chaos:|test result)'
