#!/usr/bin/env bash
# A longer lying-worker run than CI's (tests/e2e/replicas.rs): ROUNDS verified
# synthetic jobs (20 million nodes, 64 root units, --replicas 2) on a
# coordinator and three honest one-thread workers, each job beside a fresh
# client that explores honestly and adds one node to about every other
# report until it is shut out. Prints lies told and found; the test fails
# if a lie is not found or an answer differs from an unverified run's.
#
#   bench/liar.sh [ROUNDS]     (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-20}
ORCHARD_LIAR_ROUNDS=$ROUNDS cargo test --workspace --release --test e2e -- --ignored \
    --nocapture replicas::many_lies_are_all_found_and_no_answer_is_wrong 2>&1 | grep -E "^liar:|test result|panicked"
