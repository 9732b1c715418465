#!/bin/sh
# Attribution through sched:sched_switch samples (issue 3).  Real programs
# of the corpus (threads, fork + exec, posix_spawn) are single-stepped by
# ptgen-trace and encoded per CPU twice: with SWITCH_CPU_WIDE records, and
# with sched:sched_switch tracepoint samples instead (have_sched_switch 1),
# whose tracing data and event id come from a recording Linux perf makes
# here and now.  Oracles:
#   - perf script prints the same switches (cpu, time, next thread) from
#     the samples as from the SWITCH_CPU_WIDE records;
#   - perf's own Intel PT decoding of the sched_switch file (it uses the
#     samples when there are no switch records) lists exactly each thread's
#     taken branches of the truth (compare.py);
#   - ptconv's per-thread traces equal the truth exactly
#     (pt_truth_compare.py), and summary.json says every CPU
#     was attributed by sched_switch.
# The same in pipe mode (the tracing data in a HEADER_TRACING_DATA
# record), read by perf from a pipe.
# Then: damaged tracing data is reported (file: offset: reason) and
# counted; a LOST record gives the thread switched in a records-lost gap;
# a per-CPU trace without timing packets is reported per shared CPU.
. "${top_srcdir:-.}/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
need_perf
need_encoder
"$PERF" record -q -e sched:sched_switch -a -o "$T/real.data" -- true > "$T/rec.err" 2>&1 ||
	skip "perf cannot record sched:sched_switch here: $(tail -1 "$T/rec.err")"

# switches CPU TIME NEXT_TID, from perf script of either kind of file
sched_switches() {
	"$PERF" script -i "$1" -F cpu,time,trace 2>/dev/null |
		sed -n 's/^\[0*\([0-9][0-9]*\)\] *\([0-9.]*\):.* next_pid=\([0-9]*\) .*/\1 \2 \3/p'
}
cpu_wide_switches() {
	"$PERF" script -i "$1" --show-switch-events -F cpu,time 2>/dev/null |
		sed -n 's/^\[0*\([0-9][0-9]*\)\] *\([0-9.]*\): PERF_RECORD_SWITCH_CPU_WIDE OUT.*next pid\/tid: *[0-9]*\/\([0-9]*\).*/\1 \2 \3/p'
}
# json_get FILE EXPR: a python expression on the summary (s)
json_get() {
	python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"
}
# convert_exact DATA LABEL ENGINE [COMPARE-OPTIONS...]: ptconv's per-thread
# traces of DATA equal the truth $T/$p.truth with no gap, every CPU was
# attributed by sched_switch, from as many samples as perf printed ($nsw).
convert_exact() {
	data=$1 label=$2 eng=$3
	shift 3
	rm -rf "$T/out"
	"$PTCONV" "$data" -f text -o "$T/out" --buildid-dir "$T/bid" -q --engine=$eng ||
		fail "$label: ptconv exited $? ($eng)"
	$CMP "$T/$p.truth" "$T/out" --expect-gaps 0 "$@" > "$T/cmp" ||
		{ cat "$T/cmp" >&2; fail "$label $eng: ptconv disagrees with the truth"; }
	src=$(json_get "$T/out/summary.json" "' '.join(sorted(set(c['source'] for c in s['attribution']['cpus'])))")
	[ "$src" = sched_switch ] || fail "$label: attributed by '$src', want sched_switch"
	n=$(json_get "$T/out/summary.json" "s['attribution']['sched_switch_samples']")
	[ "$n" -eq "$nsw" ] || fail "$label: ptconv read $n sched_switch samples, perf $nsw"
}

