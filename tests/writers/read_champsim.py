#!/usr/bin/env python3
"""Independent ChampSim input_instr reader.  Classifies every record the way
ChampSim's front end does, from its registers alone (IP 26, SP 6, FLAGS 25),
and compares instructions and branches with the ground truth.
usage: read_champsim.py FILE.champsim.{xz,gz} X.truth X.ips"""
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


def main():
    path = sys.argv[1]
    op = lzma.open if path.endswith(".xz") else gzip.open
    data = op(path, "rb").read()
    if len(data) % 64:
        truth.fail("size %d is not a multiple of 64" % len(data))
    recs = [struct.unpack_from("<QBB2B4B2Q4Q", data, i) for i in range(0, len(data), 64)]
    ips = truth.load_ips(sys.argv[3])
    truth.compare("champsim ips", [r[0] for r in recs], ips)
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
            got.append((ip, t, taken, nxt))
    want, _ = truth.load(sys.argv[2])
    if len(recs) != sum(b.insns for b in want):
        truth.fail("%d instructions, want %d" % (len(recs), sum(b.insns for b in want)))
    exp = []
    for j, b in enumerate(want):
        if b.kind == 6:
            continue      # far transfers (syscall) are non-branches here
        nxt = b.dest() if j + 1 < len(want) or True else None
        exp.append((b.ip, KIND[b.kind], b.taken, nxt))
    truth.compare("champsim branches", got, exp)
    print("champsim: %d instructions, %d branches match the ground truth" % (len(recs), len(got)))


if __name__ == "__main__":
    main()
