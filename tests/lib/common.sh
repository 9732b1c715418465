# Shared helpers for the shell tests (sourced).  Tests exit 0 on success,
# 1 on failure and 77 when what they need (perf, ../shared) is absent.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
: "${PTC_SHARED:=$top_srcdir/../shared}"
PTCONV="$top_builddir/src/ptconv"
# The branch-table cache (ptconv-convert(1), --table-cache) of the whole
# suite, in the build tree rather than the user's home: conversions of
# binaries that an earlier test converted read their tables from it.
export XDG_CACHE_HOME="$top_builddir/tests/table-cache.tmp"
# In the sanitizer build a finding ends the program with status 86, which
# no test takes for one of ptconv's own statuses (both would exit 1).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1:exitcode=86"
# (leaks inside third-party libraries: tests/lsan.supp)
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$top_srcdir/tests/lsan.supp"

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
need_shared() { [ -d "$PTC_SHARED/data" ] || skip "shared data not found at $PTC_SHARED"; }
# The ground-truth tracer and encoder as $TRACE and $ENC, or skip.
need_ptgen() {
	TRACE="$top_builddir/tests/ptgen/ptgen-trace"
	ENC="$top_builddir/tests/ptgen/ptgen-encode"
	[ -x "$TRACE" ] && [ -x "$ENC" ] || skip "ptgen-trace/ptgen-encode not built"
}
need_perf() { [ -n "${PERF:-}" ] && [ -x "$PERF" ] || PERF=$(command -v perf) || skip "Linux perf not installed"; }
# A scratch directory removed when the test ends.
# A real ELF binary with plenty of code for ptgen-walk to walk: the python
# interpreter or perl if there is one, else ptconv itself.
walk_binary() {
	for b in /usr/bin/python3 /usr/bin/perl; do
		b=$(readlink -f "$b" 2>/dev/null) || continue
		[ "$(head -c 4 "$b" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] && { echo "$b"; return; }
	done
	echo "$PTCONV"
}
scratch() { T=$(mktemp -d "${TMPDIR:-/tmp}/ptconv-test.XXXXXX") && T=$(cd "$T" && pwd); trap 'rm -rf "$T"' EXIT; }
# need_walk: $WALK (ptgen-walk; skips when not built), $BIN (walk_binary)
# and the scratch directory $T.
need_walk() {
	WALK="$top_builddir/tests/ptgen/ptgen-walk"
	[ -x "$WALK" ] || skip "ptgen-walk not built"
	BIN=$(walk_binary)
	scratch
}
# walk_gen NAME OPTIONS...: ptgen-walk's recording of $BIN made with
# OPTIONS, $T/NAME.data, and its ground truth $T/NAME.truth (need_walk first).
walk_gen() {
	name=$1
	shift
	"$WALK" "$@" --truth "$T/$name.truth" -o "$T/$name.data" "$BIN" 2>"$T/err" ||
		{ cat "$T/err"; fail "ptgen-walk $*"; }
}
# mutate_seeds SEEDDIR OUTDIR "CUTS" END STEP [START]: for every seed, its
# prefixes of CUTS bytes (plus half and all but one byte) and copies with
# one byte set to 0xff at offsets START (default 0), START+STEP... below
# END: the hostile inputs a
# fuzz target's replay test feeds it besides the seeds.
mutate_seeds() {
	for f in "$1"/*; do
		b=$(basename "$f")
		size=$(wc -c < "$f")
		for cut in $3 $((size / 2)) $((size - 1)); do
			[ "$cut" -lt "$size" ] && head -c "$cut" "$f" > "$2/$b.cut$cut"
		done
		off=${6:-0}
		while [ "$off" -lt "$4" ] && [ "$off" -lt "$size" ]; do
			{ head -c "$off" "$f"; printf '\377'; tail -c +$((off + 2)) "$f"; } > "$2/$b.ff$off"
			off=$((off + $5))
		done
	done
}
# replay DRIVER DIR...: run a fuzz target over inputs; any crash fails.
replay() {
	out=$("$@" 2>&1) || fail "replay failed: $out"
	echo "$out" | grep -q '^[1-9][0-9]* inputs replayed' || fail "no inputs replayed: $out"
	echo "$out"
}
# agree_with_stepper TRUTH STEP_TRUTH: the branches of ptgen-trace's TRUTH
# must equal those of the independent stepper's STEP_TRUTH (both run the
# program with ASLR off: its path depends on stack addresses).
agree_with_stepper() {
	grep '^B ' "$1" | cut -d' ' -f4- > "$1.b"
	grep '^B ' "$2" | cut -d' ' -f4- > "$2.b"
	[ -s "$1.b" ] || fail "no branches in the ground truth"
	cmp -s "$1.b" "$2.b" || { diff "$1.b" "$2.b" | head -4 >&2; fail "ptgen-trace and the stepper disagree"; }
}
# prog_truth: the ground truth of tests/writers/prog.c, built static (no
# sanitizers) into $T/prog: $T/prog.truth by ptgen-trace, checked against
# the stepper, whose instruction list is $T/prog.ips; START is its first
# instruction.  Skips where the tools cannot run.
prog_truth() {
	# 1500 loops instead of 300 make up for the start-up's shorter scan
	# of the empty environment (static_truth)
	static_truth "$top_srcdir/tests/writers/prog.c" prog "-O2" 1500
	START=$(head -n 1 "$T/prog.ips")
}

# static_truth SRC NAME CFLAGS ARG: SRC built static with CFLAGS into
# $T/NAME, run with ARG: $T/NAME.truth by ptgen-trace, checked against the
# stepper, whose instruction list is $T/NAME.ips.  Skips where the tools
# cannot run.
static_truth() {
	_trace="$top_builddir/tests/ptgen/ptgen-trace"
	_stepper="$top_builddir/tests/writers/stepper"
	_cc=${CC_FOR_TESTS:-cc}
	[ -x "$_trace" ] || skip "ptgen-trace not built"
	[ -x "$_stepper" ] || skip "tests/writers/stepper not built"
	command -v "$_cc" >/dev/null || skip "no C compiler to build the test programs"
	"$_cc" $3 -static -o "$T/$2" "$1" 2>"$T/cc.err" ||
		skip "cannot build a static test program: $(cat "$T/cc.err")"
	# Both tracers run it as ./NAME in $T with an empty environment, the
	# same bytes above its stack: its branches depend on them.  libc's
	# start-up scans the environment once per variable it looks up, and
	# its strrchr of argv[0] takes other paths as the string's alignment
	# moves (the shell's "_", which names each tracer, moved it between
	# the two).  The path of $T still counts (the start-up copies
	# readlink("/proc/self/exe")), so the tests take positions in the
	# stream from the truth, not as constants.
	_trace=$(cd "${_trace%/*}" && pwd)/ptgen-trace
	_stepper=$(cd "${_stepper%/*}" && pwd)/stepper
	(cd "$T" && env -i "$_trace" -o "$T/$2.truth" -- "./$2" $4 >/dev/null 2>trace.err) ||
		skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"
	# A second, independent single-stepper lists every executed
	# instruction; it must agree with ptgen-trace branch for branch.
	(cd "$T" && env -i "$_stepper" -o "$T/step.truth" -i "$T/$2.ips" "./$2" $4 >/dev/null) || fail "stepper"
	agree_with_stepper "$T/$2.truth" "$T/step.truth"
}

# record NAME PROGRAM: PROGRAM run under ptgen-trace into $T/NAME.truth,
# encoded into $T/NAME.data (build-ids cached in $T/bid); needs need_ptgen
# and scratch.
record() {
	"$TRACE" -o "$T/$1.truth" -- "$2" >/dev/null 2>"$T/$1.err"
	grep -q '^X ' "$T/$1.truth" || fail "$1: ptgen-trace failed: $(tail -3 "$T/$1.err")"
	"$ENC" -o "$T/$1.data" --buildid-dir "$T/bid" "$T/$1.truth" || fail "$1: ptgen-encode"
}

# encode_three TRUTH NAME N: TRUTH encoded three ways (a PSB every 4 KiB):
# $T/NAME.data as it is, $T/NAMEi.data without RET compression and with an
# interrupt every N instructions, $T/NAMEc.data with long TNT packets and
# CYC timing; needs need_ptgen and scratch.
encode_three() {
	"$ENC" -o "$T/$2.data" --buildid-dir "$T/bid" --psb-period 0 "$1" || fail "ptgen-encode $2"
	"$ENC" -o "$T/${2}i.data" --buildid-dir "$T/bid" --psb-period 0 --noretcomp --interrupt-every "$3" "$1" ||
		fail "ptgen-encode $2, interrupts"
	"$ENC" -o "$T/${2}c.data" --buildid-dir "$T/bid" --psb-period 0 --long-tnt --timing=tsc,mtc,cyc "$1" ||
		fail "ptgen-encode $2, CYC"
}

# conv NAME FORMAT [ptconv options]: $T/NAME.data converted into $T/NAME.out.
conv() {
	_n=$1 _f=$2
	shift 2
	rm -rf "$T/$_n.out"
	"$PTCONV" "$T/$_n.data" -f "$_f" -o "$T/$_n.out" --buildid-dir "$T/bid" -q "$@" ||
		fail "$_n: ptconv -f $_f $* exited $?"
}

# from_ptc NAME FORMAT: $T/NAME.data converted to -f ptconv alone, and its
# .ptc traces (all threads at once) to FORMAT: every file equals the one
# the recording gave directly in $T/NAME.out (checked against the truth by
# the caller), and there are no others.
from_ptc() {
	rm -rf "$T/$1.ptc" "$T/$1.re"
	"$PTCONV" "$T/$1.data" -f ptconv -o "$T/$1.ptc" --buildid-dir "$T/bid" -q
	[ $? -le 1 ] || fail "$1: ptconv -f ptconv exited $?"
	"$PTCONV" convert "$T/$1.ptc"/trace.*.ptc -f "$2" -o "$T/$1.re" -q || fail "$1: .ptc -f $2 exited $?"
	_n=0
	for _f in "$T/$1.out"/*; do
		case ${_f##*/} in summary.json | *.ptc) continue ;; esac
		cmp "$_f" "$T/$1.re/${_f##*/}" || fail "$1: ${_f##*/} from the .ptc traces differs"
		_n=$((_n + 1))
	done
	[ "$_n" -gt 0 ] && [ "$(ls "$T/$1.re" | wc -l)" = "$_n" ] || fail "$1: other files from the .ptc traces"
	echo "ok - $1: -f $2 from the .ptc traces: the same $_n files"
}

