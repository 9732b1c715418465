#!/bin/sh
# Replay fuzz_image's committed seeds (a tiny static ELF, the same without
# section headers, raw hand-assembled code) and truncated and bit-flipped
# variants of them through the fuzz target: any crash or sanitizer report
# fails the test.
. "${top_srcdir:-.}/tests/lib/common.sh"
drv="$top_builddir/tests/fuzz/fuzz_image"
seeds="$top_srcdir/tests/fuzz/seeds/fuzz_image"
[ -x "$drv" ] || fail "$drv not built"
scratch
mutate_seeds "$seeds" "$T" "1 4 16 52 64 100 200" 256 7
replay "$drv" "$seeds" "$T"
