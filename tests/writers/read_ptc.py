#!/usr/bin/env python3
"""Independent reader of ptconv's trace format (ptconv-trace(5)), written
from the man page; checks a .ptc file against the ground truth.
usage: read_ptc.py FILE.ptc X.truth [BINARY [START_IP]]"""
import bisect
import struct
import subprocess
import os
import sys

import truth


def unzstd(b):
    return subprocess.run(["zstd", "-d", "-c", "-q"], input=b, stdout=subprocess.PIPE, check=True).stdout


def varint(buf, pos):
    v, s = 0, 0
    while True:
        c = buf[pos]
        pos += 1
        v |= (c & 0x7F) << s
        if not c & 0x80:
            return v, pos
        s += 7


def unzz(v):
    return (v >> 1) ^ -(v & 1)


M64 = 2**64 - 1


def tables_v1(s, p, nn, ne, codesz):
    """Version 1: rows of LEB128 numbers, each node with its code bytes."""
    nodes, prev_start, code_off, first = [], 0, 0, 0
    for i in range(nn):
        v = []
        for k in range(6):
            x, p = varint(s, p)
            v.append(x)
        kind, length = s[p], s[p + 1]
        p += 2
        start = (prev_start + unzz(v[0])) & M64
        prev_start = start
        ip = (start + unzz(v[1])) & M64
        target = (ip + unzz(v[2] - 1)) & M64 if v[2] else 0
        insns, nedge, code_len = v[3], v[4], v[5]
        nodes.append((start, ip, target, code_off, insns, first, nedge, code_len, kind, length))
        code_off += code_len
        first += nedge
    if first != ne or code_off != codesz:
        truth.fail("static part: edges or code do not add up")
    edges = []
    for i, n in enumerate(nodes):
        for k in range(n[6]):
            d, p = varint(s, p)
            sc, p = varint(s, p)
            edges.append(((n[1] + unzz(d - 1)) & M64 if d else 0, i + unzz(sc - 1) if sc else None))
    return nodes, edges, p


def tables_v2(s, p, nn, ne, nspans, codesz):
    """Version 2: one column per field, implied fields left out, code as
    merged spans; nodes come back in version 1's shape, each with the
    offset of its block in the code blob (0 bytes when no span covers it)."""
    def col(n):
        nonlocal p
        out = []
        for i in range(n):
            v, p = varint(s, p)
            out.append(v)
        return out
    starts, acc = [], 0
    for v in col(nn):
        acc = (acc + unzz(v)) & M64
        starts.append(acc)
    ips = [(st + unzz(v)) & M64 for st, v in zip(starts, col(nn))]
    kl = list(s[p:p + nn])
    p += nn
    if any(b & 0x80 for b in kl):
        truth.fail("static part: kind byte with bit 7 set")
    kinds = [b & 7 for b in kl]
    lengths = [(b >> 3) & 15 for b in kl]
    insns = col(nn)
    direct = [i for i in range(nn) if kinds[i] in (0, 2, 5)]
    targets = [0] * nn
    for i, v in zip(direct, col(len(direct))):
        targets[i] = (ips[i] + unzz(v)) & M64
    indirect = [i for i in range(nn) if kinds[i] not in (0, 2, 5)]
    nedges = [2 if k == 5 else 1 for k in kinds]
    for i, v in zip(indirect, col(len(indirect))):
        nedges[i] = v
    if sum(nedges) != ne:
        truth.fail("static part: edges do not add up")
    dests = []
    for i in range(nn):
        if kinds[i] == 5:
            dests += [(ips[i] + lengths[i]) & M64, targets[i]]
        elif kinds[i] in (0, 2):
            dests.append(targets[i])
        else:
            for v in col(nedges[i]):
                dests.append((ips[i] + unzz(v - 1)) & M64 if v else 0)
    first_at = {}
    for i, st in enumerate(starts):
        first_at.setdefault(st, i)
    edges, e = [], 0
    for i in range(nn):
        for v in col(nedges[i]):
            if v == 0:
                succ = first_at.get(dests[e])
            elif v == 1:
                succ = None
            else:
                succ = i + unzz(v - 2)
            edges.append((dests[e], succ))
            e += 1
    spans, end, off = [], 0, 0
    for i in range(nspans):
        d, p = varint(s, p)
        ln, p = varint(s, p)
        st = (end + unzz(d)) & M64
        spans.append((st, st + ln, off))
        end, off = st + ln, off + ln
    if off != codesz:
        truth.fail("static part: code spans do not add up")
    span_starts = [a for (a, b, o) in spans]
    nodes, first = [], 0
    for i in range(nn):
        code_off, code_len = 0, 0
        blk_end = ips[i] + lengths[i]
        k = bisect.bisect_right(span_starts, starts[i]) - 1
        # spans are sorted by address and only overlap where the code differs
        while k >= 0 and starts[i]:
            a, b, o = spans[k]
            if blk_end <= b:
                code_off, code_len = o + starts[i] - a, blk_end - starts[i]
                break
            k -= 1
        nodes.append((starts[i], ips[i], targets[i] if kinds[i] in (0, 2, 5) else 0, code_off, insns[i],
                      first, nedges[i], code_len, kinds[i], lengths[i]))
        first += nedges[i]
    return nodes, edges, p


