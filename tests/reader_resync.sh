#!/bin/sh
# A damaged record header in the data section does not stop the reading
# (issue 19): the reader goes on at the next intact record and counts the
# bytes in between as lost, where and why.  Generator recordings (per-CPU,
# per-thread, pipe mode, zstd-compressed sideband) are damaged at test time:
# record sizes set to 0, 4, 0xfff8 and an odd size, headers overwritten
# with garbage, AUXTRACE data sizes made huge, larger and smaller, on early
# sideband records, AUXTRACE records (a queue's first, one in the middle,
# its last), an AUX record and the last record; and garbage from the middle
# to the end.  For each: no crash; --strict exits 1; summary.json lists the
# damage at the offset and of the size the mutation implies (a damaged
# AUXTRACE header or data size whose data the queue's next record confirms
# is repaired: 0 bytes lost); more branches than the recording cut at the
# damaged record gives; every run of branches between gaps is a run of the
# ground truth (pt_truth_compare.py), a lost queue tail is an aux-lost gap;
# `ptconv info` names the file and offset and exits 3, also reading a pipe;
# so does `ptconv packets`.
. "${top_srcdir:-.}/tests/lib/common.sh"
command -v python3 >/dev/null || skip "python3 not installed"
need_walk
W="--branches 12000 --seed 5 --threads 2 --aux-chunk 4096 --psb-period 0"
walk_gen c $W
walk_gen t $W --per-thread
walk_gen p $W --pipe
walk_gen z $W --compress 3
python3 - "$PTCONV" "$top_srcdir/tests" "$T" <<'EOF' || fail "damaged recordings"
import contextlib, io, json, os, random, shutil, struct, subprocess, sys
ptconv, tests, tmp = sys.argv[1:4]
sys.path.insert(0, tests)
import pt_truth_compare as ptc
from perf_layout import records

fails = []
runs = 0
truths = {}
read_truth = ptc.read_truth
ptc.read_truth = lambda p: truths.setdefault(p, read_truth(p))   # once per recording


def convert(path, out, strict=True):
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([ptconv, path, '-f', 'text', '-o', out, '-q'] + (['--strict'] if strict else []),
                       capture_output=True)
    s = None
    if os.path.exists(os.path.join(out, 'summary.json')):
        s = json.load(open(os.path.join(out, 'summary.json')))
    return p, s


def nbranches(s):
    return sum(sum(t['branches'].values()) - t['branches']['cond-not-taken'] for t in s['threads']) if s else -1


def truth_ok(truth, out):
    sys.argv = ['pt_truth_compare.py', truth, out]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ret = ptc.main()
    return ret == 0, buf.getvalue()


def check(name, rec, what, blob, want, more_than_cut, truth=True, lost_queue_tid=None):
    """Convert the mutant; want: the damage list [(offset, bytes, to_end)]."""
    global runs
    runs += 1
    tag = '%s: %s at 0x%x (%s)' % (name, what, rec[0], rec[1])
    path = os.path.join(tmp, 'mutant.data')
    open(path, 'wb').write(blob)
    out = os.path.join(tmp, 'o')
    p, s = convert(path, out)
    err = p.stderr.decode(errors='replace')
    if p.returncode != 1 or s is None:
        fails.append('%s: --strict exit %d (want 1): %s' % (tag, p.returncode, err[-400:]))
        return
    got = [(d['offset'], d['bytes'], d['to_end']) for d in s['input_damage']]
    if got != want:
        fails.append('%s: damage %s, want %s' % (tag, got, want))
    if s['skipped_input_bytes'] != sum(w[1] for w in want):
        fails.append('%s: skipped_input_bytes %d' % (tag, s['skipped_input_bytes']))
    named = ('mutant.data: offset 0x%x:' % rec[0], 'record at 0x%x' % rec[0])
    if not any(w in l for w in named for l in err.splitlines() if 'warning' in l):
        fails.append('%s: no warning naming the file and offset: %s' % (tag, err[-300:]))
    n, c = nbranches(s), cut_branches(name, rec[0])
    if n < c or (more_than_cut and n <= c):
        fails.append('%s: %d branches, the recording cut there gives %d' % (tag, n, c))
    if truth:
        ok, msg = truth_ok(os.path.join(tmp, name + '.truth'), out)
        if not ok:
            fails.append('%s: not the truth: %s' % (tag, msg[-400:].replace('\n', ' | ')))
    if lost_queue_tid is not None:
        gaps = [l for f in os.listdir(out) if f.endswith('-%d.txt' % lost_queue_tid)
                for l in open(os.path.join(out, f)) if ' gap aux-lost ' in l and 'damaged input' in l]
        if not gaps:
            fails.append('%s: thread %d has no aux-lost gap for its lost data' % (tag, lost_queue_tid))
    if s['gaps_by_cause']['aux-lost'] < (1 if lost_queue_tid is not None else 0):
        fails.append('%s: aux-lost gaps not counted' % tag)
    # info reports it; a pipe-mode recording also read from a pipe, which
    # cannot look past its window: the damage may be found further on
    q = subprocess.run([ptconv, 'info', path], capture_output=True)
    e = q.stderr.decode(errors='replace')
    if q.returncode != 3 or not any(w in e for w in named):
        fails.append('%s: info: exit %d: %s' % (tag, q.returncode, e[-300:]))
    if name == 'p':
        q = subprocess.run([ptconv, 'info', '-'], input=blob, capture_output=True)
        e = q.stderr.decode(errors='replace')
        if q.returncode != 3 or '(stdin): offset 0x' not in e:
            fails.append('%s: info of a pipe: exit %d: %s' % (tag, q.returncode, e[-300:]))


