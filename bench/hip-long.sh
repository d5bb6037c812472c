#!/usr/bin/env bash
# The table-B long runs (issue "Hip to the last row"), named by board (2x13,
# 3x10-double): a front for bench/long-run.sh, which runs the long jobs of
# every family (there a Hip run is named hip-BOARD).
#
#   bench/hip-long.sh start BOARD... | status [BOARD...] | openings BOARD [MOVE...]
#                   | checkpoint [BOARD...] | stop [BOARD...]
set -euo pipefail
command="${1:-}"
shift || true
runs=()
if [ "$command" = openings ] && [ $# -gt 0 ]; then
  # One board, then the moves of a line (a1 i1): those are not boards.
  runs=("hip-$1" "${@:2}")
else
  for board in "$@"; do runs+=("hip-$board"); done
fi
exec "$(dirname "$0")/long-run.sh" "$command" "${runs[@]}"
