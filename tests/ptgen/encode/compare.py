#!/usr/bin/env python3
"""Compare the taken branches a decoder reports with a ptgen ground truth.

    compare.py TRUTH DECODED [--format perf|ptblk] [--tid TID]
               [--gap FIRST:LAST | --gaps FILE] [--insns]

DECODED is the output of
    perf script --itrace=be -F tid,ip,addr,flags      (--format perf)
    ptblk TRUTH PID STREAM                            (--format ptblk, one thread)

The truth's taken branches of each thread (conditional branches that were
taken, every other branch; far branches with target 0) must equal the
decoder's, with no decode error (for ptblk, whose instruction flow cannot
show it, a conditional branch taken to its own fall-through is left out).
Trace starts ("tr strt") and interrupts
("tr end async": injected interrupts, preemption) are not branches and are
skipped.

--gap FIRST:LAST says that the truth branches with indices FIRST..LAST-1
(0-based, counted over the taken branches of the thread in question, or of
all threads in truth order when --tid is not given) may be missing because
data was lost there on purpose: then everything before FIRST must come out
exactly, everything from LAST on must come out exactly, at least one decode
error must be reported, and every error must lie between the two.  The
lines decoded inside the gap are not checked.  --gaps FILE takes FIRST and
LAST from the file `ptgen-encode --gaps` wrote (its "first" and its
"resume" or "resync" fields).

--insns N (ptblk) checks the instruction counts of both libipt decoders.
Exit status 0 when all holds, 1 otherwise (with the first differences).
"""
import argparse
import re
import sys


def truth_branches(path, zero_disp=True):
    """Per-thread taken-branch lists and instruction counts, plus the
    branches of all threads in truth order.  zero_disp=False leaves out
    taken conditional branches to their own fall-through (jz +0, loop +0):
    an instruction-flow decoder (ptblk) cannot see those from IPs."""
    per = {}
    insns = {}
    order = []
    with open(path) as f:
        for line in f:
            x = line.split()
            if not x or x[0] == '#':
                continue
            if x[0] == 'B':
                tid = int(x[2])
                insns[tid] = insns.get(tid, 0) + int(x[8])
                kind, taken = int(x[5]), int(x[6])
                if kind == 5 and not taken:
                    continue
                ip, target = int(x[3], 16), int(x[4], 16)
                if kind == 5 and not zero_disp and target == ip + int(x[7]):
                    continue
                if kind == 6:
                    target = 0
                per.setdefault(tid, []).append((ip, target))
                order.append((tid, ip, target))
            elif x[0] == 'A':
                tid = int(x[2])
                insns[tid] = insns.get(tid, 0) + int(x[4])
    return per, insns, order


PERF_BRANCH = re.compile(r'^\s*(\d+)\s+(.*?)\s*([0-9a-f]+) =>\s+([0-9a-f]+)\s*$')
PERF_ERROR = re.compile(r'instruction trace error .* tid (\d+) ')


def perf_branches(path):
    """(tid, ip, target) in output order, and errors as (tid, position)."""
    out, errors = [], []
    with open(path, errors='replace') as f:
        for line in f:
            m = PERF_BRANCH.match(line)
            if m:
                tid, flags = int(m.group(1)), m.group(2)
                ip, target = int(m.group(3), 16), int(m.group(4), 16)
                if 'tr strt' in flags and ip == 0:
                    continue
                if 'tr end' in flags and 'async' in flags:
                    continue
                out.append((tid, ip, target))
                continue
            m = PERF_ERROR.search(line)
            if m:
                errors.append((int(m.group(1)), len(out), line.strip()))
    return out, errors


def ptblk_branches(path, tid):
    out, errors, counts = [], [], {}
    with open(path) as f:
        for line in f:
            x = line.split()
            if not x:
                continue
            if x[0] == 'B':
                out.append((tid, int(x[1], 16), int(x[2], 16)))
            elif x[0] == 'E':
                errors.append((tid, len(out), line.strip()))
            elif x[0] == 'I':
                counts[x[1]] = int(x[2])
    return out, errors, counts


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b)) if len(a) != len(b) else -1