cuts = {}


def cut_branches(name, off):
    """Branches of the recording cut at off: what reading that stops at the
    damage would keep."""
    if (name, off) not in cuts:
        path = os.path.join(tmp, 'cut.data')
        open(path, 'wb').write(blobs[name][:off])
        cuts[name, off] = nbranches(convert(path, os.path.join(tmp, 'oc'), False)[1])
    return cuts[name, off]


KINDS = ('size 0', 'size 4', 'size 0xfff8', 'odd size', 'garbage header')


def mutate_header(blob, rec, kind):
    b = bytearray(blob)
    off, t, size, _ = rec
    if kind == 'garbage header':
        r = random.Random(off)
        b[off:off + 8] = bytes(r.getrandbits(8) for _ in range(8))
        b[off + 2] |= 0x80     # (an unknown type, never a known one by chance)
    else:
        struct.pack_into('<H', b, off + 6, {'size 0': 0, 'size 4': 4, 'size 0xfff8': 0xfff8,
                                            'odd size': size + 3}[kind])
    return bytes(b)


blobs = {}
for name in ('c', 't', 'p', 'z'):
    blob = open(os.path.join(tmp, name + '.data'), 'rb').read()
    blobs[name] = blob
    recs, start, end = records(blob)
    aux = [r for r in recs if r[1] == 71]
    last_aux = aux[-1][0]
    idx = {r[0]: struct.unpack_from('<I', blob, r[0] + 32)[0] for r in aux}
    tid = {r[0]: struct.unpack_from('<I', blob, r[0] + 36)[0] for r in aux}

    def later_in_queue(r):
        return any(a[0] > r[0] and idx[a[0]] == idx[r[0]] for a in aux)

    def earlier_in_queue(r):
        return any(a[0] < r[0] and idx[a[0]] == idx[r[0]] for a in aux)

    if name == 'z':
        # compressed sideband: a damaged COMPRESSED record loses the
        # records in it (switches too: no truth check), nothing more
        comp = [r for r in recs if r[1] == 81]
        for rec in (comp[1], comp[-1]):
            check(name, rec, 'size 0', mutate_header(blob, rec, 'size 0'), [(rec[0], rec[2], False)],
                  rec[0] < last_aux, truth=False)
        continue
    first = {}
    for r in recs:
        first.setdefault(r[1], r)
    # early sideband, an AUX record in the middle, the last record
    side = [first[3], first.get(15, first.get(14)), first[12]]
    side.append([r for r in recs if r[1] == 11][len([r for r in recs if r[1] == 11]) // 2])
    for k, rec in enumerate(side + [recs[-1]]):
        kinds = KINDS if name == 'c' else (KINDS[k % 5], KINDS[(k + 2) % 5])
        for kind in kinds:
            to_end = rec is recs[-1]
            check(name, rec, kind, mutate_header(blob, rec, kind), [(rec[0], rec[2], to_end)],
                  rec[0] < last_aux)
    # AUXTRACE records: the first, one in the middle, the last of a queue
    for k, rec in enumerate((aux[0], aux[len(aux) // 2], aux[-1])):
        off, _, size, more = rec
        kinds = KINDS if name == 'c' else (KINDS[k % 5], KINDS[4])
        for kind in kinds:
            # a damaged header, the fields after it whole: the record is
            # read whole, but for garbage over the first record of a queue
            # (nothing says it continues a queue): it is lost with its data
            lost = kind == 'garbage header' and not earlier_in_queue(rec)
            want = [(off, size + more, False)] if lost else [(off, 0, False)]
            check(name, rec, kind, mutate_header(blob, rec, kind), want, off < last_aux or not lost)
        for what, v in (('data size 2^40', 1 << 40), ('data size + 16', more + 16), ('data size - 16', more - 16)):
            b = bytearray(blob)
            struct.pack_into('<Q', b, off + 8, v)
            if later_in_queue(rec):
                # the queue's next record says where the data ends
                want, lost_tid = [(off, 0, False)], None
            elif v < more:
                # the data it claims is read, the rest is lost
                want, lost_tid = [(off + 48 + v, more - v, False)], tid[off]
            else:
                want, lost_tid = [(off + 48, more, False)], tid[off]
            check(name, rec, what, bytes(b), want, off < last_aux or v < more,
                  lost_queue_tid=lost_tid if name == 't' else None)
    # garbage from the middle AUX record to the end: lost to the end
    mid = side[3]
    b = bytearray(blob)
    r = random.Random(7)
    b[mid[0]:end] = bytes(r.getrandbits(8) for _ in range(end - mid[0]))
    check(name, mid, 'garbage to the end', bytes(b), [(mid[0], end - mid[0], True)], False)
    # without --strict a damaged recording converts with status 0;
    # packets counts what is left and exits 3, naming the damage
    p, s = convert(os.path.join(tmp, 'mutant.data'), os.path.join(tmp, 'o'), False)
    if p.returncode != 0 or not s['input_damage']:
        fails.append('%s: without --strict: exit %d' % (name, p.returncode))
    q = subprocess.run([ptconv, 'packets', os.path.join(tmp, 'mutant.data')], capture_output=True)
    if q.returncode != 3 or ('mutant.data: offset 0x%x:' % mid[0]).encode() not in q.stderr:
        fails.append('%s: packets: exit %d: %s' % (name, q.returncode, q.stderr[-300:]))
print('%d damaged recordings converted, %d cuts' % (runs, len(cuts)))
for f in fails:
    print('FAIL ' + f)
sys.exit(1 if fails else 0)
EOF
echo "ok - damaged record headers and AUXTRACE sizes: read on at the next intact record, the loss placed and counted"
