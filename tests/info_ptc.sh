#!/bin/sh
# ptconv info TRACE.ptc: the header facts, the gaps by kind, the first and
# last records' times and where the file's bytes go, checked by
# tests/writers/check_info.py against the suite's independent reader of
# the format and against the parts it measures from the file itself; the
# branch and instruction totals also against the ground truth (a real
# program single-stepped by ptgen-trace, encoded by ptgen-encode into a
# perf.data, converted).  A trace with losses, one of many chunks, the
# reader's seed traces of both format versions; a damaged chunk still
# prints what the header and static part say, then exits 3 naming the
# file; a cut trace is refused naming it.
. "${top_srcdir:-.}/tests/lib/common.sh"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
W="$top_srcdir/tests/writers"
B="$top_builddir/tests/writers"
[ -x "$ENC" ] || skip "ptgen-encode not built"
command -v python3 >/dev/null || skip "python3 not installed"
command -v zstd >/dev/null || skip "zstd not installed"
scratch
export TRUTH_NO_TIMES=1
prog_truth
truth="$T/prog.truth"

check() {	# check TRACE.ptc: --json against check_info.py, text against --json
	"$PTCONV" info --json "$1" > "$T/info.json" 2>"$T/err" || { cat "$T/err" >&2; fail "info --json $1"; }
	[ -s "$T/err" ] && { cat "$T/err" >&2; fail "info --json $1: messages"; }
	python3 "$W/check_info.py" "$@" "$T/info.json" || fail "info --json $1"
	"$PTCONV" info "$1" > "$T/info.txt" || fail "info $1"
	python3 - "$T/info.json" "$T/info.txt" <<'PY' || fail "info $1: text and JSON differ"
import json, sys
j = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read()
for line in ("records:         %d: %d branches, %d gaps, %d stream starts" % (
                 j["records"], j["branches"], j["gaps"], j["stream_starts"]),
             "instructions:    %d (%d after the last branch)" % (j["instructions"], j["tail_instructions"]),
             "size:            %d bytes" % j["bytes"]["file"],
             "    %-22s%12d" % ("node and edge tables", j["bytes"]["tables"]),
             "    %-22s%12d" % ("code", j["bytes"]["code"])):
    if line not in t:
        sys.exit("not in the text: " + line)
PY
}
# check_info.py takes the truth last
check_truth() {
	"$PTCONV" info --json "$1" > "$T/info.json" || fail "info --json $1"
	python3 "$W/check_info.py" "$1" "$T/info.json" "$truth" || fail "info --json $1 against the truth"
}

# 1. A real conversion, without and with losses.
"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" "$truth" 2>"$T/enc.err" || fail "ptgen-encode: $(cat "$T/enc.err")"
"$PTCONV" convert "$T/t.data" -o "$T/o" --buildid-dir "$T/bid" -q || fail "convert"
check "$T"/o/trace.*.ptc
check_truth "$T"/o/trace.*.ptc
grep -q '"gaps": 0,' "$T/info.json" || fail "gaps in a recording without losses"
"$ENC" -o "$T/l.data" --buildid-dir "$T/bid" --ovf-at 6000:100 --truncate 200@1500 "$truth" 2>"$T/enc.err" ||
	fail "ptgen-encode with losses: $(cat "$T/enc.err")"
"$PTCONV" convert "$T/l.data" -o "$T/ol" --buildid-dir "$T/bid" -q
[ $? -le 1 ] || fail "convert with losses"
check "$T"/ol/trace.*.ptc
grep -q '"gaps": 2,' "$T/info.json" || fail "not the 2 losses ptgen-encode made: $(cat "$T/info.json")"
grep -q '^lost: ' "$T/info.txt" || fail "no lost: line with losses"
echo "ok - a recording's .ptc, without and with losses"

# 2. Many chunks, gaps inside them, a slice (with its tail).
mkdir -p "$T/many"
"$B/truth2fmt" -f ptconv -c 1000 -q 2000 -r 3 -g 5000:10 -g 20000:0 -o "$T/many" "$truth" || fail "truth2fmt"
check "$T"/many/trace.*.ptc
n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["chunks"])' "$T/info.json")
[ "$n" -gt 10 ] || fail "only $n chunks"
m=$(count_ending_in_block 1001 20003) || fail "a slice length from the truth"
"$PTCONV" slice --start 1001 --count $m -o "$T/s.ptc" "$T"/o/trace.*.ptc || fail "slice"
check "$T/s.ptc"
grep -q '"tail_instructions": 0,' "$T/info.json" && fail "the slice of $m instructions has no tail"
echo "ok - $n chunks with gaps inside, and a slice of $m instructions with a tail"

# 3. The reader's seed traces, of both format versions.
for f in "$top_srcdir"/tests/fuzz/seeds/fuzz_ptc_trace/*.ptc; do
	check "$f"
done
echo "ok - the seed traces"

# 4. A damaged last chunk: the header facts, then an error naming the file.
cp "$T"/many/trace.*.ptc "$T/d.ptc"
off=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import check_info
import read_ptc
print(check_info.layout(read_ptc.read(sys.argv[2]))["chunks"][-1][0])' "$W" "$T/d.ptc" 2>/dev/null) ||
	fail "chunk offset"
printf '\377\377\377\377' | dd of="$T/d.ptc" bs=1 seek="$off" conv=notrunc 2>/dev/null
"$PTCONV" info "$T/d.ptc" > "$T/out" 2>"$T/err"
[ $? -eq 3 ] || fail "a damaged chunk: not exit 3"
grep -q "d.ptc" "$T/err" || fail "a damaged chunk: the error does not name the file: $(cat "$T/err")"
grep -q '^records: ' "$T/out" && grep -q '^size: ' "$T/out" || fail "a damaged chunk: the header facts are not printed"
grep -q '^time: ' "$T/out" && fail "a damaged chunk: a time printed"
head -c 3000 "$T/d.ptc" > "$T/cut.ptc"
"$PTCONV" info "$T/cut.ptc" > /dev/null 2>"$T/err"
[ $? -eq 3 ] && grep -q "cut.ptc" "$T/err" || fail "a cut trace: $(cat "$T/err")"
echo "ok - a damaged chunk and a cut trace: exit 3, naming the file"

# 5. Options for perf.data recordings are refused.
"$PTCONV" info --symfs "$T" "$T/s.ptc" > /dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "do not apply" "$T/err" || fail "--symfs on a trace: $(cat "$T/err")"
echo "ok - --symfs on a trace refused"
