#!/usr/bin/env python3
"""n-queens on orchard through `exec`: the count of the built-in `queens`
family, written as a short program in another language.

    queens.py roots N      the root units: the first two rows' queens
    queens.py explore N    one unit (its first line of stdin): its count

A unit is the columns of the queens of the first rows, e.g. "0 2".
"""
import sys


def roots(n):
    for a in range(n):
        for b in range(n):
            if abs(a - b) > 1 or n == 1:
                if n == 1:
                    print("unit 0")
                    return
                print(f"unit {a} {b}")


def explore(n, unit):
    cols = [int(c) for c in unit.split()]
    all_cols = (1 << n) - 1
    col = d1 = d2 = 0
    for row, c in enumerate(cols):
        bit = 1 << c
        if col & bit or d1 & (bit << row) or d2 & (bit << (n - 1 - row)):
            raise SystemExit(f"unit {unit!r} is no placement")
        col |= bit
        d1 |= bit << row
        d2 |= bit << (n - 1 - row)
    # Diagonals as masks shifted per row, the classic bitboard search.
    nodes = 0

    def place(row, col, left, right):
        nonlocal nodes
        nodes += 1
        if row == n:
            return 1
        total = 0
        free = all_cols & ~(col | left | right)
        while free:
            bit = free & -free
            free ^= bit
            total += place(row + 1, col | bit, ((left | bit) << 1) & all_cols, (right | bit) >> 1)
        return total

    left = right = 0
    for c in cols:
        bit = 1 << c
        left = ((left | bit) << 1) & all_cols
        right = (right | bit) >> 1
    count = place(len(cols), col, left, right)
    print(f"count solutions {count}")
    print(f"nodes {nodes}")
    print("done")


def main():
    call, n = sys.argv[1], int(sys.argv[2])
    if call == "roots":
        roots(n)
        print("done")
    elif call == "explore":
        explore(n, sys.stdin.readline().strip())
    else:
        raise SystemExit(f"unknown call {call}")


if __name__ == "__main__":
    main()
