#!/bin/sh
# The corpus of real programs (tests/corpus, traced by ptgen-trace) through
# ptgen-encode: Linux perf lists exactly every thread's taken branches, with
# no decode error, in per-CPU mode (default timing and RET compression) and
# with no RET compression, cycle-accurate timing and two CPUs; libipt
# decodes each thread's stream (per-thread mode) to the same branches and
# the same instruction count.  Without perf only libipt is asked.
# (The second perf variant runs on the programs where it matters most, to
# keep the test short.)
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
scratch
need_ptrace
ENC="$top_builddir/tests/ptgen/ptgen-encode"
BLK="$top_builddir/tests/ptgen/ptblk"
CMP="$top_srcdir/tests/ptgen/encode/compare.py"
command -v python3 >/dev/null || skip "python3 not installed"
have_perf=1
[ -n "${PERF:-}" ] && [ -x "$PERF" ] || PERF=$(command -v perf) || have_perf=0

# perf_check PROGRAM OPTIONS: encode, decode with perf, compare.
perf_check() {
	# shellcheck disable=SC2086
	"$ENC" $2 --buildid-dir "$T/bid" -o "$T/x.data" "$T/$1.truth" ||
		fail "$1: ptgen-encode $2"
	"$PERF" --buildid-dir "$T/bid" script -i "$T/x.data" --itrace=be \
		-F tid,ip,addr,flags > "$T/x.out" 2> "$T/x.err" ||
		fail "$1: perf script failed: $(cat "$T/x.err")"
	python3 "$CMP" "$T/$1.truth" "$T/x.out" > "$T/x.cmp" ||
		{ cat "$T/x.cmp" >&2; fail "$1 $2: perf disagrees with the truth"; }
	echo "$1 $2: perf: $(tr '\n' ' ' < "$T/x.cmp")"
}

for p in c_nolibc c_static c_recurse c_switch c_setjmp c_signal c_vdso \
	 c_threads c_forkexec c_mainexit c_spawn; do
	# (trace-corpus.sh checks the programs' exit status and output.)
	trace_corpus "$p"
	variants=""
	case $p in
	c_recurse|c_setjmp|c_signal|c_threads)
		variants="--noretcomp --timing=tsc,mtc,cyc --cpus 2" ;;
	esac
	if [ $have_perf = 1 ]; then
		perf_check "$p" ""
		[ -z "$variants" ] || perf_check "$p" "$variants"
	fi
	"$ENC" --per-thread --aux-dump "$T/q" -o "$T/x.data" "$T/$p.truth" ||
		fail "$p: ptgen-encode --per-thread"
	while read -r queue cpu pid tid; do
		"$BLK" "$T/$p.truth" "$pid" "$T/q.$queue.pt" > "$T/b.out" ||
			fail "$p: ptblk failed on thread $tid"
		python3 "$CMP" --format ptblk --tid "$tid" --insns "$T/$p.truth" \
			"$T/b.out" > "$T/b.cmp" ||
			{ cat "$T/b.cmp" >&2; fail "$p: libipt disagrees with the truth (thread $tid)"; }
		echo "$p thread $tid: libipt: $(tr '\n' ' ' < "$T/b.cmp")"
	done < "$T/q.index"
done
[ $have_perf = 1 ] || echo "perf not found: only libipt was asked"
exit 0
