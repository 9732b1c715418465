#!/bin/sh
# ptconv's query decoder against libipt's on real executions' streams: a
# real program traced by ptgen-trace and encoded by ptgen-encode, and random
# walks over a real binary (ptgen-walk) in several encodings.  Each raw AUX
# stream, its pieces between PSBs and mutants of it must get libipt's
# answers to every query (tests/unit/test_fastq.c).
. "${top_srcdir:-.}/tests/lib/common.sh"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
TEST="$top_builddir/tests/unit/test_fastq"
[ -x "$WALK" ] && [ -x "$ENC" ] && [ -x "$TEST" ] || skip "ptgen-walk, ptgen-encode or test_fastq not built"
BIN=$(walk_binary)
scratch
streams=
n=0
for opts in "" "--long-tnt" "--noretcomp --psb-period 0" "--threads 3 --interrupt-every 5000" \
	    "--long-tnt --mtc-period 0" "--timing=tsc" "--timing=none"; do
	n=$((n + 1))
	"$WALK" --branches 30000 --seed $n $opts -o "$T/w$n.data" --aux-dump "$T/w$n" "$BIN" >/dev/null 2>"$T/err" ||
		{ cat "$T/err"; fail "ptgen-walk $opts"; }
	streams="$streams $T/w$n.0.pt"
done
# a real program's execution (tests/writers/prog.c under ptgen-trace)
prog_truth
"$ENC" -o "$T/prog.data" --aux-dump "$T/prog" "$T/prog.truth" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "ptgen-encode"; }
"$ENC" -o "$T/prog2.data" --long-tnt --interrupt-every 3000 --aux-dump "$T/prog2" "$T/prog.truth" >/dev/null 2>"$T/err" ||
	{ cat "$T/err"; fail "ptgen-encode --long-tnt"; }
streams="$streams $T/prog.0.pt $T/prog2.0.pt"
"$TEST" $streams || fail "fastq and libipt's query decoder differ"
exit 0
