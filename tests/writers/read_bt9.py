#!/usr/bin/env python3
"""Independent BT9 reader applying the CBP2016 framework's rules (its
bt9_reader.h, read as ptconv-formats(5) says): header counts present, dummy
first and last node, unique node addresses, edges unique per the reader's
key (source address, taken target or 0; source and all ones into the dummy
sink), known classes, counts that add up, not-taken conditional edges with
the branch's encoded target.  Compares the edge sequence with the ground
truth.  usage: read_bt9.py FILE.bt9.gz X.truth [--parts N] [--lost-end]
With --parts N the recording lost data N times: the trace is then FILE and
its part files NAME.part1.bt9.gz .. partN of FILE NAME.bt9.gz
(ptconv-formats(5)), each a complete BT9 trace of a gap-free run of the
truth's branches, in order: the first from the truth's start, the last up
to its end (with --lost-end: before it, the recording ends in a loss)."""
import gzip
import sys

import truth

KIND = {"JMP+DIR+UCD": 0, "JMP+IND+UCD": 1, "CALL+DIR+UCD": 2, "CALL+IND+UCD": 3,
        "RET+IND+UCD": 4, "JMP+DIR+CND": 5}


def parse(path):
    """One BT9 file, checked against the framework's rules; returns its
    header, branches (addr, kind, taken, target, size) and inst_cnt per
    traversed edge."""
    lines = gzip.open(path, "rt").read().split("\n")
    if lines[0] != "BT9_SPA_TRACE_FORMAT":
        truth.fail("first line %r" % lines[0])
    hdr, i = {}, 1
    while lines[i] != "BT9_NODES":
        k, v = lines[i].split(":")
        hdr[k.strip()] = int(v, 0)
        i += 1
    for k in ("total_instruction_count", "branch_instruction_count"):
        if k not in hdr:
            truth.fail("header lacks " + k)
    i += 1
    nodes, by_addr = {}, set()
    while lines[i] != "BT9_EDGES":
        p = lines[i].split()
        if p[0] != "NODE" or p[3] != "-":
            truth.fail("bad node line %r" % lines[i])
        nid, addr = int(p[1], 0), int(p[2], 0)
        if addr in by_addr:
            truth.fail("duplicate node address 0x%x" % addr)
        by_addr.add(addr)
        if nid in nodes:
            truth.fail("duplicate node id %d" % nid)
        if len(p) > 6:
            f = dict(zip(p[6::2], p[7::2]))
            cls = f["class:"]
            if cls not in KIND and not cls.startswith("RET"):
                truth.fail("class %s" % cls)
            nodes[nid] = dict(addr=addr, size=int(p[5], 0), cls=cls, beh=f["behavior:"],
                              taken=int(f["taken_cnt:"]), nt=int(f["not_taken_cnt:"]),
                              tgt=int(f["tgt_cnt:"]))
        else:
            nodes[nid] = dict(addr=addr, cls=None)
        i += 1
    ids = sorted(nodes)
    if ids != list(range(len(ids))):
        truth.fail("node ids not 0..n-1")
    if nodes[0]["addr"] != 0 or nodes[0]["cls"] is not None:
        truth.fail("first node is not the dummy")
    last = ids[-1]
    if nodes[last]["addr"] != 0xFFFFFFFFFFFFFFFF or nodes[last]["cls"] is not None:
        truth.fail("last node is not the dummy sink")
    i += 1
    edges, keys = {}, set()
    while lines[i] != "BT9_EDGE_SEQUENCE":
        p = lines[i].split()
        if p[0] != "EDGE" or p[6] != "-" or p[8] != "traverse_cnt:":
            truth.fail("bad edge line %r" % lines[i])
        eid, src, dst, tn, tgt, icnt, cnt = int(p[1]), int(p[2]), int(p[3]), p[4], int(p[5], 0), int(p[7]), int(p[9])
        if src not in nodes or dst not in nodes or tn not in "TN":
            truth.fail("edge %d: bad nodes" % eid)
        # the framework's reader keys an edge by (source address, taken
        # target or 0), an edge into the dummy sink by (source, all ones),
        # and exits on a duplicate
        key = (nodes[src]["addr"], tgt if tn == "T" else 0)
        if nodes[dst]["addr"] == 0xFFFFFFFFFFFFFFFF:
            key = (nodes[src]["addr"], 0xFFFFFFFFFFFFFFFF)
        if key in keys:
            truth.fail("duplicate edge %r" % (key,))
        keys.add(key)
        edges[eid] = dict(src=src, dst=dst, taken=tn == "T", tgt=tgt, icnt=icnt, cnt=cnt)
        i += 1
    seq = []
    for l in lines[i + 1:]:
        if l in ("EOF", ""):
            continue
        seq.append(int(l))
    if len(seq) != hdr["branch_instruction_count"]:
        truth.fail("sequence has %d edges, header says %d" % (len(seq), hdr["branch_instruction_count"]))
    count = {}
    for e in seq:
        if e not in edges:
            truth.fail("sequence names unknown edge %d" % e)
        count[e] = count.get(e, 0) + 1
    for e, d in edges.items():
        if count.get(e, 0) != d["cnt"]:
            truth.fail("edge %d traversed %d times, traverse_cnt %d" % (e, count.get(e, 0), d["cnt"]))
    # per-node counts
    tk, nt = {}, {}
    for e in seq[1:]:
        d = edges[e]
        (tk if d["taken"] else nt)[d["src"]] = (tk if d["taken"] else nt).get(d["src"], 0) + 1
    for nid, n in nodes.items():
        if n["cls"] is None:
            continue
        if (tk.get(nid, 0), nt.get(nid, 0)) != (n["taken"], n["nt"]):
            truth.fail("node %d: taken/not-taken counts" % nid)
    if edges[seq[0]]["src"] != 0:
        truth.fail("first edge does not leave the dummy node")
    got = []
    for e in seq[1:]:
        d = edges[e]
        n = nodes[d["src"]]
        got.append((n["addr"], KIND.get(n["cls"], -1), int(d["taken"]), d["tgt"], n["size"]))
    icnts = [edges[e]["icnt"] for e in seq]
    if sum(icnts[:-1]) + len(seq) - 1 != hdr["total_instruction_count"]:
        truth.fail("inst_cnt do not add up to total_instruction_count")
    return hdr, got, icnts


