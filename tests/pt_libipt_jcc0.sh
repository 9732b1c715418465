#!/bin/sh
# A conditional branch whose target is its own fall-through (jz/jrcxz/loop
# with displacement 0) continues at the same instruction either way.  The
# trace still says which way it went (a TNT bit), and the walker, which
# reads the TNT bits itself, reports it exactly.  libipt's block decoder
# does not: a pt_block only says where the next block starts (so does a
# pt_insn of its instruction-flow decoder; the query decoder that has the
# bit is internal to it).  --engine=libipt therefore reports every such
# branch as taken (documented in ptconv-convert(1)); its instruction
# counts are exact.  Oracle: the ground truth of c_nolibc, which executes
# ptg_jz_taken (taken), ptg_jz_not_taken (not taken), ptg_jrcxz (taken)
# and ptg_loop (taken, then not taken).
. "${top_srcdir:-.}/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
command -v nm >/dev/null || skip "nm not installed"
need_encoder
"$PTGEN_TRACE" -o "$T/n.truth" -- "$CORPUS/c_nolibc" > /dev/null 2> "$T/err" ||
	fail "ptgen-trace c_nolibc: $(cat "$T/err")"
"$ENC" --buildid-dir "$T/bid" -o "$T/n.data" "$T/n.truth" || fail "ptgen-encode"
for eng in walker libipt; do
	"$PTCONV" "$T/n.data" -f text -o "$T/$eng" --buildid-dir "$T/bid" -q --engine=$eng ||
		fail "ptconv --engine=$eng exited $?"
done

# directions IP: "taken..." of the truth, of an engine's output
truth_dirs() {
	awk -v ip="$1" '$1 == "B" && $4 == ip { printf "%s", $7 }' "$T/n.truth"
}
out_dirs() {
	cat "$T/$1"/*.txt | awk -v ip="$2" '$2 == ip && $4 == "cond" { printf "%s", $5 }'
}
for sym_want in ptg_jz_taken:1 ptg_jz_not_taken:0 ptg_jrcxz:1 ptg_loop:10; do
	sym=${sym_want%%:*} want=${sym_want#*:}
	ip=$(nm "$CORPUS/c_nolibc" | awk -v s="$sym" '$3 == s { print $1 }' | sed 's/^0*//')
	[ -n "$ip" ] || fail "c_nolibc has no symbol $sym"
	# c_nolibc is static and not PIE: its symbols are run-time addresses
	ip=0x$ip
	t=$(truth_dirs "$ip")
	[ "$t" = "$want" ] || fail "$sym: the truth says $t, c_nolibc.c says $want"
	w=$(out_dirs walker "$ip")
	[ "$w" = "$want" ] || fail "$sym: the walker says $w, the truth $want"
	l=$(out_dirs libipt "$ip")
	[ "$l" = "$(echo "$want" | tr 0 1)" ] || fail "$sym: libipt engine says $l, want every one taken"
	echo "ok - $sym at $ip: truth $t, walker $w, libipt $l"
done

# Everything else is exact: the whole trace equals the truth once the
# direction of exactly those branches is left out, and the only lines
# where the engines differ are those branches.
$CMP "$T/n.truth" "$T/walker" --expect-gaps 0 > "$T/cmp" || { cat "$T/cmp"; fail "walker vs truth"; }
if $CMP "$T/n.truth" "$T/libipt" --expect-gaps 0 > "$T/cmp"; then
	fail "libipt engine: exact without --jcc0-any (this test expects the block decoder's limit)"
fi
$CMP "$T/n.truth" "$T/libipt" --expect-gaps 0 --jcc0-any > "$T/cmp" ||
	{ cat "$T/cmp"; fail "libipt engine vs truth, directions of zero-displacement jcc left out"; }
nm "$CORPUS/c_nolibc" | awk '$3 ~ /^ptg_(jz_taken|jz_not_taken|jrcxz|loop)$/ { sub(/^0*/, "", $1); print "0x" $1 }' |
	sort > "$T/jcc0"
cat "$T/walker"/*.txt > "$T/w.txt"
cat "$T/libipt"/*.txt > "$T/l.txt"
diff "$T/w.txt" "$T/l.txt" | awk '/^[<>]/ { print $3 }' | sort -u > "$T/differ"
[ -s "$T/differ" ] || fail "the engines agree: the zero-displacement jcc did not show"
comm -23 "$T/differ" "$T/jcc0" > "$T/other"
[ ! -s "$T/other" ] || fail "the engines also differ at $(tr '\n' ' ' < "$T/other")"
echo "ok - c_nolibc: libipt engine exact but for the direction of $(wc -l < "$T/differ") zero-displacement jcc"
exit 0
