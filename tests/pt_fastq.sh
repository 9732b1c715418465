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
rc=0
"$TEST" $streams || rc=$?
lib20=1
case $rc in
0) ;;
77) lib20=0; echo "lockstep skipped: the libipt loaded is not 2.0 (test_fastq)" ;;
*) fail "fastq and libipt's query decoder differ" ;;
esac
# Whole conversions: the walker with ptconv's query decoder and with
# libipt's alone (--engine=query) write the same files, byte for byte; the
# summary says fastq read every byte of a clean recording, none of one with
# cycle-accurate timing (CYC: libipt's), part of one with an overflow
# decoded in small windows (the window holding the OVF goes to libipt).
"$WALK" --branches 30000 --seed 9 --timing=tsc,mtc,cyc -o "$T/cyc.data" "$BIN" >/dev/null 2>&1 || fail "ptgen-walk cyc"
"$WALK" --branches 60000 --seed 9 --ovf-at 30000 --psb-period 0 -o "$T/ovf.data" "$BIN" >/dev/null 2>&1 ||
	fail "ptgen-walk ovf"
for d in w1 w3 w4 w6 prog prog2 cyc ovf; do
	for e in walker query; do
		w=; [ $d = ovf ] && w=4096
		PTCONV_WINDOW_BYTES=$w "$PTCONV" "$T/$d.data" -f ptconv,text,bt9 -o "$T/$d.$e" -q --engine=$e
		st=$?
		[ $st -le 1 ] || fail "$d: ptconv --engine=$e exited $st"
	done
	fast=$(sed -n 's/.*"fast_path_bytes": \([0-9]*\).*/\1/p' "$T/$d.walker/summary.json")
	all=$(sed -n 's/.*"trace_bytes": \([0-9]*\).*/\1/p' "$T/$d.walker/summary.json" | head -n 1)
	for e in walker query; do
		grep -v '"engine"\|"fast_path_bytes"' "$T/$d.$e/summary.json" > "$T/$d.$e.summary"
		rm "$T/$d.$e/summary.json"
	done
	if [ $lib20 = 0 ]; then
		# libipt 2.1 and later report offsets further ahead (their
		# event decoder reads on): the AUX offset of a stream start
		# (not a loss, gap cause 7) may differ; all else is the same
		for e in walker query; do
			for f in "$T/$d.$e"/trace.*.ptc; do
				"$PTCONV" dump "$f" 2>&1 | sed 's/\( gap cause 7 .*\) aux 0x[0-9a-f]* /\1 aux - /'
				rm "$f"
			done > "$T/$d.$e.dump"
		done
		cmp -s "$T/$d.walker.dump" "$T/$d.query.dump" || fail "$d: the walker's branches differ between fastq and libipt"
	fi
	diff -r "$T/$d.walker" "$T/$d.query" >/dev/null || fail "$d: the walker's files differ between fastq and libipt"
	cmp -s "$T/$d.walker.summary" "$T/$d.query.summary" || fail "$d: the summaries differ"
	case $d in
	cyc) [ "$fast" = 0 ] || fail "cyc: fastq read $fast bytes of a CYC recording" ;;
	ovf) [ "$fast" -gt 0 ] && [ "$fast" -lt "$all" ] || fail "ovf: fastq read $fast of $all bytes" ;;
	*) [ "$fast" = "$all" ] || fail "$d: fastq read $fast of $all bytes" ;;
	esac
	echo "ok - $d: same files with both query decoders (fastq read $fast of $all trace bytes)"
done
# the fuzz target's seeds, and cut and damaged copies of them and of two
# streams (mutate_seeds, tests/lib/common.sh): no crash, same answers
F="$top_builddir/tests/fuzz/fuzz_fastq"
if [ -x "$F" ]; then
	mkdir "$T/in" "$T/mut"
	cp "$top_srcdir"/tests/fuzz/seeds/fuzz_fastq/* "$T/in/"
	head -c 20000 "$T/w1.0.pt" > "$T/in/w1"
	head -c 20000 "$T/prog.0.pt" > "$T/in/prog"
	mutate_seeds "$T/in" "$T/mut" "17 300 1000 4097" 20000 97 3
	replay "$F" "$T/in" "$T/mut" | tail -1
fi
exit 0
