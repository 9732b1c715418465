#!/usr/bin/env python3
"""Check ptconv's -f xray output against a ptgen ground truth.

Written from tests/ptgen/ground-truth.md, the ELF specification, LLVM's
description of the XRay FDR log and the rules of ptconv-formats(5)
("xray"); shares no code with ptconv.

usage: xray_truth.py TRUTH OUTDIR [--gaps GAPSFILE] [--untimed] [--llvm-xray PATH] [-v]

The truth's branches are turned into function enter, exit and tail-exit
events per thread by the rules the man page states, with function symbols
read here from the ELF files the truth's mappings name (.symtab, else
.dynsym); the events are those of OUTDIR/xray.PID.fdr, read here,
function ids named by OUTDIR/xray.PID.map.yaml.  With --gaps (the
encoder's record of where it lost trace: taken branches [first, resume)
of the truth), every frame is left at the loss and the branches after it
start from an empty stack.  With --untimed (a recording without timing
packets), every record's time must be the thread's instructions up to
and including its branch.  With --llvm-xray, llvm-xray's fdr-dump --verify must
accept the log, its account must
count per function the calls that the truth's events complete, its
stack and graph must read the log, and convert --output-format=trace_event
must give valid JSON with one begin per enter and one end per exit.
Exit 0 when everything holds; prints one summary line per process.
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys

ENTER, EXIT, TAIL = 0, 1, 2
NAMES = {ENTER: "enter", EXIT: "exit", TAIL: "tail-exit"}


# ---- ELF: loadable segments and function symbols ----

class Elf:
    def __init__(self, path):
        d = open(path, "rb").read()
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise ValueError("%s: not a 64-bit little-endian ELF file" % path)
        (phoff, shoff) = struct.unpack_from("<QQ", d, 0x20)
        (phentsize, phnum, shentsize, shnum) = struct.unpack_from("<HHHH", d, 0x36)
        self.loads = []
        for i in range(phnum):
            p_type, p_flags, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
                "<IIQQQQ", d, phoff + i * phentsize)
            if p_type == 1:
                self.loads.append((p_offset, p_filesz, p_vaddr))
        secs = []
        for i in range(shnum):
            f = struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
            secs.append(f)
        syms = []
        for want in (2, 11):    # SHT_SYMTAB, else SHT_DYNSYM
            for (name, stype, flags, addr, off, size, link, info, align, ent) in secs:
                if stype != want or not ent:
                    continue
                stroff = secs[link][4]
                for k in range(size // ent):
                    st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from(
                        "<IBBHQQ", d, off + k * ent)
                    if st_info & 0xf != 2 or st_shndx == 0 or st_value == 0:
                        continue
                    if d[stroff + st_name] == 0:
                        continue
                    syms.append((st_value, st_size, d[stroff + st_name:d.index(b"\0", stroff + st_name)]))
            if syms:
                break
        self.starts = sorted(set(a for a, _, _ in syms))
        self.sizes = {}
        self.names = {}     # start -> the names of the symbols there
        for a, s, n in syms:
            self.sizes.setdefault(a, []).append(s)
            self.names.setdefault(a, set()).add(n.decode("utf-8", "replace"))

    def vaddr(self, off):
        for (o, n, v) in self.loads:
            if o <= off < o + n:
                return v + off - o
        return None

    def start(self, v):
        """The start of the symbol v belongs to: the greatest start at or
        below v, when one of the symbols there holds v."""
        lo, hi = 0, len(self.starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.starts[mid] <= v:
                lo = mid + 1
            else:
                hi = mid
        if not lo:
            return None
        a = self.starts[lo - 1]
        for s in self.sizes[a]:
            if v - a < s or (s == 0 and v == a):
                return a
        return None


ELVES = {}


def elf(path):
    if path not in ELVES:
        try:
            ELVES[path] = Elf(path)
        except (OSError, ValueError):
            ELVES[path] = None
    return ELVES[path]


# ---- the truth ----

class Space:
    """A process's executable mappings: (start, end, pgoff, file)."""

    def __init__(self, maps=None):
        self.maps = list(maps or [])

    def add(self, start, length, pgoff, path):
        end = start + length
        self.maps = [m for m in self.maps if m[1] <= start or m[0] >= end]
        self.maps.append((start, end, pgoff, path))

    def start(self, addr):
        """Run-time start of the function symbol addr belongs to, or None."""
        for (s, e, pgoff, path) in self.maps:
            if s <= addr < e:
                f = elf(path)
                if f is None:
                    return None
                v = f.vaddr(addr - s + pgoff)
                if v is None:
                    return None
                a = f.start(v)
                return None if a is None else addr - (v - a)
        return None