def expected(want):
    exp = []
    for b in want:
        k = 1 if b.kind == 6 else b.kind   # far transfers are written as indirect jumps
        t = b.dest() if b.kind == 6 else b.target
        # a not-taken conditional's edge carries its encoded target, as in
        # the championship's traces (TAGE-SC-L compares it with the pc)
        exp.append((b.ip, k, b.taken, t if b.taken or b.kind == 5 else 0, b.length))
    return exp


def main():
    want, _ = truth.load(sys.argv[2])
    exp = expected(want)
    parts, lost_end = truth.parts_args(sys.argv, 3)
    files = truth.part_files(sys.argv[1], ".bt9.gz", parts)
    if not parts and not lost_end:
        hdr, got, icnts = parse(sys.argv[1])
        truth.compare("bt9 sequence", got, exp)
        # instruction counts: inst_cnt of each traversal = non-branch instructions to the next branch
        truth.compare("bt9 inst_cnt", icnts[:-1], [b.insns - 1 for b in want])
        total = sum(b.insns for b in want)
        if hdr["total_instruction_count"] != total:
            truth.fail("total_instruction_count %d, want %d" % (hdr["total_instruction_count"], total))
        print("bt9: %d branches match the ground truth" % len(got))
        return
    parsed = [parse(f) for f in files]
    pos = truth.runs("bt9 sequence", [got for _, got, _ in parsed], exp, lost_end)
    n = 0
    for k, (p, (hdr, got, icnts)) in enumerate(zip(pos, parsed)):
        # the first count of a part after a gap starts at the resume IP
        first = 0 if k == 0 else 1
        truth.compare("bt9 part %d inst_cnt" % k, icnts[first:-1],
                      [b.insns - 1 for b in want[p + first:p + len(got)]])
        n += len(got)
    print("bt9: %d parts, %d branches are runs of the ground truth (%d lost)" % (parts + 1, n, len(exp) - n))


if __name__ == "__main__":
    main()
