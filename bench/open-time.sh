#!/usr/bin/env bash
# Open time on a database of many units (figures in BENCHMARKS.md, "Faults
# injected"): the test of tests/e2e/open_many_units.rs
# with UNITS unit rows (default 1,000,000), each with its result, in one
# finished job; prints the time to write them, to seal them (the store's
# own code), and for Coordinator::open to open the database (which
# recomputes every seal), wall and CPU. Usage: bench/open-time.sh [UNITS]
set -euo pipefail
cd "$(dirname "$0")/.."
UNITS="${1:-1000000}"
cargo test --workspace --release --quiet --no-run --test e2e
ORCHARD_OPEN_UNITS="$UNITS" \
  cargo test --workspace --release --quiet --test e2e -- --nocapture \
  open_many_units::a_database_of_many_units_opens_with_every_seal_checked 2>&1 \
  | grep -E '^(open time|test result|thread|.*panicked)'
