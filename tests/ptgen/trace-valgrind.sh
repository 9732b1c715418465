#!/bin/sh
# valgrind as the oracle of instruction counts, for the no-libc program
# (no REP string instructions, which valgrind counts per iteration):
# - lackey's "guest instrs" equals the ground truth's instruction total
#   (sum of B and A insns) exactly;
# - callgrind's total Ir equals it minus the instructions of the block in
#   which the program exits: callgrind adds a block's cost when the block
#   completes, and the exit_group block never does (its last B line).
# The libc static program is reported, not compared: under valgrind glibc
# sees another CPU (CPUID: other string-function variants), another stack
# (auxv, environment), and REP iterations count one each.
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
scratch
[ -n "${VALGRIND:-}" ] && [ -x "$VALGRIND" ] || VALGRIND=$(command -v valgrind) || skip "valgrind not installed"
need_ptrace

ir() {
	"$VALGRIND" --tool=callgrind --callgrind-out-file="$T/cg.out" "$@" > /dev/null 2>"$T/vg.err" ||
		fail "valgrind failed: $(cat "$T/vg.err")"
	awk '$1 == "summary:" || $1 == "totals:" { print $2; exit }' "$T/cg.out"
}

lackey() {
	"$VALGRIND" --tool=lackey "$@" 2>&1 > /dev/null |
		awk '/guest instrs:/ { gsub(/,/, "", $NF); print $NF }'
}

p=c_nolibc
"$PTGEN_TRACE" -o "$T/$p.truth" -- "$CORPUS/$p" > /dev/null || fail "$p: ptgen-trace failed"
got=$("$TRUTH_CHECK" --stats "$T/$p.truth" | awk '$1 == "total" { print $2 }')
last=$(awk '$1 == "B" { n = $9 } END { print n }' "$T/$p.truth")
tail -n 3 "$T/$p.truth" | head -n 1 | grep -q '^B .* 6 1 2 ' || fail "$p: does not end with its exit_group"
lk=$(lackey "$CORPUS/$p")
cg=$(ir "$CORPUS/$p")
echo "$p: ground truth $got instructions; lackey $lk; callgrind Ir $cg + exit block $last"
[ "$got" = "$lk" ] || fail "$p: ground truth $got instructions, lackey $lk"
[ "$got" = $((cg + last)) ] || fail "$p: ground truth $got instructions, callgrind $cg + $last"

p=c_static
"$PTGEN_TRACE" -o "$T/$p.truth" -- "$CORPUS/$p" > /dev/null || fail "$p: ptgen-trace failed"
got=$("$TRUTH_CHECK" --stats "$T/$p.truth" | awk '$1 == "total" { print $2 }')
echo "$p (not compared): ground truth $got instructions; lackey $(lackey "$CORPUS/$p"); callgrind Ir $(ir "$CORPUS/$p")"
exit 0
