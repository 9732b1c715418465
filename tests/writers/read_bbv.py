#!/usr/bin/env python3
"""Independent check of SimPoint .bb vectors: SimPoint 3.2's parsing rules
and the vectors recomputed from the ground truth.
usage: read_bbv.py FILE.bb X.truth INTERVAL [START]

SimPoint 3.2's reader (FVParser::nextLine, Utilities::loadFVFile), whose
rules are enforced here: lines are read with fgets into a 1 MiB buffer and
a line that fills it (1,048,575 bytes or more with its newline) stops the
program; lines not starting with T are skipped (none is written); a T line
is read as ":" id ":" count pairs, id an int from 1; a T line without a pair
ends the reading (the vectors after it are lost); the last line is lost
unless a newline ends it (fgets meets the end of the file).  Weights: with
-fixedLength on (the default) every vector weighs the same, with
-fixedLength off a vector weighs the sum of its counts, here its
instructions: every interval but the last holds exactly INTERVAL."""
import sys

import truth

LINE_MAX = 1024 * 1024 - 2	# with its newline; one more fills fgets' buffer
INT_MAX = 2 ** 31 - 1


def main():
    interval = int(sys.argv[3])
    text = open(sys.argv[1]).read()
    if not text.endswith("\n"):
        truth.fail("no newline at the end: SimPoint drops the last vector")
    lines = text.split("\n")
    lines.pop()
    got = []
    for n, l in enumerate(lines):
        if len(l) + 1 > LINE_MAX:
            truth.fail("line %d: %d bytes, SimPoint reads at most %d" % (n + 1, len(l) + 1, LINE_MAX))
        if not l.startswith("T"):
            truth.fail("line not starting with T: %r" % l)
        pairs = l[1:].split()
        if not pairs:
            truth.fail("empty interval")
        v = {}
        for p in pairs:
            f = p.split(":")
            if len(f) != 3 or f[0] or not f[1].isdigit() or not f[2].isdigit():
                truth.fail("line %d: bad pair %r" % (n + 1, p))
            i, c = int(f[1]), int(f[2])
            if i < 1 or i > INT_MAX or c < 1 or i in v:
                truth.fail("line %d: bad pair %r" % (n + 1, p))
            v[i] = c
        got.append(v)
    if not got:
        truth.fail("no interval")
    sums = [sum(v.values()) for v in got]
    if any(x != interval for x in sums[:-1]) or (sums and not 0 < sums[-1] <= interval):
        truth.fail("interval sizes %s, want %d (the last at most)" % (sums, interval))
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
    tail = sums[-1] if sums[-1] < interval else 0
    print("bbv: %d intervals match the ground truth%s" % (len(got), "; the last holds %d instructions: "
          "weight 1/%d under -fixedLength on, %d/%d under -fixedLength off" % (tail, len(got), tail, sum(sums))
          if tail else ""))


if __name__ == "__main__":
    main()
