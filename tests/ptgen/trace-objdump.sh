#!/bin/sh
# objdump as the oracle of the static programs: every branch ptgen-trace
# recorded in them is an instruction objdump lists, of the same class,
# length and direct target, and every block's instruction count is the
# number of instructions objdump lists from its start to its branch.
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
scratch
command -v objdump >/dev/null || skip "objdump not installed"
need_ptrace

for p in c_nolibc c_static; do
	objdump -d "$CORPUS/$p" > "$T/$p.dis"
	objdump_list "$CORPUS/$p" > "$T/$p.list"
	[ -s "$T/$p.list" ] || fail "$p: objdump listed nothing"
	"$PTGEN_TRACE" -o "$T/$p.truth" -- "$CORPUS/$p" > /dev/null || fail "$p: ptgen-trace failed"
	"$TRUTH_CHECK" --objdump "$T/$p.list" "$T/$p.truth" ||
		fail "$p: the ground truth disagrees with objdump"
	n=$(grep -c '^B ' "$T/$p.truth")
	echo "$p: $n branches checked against objdump"
done
# Conditional branches to their own fall-through: the direction comes from
# the flags (and rcx), as the CPU defines them for the instructions the
# program runs before each (see c_nolibc.c).
nm "$CORPUS/c_nolibc" > "$T/nm" || fail "nm failed"
addr() { awk -v s="$1" '$3 == s { sub(/^0+/, "", $1); print "0x" $1 }' "$T/nm"; }
dirs() { awk -v ip="$(addr "$1")" '$1 == "B" && $4 == ip { printf "%s", $7 }' "$T/c_nolibc.truth"; }
[ "$(dirs ptg_jz_taken)" = 1 ] || fail "jz to its fall-through with ZF=1: taken '$(dirs ptg_jz_taken)', want 1"
[ "$(dirs ptg_jz_not_taken)" = 0 ] || fail "jz to its fall-through with ZF=0: taken '$(dirs ptg_jz_not_taken)', want 0"
[ "$(dirs ptg_jrcxz)" = 1 ] || fail "jrcxz to its fall-through with rcx=0: taken '$(dirs ptg_jrcxz)', want 1"
[ "$(dirs ptg_loop)" = 10 ] || fail "loop to its fall-through, rcx 2 then 1: taken '$(dirs ptg_loop)', want 1 then 0"

# REP string instructions count once (objdump lists one instruction): the
# blocks around c_static's rep movsb and rep stosq were checked above; the
# engines agree on them in trace-robust.sh.
grep -q 'rep movsb' "$T/c_static.dis" || fail "c_static has no rep movsb"
exit 0
