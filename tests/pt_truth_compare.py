#!/usr/bin/env python3
"""Compare ptconv's -f text output with a ptgen ground truth.

Written from tests/ptgen/ground-truth.md and the text format of
ptconv-convert(1) only; shares nothing with ptconv.

usage: pt_truth_compare.py TRUTH OUTDIR [--gaps GAPSFILE] [--expect-gaps N]
                           [--jcc0-any] [--bystanders]

Per thread: the truth's B lines, with the instructions of A lines (executed
before an asynchronous exit) added to the thread's next branch, are the
expected branches; a far branch after which user mode resumed elsewhere than
at its next instruction (the R line: execve's new entry, a signal handler,
sigreturn) has that IP as its target, as ptconv-trace(5) documents (and
when a gap follows the far branch, where user mode resumed was lost: ptconv
gives it target 0 then).  ptconv's branches between two gaps must be one
contiguous run of them, in order, identical (ip, target, kind, taken,
instructions); the first branch after a gap counts instructions from an IP
the truth does not name, so its count is not compared.  Without gaps the
runs must cover the whole truth.  Exit 0 when everything holds.

--jcc0-any: the taken field of a conditional branch whose target is its own
fall-through (the truth's B line says so: target == ip + len) is not
compared: both directions lead to the same instruction and libipt's block
decoder (--engine=libipt) cannot tell them apart.  Every other field is.

--bystanders: a gap given to a thread for having run during another's loss
(its text says "ran during") must be one the truth confirms: the thread
ran then, so the truth has branches of it between the runs around the gap
(or after the last run, for a gap at the end); the run after such a gap
is looked for past the branch the run before it ended with.  Prints how
many were checked.
"""
import os
import sys

KINDS = ["jmp", "jmp-ind", "call", "call-ind", "ret", "cond", "far"]


JCC0 = set()   # IPs of conditional branches whose target is their fall-through


def read_truth(path):
    threads = {}   # tid -> list of (ip, target, kind, taken, insns)
    carry = {}
    far = {}       # tid -> index of its last far branch, until its R line
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        t = f[0]
        if t == "B":
            tid = int(f[2])
            ip, tgt = int(f[3], 16), int(f[4], 16)
            kind, taken, ln, insns = int(f[5]), int(f[6]), int(f[7]), int(f[8])
            insns += carry.pop(tid, 0)
            if kind == 5 and tgt == ip + ln:
                JCC0.add(ip)
            threads.setdefault(tid, []).append((ip, tgt, KINDS[kind], taken, insns))
            far.pop(tid, None)
            if kind == 6:
                far[tid] = (len(threads[tid]) - 1, ip + ln)
        elif t == "R":
            # user mode resumed after a far branch elsewhere than at the
            # next instruction (execve's entry, a signal handler,
            # sigreturn): ptconv gives the far branch that target
            tid, rip = int(f[2]), int(f[3], 16)
            if tid in far:
                k, nxt = far.pop(tid)
                if rip != nxt:
                    b = threads[tid][k]
                    threads[tid][k] = (b[0], rip, b[2], b[3], b[4])
        elif t == "A":
            tid = int(f[2])
            carry[tid] = carry.get(tid, 0) + int(f[4])
        elif t == "T":
            threads.setdefault(int(f[3]), [])
    return threads, carry


def read_ptconv(outdir):
    threads = {}  # tid -> list of segments; segment = list of branches
    for name in sorted(os.listdir(outdir)):
        if not name.endswith(".txt"):
            continue
        segs = [[]]
        gaps = []
        by = [False]   # for each segment: a "ran during" gap precedes it
        tid = None
        for line in open(os.path.join(outdir, name)):
            if line.startswith("#"):
                tid = int(line.split()[7])
                continue
            f = line.split()
            if f[1] == "gap":
                gaps.append(line.strip())
                if segs[-1] and segs[-1] != ["after-gap-marker"]:
                    segs.append([])
                    by.append(False)
                if not segs[-1]:
                    segs[-1].append("after-gap-marker")
                by[-1] = by[-1] or "ran during" in line
                continue
            after = len(f) > 6 and f[6] == "after-gap"
            segs[-1].append((int(f[1], 16), int(f[2], 16), f[3], int(f[4]), int(f[5]), after))
        keep = [k for k, s in enumerate(segs) if s and s != ["after-gap-marker"]]
        # a gap with no run after it (the trace ends in a loss)
        ends_in_gap = bool(gaps) and (not segs[-1] or segs[-1] == ["after-gap-marker"])
        threads[tid] = ([segs[k] for k in keep], gaps, [by[k] for k in keep], by[-1] and ends_in_gap,
                        ends_in_gap)
    return threads


