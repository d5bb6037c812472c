#!/usr/bin/env python3
"""Tunes the six weights of hip-solve's static move order (issue 19 part 2)
by coordinate descent on CPU time, the way `WEIGHTS`, `DOUBLE_WEIGHTS`
and `THREE_ROW_WEIGHTS` in shared/families/hip/src/order.rs were found.

  bench/hip-order-descent.py [--double] [--start W] [--base W] [--steps S]
                             [--keep R] CASE...

CASE is "R C FILE": every position of FILE (a line of cell numbers; a line
`-` is the whole game, as in bench/hip-positions/whole-game.txt), solved
cold by `hip_one_core tune R C FILE [double] W`. A candidate's score is the
geometric mean over the cases of its user CPU seconds (`/usr/bin/time`)
against those of BASE (default: the start). One weight moves by each of
STEPS (default -1,1,2) at a time; a move is kept when it scores below KEEP
(default 0.98) times the best so far, and the descent stops when a whole
sweep keeps none; with --confirm N, only if it also wins when it and the
best so far are timed in turns, N fresh runs each (the median ratio below
KEEP): the remembered times drift with the machine's load. Cases should
take a few seconds each (a tenth of a second is all noise). Each (case,
weights) is run once and remembered in target/hip-order-descent.json with
the build it ran on, so a stopped descent resumes where it was and a
rebuilt solver is timed afresh.

Why time and not nodes: the plain search of the last moves counts nodes
several times cheaper than the full search's, and an order can move nodes
from one to the other: on Double 5x6 one order found on nodes had 0.67 of
them and took 1.17 of the time (BENCHMARKS.md, "A move order of Double
Hip's own"). One run per point is noisy (a few percent, more beside a long
run), and the machine's load drifts over an hour's descent: one descent's
best scored 0.55 and timed 0.85-0.91 of the start side by side after.
Confirm the result with bench/hip-speed.sh or farm-bench against the tree
before, on cases the descent did not see.
"""
import argparse
import hashlib
import json
import math
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--double", action="store_true", help="Double Hip")
ap.add_argument("--start", help="the weights to start from, 6 comma-separated integers")
ap.add_argument("--base", help="the weights the scores are against (default: --start)")
ap.add_argument("--steps", default="-1,1,2", help="the moves of one weight, comma-separated")
ap.add_argument("--keep", type=float, default=0.98, help="keep a move below this ratio to the best")
ap.add_argument("--confirm", type=int, default=0, metavar="N",
                help="before keeping a move, time it and the best so far in turns, N fresh runs "
                     "each, and keep it only if the median ratio is below KEEP too")
ap.add_argument("cases", nargs="+", help='"R C FILE"')
a = ap.parse_args()


def integers(text, what):
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        sys.exit("hip-order-descent: %s are comma-separated integers, not %r" % (what, text))


def weights(text):
    w = integers(text, "weights")
    if len(w) != 6 or min(w) < 0:
        sys.exit("hip-order-descent: weights are six integers >= 0, not %r" % text)
    return w


cases = []
for c in a.cases:
    parts = c.split()
    if len(parts) != 3 or not os.path.isfile(parts[2]):
        sys.exit('hip-order-descent: a case is "R C FILE" with FILE a file, not %r' % c)
    cases.append(parts)
subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "orchard-hip",
                "--example", "hip_one_core"], cwd=root, check=True)
binary = os.path.join(target, "release", "examples", "hip_one_core")
# Timings are remembered per build: another solver is another measurement.
with open(binary, "rb") as f:
    build = hashlib.sha256(f.read()).hexdigest()[:16]
memo_file = os.path.join(target, "hip-order-descent.json")
memo = json.load(open(memo_file)) if os.path.exists(memo_file) else {}


def run(case, w):
    """User CPU seconds of one cold solve of the case's positions, measured now."""
    args = [binary, "tune", *case] + (["double"] if a.double else []) + [",".join(map(str, w))]
    r = subprocess.run(["/usr/bin/time", "-f", "USER %U", *args], capture_output=True, text=True)
    if r.returncode != 0:
        # The panic's message is the line after "panicked at".
        lines = [l for l in r.stderr.splitlines() if not l.startswith("USER ")] or ["no output"]
        at = [i for i, l in enumerate(lines) if "panicked at" in l]
        why = lines[at[0] + 1] if at and at[0] + 1 < len(lines) else lines[-1]
        sys.exit("hip-order-descent: %s failed: %s" % (" ".join(args[1:]), why))
    # A case that takes no measurable time still scores (0.01 s).
    return max(0.01, float(r.stderr.rsplit("USER ", 1)[1].split()[0]))


def cpu(case, w):
    """User CPU seconds of one cold solve of the case's positions, remembered."""
    key = "%s:%s:%s:%s" % (build, " ".join(case), "double" if a.double else "standard",
                           ",".join(map(str, w)))
    if key not in memo:
        memo[key] = run(case, w)
        with open(memo_file + ".tmp", "w") as f:
            json.dump(memo, f)
        os.replace(memo_file + ".tmp", memo_file)
    return memo[key]


default = "6,2,2,8,1,2" if a.double else "7,4,4,5,1,4"
best = weights(a.start or default)
base = weights(a.base) if a.base else best[:]
steps = integers(a.steps, "steps")


def score(w):
    return math.exp(sum(math.log(cpu(c, w) / cpu(c, base)) for c in cases) / len(cases))


def confirmed(w):
    """Whether `w` beats the best so far when the two are timed in turns
    (`--confirm` rounds): a point's remembered time was measured once, at
    whatever load the machine had then, and the load drifts over a descent."""
    if a.confirm <= 0:
        return True
    ratios = []
    for _ in range(a.confirm):
        logs = [math.log(run(c, w) / run(c, best)) for c in cases]
        ratios.append(math.exp(sum(logs) / len(logs)))
    median = sorted(ratios)[len(ratios) // 2]
    print("confirm", w, "against", best, " ".join("%.4f" % r for r in ratios), flush=True)
    return median < a.keep


best_score = score(best)
print("start", best, "%.4f" % best_score, [cpu(c, best) for c in cases], flush=True)
kept = True
while kept:
    kept = False
    for i in range(6):
        for d in steps:
            w = best[:]
            w[i] += d
            if w[i] < 0:
                continue
            s = score(w)
            print(w, "%.4f" % s, [cpu(c, w) for c in cases], flush=True)
            if s < best_score * a.keep and confirmed(w):
                best, best_score, kept = w, s, True
                print("kept", best, "%.4f" % best_score, flush=True)
print("final", ",".join(map(str, best)), "%.4f" % best_score, flush=True)
