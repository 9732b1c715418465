#!/bin/sh
# Encoding ahead (writers.h): with -j and the .ptc format alone, the
# workers that decode a window ahead also encode its branches for the
# thread's writer, against a snapshot of the writer's tables, and the
# driver splices the encoding in where the replay of the window's log
# reaches it (ptdec.h, struct ptc_pt_tap).  Whatever -j, window size and
# chunk size, every file is byte-identical to -j 1's, whose branches are
# the truth's (pt_truth_compare.py, on the text format at the default -j),
# and the stderr line says that windows were encoded ahead: snapshots of
# young tables too
# (PTCONV_AHEAD_RECORDS_PER_NODE=1), so that windows meet nodes, edges and
# successors their snapshot does not know, and stop encoding there.
# Recordings: deep recursion, threads that move between CPUs, a program
# whose loops repeat (with RET compression or without and interrupts, with
# CYC timing), and a random walk of three threads.
. "${top_srcdir:-.}/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
need_ptgen
WALK="$top_builddir/tests/ptgen/ptgen-walk"
CMP="python3 $top_srcdir/tests/pt_truth_compare.py"
command -v python3 >/dev/null || skip "python3 not installed"
scratch

# conv DIR JOBS DATA [ENV...]: the .ptc alone, plus the text format for -j 1
conv() {
	dir=$1 jobs=$2 data=$3
	shift 3
	rm -rf "$dir"
	env "$@" "$PTCONV" "$data" -f ptconv -o "$dir" --buildid-dir "$T/bid" -j "$jobs" 2> "$T/err" >/dev/null ||
		{ cat "$T/err"; fail "$data: -j $jobs $*: ptconv failed"; }
}

# same DATA TRUTH GAPS-OPTION MIN-ENCODED: -j 2 and -j 7, windows of 700 B
# to 4 KiB, chunks of 1000 records and the default: -j 1's files
same() {
	data=$1 truth=$2 gopt=$3 min=$4 encoded=0
	if [ -n "$truth" ]; then
		rm -rf "$T/txt"
		"$PTCONV" "$data" -f text -o "$T/txt" --buildid-dir "$T/bid" -q || fail "$data: text"
		# shellcheck disable=SC2086
		if ! $CMP "$truth" "$T/txt" $gopt > "$T/cmp"; then
			cat "$T/cmp"
			# (the default -j: where it fails, whether -j 1 does too)
			rm -rf "$T/txt"
			"$PTCONV" "$data" -f text -o "$T/txt" --buildid-dir "$T/bid" -q -j 1 || fail "$data: text, -j 1"
			$CMP "$truth" "$T/txt" $gopt > "$T/cmp" && fail "$data: the text at the default -j is not the truth; at -j 1 it is"
			cat "$T/cmp"
			fail "$data: the text is not the truth at the default -j nor at -j 1"
		fi
	fi
	for chunk in 1000 0; do
		for ws in 700 1500 4096; do
			# (with CYC timing, times depend on where windows end:
			# -j 1 with the same windows)
			conv "$T/ref" 1 "$data" PTCONV_CHUNK_RECORDS=$chunk PTCONV_WINDOW_BYTES=$ws
			for j in 2 7; do
				conv "$T/o" $j "$data" PTCONV_CHUNK_RECORDS=$chunk PTCONV_WINDOW_BYTES=$ws \
					PTCONV_AHEAD_DEPTH=1 PTCONV_AHEAD_WAIT=1 PTCONV_AHEAD_RECORDS_PER_NODE=1
				diff -r "$T/ref" "$T/o" > "$T/diff" ||
					{ head -20 "$T/diff"; fail "$data: -j $j, windows of $ws bytes, chunks of $chunk: other files than -j 1"; }
				e=$(sed -n 's/^ptconv: -j .*; \([0-9]*\) of them encoded ahead in part.*/\1/p' "$T/err")
				[ -n "$e" ] || { cat "$T/err"; fail "$data: -j $j: no line about windows encoded ahead"; }
				encoded=$((encoded + e))
			done
		done
	done
	[ "$encoded" -ge "$min" ] || fail "$data: $encoded windows encoded ahead in all, expected at least $min"
	echo "ok - $(basename "$data"): -j 1, 2 and 7, windows of 700 B to 4 KiB, chunks of 1000 and 2^20 records: the same files ($encoded windows encoded ahead)"
}

need_ptrace
trace_corpus c_recurse
trace_corpus c_threads
"$ENC" -o "$T/r.data" --buildid-dir "$T/bid" --psb-period 0 "$T/c_recurse.truth" || fail "ptgen-encode"
same "$T/r.data" "$T/c_recurse.truth" "--expect-gaps 0" 0
"$ENC" -o "$T/thm.data" --buildid-dir "$T/bid" --psb-period 0 --cpus 2 --migrate 1 --interrupt-every 500 \
	"$T/c_threads.truth" || fail "ptgen-encode --migrate"
same "$T/thm.data" "$T/c_threads.truth" "--expect-gaps 0" 0

# A program whose loops repeat (gzip, 4M instructions): the windows are
# encoded ahead, with returns compressed or not (those to frames older
# than the tap's go on the thread's stack in order), interrupts (an enable
# ends what the tap takes), and CYC timing.
command -v gzip >/dev/null || skip "gzip not installed"
head -c 300000 "$PTCONV" > "$T/in"
"$TRACE" --max-insns 4000000 -o "$T/g.truth" -- "$(command -v gzip)" -6 -c "$T/in" >/dev/null 2>"$T/g.err" ||
	fail "ptgen-trace gzip: $(tail -1 "$T/g.err")"
encode_three "$T/g.truth" g 3000
same "$T/g.data" "$T/g.truth" "--expect-gaps 0" 100
same "$T/gi.data" "$T/g.truth" "--expect-gaps 0" 100
same "$T/gc.data" "$T/g.truth" "--expect-gaps 0" 100

# a random walk of three threads on one CPU: new code everywhere, where
# encodings stop early
[ -x "$WALK" ] || skip "ptgen-walk not built"
"$WALK" --branches 400000 --threads 3 --seed 5 --escape 5000 --psb-period 0 -o "$T/w.data" "$(walk_binary)" \
	>/dev/null 2>&1 || fail "ptgen-walk"
same "$T/w.data" "" "" 0
exit 0
