#!/usr/bin/env python3
"""One gap per loss (ptconv-convert(1), GAPS): check the gaps of -f text
conversions of one recording, by several engines, against the losses the
encoder made.

Written from ptconv-convert(1) (the text format and the rule) and the
encoder's --gaps lines (tests/ptgen/encode/gen.c); shares nothing with
ptconv.

usage: pt_gap_rule.py GAPSFILE AUXPREFIX PERFDUMP OUTDIR...
       pt_gap_rule.py --nothing-decodable PERFDUMP OUTDIR...

GAPSFILE: ptgen-encode --gaps; AUXPREFIX: its --aux-dump PREFIX (the AUX
stream of queue N in PREFIX.N.pt); PERFDUMP: `perf script -D` of the
recording; each OUTDIR a conversion with -f text (summary.json and
PID-TID.txt files).

Every engine must give the same losses, counted once: summary.json's gaps
(but records-lost ones, which are no loss of trace) as many as the encoder
made, lost_trace_bytes their sum, and each loss the one the encoder made:
  ovf: cause overflow at the OVF packet (ovf_at), no trace byte lost (the
       CPU dropped packets it never wrote: aux = resume), ip where the
       packets written before it say the thread's stream continues
       (last_ip), resume-ip where the FUP after it says;
  drop inside AUX records flagged PARTIAL: cause aux-lost, from the
       first record's first byte (their whole range is skipped) to the
       first PSB after the last in the AUX stream (or the stream's end:
       resume "-").
A thread told of a loss it did not own or resume after ("ran during")
repeats it without counting it.  The end of a queue's data is where the
encoder's AUX stream (AUXPREFIX) ends: perf's AUXTRACE records pad it to 8
bytes, which are no trace.

--nothing-decodable: a recording none of whose code is at hand: each AUX
queue is one no-image loss, from the first packet (but PAD) after the one
that names where tracing starts (TIP.PGE) to the queue's end, as perf's
packet dump lists them.  Exit 0 when everything holds.
"""
import json
import os
import re
import sys

PSB = bytes([0x02, 0x82] * 8)


def read_out(outdir):
    """(summary, {tid: [gap fields]}) of one conversion."""
    summary = json.load(open(os.path.join(outdir, "summary.json")))
    gaps = {}
    for name in sorted(os.listdir(outdir)):
        if not name.endswith(".txt"):
            continue
        for line in open(os.path.join(outdir, name)):
            f = line.split()
            if len(f) < 3 or f[1] != "gap":
                continue
            head, _, detail = line.partition(" : ")
            kv = dict(x.split("=", 1) for x in head.split()[3:] if "=" in x)
            kv["cause"] = f[2]
            kv["bystander"] = detail.startswith("ran during")
            gaps.setdefault(int(f[0]), []).append(kv)
    return summary, gaps


def losses(gaps):
    """The distinct losses told (not as a bystander), each once."""
    seen = []
    for tid in sorted(gaps):
        for g in gaps[tid]:
            if g["bystander"] or g["cause"] == "records-lost":
                continue
            key = tuple(g[k] for k in ("cause", "aux", "resume", "lost-bytes", "ip", "resume-ip"))
            if key not in seen:
                seen.append(key)
    return sorted(seen)


def aux_ends(dump):
    """{queue: end of its data} from perf's AUXTRACE records."""
    ends = {}
    for line in open(dump, errors="replace"):
        m = re.search(r"PERF_RECORD_AUXTRACE size: (0x[0-9a-f]+|0)\s+offset: (0x[0-9a-f]+|0)\s.*idx: (\d+)", line)
        if m:
            q, e = int(m.group(3)), int(m.group(2), 16) + int(m.group(1), 16)
            ends[q] = max(ends.get(q, 0), e)
    return ends


def queues_undecodable(dump):
    """[(first undecodable packet, end)] per queue listed by perf."""
    qs = []
    for line in open(dump, errors="replace"):
        m = re.match(r"\.\s+([0-9a-f]{8}):\s+((?:[0-9a-f]{2} )+)\s*(.*)$", line)
        if not m:
            continue
        off, nb, name = int(m.group(1), 16), len(m.group(2).split()), m.group(3).strip()
        if off == 0 and name.startswith("PSB"):
            qs.append([None, None, 0])   # [after the PGE, lost from, end]
        if not qs:
            continue
        q = qs[-1]
        q[2] = off + nb
        if name.startswith("PAD"):
            continue
        if q[0] and q[1] is None:
            q[1] = off
        if name.startswith("TIP.PGE") and q[0] is None:
            q[0] = True
    return [(q[1], q[2]) for q in qs]


