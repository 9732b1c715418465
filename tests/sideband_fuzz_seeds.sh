#!/bin/sh
# Replay fuzz_tracing_data's committed seed (the tracing data of a real
# `perf record -e sched:sched_switch` on Linux 6.1) and cut and
# byte-flipped variants of it through the fuzz target: any crash or
# sanitizer report fails the test.
. "${top_srcdir:-.}/tests/lib/common.sh"
drv="$top_builddir/tests/fuzz/fuzz_tracing_data"
seeds="$top_srcdir/tests/fuzz/seeds/fuzz_tracing_data"
[ -x "$drv" ] || fail "$drv not built"
scratch
for f in "$seeds"/*; do
	b=$(basename "$f")
	size=$(wc -c < "$f")
	for cut in 1 9 10 14 16 20 40 100 1000 $((size / 2)) $((size - 1)); do
		[ "$cut" -lt "$size" ] && head -c "$cut" "$f" > "$T/$b.cut$cut"
	done
	# 0xff over the header, the size fields and into the formats
	off=10
	while [ "$off" -lt 400 ] && [ "$off" -lt "$size" ]; do
		{ head -c "$off" "$f"; printf '\377'; tail -c +$((off + 2)) "$f"; } > "$T/$b.ff$off"
		off=$((off + 5))
	done
done
out=$("$drv" "$seeds" "$T" 2>&1) || fail "replay failed: $out"
echo "$out" | grep -q '^[1-9][0-9]* inputs replayed' || fail "no inputs replayed: $out"
echo "$out"
