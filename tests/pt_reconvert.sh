#!/bin/sh
# ptconv convert TRACE.ptc: a trace of ptconv's own format turned into the
# other formats, with the code embedded in it and nothing else (the
# recording and the binary are removed first).  A real program is
# single-stepped by ptgen-trace (the ground truth), encoded by ptgen-encode
# into a perf.data, and converted once to .ptc; the .ptc is then converted
# to bt9, champsim, cbp2025, xtrace and --bbv vectors, which the
# independent readers of tests/writers compare with the truth (and they
# must be the very files the recording gives directly).  With a loss, the
# part files too.  A slice (ptconv slice) converted to ChampSim holds one
# record per instruction of the slice: their addresses must be the
# stepper's instruction list from the slice's start on, the instructions
# after the slice's last branch (its tail) included, and so must the
# instructions `ptconv dump -i` lists from the slice.  contrib/simpoint-flow
# -f champsim does the same for each simulation point (SimPoint played by a
# stand-in).  Formats a .ptc cannot give, options that do not apply and a
# cut .ptc are refused with a message; damaged ones (the reader's fuzz
# seeds mutated) are converted or refused, never a crash.
. "${top_srcdir:-.}/tests/lib/common.sh"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
W="$top_srcdir/tests/writers"
[ -x "$ENC" ] || skip "ptgen-encode not built"
command -v python3 >/dev/null || skip "python3 not installed"
scratch
BBV=5000
export TRUTH_NO_TIMES=1
prog_truth
truth="$T/prog.truth"

