#!/usr/bin/env bash
# Runs the configurations of BENCHMARKS.md's scale table with bench/scale.sh
# and prints one markdown row per run (the full JSON lines go to
# scale-runs.jsonl in the current directory).
#
#   bench/scale-table.sh [SECONDS [WORKERS...]]
#   SECONDS: ideal makespan of each job, default 60 (a 10 s job on 1,000
#   workers measures the fan-out from one root unit more than the cluster;
#   see docs/notes/scale.md). WORKERS: the worker counts to
#   run, default 10 100 1000 10000; each at 0 and 50 ms round trips and at
#   50 ms with 20% of the workers killed at half the ideal makespan.
#   10,000 workers run with a 5 s heartbeat, 30 s leases and 10 s units
#   (a 1 s heartbeat from 10,000 workers is itself the load;
#   docs/notes/scale.md) and take 4-7 minutes a row on the 2-core VM.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
counts=("$@")
if [ ${#counts[@]} -eq 0 ]; then counts=(10 100 1000 10000); fi
out="${SCALE_OUT:-scale-runs.jsonl}"
row() {
    local line
    line=$(bench/scale.sh "$@" --seconds "$secs" 2>/dev/null | tail -1)
    echo "$line" >> "$out"
    python3 - "$line" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
print("| {workers:,} | {rtt_ms:g} | {leave:.0%} | {units:,} | {ideal_makespan_s} | {makespan_s} | {eff:.1%} | {f90} | {busy:.1%} | {reports_per_second:,} | {coordinator_cpu_seconds} | {coordinator_cpu_us_per_unit} | {rss:.0f} | {db:.1f} | {exact} |".format(
    eff=d["efficiency"], busy=d["busy_share"], f90=d["fan_out_90pct_s"], rss=d["coordinator_rss_bytes"] / 2**20, db=d["db_bytes"] / 2**20, **d))
PY
}
echo "| workers | RTT ms | leaving | units | ideal s | makespan s | efficiency | 90% busy at s | busy share | peak reports/s | coord. CPU s | CPU us/unit | coord. RSS MiB | DB MiB | exact |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# Rows recorded in BENCHMARKS.md, "Scale" (a loaded 2-core machine).
for w in "${counts[@]}"; do
    big=()
    if [ "$w" -ge 10000 ]; then
        big=(--heartbeat 5 --lease-ttl 30 --unit-seconds 10 --timeout 1500)
    fi
    row "$w" --rtt-ms 0 "${big[@]}"
    row "$w" --rtt-ms 50 "${big[@]}"
    row "$w" --rtt-ms 50 --leave 0.2 "${big[@]}"
done
