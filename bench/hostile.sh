#!/usr/bin/env bash
# Hostile input, the long versions of three test files (figures in
# BENCHMARKS.md); no decoder, and no coordinator, may panic:
# - tests/e2e/hostile_input.rs: INPUTS mutated units, summaries, lemmas and cache
#   snapshots per family (default 1,000,000) fed to every decoder of every
#   family of this build; one line per family, then the total;
# - tests/e2e/hostile_wire.rs: INPUTS mutated or hostile gRPC requests sent to a
#   real coordinator, then a clean job that must be exact;
# - tests/e2e/hostile_rows.rs: INPUTS databases with one row changed, opened by
#   the coordinator; ENDS of those that open with other figures run to the
#   end (default 200).
# Each with its wall and CPU time (the test process and the coordinator it
# started). Usage: bench/hostile.sh [INPUTS] [SEED] [ENDS] [TESTS...]
set -euo pipefail
cd "$(dirname "$0")/.."
INPUTS="${1:-1000000}"
SEED="${2:-1}"
ENDS="${3:-200}"
shift $(( $# < 3 ? $# : 3 ))
if [ $# -gt 0 ]; then TESTS=("$@"); else TESTS=(hostile_input hostile_wire hostile_rows); fi
cargo test --workspace --release --quiet --no-run --test e2e
for t in "${TESTS[@]}"; do
  echo "== $t"
  ORCHARD_FUZZ_INPUTS="$INPUTS" ORCHARD_FUZZ_WIRE_INPUTS="$INPUTS" ORCHARD_FUZZ_ROW_INPUTS="$INPUTS" \
  ORCHARD_FUZZ_ROW_ENDS="$ENDS" ORCHARD_FUZZ_SEED="$SEED" \
    /usr/bin/env time -f "%e s wall, %U s CPU" \
    cargo test --workspace --release --quiet --test e2e -- --nocapture "$t::" 2>&1 \
    | grep -E '^(hostile|test result|thread|.*panicked|[0-9.]+ s wall)'
done