# same_files A B: every file of A is in B with the same bytes
same_files() {
	n=0
	for f in "$1"/*; do
		b=$(basename "$f")
		[ "$b" = summary.json ] && continue
		cmp -s "$f" "$2/$b" || fail "$b: the .ptc gives other bytes than the recording"
		n=$((n + 1))
	done
	[ $n -ge 6 ] || fail "only $n files in $1"
}

# 1. No loss: every format from the .ptc alone equals the truth.
"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" "$truth" 2>"$T/enc.err" || fail "ptgen-encode: $(cat "$T/enc.err")"
"$PTCONV" convert "$T/t.data" -f ptconv,bt9,champsim,cbp2025,xtrace --bbv $BBV -o "$T/direct" \
	--buildid-dir "$T/bid" -q || fail "convert the recording"
set -- "$T"/direct/trace.*.ptc
tid=$(basename "$1" .ptc)
tid=${tid#trace.}
cp "$1" "$T/t.ptc"
cp "$T/prog" "$T/prog.kept"
rm -rf "$T/bid" "$T/t.data" "$T/prog"	# nothing but the .ptc is left
"$PTCONV" convert "$T/t.ptc" -f bt9,champsim,cbp2025,xtrace --bbv $BBV -o "$T/re" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "convert the .ptc"; }
grep -q "warning" "$T/err" && { cat "$T/err" >&2; fail "warnings"; }
python3 "$W/read_bt9.py" "$T/re/trace.$tid.bt9.gz" "$truth" || fail "bt9 from the .ptc"
python3 "$W/read_champsim.py" "$T/re/trace.$tid.champsim.xz" "$truth" "$T/prog.ips" || fail "champsim from the .ptc"
python3 "$W/read_cbp2025.py" "$T/re/trace.$tid.cbp2025.gz" "$truth" "$T/prog.ips" || fail "cbp2025 from the .ptc"
python3 "$W/read_xtrace.py" "$T/re" "$truth" "$T/prog.ips" 1000000 || fail "xtrace from the .ptc"
python3 "$W/read_bbv.py" "$T/re/trace.$tid.bb" "$truth" $BBV "$START" || fail "bbv from the .ptc"
rm "$T/direct/trace.$tid.ptc"
same_files "$T/re" "$T/direct"
# and back to .ptc: the same file
"$PTCONV" convert "$T/t.ptc" -f ptconv -o "$T/re2" -q || fail "convert .ptc to .ptc"
cmp -s "$T/t.ptc" "$T/re2/trace.$tid.ptc" || fail ".ptc to .ptc: other bytes"
echo "ok - bt9, champsim, cbp2025, xtrace and vectors from the .ptc alone equal the truth and the direct outputs"

# 2. A slice as a ChampSim trace: one record per instruction of the slice,
# its tail (the instructions after its last branch) included.
ips_of() {	# CHAMPSIM.xz: the ip of every record, as the stepper lists them
	python3 -c 'import lzma, struct, sys
d = lzma.open(sys.argv[1]).read()
for i in range(0, len(d), 64):
    print("0x%x" % struct.unpack_from("<Q", d, i)[0])' "$1"
}
# check_slice SLICE.ptc CHAMPSIM.xz START COUNT: the records, and the
# instructions dump -i lists, are instructions [START, START+COUNT); sets
# $tail (the instructions after the slice's last branch)
check_slice() {
	tail=$("$PTCONV" dump "$1" | sed -n 's/.*instructions (\([0-9]*\) after the last branch.*/\1/p')
	[ -n "$tail" ] || fail "$1: no tail count"
	tail -n +$(($3 + 1)) "$T/prog.ips" | head -n $4 > "$T/want.ips"
	ips_of "$2" > "$T/slice.ips"
	cmp -s "$T/slice.ips" "$T/want.ips" ||
		fail "slice $3 $4: the ChampSim records are not instructions [$3, +$4)"
	"$PTCONV" dump -i "$1" | awk '/^    0x/ { print $1 }' | sed 's/^0x0*/0x/' > "$T/slice.ips"
	cmp -s "$T/slice.ips" "$T/want.ips" || fail "slice $3 $4: dump -i does not list instructions [$3, +$4)"
}
total=$(wc -l < "$T/prog.ips")
# the second slice ends inside a block, so that a tail is always tested
n2=$(count_ending_in_block 1001 20003) || fail "a slice length from the truth"
tails=
for r in "0 1000" "1001 $n2" "$((total / 3)) $((total / 2))"; do
	set -- $r
	s=$1 n=$2
	rm -rf "$T/s.ptc" "$T/sre"
	"$PTCONV" slice --start $s --count $n -o "$T/s.ptc" "$T/t.ptc" || fail "slice $s $n"
	"$PTCONV" convert "$T/s.ptc" -f champsim -o "$T/sre" 2>"$T/err" || { cat "$T/err" >&2; fail "convert slice $s $n"; }
	check_slice "$T/s.ptc" "$T"/sre/trace.*.champsim.xz $s $n
	tails="$tails $tail"
	# and a slice converted to .ptc is the same file
	"$PTCONV" convert "$T/s.ptc" -f ptconv -o "$T/sre2" -q || fail "slice $s $n to .ptc"
	cmp -s "$T/s.ptc" "$T"/sre2/trace.*.ptc || fail "slice $s $n to .ptc: other bytes"
	rm -rf "$T/sre2"
done
case "$tails" in *[1-9]*) ;; *) fail "no slice ends after its last branch: the tail is not tested" ;; esac
echo "ok - slices as ChampSim traces and by dump -i: exactly their instructions (tails:$tails)"

# 3. With losses: the same part files as from the recording.
cp "$T/prog.kept" "$T/prog"
"$ENC" -o "$T/l.data" --buildid-dir "$T/bid" --ovf-at 6000:100 --truncate 200@1500 "$truth" 2>"$T/enc.err" ||
	fail "ptgen-encode with losses: $(cat "$T/enc.err")"
rm -rf "$T/direct" "$T/re"
"$PTCONV" convert "$T/l.data" -f ptconv,bt9,champsim,cbp2025,xtrace -o "$T/direct" --buildid-dir "$T/bid" -q
[ $? -le 1 ] || fail "convert the recording with losses"
"$PTCONV" convert "$T/direct/trace.$tid.ptc" -f bt9,champsim,cbp2025,xtrace -o "$T/re" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "convert the .ptc with losses"; }
grep -q " 2 gaps " "$T/err" || { cat "$T/err" >&2; fail "the summary does not count 2 losses"; }
"$PTCONV" convert "$T/direct/trace.$tid.ptc" -f champsim -o "$T/re3" -q --strict
[ $? -eq 1 ] || fail "--strict with losses: not exit 1"
python3 "$W/read_champsim.py" "$T/re/trace.$tid.champsim.xz" "$truth" "$T/prog.ips" --parts 2 ||
	fail "champsim parts from the .ptc"
