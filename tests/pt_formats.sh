#!/bin/sh
# Every output format from a real Intel PT conversion: real programs are
# single-stepped by ptgen-trace (the ground truth), encoded by ptgen-encode
# into the perf.data `perf record -e intel_pt//u` would write, converted by
# `ptconv convert -f ptconv,bt9,champsim,cbp2025,xtrace --bbv N`, and every
# output is read back by the independent readers of tests/writers/ (written
# from the format descriptions) and compared with the truth; `ptconv dump`
# and `ptconv stats` on the .ptc must agree with the truth's totals.  The
# oracle is always the truth file (and the stepper's instruction list),
# never ptconv's output.  Branch times are left out (TRUTH_NO_TIMES): the
# conversion stamps perf times of timing packets, not the truth's clock.
. "${top_srcdir:-.}/tests/lib/common.sh"
TRACE="$top_builddir/tests/ptgen/ptgen-trace"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
W="$top_srcdir/tests/writers"
B="$top_builddir/tests/writers"
CC_=${CC_FOR_TESTS:-cc}
[ -x "$ENC" ] || skip "ptgen-encode not built"
command -v python3 >/dev/null || skip "python3 not installed"
command -v zstd >/dev/null || skip "zstd not installed"
scratch
FORMATS=ptconv,bt9,champsim,cbp2025,xtrace
BBV=5000
export TRUTH_NO_TIMES=1
prog_truth

convert() {	# OUT ENGINE ENCODER-OPTIONS... (the truth is $truth)
	out=$1 eng=$2
	shift 2
	rm -rf "$out" "$T/t.data"
	"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" "$@" "$truth" 2>"$T/enc.err" ||
		fail "ptgen-encode $*: $(tail -1 "$T/enc.err")"
	"$PTCONV" convert "$T/t.data" -f $FORMATS --bbv $BBV -o "$out" --buildid-dir "$T/bid" \
		--engine="$eng" 2>"$T/conv.err"
	st=$?
	[ $st -eq 0 ] || { cat "$T/conv.err" >&2; fail "ptconv exited $st ($eng, $*)"; }
	# exact conversions: no gap, no writer warning (e.g. missing code bytes)
	grep -q "warning" "$T/conv.err" && { cat "$T/conv.err" >&2; fail "warnings ($eng, $*)"; }
	grep -q " 0 gaps (" "$T/conv.err" || { cat "$T/conv.err" >&2; fail "gaps ($eng, $*)"; }
	# and so one file per format and thread
	ls "$out" | grep '\.part[0-9]' && fail "part files without a loss ($eng, $*)"
	return 0
}

# summary.json lists exactly the files written (besides itself)
check_summary() {	# OUT
	python3 - "$1" <<'EOF' || fail "summary.json files ($1)"
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
listed = sorted(f for t in s["threads"] for f in t["files"])
have = sorted(f for f in os.listdir(d) if f != "summary.json")
if listed != have:
    sys.exit("summary lists %r, directory has %r" % (listed, have))
if "start" in s["gaps_by_cause"]:
    sys.exit("the stream start is counted as a gap")
EOF
}