def expected(gapsfile, prefix, ends):
    want = []
    partial = {}
    lines = [l.split() for l in open(gapsfile) if l.strip()]
    for w in lines:
        kv = dict(zip(w[1::2], w[2::2]))
        if w[0] == "partial":
            partial.setdefault(int(kv["queue"]), []).append((int(kv["aux"]), int(kv["size"])))
    for w in lines:
        kv = dict(zip(w[1::2], w[2::2]))
        if w[0] == "ovf":
            want.append(("overflow", int(kv["ovf_at"]), int(kv["last_ip"], 16), int(kv["ip"], 16)))
        elif w[0] == "drop":
            q = int(kv["queue"])
            # the records the cut spans, skipped whole: one loss
            aux = partial[q][0][0]
            rec_end = max(a + n for a, n in partial[q])
            data = open("%s.%d.pt" % (prefix, q), "rb").read()
            psb = data.find(PSB, rec_end)
            want.append(("aux-lost", aux, psb if psb >= 0 else None, min(ends[q], len(data))))
    return want


def main():
    if sys.argv[1] == "--nothing-decodable":
        qs = queues_undecodable(sys.argv[2])
        want = [("no-image", s, e) for s, e in qs]
        outdirs = sys.argv[3:]
    else:
        gapsfile, prefix, dump, outdirs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
        want = expected(gapsfile, prefix, aux_ends(dump))
    errors = 0
    first = None
    for outdir in outdirs:
        summary, gaps = read_out(outdir)
        eng = summary["engine"]
        got = losses(gaps)
        counted = sum(v for k, v in summary["gaps_by_cause"].items() if k != "records-lost")
        if counted != len(want) or len(got) != len(want):
            print("%s: %d losses counted, %d told, the encoder made %d" % (eng, counted, len(got), len(want)))
            errors += 1
        total = sum(int(g[3]) for g in got)
        if summary["lost_trace_bytes"] != total:
            print("%s: lost_trace_bytes %d, the losses' sum %d" % (eng, summary["lost_trace_bytes"], total))
            errors += 1
        for w in want:
            if w[0] == "no-image":
                ok = [g for g in got if g[0] == "no-image" and int(g[1], 16) == w[1] and g[2] == "-" and
                      int(g[3]) == w[2] - w[1]]
                what = "code in no image from %d to the end (%d)" % w[1:]
            elif w[0] == "overflow":
                ok = [g for g in got if g[0] == "overflow" and int(g[4], 16) == w[2] and int(g[5], 16) == w[3]
                      and g[3] == "0" and int(g[1], 16) == w[1] and g[2] == g[1]]
                what = "an overflow at its OVF packet (%d), ip 0x%x, resuming at 0x%x, no byte lost" % w[1:]
            else:
                aux, psb, end = w[1:]
                lost = (psb if psb is not None else end) - aux
                ok = [g for g in got if g[0] == "aux-lost" and int(g[1], 16) == aux and int(g[3]) == lost and
                      (g[2] == "-" if psb is None else g[2] != "-" and int(g[2], 16) == psb)]
                what = "AUX data lost from %d to %s, %d bytes" % (aux, psb if psb is not None else "the end", lost)
            if not ok:
                print("%s: no gap for %s; got %s" % (eng, what, got))
                errors += 1
        by_thread = {tid: len(g) for tid, g in gaps.items()}
        per_summary = {t["tid"]: t["gaps"] for t in summary["threads"] if t["gaps"]}
        if by_thread != per_summary:
            print("%s: threads' gaps in summary.json %s, in their files %s" % (eng, per_summary, by_thread))
            errors += 1
        mine = (summary["gaps_by_cause"], summary["lost_trace_bytes"], per_summary, got,
                sorted((tid, sorted(tuple(sorted(g.items())) for g in gs)) for tid, gs in gaps.items()))
        if first is None:
            first = (eng, mine)
        elif mine != first[1]:
            print("%s and %s differ:\n  %s\n  %s" % (first[0], eng, first[1], mine))
            errors += 1
        print("%s: %d losses (%s), %d bytes, %d gaps told to %d threads" %
              (eng, len(got), ", ".join(sorted(set(g[0] for g in got))), total, sum(by_thread.values()),
               len(by_thread)))
    print("FAIL" if errors else "OK")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
