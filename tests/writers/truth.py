"""The oracle side of the format tests: load a ground-truth file
(tests/ptgen/ground-truth.md) and the stepper's instruction list."""


class Branch:
    __slots__ = ("time", "ip", "target", "kind", "taken", "length", "insns")

    def __init__(self, time, ip, target, kind, taken, length, insns):
        self.time, self.ip, self.target = time, ip, target
        self.kind, self.taken, self.length, self.insns = kind, taken, length, insns

    def key(self):
        return (self.ip, self.target, self.kind, self.taken, self.length, self.insns)

    def dest(self):
        if self.kind == 6 and self.target == 0:
            return self.ip + self.length
        return self.target if self.taken else self.ip + self.length


def load(path, tid=None):
    """Branches of thread tid (default: the first), asynchronous instructions
    folded into the next branch like an exact branch trace shows them."""
    import os
    if tid is None and os.environ.get("TRUTH_TID"):
        tid = int(os.environ["TRUTH_TID"])
    out, pending, meta, far_done = [], 0, {}, True
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p or p[0].startswith("#"):
                continue
            if p[0] == "T" and tid is None:
                tid = int(p[3])
            if p[0] in "BRAE" and int(p[2]) != tid:
                continue
            if p[0] == "T" and int(p[3]) != tid:
                continue
            if p[0] == "R" and "start" not in meta:
                meta["start"] = int(p[3], 16)
            if p[0] == "T" and "tid" not in meta:
                meta["pid"], meta["tid"], meta["comm"] = int(p[2]), int(p[3]), p[4] if len(p) > 4 else ""
            elif p[0] == "A":
                pending += int(p[4])
            elif p[0] == "R" and out and out[-1].kind == 6 and not far_done:
                # where user mode resumed after a far branch, when that is
                # not the next instruction (a decoder reports it as target)
                r = int(p[3], 16)
                if r != out[-1].ip + out[-1].length:
                    out[-1].target = r
                far_done = True
            elif p[0] == "B":
                out.append(Branch(int(p[1]), int(p[3], 16), int(p[4], 16), int(p[5]), int(p[6]),
                                  int(p[7]), int(p[8]) + pending))
                pending, far_done = 0, False
    return out, meta


def load_ips(path):
    """The stepper's instruction list; None for "-" (not available)."""
    if path == "-":
        return None
    with open(path) as f:
        return [int(x, 16) for x in f if x.strip()]


def fail(msg):
    import sys
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def compare(name, got, want):
    """Compare two sequences, reporting the first difference (want None:
    nothing to compare with)."""
    if want is None:
        return
    n = min(len(got), len(want))
    for i in range(n):
        if got[i] != want[i]:
            fail("%s: item %d differs: got %r, want %r" % (name, i, got[i], want[i]))
    if len(got) != len(want):
        fail("%s: %d items, want %d" % (name, len(got), len(want)))