# stats: totals and branch mix against the truth (awk over its B lines)
check_stats() {	# PTC TRUTH TID
	"$PTCONV" stats "$1" > "$T/stats" || fail "stats $1"
	awk -v tid="$3" '$1 == "B" && (tid == "" || $3 == tid) { n++; i += $9; k[$6]++; if ($6 == 5) t += $7 }
	     END { printf "instructions: %d\nbranches: %d\ncond %d %.2f%%\n", i, n, k[5], 100 * t / k[5] }' \
		"$2" > "$T/stats.want"
	{ grep '^instructions:' "$T/stats"; grep '^branches:' "$T/stats" | cut -d' ' -f1-2
	  awk '$1 == "cond" { print "cond", $2, $5 }' "$T/stats"; } > "$T/stats.got"
	diff "$T/stats.want" "$T/stats.got" >&2 || fail "stats of $1 differ from the ground truth"
	# --json: every kind's executions and taken ones, and the 25 hottest
	# branches (executions, then address) with their kind and taken count
	"$PTCONV" stats --json --top 25 "$1" > "$T/stats.json" || fail "stats --json $1"
	python3 - "$T/stats.json" "$2" "$3" <<'PY' || fail "stats --json of $1 differ from the ground truth"
import json, sys
s = json.load(open(sys.argv[1]))
names = ["jmp", "jmp-ind", "call", "call-ind", "ret", "cond", "far"]
n, insns, kinds, sites = 0, 0, {}, {}
for line in open(sys.argv[2]):
    f = line.split()
    if not f or f[0] != "B" or (sys.argv[3] and f[2] != sys.argv[3]):
        continue
    ip, kind, taken = int(f[3], 16), int(f[5]), int(f[6])
    n += 1
    insns += int(f[8])
    k = kinds.setdefault(names[kind], [0, 0])
    k[0] += 1
    k[1] += taken
    e = sites.setdefault(ip, [0, 0, kind])
    e[0] += 1
    e[1] += taken
if s["branches"] != n or s["instructions"] != insns or s["static_branches"] != len(sites):
    sys.exit("totals: %d %d %d, truth %d %d %d" % (s["branches"], s["instructions"], s["static_branches"],
                                                   n, insns, len(sites)))
for name in names:
    want = kinds.get(name, [0, 0])
    got = s["kinds"][name]
    if [got["executions"], got["taken"]] != want:
        sys.exit("%s: %r, truth %r" % (name, got, want))
hot = sorted(sites.items(), key=lambda x: (-x[1][0], x[0]))[:25]
want = [("0x%x" % ip, names[e[2]], e[0], e[1]) for ip, e in hot]
got = [(h["ip"], h["kind"], h["executions"], h["taken"]) for h in s["hottest"]]
if got != want:
    sys.exit("hottest: %r\ntruth:   %r" % (got[:3], want[:3]))
PY
}

