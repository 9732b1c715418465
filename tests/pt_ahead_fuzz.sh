#!/bin/sh
# The differential fuzz target of windows decoded ahead (fuzz_pt_ahead.c)
# on its own seeds (inputs it once failed on: a PSB+ without a TSC, a decode
# error right after a TNT packet) and the
# PT decoder's, and cut and damaged copies of them
# (mutate_seeds): the replay hands the thread the same branches and gaps as
# decoding in place, and is used, not only refused.
. "${top_srcdir:-.}/tests/lib/common.sh"
F="$top_builddir/tests/fuzz/fuzz_pt_ahead"
[ -x "$F" ] || skip "fuzz_pt_ahead not built"
scratch
mkdir "$T/in" "$T/mut"
cp "$top_srcdir"/tests/fuzz/seeds/fuzz_pt_decoder/* "$top_srcdir"/tests/fuzz/seeds/fuzz_pt_ahead/* "$T/in/"
mutate_seeds "$T/in" "$T/mut" "17 100 300 1000" 4000 61 1
replay "$F" "$T/in" "$T/mut" > "$T/out" || exit 1
tail -2 "$T/out"
n=$(sed -n 's/^fuzz_pt_ahead: \([0-9]*\) windows replayed.*/\1/p' "$T/out")
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "no window was replayed"
exit 0
