#!/bin/sh
# -j N on the windows of one queue (ptdec.h, "Windows decoded ahead"):
# workers decode a queue's windows before their turn and the driver
# replays their logs (PTCONV_AHEAD_WAIT: the driver waits for the workers
# instead of decoding a window none took yet, so that the same windows are
# replayed on every run).  Whatever -j, every output file is byte-identical to
# -j 1's, for every window size (PTCONV_WINDOW_BYTES, down to one PSB period
# and below), and the same as with the default windows (except on a stream
# with CYC packets, see pt_convert.c), and the branches are the truth's
# (pt_truth_compare.py): a
# one-thread recording on one CPU, with window boundaries in deep recursion
# (c_recurse), inside TNT runs (every 2 KiB PSB period cut at any size),
# right after losses (an overflow, dropped AUX bytes), after interrupts,
# at thread switches (c_threads on one CPU), with threads on 2 CPUs, and
# with threads that move between CPUs (ptgen --migrate: their windows are
# replayed only when the replay needs no stop, else decoded in place); and
# random walks of several threads with escapes.  The stderr line says how
# many windows were replayed: the replay must have been used, not only
# refused.
. "${top_srcdir:-.}/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
TRACE="$top_builddir/tests/ptgen/ptgen-trace"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
CMP="python3 $top_srcdir/tests/pt_truth_compare.py"
[ -x "$TRACE" ] && [ -x "$ENC" ] || skip "ptgen-trace/ptgen-encode not built"
command -v python3 >/dev/null || skip "python3 not installed"
scratch

# conv DIR WINDOW JOBS DATA: convert (WINDOW "default" or bytes)
conv() {
	rm -rf "$1"
	if [ "$2" = default ]; then
		"$PTCONV" "$4" -f text,ptconv -o "$1" --buildid-dir "$T/bid" -j "$3" 2> "$T/err" >/dev/null
	else
		PTCONV_WINDOW_BYTES=$2 PTCONV_AHEAD_DEPTH=3 PTCONV_AHEAD_WAIT=1 \
		"$PTCONV" "$4" -f text,ptconv -o "$1" --buildid-dir "$T/bid" -j "$3" 2> "$T/err" >/dev/null
	fi || { cat "$T/err"; fail "$4: -j $3, windows of $2 bytes: ptconv failed"; }
}

# same DATA TRUTH GAPS-OPTION MIN-REPLAYED [cyc|MIN-SHARED]: for every window size,
# -j 2 and -j 7 give -j 1's files, and (but with CYC timing, where some
# times depend on where windows end) those of the default windows; they
# are the truth
same() {
	data=$1 truth=$2 gopt=$3 minrep=$4 cyc= minshared=0
	case ${5:-} in cyc) cyc=1 ;; '') ;; *) minshared=$5 ;; esac
	conv "$T/ref" default 1 "$data"
	if [ -n "$truth" ]; then
		# shellcheck disable=SC2086
		$CMP "$truth" "$T/ref" $gopt > "$T/cmp" || { cat "$T/cmp"; fail "$data: -j 1 is not the truth"; }
	fi
	replayed=0 shared=0
	for ws in 700 2048 5000 65536 131072 default; do
		conv "$T/ref1" $ws 1 "$data"
		if [ -z "$cyc" ]; then
			# (how much went through ptconv's query decoder depends
			# on the windows: a window with an OVF goes to libipt's)
			diff -r -I '"fast_path_bytes"' "$T/ref" "$T/ref1" > "$T/diff" ||
				{ head -20 "$T/diff"; fail "$data: windows of $ws bytes: other files"; }
		fi
		for j in 2 7; do
			conv "$T/o" $ws $j "$data"
			diff -r "$T/ref1" "$T/o" > "$T/diff" ||
				{ head -20 "$T/diff"; fail "$data: -j $j, windows of $ws bytes: other files than -j 1"; }
			r=$(sed -n 's/^ptconv: -j [0-9]*: \([0-9]*\) of [0-9]* trace windows.*/\1/p' "$T/err")
			[ -n "$r" ] || fail "$data: -j $j: no line about the windows on stderr"
			replayed=$((replayed + r))
			r=$(sed -n 's/^ptconv: -j .* replayed (\([0-9]*\) with threads also traced on other CPUs).*/\1/p' "$T/err")
			shared=$((shared + r))
		done
	done
	[ "$replayed" -ge "$minrep" ] || fail "$data: $replayed windows replayed in all, expected at least $minrep"
	[ "$shared" -ge "$minshared" ] ||
		fail "$data: $shared windows with a thread on several CPUs replayed, expected at least $minshared"
	echo "ok - $(basename "$data"): -j 1, 2 and 7, windows of 700 B to 128 KiB: the same files ($replayed windows replayed, $shared with a thread on several CPUs)"
}

