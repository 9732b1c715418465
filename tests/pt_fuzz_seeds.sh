#!/bin/sh
# Replays the PT decoder fuzz target's seeds (and any saved crashers): each
# must decode without crashing (under --enable-sanitizers, without any
# memory error either).
. "${top_srcdir:-.}/tests/lib/common.sh"
F="$top_builddir/tests/fuzz/fuzz_pt_decoder"
[ -x "$F" ] || skip "fuzz_pt_decoder not built"
"$F" "$top_srcdir/tests/fuzz/seeds/fuzz_pt_decoder" || fail "a seed crashed the decoder"
exit 0
