#!/usr/bin/env bash
# The `sat` family's solver, two ways: Debian's `cadical` binary one process
# per cube (as the family runs it) against CaDiCaL 2.2.1 in process through
# rustsat-cadical (a fresh solver per cube, and one incremental solver with
# each cube as assumptions), on the family's own cubes, same conflict limit,
# same dynamic splitting. Also a `cadical` 2.2.1 binary compiled from the
# binding's bundled source, to tell the solver's version from the process.
# The program is bench/sat-inprocess/, a package outside the workspace (its
# own Cargo.lock): CaDiCaL's C++ and bindgen never enter orchard's build.
# Needs g++, python3, and libclang for bindgen (installed with apt-get when
# missing). Notes: docs/notes/sat.md.
#
#   bench/sat-inprocess.sh check CNF [K]
#       every mode once, one after the other: each mode's calls, verdicts
#       and wall time, the verdicts compared cube by cube (models checked);
#       per-cube times in CNF.per-cube.tsv
#   bench/sat-inprocess.sh time CNF K MODE_A MODE_B [RUNS]
#       MODE_A and MODE_B as whole processes in turn, A B A B ... (RUNS
#       pairs, default 5, after one warm-up pair): each run's wall time,
#       the medians of wall and CPU time (the solver's processes
#       included), and the medians of the pairwise ratios A/B. A mode:
#       process (Debian's binary through exec's call), process-221 (the
#       2.2.1 binary, same call), spawn (Debian's binary, plain spawn and
#       wait), fresh, incremental
#
# K: root cubes' variables (2^K cubes), as `orchard run sat --cubes K`;
# default 6. CONFLICTS in the environment: the conflict limit per call
# (default the family's, 200000).
#
#   examples/sat/schur.py 4 45 > s45.cnf
#   bench/sat-inprocess.sh check s45.cnf 6
#   bench/sat-inprocess.sh time s45.cnf 8 process fresh 3
set -euo pipefail
what="${1:?usage: bench/sat-inprocess.sh check|time CNF [K] ...}"
cnf=$(realpath "${2:?a CNF file}")
cd "$(dirname "$0")/.."
root=$PWD
k="${3:-6}"
conflicts="${CONFLICTS:-200000}"

