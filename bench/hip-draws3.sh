#!/usr/bin/env bash
# hip-draws with three colours side by side: `orchard run hip-draws --rows R
# --cols C --colors 3` (coordinator, W worker threads, a fresh database; the
# draws, the playable draws and Burnside's units for the distinct counts)
# against bench/hip-draws-plain.rs, a plain frontier DP of the draws and the
# playable draws on one core (no colour symmetry, no cluster), compiled with
# rustc -O. The two run in turn, ROUNDS times (default 1); each line gives
# the counts, wall and CPU seconds and peak memory, and the last lines the
# median ratios orchard / plain. The counts must agree.
# Usage: bench/hip-draws3.sh R C [WORKERS] [ROUNDS]
#   bench/hip-draws3.sh 5 5 2
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:?R}"
cols="${2:?C}"
workers="${3:-2}"
rounds="${4:-1}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
rustc -O --edition 2021 -o "$dir/plain" bench/hip-draws-plain.rs
for round in $(seq "$rounds"); do
  rm -rf "$dir/db" && mkdir "$dir/db"
  /usr/bin/env time -f "%e %U %S %M" -o "$dir/time" "$target/release/orchard" run \
    --workers "$workers" --db "$dir/db/d.db" hip-draws --rows "$rows" --cols "$cols" \
    --colors 3 --json > "$dir/out.json" 2> /dev/null
  read -r wall user sys rss < "$dir/time"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("orchard", r["draws"], r["playable"], r["nodes"], *sys.argv[2:])' \
    "$dir/out.json" "$wall" "$user" "$sys" "$rss" | tee -a "$dir/rows"
  /usr/bin/env time -f "%e %U %S %M" -o "$dir/time" "$dir/plain" "$rows" "$cols" 3 > "$dir/plain.out"
  read -r wall user sys rss < "$dir/time"
  read -r draws playable nodes < "$dir/plain.out"
  echo "plain $draws $playable $nodes $wall $user $sys $rss" | tee -a "$dir/rows"
done
python3 - "$dir/rows" << 'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
o = [r for r in rows if r[0] == "orchard"]
p = [r for r in rows if r[0] == "plain"]
assert all(a[1:3] == b[1:3] for a, b in zip(o, p)), "the counts differ"
# /usr/bin/time has 0.01 s resolution
med = lambda rs, i: max(statistics.median(float(r[i]) for r in rs), 0.01)
ow, oc = med(o, 4), med(o, 5) + med(o, 6)
pw, pc = med(p, 4), med(p, 5) + med(p, 6)
print(f"draws {o[0][1]}, playable {o[0][2]}; nodes orchard {o[0][3]}, plain {p[0][3]}")
print(f"median wall: orchard {ow:.2f} s, plain {pw:.2f} s, ratio {ow / pw:.3f}")
print(f"median CPU:  orchard {oc:.2f} s, plain {pc:.2f} s, ratio {oc / pc:.3f}")
print(f"peak RSS: orchard {med(o, 7) / 1024:.0f} MiB, plain {med(p, 7) / 1024:.0f} MiB")
PY
