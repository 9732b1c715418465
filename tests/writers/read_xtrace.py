#!/usr/bin/env python3
"""Independent xtrace-format reader (from the format description and
ptconv-xtrace(5)): checks the instruction stream against the ground truth
(every instruction, PC tokens at basic-block starts, TARGET_B after indirect
branches) and the snapshot file (header, counts, offsets at PC tokens).
usage: read_xtrace.py DIR X.truth X.ips INTERVAL [GAPS [--lost-end]]
With GAPS (> 0) the recording lost data that many times: the stream must
hold that many XGAP tokens (VAL sub-token 6, ptconv-xtrace(5)), each
followed by a PC token, and the instructions between them must be runs of
the truth's instruction list: the first from its start, the last up to its
end.  With --lost-end the recording ends in the last loss: its XGAP is the
stream's last token and the last run stops before the truth's end."""
import glob
import os
import re
import struct
import sys

import truth


def main():
    d, interval = sys.argv[1], int(sys.argv[4])
    want, meta = truth.load(sys.argv[2])
    ins = glob.glob(os.path.join(d, "xtrace.*.%d.hint9.xinsndata.bin" % meta["tid"]))
    if len(ins) != 1:
        truth.fail("want one xinsndata.bin, have %r" % ins)
    m = re.match(r"xtrace\.(\d+)\.(\d+)\.hint9\.xinsndata\.bin$", os.path.basename(ins[0]))
    if not m:
        truth.fail("file name %s" % ins[0])
    if int(m.group(2)) != meta["tid"]:
        truth.fail("tid in the file name")
    ngaps = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    lost_end = sys.argv[6:] == ["--lost-end"]
    data = open(ins[0], "rb").read()
    p, pc, insns, offsets, gaps = 0, None, [], {}, []
    while p < len(data):
        tok = data[p]
        cls, sub = tok & 7, (tok >> 3) & 7
        start = p
        p += 1
        if cls == 1:
            if tok >> 6:
                truth.fail("exception level %d in a user-mode trace" % (tok >> 6))
            if sub in (1, 3):
                pc = struct.unpack_from("<Q", data, p)[0]
                p += 8
            elif pc is None:
                truth.fail("INST before any PC")
            if sub in (2, 3):
                n = data[p]
                p += 1
            elif sub in (0, 1):
                truth.fail("AArch64 INST token in an x86 trace")
            else:
                truth.fail("unknown INST sub-token %d" % sub)
            offsets[start] = len(insns)
            insns.append([pc, sub in (1, 3), None])
            pc += n
            p += n
        elif cls == 3:
            v = struct.unpack_from("<Q", data, p)[0]
            p += 8
            if tok >> 3 == 5:
                insns[-1][2] = v
            elif tok >> 3 == 6:
                # XGAP: cause in bits 0-7 (0 overflow .. 6 disabled; never 7,
                # a stream start), lost branches above
                if (v & 0xFF) > 6:
                    truth.fail("XGAP cause %d" % (v & 0xFF))
                gaps.append(len(insns))
                pc = None   # the next instruction must carry its PC
            else:
                truth.fail("unexpected VAL token %d" % (tok >> 3))
        else:
            truth.fail("unexpected token class %d at %d" % (cls, start))
    if ngaps or gaps:
        check_runs(insns, gaps, ngaps, truth.load_ips(sys.argv[3]), lost_end)
        check_snapshots(ins[0], insns, offsets, interval)
        return
    truth.compare("xtrace pcs", [i[0] for i in insns], truth.load_ips(sys.argv[3]))
    if len(insns) != sum(b.insns for b in want):
        truth.fail("%d instructions, want %d" % (len(insns), sum(b.insns for b in want)))
    # Block starts and indirect targets from the ground truth.
    pos, k = 0, 0
    for b in want:
        pos += b.insns
        last = insns[pos - 1]
        if last[0] != b.ip:
            truth.fail("branch at 0x%x is not instruction %d" % (b.ip, pos - 1))
        if b.kind in (1, 3, 4):
            if last[2] != b.target:
                truth.fail("TARGET_B of 0x%x: %r, want 0x%x" % (b.ip, last[2], b.target))
        elif last[2] is not None:
            truth.fail("TARGET_B after a direct branch at 0x%x" % b.ip)
        if pos < len(insns) and not insns[pos][1]:
            truth.fail("instruction %d after the branch at 0x%x has no PC token" % (pos, b.ip))
    if not insns[0][1]:
        truth.fail("first instruction without PC")
    check_snapshots(ins[0], insns, offsets, interval)


def check_runs(insns, gaps, ngaps, ips, lost_end):
    """With losses: XGAP count, PC tokens after them, runs of the truth."""
    if len(gaps) != ngaps:
        truth.fail("%d XGAP tokens, want %d" % (len(gaps), ngaps))
    if lost_end != (gaps[-1] == len(insns)):
        truth.fail("the last XGAP %s the last token" % ("is not" if lost_end else "is"))
    bounds = [0] + gaps + ([] if lost_end else [len(insns)])
    for a, b in zip(bounds, bounds[1:]):
        if a == b:
            truth.fail("no instruction between two gaps")
        if not insns[a][1]:
            truth.fail("instruction %d after a gap has no PC token" % a)
    if ips is not None:
        truth.runs("xtrace run", [[i[0] for i in insns[a:b]] for a, b in zip(bounds, bounds[1:])], ips,
                   lost_end)
    print("xtrace: %d instructions in %d runs of the ground truth, %d XGAP tokens" %
          (len(insns), len(bounds) - 1, len(gaps)))


def check_snapshots(path, insns, offsets, interval):
    s = open(path.replace("xinsndata", "xsnapshot"), "rb").read()
    ident, glob_pt, ver, div, stype, ttok, isa, regs = struct.unpack_from("<IIQBBBBB", s, 0)
    if (ident, ver, div, stype, ttok, isa, regs) != (0x58435450, 1, 0, 0, 0, 1, 0):
        truth.fail("snapshot header %r" % ((ident, ver, div, stype, ttok, isa, regs),))
    body = s[24:]
    if len(body) % 384:
        truth.fail("snapshot size")
    snaps = [struct.unpack_from("<QQQQ", body, i) for i in range(0, len(body), 384)]
    total = len(insns)
    want_n = (total + interval - 1) // interval
    if len(snaps) != want_n:
        truth.fail("%d snapshots, want %d" % (len(snaps), want_n))
    for j, (fileno, off, user, allc) in enumerate(snaps):
        if user != j * interval or allc != user or fileno != 0:
            truth.fail("snapshot %d counts %r" % (j, (fileno, user, allc)))
        if offsets.get(off) != user or not insns[user][1]:
            truth.fail("snapshot %d offset %d is not a PC token of instruction %d" % (j, off, user))
        if any(body[j * 384 + 32:(j + 1) * 384]):
            truth.fail("registers not zero although not captured")
    print("xtrace: %d instructions, %d snapshots match the ground truth" % (total, len(snaps)))


if __name__ == "__main__":
    main()