for p in c_threads c_forkexec c_spawn; do
	trace_corpus "$p"
	threads=$(awk '$1 == "B" { print $3 }' "$T/$p.truth" | sort -u | wc -l)
	# c_spawn's child (posix_spawn: clone with CLONE_VM|CLONE_VFORK)
	# returns through calls its parent made on the same CPU: with RET
	# compression that needs the CPU's return stack, which ptconv's
	# decoder keeps per thread (with SWITCH_CPU_WIDE records too), so it
	# is encoded without RET compression, or on a CPU of its own.
	variants="1 2"
	[ $p != c_spawn ] || variants="1:--noretcomp 3"
	for v in $variants; do
		cpus=${v%%:*}
		opts=""
		case $v in *:*) opts=${v#*:} ;; esac
		# shellcheck disable=SC2086
		"$ENC" --cpus $cpus $opts --buildid-dir "$T/bid" -o "$T/n.data" "$T/$p.truth" ||
			fail "$p: ptgen-encode --cpus $cpus"
		# shellcheck disable=SC2086
		"$ENC" --cpus $cpus $opts --sched-switch "$T/real.data" --buildid-dir "$T/bid" \
			-o "$T/s.data" "$T/$p.truth" || fail "$p: ptgen-encode --sched-switch"
		cpu_wide_switches "$T/n.data" > "$T/n.sw"
		sched_switches "$T/s.data" > "$T/s.sw"
		nsw=$(wc -l < "$T/s.sw")
		[ "$nsw" -gt 0 ] || fail "$p: perf script shows no sched_switch samples"
		cmp -s "$T/n.sw" "$T/s.sw" ||
			{ diff "$T/n.sw" "$T/s.sw" | head >&2; fail "$p --cpus $cpus: perf's sched_switch events differ from the switch records"; }
		"$PERF" --buildid-dir "$T/bid" script -i "$T/s.data" --itrace=be \
			-F tid,ip,addr,flags > "$T/s.perf" 2> "$T/s.perr" ||
			fail "$p: perf script --itrace=be failed: $(tail -1 "$T/s.perr")"
		$PCMP "$T/$p.truth" "$T/s.perf" > "$T/s.pcmp" ||
			{ cat "$T/s.pcmp" >&2; fail "$p --cpus $cpus: perf's decoding by sched_switch disagrees with the truth"; }
		# (the libipt engine cannot tell the direction of a jcc to its
		# own fall-through, whatever the attribution: c_nolibc, which the
		# other two exec, has some; see pt_libipt_jcc0.sh)
		for eng in walker libipt; do
			any=""
			[ $eng = walker ] || any=--jcc0-any
			# shellcheck disable=SC2086
			convert_exact "$T/s.data" "$p --cpus $cpus" $eng $any
		done
		echo "ok - $p --cpus $cpus $opts: $nsw sched_switch samples; perf: $(tr '\n' ' ' < "$T/s.pcmp");" \
		     "ptconv: $(grep -c reproduced "$T/cmp") of $threads threads exact"
	done
done

# Pipe mode (perf record -o -): the tracing data travels in a
# HEADER_TRACING_DATA record before the samples.  perf reads the pipe file
# (from a pipe) and prints the same switches as from the file-mode one,
# its Intel PT decoding by sched_switch matches the truth, and so do
# ptconv's traces, with both engines.
p=c_threads
"$ENC" --cpus 2 --sched-switch "$T/real.data" --buildid-dir "$T/bid" -o "$T/s.data" "$T/$p.truth" ||
	fail "ptgen-encode --sched-switch"
"$ENC" --cpus 2 --pipe --sched-switch "$T/real.data" --buildid-dir "$T/bid" -o - "$T/$p.truth" > "$T/sp.data" ||
	fail "ptgen-encode --pipe --sched-switch"
python3 - "$T/sp.data" <<'EOF2' || fail "no HEADER_TRACING_DATA record in the pipe file"
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"PERFILE2" and struct.unpack_from("<Q", d, 8)[0] == 16
off = 16
while off + 8 <= len(d):
    typ, misc, size = struct.unpack_from("<IHH", d, off)
    if typ == 66:
        tsz = struct.unpack_from("<I", d, off + 8)[0]
        assert size == 12 and tsz % 8 == 0 and off + size + tsz <= len(d)
        sys.exit(0)
    assert typ >= 64 and size >= 8, "kernel record before the tracing data"
    off += size
sys.exit(1)
EOF2
sched_switches "$T/s.data" > "$T/s.sw"
# through a real pipe (perf treats a redirected file differently)
cat "$T/sp.data" | sched_switches - > "$T/sp.sw"
nsw=$(wc -l < "$T/sp.sw")
[ "$nsw" -gt 0 ] || fail "pipe: perf script shows no sched_switch samples"
cmp -s "$T/s.sw" "$T/sp.sw" ||
	{ diff "$T/s.sw" "$T/sp.sw" | head >&2; fail "pipe: perf reads other switches than from the file-mode recording"; }
# (hw: the fields of the branch samples only: in a pipe perf checks -F
# against each attr as it arrives, and the tracepoint has no ADDR)
cat "$T/sp.data" | "$PERF" --buildid-dir "$T/bid" script -i - --itrace=be -F hw:tid,ip,addr,flags \
	> "$T/sp.perf" 2> "$T/sp.perr" ||
	fail "pipe: perf script --itrace=be failed: $(tail -1 "$T/sp.perr")"
$PCMP "$T/$p.truth" "$T/sp.perf" > "$T/sp.pcmp" ||
	{ cat "$T/sp.pcmp" >&2; fail "pipe: perf's decoding by sched_switch disagrees with the truth"; }
for eng in walker libipt; do
	convert_exact "$T/sp.data" pipe $eng
done
echo "ok - $p --cpus 2 --pipe: $nsw sched_switch samples, as in file mode; perf: $(tr '\n' ' ' < "$T/sp.pcmp");" \
     "ptconv (walker, libipt): $(grep -c reproduced "$T/cmp") threads exact"

# Real recordings, file and pipe mode (HEADER_TRACING_DATA record): per
# CPU, ptconv info keeps as many switches (perf script's samples, a switch
# to the thread already running counted once) to as many distinct threads
# as perf script prints.
"$PERF" record -q -e sched:sched_switch -a -o - -- sleep 0.05 > "$T/real-pipe.data" 2> "$T/rec.err" ||
	fail "perf record -o - failed: $(tail -1 "$T/rec.err")"
for f in real real-pipe; do
	if [ $f = real ]; then in="$T/$f.data"; else in=-; fi
	"$PERF" script -i "$in" -F cpu,trace < "$T/$f.data" 2>/dev/null |
		sed -n 's/^\[0*\([0-9][0-9]*\)\].* next_pid=\([0-9]*\) .*/\1 \2/p' |
		awk '{ if (!($1 in last) || last[$1] != $2) n[$1]++; last[$1] = $2
		       if ($2 != 0 && !seen[$1 " " $2]++) t[$1]++ }
		     END { for (c in n) print c, n[c], t[c] + 0 }' | sort -n > "$T/perf.cpus"
	[ -s "$T/perf.cpus" ] || fail "$f: perf script shows no sched_switch"
	"$PTCONV" info --json "$T/$f.data" > "$T/info.json" 2> "$T/info.err" || fail "$f: ptconv info failed"
	json_get "$T/info.json" "'\\n'.join('%d %d %d' % (c['cpu'], c['switches'], c['threads']) for c in s['attribution']['cpus'] if c['source'] == 'sched_switch')" > "$T/ptc.cpus"
	cmp -s "$T/perf.cpus" "$T/ptc.cpus" ||
		{ paste "$T/perf.cpus" "$T/ptc.cpus" >&2; fail "$f: ptconv info and perf script disagree on the sched_switch samples"; }
	echo "ok - $f recording: per CPU (cpu samples threads): $(tr '\n' ' ' < "$T/ptc.cpus")"
