#!/bin/sh
# The walker's memo of TNT paths: the unit test (hand-read paths), the fuzz
# target on its seeds (decoded with the memo and one branch at a time, the
# memo used), and whole conversions of a real program's
# recording and random walks with --engine=walker (the memo) and
# --engine=steps (one branch at a time): the same files, byte for byte, for
# every format, at -j 1 and -j 2.  (pt_formats.sh and pt_truth.sh hold the
# default engine, the memo, to the truth.)
. "${top_srcdir:-.}/tests/lib/common.sh"
SEEDS="$top_srcdir/tests/fuzz/seeds/fuzz_pt_decoder"
"$top_builddir/tests/unit/test_tnt_path" || fail "test_tnt_path"
"$top_builddir/tests/fuzz/fuzz_tnt_path" "$SEEDS" "$top_srcdir/tests/fuzz/seeds/fuzz_tnt_path" ||
	fail "fuzz_tnt_path on the seeds"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
[ -x "$WALK" ] && [ -x "$ENC" ] || skip "ptgen-walk or ptgen-encode not built"
BIN=$(walk_binary)
scratch
prog_truth
"$ENC" -o "$T/prog.data" "$T/prog.truth" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "ptgen-encode"; }
"$ENC" -o "$T/progl.data" --long-tnt --interrupt-every 3000 "$T/prog.truth" >/dev/null 2>"$T/err" ||
	{ cat "$T/err"; fail "ptgen-encode --long-tnt"; }
"$WALK" --branches 40000 --seed 3 -o "$T/w.data" "$BIN" >/dev/null 2>&1 || fail "ptgen-walk"
"$WALK" --branches 40000 --seed 4 --long-tnt --threads 3 -o "$T/wl.data" "$BIN" >/dev/null 2>&1 ||
	fail "ptgen-walk --long-tnt"
for d in prog progl w wl; do
	for j in 1 2; do
		for e in walker steps; do
			PTCONV_WINDOW_BYTES=4096 "$PTCONV" "$T/$d.data" -f ptconv,text,bt9,champsim,cbp2025,xtrace,bbv \
				-o "$T/$d.$e.$j" -q -j $j --engine=$e
			st=$?
			[ $st -le 1 ] || fail "$d: ptconv --engine=$e -j $j exited $st"
			grep -v '"engine"' "$T/$d.$e.$j/summary.json" > "$T/$d.$e.$j.summary"
			rm "$T/$d.$e.$j/summary.json"
		done
		diff -r "$T/$d.walker.$j" "$T/$d.steps.$j" >/dev/null || fail "$d -j $j: the memo's files differ"
		cmp -s "$T/$d.walker.$j.summary" "$T/$d.steps.$j.summary" || fail "$d -j $j: the summaries differ"
	done
	diff -r "$T/$d.walker.1" "$T/$d.walker.2" >/dev/null || fail "$d: -j 1 and -j 2 differ"
	echo "ok - $d: the same files with and without the memo, at -j 1 and -j 2"
done
# A memo that fills up in the middle of the walk (the walker goes on one
# branch at a time from there): a bound of one chunk and a small table.
for d in progl wl; do
	for j in 1 2; do
		PTCONV_MEMO_BYTES=400000 PTCONV_WINDOW_BYTES=4096 "$PTCONV" "$T/$d.data" -f ptconv,text,bt9 \
			-o "$T/$d.full.$j" -q -j $j
		st=$?
		[ $st -le 1 ] || fail "$d: ptconv with a small memo -j $j exited $st"
		for f in "$T/$d.full.$j"/*; do
			case $f in */summary.json) continue ;; esac
			cmp -s "$f" "$T/$d.steps.$j/${f##*/}" || fail "$d -j $j: ${f##*/} differs when the memo fills up"
		done
	done
	echo "ok - $d: a memo that fills up mid-walk writes the same files"
done
exit 0
