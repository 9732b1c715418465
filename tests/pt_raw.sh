#!/bin/sh
# Raw PT input (`--pt FILE --image PATH:ADDR`): the fuzz seeds, hand-made
# streams for a small fixed piece of code (tests/fuzz/fuzz_pt_decoder.c),
# give the same branches with the walker and with libipt's block decoder,
# and the counted loop runs exactly the 5 iterations its code says.
. "${top_srcdir:-.}/tests/lib/common.sh"
scratch
S="$top_srcdir/tests/fuzz/seeds/fuzz_pt_decoder"
# the code of the fuzz target: xor eax,eax; 1: inc eax; cmp eax,5; jne 1b;
# call f; jmp rbx; syscall; jmp start; nop x4; f: nop; ret
printf '\061\300\377\300\203\370\005\165\371\350\012\000\000\000\377\343\017\005\353\354\220\220\220\220\220\303' >"$T/code.bin"
for s in loop_retcomp loop_noretcomp interrupt; do
	for e in walker libipt; do
		rm -rf "$T/$e"
		"$PTCONV" --pt "$S/$s" --image "$T/code.bin:0x400000" -f text -o "$T/$e" -q --engine=$e ||
			fail "--pt $s --engine=$e exited $?"
	done
	cmp "$T/walker/raw.txt" "$T/libipt/raw.txt" || fail "$s: the engines disagree"
	! grep -q " gap " "$T/walker/raw.txt" || fail "$s: unexpected gap"
	# every round of the loop: 4 taken jne then one not taken
	taken=$(grep -c "0x400007 0x400002 cond 1" "$T/walker/raw.txt")
	nt=$(grep -c "0x400007 0x400002 cond 0" "$T/walker/raw.txt")
	[ "$taken" -eq $((4 * nt)) ] && [ "$nt" -ge 1 ] || fail "$s: $taken taken, $nt not taken"
	echo "ok - $s: $(grep -vc '^#' "$T/walker/raw.txt") branches, engines agree"
done
# a stream with an overflow: a gap of cause overflow resuming at 0x400002
"$PTCONV" --pt "$S/overflow" --image "$T/code.bin:0x400000" -f text -o "$T/ovf" -q
grep -q "gap overflow .*resume-ip=0x400002" "$T/ovf/raw.txt" || fail "overflow gap: $(cat "$T/ovf/raw.txt")"
exit 0
