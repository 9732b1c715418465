# Helpers for the ptgen-trace tests (sourced after tests/lib/common.sh).
PTGEN_TRACE="$top_builddir/tests/ptgen/ptgen-trace"
TRUTH_CHECK="$top_builddir/tests/ptgen/truth-check"
CORPUS="$top_builddir/tests/corpus"

# The encoder tests' set-up: ENC (ptgen-encode), CMP (ptconv's output
# against a truth), PCMP (perf script's against a truth), a scratch
# directory, and skips when python3 or ptrace are missing.
need_encoder() {
	ENC="$top_builddir/tests/ptgen/ptgen-encode"
	CMP="python3 $top_srcdir/tests/pt_truth_compare.py"
	PCMP="python3 $top_srcdir/tests/ptgen/encode/compare.py"
	[ -x "$ENC" ] || skip "ptgen-encode not built"
	command -v python3 >/dev/null || skip "python3 not installed"
	scratch
	need_ptrace
}

# trace_corpus P: the ground truth of corpus program P's real execution in
# $T/P.truth (ptgen-trace; its messages in $T/P.err), or the test fails.
trace_corpus() {
	"$PTGEN_TRACE" -o "$T/$1.truth" -- "$CORPUS/$1" > /dev/null 2> "$T/$1.err"
	grep -q '^X ' "$T/$1.truth" || fail "$1: ptgen-trace failed: $(cat "$T/$1.err")"
}

# Skips the test when this machine does not let a process trace its child.
need_ptrace() {
	[ -x "$PTGEN_TRACE" ] || fail "$PTGEN_TRACE not built"
	"$PTGEN_TRACE" -o /dev/null --vdso-dir "${T:-/tmp}" -- "$CORPUS/c_nolibc" >/dev/null 2>&1
	case $? in
	0) ;;
	77) skip "ptrace is not permitted here" ;;
	*) fail "ptgen-trace cannot trace c_nolibc" ;;
	esac
}

# One line per instruction objdump disassembles in BIN:
# "ADDR LEN CLASS TARGET" (see truth-check.c).  The class comes from the
# mnemonic as objdump prints it, the length from the bytes it shows.
objdump_list() {
	objdump -d --insn-width=16 "$1" | awk -F '\t' '
	/^ *[0-9a-f]+:\t/ && NF >= 3 {
		a = $1; sub(/^ */, "", a); sub(/:$/, "", a)
		len = split($2, bytes, " ")
		ins = $3
		while (ins ~ /^(notrack|bnd|repz|repnz|rep|ds|cs|data16|addr32|lock) /)
			sub(/^[a-z0-9]+ +/, "", ins)
		split(ins, w, " ")
		m = w[1]; op = w[2]
		cls = -1; tgt = "0"
		if (m == "jmp") cls = (op ~ /^\*/) ? 1 : 0
		else if (m == "call") cls = (op ~ /^\*/) ? 3 : 2
		else if (m == "ret" || m == "retq") cls = 4
		else if (m ~ /^j/ || m ~ /^loop/) cls = 5
		else if (m ~ /^(syscall|sysenter|int|int3|into|int1|icebp|iret|iretq|iretl|iretw|lret|lretq|ljmp|lcall|sysret|sysexit)$/) cls = 6
		if ((cls == 0 || cls == 2 || cls == 5) && op ~ /^[0-9a-f]+$/) tgt = op
		print a, len, cls, tgt
	}'
}

# awk without gawk's strtonum: a hex string (with or without 0x) as a
# number (exact below 2^53, which user-space addresses are).
AWK_HEX='function hex(s,  i, n, c) { sub(/^0x/, "", s); n = 0; for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(tolower(s), i, 1)); if (!c) break; n = n * 16 + c - 1 } return n }'
