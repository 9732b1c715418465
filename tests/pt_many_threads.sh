#!/bin/sh
# Many threads, one after another (issue 3: memory and open files bounded
# by the threads alive at once, not by all the threads of the recording).
# seq_threads creates 150 threads in turn, each joined before the next;
# its real execution (ptgen-trace) is encoded per CPU (1 and 2 CPUs) and
# per thread, and converted to ptconv's format and text with at most 40
# open files: a thread's outputs must be finished and closed once the
# decoding is past its exit (per CPU) or its queue is done (per thread).
# Before, every thread kept its files open to the end, and the conversion
# failed with "Too many open files".  Every thread's trace must still
# equal its ground truth (pt_truth_compare.py) and every .ptc be complete;
# and peak memory must not grow by more than 40 KB per thread (issue 19).
. "${top_srcdir:-.}/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
need_encoder
CC_=${CC_FOR_TESTS:-cc}
command -v "$CC_" >/dev/null || skip "no C compiler to build the test program"
N=150

"$CC_" -O2 -static -pthread -o "$T/seq" "$top_srcdir/tests/ptprog/seq_threads.c" 2>"$T/cc.err" ||
	skip "cannot build a static threaded program: $(cat "$T/cc.err")"
"$PTGEN_TRACE" -o "$T/seq.truth" -- "$T/seq" $N > /dev/null 2> "$T/trace.err" ||
	fail "ptgen-trace: $(tail -1 "$T/trace.err")"
threads=$(awk '$1 == "T" { print $4 }' "$T/seq.truth" | sort -u | wc -l)
[ "$threads" -eq $((N + 1)) ] || fail "the truth has $threads threads, want $((N + 1))"
for opts in "--cpus 2" "--cpus 1" "--per-thread"; do
	# shellcheck disable=SC2086
	"$ENC" $opts --buildid-dir "$T/bid" -o "$T/s.data" "$T/seq.truth" || fail "ptgen-encode $opts"
	rm -rf "$T/out"
	(ulimit -n 40 && exec "$PTCONV" "$T/s.data" -f ptconv,text -o "$T/out" --buildid-dir "$T/bid") \
		> /dev/null 2> "$T/err" || { cat "$T/err" >&2; fail "$opts: ptconv exited $? with 40 open files"; }
	grep -q "warning" "$T/err" && { cat "$T/err" >&2; fail "$opts: warnings"; }
	$CMP "$T/seq.truth" "$T/out" --expect-gaps 0 > "$T/cmp" || { cat "$T/cmp" >&2; fail "$opts: not the truth"; }
	n=0
	for f in "$T"/out/trace.*.ptc; do
		"$PTCONV" stats "$f" > /dev/null 2>&1 || fail "$opts: $f is not a complete trace"
		n=$((n + 1))
	done
	[ $n -eq "$threads" ] || fail "$opts: $n .ptc files for $threads threads"
	echo "ok - $opts: $threads threads converted with 40 open files, each equal to its truth"
	# -j 2 (the queues in parallel per thread, compression threads):
	# the same files
	rm -rf "$T/out2"
	(ulimit -n 40 && exec "$PTCONV" "$T/s.data" -f ptconv,text -o "$T/out2" --buildid-dir "$T/bid" -j 2) \
		> /dev/null 2> "$T/err" || { cat "$T/err" >&2; fail "$opts: ptconv -j 2 exited $? with 40 open files"; }
	diff -r "$T/out" "$T/out2" > /dev/null || fail "$opts: -j 2 wrote other files than -j 1"
	echo "ok - $opts, -j 2: the same files"
	# Chunks of 50 records: at -j 2 (per CPU) a worker compresses a
	# thread's chunk while its writer goes on, and the writer finishes
	# or closes its file (40 open files) with a chunk still compressing:
	# -j 1's files, where the writer compresses each chunk itself.
	for j in 1 2; do
		rm -rf "$T/c$j"
		(ulimit -n 40 && exec env PTCONV_CHUNK_RECORDS=50 "$PTCONV" "$T/s.data" -f ptconv -o "$T/c$j" \
			--buildid-dir "$T/bid" -q -j $j) > /dev/null 2> "$T/err" ||
			{ cat "$T/err" >&2; fail "$opts: chunks of 50 records, -j $j: ptconv exited $?"; }
	done
	diff -r "$T/c1" "$T/c2" > /dev/null || fail "$opts: chunks of 50 records: -j 2 wrote other files than -j 1"
	echo "ok - $opts, chunks of 50 records: -j 2 wrote -j 1's files"
done
# Memory follows the threads alive at once, not all the threads of the
# recording: per-thread recordings of N and 8 N threads in turn, converted
# -j 1 and -j 2, must differ in peak memory by far less than the 145 KB per
# thread the decoders of all queues held when every queue's engine lived
# from the start to the end (at most 40 KB per thread here).
grep -q __asan_init "$PTCONV" 2>/dev/null && { echo "ok - (memory not measured in a sanitizer build)"; exit 0; }
"$PTGEN_TRACE" -o "$T/big.truth" -- "$T/seq" $((8 * N)) > /dev/null 2> "$T/trace.err" ||
	fail "ptgen-trace: $(tail -1 "$T/trace.err")"
"$ENC" --per-thread -o "$T/small.data" "$T/seq.truth" > /dev/null || fail "ptgen-encode --per-thread"
"$ENC" --per-thread -o "$T/big.data" "$T/big.truth" > /dev/null || fail "ptgen-encode --per-thread (big)"
for j in 1 2; do
	python3 - "$PTCONV" "$T" $j $((7 * N)) <<'PY' || fail "-j $j: memory grows with the threads of the recording"
import resource, subprocess, sys
ptconv, t, j, more = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def peak(data, out):
    # each run in a child of its own: RUSAGE_CHILDREN is a maximum over them
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, "
            "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    r = subprocess.run([sys.executable, "-c", code, ptconv, data, "-f", "ptconv", "-o", out, "-q", "-j", j],
                       check=True, capture_output=True, text=True)
    return int(r.stdout)
small = peak(t + "/small.data", t + "/m1")
big = peak(t + "/big.data", t + "/m2")
per = (big - small) / more
print("ok - -j %s: peak %d KB for the small recording, %d KB for %d more threads: %.1f KB per thread"
      % (j, small, big, more, per))
sys.exit(0 if per < 40 else 1)
PY
done
exit 0