def symbols(b, n):
    """Version 3's symbol table (ptconv-trace(5), "Symbols"): a list of
    (from record, lo, hi, start or None, name or None, image or None,
    address in the image at lo)."""
    if not b:
        return []      # (versions 1 and 2)
    p = 0
    nimg, p = varint(b, p)
    images = []
    for i in range(nimg):
        ln, p = varint(b, p)
        images.append(b[p:p + ln].decode(errors="replace"))
        p += ln
    out = []
    frm, lo = 0, 0
    for i in range(n):
        d, p = varint(b, p)
        v, p = varint(b, p)
        size, p = varint(b, p)
        img, p = varint(b, p)
        frm += d
        lo += unzz(v)
        hi = lo + size + 1
        vaddr = None
        if img:
            v, p = varint(b, p)
            vaddr = lo + unzz(v)
        st, p = varint(b, p)
        start = name = None
        if st:
            start = lo + unzz(st - 1)
            ln, p = varint(b, p)
            name = b[p:p + ln].decode(errors="replace")
            p += ln
        if out and d == 0 and lo < out[-1][2]:
            truth.fail("symbols: entries %d and %d of record %d overlap" % (i - 1, i, frm))
        out.append((frm, lo, hi, start, name, images[img - 1] if img else None, vaddr))
    if p != len(b):
        truth.fail("symbols: %d bytes left over" % (len(b) - p))
    return out


def read(path):
    data = open(path, "rb").read()
    if data[:8] != b"PTCTRACE":
        truth.fail("bad magic")
    ver, hsize, flags, pid, tid, cpu, nrec, ninsn, soff, tail = struct.unpack_from("<IIIIIiQQQQ", data, 8)
    if ver not in (1, 2, 3) or hsize != 64 or not flags & 1 or flags & ~3:
        truth.fail("header: version %d size %d flags %d" % (ver, hsize, flags))
    untimed = bool(flags & 2)
    zn, sn = struct.unpack_from("<QQ", data, soff)
    s = unzstd(data[soff + 16:soff + 16 + zn])
    if len(s) != sn:
        truth.fail("static part size")
    nn, ne, nc, ng, codesz, strsz, commlen, nspans, nbr = struct.unpack_from("<QQQQQQIIQ", s, 0)
    symsz, nsyms = struct.unpack_from("<QQ", s, 64) if ver >= 3 else (0, 0)
    p = 80 if ver >= 3 else 64
    if ver == 1:
        nodes, edges, p = tables_v1(s, p, nn, ne, codesz)
    else:
        nodes, edges, p = tables_v2(s, p, nn, ne, nspans, codesz)
    tables_end = p
    chunks = []
    for i in range(nc):
        chunks.append(struct.unpack_from("<QQQQII", s, p))
        p += 48
    gaps = []
    for i in range(ng):
        gaps.append(struct.unpack_from("<B7xQQQQQQQII", s, p))
        p += 72
    code = s[p:p + codesz]
    p += codesz
    comm = s[p:p + commlen].decode()
    p += strsz
    syms = symbols(s[p:p + symsz], nsyms)
    if p + symsz != len(s):
        truth.fail("static part: %d bytes after the symbols" % (len(s) - p - symsz))
    recs = []
    insn_total = 0
    for (off, comp, first_rec, first_insn, n, raw) in chunks:
        if first_rec != len(recs) or first_insn != insn_total:
            truth.fail("chunk index: first record %d/%d insn %d/%d" % (first_rec, len(recs), first_insn, insn_total))
        c = unzstd(data[off:off + comp])
        if len(c) != raw:
            truth.fail("chunk raw size")
        cn, bl, sl, el = struct.unpack_from("<IIII", c, 0)
        bits = c[16:16 + bl]
        slots = c[16 + bl:16 + bl + sl]
        ev = c[16 + bl + sl:16 + bl + sl + el]
        # the events, by record index
        events = {}
        ep, idx = 0, 0
        while ep < len(ev):
            d, ep = varint(ev, ep)
            idx += d
            t = ev[ep]
            ep += 1
            if t in (1, 2, 3):
                v, ep = varint(ev, ep)
            else:
                v = ev[ep]
                ep += 1
            events.setdefault(idx, []).append((t, v))
        cur, time, bitpos, sp = None, 0, 0, 0
        for r in range(cn):
            flags, taken_ov, gap = 0, None, None
            for (t, v) in events.get(r, []):
                if t == 1:
                    cur = v
                elif t == 2:
                    time += (v >> 1) ^ -(v & 1)
                elif t == 3:
                    gap = v
                elif t == 4:
                    flags = v
                elif t == 5:
                    taken_ov = v
            if gap is not None:
                recs.append(("gap", gaps[gap]))
                cur = None
                continue
            start, ip, target, code_off, insns, fe, nedge, code_len, kind, length = nodes[cur]
            if kind == 5:
                slot = (bits[bitpos >> 3] >> (bitpos & 7)) & 1
                bitpos += 1
                taken = slot
            elif kind in (0, 2):
                slot, taken = 0, 1
            else:
                slot, sp = varint(slots, sp)
                taken = 1
                target = edges[fe + slot][0]
            if taken_ov is not None:
                taken = taken_ov
            recs.append((time, ip, target, kind, taken, length, insns, flags, start, code_off, code_len))
            insn_total += insns
            cur = edges[fe + slot][1]
    if len(recs) != nrec or insn_total + tail != ninsn:
        truth.fail("header counts: %d records (%d), %d insns (%d)" % (nrec, len(recs), ninsn, insn_total + tail))
    # where the file's parts lie, as parsed (check_info.py)
    parts = dict(size=len(data), header=hsize, static_off=soff, static_comp=zn, static_raw=sn,
                 tables_end=tables_end, edges=ne, spans=nspans, gaps=ng, code=codesz, strings=strsz,
                 cpu=cpu, chunks=chunks, symbol_bytes=symsz, symbols=nsyms, static_head=80 if ver >= 3 else 64)
    return dict(pid=pid, tid=tid, comm=comm, recs=recs, code=code, tail=tail, ninsn=ninsn, nodes=nodes,
                parts=parts, syms=syms, untimed=untimed)