done

# Damaged tracing data: the container's tag is overwritten; ptconv says
# where, counts the samples it could not read, and still converts.
p=c_threads
"$ENC" --cpus 2 --sched-switch "$T/real.data" --buildid-dir "$T/bid" -o "$T/s.data" "$T/$p.truth" ||
	fail "ptgen-encode"
python3 - "$T/s.data" "$T/bad.data" <<'EOF' || fail "cannot damage the tracing data"
import sys
d = bytearray(open(sys.argv[1], "rb").read())
k = d.find(b"\x17\x08\x44tracing")
assert k > 0
d[k + 3:k + 10] = b"traXing"
open(sys.argv[2], "wb").write(d)
EOF
rm -rf "$T/out"
"$PTCONV" "$T/bad.data" -f text -o "$T/out" --buildid-dir "$T/bid" > /dev/null 2> "$T/bad.err"
off=$(python3 -c "import sys; print(hex(open(sys.argv[1], 'rb').read().find(b'\x17\x08\x44tracing')))" "$T/s.data")
grep -q "bad.data: offset $off: tracing data: not a container of perf's" "$T/bad.err" ||
	{ cat "$T/bad.err" >&2; fail "damaged tracing data not reported"; }
n=$(json_get "$T/out/summary.json" "s['attribution']['bad_sched_switch_samples']")
[ "$n" -gt 0 ] || fail "unreadable sched_switch samples not counted"
echo "ok - damaged tracing data reported, $n samples counted as unreadable"