def show(b):
    """A branch (ip, target, kind, taken, insns) for a message."""
    return "%x->%x %s taken=%d insns=%d" % tuple(b[:5])


def same(got, want, open_end):
    """got (ptconv's branch, 5 fields) is want (the truth's).  open_end: got
    is the last branch before a gap: a far branch there has target 0, as
    where user mode resumed after it was lost (ptconv-trace(5))."""
    if open_end and got[2] == "far" and got[1] == 0 and want[2] == "far":
        want = (want[0], 0) + tuple(want[2:])
    return got == want


def match_segment(truth, seg, start, open_end=False):
    """Find seg as a contiguous run of truth at or after start; return
    (first index, end index) or None.  open_end: a gap follows seg."""
    body = [b for b in seg if b != "after-gap-marker"]
    resumed = seg[0] == "after-gap-marker" or body[0][5]
    if not body:
        return (start, start)
    first = body[0]
    for i in range(start, len(truth) - len(body) + 1):
        t = truth[i]
        if not same(first[:4] + (0,), t[:4] + (0,), open_end and len(body) == 1):
            continue
        if not resumed and t[4] != first[4]:
            continue
        ok = True
        for k in range(1, len(body)):
            b, tt = body[k], truth[i + k]
            if not same(b[:5], tt, open_end and k == len(body) - 1):
                ok = False
                break
        if ok:
            return (i, i + len(body))
        if not resumed:
            return None
    return None