# bindgen loads libclang.so at build time; Debian ships it in libclang-dev.
if ! ldconfig -p | grep -qE 'libclang(-[0-9.]+)?\.so' && [ -z "${LIBCLANG_PATH:-}" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get install -y libclang-dev
fi
command -v cadical > /dev/null || { echo "Debian's cadical is missing: apt-get install cadical" >&2; exit 1; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/bench/sat-inprocess/target}"
manifest="$root/bench/sat-inprocess/Cargo.toml"
cargo build --quiet --release --locked --manifest-path "$manifest"
bin="$CARGO_TARGET_DIR/release/sat-inprocess"

# The same CaDiCaL as the binding, as a binary: its bundled source built
# with the flags the binding's build script uses (-O3 -DNDEBUG
# -DNCONTRACTS -DNTRACING, its C++ extension), cadical.cpp as the main
# program: the very code the binding runs. The crate ships src/ only (no
# configure, no makefile), so the files are compiled here the way
# CaDiCaL's makefile would.
cad221="$CARGO_TARGET_DIR/cadical-2.2.1/cadical"
if [ ! -x "$cad221" ]; then
  crate=$(cargo metadata --quiet --format-version 1 --locked --manifest-path "$manifest" |
    python3 -c 'import json, os, sys
m = json.load(sys.stdin)
p = [p for p in m["packages"] if p["name"] == "rustsat-cadical"][0]
print(os.path.dirname(p["manifest_path"]))')
  src="$crate/cppsrc"
  [ "$(cat "$src/VERSION")" = 2.2.1 ] || { echo "$src: not CaDiCaL 2.2.1" >&2; exit 1; }
  out="$CARGO_TARGET_DIR/cadical-2.2.1"
  mkdir -p "$out/obj"
  printf '#define VERSION "2.2.1"\n#define IDENTIFIER "rustsat-cadical cppsrc"\n#define COMPILER "g++"\n#define FLAGS "-O3 -DNDEBUG -DNCONTRACTS -DNTRACING"\n#define DATE "%s"\n' \
    "$(date -u +%F)" > "$out/build.hpp"
  flags=(-O3 -DNDEBUG -DNCONTRACTS -DNTRACING -I"$out" -I"$src/src" -I"$crate/cpp-extension")
  gcc -std=c99 "${flags[@]}" -c "$src/src/kitten.c" -o "$out/obj/kitten.o"
  for f in "$src"/src/*.cpp; do
    # the model-based tester and the C and IPASIR interfaces: not the binary
    case "$(basename "$f")" in mobical.cpp | ccadical.cpp | ipasir.cpp) continue ;; esac
    [ -f "$out/obj/$(basename "$f" .cpp).o" ] && continue
    echo "$f"
  done | xargs -P "$(nproc)" -I{} sh -c 'g++ '"${flags[*]}"' -c "$1" -o "$2/obj/$(basename "$1" .cpp).o"' _ {} "$out"
  g++ -O3 -o "$cad221" "$out"/obj/*.o
fi
"$cad221" --version | grep -qx 2.2.1

mode_args() {
  case "$1" in
    process) echo "--modes process --solver $(command -v cadical)" ;;
    process-221) echo "--modes process --solver $cad221" ;;
    spawn) echo "--modes spawn --solver $(command -v cadical)" ;;
    fresh | incremental) echo "--modes $1" ;;
    *) echo "unknown mode $1" >&2; exit 2 ;;
  esac
}

case "$what" in
  check)
    "$bin" --cnf "$cnf" --cubes "$k" --conflicts "$conflicts" \
      --modes process,spawn,fresh,incremental --solver "$(command -v cadical)" --solver "$cad221" \
      --per-cube "$cnf.per-cube.tsv"
    ;;
  time)
    a="${4:?MODE_A}" b="${5:?MODE_B}" runs="${6:-5}"
    read -ra args_a <<< "$(mode_args "$a")"
    read -ra args_b <<< "$(mode_args "$b")"
    walls=$(mktemp)
    trap 'rm -f "$walls" "$walls.one"' EXIT
    for _ in $(seq 0 "$runs"); do # the first pair warms up and is not counted
      for m in a b; do
        if [ "$m" = a ]; then margs=("${args_a[@]}"); else margs=("${args_b[@]}"); fi
        # wall, user and system seconds, the solver processes included
        /usr/bin/time -f "%e %U %S" -o "$walls.one" \
          "$bin" --cnf "$cnf" --cubes "$k" --conflicts "$conflicts" "${margs[@]}" > /dev/null
        echo "$m $(cat "$walls.one")" >> "$walls"
      done
    done
    python3 - "$walls" "$a" "$b" << 'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
runs = {m: [(float(w), float(u) + float(s)) for n, w, u, s in rows if n == m][1:] for m in "ab"}
for m, name in zip("ab", sys.argv[2:4]):
    w = [x for x, _ in runs[m]]
    c = [y for _, y in runs[m]]
    print(f"{name}: wall " + " ".join(f"{x:.2f}" for x in w) + f" s, median {statistics.median(w):.2f} s; "
          f"CPU median {statistics.median(c):.2f} s")
for i, what in enumerate(["wall", "CPU"]):
    r = [x[i] / max(y[i], 0.01) for x, y in zip(runs["a"], runs["b"])]  # time's resolution
    print(f"{what} {sys.argv[2]}/{sys.argv[3]}, pair by pair: median {statistics.median(r):.2f} "
          f"(min {min(r):.2f}, max {max(r):.2f})")
EOF
    ;;
  *) echo "usage: bench/sat-inprocess.sh check|time CNF [K] ..." >&2; exit 2 ;;
esac
