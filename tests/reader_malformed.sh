#!/bin/sh
# A sideband record that the reader can frame but not parse (here a COMM
# whose name has no terminating NUL) is a loss, not a warning alone
# (issue 19): summary.json counts it in malformed_records, --strict exits
# 1, and the warning names the file and the record's offset.  (The time
# between the records around it becomes a lost range: a records-lost gap
# for trace decoded in it; these COMMs come before any trace.)  The
# branches are the intact recording's, and the intact recording gives
# none of this.
. "${top_srcdir:-.}/tests/lib/common.sh"
command -v python3 >/dev/null || skip "python3 not installed"
need_walk
walk_gen m --branches 30000 --seed 5 --threads 3 --slice 5000 --psb-period 0
python3 - "$PTCONV" "$top_srcdir/tests" "$T" <<'PY' || fail "malformed sideband records"
import json, os, shutil, struct, subprocess, sys
ptconv, tests, tmp = sys.argv[1:4]
sys.path.insert(0, tests)
from perf_layout import records

PERF_RECORD_COMM = 3


def convert(path, out):
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([ptconv, path, '-f', 'text', '-o', out, '--strict'], capture_output=True, text=True)
    return p, json.load(open(os.path.join(out, 'summary.json')))


def branches(s):
    return {t['tid']: t['branches'] for t in s['threads']}


fails = []
intact = os.path.join(tmp, 'm.data')
p0, s0 = convert(intact, os.path.join(tmp, 'o0'))
if p0.returncode != 0 or s0['malformed_records'] != 0:
    fails.append('intact: exit %d, malformed_records %d' % (p0.returncode, s0['malformed_records']))
blob = open(intact, 'rb').read()
recs, _, _ = records(blob)
comm = [r for r in recs if r[1] == PERF_RECORD_COMM]
if not comm:
    fails.append('the recording has no COMM record')
for off, typ, size, _ in comm:
    bad = bytearray(blob)
    # the name and its padding up to the sample id trailer: no NUL left
    # (pid, tid at +8; the name from +16 to the record's end)
    for i in range(off + 16, off + size):
        bad[i] = 0x41
    path = os.path.join(tmp, 'c%x.data' % off)
    open(path, 'wb').write(bad)
    p, s = convert(path, os.path.join(tmp, 'oc'))
    what = 'COMM at 0x%x' % off
    if p.returncode != 1:
        fails.append('%s: --strict exit %d, not 1' % (what, p.returncode))
    if s['malformed_records'] != 1:
        fails.append('%s: malformed_records %d' % (what, s['malformed_records']))
    if '%s: offset 0x%x: malformed COMM record' % (os.path.basename(path), off) not in p.stderr:
        fails.append('%s: the warning does not name the file and offset: %s' % (what, p.stderr.strip()))
    if branches(s) != branches(s0):
        fails.append('%s: branches differ from the intact recording\'s' % what)
for f in fails:
    print('FAIL:', f)
print('%d COMM records damaged, %d failures' % (len(comm), len(fails)))
sys.exit(1 if fails else 0)
PY
echo "ok - a malformed sideband record: counted, named, --strict fails, the branches kept"
