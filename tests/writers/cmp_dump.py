#!/usr/bin/env python3
"""The reader library against the independent reader, on any .ptc (of any
format version read_ptc.py knows): `ptconv dump FILE` (libptconv-trace)
must list exactly the records read_ptc.py decodes from the man page.
usage: ptconv dump FILE.ptc | cmp_dump.py FILE.ptc"""
import sys

import read_ptc
import truth

KINDS = ["jmp", "jmp-ind", "call", "call-ind", "ret", "cond", "far"]


def main():
    t = read_ptc.read(sys.argv[1])
    want = []
    for i, r in enumerate(t["recs"]):
        if r[0] == "gap":
            g = r[1]
            want.append("%d %d gap cause %d ip 0x%x resume 0x%x" % (i, g[3], g[0], g[4], g[5]))
        else:
            time, ip, target, kind, taken, length, insns, flags = r[:8]
            want.append("%d %d 0x%x %s %d 0x%x %d %d" % (i, time, ip, KINDS[kind], taken, target, insns, flags))
    got = []
    for line in sys.stdin:
        if line.startswith("#"):
            continue
        f = line.split()
        if f[2] == "gap":
            got.append(" ".join(f[:9]))
        else:
            got.append(" ".join(f))
    truth.compare("dump records", got, want)
    if len(got) != len(want):
        truth.fail("dump lists %d records, the file has %d" % (len(got), len(want)))
    print("dump: %d records equal the independent reader's" % len(got))


if __name__ == "__main__":
    main()
