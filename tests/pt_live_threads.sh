#!/bin/sh
# Many threads alive at once, with few outputs open (--max-open-outputs).
# A ptgen-walk of 10 threads that take turns every few hundred branches,
# all alive to the end, is converted to champsim (xz and gz), cbp2025 and
# xtrace and bt9 with at most 4 threads' outputs open: the others are
# suspended (their files closed, their compressors freed) and appended to
# when their thread runs again, a champsim file going on as the same xz
# stream or gzip member (ChampSim's reader reads one: read_champsim.py
# refuses a second), a cbp2025 file with a new gzip member.  Each thread's
# files, read back by the independent readers of tests/writers, must equal
# its ground truth; they must decompress to the same bytes as without the
# limit (also with 1 open), be the same bytes
# with -j 1 and -j 2, and the conversion must work with fewer file
# descriptors than the threads' outputs need all at once (ulimit -n).
# ptconv's own format (.ptc) is suspended too: each thread's file must equal
# its truth (read_ptc.py), hold more chunks than without the limit (each
# suspension ends one) and the same records, and be the same bytes with
# -j 1 and -j 2.
# (--escape 0 and seed 5: no asynchronous exit right after a branch before
# the end, where the readers and the writers do not agree on the record
# after the branch; not what this test is about, and checked below)
. "${top_srcdir:-.}/tests/lib/common.sh"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
W="$top_srcdir/tests/writers"
[ -x "$WALK" ] || skip "ptgen-walk not built"
command -v python3 >/dev/null || skip "python3 not installed"
command -v xz >/dev/null || skip "xz not installed"
# a real binary with plenty of code (walk_binary, tests/lib/common.sh)
BIN=$(walk_binary)
scratch
N=10
"$WALK" --threads $N --branches 24000 --slice 600 --escape 0 --seed 5 --truth "$T/w.truth" -o "$T/w.data" "$BIN" \
	2>"$T/err" || { cat "$T/err"; fail "ptgen-walk"; }
tids=$(awk '$1 == "T" { print $4 }' "$T/w.truth")
[ "$(echo $tids | wc -w)" -eq $N ] || fail "the truth has $(echo $tids | wc -w) threads, want $N"
# every thread runs again after the others: all alive at once
[ "$(awk '$1 == "S"' "$T/w.truth" | wc -l)" -ge $((3 * N)) ] || fail "threads do not take turns"
last=$(tail -1 "$T/w.truth" | awk '{ print $2 }')
[ "$(awk -v l="$last" '$1 == "A" && $2 != l' "$T/w.truth" | wc -l)" -eq 0 ] ||
	fail "the walk has asynchronous exits before its end"

