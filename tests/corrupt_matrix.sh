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
# nothing: the intact recording's branches, losses and exit status (read
# from a pipe, exit 3 saying the records are out of order).  Context
# switches with a bit flipped in their thread (next_prev and sample_id
# pid/tid) or time fields, every field of a few records, are held to
# every rule: the records around a damaged one repair it or its stretch
# is a counted loss (damaged_switches, LIMITATIONS in ptconv-convert(1)).
# The accounting is also exact where it can be: per AUX queue, the trace
# bytes held plus those reported missing (summary.json aux_queues) are the
# intact recording's (which are the AUXTRACE records' but for the last
# one's padding), unless a queue reports a loss of unknown size or input
# was lost whole (then no more, and the shortfall fits in the input lost);
# an AUXTRACE size grown by 8 over a FINISHED_ROUND reads as a well-formed
# file (8 bytes more trace) and is exempt.  Per thread, against the intact
# conversion's text output: every run between two gaps is a contiguous
# piece of the intact stream, in order, and with no gap written +
# unwritten branches are the intact stream.  Per CPU, a thread that lost
# branches where its gap is not (see LIMITATIONS in ptconv-convert(1)) is
# counted and listed, held to the rules above only.
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
import pt_truth_compare as ptc

MEM_KB = 1 << 20            # 1 GiB of address space for a conversion of a few KB
PER_KIND = 6                # mutants of each kind per recording
FINISHED_ROUND = 68
AUXTRACE_INFO = 70
SWITCH_CPU_WIDE = 15
PERF_RECORD_MMAP, PERF_RECORD_COMM, PERF_RECORD_SAMPLE, PERF_RECORD_MMAP2, PERF_RECORD_AUX = 1, 3, 9, 10, 11
# a SWITCH_CPU_WIDE record's fields after its header: next_prev pid, tid,
# then the sample_id trailer's pid, tid and time
SWITCH_FIELDS = ((8, 'next_prev pid'), (12, 'next_prev tid'), (16, 'sample pid'), (20, 'sample tid'),
                 (24, 'sample time'))
fails = []
runs = 0
exact_queues = exact_streams = checked = 0
switch_kinds = {}  # field flipped -> [mutants, damage found, exit 1, threads exact]
by_status = {}
last_status = [None]
queues = {}     # recording -> trace bytes per queue (file_queues)
intact = {}     # recording -> the intact conversion's branches per thread


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
            s['unread_features'], 1 if s['input_error'] else 0, s['damaged_switches'])


def reported(s, ref):
    return any(a > b for a, b in zip(losses(s), losses(ref)))


def queue_key(cpu, idx):
    """A queue is its CPU's (per-CPU recording) or its buffer's number."""
    return ('cpu', cpu) if cpu is not None else ('queue', idx)


def file_queues(blob):
    """Trace bytes per queue, read from the AUXTRACE records themselves
    (size, offset, reference, idx, tid, cpu after the header): the stream
    offsets they cover, None when they leave a hole."""
    spans = {}
    for r in records(blob)[0]:
        if r[1] == PERF_RECORD_AUXTRACE:
            size, off, _, idx, _, cpu = struct.unpack_from('<QQQIII', blob, r[0] + 8)
            spans.setdefault(queue_key(None if cpu == 0xffffffff else cpu, idx), []).append((off, off + size))
    out = {}
    for k, v in spans.items():
        end = 0
        for s, e in sorted(v):
            end = max(end, e) if s <= end else None
            if end is None:
                break
        out[k] = end
    return out


def summary_queues(s):
    return {queue_key(q['cpu'], q['index']): q for q in s['aux_queues']}


def input_lost(s):
    """Input whose records are unknown: the file cut short, or damaged
    bytes skipped (a repair loses none): which queue's trace it held
    nobody can say."""
    return s['unread_input_bytes'] + s['skipped_input_bytes'] + (1 if s['input_error'] else 0)


