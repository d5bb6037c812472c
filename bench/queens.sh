#!/usr/bin/env bash
# n-queens side by side: `orchard run queens --n N --workers W --method M`
# (coordinator, W worker threads, a fresh database, distinct solutions
# checked and listed; M from QUEENS_METHOD, default ring) against
# bench/queens-plain.c, a plain bit-board counter of all solutions with the
# mirror halving, on W threads. The two run in turn, ROUNDS
# times (default 3); each line gives the counts, nodes, wall and CPU seconds,
# and the last lines the median ratios orchard / plain.
# Usage: [QUEENS_METHOD=ring|mirror] bench/queens.sh N [WORKERS] [ROUNDS]
#   bench/queens.sh 16 1
#   QUEENS_METHOD=mirror bench/queens.sh 18 2   (the same algorithm as plain)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:?N}"
workers="${2:-2}"
rounds="${3:-3}"
method="${QUEENS_METHOD:-ring}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cc -O3 -march=x86-64 -pthread -o "$dir/queens-plain" bench/queens-plain.c
for round in $(seq "$rounds"); do
  rm -rf "$dir/db" && mkdir "$dir/db"
  /usr/bin/env time -f "%e %U %S" -o "$dir/time" "$target/release/orchard" run queens --n "$n" \
    --method "$method" --workers "$workers" --db "$dir/db/q.db" --json > "$dir/out.json" 2> /dev/null
  read -r wall user sys < "$dir/time"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("orchard", r["solutions"], r["distinct"], r["nodes"], *sys.argv[2:])' \
    "$dir/out.json" "$wall" "$user" "$sys" | tee -a "$dir/rows"
  /usr/bin/env time -f "%e %U %S" -o "$dir/time" "$dir/queens-plain" "$n" "$workers" > "$dir/plain"
  read -r wall user sys < "$dir/time"
  read -r _ solutions nodes < "$dir/plain"
  echo "plain $solutions - $nodes $wall $user $sys" | tee -a "$dir/rows"
done
python3 - "$dir/rows" << 'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
o = [r for r in rows if r[0] == "orchard"]
p = [r for r in rows if r[0] == "plain"]
assert all(a[1] == b[1] for a, b in zip(o, p)), "the solution counts differ"
# /usr/bin/time has 0.01 s resolution
med = lambda rs, i: max(statistics.median(float(r[i]) for r in rs), 0.01)
ow, oc = med(o, 4), med(o, 5) + med(o, 6)
pw, pc = med(p, 4), med(p, 5) + med(p, 6)
print(f"solutions {o[0][1]}, distinct {o[0][2]}; nodes orchard {o[0][3]}, plain {p[0][3]}")
print(f"median wall: orchard {ow:.2f} s, plain {pw:.2f} s, ratio {ow / pw:.3f}")
print(f"median CPU:  orchard {oc:.2f} s, plain {pc:.2f} s, ratio {oc / pc:.3f}")
print(f"nodes per CPU second: orchard {float(o[0][3]) / oc:.3e}, plain {float(p[0][3]) / pc:.3e}")
PY
