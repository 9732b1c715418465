#!/usr/bin/env python3
"""Independent CBP2025 reader that enforces the rules of the official
framework's reader and simulator (the CBP2025 championship framework,
lib/trace_reader.h, lib/uarchsim.cc, lib/bp.cc; ptconv-formats(5) names the
commit read), rewritten here from what they assert, and compares
instructions, branches and the directions the simulator derives with the
ground truth.
usage: read_cbp2025.py FILE.cbp2025.gz X.truth X.ips [--parts N] [--lost-end]
                       [--slots] [--stats]
With --parts N the recording lost data N times: FILE and its part files
NAME.partK.cbp2025.gz of FILE NAME.cbp2025.gz (ptconv-formats(5)) must each
be a run of the executed instructions, the first from the start, the last
to the end, each non-final part ending with the last branch before the
loss; with --lost-end the last part too (the recording ends in a loss).
--slots: the file was written with cbp2025:slots (every pc as 4 * pc).
--stats: print how often each x86 mapping of ptconv-formats(5) occurred."""
import gzip
import struct
import sys

import truth

ALU, LOAD, STORE, COND, UDIR, UIND, FP, SLOW, UNDEF, CDIR, CIND, RET = range(12)
BRANCH = {COND, UDIR, UIND, CDIR, CIND, RET}
KIND = {0: UDIR, 1: UIND, 2: CDIR, 3: CIND, 4: RET, 5: COND}
SP, SIMD, FLAGS, ZERO, RFSIZE = 31, 32, 64, 65, 66


def is_int(r):
    """The reader's integer registers (8-byte values): GPRs, SP, flags, zero."""
    return r < SIMD or r in (FLAGS, ZERO)


class Rules:
    """The reader's and simulator's asserts, one record at a time."""

    def __init__(self):
        self.stats = dict.fromkeys(("push-like store", "rip/absolute store", "indexed store",
                                    "2-value store", "base-update load", "multi-output load",
                                    "taken cond to pc+4", "several outputs"), 0)

    def check(self, pc, cls, mem, taken, target, ins, outs):
        def bad(what):
            truth.fail("record at 0x%x (class %d): %s" % (pc, cls, what))
        if cls > RET or cls == UNDEF:
            bad("class the reader refuses")
        for r in ins[:3] + outs:
            if r >= RFSIZE:
                bad("register %d beyond the simulator's register file" % r)
        if cls in BRANCH:
            if cls != COND and taken != 1:
                bad("unconditional branch not taken")
            if taken not in (0, 1):
                bad("taken byte %d" % taken)
            # the simulator predicts (and counts) every piece of a branch
            if len(outs) > 1:
                bad("branch with %d outputs: %d predictions" % (len(outs), len(outs)))
            # direction = next_pc != pc + 4; fetch asserts it for a taken one
            if taken and target == pc + 4:
                bad("taken branch to pc + 4: the simulator sees it not taken")
        if cls not in (LOAD, STORE):
            if len(ins) > 3:
                bad("%d inputs" % len(ins))
            if len(outs) > 1:
                self.stats["several outputs"] += 1
            return
        size, bu = mem[1], mem[2]
        if bu not in (0, 1):
            bad("base update byte %d" % bu)
        if cls == STORE:
            off = mem[3]
            if off not in (0, 1):
                bad("register-offset byte %d" % off)
            if len(outs) > 1:
                bad("store with %d outputs" % len(outs))
            if (len(outs) == 1) != (bu == 1):
                bad("store: %d outputs with base update %d" % (len(outs), bu))
            if len(ins) < 1 + off:
                bad("store without its address (and offset) register")
            vals = (len(ins) - 1 - off) & 0xff      # the reader's u8 arithmetic
            if size % (vals or 1):
                bad("store of %d bytes over %d value registers" % (size, vals))
            if outs:
                if not is_int(outs[0]) or outs[0] > SP:
                    bad("base update of register %d" % outs[0])
                # ptconv's rule: the updated register is the address register
                if outs[0] != ins[0]:
                    bad("store updates %d, not its address register %d" % (outs[0], ins[0]))
                self.stats["push-like store"] += 1
            if ins[0] == ZERO:
                self.stats["rip/absolute store"] += 1
            if off:
                self.stats["indexed store"] += 1
            if vals == 2:
                self.stats["2-value store"] += 1
            return
        if len(ins) > 3:
            bad("load with %d inputs" % len(ins))
        if not outs:
            bad("load without output")
        if len(outs) > 1:
            shared = {r for r in ins if r < SIMD} & {r for r in outs if r < SIMD}
            if len(shared) > 1:
                bad("load shares registers %s between inputs and outputs" % sorted(shared))
            if bu and len(shared) != 1:
                bad("base-update load without its base among outputs")
            self.stats["base-update load" if bu else "multi-output load"] += 1


