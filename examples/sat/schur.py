#!/usr/bin/env python3
"""Schur and weak Schur colourings as DIMACS CNF, for the `sat` family.

    schur.py K N          [1..N] in K colours, no x + y = z in one colour
                          (x = y allowed): satisfiable iff N <= S(K)
    schur.py K N --weak   the same with x < y only (weakly sum-free):
                          satisfiable iff N <= WS(K)

S(4) = 44 and WS(4) = 66, the second the weak Schur number behind Harary's
h(4) = 67 = WS(4) + 1. Variable (i - 1) * K + c + 1 says that i has colour c.
Each number has exactly one colour. The colours' symmetry is broken by
giving 1 the first colour, and by letting colour c + 1 be used first only
after colour c ("the first number of colour c+1 is larger than the first of
colour c", through the auxiliary 'seen' variables); neither removes a
colouring up to renaming the colours, so the formula is satisfiable exactly
when some colouring is.

Two options restrict the search to colourings of a given shape (a template,
as Eliahou et al. found WS(5) >= 196): a model is still a colouring of
[1..N] by the definition, but "unsatisfiable" then speaks of the template
only.

    --prefix DIGITS       the colours of 1, 2, ... fixed (digits 1..K, renamed
                          by first appearance to fit the symmetry breaking)
    --colour-in C:LO-HI   colour C used only on LO..HI (colours counted
                          1..K in the order of their first numbers)
"""
import sys


def main():
    argv = sys.argv[1:]
    prefix, ranges, args = "", [], []
    while argv:
        a = argv.pop(0)
        if a == "--prefix":
            prefix = argv.pop(0)
        elif a == "--colour-in":
            c, span = argv.pop(0).split(":")
            lo, hi = span.split("-")
            ranges.append((int(c) - 1, int(lo), int(hi)))
        elif not a.startswith("--"):
            args.append(a)
    weak = "--weak" in sys.argv
    k, n = int(args[0]), int(args[1])
    var = lambda i, c: (i - 1) * k + c + 1
    # seen(i, c): some number <= i has colour c.
    seen = lambda i, c: n * k + (i - 1) * k + c + 1
    clauses = []
    for i in range(1, n + 1):
        clauses.append([var(i, c) for c in range(k)])
        for c in range(k):
            for d in range(c + 1, k):
                clauses.append([-var(i, c), -var(i, d)])
    for x in range(1, n + 1):
        for y in range(x + 1 if weak else x, n + 1):
            if x + y > n:
                break
            for c in range(k):
                clauses.append([-var(x, c), -var(y, c), -var(x + y, c)])
    clauses.append([var(1, 0)])
    for i in range(1, n + 1):
        for c in range(k):
            # seen(i, c) <-> colour(i) = c or seen(i - 1, c)
            prev = [seen(i - 1, c)] if i > 1 else []
            clauses.append([-seen(i, c), var(i, c)] + prev)
            clauses.append([seen(i, c), -var(i, c)])
            if prev:
                clauses.append([seen(i, c), -prev[0]])
            # colour c + 1 at i only if colour c was seen before i
            if c + 1 < k:
                clauses.append([-var(i, c + 1)] + ([seen(i - 1, c)] if i > 1 else []))
    renamed = {}
    for i, digit in enumerate(prefix, start=1):
        renamed.setdefault(digit, len(renamed))
        if i > n or renamed[digit] >= k:
            sys.exit(f"schur.py: --prefix {prefix} does not fit [1..{n}] in {k} colours")
        clauses.append([var(i, renamed[digit])])
    for c, lo, hi in ranges:
        if not 0 <= c < k:
            sys.exit(f"schur.py: --colour-in names colour {c + 1} of {k}")
        clauses.extend([-var(i, c)] for i in range(1, n + 1) if not lo <= i <= hi)
    print(f"c {'weak ' if weak else ''}Schur: [1..{n}] in {k} colours")
    print(f"p cnf {2 * n * k} {len(clauses)}")
    for c in clauses:
        print(" ".join(map(str, c)), 0)


if __name__ == "__main__":
    main()
