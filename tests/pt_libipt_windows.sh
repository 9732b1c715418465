#!/bin/sh
# --engine=libipt decodes each AUX run in windows that end at a PSB, as the
# walker does (memory does not grow with the recording): libipt's block
# decoder restarts at each window's PSB, and the last block of a window
# (walked without trace until libipt needed a packet of the next window)
# is cut at the IP of that PSB+.  With PTCONV_WINDOW_BYTES=64 every PSB is
# a window boundary.  Oracles: the ground truth of the execution
# (pt_truth_compare.py: every branch and instruction count, gaps exactly
# where data was lost), and libipt decoding each run whole (the same
# output, byte for byte).
. "${top_srcdir:-.}/tests/lib/common.sh"
TRACE="$top_builddir/tests/ptgen/ptgen-trace"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
CMP="python3 $top_srcdir/tests/pt_truth_compare.py"
[ -x "$TRACE" ] && [ -x "$ENC" ] && [ -x "$WALK" ] || skip "ptgen tools not built"
command -v python3 >/dev/null || skip "python3 not installed"
scratch
"$TRACE" -o "$T/true.truth" -- /bin/true 2>"$T/trace.err" ||
	skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"

# synchronisations at a PSB, all queues
psb_used() {
	grep -o '"psb_used": *[0-9]*' "$1" | awk '{ n += $2 } END { print n + 0 }'
}
# check TRUTH DATA GAPS-ARGS...: libipt in tiny windows against the truth
# and against libipt on whole runs
n=0
check() {
	truth=$1 data=$2
	shift 2
	n=$((n + 1))
	rm -rf "$T/whole" "$T/win"
	"$PTCONV" "$data" -f text -o "$T/whole" --buildid-dir "$T/bid" -q --engine=libipt
	st=$?
	[ $st -le 1 ] || fail "ptconv (whole runs) exited $st"
	PTCONV_WINDOW_BYTES=64 "$PTCONV" "$data" -f text -o "$T/win" --buildid-dir "$T/bid" -q --engine=libipt
	[ $? -eq $st ] || fail "ptconv in windows exited differently"
	$CMP "$truth" "$T/win" "$@" >"$T/cmp" || { cat "$T/cmp"; grep -h " gap " "$T"/win/*.txt; fail "case $n: windows disagree with the truth"; }
	for f in "$T"/whole/*.txt; do
		cmp -s "$f" "$T/win/${f##*/}" || { diff "$f" "$T/win/${f##*/}" | head; fail "case $n: ${f##*/} differs from the whole-run decoding"; }
	done
	whole=$(psb_used "$T/whole/summary.json")
	win=$(psb_used "$T/win/summary.json")
}

for opts in "" "--noretcomp" "--timing=tsc,mtc,cyc" "--timing=none" "--long-tnt" \
	    "--interrupt-every 300" "--per-thread" "--pipe --interrupt-every 97 --noretcomp"; do
	rm -f "$T/t.data"
	# shellcheck disable=SC2086
	"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" --psb-period 0 $opts "$T/true.truth" || fail "ptgen-encode $opts"
	check "$T/true.truth" "$T/t.data" --expect-gaps 0
	[ "$win" -gt "$whole" ] || fail "case $n: only $win synchronisations in windows ($whole whole): the windows were not small"
	echo "ok $n - /bin/true $opts: exact in $win windows, as whole runs"
done
# injected losses: the gaps stay where the data was lost
for opts in "--ovf-at 5000:100" "--drop 50@2500 --aux-chunk 4096" "--ovf-at 12000 --noretcomp"; do
	# shellcheck disable=SC2086
	"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" --psb-period 0 --gaps "$T/gaps" $opts "$T/true.truth" ||
		fail "ptgen-encode $opts"
	check "$T/true.truth" "$T/t.data" --gaps "$T/gaps"
	echo "ok $n - /bin/true $opts: gaps where data was lost, in $win windows, as whole runs"
done
# a synthetic execution: several threads on two CPUs, system calls and
# asynchronous exits, on a large binary
BIN=$(walk_binary)
"$WALK" --branches 100000 --seed 5 --threads 3 --cpus 2 --psb-period 0 --interrupt-every 500 \
	--truth "$T/w.truth" -o "$T/w.data" "$BIN" 2>"$T/err" || { cat "$T/err"; fail "ptgen-walk"; }
check "$T/w.truth" "$T/w.data" --expect-gaps 0
[ "$win" -ge 20 ] && [ "$win" -gt "$whole" ] || fail "ptgen-walk: only $win windows ($whole whole)"
echo "ok $n - ptgen-walk, 3 threads on 2 CPUs: $(grep -c reproduced "$T/cmp") threads exact in $win windows"
exit 0
