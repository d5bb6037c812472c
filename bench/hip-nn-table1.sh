#!/usr/bin/env bash
# Table 1 of Funabiki & Takefuji (1991) through the cluster: the six games,
# RUNS runs each of `orchard run hip-nn` on WORKERS local workers (fresh
# database each), one row per game: runs, converged, its 95% Wilson
# interval, mean iterations, boards verified exactly, distinct boards up to
# symmetry, and the convergence frequency and mean iterations had the
# cutoff been 100, 200 or 500 steps (from the histogram). For the two-player
# 4x4 and 6x6 games, the share of the exact draws (`orchard run hip-draws`,
# which lists every one) whose symmetry class the network found: of all
# draws, of the playable ones (n^2/2 cells each) and of those that are also
# centre-symmetric (the only ones equation (13) lets the network reach).
# Usage: bench/hip-nn-table1.sh RUNS [UPDATE] [SEED] [WORKERS] [GAMES]
#   bench/hip-nn-table1.sh 100
#   nice -n 10 bench/hip-nn-table1.sh 10000 parallel 1 2 "2:4 2:6 3:6 4:8"
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:?RUNS}"
update="${2:-parallel}"
seed="${3:-1}"
workers="${4:-2}"
games="${5:-2:4 2:6 3:6 4:8 5:10 6:12}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin orchard
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for game in $games; do
  m="${game%%:*}"
  n="${game##*:}"
  mkdir -p "$dir/$m-$n"
  /usr/bin/env time -f "%e %U" -o "$dir/time" "$target/release/orchard" run hip-nn \
    --players "$m" --size "$n" --runs "$runs" --seed "$seed" --update "$update" \
    --workers "$workers" --db "$dir/$m-$n/j.db" --json > "$dir/$m-$n/out.json" 2> /dev/null
  read -r wall user < "$dir/time"
  draws=""
  if [ "$m" = 2 ] && [ "$n" -le 6 ]; then
    "$target/release/orchard" run hip-draws --rows "$n" --cols "$n" --workers "$workers" \
      --db "$dir/$m-$n/d.db" --json > "$dir/$m-$n/draws.json" 2> /dev/null
    draws="$dir/$m-$n/draws.json"
  fi
  python3 - "$dir/$m-$n/out.json" "$wall" "$user" "$draws" << 'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, user = float(sys.argv[2]), float(sys.argv[3])
h = {int(k): v for k, v in r["histogram"].items()}
def at(cut):
    k = sum(v for i, v in h.items() if i <= cut)
    s = sum(i * v for i, v in h.items() if i <= cut)
    return f"{100 * k / r['runs']:.1f}%/{s / k:.1f}" if k else "0%/-"
lo, hi = r["convergence_ci95"]
mean = r["mean_iterations"]
print(f"{r['players']}p {r['size']}x{r['size']}: runs {r['runs']} converged {r['converged']} "
      f"({100 * r['convergence']:.1f}%, CI {100 * lo:.1f}-{100 * hi:.1f}) mean {mean if mean is None else round(mean, 1)} "
      f"verified {r['verified']} rejected {r['rejected']} distinct {r['distinct_boards']} "
      f"(patterns {r['distinct_patterns']}) | cutoff 100: {at(100)} 200: {at(200)} 500: {at(500)} "
      f"| nodes {r['nodes']} wall {wall:.2f} s cpu {user:.2f} s {r['runs'] / max(wall, 0.01):.0f} runs/s")
if sys.argv[4]:
    d = json.load(open(sys.argv[4]))
    n = r["size"]
    def images(b):
        rows = [list(x) for x in b.split("/")]
        out = set()
        for _ in range(4):
            rows = [list(x) for x in zip(*rows[::-1])]  # quarter turn
            for g in (rows, [x[::-1] for x in rows]):
                out.add("/".join("".join(x) for x in g))
        return out
    found = set()
    for line in open(r["results_file"]):
        found |= images(line.split()[0])
    all_draws = [l.strip() for l in open(d["results_file"]) if l.strip()]
    playable = [b for b in all_draws if b.count("0") == b.count("1")]
    centred = [b for b in playable if b.replace("/", "") == b.replace("/", "")[::-1]]
    share = lambda s: f"{sum(b in found for b in s)}/{len(s)}"
    print(f"   draws found (by symmetry class): all {share(all_draws)} playable {share(playable)} "
          f"centre-symmetric playable {share(centred)}")
PY
done
