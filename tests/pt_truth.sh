#!/bin/sh
# Intel PT end to end against the ground truth: a real program (/bin/true)
# is single-stepped by ptgen-trace, encoded by ptgen-encode into the
# perf.data that `perf record -e intel_pt//u` would write (with every
# encoding option: return compression on/off, timing packets, long TNT,
# interrupts, pipe mode, per-thread buffers, overflow, dropped AUX bytes)
# and converted by ptconv.  An independent script (pt_truth_compare.py)
# checks every branch and instruction count against the truth, and that
# gaps appear exactly where the encoder says it lost data.
. "${top_srcdir:-.}/tests/lib/common.sh"
TRACE="$top_builddir/tests/ptgen/ptgen-trace"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
CMP="python3 $top_srcdir/tests/pt_truth_compare.py"
[ -x "$TRACE" ] && [ -x "$ENC" ] || skip "ptgen-trace/ptgen-encode not built"
command -v python3 >/dev/null || skip "python3 not installed"
scratch
"$TRACE" -o "$T/true.truth" -- /bin/true 2>"$T/trace.err" ||
	skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"

n=0
run() {	# ENGINE EXPECT_GAPS ENCODER-OPTIONS...
	eng=$1 gaps=$2
	shift 2
	n=$((n + 1))
	rm -rf "$T/out" "$T/t.data" "$T/gaps"
	"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" --gaps "$T/gaps" "$@" "$T/true.truth" ||
		fail "ptgen-encode $*"
	"$PTCONV" "$T/t.data" -f text -o "$T/out" --buildid-dir "$T/bid" -q --engine="$eng"
	st=$?
	[ $st -eq 0 ] || fail "ptconv exited $st for ptgen-encode $*"
	if [ "$gaps" = 0 ]; then
		$CMP "$T/true.truth" "$T/out" --expect-gaps 0 >"$T/cmp" || { cat "$T/cmp"; fail "$eng, $*"; }
	else
		$CMP "$T/true.truth" "$T/out" --gaps "$T/gaps" >"$T/cmp" || { cat "$T/cmp" "$T/gaps"; grep -h " gap " "$T"/out/*.txt; fail "$eng, $*"; }
	fi
	if [ "$eng" = walker ]; then
		# -j 2 and 7 with windows of 2 KiB: workers decode them ahead
		# and the output is the same files (tests/pt_ahead.sh)
		for j in 2 7; do
			rm -rf "$T/outj"
			PTCONV_WINDOW_BYTES=2048 "$PTCONV" "$T/t.data" -f text -o "$T/outj" --buildid-dir "$T/bid" -q -j $j ||
				fail "ptconv -j $j exited $? for ptgen-encode $*"
			diff -r -I '"fast_path_bytes"' "$T/out" "$T/outj" >/dev/null ||
				fail "-j $j, windows of 2 KiB: other files for ptgen-encode $*"
		done
	fi
	echo "ok $n - $eng $*: $(grep -v '^OK' "$T/cmp" | tr '\n' ' ')"
}

for opts in "" "--noretcomp" "--timing=none" "--timing=tsc,mtc,cyc" "--long-tnt" \
	    "--interrupt-every 700" "--pipe" "--per-thread" "--psb-period 0" \
	    "--noretcomp --timing=none --interrupt-every 300"; do
	run walker 0 $opts
done
for opts in "" "--noretcomp" "--interrupt-every 700"; do
	run libipt 0 $opts
	run query 0 $opts
done
# injected losses: an overflow (OVF, packets lost) and AUX bytes removed
# from records flagged PARTIAL, at several places
run walker 1 --ovf-at 5000:100
run walker 1 --ovf-at 12000 --noretcomp
run libipt 1 --ovf-at 5000:100
run query 1 --ovf-at 5000:100
for off in 500 2500 5000; do
	run walker 1 --drop 50@$off --aux-chunk 4096 --psb-period 0
	run walker 1 --drop 50@$off --psb-period 0
done
# --time: perf times in ns (the encoder's clock starts at 1 s)
"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" "$T/true.truth" || fail "ptgen-encode"
rm -rf "$T/out" "$T/out2"
"$PTCONV" "$T/t.data" -f text -o "$T/out" --buildid-dir "$T/bid" -q --time 0,1000 || fail "--time 0,1000"
[ "$(grep -vc '^#' "$T"/out/*.txt)" = 0 ] || fail "--time 0,1000 kept branches"
"$PTCONV" "$T/t.data" -f text -o "$T/out2" --buildid-dir "$T/bid" -q --time 1000, || fail "--time 1000,"
$CMP "$T/true.truth" "$T/out2" --expect-gaps 0 >"$T/cmp" || { cat "$T/cmp"; fail "--time 1000,"; }
echo "ok - --time"

# --check-partial keeps the PSB segments of a PARTIAL range that the next
# PSB confirms (a heuristic: only the gap's presence is asserted)
"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" --drop 50@2500 --psb-period 0 "$T/true.truth" || fail "ptgen-encode"
rm -rf "$T/out"
"$PTCONV" "$T/t.data" -f text -o "$T/out" --buildid-dir "$T/bid" -q --check-partial || fail "--check-partial"
grep -q " gap aux-lost " "$T"/out/*.txt || fail "--check-partial reported no gap for the hole"

# Far branches after which user mode resumes elsewhere than at the next
# instruction (ptconv-trace(5)): c_signal's handlers entered on the way
# back from a system call and its sigreturns; the truth's R line after the
# far B line names the target (pt_truth_compare.py).  Both engines, per
# thread and on one CPU shared with nobody (one thread).
p=c_signal
"$TRACE" -o "$T/$p.truth" -- "$top_builddir/tests/corpus/$p" >/dev/null 2>"$T/$p.err"
grep -q '^X ' "$T/$p.truth" || fail "$p: ptgen-trace failed: $(cat "$T/$p.err")"
# the truth's count of them: far B lines whose thread's next R is elsewhere
want=$(python3 - "$T/$p.truth" <<'PY'
import sys
far, n = {}, 0
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "B":
        far.pop(f[2], None)
        if f[5] == "6":
            far[f[2]] = int(f[3], 16) + int(f[7])
    elif f and f[0] == "R" and f[2] in far:
        n += far.pop(f[2]) != int(f[3], 16)
print(n)
PY
)
[ "$want" -gt 0 ] || fail "$p: the truth has no far branch resuming elsewhere"
for v in --per-thread "--cpus 1"; do
	for eng in walker libipt; do
		rm -rf "$T/out"
		# shellcheck disable=SC2086
		"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" $v "$T/$p.truth" || fail "ptgen-encode $v"
		"$PTCONV" "$T/t.data" -f text -o "$T/out" --buildid-dir "$T/bid" -q --engine=$eng ||
			fail "$p $v $eng: ptconv failed"
		$CMP "$T/$p.truth" "$T/out" --expect-gaps 0 >"$T/cmp" || { cat "$T/cmp"; fail "$p $v $eng"; }
		n=$(awk '$4 == "far" && $3 != "0x0"' "$T"/out/*.txt | wc -l)
		[ "$n" -eq "$want" ] || fail "$p $v $eng: $n far branches with a target, the truth has $want"
		echo "ok - $p $v $eng: exact, $n far branches go where user mode resumed elsewhere"
	done
done
exit 0
