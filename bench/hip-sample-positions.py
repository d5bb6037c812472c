#!/usr/bin/env python3
"""Random Hip positions a given number of stones deep, for `hip_one_core tune`
(one line per position: the cells played from the empty board, in order).

Each position is a random game: the player to move (standard Hip alternates;
Double Hip is one stone for the first player, then two per turn) plays a cell
chosen uniformly among the empty cells that do not complete a square of his
colour; a game that reaches a player with no such cell before DEPTH stones is
dropped and drawn again. `bench/hip-estimate.sh` solves such samples on the
boards whose whole cost is known and on the board to estimate.

Usage: bench/hip-sample-positions.py ROWS COLS DEPTH COUNT SEED [double]
"""
import random
import sys


def squares(rows, cols):
    """Every square of any size and tilt, as four cells (r * cols + c): the
    corners (x, y), (x + a, y + b), (x + a - b, y + b + a), (x - b, y + a)
    for a >= 1, b >= 0 list each square once (shared/families/hip/src/board.rs)."""
    out = []
    for y in range(rows):
        for x in range(cols):
            for a in range(1, max(rows, cols)):
                for b in range(0, max(rows, cols)):
                    v = [(x, y), (x + a, y + b), (x + a - b, y + b + a), (x - b, y + a)]
                    if all(0 <= cx < cols and 0 <= cy < rows for cx, cy in v):
                        out.append([cy * cols + cx for cx, cy in v])
    return out


def p1_moves(stones, double):
    if double:
        return stones == 0 or ((stones - 1) // 2) % 2 == 1
    return stones % 2 == 0


def game(rows, cols, depth, double, through, rng):
    """One random game of `depth` stones, or None if a player ran out of
    safe cells first."""
    owner = [0] * (rows * cols)
    moves = []
    for stones in range(depth):
        me = 1 if p1_moves(stones, double) else 2
        safe = [c for c in range(rows * cols) if owner[c] == 0
                and not any(all(owner[o] == me for o in sq if o != c) for sq in through[c])]
        if not safe:
            return None
        c = rng.choice(safe)
        owner[c] = me
        moves.append(c)
    return moves


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__.strip().splitlines()[-1])
    rows, cols, depth, count, seed = map(int, sys.argv[1:6])
    double = len(sys.argv) == 7 and sys.argv[6] == "double"
    through = [[] for _ in range(rows * cols)]
    for sq in squares(rows, cols):
        for c in sq:
            through[c].append(sq)
    rng = random.Random(seed)
    made = 0
    while made < count:
        moves = game(rows, cols, depth, double, through, rng)
        if moves is not None:
            print(" ".join(map(str, moves)))
            made += 1


if __name__ == "__main__":
    main()