def check_queues(tag, s, want):
    """Trace bytes per queue: held + reported missing = the intact
    recording's, exactly, unless a queue reports a loss of unknown size
    or input was lost whole; then no more than the intact's, and the bytes
    not accounted for fit in the input lost.  Returns whether exact."""
    got = summary_queues(s)
    exact = not input_lost(s) and not any(q['unknown_losses'] for q in got.values())
    short = 0
    for k in sorted(set(got) | set(want), key=str):
        q = got.get(k, {'trace_bytes': 0, 'missing_bytes': 0, 'unknown_losses': 0})
        n = q['trace_bytes'] + q['missing_bytes']
        if exact and n != want.get(k, 0):
            fails.append('%s: queue %s: %d trace bytes + %d missing, the intact recording has %d' %
                         (tag, k, q['trace_bytes'], q['missing_bytes'], want.get(k, 0)))
        elif n > want.get(k, 0):
            fails.append('%s: queue %s: %d trace bytes + %d missing, more than the intact %d' %
                         (tag, k, q['trace_bytes'], q['missing_bytes'], want.get(k, 0)))
        short += max(0, want.get(k, 0) - n)
    if not exact and short and not any(q['unknown_losses'] for q in got.values()) and short > input_lost(s):
        fails.append('%s: %d trace bytes unaccounted for, %d bytes of input lost' % (tag, short, input_lost(s)))
    return exact


def intact_streams(out):
    """The intact conversion's branches per thread, in order."""
    return {tid: [b[:5] for seg in v[0] for b in seg if b != 'after-gap-marker']
            for tid, v in ptc.read_ptconv(out).items()}


def check_streams(tag, s, out, intact):
    """Branches per thread: every run between two gaps is a contiguous
    piece of the intact thread's stream, in order, a piece missing before
    or after only at a gap; with no gap, the written branches and those
    counted unwritten (after the thread's exit: its stream's end) are the
    intact stream.  Returns whether counts were checked exactly."""
    unwritten = {t['tid']: t['unwritten_branches'] for t in s['threads']}
    exact = True
    global fails
    kept, fails = fails, []
    for tid, (segs, gaps, _, _, ends_in_gap) in ptc.read_ptconv(out).items():
        want = intact.get(tid, [])
        body = [b[:5] for seg in segs for b in seg if b != 'after-gap-marker']
        if not gaps:
            n = len(body) + unwritten.get(tid, 0)
            if body != want[:len(body)] or n != len(want):
                fails.append('%s: thread %d: no gap, %d branches written + %d unwritten, the intact '
                             'recording has %d%s' % (tag, tid, len(body), unwritten.get(tid, 0), len(want),
                                                     '' if body == want[:len(body)] else ', not its first ones'))
            continue
        exact = False
        pos = 0
        for n, seg in enumerate(segs):
            m = ptc.match_segment(want, seg, pos, n < len(segs) - 1 or ends_in_gap)
            if m is None or (n == 0 and m[0] and seg[0] != 'after-gap-marker'):
                fails.append('%s: thread %d: run %d of %d (%d branches) is not a piece of the intact stream '
                             'after its branch %d%s' % (tag, tid, n, len(segs), len(seg), pos,
                                                         '' if m is None else ' without a gap before it'))
                break
            pos = m[1]
        else:
            if pos < len(want) and not ends_in_gap and not unwritten.get(tid, 0):
                fails.append('%s: thread %d: ends at branch %d of %d without a gap' % (tag, tid, pos, len(want)))
    fails = kept + fails
    return exact


