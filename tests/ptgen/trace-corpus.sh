#!/bin/sh
# Every corpus program under ptgen-trace: its stdout and exit status are
# those of the untraced program (the real execution is the oracle), the
# ground truth is well formed and its blocks chain (truth-check), and each
# program shows what it is in the corpus for: the vDSO executed, recursion
# 200 deep, a jump table, three faults, three threads, exec'd children.
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
scratch
need_ptrace

for p in c_nolibc c_static c_recurse c_switch c_setjmp c_signal c_vdso \
	 c_threads c_forkexec c_spawn c_mainexit; do
	prog="$CORPUS/$p"
	"$prog" > "$T/$p.want" 2>&1
	want_rc=$?
	"$PTGEN_TRACE" -o "$T/$p.truth" -- "$prog" > "$T/$p.got" 2>"$T/$p.err"
	got_rc=$?
	[ $got_rc -eq $want_rc ] ||
		fail "$p: exit status $got_rc under ptgen-trace, $want_rc without: $(cat "$T/$p.err")"
	cmp -s "$T/$p.want" "$T/$p.got" ||
		fail "$p: output differs under ptgen-trace: $(cat "$T/$p.got")"
	"$TRUTH_CHECK" --stats "$T/$p.truth" > "$T/$p.stats" ||
		fail "$p: truth-check found problems"
	echo "$p: $(tail -n 1 "$T/$p.stats")"
done

# The vDSO: its image was dumped, and instructions ran inside it.
awk '$1 == "M" && $10 == "[vdso]" { print $5, $6, $11 }' "$T/c_vdso.truth" > "$T/vdso"
read vstart vlen vdump < "$T/vdso" || fail "c_vdso: no vDSO mapping"
[ -f "$vdump" ] && [ "$(wc -c < "$vdump")" -eq $((vlen)) ] || fail "vDSO dump $vdump missing or of the wrong size"
[ "$(head -c 4 "$vdump" | od -An -c | tr -d ' ')" = "177ELF" ] || fail "the vDSO dump is not an ELF image"
n=$(awk -v s=$((vstart)) -v l=$((vlen)) "$AWK_HEX"'$1 == "B" { ip = hex($4); if (ip >= s && ip < s + l) n++ } END { print n + 0 }' "$T/c_vdso.truth")
[ "$n" -gt 0 ] || fail "c_vdso: no branch executed in the vDSO"
echo "c_vdso: $n branches in the vDSO"

# Recursion: the call depth reaches 200 (calls minus returns).
d=$(awk '$1 == "B" && ($6 == 2 || $6 == 3) { d++; if (d > m) m = d } $1 == "B" && $6 == 4 { d-- } END { print m - 0 }' "$T/c_recurse.truth")
[ "$d" -ge 200 ] || fail "c_recurse: call depth $d, want >= 200"

# The jump table and the function pointers: of the 300 loop iterations,
# the 277 with i % 13 != 12 jump through the table (12 is the default), and
# all 300 call through a pointer; inside the program itself.
awk '$1 == "M" && $10 ~ /c_switch$/ { print $5, $6 }' "$T/c_switch.truth" > "$T/sw"
for kind in 1 3; do
	n=$(awk -v kind=$kind "$AWK_HEX"'NR == FNR { s[NR] = hex($1); l[NR] = hex($2); k = NR; next }
		 $1 == "B" && $6 == kind { ip = hex($4); for (i = 1; i <= k; i++) if (ip >= s[i] && ip < s[i] + l[i]) n++ }
		 END { print n + 0 }' "$T/sw" "$T/c_switch.truth")
	want=$([ $kind = 1 ] && echo 277 || echo 300)
	[ "$n" -ge $want ] || fail "c_switch: $n branches of kind $kind in the program, want >= $want"
done

# Signals: the three faulting stores are asynchronous exits at a store;
# SIGUSR1 (on return from kill) and SIGALRM (in pause) enter their handlers
# from a system call, without an A line.
n=$(grep -c '^A ' "$T/c_signal.truth")
[ "$n" -eq 3 ] || fail "c_signal: $n A lines, want 3 (the three faults)"

# Threads: three threads, each worker ran its 3000 iterations.
n=$(grep -c '^T ' "$T/c_threads.truth")
[ "$n" -eq 3 ] || fail "c_threads: $n threads, want 3"
awk '$1 == "thread" && $2 != $3 && $4 < 3000 * 4 { bad = 1 } END { exit bad }' "$T/c_threads.stats" ||
	fail "c_threads: a worker thread ran too few instructions: $(cat "$T/c_threads.stats")"

# fork+exec: a second process, whose exec'd image is c_nolibc.
n=$(awk '$1 == "F" && $3 != $5 { n++ } END { print n + 0 }' "$T/c_forkexec.truth")
[ "$n" -eq 1 ] || fail "c_forkexec: $n forks, want 1"
awk '$1 == "F" && $3 != $5 { child = $5 } $1 == "C" && $3 == child && $5 == 1 { ex = 1 }
     ex && $1 == "M" && $3 == child && $10 ~ /c_nolibc$/ { ok = 1 } END { exit !ok }' "$T/c_forkexec.truth" ||
	fail "c_forkexec: no M line of c_nolibc after the child's exec"

# posix_spawn and vfork: two children, each exec'd c_nolibc, which wrote
# its line (the output comparison above) and ran to its exit_group.
n=$(awk '$1 == "F" && $3 != $5 { child[$5] = 1 } $1 == "C" && child[$3] && $5 == 1 && $6 == "c_nolibc" { n++ } END { print n + 0 }' "$T/c_spawn.truth")
[ "$n" -eq 2 ] || fail "c_spawn: $n children exec'd c_nolibc, want 2"
# The main thread's exit (its last far branch) comes before the worker's
# last instructions; its E and X when the process ends.
awk '$1 == "T" { if (!main) main = $4; else worker = $4 }
     $1 == "B" && $3 == main && $6 == 6 { last_main = NR }
     $1 == "B" && $3 == worker { last_worker = NR }
     END { exit !(main && worker && last_main < last_worker) }' "$T/c_mainexit.truth" ||
	fail "c_mainexit: the main thread's exit is not before the worker's end"
exit 0
