#!/bin/sh
# Branches decoded for a thread after its exit (a clock that disagrees with
# the sideband, a TID used again) cannot go to its finished files: they are
# taken out of its counts, reported as unwritten in summary.json (per thread
# and in total), and --strict fails on them.  A two-thread random walk with
# its ground truth; then the same recording with the second thread's EXIT
# record moved to the middle of its run.  Oracle: the truth's branches per
# thread = written (text lines) + unwritten.
. "${top_srcdir:-.}/tests/lib/common.sh"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
[ -x "$WALK" ] || skip "ptgen-walk not built"
BIN=$(walk_binary)
scratch
"$WALK" --branches 20000 --threads 2 --slice 5000 --seed 5 --truth "$T/w.truth" -o "$T/w.data" "$BIN" >/dev/null 2>&1 ||
	fail "ptgen-walk"
# move the EXIT of the second thread (the first one's child) half way
# through the recording: every field of the record holding its time
python3 - "$T/w.data" "$T/late.data" <<'PY' || fail "cannot patch the EXIT record"
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
assert d[:8] == b"PERFILE2"
data_off, data_size = struct.unpack_from("<QQ", d, 40)
off, end, exits = data_off, data_off + data_size, []
while off + 8 <= end:
    typ, misc, size = struct.unpack_from("<IHH", d, off)
    if size < 8:
        sys.exit("bad record size")
    if typ == 4:  # PERF_RECORD_EXIT: pid, ppid, tid, ptid, time
        pid, ppid, tid, ptid, t = struct.unpack_from("<IIIIQ", d, off + 8)
        exits.append((off, size, pid, tid, t))
    off += size
child = [e for e in exits if e[2] != e[3]]
assert len(child) == 1, exits
off, size, pid, tid, t = child[0]
start = 1000000000  # ptgen-walk's first perf time
mid = start + (t - start) // 2
for o in range(off + 8, off + size - 7, 8):
    if struct.unpack_from("<Q", d, o)[0] == t:
        struct.pack_into("<Q", d, o, mid)
open(sys.argv[2], "wb").write(d)
print(tid)
PY
count() {	# TID FILE: branch lines of the thread in a text output or the truth
	awk -v tid="$1" '($1 == "B" && $3 == tid) || ($1 == tid && $1 != "B") { n++ } END { print n + 0 }' "$2"
}
json() {	# FILE PYTHON-EXPRESSION over s (the summary)
	python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
"$PTCONV" "$T/w.data" -f text -o "$T/ok" -q --strict || fail "the intact recording: exit $?"
[ "$(json "$T/ok/summary.json" 's["unwritten_branches"]')" = 0 ] || fail "unwritten branches in the intact recording"
"$PTCONV" "$T/late.data" -f text,ptconv -o "$T/late" -q --strict
st=$?
[ $st = 1 ] || fail "--strict exited $st with branches after a thread's exit (want 1)"
"$PTCONV" "$T/late.data" -f text -o "$T/late0" -q || fail "without --strict: exit $?"
total=0
for tid in 4000 4001; do
	want=$(count $tid "$T/w.truth")
	got=$(cat "$T"/late/*"$tid"*.txt 2>/dev/null | count $tid -)
	un=$(json "$T/late/summary.json" "[t for t in s['threads'] if t['tid'] == $tid][0]['unwritten_branches']")
	sum=$(json "$T/late/summary.json" "sum(v for k, v in [t for t in s['threads'] if t['tid'] == $tid][0]['branches'].items() if k != 'cond-not-taken')")
	[ $((got + un)) = "$want" ] || fail "tid $tid: $got written + $un unwritten, the truth has $want"
	[ "$sum" = "$got" ] || fail "tid $tid: the summary counts $sum branches, its file holds $got"
	total=$((total + un))
	echo "ok - tid $tid: $got written + $un unwritten = the truth's $want"
done
[ "$total" -gt 0 ] || fail "nothing was unwritten: the EXIT record did not move"
[ "$(json "$T/late/summary.json" 's["unwritten_branches"]')" = "$total" ] || fail "the total of unwritten branches"
exit 0