# conv DIR FORMATS [OPTIONS]: convert w.data into DIR
conv() {
	d=$1 f=$2
	shift 2
	rm -rf "$T/$d"
	"$PTCONV" convert "$DATA" -f "$f" -o "$T/$d" -q "$@" 2>"$T/err" ||
		{ cat "$T/err" >&2; fail "$d: ptconv -f $f $* exited $?"; }
	grep -q . "$T/err" && { cat "$T/err" >&2; fail "$d: messages"; }
	return 0
}
# unz FILE: the decompressed bytes (of a .ptc, its records: a suspension
# ends a chunk, so the file's bytes differ, not what it holds)
unz() {
	case $1 in
	*.xz) xz -dc "$1" ;;
	*.gz) gzip -dc "$1" ;;
	*.ptc) "$PTCONV" dump "$1" | grep -v '^#' ;;
	*) cat "$1" ;;
	esac
}
# chunks FILE.ptc: its number of chunks (ptconv stats)
chunks() { "$PTCONV" stats "$1" | sed -n 's/.*format version [0-9]*, \([0-9]*\) chunks.*/\1/p'; }
# same_content A B: every file of A decompresses to what B's does
same_content() {
	n=0
	for f in "$T/$1"/trace.* "$T/$1"/xtrace.*; do
		[ -e "$f" ] || continue
		g="$T/$2/$(basename "$f")"
		[ -e "$g" ] || fail "$2: no $(basename "$f")"
		unz "$f" > "$T/x" && unz "$g" > "$T/y" || fail "$(basename "$f"): not a valid stream"
		cmp -s "$T/x" "$T/y" || fail "$1 and $2: $(basename "$f") differs once decompressed"
		n=$((n + 1))
	done
	[ $n -ge $N ] || fail "$1: only $n files"
}
# same_bytes A B: the same files, byte for byte
same_bytes() {
	(cd "$T/$1" && ls trace.* xtrace.* 2>/dev/null) > "$T/la"
	(cd "$T/$2" && ls trace.* xtrace.* 2>/dev/null) > "$T/lb"
	cmp -s "$T/la" "$T/lb" || fail "$1 and $2: not the same files"
	while read -r f; do
		cmp -s "$T/$1/$f" "$T/$2/$f" || fail "$1 and $2: $f differs"
	done < "$T/la"
}
# check_truth DIR: every thread's files against its ground truth
check_truth() {
	for tid in $tids; do
		export TRUTH_TID=$tid
		for f in "$T/$1"/trace.$tid.champsim.*; do
			[ -e "$f" ] || continue
			# one xz stream or gzip member, however often suspended
			python3 "$W/read_champsim.py" "$f" "$T/w.truth" - > /dev/null || fail "$1: $f"
		done
		if [ -e "$T/$1/trace.$tid.cbp2025.gz" ]; then
			python3 "$W/read_cbp2025.py" "$T/$1/trace.$tid.cbp2025.gz" "$T/w.truth" - > /dev/null ||
				fail "$1: cbp2025 of thread $tid"
		fi
		if [ -e "$T/$1/trace.$tid.bt9.gz" ]; then
			python3 "$W/read_bt9.py" "$T/$1/trace.$tid.bt9.gz" "$T/w.truth" > /dev/null ||
				fail "$1: bt9 of thread $tid"
		fi
		if ls "$T/$1"/xtrace.*.$tid.hint9.xinsndata.bin > /dev/null 2>&1; then
			python3 "$W/read_xtrace.py" "$T/$1" "$T/w.truth" - 1000000 > /dev/null ||
				fail "$1: xtrace of thread $tid"
		fi
	done
	unset TRUTH_TID
}

