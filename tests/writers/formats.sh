#!/bin/sh
# Every output format, read back by an independent reader (tests/writers/*.py,
# written from the format descriptions) and compared with the oracle: the
# exact execution of a real program, as the ground-truth tracer ptgen-trace
# records it.  A second, independent single-stepper (tests/writers/stepper)
# lists every executed instruction, and must agree with ptgen-trace.
. "$top_srcdir/tests/lib/common.sh"
W="$top_srcdir/tests/writers"
B="$top_builddir/tests/writers"
command -v python3 >/dev/null || skip "python3 not installed"
command -v zstd >/dev/null || skip "zstd not installed"
scratch
prog_truth

fmt() {	# fmt FORMATS [truth2fmt options]
	f=$1; shift
	rm -rf "$T/out"; mkdir "$T/out"
	"$B/truth2fmt" -f "$f" -o "$T/out" "$@" "$T/prog.truth" 2>"$T/warn" || { cat "$T/warn" >&2; fail "writing $f"; }
	[ -s "$T/warn" ] && { cat "$T/warn" >&2; fail "warnings writing $f"; }
	return 0
}

# ptconv: one chunk, many small chunks; seeking agrees with reading.
for chunk in 0 100; do
	fmt ptconv -c $chunk
	python3 "$W/read_ptc.py" "$T"/out/trace.*.ptc "$T/prog.truth" "$T/prog" "$START" || fail "ptc (chunk $chunk)"
	"$B/bench_reader" -s "$T"/out/trace.*.ptc >/dev/null || fail "ptc seek (chunk $chunk)"
done
# The library lists what the independent reader decodes over long
# stretches without events (the hot loop, trace_reader.c: run): coarse
# times (-q) leave few time changes, repeats (-r) make the same paths
# recur, losses (-g) put gaps inside chunks; batches of 64 and 777 end
# anywhere in a stretch, 1 and 3 leave no room for one.
for chunk in 0 1000; do
	fmt ptconv -c $chunk -q 2000 -r 3 -g 5000:10 -g 20000:0
	"$B/bench_reader" -d 4096 "$T"/out/trace.*.ptc > "$T/lib.dump" || fail "ptc read (chunk $chunk)"
	python3 "$W/cmp_dump.py" "$T"/out/trace.*.ptc < "$T/lib.dump" >/dev/null || fail "ptc read (chunk $chunk)"
	# and the instruction counts it keeps across runs agree with seeking
	"$B/bench_reader" -s "$T"/out/trace.*.ptc >/dev/null || fail "ptc seek (runs, chunk $chunk)"
	for batch in 1 3 64 777; do
		"$B/bench_reader" -d $batch "$T"/out/trace.*.ptc | cmp -s - "$T/lib.dump" ||
			fail "ptc read in batches of $batch (chunk $chunk)"
	done
done

# Both format versions: the library reads the version 1 and version 2 seed
# traces exactly as the independent reader decodes them from the man page.
for f in "$top_srcdir"/tests/fuzz/seeds/fuzz_ptc_trace/*.ptc; do
	"$PTCONV" dump "$f" > "$T/seed.dump" || fail "dump $f"
	python3 "$W/cmp_dump.py" "$f" < "$T/seed.dump" || fail "dump of $f differs from read_ptc.py"
done
S="$top_srcdir/tests/fuzz/seeds/fuzz_ptc_trace"
[ "$(od -An -tu4 -j8 -N4 "$S/chunks.ptc" | tr -d ' ')" = 1 ] &&
	[ "$(od -An -tu4 -j8 -N4 "$S/chunks-v2.ptc" | tr -d ' ')" = 2 ] || fail "seeds of both versions"
echo "ok - version 1 and 2 traces read as the independent reader decodes them"

# The function symbols a trace embeds are those its writer's images gave
# at each branch, before and after an exec (tests/writers/ptc_syms_feed.c,
# whose symbol reader is the oracle); the seed symbols.ptc is its output
mkdir "$T/syms" && "$B/ptc_syms_feed" "$T/syms" || fail "ptc_syms_feed"
cmp -s "$T/syms/trace.9.ptc" "$S/symbols.ptc" || fail "symbols.ptc is no longer what ptc_syms_feed writes"

# SimPoint vectors beside any format, recomputed from the ground truth.
for iv in 5000 777; do
	fmt ptconv -b $iv -c 300
	python3 "$W/read_bbv.py" "$T"/out/trace.*.bb "$T/prog.truth" $iv "$START" || fail "bbv $iv"
done
# Slices have exact boundaries: [N, N+M) of the ground truth's instructions.
for range in "0 100" "5 1" "12345 5000" "40000 3" "30000 7777"; do
	set -- $range
	"$PTCONV" slice --start $1 --count $2 -o "$T/slice.ptc" "$T"/out/trace.*.ptc || fail "slice $range"
	python3 "$W/check_slice.py" "$T/slice.ptc" "$T/prog.truth" "$T/prog.ips" $1 $2 || fail "slice $range"
done
"$PTCONV" slice --start 1 --count 1000000000 "$T"/out/trace.*.ptc 2>/dev/null && fail "slice beyond the end"

# dump lists every instruction from the code embedded in the trace alone.
fmt ptconv -c 1000
"$PTCONV" dump -i "$T"/out/trace.*.ptc > "$T/dump" || fail "dump"
awk '/^    0x/ { print $1 }' "$T/dump" | sed 's/^0x0*/0x/' > "$T/dump.ips"
cmp -s "$T/dump.ips" "$T/prog.ips" || fail "dump -i does not list the executed instructions"
# stats: totals and branch mix against the ground truth (awk over its B lines).
"$PTCONV" stats "$T"/out/trace.*.ptc > "$T/stats" || fail "stats"
awk '$1 == "B" { n++; i += $9; k[$6]++; if ($6 == 5) t += $7 }
     END { printf "instructions: %d\nbranches: %d\ncond %d %.2f%%\n", i, n, k[5], 100 * t / k[5] }' \
	"$T/prog.truth" > "$T/stats.want"
{ grep '^instructions:' "$T/stats"; grep '^branches:' "$T/stats" | cut -d' ' -f1-2
  awk '$1 == "cond" { print "cond", $2, $5 }' "$T/stats"; } > "$T/stats.got"
