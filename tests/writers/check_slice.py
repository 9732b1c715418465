#!/usr/bin/env python3
"""Check a slice written by `ptconv slice --start N --count M` against the
ground truth: it must hold exactly instructions [N, N+M).
usage: check_slice.py SLICE.ptc X.truth X.ips N M"""
import sys

import read_ptc
import truth


def main():
    t = read_ptc.read(sys.argv[1])
    want, _ = truth.load(sys.argv[2])
    ips = truth.load_ips(sys.argv[3])
    n, m = int(sys.argv[4]), int(sys.argv[5])
    if t["ninsn"] != m:
        truth.fail("slice holds %d instructions, want %d" % (t["ninsn"], m))
    recs = t["recs"]
    if recs[0][0] != "gap" or recs[0][1][0] != 7 or recs[0][1][5] != ips[n]:
        truth.fail("slice does not start with a start gap at instruction %d (0x%x): %r" % (n, ips[n], recs[0]))
    exp, cum = [], 0
    for b in want:
        lo, hi = cum, cum + b.insns          # instructions [lo, hi) of this block
        cum = hi
        if hi <= n or lo >= n + m:
            continue
        if hi > n + m:
            break                            # the partial last block is the tail
        k = hi - max(lo, n)
        exp.append((b.ip, b.target, b.kind, b.taken, b.length, k))
    got = [r[1:7] for r in recs if r[0] != "gap"]
    truth.compare("slice records", got, exp)
    if sum(r[5] for r in exp) + t["tail"] != m:
        truth.fail("tail %d does not complete the slice" % t["tail"])
    if got and not recs[1][7] & 2:
        truth.fail("first record lacks the slice-start flag")
    print("slice [%d, +%d): %d records, tail %d match the ground truth" % (n, m, len(got), t["tail"]))


if __name__ == "__main__":
    main()
