#!/bin/sh
# Replay fuzz_image's committed seeds (a tiny static ELF, the same without
# section headers, raw hand-assembled code) and truncated and bit-flipped
# variants of them through the fuzz target: any crash or sanitizer report
# fails the test.
. "${top_srcdir:-.}/tests/lib/common.sh"
drv="$top_builddir/tests/fuzz/fuzz_image"
seeds="$top_srcdir/tests/fuzz/seeds/fuzz_image"
[ -x "$drv" ] || fail "$drv not built"
scratch
for f in "$seeds"/*; do
	b=$(basename "$f")
	size=$(wc -c < "$f")
	for cut in 1 4 16 52 64 100 200 $((size / 2)) $((size - 1)); do
		[ "$cut" -lt "$size" ] && head -c "$cut" "$f" > "$T/$b.cut$cut"
	done
	# Flip every 7th byte of the headers region to 0xff, one at a time.
	off=0
	while [ "$off" -lt 256 ] && [ "$off" -lt "$size" ]; do
		{ head -c "$off" "$f"; printf '\377'; tail -c +$((off + 2)) "$f"; } > "$T/$b.ff$off"
		off=$((off + 7))
	done
done
out=$("$drv" "$seeds" "$T" 2>&1) || fail "replay failed: $out"
echo "$out" | grep -q '^[1-9][0-9]* inputs replayed' || fail "no inputs replayed: $out"
echo "$out"
