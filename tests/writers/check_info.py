#!/usr/bin/env python3
"""Check `ptconv info --json TRACE.ptc` against this suite's independent
reader of the format (read_ptc.py, written from ptconv-trace(5)): the
header facts, the gaps by kind, the first and last records' times, and
where the file's bytes go, each part where that reader found it.
With a ground truth, the branch and instruction totals must also be the
truth's.
usage: check_info.py FILE.ptc INFO.json [X.truth]"""
import json
import os
import sys

import read_ptc
import truth


def layout(t):
    """The parts of the file as read_ptc.read(), following the man page,
    found them: the chunks from the chunk index, the node and edge tables
    from where their parsing ended."""
    p = t["parts"]
    chunks, nc, ng = p["chunks"], len(p["chunks"]), p["gaps"]
    comp = sum(c[1] for c in chunks)
    return dict(cpu=p["cpu"], nodes=len(t["nodes"]), edges=p["edges"], spans=p["spans"], bytes=dict(
        file=p["size"], header=p["header"], chunks=comp, chunks_expanded=sum(c[5] for c in chunks),
        static=16 + p["static_comp"], static_expanded=p["static_raw"], static_head=p["static_head"],
        tables=p["tables_end"] - p["static_head"], chunk_index=nc * 48, gap_table=ng * 72, code=p["code"],
        strings=p["strings"], symbols=p["symbol_bytes"],
        other=p["size"] - p["header"] - comp - 16 - p["static_comp"]), chunks=chunks, symbols=p["symbols"])


def main():
    path, info = sys.argv[1], json.load(open(sys.argv[2]))
    t = read_ptc.read(path)
    lay = layout(t)
    recs = t["recs"]
    gaps = [r[1] for r in recs if r[0] == "gap"]
    starts = [g for g in gaps if g[0] == 7]
    losses = [g for g in gaps if g[0] != 7]
    branches = len(recs) - len(gaps)
    time_of = lambda r: r[1][3] if r[0] == "gap" else r[0]
    want = dict(kind="ptconv-trace", pid=t["pid"], tid=t["tid"], cpu=lay["cpu"], comm=t["comm"],
                records=len(recs), branches=branches, gaps=len(losses), stream_starts=len(starts),
                lost_bytes=sum(g[7] for g in losses),
                lost_branches=sum(g[6] for g in losses if g[6] != 2**64 - 1),
                gaps_losing_unknown_branches=sum(1 for g in losses if g[6] == 2**64 - 1),
                instructions=t["ninsn"], tail_instructions=t["tail"],
                static_nodes=lay["nodes"], edges=lay["edges"], chunks=len(lay["chunks"]),
                max_chunk_records=max((c[4] for c in lay["chunks"]), default=0),
                symbols=lay["symbols"], untimed=t["untimed"], bytes=lay["bytes"])
    if recs:
        want["first_time"] = time_of(recs[0])
        want["last_time"] = time_of(recs[-1])
    if lay["spans"]:
        want["code_ranges"] = lay["spans"]
    for k, v in want.items():
        if info.get(k) != v:
            truth.fail("info %s: %r, the file says %r" % (k, info.get(k), v))
    b = lay["bytes"]
    if b["file"] != os.path.getsize(path) or \
       b["header"] + b["chunks"] + b["static"] + b["other"] != b["file"] or \
       sum(b[k] for k in ("static_head", "tables", "chunk_index", "gap_table", "code", "strings",
                                "symbols")) != \
       b["static_expanded"]:
        truth.fail("the parts do not add up: %r" % b)
    if len(sys.argv) > 3:
        tb, _ = truth.load(sys.argv[3])
        got = info["instructions"] - info["tail_instructions"]
        if info["branches"] != len(tb) or got != sum(x.insns for x in tb):
            truth.fail("info: %d branches, %d instructions up to the last; the truth %d, %d" % (
                info["branches"], got, len(tb), sum(x.insns for x in tb)))
    print("info agrees: %d records, %d chunks, %d gaps, %d stream starts, %d bytes" % (
        len(recs), len(lay["chunks"]), len(losses), len(starts), b["file"]))


if __name__ == "__main__":
    main()
