#!/bin/sh
# Build the libFuzzer targets with clang and run each for SECONDS (default 600)
# seeded from its seed folder and ../shared/data; prints libFuzzer's summary.
#   contrib/fuzz.sh [SECONDS] [TARGET...]
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-600}; [ $# -gt 0 ] && shift
b="$top/build-fuzz"
mkdir -p "$b"
[ -f "$b/Makefile" ] || (cd "$b" && CC=clang "$top/configure" -q --enable-fuzzing)
make -C "$b" -j2 fuzz >/dev/null
targets=${*:-$(cd "$b/tests/fuzz" && ls fuzz_* | grep -v '\.o$')}
for t in $targets; do
	work="$b/fuzz-work/$t"; mkdir -p "$work"
	seeds="$top/tests/fuzz/seeds/$t"
	echo "== $t for ${secs}s"
	LSAN_OPTIONS="suppressions=$top/tests/lsan.supp" \
	"$b/tests/fuzz/$t" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
		"$work" $( [ -d "$seeds" ] && echo "$seeds" ) 2>&1 | grep -E 'stat::|ERROR|SUMMARY|Done' || true
done
