#!/bin/sh
# Replay fuzz_perf_reader's seeds (committed, synthesised by
# tests/fuzz/gen_perf_seeds.py) and the shared real recordings through the
# fuzz target: any crash or sanitizer report fails the test.
. "${top_srcdir:-.}/tests/lib/common.sh"
drv="$top_builddir/tests/fuzz/fuzz_perf_reader"
[ -x "$drv" ] || fail "$drv not built"
out=$("$drv" "$top_srcdir/tests/fuzz/seeds/fuzz_perf_reader" 2>&1) || fail "seed replay failed: $out"
echo "$out" | grep -q '^[1-9][0-9]* inputs replayed' || fail "no seeds replayed: $out"
if [ -d "$PTC_SHARED/data" ]; then
	out=$("$drv" "$PTC_SHARED"/data/*/ 2>&1) || fail "shared replay failed: $out"
	echo "$out"
else
	echo "shared data absent: only the committed seeds were replayed"
fi
