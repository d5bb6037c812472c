#!/usr/bin/env bash
# The coordinator's scale: the real coordinator (a child `orchard
# coordinator`: real gRPC on 127.0.0.1, real SQLite with fsync) against
# WORKERS simulated workers in one process, each speaking the real protocol
# and exploring a heavy-tailed `synthetic` tree in virtual time.
#
#   bench/scale.sh WORKERS [OPTIONS]      (options: target/release/orchard-scale --help)
#   e.g. bench/scale.sh 1000 --rtt-ms 50 --leave 0.2
#
# The last line is one JSON object: workers, efficiency (ideal makespan /
# measured makespan), reports_per_second (peak over one second, durable:
# each acknowledged after its commit), coordinator_cpu_seconds,
# coordinator_rss_bytes (peak), db_bytes, exact (the merged count and
# checksum are the tree's), and more. Results: BENCHMARKS.md, "Scale".
#
# File descriptors: every simulated worker has its own HTTP/2 connection, as
# a machine would (10,000 workers: 10,000 sockets on each side), so the soft
# limit is raised to the hard one here; --connections C shares C.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 ]]; then
    echo "usage: bench/scale.sh WORKERS [OPTIONS]" >&2
    exit 2
fi
ulimit -n "$(ulimit -Hn)"
cargo build --release -q -p orchard -p orchard-scale
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
exec "$CARGO_TARGET_DIR/release/orchard-scale" --orchard "$CARGO_TARGET_DIR/release/orchard" "$@"
