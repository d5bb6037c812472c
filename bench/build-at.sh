#!/usr/bin/env bash
# Builds one artifact of an earlier revision in its own checkout, for the
# side-by-side benchmarks (bench/hip-speed.sh, bench/hip-speed-cluster.sh),
# once: OUT is kept and reused while it exists.
#
# Usage: bench/build-at.sh REV ARTIFACT OUT CARGO_BUILD_ARGS...
#   ARTIFACT  path under the build's target/release (examples/hip_one_core,
#             orchard)
#   OUT       where the built artifact is copied
#   bench/build-at.sh 8690597 orchard target/hip-speed/orchard-8690597 --bin orchard
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:?revision}"
artifact="${2:?artifact}"
out="${3:?output path}"
shift 3
[ -x "$out" ] && exit 0
work="$(dirname "$out")"
mkdir -p "$work"
tree="$work/tree-$rev"
rm -rf "$tree"
git worktree add --detach "$tree" "$rev" >/dev/null
(cd "$tree" && CARGO_TARGET_DIR="$(pwd)/../target-base" cargo build --release --quiet "$@")
cp "$work/target-base/release/$artifact" "$out"
git worktree remove --force "$tree"
