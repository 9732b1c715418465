#!/bin/sh
# -f xray against the ground truth.  Real programs of the corpus (recursion,
# function pointers and the PLT, setjmp/longjmp, signals, threads, fork and
# exec, a static and a libc-less one, and C++ exceptions) are traced by ptgen-trace, encoded
# into perf.data by ptgen-encode and converted; an independent reader
# (xray_truth.py: its own ELF symbol reader, FDR reader and the man page's
# rules applied to the truth's branches) requires every thread's enter,
# exit and tail-exit sequence to be the truth's, and the Debian llvm
# package's llvm-xray to read the logs: account's call counts per function
# are the truth's, stack and graph work, convert --output-format=trace_event
# gives JSON with one begin per enter and one end per exit.  Then: a
# recording without timing packets (times in instructions, exact), a trace
# that starts deep inside a recursion (returns without calls), an overflow
# inside that recursion (every frame left at the loss), times seconds apart
# and a loss fed to the writer directly, one log per thread (xray:threads),
# what is refused, and the same bytes for -j 1, -j 2 and a pool of open
# outputs too small for the threads.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_ptgen
command -v python3 >/dev/null || skip "python3 not installed"
CHECK="python3 $top_srcdir/tests/writers/xray_truth.py"
CORPUS="$top_builddir/tests/corpus"
LLVM_XRAY=${LLVM_XRAY:-$(command -v llvm-xray || ls /usr/lib/llvm-*/bin/llvm-xray 2>/dev/null | tail -1)}
[ -n "$LLVM_XRAY" ] && [ -x "$LLVM_XRAY" ] || skip "llvm-xray not installed (Debian: the llvm package)"
need_perf
scratch
"$TRACE" -o "$T/true.truth" -- /bin/true >/dev/null 2>"$T/trace.err" ||
	skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"

check() {	# check NAME [xray_truth options]
	n=$1
	shift
	$CHECK "$T/$n.truth" "$T/$n.out" --llvm-xray "$LLVM_XRAY" "$@" >"$T/cmp" 2>&1 || {
		cat "$T/cmp" >&2
		fail "$n: -f xray is not the truth's"
	}
	sed "s/^/ok - $n: /" "$T/cmp"
}

for p in c_recurse c_switch c_setjmp c_signal c_threads c_static c_nolibc c_vdso c_forkexec \
	 c_spawn c_mainexit; do
	record $p "$CORPUS/$p"
	conv $p xray
	# (llvm-xray reads the per-process log of several threads too: each
	# buffer starts with a custom event at the process's first record)
	check $p
	from_ptc $p xray
	if [ -n "$(awk '$1 == "T" { n[$3]++ } END { for (p in n) if (n[p] > 1) print p }' "$T/$p.truth")" ]; then
		conv $p xray:threads
		check $p
	fi
done

