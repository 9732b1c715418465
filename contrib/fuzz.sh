#!/bin/sh
# Build the libFuzzer targets with clang and run each for SECONDS (default 600)
# seeded from its seed folder and ../shared/data; prints libFuzzer's summary.
# Undefined behaviour stops the run as a crash would (UBSan only warns by
# default, and a warning in the middle of libFuzzer's output is easy to miss).
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
	UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
	"$b/tests/fuzz/$t" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
		"$work" $( [ -d "$seeds" ] && echo "$seeds" ) 2>&1 | grep -E 'stat::|ERROR|SUMMARY|runtime error|Done' || true
done
