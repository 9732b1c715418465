#!/usr/bin/env python3
"""Independent BT9 reader applying the rules of the CBP2016 framework's
reader and main loop (its bt9_reader.h and main.cc, read at the
evaluation framework's import in zhuanshulz/cbp2016, commit 245b3dd;
ptconv-formats(5)), and comparing the edge sequence with the ground truth.
usage: read_bt9.py FILE.bt9.gz X.truth [--parts N] [--lost-end]
With --parts N the recording lost data N times: the trace is then FILE and
its part files NAME.part1.bt9.gz .. partN of FILE NAME.bt9.gz
(ptconv-formats(5)), each a complete BT9 trace of a gap-free run of the
truth's branches, in order: the first from the truth's start, the last up
to its end (with --lost-end: before it, the recording ends in a loss).

The reader's rules, each enforced below: the first token of the first line
is BT9_SPA_TRACE_FORMAT; a header line is a key token ending in ':' and its
value, and main reads total_instruction_count: and
branch_instruction_count: (numbers in C's base 0: a leading 0 would be
octal); '#' starts a comment anywhere, dropping the rest of the line; node
ids, sizes, edge ids, their node ids and the sequence's entries are read
with stoi (2^31 and more abort the reader); nodes are keyed by address,
node 0 (the dummy source) by all ones but one, and a duplicate key exits;
a node id indexes a table as large as the largest id (ptconv: 0..n-1); an
edge is keyed by (source address, taken target or 0), by (source address,
all ones) when its destination has size 0, which is how the reader knows
the dummy sink, and a duplicate key exits, so every branch node has a
size of at least 1; edge ids index a table as well (a duplicate id loses
an edge: ptconv 0..m-1); class tokens (RET, JMP, CALL; DIR, IND; CND, UCD)
and behavior tokens (AT, ANT, DYN; DIR, IND) outside their lists exit,
and main needs a type, a conditionality and, but for RET, a directness,
or exits (OPTYPE_ERROR) on every edge whose source is not node 0; the
sequence ends at the first EOF line (what follows is never read)."""
import gzip
import sys

import truth

KIND = {"JMP+DIR+UCD": 0, "JMP+IND+UCD": 1, "CALL+DIR+UCD": 2, "CALL+IND+UCD": 3,
        "RET+IND+UCD": 4, "JMP+DIR+CND": 5}
ONES = 0xFFFFFFFFFFFFFFFF
CLASS_TOKENS = ({"RET", "JMP", "CALL"}, {"DIR", "IND"}, {"CND", "UCD"})
BEHAVIOR_TOKENS = {"AT", "ANT", "DYN", "DIR", "IND"}


def stoi(tok, what):
    """A field the reader reads with stoi: an int, or the reader aborts."""
    v = int(tok, 0)
    if not 0 <= v < 1 << 31:
        truth.fail("%s %s: out of the reader's int range" % (what, tok))
    return v


def check_class(cls):
    """The class as the reader parses it and main classifies it."""
    toks = cls.split("+")
    got = [[t for t in toks if t in group] for group in CLASS_TOKENS]
    if any(t not in set().union(*CLASS_TOKENS) for t in toks):
        truth.fail("class %s: a token the reader does not know" % cls)
    if not got[0] or not got[2] or (got[0][-1] != "RET" and not got[1]):
        truth.fail("class %s: main needs a type, a conditionality and a directness" % cls)


