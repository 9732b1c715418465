#!/usr/bin/env python3
"""Independent ChampSim input_instr reader.  Classifies every record the way
ChampSim's front end does, from its registers alone (IP 26, SP 6, FLAGS 25),
and compares instructions and branches with the ground truth.
usage: read_champsim.py FILE.champsim.{xz,gz} X.truth X.ips [--parts N] [--lost-end]
With --parts N the recording lost data N times: FILE and its part files
NAME.partK.champsim.xz of FILE NAME.champsim.xz (ptconv-formats(5)) must
each be a run of the executed instructions, the first from the start, the
last to the end, each non-final part ending with the last branch before
the loss; with --lost-end the last part too (the recording ends in a
loss)."""
import gzip
import lzma
import struct
import sys

import truth

IP, SP, FLAGS = 26, 6, 25
NOT_BRANCH, DIRECT_JUMP, INDIRECT, CONDITIONAL, DIRECT_CALL, INDIRECT_CALL, RETURN, OTHER = range(8)
# ptconv kinds -> ChampSim branch types
KIND = {0: DIRECT_JUMP, 1: INDIRECT, 2: DIRECT_CALL, 3: INDIRECT_CALL, 4: RETURN, 5: CONDITIONAL}


def classify(dst, src):
    """ChampSim's rules (its instr.h), written from the published table."""
    writes_sp, writes_ip = SP in dst, IP in dst
    reads_sp, reads_flags, reads_ip = SP in src, FLAGS in src, IP in src
    reads_other = any(r not in (0, SP, FLAGS, IP) for r in src)
    if not writes_ip:
        return NOT_BRANCH
    if not reads_sp and not reads_flags and not reads_other and not reads_ip and not writes_sp:
        return DIRECT_JUMP
    if not reads_sp and not reads_flags and reads_other and not writes_sp:
        return INDIRECT
    if not reads_sp and reads_ip and not writes_sp and reads_flags and not reads_other:
        return CONDITIONAL
    if reads_sp and reads_ip and writes_sp and not reads_flags and not reads_other:
        return DIRECT_CALL
    if reads_sp and reads_ip and writes_sp and not reads_flags and reads_other:
        return INDIRECT_CALL
    if reads_sp and not reads_ip and writes_sp:
        return RETURN
    return OTHER


def read(path):
    op = lzma.open if path.endswith(".xz") else gzip.open
    data = op(path, "rb").read()
    if len(data) % 64:
        truth.fail("%s: size %d is not a multiple of 64" % (path, len(data)))
    return [struct.unpack_from("<QBB2B4B2Q4Q", data, i) for i in range(0, len(data), 64)]


def branches(recs, start):
    """The branches ChampSim sees in one file: (position, ip, type, taken,
    next record's ip or None at the file's end)."""
    got = []
    for i, r in enumerate(recs):
        ip, is_br, taken = r[0], r[1], r[2]
        dst, src, mem = r[3:5], r[5:9], r[9:]
        if any(mem):
            truth.fail("record %d: memory fields are not 0" % i)
        t = classify(dst, src)
        if (t != NOT_BRANCH) != bool(is_br):
            truth.fail("record %d at 0x%x: is_branch %d but registers say type %d" % (i, ip, is_br, t))
        if t == OTHER:
            truth.fail("record %d at 0x%x: branch of no known type" % (i, ip))
        if t != NOT_BRANCH:
            nxt = recs[i + 1][0] if i + 1 < len(recs) else None
            got.append((start + i, ip, t, taken, nxt))
    return got


def main():
    path = sys.argv[1]
    want, _ = truth.load(sys.argv[2])
    parts, lost_end = truth.parts_args(sys.argv, 4)
    files = truth.part_files(path, path[path.rindex(".champsim"):], parts)
    # far transfers (syscall) are non-branches here; the last record's
    # successor is not in its file
    truth.instruction_parts("champsim", [read(f) for f in files], truth.load_ips(sys.argv[3]), want, branches,
                            lambda q, b, end: (q, b.ip, KIND[b.kind], b.taken, b.dest() if q + 1 < end else None),
                            lost_end)


if __name__ == "__main__":
    main()
