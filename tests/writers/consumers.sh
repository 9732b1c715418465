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
# read_bt9.py the CBP2016 reader's rules (and refuses files that break
# them).  Each mapping must occur.
# ChampSim (read_champsim.py: its reader takes one xz stream or one gzip
# member, its classification from the registers) and SimPoint 3.2
# (read_bbv.py: its line buffer, the final newline) on the same recording;
# champsim:gz of a program longer than one 4 MiB block of records
# (contrib/example/sortsum.c, more than 65,536 instructions) must still be
# one gzip member, at -j 1 and -j 2.
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
# read_bt9.py refuses what the CBP2016 reader refuses or misreads (its
# rules, listed in read_bt9.py; the unmodified reader, run on these: a '#'
# hides a node's class, main exits with OPTYPE_ERROR; a header key that
# is not "total_instruction_count:" aborts main in stoull; a duplicate
# edge id loses an edge, the sequence's reference to it exits; a line
# after EOF is never read): bt9_refused SED-SCRIPT REASON
f=$(ls "$T"/out/trace.*.bt9.gz)
bt9_refused() {
	gzip -dc "$f" | sed "$1" | gzip > "$T/bad.bt9.gz"
	python3 "$W/read_bt9.py" "$T/bad.bt9.gz" "$T/x86ops.truth" 2> "$T/bad.err" && fail "bt9 accepted: $2"
	grep -q "$2" "$T/bad.err" || { cat "$T/bad.err" >&2; fail "bt9 refused, but not for: $2"; }
}
bt9_refused '/^NODE 1 /s/ class:/ #class:/' "a '#'"
bt9_refused 's/^total_instruction_count:/total_instruction_count :/' "not one token ending in ':'"
bt9_refused 's/^EDGE 2 /EDGE 1 /' "duplicate edge id"
bt9_refused '$a 1' "lines after EOF"
echo "ok - cbp2025 (real addresses and slots) and bt9 follow their readers' rules on x86ops, equal to the truth"

rm -rf "$T/out"
"$PTCONV" convert "$T/x.data" -f champsim,bbv --bbv 1000 -o "$T/out" --buildid-dir "$T/bid" -q ||
	fail "ptconv -f champsim,bbv"
python3 "$W/read_champsim.py" "$T"/out/trace.*.champsim.xz "$T/x86ops.truth" "$T/x86ops.ips" || fail "champsim"
python3 "$W/read_bbv.py" "$T"/out/trace.*.bb "$T/x86ops.truth" 1000 || fail "bbv"
# the checkers refuse what the readers cannot read: a second xz stream, a
# .bb file without its last newline
f=$(ls "$T"/out/trace.*.champsim.xz)
cat "$f" "$f" > "$T/two.champsim.xz"
python3 "$W/read_champsim.py" "$T/two.champsim.xz" "$T/x86ops.truth" - 2>/dev/null && fail "two xz streams accepted"
f=$(ls "$T"/out/trace.*.bb)
head -c -1 "$f" > "$T/nonl.bb"
python3 "$W/read_bbv.py" "$T/nonl.bb" "$T/x86ops.truth" 1000 2>/dev/null && fail "no final newline accepted"
static_truth "$top_srcdir/contrib/example/sortsum.c" sortsum -O2 ""
[ "$(wc -l < "$T/sortsum.ips")" -gt 65536 ] || fail "sortsum: 65,536 instructions or fewer, one gzip block"
"$ENC" -o "$T/s.data" --buildid-dir "$T/sbid" "$T/sortsum.truth" 2>"$T/enc.err" || fail "ptgen-encode: $(tail -1 "$T/enc.err")"
for j in 1 2; do
	rm -rf "$T/out"
	"$PTCONV" convert "$T/s.data" -f champsim:gz -j $j -o "$T/out" --buildid-dir "$T/sbid" -q ||
		fail "ptconv -f champsim:gz -j $j"
	python3 "$W/read_champsim.py" "$T"/out/trace.*.champsim.gz "$T/sortsum.truth" "$T/sortsum.ips" ||
		fail "champsim:gz -j $j"
done
echo "ok - champsim and bbv follow ChampSim's and SimPoint's reader rules on x86ops; champsim:gz of sortsum is one gzip member"