class Thread:
    def __init__(self, tid, pid):
        self.tid, self.pid = tid, pid
        self.stack = []     # [start, is_symbol, return address (0 unknown)]
        self.events = []    # (type, function start)
        self.taken = 0      # taken branches so far (the encoder's --gaps index)
        self.far = None     # a far branch waiting for its R line
        self.insns = 0      # instructions executed so far
        self.carry = 0      # of an asynchronous exit, counted with the next branch
        self.times = []     # per event: the instructions executed by then
        self.orphans = 0    # returns that left no frame

    def emit(self, kind, f):
        self.events.append((kind, f))
        self.times.append(self.insns)

    def unwind(self, depth):
        while len(self.stack) > depth:
            self.emit(EXIT, self.stack.pop()[0])

    def gap(self):
        self.unwind(0)


def branch(th, space, ip, target, kind, length):
    """The rules of ptconv-formats(5), xray: one taken branch."""
    if kind in (2, 3):                      # call
        s = space.start(target)
        f = s if s is not None else target
        th.stack.append([f, s is not None, ip + length])
        th.emit(ENTER, f)
    elif kind == 4:                         # return
        if th.stack and th.stack[-1][2] == 0:
            th.unwind(len(th.stack) - 1)
            return
        for i in range(len(th.stack) - 1, -1, -1):
            if th.stack[i][2] == target:
                th.unwind(i)
                return
        th.orphans += 1
    elif kind in (0, 1, 5):                 # jump
        if not target:
            return
        to = space.start(target)
        if to is None or to == space.start(ip):
            return
        if to == target:                    # tail call
            if th.stack:
                th.emit(TAIL, th.stack[-1][0])
                th.stack[-1][0], th.stack[-1][1] = to, True
            else:
                th.stack.append([to, True, 0])
            th.emit(ENTER, to)
            return
        for i in range(len(th.stack) - 1, -1, -1):
            if th.stack[i][1] and th.stack[i][0] == to:
                th.unwind(i + 1)
                return
    elif kind == 6:                         # far: a handler's entry
        if target and target != ip + length and space.start(target) == target:
            th.stack.append([target, True, 0])
            th.emit(ENTER, target)


