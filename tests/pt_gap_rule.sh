#!/bin/sh
# One gap per loss, the same with both engines (issue 15, item 9;
# ptconv-convert(1), GAPS).  Real executions (ptgen-trace) are encoded with
# losses (ptgen-encode --ovf-at: an overflow; --drop: AUX bytes removed from
# a record flagged PARTIAL) and converted by the walker and by the libipt
# engine; pt_gap_rule.py requires from both the same gaps, counted once
# (summary.json), each the loss the encoder says it made (--gaps: where,
# and from where the stream's packets say execution continued) with the
# lost bytes that the AUX stream (--aux-dump) and perf's AUXTRACE records
# give: from the skipped record to the first PSB after it, or to the end.
# With the shared recordings, the perf 4.14 one (no binaries: nothing can be
# decoded) must be one no-image loss per AUX queue from the first packet
# after the one that names where tracing starts, to the queue's end, as
# Linux perf's packet dump lists them.
. "${top_srcdir:-.}/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
need_perf
need_encoder
RULE="python3 $top_srcdir/tests/pt_gap_rule.py"

n=0
run() {	# TRUTH ENCODER-OPTIONS...
	truth=$1
	shift
	n=$((n + 1))
	rm -rf "$T/t.data" "$T/gaps" "$T"/aux.* "$T"/o_*
	# shellcheck disable=SC2086
	"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" --gaps "$T/gaps" --aux-dump "$T/aux" "$@" "$truth" \
		2>"$T/enc.err" || fail "ptgen-encode $*: $(tail -1 "$T/enc.err")"
	grep -q . "$T/gaps" || fail "ptgen-encode $*: no loss made"
	"$PERF" script -D -i "$T/t.data" > "$T/dump" 2>/dev/null || fail "perf script -D failed"
	for eng in walker libipt; do
		"$PTCONV" "$T/t.data" -f text -o "$T/o_$eng" --buildid-dir "$T/bid" -q --engine=$eng
		[ $? -le 1 ] || fail "ptconv --engine=$eng exited $? for ptgen-encode $*"
	done
	$RULE "$T/gaps" "$T/aux" "$T/dump" "$T/o_walker" "$T/o_libipt" > "$T/rule" ||
		{ cat "$T/rule" "$T/gaps"; grep -h ' gap ' "$T"/o_*/*.txt; fail "ptgen-encode $*"; }
	echo "ok $n - $(basename "$truth" .truth) $*: $(grep -v '^OK' "$T/rule" | tr '\n' ' ')"
}

"$PTGEN_TRACE" -o "$T/true.truth" -- /bin/true 2>"$T/trace.err" ||
	skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"
# overflows: the branch held when it came is kept (item 8)
run "$T/true.truth" --ovf-at 5000:100
run "$T/true.truth" --ovf-at 12000 --noretcomp
run "$T/true.truth" --ovf-at 7000:3 --long-tnt
run "$T/true.truth" --ovf-at 3000:20 --interrupt-every 700
# AUX data lost: resumed at a PSB, and never (no PSB after it)
run "$T/true.truth" --drop 50@500 --aux-chunk 4096 --psb-period 0
run "$T/true.truth" --drop 50@5000 --aux-chunk 4096 --psb-period 0
run "$T/true.truth" --drop 50@2500 --psb-period 0
# Three processes on one CPU: a loss while one runs is told to the thread
# that resumes after it and to those switched in meanwhile, counted once
p=c_spawn
mkdir "$T/fixed"
cp "$CORPUS/c_spawn" "$CORPUS/c_nolibc" "$T/fixed/" || fail "copy the corpus"
(cd "$T/fixed" && env -i "$PTGEN_TRACE" -o "$T/$p.truth" -- ./c_spawn > /dev/null 2> "$T/$p.err")
grep -q '^X ' "$T/$p.truth" || fail "$p: ptgen-trace failed: $(cat "$T/$p.err")"
run "$T/$p.truth" --cpus 1 --ovf-at 300:400
run "$T/$p.truth" --cpus 1 --drop 3000@2000 --aux-chunk 4096 --psb-period 0

# The shared recording: both engines, and perf's packets
D=$PTC_SHARED/data/intel_pt/perf.data.intel_pt-4.14
if [ -f "$D" ]; then
	rm -rf "$T"/o_*
	for eng in walker libipt; do
		"$PTCONV" "$D" -f text -o "$T/o_$eng" -q --engine=$eng
		[ $? -le 1 ] || fail "shared recording: ptconv --engine=$eng exited $?"
	done
	"$PERF" script -D -i "$D" > "$T/dump" 2>/dev/null || fail "perf script -D failed on $D"
	$RULE --nothing-decodable "$T/dump" "$T/o_walker" "$T/o_libipt" > "$T/rule" ||
		{ cat "$T/rule"; fail "shared recording: the gaps break the rule"; }
	echo "ok - shared perf 4.14 recording: $(grep -v '^OK' "$T/rule" | tr '\n' ' ')"
else
	echo "# shared recordings not found at $PTC_SHARED: skipped that part"
fi
exit 0