# A slice keeps the symbols of its code: every entry it embeds is one of
# the whole trace's (whose xray files are the recording's, above), and its
# xray map names c_recurse's functions (the program's own part of the run:
# its last 20000 instructions; the dynamic loader's come first)
set -- "$T/c_recurse.ptc"/trace.*.ptc
n=$("$PTCONV" info --json "$1" | sed -n 's/.*"instructions": *\([0-9]*\).*/\1/p')
"$PTCONV" slice --start $((n - 20000)) --count 20000 -o "$T/slice.ptc" "$1" || fail "slice"
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import read_ptc
key = lambda t: {e[1:] for e in read_ptc.read(t)["syms"]}
s, w = key(sys.argv[2]), key(sys.argv[3])
sys.exit(0 if s and s <= w else "the slice has %d entries, %d not the trace'"'"'s" % (len(s), len(s - w)))' \
	"$top_srcdir/tests/writers" "$T/slice.ptc" "$1" || fail "the slice's symbols"
"$PTCONV" convert "$T/slice.ptc" -f xray -o "$T/slice.out" -q || fail "xray from the slice"
for f in depth up down; do
	grep -q "function-name: \"$f\"" "$T/slice.out"/xray.*.map.yaml || fail "the slice's map does not name $f"
done
echo "ok - a slice of c_recurse keeps the trace's symbols; its xray map names depth, up, down"

# C++ exceptions: the unwinder's jump to a landing pad leaves the frames
# of the recursion it unwinds; llvm-xray demangles the ELF map's names
CXX=${CXX_FOR_TESTS:-c++}
if command -v "$CXX" >/dev/null && "$CXX" -O1 -o "$T/exc" "$top_srcdir/tests/writers/xray_exc.cc" 2>"$T/cxx.err"; then
	p=exc
	record $p "$T/exc"
	conv $p xray
	check $p
	from_ptc $p xray
	"$LLVM_XRAY" account -m "$T/$p.out"/xray.*.map.elf "$T/$p.out"/xray.*.fdr >"$T/acc" || fail "$p: account"
	for f in "21 thrower(int)" "3 catcher(int)" "1 main"; do
		awk '{ print $2, $NF }' "$T/acc" | grep -qx "$f" || { cat "$T/acc" >&2; fail "$p: account: not $f"; }
	done
	echo "ok - C++ exceptions: llvm-xray account counts thrower(int) 21, catcher(int) 3, main 1"
else
	echo "# no C++ compiler: the exceptions' part left out ($(head -1 "$T/cxx.err" 2>/dev/null))"
fi

# The names: llvm-xray symbolizes the ELF map (the YAML map gives it
# addresses only)
"$LLVM_XRAY" account -m "$T/c_recurse.out"/xray.*.map.elf "$T/c_recurse.out"/xray.*.fdr >"$T/acc" ||
	fail "account with the ELF map"
for f in depth up down main; do
	grep -q " $f\$" "$T/acc" || { cat "$T/acc" >&2; fail "account does not name $f"; }
done
[ "$(awk '$NF == "depth" { print $2 }' "$T/acc")" = 272 ] || fail "depth: not 272 calls"
echo "ok - llvm-xray account -m xray.PID.map.elf names depth (272 calls), up, down, main"

# Without timing packets: the clock counts instructions, exactly; per
# thread (a per-CPU trace without time cannot be split between threads)
for p in c_recurse c_signal c_threads; do
	"$ENC" -o "$T/$p.data" --buildid-dir "$T/bid" --timing=none --per-thread "$T/$p.truth" ||
		fail "$p: ptgen-encode --timing=none"
	conv $p xray:threads
	check $p --untimed
	from_ptc $p xray:threads
done

# A trace that starts inside the recursion: the truth cut at the 150th
# call of c_recurse's most called function (depth), user mode entered
# where the branch before it led.  An overflow deep in the recursion (at
# the same call): the frames open then are left at the loss; the returns
# after it that would have left them leave nothing
inside_recursion xray frame

# Times far apart and a loss, fed to the writer directly
# (tests/writers/xray_feed.c): f lasts 10 s (a TSCWrap record), g 200 ns,
# h 1 s up to the loss; the return after the loss writes nothing
mkdir "$T/feed" && "$top_builddir/tests/writers/xray_feed" "$T/feed" || fail "xray_feed"
"$LLVM_XRAY" fdr-dump --verify "$T/feed/xray.7.fdr" >"$T/dump" || fail "xray_feed: fdr-dump --verify"
grep -q 'TSC Wrap: base = 11000000300' "$T/dump" || { cat "$T/dump"; fail "xray_feed: no TSCWrap at 11 s + 300 ns"; }
[ "$(grep -c 'Function' "$T/dump")" = 6 ] || { cat "$T/dump"; fail "xray_feed: not 6 records"; }
"$LLVM_XRAY" account -m "$T/feed/xray.7.map.elf" -f csv "$T/feed/xray.7.fdr" | cut -d, -f2,8,10 >"$T/acc"
printf '%s\n' 'count,sum,function' '1,1.000000e+01,"f"' '1,2.000000e-07,"g"' '1,1.000000e+00,"h"' | diff - "$T/acc" ||
	fail "xray_feed: llvm-xray account"
echo "ok - 10 s in one call (TSCWrap), 200 ns, a frame left at a loss after 1 s: llvm-xray accounts them so"

# Refused: --per-cpu streams (threads mixed), a thread's .ptc trace given
# twice; a run into a directory of an earlier one removes its xray files
"$ENC" -o "$T/c_threads.data" --buildid-dir "$T/bid" "$T/c_threads.truth" || fail "ptgen-encode"
"$PTCONV" "$T/c_threads.data" -f xray --per-cpu -o "$T/pc" --buildid-dir "$T/bid" -q 2>"$T/err"
[ $? = 2 ] && grep -q "per-cpu" "$T/err" || fail "-f xray --per-cpu: not refused as a usage error"
conv c_threads ptconv,xray:threads
set -- "$T"/c_threads.out/trace.*.ptc
"$PTCONV" convert "$1" "$2" "$1" -f xray -o "$T/pc" -q 2>"$T/err"
[ $? = 2 ] && grep -q "same thread" "$T/err" || fail "a .ptc given twice: not refused as a usage error"
"$PTCONV" convert "$1" "$T/c_threads.data" -f xray -o "$T/pc" -q 2>"$T/err"
[ $? = 2 ] && grep -q "not a ptconv trace" "$T/err" || fail "a .ptc and a recording: not refused as a usage error"
# a trace of version 2 (before the symbols): functions by address, said so
"$PTCONV" convert "$top_srcdir/tests/fuzz/seeds/fuzz_ptc_trace/chunks-v2.ptc" -f xray -o "$T/v2" -q 2>"$T/err" &&
	grep -q "holds no symbols" "$T/err" && ! grep -q 'function-name: "[a-z_]*"' "$T/v2"/xray.*.map.yaml ||
	fail "a version 2 trace: not converted by address with a warning"
"$PTCONV" "$T/c_threads.data" -f xray -o "$T/c_threads.out" --buildid-dir "$T/bid" -q 2>/dev/null ||
	fail "a run into a used directory"
left=$(cd "$T/c_threads.out" && ls -A | grep -v -E '^(summary\.json|xray\.[0-9]+\.(fdr|map\.yaml|map\.elf))$')
[ -z "$left" ] || fail "a used directory: left there: $left"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not all(sorted(t["files"]) == sorted(sys.argv[2:]) for t in d["threads"]))' \
	"$T/c_threads.out/summary.json" $(cd "$T/c_threads.out" && ls xray.*) || fail "summary.json does not list the xray files of every thread"