DATA=$T/w.data
F=champsim,cbp2025,xtrace,bt9
conv all $F
conv lim $F --max-open-outputs 4
check_truth lim
same_content all lim
# the limit was reached: files were closed and went on, each still one
# xz stream, whose blocks end where it was suspended (xz's own count)
xz --robot -l "$T"/lim/trace.*.champsim.xz | awk '$1 == "totals" { print $2, $3 }' > "$T/sb"
read -r streams blocks < "$T/sb"
[ "$streams" -eq $N ] || fail "$streams xz streams in $N files"
[ "$blocks" -gt $((2 * N)) ] || fail "only $blocks xz blocks in $N files: nothing was suspended"
# and summary.json says so: each block after a file's first follows a suspension
python3 - "$T/lim/summary.json" "$blocks" $N <<'PY' || fail "summary.json: max_open_outputs/output_suspensions"
import json, sys
s = json.load(open(sys.argv[1]))
blocks, n = int(sys.argv[2]), int(sys.argv[3])
assert s["max_open_outputs"] == 4, s["max_open_outputs"]
assert s["output_suspensions"] >= blocks - n, (s["output_suspensions"], blocks, n)
PY
# gzip_members FILE...: the members of all of them
gzip_members() {
	for f in "$@"; do
		python3 -c 'import sys, zlib
d = open(sys.argv[1], "rb").read(); n = 0
while d:
    o = zlib.decompressobj(31); o.decompress(d); d = o.unused_data; n += 1
print(n)' "$f"; done | awk '{ s += $1 } END { print s }'
}
members=$(gzip_members "$T"/lim/trace.*.cbp2025.gz)
[ "$members" -gt $((2 * N)) ] || fail "only $members gzip members in $N files: nothing was suspended"
# a bt9 file is a header member, the edge sequence's member (its side file,
# suspended as one member goes on) and an EOF member, with or without the limit
bt9=$(gzip_members "$T"/lim/trace.*.bt9.gz)
[ "$(gzip_members "$T"/all/trace.*.bt9.gz)" -eq $((3 * N)) ] || fail "bt9 without a limit: not 3 members per file"
[ "$bt9" -eq $((3 * N)) ] || fail "bt9 with the limit: $bt9 gzip members in $N files, not 3 each"
ls "$T"/lim/*.tmp "$T"/all/*.tmp 2>/dev/null && fail "side files left behind"
echo "ok - $N live threads, 4 open: champsim.xz, cbp2025, xtrace, bt9 equal to the truth ($streams xz streams of $blocks blocks, $members + $bt9 gzip members)"

# -j 2: the same bytes (compression threads shared, eviction by input order)
conv lim2 $F --max-open-outputs 4 -j 2
same_bytes lim lim2
echo "ok - -j 2 writes the same bytes as -j 1"

# few file descriptors: 10 threads with 4 files each need 40 at once
(ulimit -n 30 && exec "$PTCONV" convert "$T/w.data" -f $F -o "$T/fdx" -q --max-open-outputs 100) \
	2>/dev/null && fail "ulimit -n 30 is enough for all outputs: the test shows nothing"
(ulimit -n 30 && conv fd $F --max-open-outputs 4 -j 2) || fail "ulimit -n 30, --max-open-outputs 4"
same_bytes lim fd
(ulimit -n 30 && conv fdd $F) || fail "ulimit -n 30, default limit"
same_content lim fdd
echo "ok - 30 file descriptors: the default limit follows them, outputs equal to the truth"

# champsim with gzip
conv gall champsim:gz
conv glim champsim:gz --max-open-outputs 3 -j 2
check_truth glim
same_content gall glim
conv glim1 champsim:gz --max-open-outputs 3
same_bytes glim glim1
echo "ok - champsim.gz, 3 open: equal to the truth, the same bytes with -j 1 and -j 2"

# one output open: every switch between threads suspends one; each file
# is still one xz stream or gzip member holding what it holds unlimited
conv one champsim --max-open-outputs 1
conv gone champsim:gz --max-open-outputs 1
check_truth one
check_truth gone
same_content one all
same_content gall gone
s=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["output_suspensions"])' "$T/gone/summary.json")
[ "$s" -gt $((4 * N)) ] || fail "champsim:gz, 1 open: only $s suspensions"
echo "ok - champsim and champsim:gz, 1 open: one stream or member per file, equal to the truth ($s suspensions)"

# ptconv's own format: a suspension makes the thread's records so far a
# chunk of their own and closes the file; the next records reopen it
conv tall ptconv
conv tlim ptconv --max-open-outputs 4
more=0
for tid in $tids; do
	f=trace.$tid.ptc
	TRUTH_TID=$tid TRUTH_NO_TIMES=1 python3 "$W/read_ptc.py" "$T/tlim/$f" "$T/w.truth" > /dev/null ||
		fail "tlim: $f against the truth"
	a=$(chunks "$T/tall/$f") b=$(chunks "$T/tlim/$f")
	[ -n "$a" ] && [ -n "$b" ] || fail "$f: no chunk count"
	[ "$b" -gt "$a" ] && more=$((more + 1))
done
[ $more -eq $N ] || fail "only $more of $N .ptc files have more chunks under the limit: not suspended"
same_content tall tlim
conv tlim2 ptconv --max-open-outputs 4 -j 2
same_bytes tlim tlim2
echo "ok - ptconv, 4 open: equal to the truth, more chunks than without the limit, the same bytes with -j 1 and -j 2"

# per thread (perf record --per-thread): queues decode on -j threads, each
# suspending only what it wrote itself; the bytes still do not depend on -j
"$WALK" --threads $N --branches 12000 --slice 600 --escape 0 --seed 5 --per-thread \
	-o "$T/p.data" "$BIN" 2>"$T/err" || { cat "$T/err"; fail "ptgen-walk --per-thread"; }
DATA=$T/p.data
conv pall champsim,ptconv
conv p1 champsim,ptconv --max-open-outputs 1
conv p2 champsim,ptconv --max-open-outputs 1 -j 3
same_content pall p1
same_bytes p1 p2
echo "ok - per-thread recording, champsim and ptconv, 1 open: the same content, the same bytes with -j 1 and -j 3"
exit 0
