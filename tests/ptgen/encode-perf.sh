#!/bin/sh
# ptgen-encode against Linux perf: for real executions of the test programs
# (traced by ptgen-trace), `perf script --itrace=be` must list exactly the
# truth's taken branches of every thread with no decode error, whatever
# the encoder's options (RET compression or not, timing packets, PSB
# period, TNT packing, CPUs, per-thread queues, pipe mode, interrupts);
# and with an injected overflow or lost AUX data perf must report the error
# there and nowhere else.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_perf
scratch
. "$top_srcdir/tests/ptgen/encode/common.sh"

build_and_trace pe_calls
build_and_trace pe_threads -pthread
build_and_trace pe_fork

# check NAME OPTIONS...: encode with OPTIONS, decode with perf, compare.
check() {
	name=$1
	shift
	"$ENC" "$@" --buildid-dir "$T/bid" -o "$T/x.data" "$T/$name.truth" ||
		fail "ptgen-encode $* $name"
	"$PERF" --buildid-dir "$T/bid" script -i "$T/x.data" --itrace=be \
		-F tid,ip,addr,flags > "$T/x.out" 2> "$T/x.err" ||
		{ cat "$T/x.err" >&2; fail "perf script failed: $name $*"; }
	python3 "$CMP" "$T/$name.truth" "$T/x.out" > "$T/x.cmp" ||
		{ cat "$T/x.cmp" >&2; fail "perf disagrees with the truth: $name $*"; }
	echo "$name $*: $(tr '\n' ' ' < "$T/x.cmp")"
}

check pe_calls
check pe_calls --noretcomp --timing=tsc,mtc,cyc
check pe_calls --psb-period 0 --long-tnt --interrupt-every 700
# Without timestamps perf cannot order a CPU's threads; one thread is fine.
check pe_calls --timing=none
check pe_threads
check pe_threads --cpus 2 --timing=tsc
check pe_threads --noretcomp --interrupt-every 700 --cpus 3
check pe_threads --per-thread --timing=none --long-tnt
check pe_fork
check pe_fork --cpus 2 --noretcomp --timing=tsc,mtc,cyc
check pe_fork --per-thread --psb-period 0
# perf record -z: the sideband in COMPRESSED records.
check pe_threads --compress 3 --cpus 2

# Scale mode: a random walk over libc's code, two CPUs, 50000 branches.
libc=$(awk '$1 == "M" && $10 ~ /libc[.]so/ { print $10; exit }' "$T/pe_calls.truth")
[ -n "$libc" ] || fail "no libc mapping in the truth"
"$top_builddir/tests/ptgen/ptgen-walk" --cpus 2 --branches 50000 --seed 7 \
	--truth "$T/walk.truth" -o "$T/w.data" "$libc" 2> "$T/w.log" || fail "ptgen-walk"
"$PERF" script -i "$T/w.data" --itrace=be -F tid,ip,addr,flags > "$T/w.out" 2> "$T/w.err" ||
	fail "perf script failed on the walk"
python3 "$CMP" "$T/walk.truth" "$T/w.out" || fail "perf disagrees with the walk"

# Walks of several thread counts, seeds and lengths, some so short that the
# last threads never get a time slice (they must not leave a user mode they
# never entered): perf decodes each with no error, exactly as walked.
for w in "3 1 30000 100000" "4 2 3000 500" "2 3 800 100000" "5 4 4000 300" \
	"1 5 2000 100000" "6 6 5000 2000"; do
	set -- $w
	"$top_builddir/tests/ptgen/ptgen-walk" --threads $1 --seed $2 --branches $3 \
		--slice $4 --cpus 2 --truth "$T/walk.truth" -o "$T/w.data" "$libc" \
		2> "$T/w.log" || { cat "$T/w.log" >&2; fail "ptgen-walk $w"; }
	"$PERF" script -i "$T/w.data" --itrace=be -F tid,ip,addr,flags > "$T/w.out" \
		2> "$T/w.err" || fail "perf script failed on the walk $w"
	python3 "$CMP" "$T/walk.truth" "$T/w.out" > "$T/w.cmp" ||
		{ cat "$T/w.cmp" >&2; fail "perf disagrees with the walk $w"; }
	echo "walk (threads seed branches slice) $w: $(tr '\n' ' ' < "$T/w.cmp")"
done

# Pipe mode, through a real pipe (perf treats a redirected file differently).
"$ENC" --pipe --buildid-dir "$T/bid" -o - "$T/pe_threads.truth" |
	"$PERF" --buildid-dir "$T/bid" script -i - --itrace=be -F tid,ip,addr,flags \
	> "$T/p.out" 2> "$T/p.err" || fail "perf script (pipe) failed"
python3 "$CMP" "$T/pe_threads.truth" "$T/p.out" || fail "pipe mode: perf disagrees"

# The vDSO is found through the build-id cache: its branches are there.
vdso=$(awk '$1 == "M" && $10 == "[vdso]" { print $5 }' "$T/pe_calls.truth" | head -1)
[ -n "$vdso" ] || fail "no vDSO mapping in the truth"

# Overflow: OVF before the 3000th branch, 10 branches lost.
"$ENC" --ovf-at 3000:10 --gaps "$T/g" --buildid-dir "$T/bid" -o "$T/o.data" \
	"$T/pe_calls.truth" || fail "ptgen-encode --ovf-at"
"$PERF" --buildid-dir "$T/bid" script -i "$T/o.data" --itrace=be \
	-F tid,ip,addr,flags > "$T/o.out" 2> "$T/o.err"
grep -q "Overflow packet" "$T/o.out" || fail "perf reported no overflow"
python3 "$CMP" --gaps "$T/g" "$T/pe_calls.truth" "$T/o.out" ||
	fail "overflow: perf's error is not where it was injected"

# Lost AUX data: 200 bytes cut at offset 5000; PSB every 2 KiB to resync.
"$ENC" --psb-period 0 --drop 200@5000 --gaps "$T/g" --buildid-dir "$T/bid" \
	-o "$T/d.data" "$T/pe_calls.truth" || fail "ptgen-encode --drop"
"$PERF" --buildid-dir "$T/bid" script -i "$T/d.data" --itrace=be \
	-F tid,ip,addr,flags > "$T/d.out" 2> "$T/d.err"
grep -q "AUX data had gaps in it 1 times" "$T/d.err" ||
	fail "perf did not see the PARTIAL AUX record"
python3 "$CMP" --gaps "$T/g" "$T/pe_calls.truth" "$T/d.out" ||
	fail "lost data: perf's errors are not where the data was cut"
# AUX buffer full (TRUNCATED): writing stops at offset 5000 for 1000 bytes
# of packets and resumes with a PSB+; perf reports the loss there.
"$ENC" --psb-period 0 --truncate 1000@5000 --gaps "$T/g" --buildid-dir "$T/bid" \
	-o "$T/t.data" "$T/pe_calls.truth" || fail "ptgen-encode --truncate"
"$PERF" --buildid-dir "$T/bid" script -i "$T/t.data" --itrace=be \
	-F tid,ip,addr,flags > "$T/t.out" 2> "$T/t.err"
grep -q "AUX data lost 1 times" "$T/t.err" || fail "perf did not see the TRUNCATED AUX record"
grep -q "Lost trace data" "$T/t.out" || fail "perf reported no lost trace data"
python3 "$CMP" --gaps "$T/g" "$T/pe_calls.truth" "$T/t.out" ||
	fail "truncated: perf's errors are not where the buffer filled"
exit 0