# inside_recursion FORMAT WHAT: the cases of a function-level format
# (xray, perfetto) deep inside c_recurse's recursion ($T/c_recurse.truth),
# checked by the test's own "check NAME [checker options]", whose summary
# ($T/cmp) counts "N returns without a WHAT": a trace that starts at the
# 150th call of its most called function (tests/writers/cut_truth.py:
# returns without calls), and an overflow at the same call (the frames
# open there closed at the loss, the returns after it closing nothing).
inside_recursion() {
	at=$(python3 "$top_srcdir/tests/writers/cut_truth.py" "$T/c_recurse.truth" "$T/cut.truth") ||
		fail "cutting the truth"
	"$ENC" -o "$T/cut.data" --buildid-dir "$T/bid" "$T/cut.truth" || fail "ptgen-encode of the cut truth"
	conv cut "$1"
	check cut
	grep -q " [1-9][0-9][0-9] returns without a $2" "$T/cmp" || fail "cut: no returns without calls"
	from_ptc cut "$1"
	"$ENC" -o "$T/c_recurse.data" --buildid-dir "$T/bid" --gaps "$T/gaps" --ovf-at "$at:40" \
		"$T/c_recurse.truth" || fail "ptgen-encode --ovf-at"
	conv c_recurse "$1"
	check c_recurse --gaps "$T/gaps"
	grep -q " [1-9][0-9][0-9] returns without a $2" "$T/cmp" || fail "overflow: no returns left without a $2"
	from_ptc c_recurse "$1"
}

