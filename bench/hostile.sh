#!/usr/bin/env bash
# Hostile input, the long version of tests/hostile_input.rs: INPUTS mutated
# units, summaries, lemmas and cache snapshots per family (default
# 1,000,000) fed to every decoder of every family of this build; no decoder
# may panic. One line per family, then the total.
# Usage: bench/hostile.sh [INPUTS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
ORCHARD_FUZZ_INPUTS="${1:-1000000}" ORCHARD_FUZZ_SEED="${2:-1}" \
  /usr/bin/env time -f "%e s wall, %U s CPU" \
  cargo test --release --quiet --test hostile_input -- --nocapture 2>&1 \
  | grep -E '^(hostile:|test result|thread|.*panicked|[0-9.]+ s wall)'
