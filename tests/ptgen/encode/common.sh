# Shared setup of the ptgen-encode oracle tests (sourced after
# tests/lib/common.sh and `scratch`): builds the test programs, traces them
# with ptgen-trace, and defines the helpers.
ENC="$top_builddir/tests/ptgen/ptgen-encode"
TRACE="$top_builddir/tests/ptgen/ptgen-trace"
BLK="$top_builddir/tests/ptgen/ptblk"
CMP="$top_srcdir/tests/ptgen/encode/compare.py"
PROGS="$top_srcdir/tests/ptgen/encode/progs"
command -v python3 >/dev/null || skip "python3 not installed"
[ -x "$ENC" ] && [ -x "$TRACE" ] || fail "ptgen-encode or ptgen-trace not built"

# build_and_trace NAME [LIBS]: $T/NAME, its truth $T/NAME.truth.
# The program runs in a fixed environment: the dynamic loader and libc walk
# the environment, so with the caller's (make's MAKEFLAGS differ between a
# single test and a parallel `make check`, a user's variables differ) the
# execution, and so the branch where --ovf-at N injects a loss, would
# depend on where the test runs.
build_and_trace() {
	${PTGEN_CC:-cc} -O1 -o "$T/$1" "$PROGS/$1.c" ${2:-} || fail "cannot compile $1"
	env -i LC_ALL=C "$TRACE" --slice 3000 -o "$T/$1.truth" -- "$T/$1" \
		> "$T/$1.stdout" 2> "$T/$1.trace-err"
	case $? in
	0) ;;
	77) skip "ptgen-trace cannot trace here: $(head -1 "$T/$1.trace-err")" ;;
	*) cat "$T/$1.trace-err" >&2; fail "ptgen-trace $1 failed" ;;
	esac
}