rm "$T/direct/trace.$tid.ptc"
same_files "$T/re" "$T/direct"
echo "ok - with two losses: the part files of the recording, from the .ptc"

# 4. Refusals.
"$PTCONV" convert "$T/t.ptc" -f cbpexp -o "$T/x" 2>"$T/err"
[ $? -eq 2 ] && grep -q "cbpexp: a ptconv trace converts to" "$T/err" || fail "-f cbpexp: $(cat "$T/err")"
"$PTCONV" convert "$T/t.ptc" --tid 5 -o "$T/x" 2>"$T/err"
[ $? -eq 2 ] && grep -q "takes only" "$T/err" || fail "--tid: $(cat "$T/err")"
head -c 3000 "$T/t.ptc" > "$T/cut.ptc"
"$PTCONV" convert "$T/cut.ptc" -f champsim -o "$T/x" 2>"$T/err"
[ $? -eq 3 ] && grep -q "cut.ptc" "$T/err" || fail "a cut .ptc: $(cat "$T/err")"
echo "ok - cbpexp, --tid and a cut .ptc refused with a message"

# 5. contrib/simpoint-flow -f champsim, with a stand-in for SimPoint that
# picks intervals 1 and 3: each point's slice and its ChampSim trace.
mkdir -p "$T/bin"
cat > "$T/bin/simpoint" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do
	case $1 in
	-saveSimpoints) printf '1 0\n3 1\n' > "$2"; shift ;;
	-saveSimpointWeights) printf '0.5 0\n0.5 1\n' > "$2"; shift ;;
	esac
	shift
done
EOF
chmod +x "$T/bin/simpoint"
"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" "$truth" 2>"$T/enc.err" || fail "ptgen-encode: $(cat "$T/enc.err")"
PATH="$T/bin:$PATH" sh "$top_srcdir/contrib/simpoint-flow" -i $BBV -f champsim -p "$PTCONV" "$T/t.data" "$T/sp" \
	> "$T/sp.out" 2>"$T/err" || { cat "$T/err" >&2; fail "simpoint-flow"; }
for k in 1 3; do
	check_slice "$T/sp/trace.$tid.sp-$k.ptc" "$T/sp/trace.$tid.sp-$k/trace.$tid.champsim.xz" $((k * BBV)) $BBV
done
echo "ok - contrib/simpoint-flow -f champsim: each simulation point's instructions as a ChampSim trace"

# 6. Damaged traces (the reader's fuzz seeds cut short and with bytes set
# to 0xff) into every format: an error naming the file (exit 3) or a
# conversion of what was read, never a crash or a sanitizer report.
mkdir -p "$T/bad"
mutate_seeds "$top_srcdir/tests/fuzz/seeds/fuzz_ptc_trace" "$T/bad" "8 64 200" 4000 97
n=0
for f in "$T"/bad/*; do
	rm -rf "$T/bo"
	"$PTCONV" convert "$f" -f ptconv,bt9,champsim,cbp2025,xtrace --bbv 50 -o "$T/bo" -q 2>"$T/err"
	st=$?
	case $st in
	0) ;;
	3) grep -q "$(basename "$f")" "$T/err" || fail "$(basename "$f"): the error does not name the file: $(cat "$T/err")" ;;
	*) cat "$T/err" >&2; fail "$(basename "$f"): exit $st" ;;
	esac
	n=$((n + 1))
done
[ $n -ge 50 ] || fail "only $n damaged traces"
echo "ok - $n damaged traces: converted or refused naming the file, no crash"
