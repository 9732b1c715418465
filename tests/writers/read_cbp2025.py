#!/usr/bin/env python3
"""Independent CBP2025 reader applying the framework reader's rules
(unconditional branches taken, loads with an output register, at most 3
inputs for non-stores, known classes and registers) and comparing
instructions and branches with the ground truth.
usage: read_cbp2025.py FILE.cbp2025.gz X.truth X.ips [--parts N] [--lost-end]
With --parts N the recording lost data N times: FILE and its part files
NAME.partK.cbp2025.gz of FILE NAME.cbp2025.gz (ptconv-formats(5)) must each
be a run of the executed instructions, the first from the start, the last
to the end, each non-final part ending with the last branch before the
loss; with --lost-end the last part too (the recording ends in a loss)."""
import gzip
import struct
import sys

import truth

ALU, LOAD, STORE, COND, UDIR, UIND, FP, SLOW, UNDEF, CDIR, CIND, RET = range(12)
BRANCH = {COND, UDIR, UIND, CDIR, CIND, RET}
KIND = {0: UDIR, 1: UIND, 2: CDIR, 3: CIND, 4: RET, 5: COND}


def read(path):
    d = gzip.open(path, "rb").read()
    p, recs = 0, []
    while p < len(d):
        pc, cls = struct.unpack_from("<QB", d, p)
        p += 9
        if cls > RET:
            truth.fail("record at 0x%x: class %d" % (pc, cls))
        taken, target = None, None
        if cls in (LOAD, STORE):
            ea, size, bu = struct.unpack_from("<QBB", d, p)
            p += 10
            if cls == STORE:
                p += 1
            if size == 0:
                truth.fail("memory access of size 0 at 0x%x" % pc)
        if cls in BRANCH:
            taken = d[p]
            p += 1
            if taken:
                target = struct.unpack_from("<Q", d, p)[0]
                p += 8
            if cls != COND and taken != 1:
                truth.fail("unconditional branch at 0x%x not taken" % pc)
        nin = d[p]
        ins = d[p + 1:p + 1 + nin]
        p += 1 + nin
        nout = d[p]
        outs = d[p + 1:p + 1 + nout]
        p += 1 + nout
        for r in list(ins) + list(outs):
            if r > 65:
                truth.fail("register %d at 0x%x" % (r, pc))
        if cls != STORE and nin > 3:
            truth.fail("%d inputs at 0x%x" % (nin, pc))
        if cls == LOAD and nout == 0:
            truth.fail("load without output at 0x%x" % pc)
        p += sum(16 if 32 <= r < 64 else 8 for r in outs)
        if p > len(d):
            truth.fail("truncated record at 0x%x" % pc)
        recs.append((pc, cls, taken, target))
    # A branch's successor is the next record (the x86 caveat: not pc + 4).
    for i, r in enumerate(recs[:-1]):
        if r[1] in BRANCH and r[2] and recs[i + 1][0] != r[3]:
            truth.fail("taken branch at 0x%x: next record at 0x%x" % (r[0], recs[i + 1][0]))
    return recs


def main():
    want, _ = truth.load(sys.argv[2])
    parts, lost_end = truth.parts_args(sys.argv, 4)
    files = truth.part_files(sys.argv[1], ".cbp2025.gz", parts)
    truth.instruction_parts("cbp2025", [read(f) for f in files], truth.load_ips(sys.argv[3]), want,
                            lambda rs, p: [(p + i,) + r for i, r in enumerate(rs) if r[1] in BRANCH],
                            lambda q, b, end: (q, b.ip, KIND[b.kind], b.taken, b.target if b.taken else None),
                            lost_end)


if __name__ == "__main__":
    main()