# A LOST record just before a switch: the thread switched in gets a
# records-lost gap; the branches stay exact around it.
# (the first switch after the first one that gives the CPU to a thread, not to idle)
for k in 2 3 4 5 6 7 8; do
	"$ENC" --cpus 2 --sched-switch "$T/real.data" --lost-at-switch $k --buildid-dir "$T/bid" \
		-o "$T/l.data" "$T/$p.truth" 2> "$T/l.err" || fail "ptgen-encode --lost-at-switch"
	tid=$(sed -n 's/.*before the switch to tid \([0-9]*\)$/\1/p' "$T/l.err")
	[ -n "$tid" ] || fail "ptgen-encode did not say where the LOST record is"
	[ "$tid" -eq 0 ] || break
done
[ "$tid" -ne 0 ] || fail "no switch to a thread to put a LOST record before"
rm -rf "$T/out"
"$PTCONV" "$T/l.data" -f text -o "$T/out" --buildid-dir "$T/bid" -q || fail "ptconv on l.data"
grep -q "^$tid gap records-lost " "$T/out/"*"-$tid.txt" ||
	fail "thread $tid has no records-lost gap"
n=$(json_get "$T/out/summary.json" "s['gaps_by_cause']['records-lost']")
[ "$n" -ge 1 ] || fail "records-lost gaps not counted in summary.json"
$CMP "$T/$p.truth" "$T/out" > "$T/cmp" || { cat "$T/cmp" >&2; fail "branches around the LOST record"; }
echo "ok - LOST record: records-lost gap for thread $tid, $n in the summary"

# No timing packets, several threads on one CPU: said per CPU, counted.
"$ENC" --cpus 1 --timing=none --sched-switch "$T/real.data" --buildid-dir "$T/bid" \
	-o "$T/u.data" "$T/$p.truth" || fail "ptgen-encode --timing=none"
rm -rf "$T/out"
"$PTCONV" "$T/u.data" -f text -o "$T/out" --buildid-dir "$T/bid" > /dev/null 2> "$T/u.err"
grep -q "warning: cpu 0: 3 threads ran on it but the trace has no timing packets" "$T/u.err" ||
	{ cat "$T/u.err" >&2; fail "untimed shared CPU not reported"; }
n=$(json_get "$T/out/summary.json" "s['attribution']['untimed_shared_cpus']")
[ "$n" -eq 1 ] || fail "untimed_shared_cpus = $n, want 1"
echo "ok - untimed per-CPU trace: shared CPU reported"
exit 0
