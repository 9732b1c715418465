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
	objdump_list "$CORPUS/$p" > "$T/$p.list"
	[ -s "$T/$p.list" ] || fail "$p: objdump listed nothing"
	"$PTGEN_TRACE" -o "$T/$p.truth" -- "$CORPUS/$p" > /dev/null || fail "$p: ptgen-trace failed"
	"$TRUTH_CHECK" --objdump "$T/$p.list" "$T/$p.truth" ||
		fail "$p: the ground truth disagrees with objdump"
	n=$(grep -c '^B ' "$T/$p.truth")
	echo "$p: $n branches checked against objdump"
done
exit 0
