#!/usr/bin/env python3
"""A DIMACS CNF as an iCNF with the simplest cubes that cover it, for the
`sat` family's own-cubes input (what a lookahead cuber such as march_cu
writes, with cubes of its choice).

    cubes.py CNF VARS      every sign pattern of VARS (comma-separated,
                           e.g. 1,2,3): 2^len(VARS) cubes

The clauses are copied as they are; the header becomes `p inccnf`.
"""
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, vars_ = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]
    print("p inccnf")
    with open(path) as f:
        for line in f:
            if not line.startswith(("p", "c", "%")):
                sys.stdout.write(line)
    for bits in range(1 << len(vars_)):
        lits = [v if bits >> i & 1 else -v for i, v in enumerate(vars_)]
        print("a", " ".join(map(str, lits)), 0)


if __name__ == "__main__":
    main()
