#!/usr/bin/env python3
"""Independent check of SimPoint .bb vectors: SimPoint's parsing rules (only
T lines, each with at least one id:count pair, ids from 1) and the vectors
recomputed from the ground truth.  usage: read_bbv.py FILE.bb X.truth INTERVAL"""
import sys

import truth


def main():
    interval = int(sys.argv[3])
    lines = open(sys.argv[1]).read().split("\n")
    if lines[-1] == "":
        lines.pop()
    got = []
    for l in lines:
        if not l.startswith("T"):
            truth.fail("line not starting with T: %r" % l)
        pairs = l[1:].split()
        if not pairs:
            truth.fail("empty interval")
        v = {}
        for p in pairs:
            _, i, c = p.split(":")
            if int(i) < 1 or int(c) < 1:
                truth.fail("bad pair %r" % p)
            v[int(i)] = int(c)
        got.append(v)
    # Recompute: blocks = (start, branch ip, size) numbered by first execution.
    want, _ = truth.load(sys.argv[2])
    ids, vecs, cur, left = {}, [], {}, interval
    start = int(sys.argv[4], 0) if len(sys.argv) > 4 else 0
    for b in want:
        key = (start, b.ip, b.insns)
        if key not in ids:
            ids[key] = len(ids) + 1
        n = b.insns
        while n:
            k = min(n, left)
            cur[ids[key]] = cur.get(ids[key], 0) + k
            n -= k
            left -= k
            if left == 0:
                vecs.append(cur)
                cur, left = {}, interval
        start = b.dest()
    if cur:
        vecs.append(cur)
    truth.compare("bbv intervals", got, vecs)
    print("bbv: %d intervals match the ground truth" % len(got))


if __name__ == "__main__":
    main()
