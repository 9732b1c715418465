#!/bin/sh
# The corruption matrix of issue 19: recordings damaged at test time in
# every way a real one gets damaged -- cut at record boundaries and inside
# records, header and AUXTRACE sizes patched, records removed, duplicated
# and swapped, bits flipped -- and converted with --strict under a memory
# limit.  The recordings: ptgen-walk's (per-CPU with threads moving between
# CPUs, per-thread, pipe mode) and, when ../shared is there, the real
# Skylake recordings (file and pipe mode).  The oracle is the intact
# recording's conversion, itself checked against the generator's ground
# truth (pt_truth_compare.py): for every mutant, no crash, a status of 0, 1
# or 3 (3 naming the file), and the accounting identity: no thread gets
# more branches than the intact recording gives it, and whenever a thread
# gets fewer (or a thread appears that the intact recording does not
# have), summary.json reports a loss and --strict exits 1 (or the input is
# refused, exit 3).  Two kinds of mutant are only held to the first rules:
# flipped bits in the trace data itself (Intel PT has no checksum, and a
# flipped TNT bit is another valid trace that no decoder can tell from the
# real one), and a pipe-mode recording cut right after a FINISHED_ROUND
# record (a stream with no size, cut where a recording may end: nothing in
# it says more was written; cut anywhere else in a round, it is an error).
# Records merely out of order (AUXTRACE_INFO after trace data) lose
# nothing: the intact recording's branches, losses and exit status.
# The mutants are a seeded sample: the same ones on every run.
. "${top_srcdir:-.}/tests/lib/common.sh"
command -v python3 >/dev/null || skip "python3 not installed"
need_walk
W="--branches 20000 --seed 11 --aux-chunk 4096"
walk_gen c $W --threads 4 --cpus 2 --migrate 3 --slice 2000
walk_gen t $W --threads 3 --per-thread --slice 4000
walk_gen p $W --threads 2 --pipe --slice 4000
# A sanitizer build reserves terabytes of address space: no ulimit -v there.
asan=0
grep -q __asan_init "$PTCONV" 2>/dev/null && asan=1
shared=
[ -d "$PTC_SHARED/data/intel_pt" ] && shared="$PTC_SHARED/data/intel_pt"
python3 - "$PTCONV" "$top_srcdir/tests" "$T" "$asan" "$shared" <<'EOF' || fail "corruption matrix"
import json, os, random, shutil, struct, subprocess, sys
ptconv, tests, tmp, asan, shared = sys.argv[1:6]
sys.path.insert(0, tests)
from perf_layout import records, PERF_RECORD_AUXTRACE

MEM_KB = 1 << 20            # 1 GiB of address space for a conversion of a few KB
PER_KIND = 6                # mutants of each kind per recording
FINISHED_ROUND = 68
AUXTRACE_INFO = 70
fails = []
runs = 0
by_status = {}


def limit():
    if asan != '1':
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (MEM_KB << 10, MEM_KB << 10))


def convert(path, out):
    shutil.rmtree(out, ignore_errors=True)
    try:
        p = subprocess.run([ptconv, path, '-f', 'text', '-o', out, '-q', '--strict', '-j', '1'],
                           capture_output=True, preexec_fn=limit, timeout=60)
    except subprocess.TimeoutExpired:
        return None, None, 'timeout'
    s = None
    if os.path.exists(os.path.join(out, 'summary.json')):
        s = json.load(open(os.path.join(out, 'summary.json')))
    return p.returncode, s, p.stderr.decode(errors='replace')


def per_thread(s):
    """Branches per thread (conditional ones once, taken or not)."""
    return {t['tid']: sum(t['branches'].values()) - t['branches']['cond-not-taken'] for t in s['threads']}


def losses(s):
    """What summary.json says was lost, beyond the intact recording's."""
    return (sum(t['gaps'] for t in s['threads']) + s['unattributed_gaps'], s['lost_trace_bytes'],
            s['unwritten_branches'], s['skipped_input_bytes'], len(s['input_damage']),
            s['unread_features'], 1 if s['input_error'] else 0)


