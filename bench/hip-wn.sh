#!/usr/bin/env bash
# Work inflation of hip-solve across machines: W(N) = nodes searched by N
# worker processes of one thread each (each its own transposition table, as
# on N machines; nodes of units cancelled as moot included) / nodes of one
# process, for each N given (default 1 2 4 8 16). On a 2-core machine the
# wall time means nothing beyond N = 2; the work does. Runs
# bench/hip-procs.sh for each N; one line per N, then W.
# Usage: [WORKER_FLAGS=...] bench/hip-wn.sh "FLAGS" [N...]
#   bench/hip-wn.sh "--rows 4 --cols 7"
#   WORKER_FLAGS="--cache-mib 256" bench/hip-wn.sh "--rows 5 --cols 6" 1 2 4
set -euo pipefail
cd "$(dirname "$0")/.."
flags="${1:?hip-solve flags, quoted}"
shift
ns=("${@:-1 2 4 8 16}")
# shellcheck disable=SC2206 # the default list is split on purpose
[[ $# -gt 0 ]] || ns=(1 2 4 8 16)
base=""
for n in "${ns[@]}"; do
  # shellcheck disable=SC2086 # flags is a list of flags
  out=$(bench/hip-procs.sh "$n" 1 $flags)
  total=$(python3 -c '
import re, sys
t = sys.stdin.read()
n = float(re.search(r"nodes = ([0-9.e+]+)", t).group(1))
d = float(re.search(r"discarded \(searched in units cancelled as moot\) = ([0-9.e+]+)", t).group(1))
print(int(n + d))' <<< "$out")
  [[ -n "$base" ]] || base="$total"
  w=$(python3 -c "print(f'{$total / $base:.3f}')")
  echo "N=$n nodes+discarded=$total W=$w | $(echo "$out" | tr '\n' ' ')"
done
