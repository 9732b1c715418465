#!/bin/sh
# Replay the trace-reader fuzz target's seeds (valid and corrupt traces).
. "$top_srcdir/tests/lib/common.sh"
"$top_builddir/tests/fuzz/fuzz_ptc_trace" "$top_srcdir/tests/fuzz/seeds/fuzz_ptc_trace" || fail "fuzz_ptc_trace crashed on a seed"
