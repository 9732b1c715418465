#!/bin/sh
# ptgen-encode against libipt: each thread's AUX stream (per-thread mode)
# decoded by libipt's instruction and block decoders (ptblk) gives exactly
# the truth's taken branches and instruction count; an injected overflow or
# cut is reported there and nowhere else.
. "${top_srcdir:-.}/tests/lib/common.sh"
scratch
. "$top_srcdir/tests/ptgen/encode/common.sh"
[ -x "$BLK" ] || fail "ptblk not built"

build_and_trace pe_calls
build_and_trace pe_threads -pthread
build_and_trace pe_fork

# streams NAME WHAT: every stream listed in $T/q.index against $T/NAME.truth.
streams() {
	while read -r queue cpu pid tid; do
		"$BLK" "$T/$1.truth" "$pid" "$T/q.$queue.pt" > "$T/b.out" ||
			fail "ptblk failed on $1 thread $tid"
		python3 "$CMP" --format ptblk --tid "$tid" --insns \
			"$T/$1.truth" "$T/b.out" > "$T/b.cmp" ||
			{ cat "$T/b.cmp" >&2; fail "libipt disagrees: $2 thread $tid"; }
		echo "$2 thread $tid: $(tr '\n' ' ' < "$T/b.cmp")"
	done < "$T/q.index"
}

# check NAME OPTIONS...: encode per thread, check every thread's stream.
check() {
	name=$1
	shift
	"$ENC" --per-thread --aux-dump "$T/q" "$@" -o "$T/x.data" "$T/$name.truth" ||
		fail "ptgen-encode $* $name"
	streams "$name" "$name $*"
}

check pe_calls
check pe_calls --noretcomp --timing=tsc,mtc,cyc --interrupt-every 500
check pe_threads --psb-period 0 --long-tnt
check pe_threads --noretcomp --interrupt-every 500
check pe_fork --timing=tsc,mtc,cyc

# Scale mode: a random walk over libc's code, two threads.
libc=$(awk '$1 == "M" && $10 ~ /libc[.]so/ { print $10; exit }' "$T/pe_calls.truth")
[ -n "$libc" ] || fail "no libc mapping in the truth"
"$top_builddir/tests/ptgen/ptgen-walk" --per-thread --aux-dump "$T/q" --threads 2 \
	--slice 20000 --branches 50000 --seed 11 --noretcomp --truth "$T/walk.truth" \
	-o "$T/w.data" "$libc" 2> "$T/w.log" || fail "ptgen-walk"
streams walk "ptgen-walk --noretcomp"

# The compact binary ground truth says the same as the text one.
"$top_builddir/tests/ptgen/ptgen-walk" --cpus 2 --branches 20000 --seed 3 \
	--truth "$T/s.truth" --truth-bin "$T/s.bin" -o "$T/s.data" "$libc" 2> "$T/w.log" ||
	fail "ptgen-walk --truth-bin"
"$top_builddir/tests/ptgen/ptgen-walk" --read-bin "$T/s.bin" "$libc" |
	awk '$1 != "S" { $2 = 0; print }' > "$T/s.bin.txt" || fail "ptgen-walk --read-bin"
awk '$1 ~ /^[BARE]$/ { $2 = 0; print }' "$T/s.truth" > "$T/s.txt"
cmp -s "$T/s.txt" "$T/s.bin.txt" || fail "binary and text ground truths differ"
[ "$(grep -c '^B' "$T/s.txt")" -eq 20000 ] || fail "the walk did not make 20000 branches"

# Overflow and lost data in the single-threaded program.
"$ENC" --per-thread --aux-dump "$T/q" --ovf-at 3000:10 --gaps "$T/g" \
	-o "$T/o.data" "$T/pe_calls.truth" || fail "ptgen-encode --ovf-at"
read -r queue cpu pid tid < "$T/q.index"
"$BLK" "$T/pe_calls.truth" "$pid" "$T/q.0.pt" > "$T/b.out"
grep -q "^E .* overflow" "$T/b.out" || fail "libipt reported no overflow"
python3 "$CMP" --format ptblk --tid "$tid" --gaps "$T/g" "$T/pe_calls.truth" "$T/b.out" ||
	fail "overflow: libipt's error is not where it was injected"

"$ENC" --per-thread --aux-dump "$T/q" --psb-period 0 --drop 200@5000 \
	--gaps "$T/g" -o "$T/d.data" "$T/pe_calls.truth" || fail "ptgen-encode --drop"
"$BLK" "$T/pe_calls.truth" "$pid" "$T/q.0.pt" > "$T/b.out"
python3 "$CMP" --format ptblk --tid "$tid" --gaps "$T/g" "$T/pe_calls.truth" "$T/b.out" ||
	fail "lost data: libipt's errors are not where the data was cut"
# AUX buffer full: the consumer splits the stream where the TRUNCATED AUX
# record says; both pieces decode exactly.
"$ENC" --per-thread --aux-dump "$T/q" --psb-period 0 --truncate 1000@5000 \
	--gaps "$T/g" -o "$T/t.data" "$T/pe_calls.truth" || fail "ptgen-encode --truncate"
cut=$(awk '$1 == "truncate" { print $5 }' "$T/g")
[ -n "$cut" ] || fail "no truncation recorded"
"$BLK" "$T/pe_calls.truth" "$pid" "$T/q.0.pt" "$cut" > "$T/b.out"
python3 "$CMP" --format ptblk --tid "$tid" --gaps "$T/g" "$T/pe_calls.truth" "$T/b.out" ||
	fail "truncated: libipt does not decode both pieces exactly"
exit 0