def main():
    t = read(sys.argv[1])
    want, meta = truth.load(sys.argv[2])
    if (t["pid"], t["tid"], t["comm"]) != (meta["pid"], meta["tid"], meta["comm"]):
        truth.fail("thread %r" % ((t["pid"], t["tid"], t["comm"]),))
    got = [r[1:7] for r in t["recs"] if r[0] != "gap"]
    truth.compare("ptc branches", got, [b.key() for b in want])
    times = [r[0] for r in t["recs"] if r[0] != "gap"]
    # A hardware-trace conversion (tests/pt_formats.sh) stamps branches with
    # the perf times of its timing packets, not the truth's clock: then
    # TRUTH_NO_TIMES=1 leaves times out.
    if not os.environ.get("TRUTH_NO_TIMES"):
        truth.compare("ptc times", times, [b.time for b in want])
    gaps = [r[1] for r in t["recs"] if r[0] == "gap"]
    if len(sys.argv) > 4 or "start" in meta:
        start = int(sys.argv[4], 0) if len(sys.argv) > 4 else meta["start"]
        if len(gaps) != 1 or gaps[0][0] != 7 or gaps[0][5] != start or t["recs"][0][0] != "gap":
            truth.fail("want one start gap at 0x%x, have %r" % (start, gaps))
    elif gaps:
        truth.fail("unexpected gaps %r" % gaps)
    # The embedded code covers every block: its last instruction is the branch.
    for r in t["recs"]:
        if r[0] == "gap":
            continue
        start, ip, length, off, clen = r[8], r[1], r[5], r[9], r[10]
        if start and clen != ip + length - start:
            truth.fail("block 0x%x-0x%x: %d code bytes" % (start, ip + length, clen))
    if len(sys.argv) > 3 and sys.argv[3] != "-":
        with open(sys.argv[3], "rb") as f:
            img = f.read()
        # code bytes equal the binary's (static non-PIE: vaddr - 0x400000 = offset)
        for n in t["nodes"]:
            start, code_off, clen = n[0], n[3], n[7]
            if clen and 0x400000 <= start < 0x400000 + len(img):
                if t["code"][code_off:code_off + clen] != img[start - 0x400000:start - 0x400000 + clen]:
                    truth.fail("embedded code at 0x%x differs from the binary" % start)
    print("ptc: %d records match the ground truth" % len(got))


if __name__ == "__main__":
    main()
