#!/usr/bin/env python3
"""The CPU of every function record of a -f xray log, as llvm-xray reads it
(convert --output-format=yaml: each function record with its cpu, thread
and tsc),
against the CPU Linux perf says each thread's branches ran on
(perf script --itrace=b -F tid,cpu,time --ns).

perf's times and ptconv's come from the same timing packets but are
estimated apart, so a record is matched to the thread's run of branches on
one CPU (perf) that contains its time; a record between two runs (the
thread was switched meanwhile) may have either run's CPU.  Every thread
that perf shows on several CPUs must show several in the log too.

usage: xray_cpu.py PERF_SCRIPT_OUTPUT LLVM_XRAY_YAML...
"""
import bisect
import collections
import re
import sys


def perf_runs(path):
    runs = collections.defaultdict(list)  # tid -> [[t0, t1, cpu]]
    for line in open(path):
        m = re.match(r'\s*(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):', line)
        if not m:
            continue
        tid, cpu = int(m[1]), int(m[2])
        t = int(m[3]) * 10**9 + int(m[4].ljust(9, '0'))
        r = runs[tid]
        if r and r[-1][2] == cpu:
            r[-1][1] = max(r[-1][1], t)
        else:
            r.append([t, t, cpu])
    return runs


def main():
    runs = perf_runs(sys.argv[1])
    inside = between = 0
    bad = []
    seen = collections.defaultdict(set)
    for path in sys.argv[2:]:
        for line in open(path):
            m = re.search(r"cpu: (\d+), thread: (\d+),.*kind: function-[a-z-]*, tsc: (\d+)", line)
            if not m:
                continue	# (a custom event: version 3 gives it no CPU)
            cpu, tid, tsc = int(m[1]), int(m[2]), int(m[3])
            seen[tid].add(cpu)
            r = runs.get(tid, [])
            i = bisect.bisect_right([x[0] for x in r], tsc) - 1
            if i >= 0 and tsc <= r[i][1]:
                if r[i][2] == cpu:
                    inside += 1
                else:
                    bad.append((tid, tsc, cpu, r[i][2]))
            else:
                near = {r[j][2] for j in (i, i + 1) if 0 <= j < len(r)}
                if cpu in near:
                    between += 1
                else:
                    bad.append((tid, tsc, cpu, sorted(near)))
    for b in bad[:10]:
        print('thread %d at %d: cpu %d in the log, perf: %s' % b)
    moved = [t for t in runs if len({x[2] for x in runs[t]}) > 1]
    untold = [t for t in moved if t in seen and len(seen[t]) < 2]
    for t in untold:
        print('thread %d ran on CPUs %s (perf), the log says only %s' %
              (t, sorted({x[2] for x in runs[t]}), sorted(seen[t])))
    if not inside:
        print('no record matched')
    if bad or untold or not inside:
        return 1
    print('OK %d records on the CPU perf says (%d between two runs of a thread), '
          '%d threads moved between CPUs' % (inside + between, between, len(moved)))
    return 0


sys.exit(main())