def parse(path):
    """One BT9 file, checked against the framework's rules; returns its
    header, branches (addr, kind, taken, target, size) and inst_cnt per
    traversed edge."""
    text = gzip.open(path, "rt").read()
    if "#" in text:
        truth.fail("a '#': the reader drops the rest of its line")
    lines = text.split("\n")
    if lines[0].split()[:1] != ["BT9_SPA_TRACE_FORMAT"]:
        truth.fail("first line %r" % lines[0])
    hdr, i = {}, 1
    while lines[i] != "BT9_NODES":
        k, v = lines[i].split(None, 1)
        if not k.endswith(":"):
            truth.fail("header line %r: the key is not one token ending in ':'" % lines[i])
        hdr[k[:-1]] = int(v, 0)
        i += 1
    for k in ("total_instruction_count", "branch_instruction_count"):
        if k not in hdr:
            truth.fail("header lacks " + k)
    i += 1
    nodes, node_keys = {}, set()
    while lines[i] != "BT9_EDGES":
        p = lines[i].split()
        if p[0] != "NODE" or p[3] != "-":
            truth.fail("bad node line %r" % lines[i])
        nid, addr, size = stoi(p[1], "node id"), int(p[2], 0), stoi(p[5], "node size")
        key = ONES - 1 if nid == 0 else addr
        if key in node_keys:
            truth.fail("duplicate node key 0x%x" % key)
        node_keys.add(key)
        if nid in nodes:
            truth.fail("duplicate node id %d" % nid)
        if len(p) > 6:
            f = dict(zip(p[6::2], p[7::2]))
            cls = f["class:"]
            check_class(cls)
            if any(t not in BEHAVIOR_TOKENS for t in f["behavior:"].split("+")):
                truth.fail("behavior %s" % f["behavior:"])
            if size < 1:
                truth.fail("node %d: size %d, which makes edges into it edges into the dummy sink" % (nid, size))
            nodes[nid] = dict(addr=addr, size=size, cls=cls, beh=f["behavior:"],
                              taken=int(f["taken_cnt:"]), nt=int(f["not_taken_cnt:"]),
                              tgt=int(f["tgt_cnt:"]))
        else:
            nodes[nid] = dict(addr=addr, size=size, cls=None)
        i += 1
    ids = sorted(nodes)
    if ids != list(range(len(ids))):
        truth.fail("node ids not 0..n-1")
    if nodes[0]["addr"] != 0 or nodes[0]["cls"] is not None or nodes[0]["size"]:
        truth.fail("first node is not the dummy")
    last = ids[-1]
    if nodes[last]["addr"] != ONES or nodes[last]["cls"] is not None or nodes[last]["size"]:
        truth.fail("last node is not the dummy sink")
    i += 1
    edges, keys = {}, set()
    while lines[i] != "BT9_EDGE_SEQUENCE":
        p = lines[i].split()
        if p[0] != "EDGE" or p[6] != "-" or p[8] != "traverse_cnt:":
            truth.fail("bad edge line %r" % lines[i])
        eid, src, dst = stoi(p[1], "edge id"), stoi(p[2], "edge source"), stoi(p[3], "edge destination")
        tn, tgt, icnt, cnt = p[4], int(p[5], 0), int(p[7]), int(p[9])
        if src not in nodes or dst not in nodes or tn not in ("T", "N"):
            truth.fail("edge %d: bad nodes" % eid)
        if eid in edges:
            truth.fail("duplicate edge id %d" % eid)
        # the reader's key; an edge into a node of size 0 is an edge into
        # the dummy sink
        key = (nodes[src]["addr"], tgt if tn == "T" else 0)
        if nodes[dst]["size"] == 0:
            key = (nodes[src]["addr"], ONES)
        if key in keys:
            truth.fail("duplicate edge %r" % (key,))
        keys.add(key)
        edges[eid] = dict(src=src, dst=dst, taken=tn == "T", tgt=tgt, icnt=icnt, cnt=cnt)
        i += 1
    if sorted(edges) != list(range(len(edges))):
        truth.fail("edge ids not 0..m-1")
    seq, rest = [], lines[i + 1:]
    for k, l in enumerate(rest):
        if l.strip() == "EOF":
            if any(x.strip() for x in rest[k + 1:]):
                truth.fail("lines after EOF, which the reader never reads")
            break
        if l.strip():
            seq.append(stoi(l, "sequence entry"))
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
    # main skips an edge from node 0 without a class, and exits on one
    # from any other node without a class
    if any(nodes[edges[e]["src"]]["cls"] is None for e in seq[1:]):
        truth.fail("an edge after the first leaves a node without a class")
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
