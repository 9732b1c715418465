#!/bin/sh
# -f perfetto against the ground truth.  The corpus's real programs
# (recursion, function pointers and the PLT, setjmp/longjmp, signals,
# threads, fork and exec, a static and a libc-less one, C++ exceptions)
# are traced by ptgen-trace, encoded into perf.data by ptgen-encode and
# converted; an independent reader (perfetto_truth.py: protobuf's wire
# format and Perfetto's field numbers, read as a trace processor reads
# them, against the truth's calls and returns by xray_truth.py's rules,
# C++ names demangled by llvm-cxxfilt) requires every thread's slice begins
# (names), ends and loss marks to be the truth's, and the complete slices
# per function to be the truth's calls; protoc --decode_raw must read the
# file as protobuf.  Then: a recording without timing packets (times in
# instructions, exact), the min-dur and max-depth filters against the
# truth's own durations and depths, a trace that starts deep inside a
# recursion (returns without calls), an overflow inside that recursion
# (every slice closed at the loss, marked so), times seconds apart and a
# loss fed to the writer directly, what is refused, and the same bytes
# for -j 1, -j 2 and a pool of open outputs too small for the threads.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_ptgen
command -v python3 >/dev/null || skip "python3 not installed"
CXXFILT=${CXXFILT:-$(command -v llvm-cxxfilt || ls /usr/lib/llvm-*/bin/llvm-cxxfilt 2>/dev/null | tail -1)}
[ -n "$CXXFILT" ] && [ -x "$CXXFILT" ] || skip "llvm-cxxfilt not installed (Debian: the llvm package)"
CHECK="python3 $top_srcdir/tests/writers/perfetto_truth.py --cxxfilt $CXXFILT"
CORPUS="$top_builddir/tests/corpus"
PROTOC=$(command -v protoc || true)
scratch
"$TRACE" -o "$T/true.truth" -- /bin/true >/dev/null 2>"$T/trace.err" ||
	skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"
[ -n "$PROTOC" ] || echo "# protoc not installed (Debian: protobuf-compiler): its decoding left out"

check() {	# check NAME [perfetto_truth options]
	n=$1
	shift
	$CHECK "$T/$n.truth" "$T/$n.out" "$@" >"$T/cmp" 2>&1 || {
		cat "$T/cmp" >&2
		fail "$n: -f perfetto $* is not the truth's"
	}
	if [ -n "$PROTOC" ]; then
		"$PROTOC" --decode_raw <"$T/$n.out/perfetto.pftrace" >/dev/null 2>"$T/protoc.err" ||
			fail "$n: protoc --decode_raw: $(head -3 "$T/protoc.err")"
	fi
	sed "s/^/ok - $n: /" "$T/cmp"
}

for p in c_recurse c_switch c_setjmp c_signal c_threads c_static c_nolibc c_vdso c_forkexec \
	 c_spawn c_mainexit; do
	record $p "$CORPUS/$p"
	conv $p perfetto
	check $p
	from_ptc $p perfetto
done

# C++ exceptions: the unwinder's jump to a landing pad ends the slices of
# the recursion it unwinds; the names are demangled
CXX=${CXX_FOR_TESTS:-c++}
if command -v "$CXX" >/dev/null && "$CXX" -O1 -o "$T/exc" "$top_srcdir/tests/writers/xray_exc.cc" 2>"$T/cxx.err"; then
	record exc "$T/exc"
	conv exc perfetto
	check exc --counts "$T/counts"
	from_ptc exc perfetto
	for f in "21 thrower(int)" "3 catcher(int)" "1 main"; do
		grep -qx "$f" "$T/counts" || fail "exc: not $f: $(head -5 "$T/counts")"
	done
	echo "ok - C++ exceptions: thrower(int) 21 slices, catcher(int) 3, demangled"
else
	echo "# no C++ compiler: the exceptions' part left out ($(head -1 "$T/cxx.err" 2>/dev/null))"
fi

# Without timing packets: the clock counts instructions, exactly; per
# thread (a per-CPU trace without time cannot be split between threads)
for p in c_recurse c_signal c_threads; do
	"$ENC" -o "$T/$p.data" --buildid-dir "$T/bid" --timing=none --per-thread "$T/$p.truth" ||
		fail "$p: ptgen-encode --timing=none"
	conv $p perfetto
	check $p --untimed
	from_ptc $p perfetto
done