def unescape(word):
    """A truth file's word: \\NNN is the byte of octal NNN."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), word)


def read_truth(path, gaps):
    """Per thread, the events the rules give; gaps: tid -> [(first, resume)]
    in taken-branch indices (every thread of the truth when tid is None)."""
    base = os.path.dirname(os.path.abspath(path))
    spaces, threads, tid_pid = {}, {}, {}

    def thread(tid):
        if tid not in threads:
            threads[tid] = Thread(tid, tid_pid.get(tid, tid))
        return threads[tid]

    def flush_far(th, resumed):
        ip, length = th.far
        th.far = None
        tgt = resumed if resumed is not None and resumed != ip + length else 0
        branch(th, spaces[th.pid], ip, tgt, 6, length)

    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#") or f[0] == "V":
            continue
        t = f[0]
        if t == "T":
            pid, tid = int(f[2]), int(f[3])
            tid_pid[tid] = pid
            spaces.setdefault(pid, Space())
            thread(tid).pid = pid
        elif t == "F":
            ppid, pid = int(f[2]), int(f[4])
            if pid != ppid:
                spaces[pid] = Space(spaces.get(ppid, Space()).maps)
        elif t == "C" and f[4] == "1":
            spaces[int(f[2])] = Space()
        elif t == "M":
            pid = int(f[2])
            path_ = unescape(f[9]) if f[9] != "[vdso]" else os.path.join(base, unescape(f[10]))
            spaces.setdefault(pid, Space()).add(int(f[4], 16), int(f[5], 16), int(f[6], 16), path_)
        elif t == "R":
            th = thread(int(f[2]))
            if th.far:
                flush_far(th, int(f[3], 16))
        elif t == "A":
            thread(int(f[2])).carry += int(f[4])
        elif t == "B":
            th = thread(int(f[2]))
            if th.far:
                flush_far(th, None)
            ip, tgt, kind, taken, length = int(f[3], 16), int(f[4], 16), int(f[5]), int(f[6]), int(f[7])
            th.insns += int(f[8]) + th.carry
            th.carry = 0
            if not taken:
                continue
            k = th.taken
            th.taken += 1
            lost = False
            for (first, resume) in gaps.get(th.tid, gaps.get(None, [])):
                if k == first:
                    th.gap()
                if first <= k < resume:
                    lost = True
            if lost:
                continue
            last_before_gap = any(k + 1 == first for (first, _) in gaps.get(th.tid, gaps.get(None, [])))
            if kind == 6:
                if last_before_gap:
                    # where user mode resumed was lost with the gap
                    branch(th, spaces[th.pid], ip, 0, 6, length)
                else:
                    th.far = (ip, length)
                continue
            branch(th, spaces[th.pid], ip, tgt, kind, length)
    for th in threads.values():
        if th.far:
            flush_far(th, None)
    return threads


# ---- the log and the map ----

def read_map(path):
    ids = {}
    pat = re.compile(r"^- \{ id: (\d+), address: (0x[0-9a-f]+), function: (0x[0-9a-f]+), "
                     r"kind: function-enter, always-instrument: true, function-name: \"(.*)\" \}$")
    for line in open(path):
        line = line.rstrip("\n")
        if line in ("---", "..."):
            continue
        m = pat.match(line)
        if not m:
            raise ValueError("%s: unexpected line %r" % (path, line))
        fid = int(m.group(1))
        if fid in ids or not 0 < fid < 1 << 28:
            raise ValueError("%s: id %d twice or out of range" % (path, fid))
        ids[fid] = (int(m.group(3), 16), m.group(4))
    return ids


def read_log(path):
    """tid -> [(type, function id, tsc)], and the header."""
    d = open(path, "rb").read()
    version, ftype, bits, hz = struct.unpack_from("<HHIQ", d, 0)
    if ftype != 1 or version < 3:
        raise ValueError("%s: not an FDR log of version >= 3 (%d, %d)" % (path, version, ftype))
    pos = 32
    threads = {}
    starts = []     # the custom events' times (ptconv-formats(5): a log of several threads)
    while pos < len(d):
        if d[pos] != (7 << 1 | 1):
            raise ValueError("%s: offset %d: no BufferExtents record" % (path, pos))
        size = struct.unpack_from("<Q", d, pos + 1)[0]
        pos += 16
        end = pos + size
        if end > len(d):
            raise ValueError("%s: buffer at %d runs past the end" % (path, pos))
        want = [0, 4, 9, 2]     # NewBuffer, WallClockTime, PID, NewCPUId
        tid = pid = tsc = None
        while pos < end:
            b = d[pos]
            if b & 1:
                kind = b >> 1
                if want:
                    if kind != want[0]:
                        raise ValueError("%s: offset %d: metadata %d, expected %d" % (path, pos, kind, want[0]))
                    want.pop(0)
                if kind == 0:
                    tid = struct.unpack_from("<i", d, pos + 1)[0]
                elif kind == 9:
                    pid = struct.unpack_from("<i", d, pos + 1)[0]
                elif kind == 2:
                    tsc = struct.unpack_from("<Q", d, pos + 3)[0]
                elif kind == 3:
                    t2 = struct.unpack_from("<Q", d, pos + 1)[0]
                    if t2 < tsc:
                        raise ValueError("%s: offset %d: TSCWrap goes back" % (path, pos))
                    tsc = t2
                elif kind == 5:
                    n, t5 = struct.unpack_from("<iQ", d, pos + 1)
                    if n <= 0 or pos + 16 + n > end:
                        raise ValueError("%s: offset %d: custom event of %d bytes" % (path, pos, n))
                    starts.append(t5)
                    pos += 16 + n
                    continue
                elif kind != 4:
                    raise ValueError("%s: offset %d: metadata kind %d" % (path, pos, kind))
                pos += 16
                continue
            if want:
                raise ValueError("%s: offset %d: function record before the preamble" % (path, pos))
            w, delta = struct.unpack_from("<II", d, pos)
            tsc += delta
            threads.setdefault(tid, []).append(((w >> 1) & 7, w >> 4, tsc))
            pos += 8
        if pos != end:
            raise ValueError("%s: buffer of thread %s overruns its extent" % (path, tid))
        threads.setdefault(tid, [])
    # a log of several threads: every buffer begins with the log's earliest time
    first = min((r[0][2] for r in threads.values() if r), default=None)
    logged = sum(1 for r in threads.values() if r)
    if starts != ([first] * logged if logged > 1 else []):
        raise ValueError("%s: custom events at %r, the earliest record at %r in %d buffers"
                         % (path, starts[:3], first, logged))
    return (version, hz), threads


def truth_args(description):
    """The arguments of a check against a truth (this one's and
    perfetto_truth.py's)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("truth")
    ap.add_argument("outdir")
    ap.add_argument("--gaps", help="ptgen-encode's record of its losses")
    ap.add_argument("--untimed", action="store_true", help="times are instruction counts")
    return ap


def read_gaps(path):
    """ptgen-encode's record of its losses, for read_truth (None: none)."""
    gaps = {}
    for line in open(path) if path else []:
        m = re.search(r"\bfirst (\d+)\b.*\bresume (\d+)", line)
        if m:
            gaps.setdefault(None, []).append((int(m.group(1)), int(m.group(2))))
    return gaps


def main():
    ap = truth_args("-f xray against a ptgen ground truth")
    ap.add_argument("--llvm-xray", help="check llvm-xray's account, stack, graph, convert")
    ap.add_argument("-v", action="store_true", help="the most called functions")
    a = ap.parse_args()
    truth_path, outdir, untimed, llvm, verbose = a.truth, a.outdir, a.untimed, a.llvm_xray, a.v
    want = read_truth(truth_path, read_gaps(a.gaps))
    errors = 0
    pids = sorted(set(th.pid for th in want.values() if th.events))
    for pid in pids:
        mp = os.path.join(outdir, "xray.%d.map.yaml" % pid)
        logs = [os.path.join(outdir, "xray.%d.fdr" % pid)]
        if not os.path.exists(logs[0]):
            # xray:threads: a log per thread
            logs = sorted(os.path.join(outdir, n) for n in os.listdir(outdir)
                          if re.match(r"^xray\.%d\.\d+\.fdr$" % pid, n))
        if not logs or not os.path.exists(mp):
            print("process %d: no xray.%d.fdr (or xray.%d.TID.fdr) or no .map.yaml" % (pid, pid, pid))
            errors += 1
            continue
        ids = read_map(mp)
        got, in_log = {}, {}
        for log in logs:
            _, g = read_log(log)
            for tid in g:
                if tid in got:
                    print("thread %d: in two logs" % tid)
                    errors += 1
                got[tid] = g[tid]
                in_log[tid] = log
        counts = {}     # log -> function start -> calls the truth's events complete
        totals = {}     # log -> [enters, exits]
        for th in sorted((t for t in want.values() if t.pid == pid), key=lambda t: t.tid):
            g = got.get(th.tid)
            if g is None:
                if th.events:
                    print("thread %d: not in the log" % th.tid)
                    errors += 1
                continue
            last = 0
            for (_, _, tsc) in g:
                if tsc < last:
                    print("thread %d: time goes back" % th.tid)
                    errors += 1
                    break
                last = tsc
            gs = []
            for (kind, fid, _) in g:
                if fid not in ids:
                    print("thread %d: function id %d not in the map" % (th.tid, fid))
                    errors += 1
                    break
                gs.append((kind, ids[fid][0]))
            if gs != th.events:
                k = 0
                while k < min(len(gs), len(th.events)) and gs[k] == th.events[k]:
                    k += 1
                print("thread %d: %d events, the truth gives %d; the first difference at %d: got %s, want %s"
                      % (th.tid, len(gs), len(th.events), k,
                         "%s 0x%x" % (NAMES[gs[k][0]], gs[k][1]) if k < len(gs) else "the end",
                         "%s 0x%x" % (NAMES[th.events[k][0]], th.events[k][1]) if k < len(th.events) else "the end"))
                errors += 1
            elif untimed and [tsc for (_, _, tsc) in g] != th.times:
                k = 0
                while g[k][2] == th.times[k]:
                    k += 1
                print("thread %d: event %d at %d instructions, the truth says %d" % (th.tid, k, g[k][2], th.times[k]))
                errors += 1
            c = counts.setdefault(in_log[th.tid], {})
            n = totals.setdefault(in_log[th.tid], [0, 0])
            for (kind, f) in th.events:
                if kind == ENTER:
                    n[0] += 1
                else:
                    n[1] += 1
                    c[f] = c.get(f, 0) + 1
        msg = "process %d: %d threads in %d logs, %d functions, %d enters, %d exits, %d returns without a frame" % (
            pid, len(got), len(logs), len(ids), sum(n[0] for n in totals.values()),
            sum(n[1] for n in totals.values()), sum(t.orphans for t in want.values() if t.pid == pid))
        if untimed:
            msg += ", times in instructions exact"
        if llvm:
            bad = 0
            for log in logs:
                bad += check_llvm(llvm, log, mp, ids, counts.get(log, {}), *totals.get(log, [0, 0]))
            errors += bad
            if not bad:
                msg += "; llvm-xray fdr-dump --verify, account, stack, graph and convert agree"
        if verbose:
            for log in logs:
                for a, n in sorted(counts.get(log, {}).items(), key=lambda x: -x[1])[:8]:
                    fid = [i for i in ids if ids[i][0] == a][0]
                    print("  %s: %s (id %d) completes %d calls" % (os.path.basename(log), ids[fid][1], fid, n))
        print(msg)
    return 1 if errors else 0


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode:
        print("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[:500]))
    return p


def check_llvm(llvm, log, mp, ids, counts, nenter, nexit):
    errors = 0
    # its FDR reader and block verifier
    if run([llvm, "fdr-dump", "--verify", log]).returncode:
        errors += 1
    p = run([llvm, "account", "-m", mp, "-f", "csv", log])
    if p.returncode:
        return 1
    lines = p.stdout.strip().split("\n")
    if not lines or not lines[0].startswith("funcid,count"):
        print("llvm-xray account: unexpected output %r" % p.stdout[:200])
        return 1
    got = {}
    for line in lines[1:]:
        f = line.split(",")
        fid, n = int(f[0]), int(f[1])
        got[ids[fid][0]] = n
    if got != counts:
        for a in sorted(set(got) | set(counts)):
            if got.get(a, 0) != counts.get(a, 0):
                print("llvm-xray account: 0x%x counted %d times, the truth completes %d calls"
                      % (a, got.get(a, 0), counts.get(a, 0)))
                errors += 1
                break
    elf = mp[:-len(".yaml")] + ".elf"
    if os.path.exists(elf):
        p = run([llvm, "account", "-m", elf, "-f", "csv", log])
        if p.returncode:
            return errors + 1
        for line in p.stdout.strip().split("\n")[1:]:
            f = line.split(",")
            fid, n, name = int(f[0]), int(f[1]), f[-1].strip('"')
            if got.get(ids[fid][0]) != n or (name != ids[fid][1] and not ids[fid][1].startswith("_Z")):
                print("llvm-xray account -m %s: function %d is %s (%d calls), the YAML map says %s (%d)"
                      % (os.path.basename(elf), fid, name, n, ids[fid][1], got.get(ids[fid][0], 0)))
                errors += 1
                break
    for sub in (["stack"], ["graph"]):
        p = run([llvm] + sub + ["-m", mp, log])
        if p.returncode or not p.stdout.strip():
            errors += 1
    p = run([llvm, "convert", "-m", mp, "--symbolize", "--output-format=trace_event", log])
    if p.returncode:
        return errors + 1
    try:
        ev = json.loads(p.stdout)["traceEvents"]
    except ValueError as e:
        print("llvm-xray convert: not JSON: %s" % e)
        return errors + 1
    b = sum(1 for e in ev if e.get("ph") == "B")
    e = sum(1 for e in ev if e.get("ph") == "E")
    if (b, e) != (nenter, nexit):
        print("llvm-xray convert: %d begins and %d ends, the truth has %d enters and %d exits"
              % (b, e, nenter, nexit))
        errors += 1
    return errors


if __name__ == "__main__":
    sys.exit(main())
