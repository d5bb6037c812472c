#!/usr/bin/env bash
# `orchard run latin` against the plain program (bench/latin-plain.c, the
# same algorithm with nothing around it), side by side on the same counts.
# Usage: bench/latin.sh ORDER [MATES true|false] [DIAGONAL true|false] [WORKERS]
# Prints each one's figures, wall and CPU time, and the ratio orchard/plain.
set -euo pipefail
cd "$(dirname "$0")/.."
order="${1:-6}"
mates="${2:-true}"
diagonal="${3:-true}"
workers="${4:-2}"
cargo build --release --quiet
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
gcc -O3 -march=x86-64 -pthread -o "$dir/latin-plain" bench/latin-plain.c
bit() { [ "$1" = true ] && echo 1 || echo 0; }

/usr/bin/env time -f "%e %U %S" -o "$dir/orchard.time" \
  ./target/release/orchard run latin --order "$order" --mates "$mates" --diagonal "$diagonal" \
  --workers "$workers" --db "$dir/bench.db" --json > "$dir/orchard.json"
/usr/bin/env time -f "%e %U %S" -o "$dir/plain.time" \
  "$dir/latin-plain" "$order" "$(bit "$mates")" "$(bit "$diagonal")" "$workers" > "$dir/plain.txt"

python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/orchard.json"))
ow, ou, os_ = map(float, open(f"{d}/orchard.time").read().split())
pw, pu, ps = map(float, open(f"{d}/plain.time").read().split())
t = r["transversals"]
print(f"orchard: reduced {r['reduced']}, with_orthogonal_mate {r['with_orthogonal_mate']}, "
      f"transversals {t['total'] if t else None}, diagonal_squares {r['diagonal_squares']}, nodes {r['nodes']}")
print("plain:   " + open(f"{d}/plain.txt").read().strip())
print(f"orchard: wall {ow:.2f} s, cpu {ou + os_:.2f} s")
print(f"plain:   wall {pw:.2f} s, cpu {pu + ps:.2f} s")
print(f"ratio orchard/plain: wall {ow / max(pw, 1e-3):.2f}, cpu {(ou + os_) / max(pu + ps, 1e-3):.2f}")
PY