def read(path, slots, rules):
    """The records of path as (real pc, class, direction the simulator
    derives, written target or None), checked against the rules."""
    d = gzip.open(path, "rb").read()
    p, recs = 0, []
    while p < len(d):
        if p + 9 > len(d):
            truth.fail("%s: %d bytes after the last record" % (path, len(d) - p))
        pc, cls = struct.unpack_from("<QB", d, p)
        p += 9
        mem, taken, target = None, None, None
        if cls in (LOAD, STORE):
            mem = struct.unpack_from("<QBB", d, p)
            p += 10
            if cls == STORE:
                mem += (d[p],)
                p += 1
        if cls in BRANCH:
            taken = d[p]
            p += 1
            if taken:
                target = struct.unpack_from("<Q", d, p)[0]
                p += 8
        nin = d[p]
        ins = list(d[p + 1:p + 1 + nin])
        p += 1 + nin
        nout = d[p]
        outs = list(d[p + 1:p + 1 + nout])
        p += 1 + nout
        p += sum(8 if is_int(r) else 16 for r in outs)
        if p > len(d):
            truth.fail("truncated record at 0x%x" % pc)
        rules.check(pc, cls, mem, taken, target, ins, outs)
        if slots:
            if pc % 4:
                truth.fail("slot pc 0x%x not a multiple of 4" % pc)
        # the simulator's direction: next_pc (target, else pc + 4) != pc + 4
        nxt = target if taken else pc + 4
        recs.append((pc // 4 if slots else pc, cls, int(cls in BRANCH and nxt != pc + 4), target, pc))
    # A taken branch's successor is the next record: its target, or pc + 4
    # for one whose target ptconv moved to pc + 5 (ptconv-formats(5)).
    for i, r in enumerate(recs[:-1]):
        if r[1] in BRANCH and r[2]:
            got = recs[i + 1][4]
            if got != r[3] and not (r[1] == COND and r[3] == r[4] + 5 and got == r[4] + 4):
                truth.fail("taken branch at 0x%x: next record at 0x%x" % (r[4], got))
            if r[1] == COND and r[3] == r[4] + 5 and got == r[4] + 4:
                rules.stats["taken cond to pc+4"] += 1
    return recs


def main():
    want, _ = truth.load(sys.argv[2])
    parts, lost_end = truth.parts_args(sys.argv, 4)
    slots = "--slots" in sys.argv
    scale = 4 if slots else 1
    files = truth.part_files(sys.argv[1], ".cbp2025.gz", parts)
    rules = Rules()

    def written_target(b):
        """What the writer must put in a taken branch's target field."""
        pc, t = b.ip * scale, b.target * scale
        return pc + 5 if b.kind == 5 and t == pc + 4 else t

    truth.instruction_parts("cbp2025", [read(f, slots, rules) for f in files], truth.load_ips(sys.argv[3]),
                            want,
                            lambda rs, p: [(p + i,) + r[:4] for i, r in enumerate(rs) if r[1] in BRANCH],
                            lambda q, b, end: (q, b.ip, KIND[b.kind], b.taken,
                                               written_target(b) if b.taken else None),
                            lost_end)
    if "--stats" in sys.argv:
        print("cbp2025 mappings: " + ", ".join("%s %d" % kv for kv in rules.stats.items()))


if __name__ == "__main__":
    main()