def fmt(b):
    return '%s 0x%x -> 0x%x' % (('tid %d' % b[0]) if len(b) == 3 else '',
                                b[-2], b[-1])


def check_exact(name, want, got):
    i = first_diff(want, got)
    if i < 0:
        return True
    print('%s: %d truth branches, %d decoded; first difference at index %d:'
          % (name, len(want), len(got), i))
    for j in range(max(0, i - 2), i + 3):
        w = fmt(want[j]) if j < len(want) else '-'
        g = fmt(got[j]) if j < len(got) else '-'
        print('  [%d] truth %-44s decoded %s' % (j, w, g))
    return False


def check_gap(name, want, got, errors, first, last):
    ok = True
    if got[:first] != want[:first]:
        ok = check_exact(name + ' (before the gap)', want[:first], got[:first])
    tail = len(want) - last
    if tail and got[-tail:] != want[last:]:
        ok = check_exact(name + ' (after the gap)', want[last:], got[-tail:])
    if len(got) < first + tail:
        print('%s: only %d branches decoded, %d expected outside the gap'
              % (name, len(got), first + tail))
        ok = False
    if not errors:
        print('%s: no decode error reported for the gap' % name)
        ok = False
    for e in errors:
        if e[1] < first or e[1] > len(got) - tail:
            print('%s: error outside the gap [%d, %d): %s'
                  % (name, first, len(got) - tail, e[2]))
            ok = False
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('truth')
    ap.add_argument('decoded')
    ap.add_argument('--format', choices=('perf', 'ptblk'), default='perf')
    ap.add_argument('--tid', type=int)
    ap.add_argument('--gap')
    ap.add_argument('--gaps')
    ap.add_argument('--insns', action='store_true')
    a = ap.parse_args()

    if a.gaps:
        with open(a.gaps) as f:
            x = f.read().split()
        kv = dict(zip(x[1::2], x[2::2]))
        if 'first' not in kv:
            print('%s: no gap recorded' % a.gaps)
            return 1
        a.gap = '%s:%s' % (kv['first'], kv.get('resume', kv.get('resync')))
    per, insns, order = truth_branches(a.truth, a.format != 'ptblk')
    if a.format == 'ptblk':
        if a.tid is None:
            ap.error('--format ptblk needs --tid')
        got, errors, counts = ptblk_branches(a.decoded, a.tid)
    else:
        got, errors = perf_branches(a.decoded)
        counts = {}
    ok = True
    if a.tid is not None:
        want = [(a.tid,) + b for b in per.get(a.tid, [])]
        got = [b for b in got if b[0] == a.tid]
        errors = [e for e in errors if e[0] == a.tid]
        groups = [(str(a.tid), want, got, errors)]
    elif a.gap:
        groups = [('all', [tuple(b) for b in order], got, errors)]
    else:
        groups = []
        for tid in sorted(set(per) | set(b[0] for b in got)):
            groups.append(('tid %d' % tid, [(tid,) + b for b in per.get(tid, [])],
                           [b for b in got if b[0] == tid],
                           [e for e in errors if e[0] == tid]))
    for name, want, g, errs in groups:
        if a.gap:
            first, last = (int(v) for v in a.gap.split(':'))
            ok = check_gap(name, want, g, errs, first, last) and ok
        else:
            ok = check_exact(name, want, g) and ok
            for e in errs:
                print('%s: decode error: %s' % (name, e[2]))
                ok = False
        print('%s: %d taken branches in the truth, %d decoded, %d errors'
              % (name, len(want), len(g), len(errs)))
    if a.insns:
        want = insns.get(a.tid, 0)
        for k in ('insn', 'block'):
            if counts.get(k) != want:
                print('libipt %s decoder: %s instructions, truth %d'
                      % (k, counts.get(k), want))
                ok = False
        print('instructions: truth %d, libipt insn %s, block %s'
              % (want, counts.get('insn'), counts.get('block')))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