def main():
    args = sys.argv[1:]
    gaps_file = None
    expect_gaps = None
    if "--gaps" in args:
        k = args.index("--gaps")
        gaps_file = args[k + 1]
        del args[k:k + 2]
    if "--expect-gaps" in args:
        k = args.index("--expect-gaps")
        expect_gaps = int(args[k + 1])
        del args[k:k + 2]
    jcc0_any = "--jcc0-any" in args
    if jcc0_any:
        args.remove("--jcc0-any")
    check_by = "--bystanders" in args
    if check_by:
        args.remove("--bystanders")
    by_checked = 0
    truth_path, outdir = args
    truth, _ = read_truth(truth_path)
    got = read_ptconv(outdir)
    if jcc0_any:
        # the direction of such a branch: 1 on both sides
        for tid in truth:
            truth[tid] = [(b[0], b[1], b[2], 1, b[4]) if b[2] == "cond" and b[0] in JCC0 else b
                          for b in truth[tid]]
        for tid, (segs, gaps, _, _, _) in got.items():
            for seg in segs:
                for k, b in enumerate(seg):
                    if b != "after-gap-marker" and b[2] == "cond" and b[0] in JCC0:
                        seg[k] = (b[0], b[1], b[2], 1, b[4], b[5])
    errors = 0
    total_gaps = 0
    for tid, branches in sorted(truth.items()):
        if not branches:
            continue
        if tid not in got:
            print("thread %d: no trace written (%d branches in the truth)" % (tid, len(branches)))
            errors += 1
            continue
        segs, gaps, by, by_tail, ends_in_gap = got[tid]
        total_gaps += len(gaps)
        pos = 0
        covered = 0
        for n, seg in enumerate(segs):
            body = [b for b in seg if b != "after-gap-marker"]
            if n == 0 and not gaps:
                # no gap: must be the whole truth, exactly
                if len(body) != len(branches):
                    print("thread %d: %d branches, truth has %d" % (tid, len(body), len(branches)))
                for k, (a, b) in enumerate(zip(body, branches)):
                    if a[:5] != b:
                        print("thread %d: branch %d differs: got %s want %s" % (tid, k, a[:5], b))
                        errors += 1
                        break
                else:
                    if len(body) < len(branches):
                        print("thread %d: the first %d branches agree, then the trace ends early" % (tid, len(body)))
                        errors += 1
                    elif len(body) > len(branches):
                        # (for the cause: the first few branches past
                        # the truth's end, and the truth's last two)
                        print("thread %d: all %d branches of the truth agree, then the trace has %d more: %s"
                              % (tid, len(branches), len(body) - len(branches),
                                 ", ".join(show(b) for b in body[len(branches):len(branches) + 4])))
                        print("thread %d: the truth's last branches: %s" % (tid, ", ".join(show(b) for b in branches[-2:])))
                        errors += 1
                covered = len(body)
                pos = len(body)
                continue
            open_end = n < len(segs) - 1 or ends_in_gap
            # A "ran during" gap hides at least one branch: the segment
            # after it starts past pos.  (Matching it at pos instead, the
            # first place it fits, can be wrong: c_spawn's parent resumes
            # from the same system call in two places, and a one-branch
            # segment fits both.)  The first place it fits from there on
            # leaves the most truth to the segments after it.
            m = match_segment(branches, seg, pos + 1 if check_by and by[n] else pos, open_end)
            if m is None and check_by and by[n] and match_segment(branches, seg, pos, open_end):
                print("thread %d: a 'ran during' gap before segment %d hides no branch of the truth"
                      % (tid, n))
                errors += 1
                break
            if m is None:
                print("thread %d: segment %d (%d branches, first %s) is not a run of the truth after index %d"
                      % (tid, n, len(body), body[0][:5] if body else None, pos))
                errors += 1
                break
            if n == 0 and m[0] != 0 and seg[0] != "after-gap-marker":
                print("thread %d: trace starts at truth branch %d without a gap" % (tid, m[0]))
                errors += 1
            if check_by and by[n]:
                by_checked += 1
            pos = m[1]
            covered += len(body)
        if check_by and by_tail:
            by_checked += 1
            if pos >= len(branches):
                print("thread %d: a 'ran during' gap at the end, after the truth's last branch" % tid)
                errors += 1
        print("thread %d: %d of %d truth branches reproduced, %d gaps" % (tid, covered, len(branches), len(gaps)))
    extra = [t for t in got if t not in truth or not truth[t]]
    for t in extra:
        segs, gaps, _, _, _ = got[t]
        n = sum(len(s) for s in segs)
        if n:
            print("thread %s: %d branches but no such thread in the truth" % (t, n))
            errors += 1
    if expect_gaps is not None and total_gaps != expect_gaps:
        print("gaps: %d, expected %d" % (total_gaps, expect_gaps))
        errors += 1
    if gaps_file is not None:
        want = [l.split() for l in open(gaps_file) if l.strip()]
        if len(want) == 0 and total_gaps:
            print("gaps reported but none expected")
            errors += 1
        if len(want) and not total_gaps:
            print("no gaps reported, expected %d" % len(want))
            errors += 1
        # every injected loss must be covered by a reported gap
        reported = []
        for tid, (segs, gaps, _, _, _) in got.items():
            for g in gaps:
                f = dict(x.split("=", 1) for x in g.split(" : ")[0].split()[3:] if "=" in x)
                reported.append((g.split()[2], f))
        for w in want:
            # "ovf queue Q offset O first F resume R ip IP",
            # "drop queue Q offset O bytes N first F resync R"
            # (older encoders: kept_offset, resume_ip)
            kv = dict(zip(w[1::2], w[2::2]))
            if w[0] == "ovf":
                rip = kv.get("ip", kv.get("resume_ip"))
                ok = [r for r in reported if r[0] == "overflow" and (rip is None or int(r[1]["resume-ip"], 16) == int(rip, 16))]
                if not ok:
                    print("no overflow gap resuming at %s" % rip)
                    errors += 1
            elif w[0] == "drop":
                k = int(kv.get("offset", kv.get("kept_offset")))
                ok = [r for r in reported if r[0] == "aux-lost" and int(r[1]["aux"], 16) <= k and
                      (r[1]["resume"] == "-" or int(r[1]["resume"], 16) >= k)]
                if not ok:
                    print("no aux-lost gap covers the drop at offset %d" % k)
                    errors += 1
    if check_by:
        print("bystanders: %d 'ran during' gaps confirmed by the truth" % by_checked)
    print("FAIL" if errors else "OK")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
