#!/usr/bin/env python3
"""A running hip-solve job's whole cost, estimated from its own shape.

    bench/hip-shape-estimate.py RUNNING_DB DEPTH FINISHED...

RUNNING_DB is a running job's database (a long run's, e.g.
/work/runs/hip-5x8-double.db; read-only), DEPTH the stones of the position
to read along its first line (3: the first player's stone and the second
player's pair of a Double Hip opening), FINISHED the checkpoints of finished
runs (`runs/hip-*-double.db.xz`, or databases).

Each run's first line is the moves of its first unit in search order (the
coordinator's lease order, `units.position`) of at least DEPTH stones. On every finished run the
script reads what share of the whole the position at DEPTH along that line
took, and what share of that position its first k answers took (k: the
answers the running job has finished there, in search order). The running
job's position then costs at least what it has cost so far, and its first k
answers' nodes over a finished run's share of k; the whole, that over the
finished run's share of the whole. One estimate a finished run: the method
of docs/notes/hip-6x7.md ("The cost, estimated again from the run's own
shape"). Nodes are those of units that ended, as `bench/long-run.sh
openings` counts them.
"""

import collections
import json
import lzma
import os
import shutil
import sqlite3
import sys
import tempfile


def moves_of(payload):
    # A version byte, a length byte, the cells; a last byte of 0x80 and up
    # is the unit's window, not a move.
    if len(payload) < 2:
        return []
    return [b for b in payload[2 : 2 + payload[1]] if b < 0x80]


def read(path):
    """(rows, cols, units): units as (position, moves, state, nodes) in
    position order (the lease order: the search's)."""
    if not os.path.isfile(path):
        sys.exit("%s: no such file" % path)
    try:
        return read_db(path)
    except (sqlite3.Error, ValueError, KeyError, TypeError) as e:
        sys.exit("%s: not a hip-solve job's database (%s)" % (path, e))


def read_db(path):
    conn = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    jobs = conn.execute("SELECT family, params_json FROM jobs").fetchall()
    if len(jobs) != 1 or jobs[0][0] != "hip-solve":
        raise ValueError("%d jobs, families %s" % (len(jobs), sorted({f for f, _ in jobs})))
    p = json.loads(jobs[0][1])
    units = [
        (position, moves_of(payload), state, n)
        for position, payload, state, n in conn.execute(
            "SELECT u.position, u.payload, u.state, coalesce(r.nodes, 0) FROM units u"
            " LEFT JOIN results r ON r.unit_id = u.id ORDER BY u.position, u.id"
        )
    ]
    conn.close()
    return p["rows"], p["cols"], units


def shape(units, depth):
    """The line, the whole's nodes, the position's, and its answers in
    search order as (cell, nodes, finished)."""
    line = next((m[:depth] for _, m, _, _ in units if len(m) >= depth), None)
    if line is None:
        sys.exit("no unit of %d stones or more" % depth)
    whole = sum(n for _, _, _, n in units)
    nodes, pending, first = collections.Counter(), collections.Counter(), {}
    position = 0
    for pos, m, state, n in units:
        if m[:depth] != line:
            continue
        position += n
        if len(m) > depth:
            c = m[depth]
            nodes[c] += n
            pending[c] += state == "pending"
            first.setdefault(c, pos)
    answers = [(c, nodes[c], pending[c] == 0) for c in sorted(first, key=first.get)]
    return line, whole, position, answers


def name(cols, c):
    return "%s%d" % (chr(ord("a") + c % cols), c // cols + 1)


def open_db(path, tmp):
    if path.endswith(".xz"):
        out = os.path.join(tmp, os.path.basename(path)[:-3])
        try:
            with lzma.open(path) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
        except (OSError, lzma.LZMAError) as e:
            sys.exit("%s: %s" % (path, e))
        return out
    return path


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    running, depth, finished = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not depth.isdigit() or int(depth) == 0:
        sys.exit("DEPTH: a number of stones, not %r" % depth)
    depth = int(depth)
    rows, cols, units = read(running)
    line, whole, position, answers = shape(units, depth)
    # The answers finished before the first that is not: their share is
    # what the finished runs are read at.
    k = 0
    while k < len(answers) and answers[k][2]:
        k += 1
    done_k = sum(n for _, n, _ in answers[:k])
    print(
        "running %dx%d: %.4g nodes; position %s: %.4g so far, %d answers, the first %d finished (%.4g nodes)%s"
        % (
            rows,
            cols,
            whole,
            " ".join(name(cols, c) for c in line),
            position,
            len(answers),
            k,
            done_k,
            "; %s at %.4g and running" % (name(cols, answers[k][0]), answers[k][1])
            if k < len(answers)
            else "",
        )
    )
    with tempfile.TemporaryDirectory() as tmp:
        for path in finished:
            r, c, u = read(open_db(path, tmp))
            fline, fwhole, fposition, fanswers = shape(u, depth)
            if any(not f for _, _, f in fanswers):
                sys.exit("%s: not finished" % path)
            share = fposition / fwhole
            share_k = sum(n for _, n, _ in fanswers[:k]) / fposition if k else 0.0
            by_answers = done_k / share_k if share_k else 0.0
            est_position = max(position, by_answers)
            print(
                "%dx%d (%s): whole %.4g, position %s %.4g, %.1f%% of the whole; its first %d answers %.1f%% of it"
                " -> position %.3g, whole %.3g"
                % (
                    r,
                    c,
                    os.path.basename(path),
                    fwhole,
                    " ".join(name(c, x) for x in fline),
                    fposition,
                    100 * share,
                    k,
                    100 * share_k,
                    est_position,
                    est_position / share,
                )
            )


if __name__ == "__main__":
    main()
