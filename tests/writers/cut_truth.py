#!/usr/bin/env python3
"""A place deep inside a ground truth's recursion, for the tests of the
function-level formats (xray.sh, perfetto.sh).

usage: cut_truth.py TRUTH [CUT]

Prints N: the 150th call of TRUTH's most called function is its N-th
branch (a B line; ptgen-encode --ovf-at N:... loses trace there).  With
CUT, writes there the truth that starts at that call, user mode entered
where the branch before it led: a trace that starts inside the
recursion (returns without calls).
"""
import sys


def main():
    lines = open(sys.argv[1]).read().split("\n")
    calls = {}
    for l in lines:
        f = l.split()
        if f and f[0] == "B" and f[5] == "2":
            calls[f[4]] = calls.get(f[4], 0) + 1
    hot = max(calls, key=calls.get)
    n = nb = 0
    cut = None
    for i, l in enumerate(lines):
        f = l.split()
        if f and f[0] == "B":
            nb += 1
            if f[5] == "2" and f[4] == hot:
                n += 1
                if n == 150:
                    cut = i
                    break
    print(nb)
    if len(sys.argv) > 2:
        prev = [l.split() for l in lines[:cut] if l.startswith("B ")][-1]
        dest = prev[4] if prev[6] == "1" else hex(int(prev[3], 16) + int(prev[7]))
        out = [l for l in lines[:cut] if l and l[0] not in "BRA"]
        out.append("R %s %s %s" % (prev[1], prev[2], dest))
        open(sys.argv[2], "w").write("\n".join(out + lines[cut:]))


if __name__ == "__main__":
    main()
