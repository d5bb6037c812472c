#!/usr/bin/env bash
# The ledger of table B (the game values of Hip and Double Hip in the source
# `002_74aa43f1fa37e893.txt`, with K. A. Franke's minMax() call counts):
# for every one of its 64 boards, orchard's own winner and node count, by
# running the search, never by copying the table.
#
#   bench/hip-table-b.sh [MAX_FRANKE_CALLS]
#
# For each board, orchard's figure comes from, in this order:
#   - its long-run checkpoint runs/hip-RxC[-double].db.xz (bench/hip-long.sh),
#     when the job in it is done: "long run";
#   - else, when Franke's count is at most MAX_FRANKE_CALLS (default 3e8),
#     a fresh `orchard run hip-solve --json` on a temporary database, two
#     local workers: "bench/hip-table-b.sh";
#   - else the long run's progress, if it has a checkpoint: "long run, running";
#   - else "not run".
# Prints one Markdown table (the README's ledger); the last column says how
# the row was obtained, and whether orchard's winner agrees with Franke's.
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${1:-3e8}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
bin="$target/release/orchard"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Table B as the source prints it: board, winner (0 draw, 1 first, 2 second),
# minMax() calls.
standard="2x2 0 25
2x3 0 151
2x4 0 513
2x5 0 3046
2x6 0 13528
2x7 0 53801
2x8 0 209741
2x9 0 966712
2x10 0 4672889
2x11 0 24160738
2x12 0 128431909
2x13 0 693940594
2x14 0 3914022690
3x3 0 1152
3x4 0 13588
3x5 0 91577
3x6 0 553238
3x7 0 9373741
3x8 0 43565423
3x9 0 1579968088
3x10 0 8326162019
3x11 2 836468053068
4x4 0 143191
4x5 0 2047147
4x6 0 33405985
4x7 2 148339665
4x8 2 2512894759
4x9 2 59706092136
5x5 2 18497405
5x6 2 238732219
5x7 2 8841991760
6x6 2 45650574451"
double="2x2 0 24
2x3 0 140
2x4 0 642
2x5 0 2677
2x6 0 12817
2x7 0 41236
2x8 0 169427
2x9 0 727970
2x10 0 3595501
2x11 0 17365736
2x12 0 89847914
2x13 0 462033442
2x14 0 2488845822
3x3 2 718
3x4 0 11738
3x5 1 42993
3x6 0 532264
3x7 2 2032602
3x8 0 43098332
3x9 1 176813342
3x10 0 6939859704
3x11 2 32870151228
4x4 0 145907
4x5 1 1076920
4x6 1 8222698
4x7 1 112612598
4x8 1 2459422890
4x9 1 146032800681
5x5 1 69554600
5x6 2 367440552
5x7 2 8024602689
6x6 2 52499400683"

# The job in a database: "state winner nodes" (winner "?" while running).
from_db() {
  python3 - "$1" << 'EOF'
import json, sqlite3, sys
conn = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
state, result = conn.execute("SELECT state, result_json FROM jobs ORDER BY id DESC LIMIT 1").fetchone()
nodes = conn.execute("SELECT coalesce(sum(nodes), 0) FROM results").fetchone()[0]
r = json.loads(result or "{}").get("result", {})
w = r.get("winner")
print(state, "?" if w is None else w, nodes)
EOF
}

echo "| board | Franke: winner | Franke: minMax calls | orchard: winner | orchard: nodes | nodes / calls | how |"
echo "|---|---|---|---|---|---|---|"
for variant in standard double; do
  rows="$standard"
  suffix=""
  label=""
  if [ "$variant" = double ]; then rows="$double"; suffix="-double"; label=" Double"; fi
  while read -r board fw calls; do
    r="${board%x*}"
    c="${board#*x}"
    checkpoint="runs/hip-$board$suffix.db.xz"
    state=""
    if [ -f "$checkpoint" ]; then
      xz -dc "$checkpoint" > "$tmp/check.db"
      read -r state ow nodes <<< "$(from_db "$tmp/check.db")"
    fi
    if [ "$state" = done ]; then
      how="long run (\`$checkpoint\`)"
    elif python3 -c "import sys; sys.exit(0 if $calls <= float('$limit') else 1)"; then
      flags=(--rows "$r" --cols "$c")
      [ "$variant" = double ] && flags+=(--double)
      "$bin" run hip-solve "${flags[@]}" --workers 2 --db "$tmp/run-$board$suffix.db" --json > "$tmp/out.json"
      read -r ow nodes <<< "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["winner"], r["nodes"])' "$tmp/out.json")"
      how="\`bench/hip-table-b.sh\`"
    elif [ -n "$state" ]; then
      ow="?"
      how="long run, running (\`$checkpoint\`: $nodes nodes so far)"
      nodes=""
    else
      ow="?"
      nodes=""
      how="not run"
    fi
    if [ -n "$nodes" ]; then
      ratio="$(python3 -c "print('%.2f' % ($nodes / $calls))")"
      nodes_fmt="$(python3 -c "print('{:,}'.format($nodes))")"
    else
      ratio=""
      nodes_fmt=""
    fi
    agree=""
    if [ "$ow" != "?" ]; then
      if [ "$ow" = "$fw" ]; then agree="; agrees"; else agree="; **differs from table B**"; fi
    fi
    calls_fmt="$(python3 -c "print('{:,}'.format($calls))")"
    echo "| $board$label | $fw | $calls_fmt | $ow | $nodes_fmt | $ratio | $how$agree |"
  done <<< "$rows"
done
