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
"""
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
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
    print(f"c {'weak ' if weak else ''}Schur: [1..{n}] in {k} colours")
    print(f"p cnf {2 * n * k} {len(clauses)}")
    for c in clauses:
        print(" ".join(map(str, c)), 0)


if __name__ == "__main__":
    main()