def check(name, what, blob, ref, ref_st, lax=False, lax_bytes=False):
    global runs, exact_queues, exact_streams, checked
    runs += 1
    path = os.path.join(tmp, 'mutant.data')
    open(path, 'wb').write(blob)
    st, s, err = convert(path, os.path.join(tmp, 'o'))
    last_status[0] = st
    by_status[st] = by_status.get(st, 0) + 1
    tag = '%s: %s' % (name, what)
    if st not in (0, 1, 3):
        fails.append('%s: exit status %s: %s' % (tag, st, err[-300:]))
        return
    if lax == 'whole' and blob[8:16] == struct.pack('<Q', 16):
        # read from a pipe, the same records out of order cannot be
        # reordered: said so, not "no AUXTRACE_INFO record"
        p = subprocess.run([ptconv, '-', '-f', 'text', '-o', os.path.join(tmp, 'o2'), '-q'], input=blob,
                           capture_output=True, preexec_fn=limit, timeout=60)
        e = p.stderr.decode(errors='replace')
        if p.returncode != 3 or 'out of order' not in e or 'no AUXTRACE_INFO' in e:
            fails.append('%s: from a pipe: exit %d: %s' % (tag, p.returncode, e[-300:]))
    if lax == 'whole':
        if st != ref_st or s is None or per_thread(s) != per_thread(ref) or losses(s) != losses(ref) or \
                intact_streams(os.path.join(tmp, 'o')) != intact[name]:
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
    checked += 1
    if not lax_bytes:
        exact_queues += check_queues(tag, s, queues[name])
    # per CPU too, where a loss of unknown span (a queue's start, a queue
    # lost whole, its end while its threads run on) gives every thread
    # switched in there a gap at its stretch's start
    exact_streams += check_streams(tag, s, os.path.join(tmp, 'o'), intact[name])


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
        # grown by 8 over a FINISHED_ROUND (8 bytes, no payload): the
        # file reads as well-formed, the record's 8 bytes as trace data
        # (the queue holds 8 bytes more; nothing else is lost)
        over = [x for x in recs if x[0] == r[0] + r[2] + r[3]]
        yield 'AUXTRACE size %d for %d at 0x%x' % (v, r[3], r[0]), bytes(b), \
            ('bytes' if v == r[3] + 8 and over and over[0][1] == FINISHED_ROUND else False)
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
    # a context switch with a flipped bit in a field that still parses:
    # the thread switched to or from (next_prev pid/tid), or the trailer's
    # pid/tid and time; each field of each record picked
    switches = [r for r in recs if r[1] == SWITCH_CPU_WIDE]
    for r in pick(switches):
        b = bytearray(blob)
        at = rnd.choice([a for a, _ in SWITCH_FIELDS])
        off = r[0] + at
        b[off + rnd.randrange(4)] ^= 1 << rnd.randrange(8)
        yield 'switch %s flipped at 0x%x (the record at 0x%x)' % (dict(SWITCH_FIELDS)[at], off, r[0]), bytes(b), False
    # and each field of a few more records (their own seeded choice, so
    # that the mutants above and below stay the same)
    srnd = random.Random(name + ': switches')
    for r in srnd.sample(switches, min(PER_KIND, len(switches))):
        for at, field in SWITCH_FIELDS:
            b = bytearray(blob)
            off = r[0] + at
            b[off + srnd.randrange(4)] ^= 1 << srnd.randrange(8)
            yield 'switch %s flipped at 0x%x (the record at 0x%x)' % (field, off, r[0]), bytes(b), False
    # the kernel's AUX records (where each queue's data ends), AUXTRACE
    # headers and records that end in a string, damaged where a sampled
    # mutant seldom is: each kind in a few records of their own seeded
    # choice (PERF_RECORD_AUX: aux_offset at 8, aux_size at 16)
    arnd = random.Random(name + ': aux')
    auxr = [r for r in recs if r[1] == PERF_RECORD_AUX]
    for r in arnd.sample(auxr, min(3, len(auxr))):
        for what, at, bit in (('aux_offset bit 45', 8, 45), ('aux_offset bit %d' % (3 + r[0] % 5), 8, 3 + r[0] % 5),
                              ('aux_size bit 37', 16, 37)):
            b = bytearray(blob)
            struct.pack_into('<Q', b, r[0] + at, struct.unpack_from('<Q', blob, r[0] + at)[0] ^ (1 << bit))
            yield 'AUX record at 0x%x: %s flipped' % (r[0], what), bytes(b), False
        b = bytearray(blob)
        struct.pack_into('<H', b, r[0] + 6, r[2] - 8)
        yield 'AUX record at 0x%x: size %d for %d' % (r[0], r[2] - 8, r[2]), bytes(b), False
    for r in arnd.sample(aux, min(2, len(aux))):
        for v in (0, 0xfff8):
            b = bytearray(blob)
            struct.pack_into('<H', b, r[0] + 6, v)
            yield 'AUXTRACE header at 0x%x: size %d for 48' % (r[0], v), bytes(b), False
    strs = [r for r in recs if r[1] in (PERF_RECORD_MMAP, PERF_RECORD_COMM, PERF_RECORD_MMAP2)]
    for r in arnd.sample(strs, min(3, len(strs))):
        b = bytearray(blob)
        struct.pack_into('<H', b, r[0] + 6, 0xfff8)
        yield 'string record at 0x%x (type %d): size 65528 for %d' % (r[0], r[1], r[2]), bytes(b), False
    # samples grown (swallowing what follows) or shrunk: their size
    # follows from their event's sample_type (their own seeded choice)
    samples = [r for r in recs if r[1] == PERF_RECORD_SAMPLE]
    prnd = random.Random(name + ': samples')
    for r in prnd.sample(samples, min(3, len(samples))):
        for v in (0xfff8, r[2] + 8, r[2] - 8):
            b = bytearray(blob)
            struct.pack_into('<H', b, r[0] + 6, v)
            yield 'sample at 0x%x: size %d for %d' % (r[0], v, r[2]), bytes(b), False
    if pipe:
        # cut where a round is not finished: perf ends a pipe with one
        cuts = [i for i in range(1, len(recs)) if recs[i - 1][1] != FINISHED_ROUND]
        for i in arnd.sample(cuts, min(3, len(cuts))):
            yield 'cut at the record at 0x%x (no FINISHED_ROUND before)' % recs[i][0], blob[:recs[i][0]], False
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
    # trace bytes per queue: the intact conversion's, which must be the
    # stream the AUXTRACE records cover but for the last one's padding
    # (perf pads each record's data to 8 bytes; the AUX records say where
    # the kernel's data ends)
    spans = file_queues(blob)
    queues[name] = {k: q['trace_bytes'] for k, q in summary_queues(ref).items()}
    intact[name] = intact_streams(os.path.join(tmp, 'ref'))
    for k, q in summary_queues(ref).items():
        if q['missing_bytes'] or q['unknown_losses'] or k not in spans or spans[k] is None or \
                not spans[k] - 8 < q['trace_bytes'] <= spans[k]:
            fails.append('%s: the intact conversion: queue %s holds %d bytes (%d missing), the file %s' %
                         (name, k, q['trace_bytes'], q['missing_bytes'], spans.get(k)))
    if set(spans) != set(queues[name]):
        fails.append('%s: the intact conversion has queues %s, the file %s' % (name, sorted(queues[name], key=str),
                                                                             sorted(spans, key=str)))
    rnd = random.Random(name)
    for what, b, lax in mutants(name, blob, rnd):
        n = len(fails)
        check(name, what, b, ref, st, lax if lax != 'bytes' else False, lax == 'bytes')
        if what.startswith('switch '):
            k = switch_kinds.setdefault(what.split(' flipped')[0][7:], [0, 0, 0, 0])
            s = json.load(open(os.path.join(tmp, 'o', 'summary.json'))) \
                if os.path.exists(os.path.join(tmp, 'o', 'summary.json')) else None
            k[0] += 1
            if s:
                k[1] += s['damaged_switches'] > 0
                k[2] += s['damaged_switches'] > 0 and last_status[0] == 1
                k[3] += per_thread(s) == per_thread(ref) and len(fails) == n
print('%d mutants of %d recordings, exit statuses %s' % (runs, len(inputs), sorted(by_status.items())))
print('of %d converted: trace bytes per queue accounted for exactly in %d (the others: a loss of unknown size '
      'reported), branches per thread counted exactly (no gap) in %d' % (checked, exact_queues, exact_streams))
for k, (m, found, failed, same) in sorted(switch_kinds.items()):
    print('switch %s flipped: %d mutants, damage found in %d (--strict exit 1 in %d), branches per thread '
          'the intact recording\'s in %d' % (k, m, found, failed, same))
for f in fails:
    print('FAIL ' + f)
sys.exit(1 if fails else 0)
EOF
echo "ok - corruption matrix: no crash, memory bounded, every loss of branches reported and --strict failing"
