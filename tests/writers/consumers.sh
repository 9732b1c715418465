#!/bin/sh
# The simulators' own reader rules over the x86 instructions they model
# differently (ptconv-formats(5)): tests/writers/x86ops.c executes push and
# pop, leave, rep stos/movs and the other string instructions, RIP-relative,
# absolute and indexed stores, a taken je over a 2-byte instruction (target
# pc + 4) and system calls; ptgen-trace records its real execution (checked
# against the independent stepper, whose instruction list is the oracle),
# ptgen-encode makes the Intel PT recording, ptconv converts it to cbp2025,
# cbp2025:slots and bt9.  read_cbp2025.py enforces every assert of the
# CBP2025 framework's reader and simulator and compares instructions,
# branches and the directions the simulator derives with the truth;
# read_bt9.py the CBP2016 reader's rules.  Each mapping must occur.
. "${top_srcdir:-.}/tests/lib/common.sh"
ENC="$top_builddir/tests/ptgen/ptgen-encode"
W="$top_srcdir/tests/writers"
[ -x "$ENC" ] || skip "ptgen-encode not built"
command -v python3 >/dev/null || skip "python3 not installed"
scratch
static_truth "$W/x86ops.c" x86ops -O1 40
# system calls are in the truth (far transfers, kind 6)
[ "$(awk '$1 == "B" && $6 == 6' "$T/x86ops.truth" | wc -l)" -ge 40 ] || fail "fewer than 40 system calls in the truth"
"$ENC" -o "$T/x.data" --buildid-dir "$T/bid" "$T/x86ops.truth" 2>"$T/enc.err" || fail "ptgen-encode: $(tail -1 "$T/enc.err")"
for f in cbp2025,bt9 cbp2025:slots; do
	rm -rf "$T/out"
	"$PTCONV" convert "$T/x.data" -f $f -o "$T/out" --buildid-dir "$T/bid" 2>"$T/conv.err" ||
		{ cat "$T/conv.err" >&2; fail "ptconv -f $f"; }
	grep -q warning "$T/conv.err" && { cat "$T/conv.err" >&2; fail "warnings (-f $f)"; }
	slots=
	case $f in *slots*) slots=--slots ;; esac
	python3 "$W/read_cbp2025.py" "$T"/out/trace.*.cbp2025.gz "$T/x86ops.truth" "$T/x86ops.ips" --stats $slots \
		> "$T/stats" || fail "cbp2025 ($f)"
	cat "$T/stats"
	# every mapping of ptconv-formats(5) was exercised, at least once per loop
	for m in "push-like store" "rip/absolute store" "indexed store" "2-value store" \
		 "base-update load" "several outputs"; do
		c=$(sed -n "s|.*$m \([0-9]*\).*|\1|p" "$T/stats")
		[ "${c:-0}" -ge 40 ] || fail "$m: ${c:-none} ($f)"
	done
	# the taken je to pc + 4: its target moved to pc + 5 with real
	# addresses, never needed with slots (4 * (pc + 4) != 4 * pc + 4)
	c=$(sed -n 's/.*taken cond to pc+4 \([0-9]*\).*/\1/p' "$T/stats")
	if [ -n "$slots" ]; then [ "$c" = 0 ] || fail "slots: $c branches to pc + 4"
	else [ "$c" -ge 40 ] || fail "taken je to pc + 4: $c"; fi
done
rm -rf "$T/out"
"$PTCONV" convert "$T/x.data" -f bt9 -o "$T/out" --buildid-dir "$T/bid" -q || fail "ptconv -f bt9"
python3 "$W/read_bt9.py" "$T"/out/trace.*.bt9.gz "$T/x86ops.truth" || fail "bt9"
echo "ok - cbp2025 (real addresses and slots) and bt9 follow their readers' rules on x86ops, equal to the truth"
