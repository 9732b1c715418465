#!/bin/sh
# Intel PT end to end for threads and processes: pt_threads (two threads,
# then fork + exec of /bin/true) is single-stepped, encoded and converted;
# every thread's trace must equal its ground truth (pt_truth_compare.py),
# with both engines.  The cbpexp file of each thread is then read by an
# independent reader (cbpexp_read.py: zstd + objdump on the embedded
# images) whose instruction counts must equal the truth.
. "${top_srcdir:-.}/tests/lib/common.sh"
TRACE="$top_builddir/tests/ptgen/ptgen-trace"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
CMP="python3 $top_srcdir/tests/pt_truth_compare.py"
[ -x "$TRACE" ] && [ -x "$ENC" ] || skip "ptgen-trace/ptgen-encode not built"
command -v python3 >/dev/null || skip "python3 not installed"
command -v zstd >/dev/null && command -v objdump >/dev/null && command -v readelf >/dev/null ||
	skip "zstd, objdump or readelf missing"
CC_=${CC_FOR_TESTS:-cc}
command -v "$CC_" >/dev/null || skip "no C compiler to build the test program"
scratch
# plain build: the traced program must not carry the sanitizers
"$CC_" -O1 -pthread -o "$T/pt_threads" "$top_srcdir/tests/ptprog/pt_threads.c" ||
	skip "cannot build the test program"
"$TRACE" -o "$T/thr.truth" -- "$T/pt_threads" /bin/true 2>"$T/trace.err" ||
	skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"
threads=$(awk '$1 == "T" { print $4 }' "$T/thr.truth" | sort -u | wc -l)
[ "$threads" -ge 4 ] || fail "the truth has $threads threads, want 4"

for opts in "--per-thread" "--per-thread --noretcomp" "--per-thread --timing=none" "" "--cpus 2"; do
	for eng in walker libipt; do
		rm -rf "$T/out" "$T/t.data"
		if ! "$ENC" -o "$T/t.data" --buildid-dir "$T/bid" $opts "$T/thr.truth" 2>"$T/enc.err"; then
			# the encoder's own limitation, not ptconv's: say so
			echo "note: ptgen-encode $opts failed: $(tail -1 "$T/enc.err")"
			continue
		fi
		"$PTCONV" "$T/t.data" -f text,cbpexp -o "$T/out" --buildid-dir "$T/bid" -q --engine=$eng ||
			fail "ptconv exited $? ($eng, $opts)"
		$CMP "$T/thr.truth" "$T/out" --expect-gaps 0 >"$T/cmp" || { cat "$T/cmp"; fail "$eng, $opts"; }
		files=$(ls "$T/out"/*.txt | wc -l)
		[ "$files" -eq "$threads" ] || fail "$files traces for $threads threads"
		echo "ok - $eng $opts: $(grep -c reproduced "$T/cmp") threads exact"
	done
done
# -j: per-thread queues decode in parallel; the output must not change
"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" --per-thread "$T/thr.truth" || fail "ptgen-encode"
rm -rf "$T/j1" "$T/j4"
"$PTCONV" "$T/t.data" -f text,cbpexp -o "$T/j1" --buildid-dir "$T/bid" -q -j 1 || fail "-j 1"
"$PTCONV" "$T/t.data" -f text,cbpexp -o "$T/j4" --buildid-dir "$T/bid" -q -j 4 || fail "-j 4"
diff -r "$T/j1" "$T/j4" >/dev/null || fail "-j 4 output differs from -j 1"
echo "ok - -j 4 output identical to -j 1"
# ptconv's own heap settings (ptconv(1) MEMORY: one arena, memory kept,
# huge pages) are off when GLIBC_TUNABLES names a malloc tunable; the
# output must not depend on them
GLIBC_TUNABLES=glibc.malloc.arena_max=8 "$PTCONV" "$T/t.data" -f text,cbpexp -o "$T/jt" --buildid-dir "$T/bid" -q -j 4 ||
	fail "-j 4, the heap as glibc sets it"
diff -r "$T/j1" "$T/jt" >/dev/null || fail "-j 4 with the heap as glibc sets it differs from -j 1"
echo "ok - -j 4 with the heap as glibc sets it (GLIBC_TUNABLES): identical to -j 1"

# the independent cbpexp reader
rm -rf "$T/out"
"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" --per-thread "$T/thr.truth" || fail "ptgen-encode"
"$PTCONV" "$T/t.data" -f cbpexp -o "$T/out" --buildid-dir "$T/bid" -q || fail "ptconv -f cbpexp"
for f in "$T/out"/*.cbpexp; do
	tid=$(basename "$f" .cbpexp)
	tid=${tid#*-}
	python3 "$top_srcdir/tests/cbpexp_read.py" "$f" --truth "$T/thr.truth" --tid "$tid" >"$T/rd" ||
		{ cat "$T/rd"; fail "cbpexp reader disagrees for thread $tid"; }
	echo "ok - cbpexp $tid: $(tail -1 "$T/rd")"
done
grep -q "\[vdso\]" "$T/rd" || grep -l "vdso" "$T/out"/*.cbpexp >/dev/null || fail "the vDSO is not embedded"
exit 0
