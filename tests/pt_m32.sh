#!/bin/sh
# 32-bit programs (gcc -m32, issue 15 item 4) end to end against the ground
# truth: corpus programs built for i386 are single-stepped by ptgen-trace
# (its R lines say the code is 32-bit), encoded by ptgen-encode (MODE.Exec
# with CS.D 1, CS.L 0 before every TIP.PGE and in every PSB+) and converted
# by every engine; pt_truth_compare.py requires every branch and
# instruction count of the real execution, and no gap.  Linux perf, where
# installed, must decode the same recordings to the truth's taken branches.  The images are
# i386 ELF files (the program, ld-linux.so.2, the 32-bit libc and vDSO).
# Skips when the compiler cannot build 32-bit programs (gcc-multilib).
. "${top_srcdir:-.}/tests/lib/common.sh"
need_ptgen
CHECK="$top_builddir/tests/ptgen/truth-check"
[ -x "$CHECK" ] || skip "truth-check not built"
command -v python3 >/dev/null || skip "python3 not installed"
scratch
CC=${CC:-cc}
# as tests/ptgen/local.mk builds them for 64 bits
"$CC" -m32 -g -O2 -fPIE -pie -o "$T/c_switch" "$top_srcdir/tests/corpus/c_switch.c" 2>"$T/cc.err" ||
	skip "$CC -m32 cannot build a 32-bit program (gcc-multilib): $(tail -1 "$T/cc.err")"
"$CC" -m32 -g -O0 -no-pie -fno-pie -o "$T/c_recurse" "$top_srcdir/tests/corpus/c_recurse.c" ||
	fail "$CC -m32 c_recurse"
# an ELF32 file (EI_CLASS 1) for i386 (e_machine 3)
[ "$(od -An -tx1 -j4 -N1 "$T/c_switch" | tr -d ' ')$(od -An -tx1 -j18 -N1 "$T/c_switch" | tr -d ' ')" = 0103 ] ||
	fail "$CC -m32 did not build an i386 program"

# 126: a kernel without IA32 emulation does not run it (and an exec that
# fails so would run the file as a shell script under ptgen-trace)
"$T/c_recurse" >/dev/null 2>"$T/run.err"
[ $? = 126 ] && skip "this kernel does not run i386 programs: $(head -1 "$T/run.err")"

n=0
for prog in c_switch c_recurse; do
	"$TRACE" -o "$T/$prog.truth" -- "$T/$prog" >/dev/null 2>"$T/trace.err" ||
		skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"
	"$CHECK" "$T/$prog.truth" || fail "$prog: truth-check"
	grep -q '^R .* 32$' "$T/$prog.truth" || fail "$prog: no 32-bit code in the truth"
	if perf=$(command -v perf); then
		# Linux perf decodes the recording as the truth says (its
		# taken branches: tests/ptgen/encode/compare.py)
		"$ENC" -o "$T/p.data" --buildid-dir "$T/bid" "$T/$prog.truth" || fail "ptgen-encode"
		"$perf" --buildid-dir "$T/bid" script -i "$T/p.data" --itrace=be -F tid,ip,addr,flags \
			>"$T/p.out" 2>"$T/p.err" || { cat "$T/p.err" >&2; fail "$prog: perf script failed"; }
		python3 "$top_srcdir/tests/ptgen/encode/compare.py" "$T/$prog.truth" "$T/p.out" >"$T/p.cmp" ||
			{ cat "$T/p.cmp" >&2; fail "$prog: perf disagrees with the truth"; }
		echo "ok - $prog (i386) perf script: $(tr '\n' ' ' <"$T/p.cmp")"
	fi
	for opts in "" "--noretcomp" "--interrupt-every 700" "--per-thread --timing=none" "--psb-period 0"; do
		rm -rf "$T/t.data"
		# shellcheck disable=SC2086
		"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" $opts "$T/$prog.truth" || fail "ptgen-encode $opts"
		for eng in walker libipt query; do
			n=$((n + 1))
			rm -rf "$T/out"
			"$PTCONV" "$T/t.data" -f text -o "$T/out" --buildid-dir "$T/bid" -q --engine=$eng ||
				fail "$prog, $eng, $opts: ptconv exited $?"
			python3 "$top_srcdir/tests/pt_truth_compare.py" "$T/$prog.truth" "$T/out" --expect-gaps 0 >"$T/cmp" ||
				{ cat "$T/cmp"; fail "$prog, $eng, $opts"; }
			if [ $eng = walker ]; then
				# windows decoded ahead on other threads (in the
				# mode their PSB+ says) and replayed: the same files
				rm -rf "$T/outj"
				PTCONV_WINDOW_BYTES=2048 PTCONV_AHEAD_DEPTH=3 PTCONV_AHEAD_WAIT=1 "$PTCONV" "$T/t.data" \
					-f text -o "$T/outj" --buildid-dir "$T/bid" -j 3 2>"$T/j.err" ||
					fail "$prog, -j 3, $opts: ptconv exited $?"
				diff -r -I '"fast_path_bytes"' "$T/out" "$T/outj" >/dev/null ||
					fail "$prog, -j 3, windows of 2 KiB, $opts: other files"
				case "$opts" in *psb-period*)
					grep -q ' [1-9][0-9]* of [0-9]* trace windows decoded ahead and replayed' "$T/j.err" ||
						fail "$prog, -j 3, $opts: no window replayed ($(grep windows "$T/j.err"))"
				esac
			fi
			echo "ok $n - $prog (i386) $eng $opts: $(grep -v '^OK' "$T/cmp" | tr '\n' ' ')"
		done
	done
done
exit 0
