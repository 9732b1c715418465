#!/bin/sh
# `ptconv packets` counts each Intel PT packet kind of the real captures
# exactly as `perf script -D` prints them (PAD excluded: perf folds runs of
# PAD into one line).
. "${top_srcdir:-.}/tests/lib/common.sh"
need_shared
need_perf
scratch
# (Only the file-mode capture: perf 6.1 misreads the pipe-mode one, "bad
# event header size", and dumps its AUX data from 16 bytes too early.)
for f in "$PTC_SHARED"/data/intel_pt/perf.data.intel_pt-4.14; do
	[ -f "$f" ] || skip "$f missing"
	"$PTCONV" packets "$f" >"$T/ours" || fail "ptconv packets $f exited $?"
	"$PERF" script -D -i "$f" 2>/dev/null >"$T/dump" || fail "perf script -D $f"
	sed -n 's/^\.  *[0-9a-f]\{8\}:  *\(\([0-9a-f][0-9a-f] \)*\) *//p' "$T/dump" |
		awk '{ print $1 }' | grep -v '^PAD$' | sort | uniq -c |
		awk '{ print $2, $1 }' | sort >"$T/perf"
	sed -n '/^total:/,$p' "$T/ours" | awk 'NF == 2 && $1 != "PAD" { print $1, $2 }' | sort >"$T/mine"
	diff "$T/perf" "$T/mine" || fail "packet counts differ from perf script -D for $f"
	echo "ok - $(basename "$f"): $(tr '\n' ' ' <"$T/mine")"
done
# the documented totals of the file-mode capture (../shared/README.md;
# its MTC 2,804, TSC 25 and CYC 1 are not what perf 6.1 prints: 2802, 24, 0)
"$PTCONV" packets "$PTC_SHARED"/data/intel_pt/perf.data.intel_pt-4.14 >"$T/ours"
for kv in "TNT 69516" "TIP 12039" "FUP 149" "TIP.PGE 10" "TIP.PGD 10" "MODE.Exec 18" "PIP 441"; do
	set -- $kv
	grep -q "^  $1  *$2\$" "$T/ours" || fail "total $1 is not $2"
done
# the pipe-mode capture: the same kinds of packets, no bad ones
"$PTCONV" packets "$PTC_SHARED"/data/intel_pt/perf.data.piped.intel_pt-4.14 >"$T/ours" || fail "packets (pipe mode)"
grep -q "^  TNT  *[1-9]" "$T/ours" && ! grep -q "^  bad" "$T/ours" || fail "pipe-mode packets: $(cat "$T/ours")"
exit 0
