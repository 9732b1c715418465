#!/bin/sh
# Replay fuzz_tracing_data's committed seeds (the tracing data of a real
# `perf record -e sched:sched_switch` on Linux 6.1, and two inputs that
# fuzz_tracing_data found: one on which libtraceevent's format parser
# dereferences NULL, which ptconv now meets in a child process, and one on
# which it leaks) and cut and byte-flipped variants of them through the
# fuzz target: any crash or sanitizer report of ptconv's fails the test.
. "${top_srcdir:-.}/tests/lib/common.sh"
drv="$top_builddir/tests/fuzz/fuzz_tracing_data"
seeds="$top_srcdir/tests/fuzz/seeds/fuzz_tracing_data"
[ -x "$drv" ] || fail "$drv not built"
scratch
mutate_seeds "$seeds" "$T" "1 9 10 14 16 20 40 100 1000" 400 5 10
replay "$drv" "$seeds" "$T"
