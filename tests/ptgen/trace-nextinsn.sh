#!/bin/sh
# Unconditional branches to the next instruction (call +0, jmp +0) are
# taken: ptgen-trace must write them as taken branches of their own kind,
# in both engines.  The oracle is the instruction encoding objdump shows at
# each asm label: e8 00 00 00 00 (call rel32 0, kind 2) and eb 00 (jmp
# rel8 0, kind 0), whose target is the next instruction.
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
scratch
command -v objdump >/dev/null && command -v nm >/dev/null ||
	skip "objdump or nm not installed"
need_ptrace

cat > "$T/nextinsn.c" <<'PROG'
int main(void)
{
	for (int i = 0; i < 3; i++) {
		__asm__ volatile("ptg_call_next: call 1f\n1: pop %%rax\n"
				 ::: "rax", "memory");
		__asm__ volatile("ptg_jmp_next: jmp 1f\n1:\n" ::: "memory");
	}
	return 0;
}
PROG
${PTGEN_CC:-cc} -O1 -o "$T/nextinsn" "$T/nextinsn.c" ||
	fail "cannot compile the test program"
nm "$T/nextinsn" > "$T/nm" || fail "nm failed"
objdump -d --insn-width=16 "$T/nextinsn" > "$T/dis" || fail "objdump failed"
# The load bias of the PIE or non-PIE program, from the truth's mapping.
bias_of() {
	start=$(awk '$1 == "M" && $10 ~ /\/nextinsn$/ { print $5; exit }' "$1")
	vaddr=$(readelf -lW "$T/nextinsn" | awk '$1 == "LOAD" && / E / { print $3; exit }')
	[ -n "$start" ] && [ -n "$vaddr" ] || fail "no executable mapping in $1"
	echo $(( (start - vaddr) & ~0xfff ))
}

# check SYMBOL BYTES KIND LEN TRUTH
check() {
	link=$(awk -v s="$1" '$3 == s { print $1 }' "$T/nm")
	[ -n "$link" ] || fail "no symbol $1"
	bytes=$(awk -v a="$(echo "$link" | sed 's/^0*//')" -F '\t' '
		{ x = $1; sub(/^ */, "", x); sub(/:$/, "", x) }
		x == a { b = $2; sub(/ *$/, "", b); print b; exit }' "$T/dis")
	[ "$bytes" = "$2" ] || fail "$1 is encoded '$bytes', want '$2'"
	ip=$(printf '0x%x' $(( 0x$link + $(bias_of "$5") )))
	next=$(printf '0x%x' $(( ip + $4 )))
	lines=$(awk -v ip="$ip" '$1 == "B" && $4 == ip { print $5, $6, $7, $8 }' "$5")
	[ "$(echo "$lines" | wc -l)" = 3 ] ||
		fail "$5: $1 at $ip: want 3 B lines, got '$lines'"
	echo "$lines" | while read -r tgt kind taken len; do
		[ "$tgt $kind $taken $len" = "$next $3 1 $4" ] ||
			fail "$5: $1 at $ip: B line '$tgt $kind $taken $len', want '$next $3 1 $4'"
	done || exit 1
}

for engine in "" --int3 --single-step; do
	tr="$T/nextinsn${engine}.truth"
	"$PTGEN_TRACE" $engine -o "$tr" -- "$T/nextinsn" > /dev/null ||
		fail "ptgen-trace $engine failed"
	check ptg_call_next "e8 00 00 00 00" 2 5 "$tr"
	check ptg_jmp_next "eb 00" 0 2 "$tr"
	"$TRUTH_CHECK" "$tr" > /dev/null || fail "truth-check $engine failed"
	echo "ptgen-trace ${engine:-(breakpoints)}: call +0 and jmp +0 taken, 3 times each"
done
exit 0