diff "$T/stats.want" "$T/stats.got" >&2 || fail "stats differ from the ground truth"

# Corrupt and truncated traces: a clear error naming file and offset, never a crash.
fmt ptconv -c 500
cp "$T"/out/trace.*.ptc "$T/good.ptc"
size=$(wc -c < "$T/good.ptc")
for k in 0 7 8 12 16 33 48 63 64 100 500 1000 2000 $((size / 2)) $((size - 100)) $((size - 17)) $((size - 1)); do
	head -c $k "$T/good.ptc" > "$T/bad.ptc"
	"$PTCONV" stats "$T/bad.ptc" > /dev/null 2> "$T/err"; rc=$?
	[ $rc = 3 ] && grep -q "bad.ptc: offset [0-9]*: " "$T/err" || fail "truncated at $k: exit $rc: $(cat "$T/err")"
	python3 -c "import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[int(sys.argv[2])] ^= 0x5a; open(sys.argv[3], 'wb').write(d)" \
		"$T/good.ptc" $k "$T/bad.ptc"
	"$PTCONV" stats "$T/bad.ptc" > /dev/null 2> "$T/err"; rc=$?
	[ $rc = 0 ] || { [ $rc = 3 ] && grep -q "bad.ptc: offset [0-9]*: " "$T/err"; } || fail "byte $k flipped: exit $rc: $(cat "$T/err")"
done

fmt bt9
python3 "$W/read_bt9.py" "$T"/out/trace.*.bt9.gz "$T/prog.truth" || fail bt9

fmt champsim
python3 "$W/read_champsim.py" "$T"/out/trace.*.champsim.xz "$T/prog.truth" "$T/prog.ips" || fail "champsim .xz"
fmt champsim -z
python3 "$W/read_champsim.py" "$T"/out/trace.*.champsim.gz "$T/prog.truth" "$T/prog.ips" || fail "champsim .gz"

fmt cbp2025
python3 "$W/read_cbp2025.py" "$T"/out/trace.*.cbp2025.gz "$T/prog.truth" "$T/prog.ips" || fail cbp2025

# Compression threads change the speed, never the bytes: -j 1, 2 and 3 give
# the same files, here of several xz blocks (preset 0: 2 MiB) and gzip
# members (4 MiB; champsim.gz is one member on one thread), which the
# independent readers read back.
"$top_builddir/tests/ptgen/ptgen-trace" -o "$T/long.truth" -- "$T/prog" 12000 >/dev/null || fail "ptgen-trace (long)"
for j in 1 2 3; do
	rm -rf "$T/out"; mkdir "$T/out"
	"$B/truth2fmt" -f champsim,cbp2025 -l -1 -j $j -o "$T/out" "$T/long.truth" || fail "writing -j $j"
	mv "$T/out" "$T/j$j"; mkdir "$T/out"
	"$B/truth2fmt" -f champsim -z -j $j -o "$T/out" "$T/long.truth" || fail "writing champsim:gz -j $j"
	mv "$T"/out/trace.*.champsim.gz "$T/j$j/"
done
for j in 2 3; do
	for f in champsim.xz champsim.gz cbp2025.gz; do
		cmp "$T"/j1/trace.*.$f "$T"/j$j/trace.*.$f || fail "-j $j: $f differs from -j 1"
	done
done
members() {
	python3 -c 'import sys, zlib
d, n = open(sys.argv[1], "rb").read(), 0
while d:
	o = zlib.decompressobj(31)
	o.decompress(d)
	d, n = o.unused_data, n + 1
print(n)' "$1"
}
if command -v xz >/dev/null; then
	[ "$(xz -l "$T"/j1/trace.*.champsim.xz | awk 'NR == 2 { print $2 }')" -ge 4 ] ||
		fail "champsim.xz: fewer xz blocks than expected"