def reported(s, ref):
    return any(a > b for a, b in zip(losses(s), losses(ref)))


def check(name, what, blob, ref, ref_st, lax=False):
    global runs
    runs += 1
    path = os.path.join(tmp, 'mutant.data')
    open(path, 'wb').write(blob)
    st, s, err = convert(path, os.path.join(tmp, 'o'))
    by_status[st] = by_status.get(st, 0) + 1
    tag = '%s: %s' % (name, what)
    if st not in (0, 1, 3):
        fails.append('%s: exit status %s: %s' % (tag, st, err[-300:]))
        return
    if lax == 'whole':
        if st != ref_st or s is None or per_thread(s) != per_thread(ref) or losses(s) != losses(ref):
            fails.append('%s: exit %d, %s: not the intact recording' %
                         (tag, st, (per_thread(s), losses(s)) if s else err[-300:]))
        return
    if st == 3:
        if 'mutant.data' not in err:
            fails.append('%s: refused without naming the file: %s' % (tag, err[-300:]))
        return
    if s is None:
        fails.append('%s: exit %d without summary.json' % (tag, st))
        return
    if lax:
        return
    got, want = per_thread(s), per_thread(ref)
    more = ['%d: %d > %d' % (t, n, want.get(t, 0)) for t, n in got.items() if n > want.get(t, 0)]
    fewer = sorted(t for t, n in want.items() if got.get(t, 0) < n)
    if more:
        fails.append('%s: more branches than the intact recording gives: %s' % (tag, ', '.join(more)))
    if (more or fewer) and not reported(s, ref):
        fails.append('%s: threads %s lost branches and summary.json reports no loss' % (tag, fewer or more))
    if (more or fewer) and st != 1:
        fails.append('%s: threads %s lost branches, --strict exits %d' % (tag, fewer or more, st))


