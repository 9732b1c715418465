#!/usr/bin/env python3
"""Check ptconv's -f perfetto output against a ptgen ground truth.

Written from Perfetto's public description of its trace format (a Trace
is a sequence of TracePacket fields 1; TracePacket: timestamp 8,
trusted_packet_sequence_id 10, track_event 11, interned_data 12,
sequence_flags 13, trace_packet_defaults 59, track_descriptor 60; the
TrackEvent, TrackDescriptor, InternedData and DebugAnnotation fields
below), protobuf's wire-format specification and the rules of
ptconv-formats(5) ("perfetto", "xray"); it shares no code with ptconv.
The truth's calls and returns are turned into enters and exits by
xray_truth.py (the same rules), names read here from the ELF symbols
(C++ names demangled by LLVM's llvm-cxxfilt, a demangler of its own:
binutils' c++filt spells std::string out in full).

usage: perfetto_truth.py TRUTH OUTDIR [--gaps GAPSFILE] [--untimed]
                         [--min-dur N] [--max-depth N] [--cxxfilt PATH]

It reads OUTDIR/perfetto.pftrace as a trace processor would: packets in
sequences, a sequence's names interned after it cleared its state, the
events of a sequence on the track its defaults name, a track per thread
with its pid and tid, a process track per process.  Each thread's events
(slice begins with their names, ends, and the instants that mark a loss)
must be the truth's in order, ends at a loss marked so; time must never
go back on a track; every process must have its name; the complete
slices per function name must be the truth's calls.  With --untimed the
times are instruction counts: every event's time must be the truth's.
With --min-dur and --max-depth (needs --untimed: the truth has no other
clock), the truth's slices shorter than N instructions or nested N deep
are left out of what is expected.  Exit 0 when everything holds; prints
one summary line.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xray_truth as xt  # noqa: E402  (the truth's calls, shared with the xray check)

LOST = 3        # an exit at a loss, besides xray_truth's ENTER, EXIT, TAIL
INSTANT = 4     # the instant that marks a loss


# ---- protobuf wire format ----

def varint(d, pos):
    v = shift = 0
    while True:
        if pos >= len(d):
            raise ValueError("varint runs past the end")
        b = d[pos]
        pos += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, pos
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def fields(d):
    """(field number, value) of a message: an int for varints and fixed
    values, bytes for length-delimited ones."""
    pos = 0
    while pos < len(d):
        key, pos = varint(d, pos)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ValueError("field number 0")
        if wt == 0:
            v, pos = varint(d, pos)
        elif wt == 1:
            v, pos = int.from_bytes(d[pos:pos + 8], "little"), pos + 8
        elif wt == 5:
            v, pos = int.from_bytes(d[pos:pos + 4], "little"), pos + 4
        elif wt == 2:
            n, pos = varint(d, pos)
            v, pos = d[pos:pos + n], pos + n
            if pos > len(d):
                raise ValueError("length-delimited field runs past the end")
        else:
            raise ValueError("wire type %d" % wt)
        yield num, v


def one(d, num, default=None):
    v = default
    for n, x in fields(d):
        if n == num:
            v = x
    return v


# ---- the trace as a trace processor reads it ----

class Trace:
    def __init__(self, path):
        data = open(path, "rb").read()
        self.tracks = {}        # uuid -> ("thread", pid, tid, name) or ("process", pid, name)
        self.events = {}        # track uuid -> [(ts, kind, name, lost)]
        self.errors = []
        seqs = {}               # sequence id -> {"valid", "names", "track"}
        for num, pk in fields(data):
            if num != 1 or not isinstance(pk, bytes):
                raise ValueError("%s: a Trace holds packets (field 1) only, not field %d" % (path, num))
            f = {}
            for n, v in fields(pk):
                f[n] = v
            seq = seqs.setdefault(f.get(10, 0), {"valid": False, "names": {}, "track": None})
            flags = f.get(13, 0)
            if flags & 1:
                seq["valid"], seq["names"], seq["track"] = True, {}, None
            if 59 in f:
                ted = one(f[59], 11)
                if ted is not None:
                    seq["track"] = one(ted, 11)
            if flags & 2 and not seq["valid"]:
                self.errors.append("sequence %d: a packet needs incremental state before it was cleared" % f.get(10, 0))
                continue
            if 12 in f:
                for n, en in fields(f[12]):
                    if n == 2:
                        seq["names"][one(en, 1)] = one(en, 2, b"").decode()
            if 60 in f:
                self.descriptor(f[60])
            if 11 in f:
                self.event(f.get(8), f[11], seq)

    def descriptor(self, d):
        uuid = one(d, 1)
        th, pr = one(d, 4), one(d, 3)
        if th is not None:
            self.tracks[uuid] = ("thread", one(th, 1), one(th, 2), one(th, 5, b"").decode())
        elif pr is not None:
            self.tracks[uuid] = ("process", one(pr, 1), one(pr, 6, b"").decode())

    def event(self, ts, d, seq):
        typ = one(d, 9, 0)
        track = one(d, 11, seq["track"])
        if ts is None or track is None:
            self.errors.append("a track event without a time or a track")
            return
        name, lost = None, None
        if typ in (1, 3):
            iid = one(d, 10)
            if iid is not None:
                if iid not in seq["names"]:
                    self.errors.append("name iid %d not interned on its sequence" % iid)
                    return
                name = seq["names"][iid]
            else:
                name = one(d, 23, b"").decode()
        for n, a in fields(d):
            if n == 4 and one(a, 10) == b"closed at a loss":
                lost = one(a, 6, b"").decode()
        self.events.setdefault(track, []).append((ts, {1: "B", 2: "E", 3: "I"}.get(typ, "?"), name, lost))


# ---- the truth's names ----

def demangle(names, cxxfilt):
    mangled = sorted(n for n in names if n.startswith("_Z"))
    if not mangled:
        return {}
    p = subprocess.run([cxxfilt], input="\n".join(mangled) + "\n", stdout=subprocess.PIPE,
                       universal_newlines=True, check=True)
    return dict(zip(mangled, p.stdout.split("\n")))


def names_of(space, f):
    """The names the function that starts at f may have (its symbols'),
    or IMAGE+0xVADDR / 0xADDRESS without one."""
    for (s, e, pgoff, path) in space.maps:
        if s <= f < e:
            elf = xt.elf(path)
            v = elf.vaddr(f - s + pgoff) if elf else None
            if elf and v is not None and elf.start(v) == v:
                return frozenset(elf.names[v])
            # the vDSO is the recording's "[vdso]" (ptgen-trace dumps
            # it as vdso-BUILDID.so)
            image = os.path.basename(path)
            if re.match(r"vdso-[0-9a-f]+\.so$", image):
                image = "[vdso]"
            return frozenset(["%s+0x%x" % (image, v if v is not None else f - s + pgoff)])
    return frozenset(["0x%x" % f])


def read_truth(path, gaps):
    branch = xt.branch

    def branch_in(th, space, *a):
        th.space = space
        branch(th, space, *a)

    def emit(self, kind, f):
        self.events.append((kind, f, names_of(self.space, f) if kind == xt.ENTER else None))
        self.times.append(self.insns)

    def gap(self):
        while self.stack:
            self.emit(LOST, self.stack.pop()[0])
        self.emit(INSTANT, 0)

    xt.branch, xt.Thread.emit, xt.Thread.gap = branch_in, emit, gap
    return xt.read_truth(path, gaps)


def slices(th):
    """The truth's events as slices: [begin index, end index or None,
    depth]; end None when open at the end."""
    out, open_ = [], []
    for i, (kind, _, _) in enumerate(th.events):
        if kind == xt.ENTER:
            open_.append(len(out))
            out.append([i, None, len(open_) - 1])
        elif kind in (xt.EXIT, xt.TAIL, LOST):
            out[open_.pop()][1] = i
    return out


def expected(th, min_dur, max_depth):
    """The events ptconv writes for the truth's thread th: (time, kind,
    names, lost) in order."""
    keep = set()
    for (b, e, depth) in slices(th):
        end = th.times[e] if e is not None else th.insns
        if end - th.times[b] >= min_dur and (not max_depth or depth < max_depth):
            keep.add(b)
            if e is not None:
                keep.add(e)
    out = []
    for i, (kind, _, names) in enumerate(th.events):
        if kind == INSTANT:
            out.append((th.times[i], "I", None, None))
        elif i in keep:
            out.append((th.times[i], "B" if kind == xt.ENTER else "E", names, kind == LOST))
    return out


def main():
    ap = xt.truth_args("-f perfetto against a ptgen ground truth")
    ap.add_argument("--cxxfilt", default="llvm-cxxfilt", help="the demangler of C++ names")
    ap.add_argument("--counts", help="write here the complete slices per name, N NAME a line")
    ap.add_argument("--min-dur", type=int, default=0)
    ap.add_argument("--max-depth", type=int, default=0)
    a = ap.parse_args()
    if (a.min_dur or a.max_depth) and not a.untimed:
        ap.error("--min-dur and --max-depth need --untimed (the truth's clock)")
    want = read_truth(a.truth, xt.read_gaps(a.gaps))
    tr = Trace(os.path.join(a.outdir, "perfetto.pftrace"))
    errors = list(tr.errors)
    dm = demangle(set(n for th in want.values() for (_, _, ns) in th.events if ns for n in ns), a.cxxfilt)
    by_tid = {}
    for uuid, t in tr.tracks.items():
        if t[0] == "thread":
            by_tid[t[2]] = uuid
    procs = set(t[1] for t in tr.tracks.values() if t[0] == "process" and t[2])
    nev = nslices = nlost = 0
    counts_got, counts_want = {}, {}
    for th in sorted(want.values(), key=lambda t: t.tid):
        if not th.events:
            continue
        if th.tid not in by_tid:
            errors.append("thread %d: no track" % th.tid)
            continue
        uuid = by_tid[th.tid]
        if tr.tracks[uuid][1] != th.pid or th.pid not in procs:
            errors.append("thread %d: not in process %d, or that process has no named track" % (th.tid, th.pid))
        got = tr.events.get(uuid, [])
        if any(got[k][0] > got[k + 1][0] for k in range(len(got) - 1)):
            errors.append("thread %d: time goes back on its track" % th.tid)
        exp = expected(th, a.min_dur, a.max_depth)
        k = 0
        while k < min(len(got), len(exp)):
            (gt, gk, gn, gl), (et, ek, en, el) = got[k], exp[k]
            names = en and set(dm.get(n, n) for n in en)
            if gk != ek or (ek == "B" and gn not in names) or (ek == "E" and bool(gl) != el) or \
                    (ek == "I" and not gn.startswith("trace lost: ")) or (a.untimed and gt != et):
                break
            k += 1
        if k < len(got) or k < len(exp):
            errors.append("thread %d: %d events, the truth gives %d; the first difference at %d: got %s, want %s"
                          % (th.tid, len(got), len(exp), k, got[k] if k < len(got) else "the end",
                             exp[k][:2] + (sorted(exp[k][2]) if exp[k][2] else None, exp[k][3])
                             if k < len(exp) else "the end"))
        # complete slices per name, paired as a trace processor pairs them
        stack = []
        for (ts, kind, name, lost) in got:
            if kind == "B":
                stack.append(name)
            elif kind == "E" and stack:
                n = stack.pop()
                counts_got[n] = counts_got.get(n, 0) + 1
                nslices += 1
                nlost += bool(lost)
        stack = []
        for (ts, kind, names, lost) in exp:
            if kind == "B":
                stack.append(set(dm.get(n, n) for n in names))
            elif kind == "E":
                counts_want.setdefault(frozenset(stack.pop()), []).append(1)
        nev += len(got)
    # the truth's calls per function (one of its names: the one ptconv gave)
    want_by_name = {}
    for names, c in counts_want.items():
        n = min(names & set(counts_got)) if names & set(counts_got) else min(names)
        want_by_name[n] = want_by_name.get(n, 0) + len(c)
    if want_by_name != counts_got:
        n = min(set(want_by_name) ^ set(counts_got) or
                [x for x in want_by_name if want_by_name[x] != counts_got[x]])
        errors.append("%s: %d complete slices, the truth %d calls" % (n, counts_got.get(n, 0), want_by_name.get(n, 0)))
    for e in errors[:10]:
        print(e)
    if errors:
        return 1
    hot = sorted(counts_got.items(), key=lambda x: (-x[1], x[0]))
    if a.counts:
        with open(a.counts, "w") as f:
            f.write("".join("%d %s\n" % (c, n) for n, c in hot))
    hot = hot[:3]
    print("%d threads, %d events, %d complete slices (%d closed at a loss) as the truth's, "
          "%d returns without a slice%s; most called: %s"
          % (len(by_tid), nev, nslices, nlost, sum(t.orphans for t in want.values()),
             ", times in instructions exact" if a.untimed else "",
             ", ".join("%s %d" % x for x in hot)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
