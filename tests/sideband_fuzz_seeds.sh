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
mutate_seeds "$seeds" "$T" "1 9 10 14 16 20 40 100 1000" 400 5 10
replay "$drv" "$seeds" "$T"
