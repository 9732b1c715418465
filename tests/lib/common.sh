# Shared helpers for the shell tests (sourced).  Tests exit 0 on success,
# 1 on failure and 77 when what they need (perf, ../shared) is absent.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
: "${PTC_SHARED:=$top_srcdir/../shared}"
PTCONV="$top_builddir/src/ptconv"

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
need_shared() { [ -d "$PTC_SHARED/data" ] || skip "shared data not found at $PTC_SHARED"; }
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
scratch() { T=$(mktemp -d "${TMPDIR:-/tmp}/ptconv-test.XXXXXX"); trap 'rm -rf "$T"' EXIT; }
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
	_trace="$top_builddir/tests/ptgen/ptgen-trace"
	_stepper="$top_builddir/tests/writers/stepper"
	_cc=${CC_FOR_TESTS:-cc}
	[ -x "$_trace" ] || skip "ptgen-trace not built"
	[ -x "$_stepper" ] || skip "tests/writers/stepper not built"
	command -v "$_cc" >/dev/null || skip "no C compiler to build the test programs"
	"$_cc" -O2 -static -o "$T/prog" "$top_srcdir/tests/writers/prog.c" 2>"$T/cc.err" ||
		skip "cannot build a static test program: $(cat "$T/cc.err")"
	"$_trace" -o "$T/prog.truth" -- "$T/prog" >/dev/null 2>"$T/trace.err" ||
		skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"
	# A second, independent single-stepper lists every executed
	# instruction; it must agree with ptgen-trace branch for branch.
	"$_stepper" -o "$T/step.truth" -i "$T/prog.ips" "$T/prog" >/dev/null || fail "stepper"
	agree_with_stepper "$T/prog.truth" "$T/step.truth"
	START=$(head -n 1 "$T/prog.ips")
}