# The filters, against the truth's own durations (in instructions) and
# depths: slices shorter than 200 instructions, or nested 6 deep, left out
p=c_recurse
full=$(wc -c <"$T/$p.out/perfetto.pftrace")
for f in min-dur=200 max-depth=6 min-dur=200:max-depth=6; do
	conv $p "perfetto:$f"
	# shellcheck disable=SC2046
	check $p --untimed $(echo "$f" | sed 's/^/--/; s/:/ --/; s/=/ /g')
	from_ptc $p "perfetto:$f"
	size=$(wc -c <"$T/$p.out/perfetto.pftrace")
	[ "$size" -lt "$full" ] || fail "perfetto:$f: $size bytes, not fewer than $full"
	echo "ok - perfetto:$f: $size bytes instead of $full"
done

# A trace that starts inside the recursion (the truth cut at the 150th
# call of c_recurse's most called function): returns without calls end
# nothing.  An overflow at the same call: the slices open then end at the
# loss, marked so, and an instant marks it; the returns after it end
# nothing
inside_recursion perfetto slice
grep -q '([1-9][0-9]* closed at a loss)' "$T/cmp" || fail "overflow: no slice closed at the loss"

# Times far apart and a loss, fed to the writer directly
# (tests/writers/xray_feed.c): f lasts 10 s, g 200 ns, h 1 s up to the
# loss, which ends it (marked) and is marked; its return writes nothing
mkdir "$T/feed" && "$top_builddir/tests/writers/xray_feed" "$T/feed" perfetto || fail "xray_feed perfetto"
python3 - "$top_srcdir/tests/writers" "$T/feed/perfetto.pftrace" >"$T/got" <<'EOF' || fail "xray_feed: not read"
import sys
sys.path.insert(0, sys.argv[1])
import perfetto_truth
tr = perfetto_truth.Trace(sys.argv[2])
assert not tr.errors, tr.errors
for uuid, evs in tr.events.items():
    print(tr.tracks[uuid][:3])
    for e in evs:
        print(*e)
EOF
G=1000000000
printf '%s\n' "('thread', 7, 7)" "$G B f None" "$((G + 100)) B g None" "$((G + 300)) E None None" \
	"$((11 * G + 300)) E None None" "$((12 * G)) B h None" "$((13 * G)) E None overflow" \
	"$((13 * G)) I trace lost: overflow None" | diff - "$T/got" || fail "xray_feed: not the fed slices"
echo "ok - 10 s in one slice, 200 ns, a slice closed at a loss after 1 s (marked), the loss marked"

# Refused: --per-cpu streams (threads mixed), a .ptc trace (one thread, no
# symbols), options that are none; a run into a directory of an earlier
# one removes its file; summary.json lists it for every thread
"$ENC" -o "$T/c_threads.data" --buildid-dir "$T/bid" "$T/c_threads.truth" || fail "ptgen-encode"
"$PTCONV" "$T/c_threads.data" -f perfetto --per-cpu -o "$T/pc" --buildid-dir "$T/bid" -q 2>"$T/err"
[ $? = 2 ] && grep -q "per-cpu" "$T/err" || fail "-f perfetto --per-cpu: not refused as a usage error"
for f in perfetto:min-dur=x perfetto:max-depth=0 perfetto:min-dur= perfetto:3 perfetto:threads; do
	"$PTCONV" "$T/c_threads.data" -f "$f" -o "$T/pc" --buildid-dir "$T/bid" -q 2>"$T/err"
	[ $? = 2 ] || fail "-f $f: not refused as a usage error"
done
conv c_threads ptconv,perfetto
set -- "$T"/c_threads.out/trace.*.ptc
"$PTCONV" convert "$1" "$1" -f perfetto -o "$T/pc" -q 2>"$T/err"
[ $? = 2 ] && grep -q "same thread" "$T/err" || fail "a .ptc given twice: not refused as a usage error"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not all("perfetto.pftrace" in t["files"] for t in d["threads"]))' \
	"$T/c_threads.out/summary.json" || fail "summary.json does not list perfetto.pftrace for every thread"
"$PTCONV" "$T/c_threads.data" -f xray -o "$T/c_threads.out" --buildid-dir "$T/bid" -q 2>/dev/null ||
	fail "a run into a used directory"
[ ! -e "$T/c_threads.out/perfetto.pftrace" ] || fail "a used directory: perfetto.pftrace left there"
echo "ok - --per-cpu, a .ptc given twice and 5 bad options refused (exit 2); summary.json lists the file; a later run removes it"

# The same bytes for -j 1, -j 2 and one open output for three threads
# (their spools closed and reopened), per thread and per CPU
same_bytes perfetto perfetto.
exit 0
