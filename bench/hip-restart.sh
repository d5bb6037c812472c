#!/usr/bin/env bash
# What a crash costs a hip-solve job, with and without table snapshots
# (--cache-dir): `orchard run hip-solve FLAGS --workers W` is killed
# with SIGKILL after KILL_AFTER seconds and resumed with the same command on
# the same database; the time it then takes to finish (and the job's nodes:
# finished units, both lives; work in flight at the kill is not counted) is
# compared with an uninterrupted run. Snapshots are written every SAVE_SECS
# seconds.
# Usage: bench/hip-restart.sh WORKERS KILL_AFTER SAVE_SECS FLAGS...
#   bench/hip-restart.sh 2 40 10 --rows 4 --cols 7
set -euo pipefail
cd "$(dirname "$0")/.."
workers="${1:?workers}"
kill_after="${2:?seconds before the kill}"
save_secs="${3:?seconds between snapshots}"
shift 3
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
bin="$target/release/orchard"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

nodes() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['winner'], r['nodes'])" "$1"; }

# One job: $1 = name, $2 = label, $3 = "kill" or "whole", $4 = table
# directory or "", then the flags.
job() {
  local name="$1" label="$2" mode="$3" tables="$4" db="$dir/$1.db"
  shift 4
  local env=(env)
  if [ -n "$tables" ]; then
    mkdir -p "$tables"
    env+=(ORCHARD_CACHE_DIR="$tables" ORCHARD_CACHE_SAVE_SECS="$save_secs")
  fi
  if [ "$mode" = kill ]; then
    "${env[@]}" "$bin" run hip-solve "$@" --workers "$workers" --db "$db" --json > /dev/null 2>&1 &
    local pid=$!
    sleep "$kill_after"
    if ! kill -0 "$pid" 2> /dev/null; then
      echo "$label: the job ended before the kill; use a larger board or a shorter KILL_AFTER" >&2
      exit 1
    fi
    kill -KILL "$pid"
    wait "$pid" 2> /dev/null || true
  fi
  /usr/bin/env time -f "%e %U %S" -o "$dir/$name.time" \
    "${env[@]}" "$bin" run hip-solve "$@" --workers "$workers" --db "$db" --json > "$dir/$name.json" 2> /dev/null
  read -r winner n < <(nodes "$dir/$name.json")
  read -r wall user sys < "$dir/$name.time"
  printf '%-24s winner %s  nodes %.4e  to the end: wall %.1f s, cpu %.1f s\n' \
    "$label" "$winner" "$n" "$wall" "$(python3 -c "print($user + $sys)")"
}

job whole "uninterrupted" whole "" "$@"
job cold "killed, no snapshots" kill "" "$@"
job warm "killed, with snapshots" kill "$dir/tables" "$@"
