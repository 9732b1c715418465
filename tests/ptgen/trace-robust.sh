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

# The engines agree, on signals and faults: runs to breakpoints (the
# default: debug registers where they fire, else int3), runs to int3
# breakpoints (--int3), and single steps.  (Threaded programs are not
# compared line by line: where a thread blocks in the kernel, which thread
# runs next depends on timing, in any engine; see below.)
engine_opt() {
	case $1 in fast) ;; int3) echo --int3 ;; step) echo --single-step ;; esac
}
for p in c_nolibc c_static c_setjmp c_signal; do
	for f in fast int3 step; do
		"$PTGEN_TRACE" --slice 2000 $(engine_opt $f) -o "$T/$p.$f" -- "$CORPUS/$p" > /dev/null || fail "$p: $f run failed"
		# Process and thread ids differ between the runs.
		awk '{ if ($1 ~ /^[TCMXF]$/) { $3 = "P"; $4 = "P" } else if ($1 != "V") $3 = "P"; if ($1 == "F") { $5 = "P"; $6 = "P" } print }' \
			"$T/$p.$f" > "$T/$p.$f.n"
	done
	for f in fast int3; do
		cmp -s "$T/$p.$f.n" "$T/$p.step.n" ||
			fail "$p: the $f and step engines disagree: $(diff "$T/$p.step.n" "$T/$p.$f.n" | head -n 5)"
	done
done

# Threads taking turns: each engine's truth is consistent on its own and
# all see the same threads.
for f in fast int3 step; do
	"$PTGEN_TRACE" --slice 2000 $(engine_opt $f) -o "$T/thr.$f" -- "$CORPUS/c_threads" > /dev/null || fail "c_threads: $f run failed"
	"$TRUTH_CHECK" "$T/thr.$f" || fail "c_threads: $f truth inconsistent"
done
for f in fast int3; do
	[ "$(grep -c '^T ' "$T/thr.$f")" = "$(grep -c '^T ' "$T/thr.step")" ] ||
		fail "c_threads: the $f and step engines see different threads"
done
exit 0