def mutants(name, blob, rnd):
    """(what, bytes, lax: True when held to the first rules only, 'whole'
    when nothing is lost) of one recording, a seeded sample."""
    recs, start, end = records(blob)
    pipe = start == 16
    aux = [r for r in recs if r[1] == PERF_RECORD_AUXTRACE]
    pick = lambda seq: rnd.sample(seq, min(PER_KIND, len(seq)))
    for i in pick(range(1, len(recs))):
        r = recs[i]
        yield 'cut at the record at 0x%x' % r[0], blob[:r[0]], pipe and recs[i - 1][1] == FINISHED_ROUND
    for r in pick(recs):
        k = rnd.randrange(1, r[2] + r[3])
        yield 'cut %d bytes into the record at 0x%x' % (k, r[0]), blob[:r[0] + k], False
    if end < len(blob):
        k = rnd.randrange(end + 1, len(blob))
        yield 'cut in the feature sections at 0x%x' % k, blob[:k], False
    for r in pick(recs):
        b = bytearray(blob)
        v = rnd.choice((0, 8, r[2] + 8, r[2] - 8, 0xfff8, rnd.randrange(1, 0x10000)))
        struct.pack_into('<H', b, r[0] + 6, v & 0xffff)
        yield 'size %d for %d at 0x%x' % (v, r[2], r[0]), bytes(b), False
    for r in pick(aux):
        b = bytearray(blob)
        v = rnd.choice((0, r[3] // 2, r[3] + 8, r[3] * 3, 1 << 40, (1 << 64) - 8))
        struct.pack_into('<Q', b, r[0] + 8, v)
        yield 'AUXTRACE size %d for %d at 0x%x' % (v, r[3], r[0]), bytes(b), False
    for what, sel in (('removed', recs), ('AUXTRACE removed', aux), ('duplicated', recs)):
        for r in pick(sel):
            n = r[2] + r[3]
            b = bytearray(blob)
            if what == 'duplicated':
                b[r[0]:r[0]] = blob[r[0]:r[0] + n]
            else:
                del b[r[0]:r[0] + n]
            if not pipe:        # the header's data size follows
                struct.pack_into('<Q', b, 48, end - start + (n if what == 'duplicated' else -n))
            yield '%s: the record at 0x%x (type %d)' % (what, r[0], r[1]), bytes(b), False
    # the last AUXTRACE record of each queue removed whole: only the AUX
    # records say the trace data was there
    last = {}
    for r in aux:
        last[struct.unpack_from('<I', blob, r[0] + 32)[0]] = r
    for r in last.values():
        n = r[2] + r[3]
        b = bytearray(blob[:r[0]] + blob[r[0] + n:])
        if not pipe:
            struct.pack_into('<Q', b, 48, end - start - n)
        yield "removed: the queue's last AUXTRACE record, at 0x%x" % r[0], bytes(b), False
    # AUXTRACE_INFO moved after the first AUXTRACE record (out of order)
    info = [r for r in recs if r[1] == AUXTRACE_INFO]
    if info and aux and info[0][0] < aux[0][0]:
        i, a = info[0], aux[0]
        n = a[0] + a[2] + a[3]
        yield 'AUXTRACE_INFO moved after the AUXTRACE record at 0x%x' % a[0], \
            blob[:i[0]] + blob[i[0] + i[2]:n] + blob[i[0]:i[0] + i[2]] + blob[n:], 'whole'
    for i in pick(range(len(recs) - 1)):
        a, c = recs[i], recs[i + 1]
        na, nc = a[2] + a[3], c[2] + c[3]
        b = bytearray(blob)
        b[a[0]:a[0] + na + nc] = blob[c[0]:c[0] + nc] + blob[a[0]:a[0] + na]
        yield 'swapped: the records at 0x%x and 0x%x (types %d, %d)' % (a[0], c[0], a[1], c[1]), bytes(b), False
    data = set()
    for r in aux:
        data.update(range(r[0] + r[2], r[0] + r[2] + r[3]))
    for _ in range(2 * PER_KIND):
        off = rnd.randrange(0, len(blob))
        b = bytearray(blob)
        b[off] ^= 1 << rnd.randrange(8)
        yield 'bit flipped at 0x%x' % off, bytes(b), off in data


inputs = [('c', os.path.join(tmp, 'c.data')), ('t', os.path.join(tmp, 't.data')),
          ('p', os.path.join(tmp, 'p.data'))]
if shared:
    inputs += [('skylake', os.path.join(shared, 'perf.data.intel_pt-4.14')),
               ('skylake-pipe', os.path.join(shared, 'perf.data.piped.intel_pt-4.14'))]
else:
    print('note: ../shared absent: the real recordings are left out')
for name, path in inputs:
    blob = open(path, 'rb').read()
    st, ref, err = convert(path, os.path.join(tmp, 'ref'))
    if ref is None or st not in (0, 1):
        fails.append('%s: the intact recording: exit %s: %s' % (name, st, err[-300:]))
        continue
    truth = os.path.join(tmp, name + '.truth')
    if os.path.exists(truth):
        p = subprocess.run([sys.executable, os.path.join(tests, 'pt_truth_compare.py'), truth,
                            os.path.join(tmp, 'ref'), '--expect-gaps', '0'], capture_output=True)
        if p.returncode:
            fails.append('%s: the intact conversion is not the truth: %s' % (name, p.stdout[-300:]))
    rnd = random.Random(name)
    for what, b, lax in mutants(name, blob, rnd):
        check(name, what, b, ref, st, lax)
print('%d mutants of %d recordings, exit statuses %s' % (runs, len(inputs), sorted(by_status.items())))
for f in fails:
    print('FAIL ' + f)
sys.exit(1 if fails else 0)
EOF
echo "ok - corruption matrix: no crash, memory bounded, every loss of branches reported and --strict failing"
