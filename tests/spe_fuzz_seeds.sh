#!/bin/sh
# Replay fuzz_spe_packet's committed seeds and the shared real SPE buffers
# through the fuzz target: any crash or sanitizer report fails the test.
. "${top_srcdir:-.}/tests/lib/common.sh"
drv="$top_builddir/tests/fuzz/fuzz_spe_packet"
[ -x "$drv" ] || fail "$drv not built"
out=$("$drv" "$top_srcdir/tests/fuzz/seeds/fuzz_spe_packet" 2>&1) || fail "seed replay failed: $out"
echo "$out" | grep -q '^[1-9][0-9]* inputs replayed' || fail "no seeds replayed: $out"
echo "$out"
if [ -d "$PTC_SHARED/data/arm_spe" ]; then
	out=$("$drv" "$PTC_SHARED/data/arm_spe" 2>&1) || fail "shared replay failed: $out"
	echo "$out"
else
	echo "shared data absent: only the committed seeds were replayed"
fi
