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
	"$TRUTH_CHECK" --objdump "$T/$p.list" "$T/$p.truth" > "$T/$p.out" ||
		fail "$p: the ground truth disagrees with objdump"
	n=$(grep -c '^B ' "$T/$p.truth")
	grep -qx "listed $n" "$T/$p.out" || fail "$p: not all $n branches are in objdump's listing: $(cat "$T/$p.out")"
	echo "$p: $n branches checked against objdump"
done
# The programs' own code in dynamic programs too: non-PIE (c_recurse) and
# PIE (c_switch: the listing moves by the load bias, from the mapping of the
# executable segment in the truth and its address in the ELF file).
for p in c_recurse c_switch; do
	objdump_list "$CORPUS/$p" > "$T/$p.list"
	"$PTGEN_TRACE" -o "$T/$p.truth" -- "$CORPUS/$p" > /dev/null || fail "$p: ptgen-trace failed"
	start=$(awk -v p="$p" '$1 == "M" && $10 ~ ("/" p "$") { print $5; exit }' "$T/$p.truth")
	vaddr=$(readelf -lW "$CORPUS/$p" | awk '$1 == "LOAD" && / E / { print $3; exit }')
	[ -n "$start" ] && [ -n "$vaddr" ] || fail "$p: no executable mapping or segment"
	bias=$(printf '%x' $(( (start - vaddr) & ~0xfff )))
	"$TRUTH_CHECK" --objdump "$T/$p.list" --bias "$bias" "$T/$p.truth" > "$T/$p.out" ||
		fail "$p: the ground truth disagrees with objdump (load bias $bias)"
	n=$(awk '$1 == "listed" { print $2 }' "$T/$p.out")
	[ "${n:-0}" -gt 1000 ] || fail "$p: only ${n:-0} branches in its own code"
	echo "$p: $n branches in its own code checked against objdump (bias $bias)"
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
