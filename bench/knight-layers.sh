#!/usr/bin/env bash
# Closed knight's tours: the layers' memory and the work of the sweep before
# and after issue 18, side by side in one sitting. For each board, three runs
# of the `measure` example (the whole job in one process, no cluster): BASE's
# sweep (a git revision: 24-byte slots, two hash tables), this tree's
# `--method sweep` (16-byte slots, the layer being expanded packed) and this
# tree's `--method halves` (the default: half the sweep and a join in the
# middle). Prints the tours, the states expanded (nodes), the most states of
# one layer, the layers' bytes at their peak as the code counts them (new
# code only), CPU seconds and the maximum resident memory. Counts do not
# depend on the machine's load; CPU seconds do, a little.
#
# Usage: bench/knight-layers.sh [BASE] [RxC...]
#   BASE  default 3fc5e36 (the sweep before issue 18)
#   RxC   default 6x6 6x8 8x6 6x10 7x8
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
base="${1:-3fc5e36}"
shift || true
boards=("$@")
if [ ${#boards[@]} -eq 0 ]; then
  boards=(6x6 6x8 8x6 6x10 7x8)
fi
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
work="$target/knight-layers"
mkdir -p "$work"
# BASE's example, built from an export of BASE with a target directory of its
# own (the same crate at another path would share this tree's fingerprints).
if [ ! -x "$work/base-$base" ]; then
  tree="$work/tree-$base"
  rm -rf "$tree" && mkdir -p "$tree"
  git archive "$base" | tar -x -C "$tree"
  (cd "$tree" && CARGO_TARGET_DIR="$work/target-base" \
    cargo build --release --quiet -p orchard-knight-tours --example measure)
  cp "$work/target-base/release/examples/measure" "$work/base-$base"
  rm -rf "$tree"
fi
cargo build --release --quiet -p orchard-knight-tours --example measure
cp "$target/release/examples/measure" "$work/new"

echo "base $base, new $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- shared/families/knight-tours || echo '+changes'); $(date -u +%FT%TZ)"
printf '%-6s %-7s %20s %12s %11s %14s %8s %10s\n' board run tours nodes "peak st." "peak bytes" "CPU s" "RSS MiB"
for board in "${boards[@]}"; do
  rows="${board%x*}"
  cols="${board#*x}"
  for run in base sweep halves; do
    case "$run" in
      base) cmd=("$work/base-$base" "$rows" "$cols") ;;
      sweep) cmd=("$work/new" "$rows" "$cols" --sweep) ;;
      halves) cmd=("$work/new" "$rows" "$cols") ;;
    esac
    out=$( { /usr/bin/time -f "time %U %S %M" "${cmd[@]}" 2>&1; } 2>&1)
    tours=$(grep -oP 'tours \K[0-9]+' <<<"$out")
    nodes=$(grep -oP 'nodes \K[0-9]+' <<<"$out")
    peak=$(grep -oP ' peak \K[0-9]+' <<<"$out")
    bytes=$(grep -oP 'peak_bytes \K[0-9]+' <<<"$out" || echo -)
    read -r user sys rss < <(grep -oP '^time \K.*' <<<"$out")
    printf '%-6s %-7s %20s %12s %11s %14s %8.1f %10.0f\n' "$board" "$run" "$tours" "$nodes" \
      "$peak" "$bytes" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
  done
done
