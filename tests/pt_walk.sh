#!/bin/sh
# Intel PT on synthetic executions (ptgen-walk: a seeded random walk over a
# real binary's code, several threads taking turns on the CPUs, system
# calls, asynchronous exits) against their ground truth, with both engines
# and several encodings.  Finds what the small real programs do not reach.
. "${top_srcdir:-.}/tests/lib/common.sh"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
CMP="python3 $top_srcdir/tests/pt_truth_compare.py"
[ -x "$WALK" ] || skip "ptgen-walk not built"
command -v python3 >/dev/null || skip "python3 not installed"
# a real binary with plenty of code (walk_binary, tests/lib/common.sh)
BIN=$(walk_binary)
scratch
n=0
for seed in 1 2; do
	for opts in "--threads 3" "--threads 2 --noretcomp --timing=tsc,mtc,cyc" "--threads 3 --per-thread" \
		    "--threads 2 --cpus 2 --long-tnt"; do
		"$WALK" --branches 50000 --seed $seed $opts --truth "$T/w.truth" -o "$T/w.data" "$BIN" 2>"$T/err" ||
			{ cat "$T/err"; fail "ptgen-walk $opts"; }
		for eng in walker libipt; do
			[ $eng = libipt ] && [ $seed != 1 ] && continue	# the slow engine once
			n=$((n + 1))
			rm -rf "$T/out"
			"$PTCONV" "$T/w.data" -f text -o "$T/out" -q --engine=$eng ||
				fail "ptconv exited $? ($eng, seed $seed, $opts)"
			$CMP "$T/w.truth" "$T/out" --expect-gaps 0 >"$T/cmp" ||
				{ cat "$T/cmp"; fail "$eng, seed $seed, $opts"; }
			echo "ok $n - $eng seed $seed $opts: $(grep -c reproduced "$T/cmp") threads exact"
		done
	done
done
# the walker decodes in windows that end at a PSB: with tiny windows every
# PSB is a window boundary, and the result must not change
"$WALK" --branches 50000 --seed 3 --threads 2 --psb-period 0 --truth "$T/w.truth" -o "$T/w.data" "$BIN" ||
	fail "ptgen-walk"
rm -rf "$T/out"
PTCONV_WINDOW_BYTES=3000 "$PTCONV" "$T/w.data" -f text -o "$T/out" -q || fail "ptconv with small windows"
$CMP "$T/w.truth" "$T/out" --expect-gaps 0 >"$T/cmp" || { cat "$T/cmp"; fail "small windows"; }
echo "ok - 3000-byte windows: $(grep -c reproduced "$T/cmp") threads exact"
exit 0
