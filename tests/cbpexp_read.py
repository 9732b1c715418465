#!/usr/bin/env python3
"""An independent reader of cbp-experiments trace files (version 0).

Written from the format description (branch-trace-formats.md section 1);
shares no code with ptconv.  Decompresses the entries with the zstd
command-line tool, disassembles the embedded images with objdump and
derives, for every entry after the first, the number of instructions from
the previous branch's next instruction (its target when taken, else the
fall-through) to the branch, inclusive.

usage: cbpexp_read.py FILE [--truth TRUTH --tid TID]
  Prints a summary.  With --truth: checks the entries against the ground
  truth's branches of thread TID (kind, addresses, taken) and the derived
  instruction counts against the truth's counts.  Exit 0 when all agree.
"""
import bisect
import os
import struct
import subprocess
import sys
import tempfile

MAGIC = 0x2121505845504243
KINDS = ["jmp", "jmp-ind", "call", "call-ind", "ret", "cond"]


def read(path):
    data = open(path, "rb").read()
    if len(data) < 72:
        raise SystemExit("%s: too short for the header" % path)
    h = struct.unpack_from("<9Q", data, 0)
    magic, version, n_ent, ent_off, ent_size, n_br, br_off, n_img, img_off = h
    if magic != MAGIC or version != 0:
        raise SystemExit("%s: bad magic or version" % path)
    z = data[ent_off:ent_off + ent_size]
    raw = subprocess.run(["zstd", "-d", "-c", "-q"], input=z, stdout=subprocess.PIPE,
                         check=True).stdout
    if len(raw) != 4 * n_ent:
        raise SystemExit("%s: %d entry bytes, header says %d entries" % (path, len(raw), n_ent))
    entries = struct.unpack("<%dI" % n_ent, raw)
    branches = [struct.unpack_from("<QQII", data, br_off + 24 * i) for i in range(n_br)]
    images = []
    for i in range(n_img):
        start, ln, dsize, doff = struct.unpack_from("<4Q", data, img_off + 288 * i)
        name = data[img_off + 288 * i + 32: img_off + 288 * i + 288].split(b"\0")[0].decode()
        images.append((start, ln, name, data[doff:doff + dsize]))
    return entries, branches, images


class Code:
    """Instruction start addresses of the embedded images (run-time)."""

    def __init__(self, images):
        self.starts = []
        tmp = tempfile.mkdtemp()
        for k, (start, ln, name, blob) in enumerate(images):
            p = os.path.join(tmp, "img%d" % k)
            open(p, "wb").write(blob)
            # file offset of each LOAD segment: run-time = start + offset
            segs = []
            out = subprocess.run(["readelf", "-lW", p], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True).stdout
            for line in out.splitlines():
                f = line.split()
                if f and f[0] == "LOAD":
                    segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
            dis = subprocess.run(["objdump", "-d", "-w", "--no-show-raw-insn", p],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True).stdout
            for line in dis.splitlines():
                f = line.split(":", 1)
                if len(f) != 2 or not f[0].strip() or not f[1].strip():
                    continue
                try:
                    va = int(f[0].strip(), 16)
                except ValueError:
                    continue
                if line.startswith(" ") is False:
                    continue
                if "(bad)" in f[1]:
                    continue
                for off, vaddr, filesz in segs:
                    if vaddr <= va < vaddr + filesz:
                        self.starts.append(start + off + (va - vaddr))
                        break
        self.starts.sort()

    def count(self, frm, to):
        """Instructions at addresses in [frm, to]."""
        return bisect.bisect_right(self.starts, to) - bisect.bisect_left(self.starts, frm)


def truth_branches(path, tid):
    """(ip, target, kind, taken, len, insns, continuous): continuous is
    False when execution did not resume after the previous far branch at
    its next instruction (exec, signal): no count can be derived there."""
    out = []
    carry = 0
    last_far = None
    jump = False
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "A" and int(f[2]) == tid:
            carry += int(f[4])
        if f[0] == "R" and int(f[2]) == tid and last_far is not None:
            if int(f[3], 16) != last_far:
                jump = True
        if f[0] != "B" or int(f[2]) != tid:
            continue
        kind, taken, insns = int(f[5]), int(f[6]), int(f[8]) + carry
        carry = 0
        if kind != 5:
            taken = 1
        out.append((int(f[3], 16), int(f[4], 16), kind, taken, int(f[7]), insns, not jump))
        jump = False
        last_far = int(f[3], 16) + int(f[7]) if kind == 6 else None
    return out


def main():
    args = sys.argv[1:]
    truth = tid = None
    if "--truth" in args:
        k = args.index("--truth")
        truth = args[k + 1]
        del args[k:k + 2]
    if "--tid" in args:
        k = args.index("--tid")
        tid = int(args[k + 1])
        del args[k:k + 2]
    path = args[0]
    entries, branches, images = read(path)
    print("%s: %d entries, %d branches, %d images" % (path, len(entries), len(branches), len(images)))
    for start, ln, name, blob in images:
        print("  image 0x%x +0x%x %s (%d bytes embedded)" % (start, ln, name, len(blob)))
    seq = []
    for e in entries:
        idx, taken = e & 0x7fffffff, e >> 31
        if idx >= len(branches):
            raise SystemExit("entry index %d out of range" % idx)
        ip, tgt, ln, typ = branches[idx]
        seq.append((ip, tgt, typ, taken, ln))
    if truth is None:
        return 0
    code = Code(images)
    want = truth_branches(truth, tid)
    errors = 0
    # far branches (syscalls) have no cbpexp type: fold their counts
    exp = []
    carry = 0
    cont = True
    for ip, tgt, kind, taken, ln, insns, c in want:
        cont = cont and c
        if kind == 6:
            carry += insns
            continue
        exp.append((ip, tgt, kind, taken, ln, insns + carry, cont))
        carry = 0
        cont = True
    if len(exp) != len(seq):
        print("entries: %d, truth has %d (far branches excluded)" % (len(seq), len(exp)))
        errors += 1
    checked = 0
    for k, (got, w) in enumerate(zip(seq, exp)):
        if got[:5] != (w[0], w[1], w[2], w[3], w[4]):
            print("entry %d: got %s want %s" % (k, got, w[:5]))
            errors += 1
            break
        if k == 0 or not w[6]:
            continue
        p = seq[k - 1]
        frm = p[1] if p[3] else p[0] + p[4]
        n = code.count(frm, got[0])
        if n != w[5]:
            print("entry %d at 0x%x: %d instructions from 0x%x by the images, truth says %d"
                  % (k, got[0], n, frm, w[5]))
            errors += 1
            if errors > 5:
                break
        checked += 1
    print("%d entries checked against the truth, %d instruction counts derived from the images; %s"
          % (min(len(seq), len(exp)), checked, "FAIL" if errors else "OK"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
