#!/bin/sh
# A recording cut anywhere (perf killed, a copy interrupted) never makes
# ptconv crash or misbehave: cut at 40 offsets over the whole file, the
# conversion exits 0, 1 (gaps) or 3 (unusable input, naming the file),
# and what it writes is whole.  In the sanitizer build (.ci/run runs the
# suite both ways) any undefined behaviour aborts the run and fails here
# (issue 18: qsort of an empty thread list, a null array).
# A cut inside the trace data keeps what is there (issue 19): once the
# recording's header, attributes and first trace bytes are in, every cut
# converts, the loss is a counted gap, and every run of branches between
# gaps is a run of the ground truth (pt_truth_compare.py).
. "${top_srcdir:-.}/tests/lib/common.sh"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
[ -x "$WALK" ] || skip "ptgen-walk not built"
BIN=$(walk_binary)
scratch
"$WALK" --branches 30000 --seed 5 --threads 2 --truth "$T/w.truth" -o "$T/w.data" "$BIN" 2>"$T/err" ||
	{ cat "$T/err"; fail "ptgen-walk"; }
CMP="python3 $top_srcdir/tests/pt_truth_compare.py"
size=$(wc -c < "$T/w.data")
n=0 refused=0 converted=0 inside=0
for k in $(seq 0 39); do
	# offsets packed near the start (the header, the attributes, the
	# first records), then spread over the rest
	if [ $k -lt 16 ]; then cut=$((k * k * 37 + 1)); else cut=$((size * (k - 15) / 25)); fi
	[ $cut -lt $size ] || continue
	head -c $cut "$T/w.data" > "$T/c.data"
	rm -rf "$T/o"
	"$PTCONV" "$T/c.data" -f ptconv,text -o "$T/o" -q >/dev/null 2>"$T/err"
	st=$?
	case $st in
	0 | 1) converted=$((converted + 1))
	   $CMP "$T/w.truth" "$T/o" > "$T/cmp" || { cat "$T/cmp"; fail "cut at $cut: a run between gaps is not the truth's"; }
	   if grep -q "ends inside the trace data" "$T/err"; then
		inside=$((inside + 1))
		cat "$T"/o/*.txt 2>/dev/null | grep -q " gap " ||
			fail "cut at $cut of $size bytes, inside the trace data: converted with no gap"
		python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["input_error"]' "$T/o/summary.json" ||
			fail "cut at $cut: summary.json has no input_error"
		rm -rf "$T/o"
		"$PTCONV" "$T/c.data" -o "$T/o" -q --strict 2>/dev/null
		[ $? = 1 ] || fail "cut at $cut: --strict did not fail on a damaged recording"
	   fi ;;
	3) grep -q "c.data" "$T/err" || fail "cut at $cut: refused without naming the file: $(cat "$T/err")"
	   refused=$((refused + 1)) ;;
	*) cat "$T/err" >&2; fail "cut at $cut of $size bytes: exit status $st" ;;
	esac
	if [ -d "$T/o" ]; then
		ls -A "$T/o" | grep -q '^\.' && fail "cut at $cut: temporaries left"
		for f in "$T"/o/*.ptc; do
			[ -e "$f" ] || continue
			"$PTCONV" info "$f" >/dev/null || fail "cut at $cut: $(basename "$f") does not read"
		done
	fi
	n=$((n + 1))
done
[ $n -ge 30 ] || fail "only $n cuts tried"
[ $converted -ge 24 ] || fail "only $converted of $n cuts converted"
[ $inside -ge 10 ] || fail "only $inside cuts inside the trace data converted"
echo "ok - $n cuts of a $size-byte recording: no crash, $refused refused naming the file, $converted converted ($inside inside the trace data: runs between gaps exact, the loss a gap)"
