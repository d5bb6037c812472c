#!/usr/bin/env bash
# The template family's node rate against a plain single-threaded program
# doing the same count (examples/langford/examples/plain.rs): one core each,
# farm-bench in turn, the ratio of the medians.
#
#   bench/langford.sh [N] [RUNS]     default N = 12, RUNS = 5
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-12}"
runs="${2:-5}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --quiet --release --locked --manifest-path examples/langford/Cargo.toml --bin langford --example plain
bin="$CARGO_TARGET_DIR/release"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin/examples/plain" "$n"
"$bin/langford" run langford --n "$n" --workers 1 --db "$dir/check.db" --json |
  grep -o '"nodes":[0-9]*\|"pairings":[0-9]*' | tr '\n' ' '
echo
farm-bench -n "$runs" --warmup 1 \
  --vs "$bin/examples/plain $n" \
  -- bash -c "rm -f $dir/l.db*; $bin/langford run langford --n $n --workers 1 --db $dir/l.db --json > /dev/null"
