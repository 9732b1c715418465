#!/bin/sh
# ptgen-trace on programs that go wrong, its step limit, and its two
# engines: runs to breakpoints give the same ground truth as single-
# stepping every instruction.
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
scratch
need_ptrace

# A program that does not exist: a clear error, status 127.
"$PTGEN_TRACE" -o "$T/none.truth" -- "$T/no-such-program" > /dev/null 2>"$T/err"
rc=$?
[ $rc -eq 127 ] || fail "missing program: status $rc, want 127"
grep -q "no-such-program.*No such file" "$T/err" || fail "missing program: message: $(cat "$T/err")"

# A program killed by SIGSEGV: status 128+11 as from a shell, and the
# truth ends with the faulting instruction (A), then E and X.
"$PTGEN_TRACE" -o "$T/crash.truth" -- "$CORPUS/c_nolibc" crash > /dev/null 2>&1
rc=$?
[ $rc -eq 139 ] || fail "crash: status $rc, want 139"
"$TRUTH_CHECK" "$T/crash.truth" || fail "crash: truth-check found problems"
tail -n 3 "$T/crash.truth" | cut -d' ' -f1 | tr -d '\n' | grep -qx AEX ||
	fail "crash: the truth does not end with A, E, X: $(tail -n 3 "$T/crash.truth")"

# --max-insns ends the trace cleanly after exactly that many instructions.
"$PTGEN_TRACE" --max-insns 5000 -o "$T/max.truth" -- "$CORPUS/c_static" > /dev/null 2>&1
"$TRUTH_CHECK" --stats "$T/max.truth" > "$T/max.stats" || fail "max-insns: truth-check found problems"
grep -qx "total 5000 [0-9]*" "$T/max.stats" || fail "max-insns: $(cat "$T/max.stats")"
tail -n 1 "$T/max.truth" | grep -q '^E ' || fail "max-insns: no E line at the end"

# SIGTERM to the tracer ends the trace cleanly too (a program that never
# ends: the shell's busy loop).
"$PTGEN_TRACE" -o "$T/term.truth" -- /bin/sh -c 'while :; do :; done' > /dev/null 2>&1 &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: status $rc, want 143"
"$TRUTH_CHECK" "$T/term.truth" || fail "SIGTERM: truth-check found problems"
tail -n 1 "$T/term.truth" | grep -q '^E ' || fail "SIGTERM: no E line at the end"

# Both engines agree, on signals and faults.  (Threaded programs are not
# compared line by line: where a thread blocks in the kernel, which thread
# runs next depends on timing, in either engine; see below.)
for p in c_nolibc c_static c_setjmp c_signal; do
	"$PTGEN_TRACE" --slice 2000 -o "$T/$p.fast" -- "$CORPUS/$p" > /dev/null || fail "$p: fast run failed"
	"$PTGEN_TRACE" --slice 2000 --single-step -o "$T/$p.step" -- "$CORPUS/$p" > /dev/null || fail "$p: single-step run failed"
	# Process and thread ids differ between the runs.
	for f in fast step; do
		awk '{ if ($1 ~ /^[TCMXF]$/) { $3 = "P"; $4 = "P" } else if ($1 != "V") $3 = "P"; if ($1 == "F") { $5 = "P"; $6 = "P" } print }' \
			"$T/$p.$f" > "$T/$p.$f.n"
	done
	cmp -s "$T/$p.fast.n" "$T/$p.step.n" ||
		fail "$p: the two engines disagree: $(diff "$T/$p.step.n" "$T/$p.fast.n" | head -n 5)"
done

# Threads taking turns: each engine's truth is consistent on its own and
# both see the same threads.
for f in fast step; do
	o=; [ $f = step ] && o=--single-step
	"$PTGEN_TRACE" --slice 2000 $o -o "$T/thr.$f" -- "$CORPUS/c_threads" > /dev/null || fail "c_threads: $f run failed"
	"$TRUTH_CHECK" "$T/thr.$f" || fail "c_threads: $f truth inconsistent"
done
[ "$(grep -c '^T ' "$T/thr.fast")" = "$(grep -c '^T ' "$T/thr.step")" ] || fail "c_threads: the engines see different threads"
exit 0
