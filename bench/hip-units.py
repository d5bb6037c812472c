#!/usr/bin/env python3
"""Where a hip-solve job's nodes went, unit by unit: reads the database that
`KEEP_DIR=1 bench/hip-procs.sh ...` (or `bench/hip-wn.sh`) keeps and prints,
per unit depth (stones of its moves), the nodes kept (reported) and discarded
(searched in units cancelled as moot), and how many leased units are
transpositions of another (equal stones up to the board's symmetries). With a
second directory (a one-process run of the same job), also the nodes the
units done in both took beyond the one process's. --units lists every leased
unit (moves, state, nodes, discarded, worker).

Usage: bench/hip-units.py DIR ROWS COLS [BASE_DIR] [--units]
  bench/hip-units.py /tmp/tmp.XXXX 5 5 /tmp/tmp.YYYY
"""
import collections
import sqlite3
import sys


def symmetries(rows, cols):
    fs = [lambda r, c: (r, c), lambda r, c: (rows - 1 - r, c),
          lambda r, c: (r, cols - 1 - c), lambda r, c: (rows - 1 - r, cols - 1 - c)]
    if rows == cols:
        fs += [lambda r, c: (c, r), lambda r, c: (cols - 1 - c, r),
               lambda r, c: (c, rows - 1 - r), lambda r, c: (cols - 1 - c, rows - 1 - r)]
    cells = [(r, c) for r in range(rows) for c in range(cols)]
    return [[f(r, c)[0] * cols + f(r, c)[1] for (r, c) in cells] for f in fs]


def units(d):
    db = sqlite3.connect(f"{d}/bench.db")
    # A unit's payload: a format byte, the length, the moves (cells).
    return [(bytes(p[2:]), st, lc, dn, n or 0, w or "")
            for (p, st, lc, dn, n, w) in db.execute(
                "SELECT u.payload, u.state, u.lease_count, u.discarded_nodes, r.nodes, r.worker "
                "FROM units u LEFT JOIN results r ON r.unit_id = u.id ORDER BY u.position")]


def main():
    args = [a for a in sys.argv[1:] if a != "--units"]
    d, rows, cols = args[0], int(args[1]), int(args[2])
    base = {m: n for (m, _, _, _, n, _) in units(args[3]) if n} if len(args) > 3 else {}
    syms = symmetries(rows, cols)

    def key(m):
        # Standard Hip: the first player's stones are the even moves.
        return min((tuple(sorted(s[c] for c in m[0::2])), tuple(sorted(s[c] for c in m[1::2])))
                   for s in syms)

    all_units = units(d)
    leased = [u for u in all_units if u[2] > 0]
    kept, disc, nk, nd = (collections.Counter() for _ in range(4))
    for (m, st, lc, dn, n, w) in leased:
        if "--units" in sys.argv:
            print(f"{list(m)} {st} nodes={n} discarded={dn} {w}")
        kept[len(m)] += n
        nk[len(m)] += n > 0
        disc[len(m)] += dn
        nd[len(m)] += dn > 0
    print(f"units {len(all_units)}, leased {len(leased)}; kept {sum(kept.values()):,}, "
          f"discarded {sum(disc.values()):,}")
    for depth in sorted(kept):
        print(f"  depth {depth}: kept {kept[depth]:,} in {nk[depth]} units, "
              f"discarded {disc[depth]:,} in {nd[depth]} units")
    groups = collections.defaultdict(list)
    for (m, st, lc, dn, n, w) in leased:
        groups[key(m)].append(n + dn)
    dup = [g for g in groups.values() if len(g) > 1]
    print(f"  transpositions: {len(dup)} groups, {sum(sum(g) - max(g) for g in dup):,} nodes "
          "in the copies")
    if base:
        both = [(m, n) for (m, _, _, _, n, _) in leased if n and m in base]
        extra = sum(n - base[m] for (m, n) in both)
        print(f"  units done here and in the base run: {len(both)}, nodes beyond the base's: "
              f"{extra:,}")


main()
