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
loss).

The reader's rules (ChampSim's tracereader and inf_stream, read at commit
2ff2501): the decompressor is chosen by the name's last two letters (gz, xz;
anything else is read raw); .xz is decoded as one xz stream (liblzma's
stream decoder without LZMA_CONCATENATED: the file must hold exactly one
stream, as many blocks as it likes) and .gz as one gzip member (zlib's
inflate, never reset at a member's end: the file must be exactly one
member); with a second stream or member the reader loops for ever.  That
holds for outputs suspended by --max-open-outputs too."""
import lzma
import struct
import sys
import zlib

import truth

IP, SP, FLAGS = 26, 6, 25
NOT_BRANCH, DIRECT_JUMP, INDIRECT, CONDITIONAL, DIRECT_CALL, INDIRECT_CALL, RETURN, OTHER = range(8)
# ptconv kinds -> ChampSim branch types
KIND = {0: DIRECT_JUMP, 1: INDIRECT, 2: DIRECT_CALL, 3: INDIRECT_CALL, 4: RETURN, 5: CONDITIONAL}


def classify(dst, src):
    """ChampSim's rules (its ooo_model_instr constructor, inc/instruction.h),
    in its order: the first that holds gives the type.  Register 0 is no
    register; "other" is any register but rsp, flags and rip."""
    writes_sp, writes_ip = SP in dst, IP in dst
    reads_sp, reads_flags, reads_ip = SP in src, FLAGS in src, IP in src
    reads_other = any(r not in (0, SP, FLAGS, IP) for r in src)
    if not reads_sp and not reads_flags and writes_ip and not reads_other:
        return DIRECT_JUMP
    if not reads_sp and not reads_ip and not reads_flags and writes_ip and reads_other:
        return INDIRECT
    if not reads_sp and reads_ip and not writes_sp and writes_ip and (reads_flags or reads_other):
        return CONDITIONAL
    if reads_sp and reads_ip and writes_sp and writes_ip and not reads_flags and not reads_other:
        return DIRECT_CALL
    if reads_sp and reads_ip and writes_sp and writes_ip and not reads_flags and reads_other:
        return INDIRECT_CALL
    if reads_sp and not reads_ip and writes_sp and writes_ip:
        return RETURN
    if writes_ip:
        return OTHER
    return NOT_BRANCH


def decompress(path):
    """The file's records as ChampSim's reader gets them: one xz stream or
    one gzip member, nothing after it."""
    raw = open(path, "rb").read()
    if path.endswith("xz"):
        new, what = lambda: lzma.LZMADecompressor(format=lzma.FORMAT_XZ), "xz stream"
    elif path.endswith("gz"):
        new, what = lambda: zlib.decompressobj(16 + zlib.MAX_WBITS), "gzip member"
    else:
        truth.fail("%s: ChampSim reads a name not ending in xz or gz as raw records" % path)
    d = new()
    try:
        out = d.decompress(raw)
    except (lzma.LZMAError, zlib.error) as e:
        truth.fail("%s: %s" % (path, e))
    if not d.eof:
        truth.fail("%s: the %s does not end" % (path, what))
    if d.unused_data:
        truth.fail("%s: %d bytes after the first %s (ChampSim's reader reads one and then loops)"
                   % (path, len(d.unused_data), what))
    return out


def read(path):
    data = decompress(path)
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
