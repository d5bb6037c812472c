#!/usr/bin/env bash
# Runs the configurations of BENCHMARKS.md's scale table with bench/scale.sh
# and prints one markdown row per run (the full JSON lines go to
# scale-runs.jsonl in the current directory).
#
#   bench/scale-table.sh [SECONDS]    (ideal makespan of each job, default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
out="${SCALE_OUT:-scale-runs.jsonl}"
row() {
    local line
    line=$(bench/scale.sh "$@" --seconds "$secs" --heartbeat 1 2>/dev/null | tail -1)
    echo "$line" >> "$out"
    python3 - "$line" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
print("| {workers:,} | {rtt_ms:g} | {leave:.0%} | {prefetch} | {units:,} | {ideal_makespan_s} | {makespan_s} | {eff:.1%} | {reports_per_second:,} | {reports_per_second_mean:,.0f} | {coordinator_cpu_seconds} | {rss:.0f} | {db:.1f} | {exact} |".format(
    eff=d["efficiency"], rss=d["coordinator_rss_bytes"] / 2**20, db=d["db_bytes"] / 2**20, **d))
PY
}
echo "| workers | RTT ms | leaving | prefetch | units | ideal s | makespan s | efficiency | peak reports/s | mean reports/s | coord. CPU s | coord. RSS MiB | DB MiB | exact |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# Recorded on 2026-11-24 (a loaded 2-core machine: see BENCHMARKS.md).
row 10 --rtt-ms 0
row 10 --rtt-ms 50
row 10 --rtt-ms 50 --prefetch 16
row 10 --rtt-ms 50 --prefetch 16 --leave 0.2
row 100 --rtt-ms 0 --prefetch 16
row 100 --rtt-ms 50
row 100 --rtt-ms 50 --prefetch 16
row 100 --rtt-ms 50 --prefetch 16 --leave 0.2
row 1000 --rtt-ms 0 --prefetch 16
row 10000 --rtt-ms 0 --prefetch 16 --unit-seconds 10