fi
[ "$(members "$T"/j1/trace.*.cbp2025.gz)" -ge 2 ] || fail "fewer gzip members than expected"
# champsim.gz: one member, all ChampSim's reader reads (ptconv-formats(5))
[ "$(members "$T"/j1/trace.*.champsim.gz)" -eq 1 ] || fail "champsim.gz: more than one gzip member"
python3 "$W/read_champsim.py" "$T"/j2/trace.*.champsim.xz "$T/long.truth" - || fail "champsim .xz (blocks)"
python3 "$W/read_champsim.py" "$T"/j3/trace.*.champsim.gz "$T/long.truth" - || fail "champsim .gz (one member)"
python3 "$W/read_cbp2025.py" "$T"/j2/trace.*.cbp2025.gz "$T/long.truth" - || fail "cbp2025 (members)"
echo "ok - champsim and cbp2025 are the same bytes with 1, 2 and 3 compression threads"

# Losses as a decoder reports them (truth2fmt -g AT:COUNT: branches AT..
# AT+COUNT-1 lost, then an overflow gap resuming where the last of them
# went): one before anything (it loses nothing and splits nothing), two
# back to back after branch 3100 (they start one part, not two), one at
# 9000, and one 400 branches before the end that lasts to it (no empty part
# after it).  bt9, champsim and cbp2025 must each be three files, runs of the
# truth.
n=$(grep -c '^B ' "$T/prog.truth")
[ $n -gt 10000 ] || fail "want more than 10000 branches in the truth, have $n"
fmt bt9,champsim,cbp2025 -g 0:0 -g 3000:100 -g 3100:0 -g 3100:7 -g 9000:20 -g $((n - 400)):1000
set -- "$T"/out/trace.*.part2.bt9.gz
tid=$(basename "$1" .part2.bt9.gz)
python3 "$W/read_bt9.py" "$T/out/$tid.bt9.gz" "$T/prog.truth" --parts 2 --lost-end || fail "bt9 parts"
python3 "$W/read_champsim.py" "$T/out/$tid.champsim.xz" "$T/prog.truth" "$T/prog.ips" --parts 2 --lost-end ||
	fail "champsim parts"
python3 "$W/read_cbp2025.py" "$T/out/$tid.cbp2025.gz" "$T/prog.truth" "$T/prog.ips" --parts 2 --lost-end ||
	fail "cbp2025 parts"
[ $(ls "$T/out" | wc -l) = 9 ] || fail "files after losses: $(ls "$T/out")"

fmt xtrace -x 10000
python3 "$W/read_xtrace.py" "$T/out" "$T/prog.truth" "$T/prog.ips" 10000 || fail xtrace
"$PTCONV" dump "$T"/out/xtrace.*.xinsndata.bin > "$T/xdump" || fail "dump xtrace"
grep -v '^#' "$T/xdump" | awk '{ print $2 }' | cmp -s - "$T/prog.ips" || fail "dump of xtrace differs"

# Two threads: one set of files per thread, each equal to its thread's truth.
${CC_FOR_TESTS:-cc} -O2 -static -pthread -o "$T/thr" "$W/threads.c" 2>"$T/cc.err" || skip "cannot build a static threaded program: $(cat "$T/cc.err")"
"$top_builddir/tests/ptgen/ptgen-trace" -o "$T/thr.truth" -- "$T/thr" >/dev/null || fail "ptgen-trace (threads)"
rm -rf "$T/out"; mkdir "$T/out"
"$B/truth2fmt" -f ptconv,bt9,champsim,cbp2025,xtrace -x 1000 -o "$T/out" "$T/thr.truth" 2>"$T/warn" || fail "writing (threads)"
[ -s "$T/warn" ] && { cat "$T/warn" >&2; fail "warnings writing (threads)"; }
tids=$(awk '$1 == "T" { print $4 }' "$T/thr.truth")
[ $(echo $tids | wc -w) = 2 ] || fail "want 2 threads, have: $tids"
for tid in $tids; do
	export TRUTH_TID=$tid
	python3 "$W/read_ptc.py" "$T/out/trace.$tid.ptc" "$T/thr.truth" || fail "ptc thread $tid"
	python3 "$W/read_bt9.py" "$T/out/trace.$tid.bt9.gz" "$T/thr.truth" || fail "bt9 thread $tid"
	python3 "$W/read_champsim.py" "$T/out/trace.$tid.champsim.xz" "$T/thr.truth" - || fail "champsim thread $tid"
	python3 "$W/read_cbp2025.py" "$T/out/trace.$tid.cbp2025.gz" "$T/thr.truth" - || fail "cbp2025 thread $tid"
	python3 "$W/read_xtrace.py" "$T/out" "$T/thr.truth" - 1000 || fail "xtrace thread $tid"
done
unset TRUTH_TID
exit 0
