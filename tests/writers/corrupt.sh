#!/bin/sh
# The trace reader's hot loop on damaged chunk streams (corrupt_ptc.py):
# it must stop with the error of the damaged record, naming the file, the
# damaged chunk and its offset, which corrupt_ptc.py knows from the damage.
# ptconv convert of such a file to the other formats must stop the same
# way (exit 3, the same message), keeping the files of what it read.
. "$top_srcdir/tests/lib/common.sh"
command -v python3 >/dev/null || skip "python3 not installed"
command -v zstd >/dev/null || skip "zstd not installed"
scratch
B="$top_builddir/tests/writers"
S="$top_srcdir/tests/fuzz/seeds/fuzz_ptc_trace"
for seed in chunks-v2 chunks; do
	for damage in bits slots slot; do
		case $damage in
		bits) why="taken bits exhausted" ;;
		slots) why="target slots exhausted" ;;
		slot) why="record [0-9]*: slot 127 of [0-9]*" ;;
		esac
		at=$(python3 "$top_srcdir/tests/writers/corrupt_ptc.py" "$S/$seed.ptc" "$T/c.ptc" $damage) ||
			fail "corrupt_ptc.py $seed $damage"
		set -- $at
		"$B/bench_reader" "$T/c.ptc" >/dev/null 2>"$T/err" && fail "$seed $damage: read without an error"
		grep -q "c\.ptc: offset $2: chunk $1: $why\$" "$T/err" ||
			fail "$seed $damage: expected offset $2: chunk $1: $why, got: $(cat "$T/err")"
		rm -rf "$T/out"
		"$PTCONV" convert "$T/c.ptc" -f champsim,cbp2025,bt9,xtrace,ptconv --bbv 100 -o "$T/out" \
			2>"$T/err"
		st=$?
		[ $st -eq 3 ] || fail "$seed $damage: convert exited $st: $(cat "$T/err")"
		grep -q "c\.ptc: offset $2: chunk $1: $why\$" "$T/err" ||
			fail "$seed $damage: convert: expected offset $2: chunk $1: $why, got: $(cat "$T/err")"
		[ -s "$T"/out/trace.*.ptc ] || fail "$seed $damage: convert kept no .ptc"
	done
done
echo "ok - damaged taken bits and target slots stop the reader and ptconv convert at the damaged chunk"

# The header's instruction count against the records (issue 19): one that
# claims more than the records hold is found when the reading reaches the
# end; one below where the last chunk starts, or below its own tail, at
# once.  Either way exit 3 naming the disagreement, never a wrapped count.
for seed in chunks-v2 chunks; do
	for how in more fewer tail; do
		python3 - "$S/$seed.ptc" "$T/h.ptc" $how <<'PY' || fail "patching $seed's header"
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
insns, tail = struct.unpack_from('<QQ', b, 40)[0], struct.unpack_from('<Q', b, 56)[0]
if sys.argv[3] == 'more':
    struct.pack_into('<Q', b, 40, insns + 1000)
elif sys.argv[3] == 'fewer':
    struct.pack_into('<Q', b, 40, 0)
    struct.pack_into('<Q', b, 56, 0)
else:
    struct.pack_into('<Q', b, 56, insns + 1)
open(sys.argv[2], 'wb').write(b)
PY
		"$PTCONV" stats "$T/h.ptc" >"$T/out.txt" 2>"$T/err"
		st=$?
		[ $st -eq 3 ] || fail "$seed, header claiming $how instructions: stats exited $st"
		grep -q "h\.ptc: offset [0-9]*: .*\(disagree with the chunk index\|but the header says\)" "$T/err" ||
			fail "$seed, header claiming $how instructions: $(cat "$T/err")"
		grep -q 18446744073709551615 "$T/out.txt" "$T/err" && fail "$seed $how: a wrapped count printed"
	done
done
echo "ok - a header whose instruction count disagrees with the records is refused (stats exit 3, named)"