# same_bytes FORMAT PREFIX: c_threads ($T/c_threads.truth) encoded per
# thread and per CPU and converted to FORMAT with -j 1, -j 2 and one open
# output for its three threads (their outputs closed and reopened: on one
# CPU they take turns): every PREFIX* file of -j 1 the same bytes in the
# others.
same_bytes() {
	for _v in --per-thread ""; do
		# shellcheck disable=SC2086
		"$ENC" -o "$T/c_threads.data" --buildid-dir "$T/bid" $_v "$T/c_threads.truth" ||
			fail "ptgen-encode $_v"
		conv c_threads "$1" -j 1
		mv "$T/c_threads.out" "$T/ref"
		for _o in "-j 2" "-j 2 --max-open-outputs 1"; do
			# shellcheck disable=SC2086
			conv c_threads "$1" $_o
			for _f in "$T/ref/$2"*; do
				cmp "$_f" "$T/c_threads.out/${_f##*/}" || fail "c_threads $_v $_o: ${_f##*/} differs from -j 1"
			done
		done
		_s=$(sed -n 's/.*"output_suspensions": *\([0-9]*\).*/\1/p' "$T/c_threads.out/summary.json")
		[ -n "$_v" ] || [ "$_s" -gt 0 ] || fail "c_threads on one CPU: no output suspended"
		rm -rf "$T/ref"
		echo "ok - c_threads $_v: the same $1 files with -j 1, -j 2, one open output ($_s suspensions)"
	done
}

# count_ending_in_block START COUNT: the least length >= COUNT whose slice
# [START, START+length) of $T/prog.ips does not end on a branch (by the
# truth $T/prog.truth), so that the slice has instructions after its last
# branch.  Where the program's branches fall depends on the path of $T and
# on the machine's libc and CPU (which string functions it picks), so a
# fixed length cannot promise that.
count_ending_in_block() {
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import truth
ips = truth.load_ips(sys.argv[3])
branch_ips = {b.ip for b in truth.load(sys.argv[2])[0]}
start, n = int(sys.argv[4]), int(sys.argv[5])
while ips[start + n - 1] in branch_ips:
    n += 1
print(n)' "$top_srcdir/tests/writers" "$T/prog.truth" "$T/prog.ips" "$1" "$2"
}