echo "ok - --per-cpu, a .ptc given twice and a .ptc with a recording refused (exit 2), a version 2 .ptc named by address with a warning; a used directory keeps this run's files only, summary.json lists them"

# The CPUs: threads spread over two CPUs and moved between them, every
# record on the CPU Linux perf says its thread's branches ran on (llvm-xray
# convert reads the log; tests/writers/xray_cpu.py), in a log per thread and
# in the process's log
"$ENC" -o "$T/cpus.data" --buildid-dir "$T/bid" --cpus 2 --migrate 2 "$T/c_threads.truth" ||
	fail "ptgen-encode --cpus 2 --migrate 2"
"$PERF" --buildid-dir "$T/bid" script -i "$T/cpus.data" --itrace=b -F tid,cpu,time --ns >"$T/cpus.perf" 2>/dev/null ||
	fail "perf script on the two-CPU recording"
for f in xray:threads xray; do
	rm -rf "$T/cpus.out"
	"$PTCONV" "$T/cpus.data" -f $f -o "$T/cpus.out" --buildid-dir "$T/bid" -q || fail "-f $f, two CPUs: exited $?"
	for log in "$T"/cpus.out/xray.*.fdr; do
		"$LLVM_XRAY" convert -m "$T"/cpus.out/xray.*.map.elf --output-format=yaml "$log" ||
			fail "-f $f, two CPUs: llvm-xray convert $log"
	done >"$T/cpus.yaml"
	python3 "$top_srcdir/tests/writers/xray_cpu.py" "$T/cpus.perf" "$T/cpus.yaml" >"$T/cmp" ||
		{ cat "$T/cmp"; fail "-f $f: the CPUs of the records"; }
	echo "ok - -f $f, threads moved between two CPUs: $(cat "$T/cmp")"
done

# The same bytes for -j 1, -j 2 and one open output for three threads
# (their spools closed and reopened: on one CPU they take turns), per
# thread and per CPU
same_bytes xray xray.
exit 0
