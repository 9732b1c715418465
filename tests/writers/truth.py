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
    folded into the next branch like an exact branch trace shows them; a
    far branch after which user mode resumed elsewhere than at the next
    instruction (execve's new entry, a signal handler, sigreturn) has that
    resume IP as its target, as the formats write it (ptconv-trace(5)).
    meta: the thread's pid, tid and last comm, and its first resume IP."""
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
            elif p[0] == "C" and int(p[3]) == tid and len(p) > 5:
                # a thread is named by its last name (ptconv-trace(5)):
                # after an exec, the new program's
                meta["comm"] = p[5]
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


def part_files(path, ext, parts):
    """The files of a trace split at `parts` losses (ptconv-formats(5)):
    path (NAME.EXT), then NAME.part1.EXT .. NAME.partN.EXT; fails when one
    is missing or there is one more."""
    import os
    base = path[:-len(ext)]
    files = [path] + ["%s.part%d%s" % (base, k, ext) for k in range(1, parts + 1)]
    for f in files:
        if not os.path.exists(f):
            fail("missing part file %s" % f)
    if os.path.exists("%s.part%d%s" % (base, parts + 1, ext)):
        fail("more than %d part files" % parts)
    return files


def runs(name, seqs, whole, lost_end=False):
    """Where each of seqs (the parts' items, in order) stands in whole: the
    first at its start, the last ending at its end (lost_end: before its
    end, the stream ended in a loss), each a non-empty run strictly after
    the previous one (something was lost in between).  Returns the start
    positions."""
    at, pos = 0, []
    for k, got in enumerate(seqs):
        if not got:
            fail("%s part %d is empty" % (name, k))
        if k == 0:
            p = 0
        elif k == len(seqs) - 1 and not lost_end:
            p = len(whole) - len(got)
        else:
            p = next((i for i in range(at + 1, len(whole) - len(got) + 1)
                      if whole[i] == got[0] and whole[i:i + len(got)] == got), -1)
        if p < at or (k and p == at):
            fail("%s part %d: not a run of the truth after the previous part (at %d, %d)" % (name, k, p, at))
        compare("%s part %d" % (name, k), got, whole[p:p + len(got)])
        pos.append(p)
        at = p + len(got)
    if (at == len(whole)) == lost_end:
        fail("%s: the last part ends at %d of %d%s" % (name, at, len(whole), " (want a loss at the end)" if lost_end else ""))
    return pos


def parts_args(argv, i):
    """The options from argv[i] on: `--parts N` (N losses, default 0) and
    `--lost-end` (the stream ended in one of them, so the last part stops
    before the truth's end and no part follows)."""
    opts = argv[i:]
    n = int(opts[opts.index("--parts") + 1]) if "--parts" in opts else 0
    return n, "--lost-end" in opts


def instruction_parts(name, recs, ips, want, got_of, want_of, lost_end=False):
    """For the per-instruction formats: recs are the records of each part
    file (address first), ips the stepper's list (None: not available, then
    there must be one file).  Each part must be a run of the executed
    instructions (runs()), and one before a loss must end with the last
    branch before it (the last part too with lost_end).  got_of(records, start) lists a file's branches,
    want_of(position, branch, end) the expected item for a branch of the
    truth (far transfers are left out: no format here calls them
    branches)."""
    total = sum(b.insns for b in want)
    seqs = [[r[0] for r in rs] for rs in recs]
    if ips is not None:
        if len(ips) != total:
            fail("oracles disagree: %d instructions listed, the truth counts %d" % (len(ips), total))
        starts = runs(name + " instructions", seqs, ips, lost_end)
    elif len(seqs) > 1 or lost_end:
        fail("part files need the instruction list")
    elif len(seqs[0]) != total:
        fail("%s: %d instructions, want %d" % (name, len(seqs[0]), total))
    else:
        starts = [0]
    at, n = {}, 0
    for b in want:
        n += b.insns
        at[n - 1] = b
    n = 0
    for k, (p, rs) in enumerate(zip(starts, recs)):
        end = p + len(rs)
        if (k < len(recs) - 1 or lost_end) and end - 1 not in at:
            fail("%s part %d does not end with a branch" % (name, k))
        got = got_of(rs, p)
        exp = [want_of(q, b, end) for q, b in sorted(at.items()) if p <= q < end and b.kind != 6]
        compare("%s part %d branches" % (name, k) if len(recs) > 1 else name + " branches", got, exp)
        n += len(got)
    have = sum(len(rs) for rs in recs)
    if len(recs) > 1 or lost_end:
        print("%s: %d parts, %d instructions and %d branches are runs of the ground truth (%d instructions lost)"
              % (name, len(recs), have, n, total - have))
    else:
        print("%s: %d instructions, %d branches match the ground truth" % (name, have, n))