# one thread, one CPU
need_ptrace
trace_corpus c_recurse
trace_corpus c_signal
"$TRACE" -o "$T/true.truth" -- /bin/true >/dev/null 2>"$T/t.err" || skip "ptgen-trace: $(tail -1 "$T/t.err")"
"$ENC" -o "$T/r.data" --buildid-dir "$T/bid" --psb-period 0 "$T/c_recurse.truth" || fail "ptgen-encode"
same "$T/r.data" "$T/c_recurse.truth" "--expect-gaps 0" 5
encode_three "$T/true.truth" t 300
same "$T/ti.data" "$T/true.truth" "--expect-gaps 0" 10
same "$T/tc.data" "$T/true.truth" "--expect-gaps 0" 5 cyc
"$ENC" -o "$T/s.data" --buildid-dir "$T/bid" --psb-period 0 "$T/c_signal.truth" || fail "ptgen-encode"
same "$T/s.data" "$T/c_signal.truth" "--expect-gaps 0" 1
# losses: the windows after them replay again
"$ENC" -o "$T/l.data" --buildid-dir "$T/bid" --psb-period 0 --ovf-at 5000:100 --gaps "$T/l.gaps" "$T/true.truth" ||
	fail "ptgen-encode"
same "$T/l.data" "$T/true.truth" "--gaps $T/l.gaps" 4
"$ENC" -o "$T/d.data" --buildid-dir "$T/bid" --psb-period 0 --drop 50@9000 --gaps "$T/d.gaps" "$T/true.truth" ||
	fail "ptgen-encode"
same "$T/d.data" "$T/true.truth" "--gaps $T/d.gaps" 4

# threads switching on one CPU, and on two CPUs
"$TRACE" -o "$T/th.truth" -- "$top_builddir/tests/corpus/c_threads" >/dev/null 2>"$T/th.err" ||
	fail "ptgen-trace c_threads: $(tail -1 "$T/th.err")"
"$ENC" -o "$T/th1.data" --buildid-dir "$T/bid" --psb-period 0 --interrupt-every 500 "$T/th.truth" || fail "ptgen-encode"
same "$T/th1.data" "$T/th.truth" "--expect-gaps 0" 10
"$ENC" -o "$T/th2.data" --buildid-dir "$T/bid" --psb-period 0 --cpus 2 "$T/th.truth" || fail "ptgen-encode"
same "$T/th2.data" "$T/th.truth" "--expect-gaps 0" 5

# threads that move between CPUs (every switch-in, every other one): a
# window holding one is replayed only when the replay runs to its end
# without a stop that would let the other CPU's queue decode the thread
"$ENC" -o "$T/thm.data" --buildid-dir "$T/bid" --psb-period 0 --cpus 2 --migrate 1 --interrupt-every 500 \
	"$T/th.truth" || fail "ptgen-encode --migrate"
same "$T/thm.data" "$T/th.truth" "--expect-gaps 0" 10 10
# Linux perf reads the migrating threads' recording too
if PERF=$(command -v perf); then
	"$PERF" script -i "$T/thm.data" --itrace=b -F tid,ip,addr > "$T/perf.out" 2> "$T/perf.err" ||
		{ cat "$T/perf.err"; fail "perf script on a recording with --migrate"; }
	[ "$(awk '{ print $1 }' "$T/perf.out" | sort -u | wc -l)" -ge 3 ] ||
		fail "perf script: not the three threads of c_threads"
fi
"$WALK" --branches 400000 --threads 3 --cpus 2 --migrate 2 --seed 3 --escape 5000 --psb-period 0 -o "$T/wm.data" \
	"$(walk_binary)" >/dev/null 2>&1 || fail "ptgen-walk --migrate"
same "$T/wm.data" "" "" 200 200

# a random walk over a large binary: 3 threads on one CPU, escapes
"$WALK" --branches 400000 --threads 3 --seed 3 --escape 5000 --psb-period 0 -o "$T/w.data" "$(walk_binary)" \
	>/dev/null 2>&1 || fail "ptgen-walk"
same "$T/w.data" "" "" 200
exit 0