# One program, one thread: every format, both engines, several encodings
# (the default one has return compression and TSC+MTC timing).
truth="$T/prog.truth"
for case in "walker" "libipt" "walker --noretcomp --timing=tsc,mtc,cyc" "walker --interrupt-every 700" \
	    "walker --per-thread --psb-period 0" "libipt --timing=none --per-thread"; do
	set -- $case
	eng=$1
	shift
	convert "$T/out" $eng "$@"
	check_summary "$T/out"
	set -- "$T"/out/trace.*.ptc
	[ $# = 1 ] && [ -f "$1" ] || fail "want one .ptc, have: $*"
	tid=$(basename "$1" .ptc)
	tid=${tid#trace.}
	python3 "$W/read_ptc.py" "$T/out/trace.$tid.ptc" "$truth" "$T/prog" "$START" || fail "ptc ($case)"
	python3 "$W/read_bbv.py" "$T/out/trace.$tid.bb" "$truth" $BBV "$START" || fail "bbv ($case)"
	python3 "$W/read_bt9.py" "$T/out/trace.$tid.bt9.gz" "$truth" || fail "bt9 ($case)"
	python3 "$W/read_champsim.py" "$T/out/trace.$tid.champsim.xz" "$truth" "$T/prog.ips" || fail "champsim ($case)"
	python3 "$W/read_cbp2025.py" "$T/out/trace.$tid.cbp2025.gz" "$truth" "$T/prog.ips" || fail "cbp2025 ($case)"
	python3 "$W/read_xtrace.py" "$T/out" "$truth" "$T/prog.ips" 1000000 || fail "xtrace ($case)"
	# dump lists every instruction from the code embedded in the trace alone
	"$PTCONV" dump -i "$T/out/trace.$tid.ptc" > "$T/dump" || fail "dump ($case)"
	awk '/^    0x/ { print $1 }' "$T/dump" | sed 's/^0x0*/0x/' > "$T/dump.ips"
	cmp -s "$T/dump.ips" "$T/prog.ips" || fail "dump -i does not list the executed instructions ($case)"
	check_stats "$T/out/trace.$tid.ptc" "$truth" ""
	# The encoder lost nothing and the thread starts once (no exec): no gap,
	# one stream start.
	grep -qx 'gaps: 0' "$T/stats" || fail "stats reports gaps ($case): $(grep '^gaps' "$T/stats")"
	grep -qx 'stream starts: 1' "$T/stats" || fail "stats: $(grep '^stream' "$T/stats") ($case)"
	echo "ok - $case: every format equals the ground truth"
done

# Losses: an overflow, a full AUX buffer, both, and an overflow that lasts
# to the end (ptgen-encode --ovf-at, --truncate; the encoder's --gaps file
# says where it lost data).  BT9, ChampSim and CBP2025 split into one
# complete file per gap-free run (trace.TID.EXT, then trace.TID.part1.EXT),
# xtrace marks the loss with an XGAP token; the independent readers check
# that each run is a run of the truth's branches (instructions), the first
# from the start, the last up to the end (or, when the stream ends in the
# loss, up to it: no empty part then), and that a ChampSim or CBP2025 part
# before a loss ends with the last branch before it.  champsim:gz once, to
# check both names.  Each case: the part files wanted (end: one file, the
# loss at the end), then the encoder options.
truth="$T/prog.truth"
for case in "1 --ovf-at 3000:100" "1 --truncate 200@1500" "2 --ovf-at 6000:100 --truncate 200@1500" \
	    "end --ovf-at 3000:100000"; do
	set -- $case
	n=$1
	shift
	loss=$*
	case $n in
	end) parts=--lost-end nloss=1 what="one file ending at the loss" ;;
	*) parts="--parts $n" nloss=$n what="$((n + 1)) files" ;;
	esac
	case $loss in --ovf*) cs=champsim.xz cso=champsim ;; *) cs=champsim.gz cso=champsim:gz ;; esac
	rm -rf "$T/out" "$T/t.data"
	"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" --gaps "$T/gaps" $loss "$truth" 2>"$T/enc.err" ||
		fail "ptgen-encode $loss: $(tail -1 "$T/enc.err")"
	# (a loss without resumption ends the file without a newline)
	[ $(grep -c '' "$T/gaps") = $nloss ] || fail "ptgen-encode $loss: want $nloss losses, have $(cat "$T/gaps")"
	"$PTCONV" convert "$T/t.data" -f ptconv,bt9,$cso,cbp2025,xtrace -o "$T/out" --buildid-dir "$T/bid" -q
	st=$?
	[ $st -le 1 ] || fail "ptconv exited $st ($loss)"
	set -- "$T"/out/trace.*.ptc
	tid=$(basename "$1" .ptc)
	tid=${tid#trace.}
	"$PTCONV" stats "$1" | grep -q "^gaps: $nloss " || fail "stats: not $nloss gaps ($loss)"
	python3 "$W/read_bt9.py" "$T/out/trace.$tid.bt9.gz" "$truth" $parts || fail "bt9 parts ($loss)"
	python3 "$W/read_champsim.py" "$T/out/trace.$tid.$cs" "$truth" "$T/prog.ips" $parts ||
		fail "champsim parts ($loss)"
	python3 "$W/read_cbp2025.py" "$T/out/trace.$tid.cbp2025.gz" "$truth" "$T/prog.ips" $parts ||
		fail "cbp2025 parts ($loss)"
	xend=
	[ $n = end ] && xend="--lost-end"
	python3 "$W/read_xtrace.py" "$T/out" "$truth" "$T/prog.ips" 1000000 $nloss $xend || fail "xtrace gaps ($loss)"
	[ "$("$PTCONV" dump "$T"/out/xtrace.*.xinsndata.bin | grep -c '^# gap: cause')" = $nloss ] ||
		fail "dump does not show $nloss xtrace gaps ($loss)"
	check_summary "$T/out"
	echo "ok - $loss: bt9, $cs and cbp2025 in $what, xtrace with $nloss XGAP, all runs of the ground truth"
done

# Per-format options in the -f list: compression levels, champsim as .gz.
truth="$T/prog.truth"
convert "$T/out" walker
rm -rf "$T/opt"
"$PTCONV" "$T/t.data" -f ptconv:3,bt9:1,champsim:gz:1,cbp2025:9 -o "$T/opt" --buildid-dir "$T/bid" -q ||
	fail "-f with options"
set -- "$T"/opt/trace.*.ptc
tid=$(basename "$1" .ptc)
tid=${tid#trace.}
python3 "$W/read_ptc.py" "$1" "$truth" "$T/prog" "$START" || fail "ptc (ptconv:3)"
python3 "$W/read_bt9.py" "$T/opt/trace.$tid.bt9.gz" "$truth" || fail "bt9 (bt9:1)"
python3 "$W/read_champsim.py" "$T/opt/trace.$tid.champsim.gz" "$truth" "$T/prog.ips" || fail "champsim:gz:1"
python3 "$W/read_cbp2025.py" "$T/opt/trace.$tid.cbp2025.gz" "$truth" "$T/prog.ips" || fail "cbp2025:9"
check_summary "$T/opt"
for bad in champsim:7x xtrace:3 bbv:1 ptconv:23 cbp2025:0 bt9:gz; do
	"$PTCONV" "$T/t.data" -f $bad -o "$T/bad" -q 2>/dev/null && fail "-f $bad accepted"
done
echo "ok - -f options: levels, champsim .gz; bad options refused"
# -j compresses on several threads, in the same bytes (tests/writers/formats.sh
# checks files of many compressed blocks).
for j in 1 2 3; do
	rm -rf "$T/optj$j"
	"$PTCONV" "$T/t.data" -j $j -f ptconv:3,bt9:1,champsim:gz:1,cbp2025:9 -o "$T/optj$j" \
		--buildid-dir "$T/bid" -q || fail "-j $j"
	"$PTCONV" "$T/t.data" -j $j -f champsim -o "$T/optj$j/xz" --buildid-dir "$T/bid" -q || fail "-j $j (xz)"
	for f in champsim.gz cbp2025.gz bt9.gz ptc xz/trace.$tid.champsim.xz; do
		case $f in xz/*) p=$f ;; *) p=trace.$tid.$f ;; esac
		cmp "$T/optj1/$p" "$T/optj$j/$p" || fail "-j $j: $p differs from -j 1"
	done
done
echo "ok - -j 2 and 3 write the same bytes as -j 1"

# --time keeps a window of the trace: the per-instruction writers get a
# start record where the window begins and must find every block of it in
# the code (they warn when a block does not end at its branch).
convert "$T/out" walker		# the default encoding (TSC + MTC timing)
"$PTCONV" "$T/t.data" -f $FORMATS --bbv $BBV --time 1000010000,1000020000 -o "$T/tw" \
	--buildid-dir "$T/bid" 2>"$T/conv.err" || fail "--time"
grep -q warning "$T/conv.err" && { cat "$T/conv.err" >&2; fail "--time: warnings"; }
n=$("$PTCONV" stats "$T"/tw/trace.*.ptc | awk '$1 == "branches:" { print $2 }')
[ "$n" -gt 0 ] && [ "$n" -lt $(grep -c '^B ' "$T/prog.truth") ] || fail "--time kept $n branches"
echo "ok - --time window: $n branches, every block found"

# The default format is ptconv.
rm -rf "$T/def"
"$PTCONV" "$T/t.data" -o "$T/def" --buildid-dir "$T/bid" -q || fail "ptconv without -f"
[ "$(ls "$T/def" | grep -v summary.json)" = "trace.$tid.ptc" ] || fail "default output: $(ls "$T/def")"
"$PTCONV" "$T/t.data" -f bogus -o "$T/def" -q 2>"$T/err" && fail "-f bogus accepted"
grep -q "unknown format 'bogus'" "$T/err" || fail "-f bogus: $(cat "$T/err")"
echo "ok - default format ptconv, unknown format refused"

# Two threads (static): one set of files per thread, each equal to its
# thread's truth; per-thread AUX queues, and per-CPU queues.
"$CC_" -O2 -static -pthread -o "$T/thr" "$W/threads.c" 2>"$T/cc.err" ||
	skip "cannot build a static threaded program: $(cat "$T/cc.err")"
"$TRACE" -o "$T/thr.truth" -- "$T/thr" >/dev/null 2>"$T/trace.err" || fail "ptgen-trace (threads)"
tids=$(awk '$1 == "T" { print $4 }' "$T/thr.truth")
[ $(echo $tids | wc -w) = 2 ] || fail "want 2 threads, have: $tids"
truth="$T/thr.truth"
for case in "walker --per-thread" "libipt --per-thread" "walker" "walker --cpus 2"; do
	set -- $case
	eng=$1
	shift
	convert "$T/out" $eng "$@"
	check_summary "$T/out"
	for tid in $tids; do
		export TRUTH_TID=$tid
		python3 "$W/read_ptc.py" "$T/out/trace.$tid.ptc" "$truth" || fail "ptc thread $tid ($case)"
		python3 "$W/read_bbv.py" "$T/out/trace.$tid.bb" "$truth" $BBV || fail "bbv thread $tid ($case)"
		python3 "$W/read_bt9.py" "$T/out/trace.$tid.bt9.gz" "$truth" || fail "bt9 thread $tid ($case)"
		python3 "$W/read_champsim.py" "$T/out/trace.$tid.champsim.xz" "$truth" - ||
			fail "champsim thread $tid ($case)"
		python3 "$W/read_cbp2025.py" "$T/out/trace.$tid.cbp2025.gz" "$truth" - ||
			fail "cbp2025 thread $tid ($case)"
		python3 "$W/read_xtrace.py" "$T/out" "$truth" - 1000000 || fail "xtrace thread $tid ($case)"
		check_stats "$T/out/trace.$tid.ptc" "$truth" $tid
	done
	unset TRUTH_TID
	echo "ok - threads, $case: every thread's files equal its ground truth"
done

# A dynamically linked program: shared libraries, a clock_gettime in the
# vDSO (its code comes from the build-id directory ptgen-encode fills, like
# perf's cache), two threads, then fork + exec of /bin/true: the child's
# stream goes on in the new program, execve's far branch with the new
# entry as its target (where user mode resumed: ptconv-trace(5)), and the
# child is named after the new program.
"$CC_" -O1 -pthread -o "$T/pt_threads" "$top_srcdir/tests/ptprog/pt_threads.c" 2>"$T/cc.err" ||
	skip "cannot build the dynamic test program: $(cat "$T/cc.err")"
"$TRACE" -o "$T/dyn.truth" -- "$T/pt_threads" /bin/true >/dev/null 2>"$T/trace.err" ||
	skip "ptgen-trace cannot trace pt_threads here: $(tail -1 "$T/trace.err")"
truth="$T/dyn.truth"
for eng in walker libipt; do
	convert "$T/out" $eng --per-thread
	check_summary "$T/out"
	[ -n "$(ls "$T/bid/[vdso]" 2>/dev/null)" ] || fail "no vDSO in the build-id directory"
	n=0
	for tid in $(awk '$1 == "T" { print $4 }' "$truth"); do
		export TRUTH_TID=$tid
		# (the exec'd child too: execve's far branch goes to the new
		# program's entry, and the thread is named after the new program)
		python3 "$W/read_ptc.py" "$T/out/trace.$tid.ptc" "$truth" || fail "ptc thread $tid ($eng)"
		python3 "$W/read_bt9.py" "$T/out/trace.$tid.bt9.gz" "$truth" || fail "bt9 thread $tid ($eng)"
		python3 "$W/read_bbv.py" "$T/out/trace.$tid.bb" "$truth" $BBV || fail "bbv thread $tid ($eng)"
		python3 "$W/read_champsim.py" "$T/out/trace.$tid.champsim.xz" "$truth" - ||
			fail "champsim thread $tid ($eng)"
		python3 "$W/read_cbp2025.py" "$T/out/trace.$tid.cbp2025.gz" "$truth" - ||
			fail "cbp2025 thread $tid ($eng)"
		python3 "$W/read_xtrace.py" "$T/out" "$truth" - 1000000 || fail "xtrace thread $tid ($eng)"
		check_stats "$T/out/trace.$tid.ptc" "$truth" $tid
		n=$((n + 1))
	done
	unset TRUTH_TID
	[ $n -ge 4 ] || fail "the truth has $n threads, want 4"
	echo "ok - dynamic program with vDSO and exec, $eng: $n threads equal their ground truth"
done
exit 0
