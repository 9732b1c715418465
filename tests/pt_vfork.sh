#!/bin/sh
# A vfork child on its parent's CPU (issue 3).  tests/corpus/c_spawn
# (posix_spawn, i.e. clone with CLONE_VM|CLONE_VFORK, then vfork) is
# single-stepped by ptgen-trace and encoded per CPU with RET compression:
# the children return through frames their parent pushed, and the CPU's
# return stack compresses those returns.  Oracles: perf's own decoding of
# the file lists each thread's taken branches of the truth (compare.py),
# and ptconv's per-thread traces equal the truth with no gap
# (pt_truth_compare.py), on one CPU (parent and children share it) and on
# two.
. "${top_srcdir:-.}/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
need_perf
need_encoder

p=c_spawn
trace_corpus "$p"
threads=$(awk '$1 == "B" { print $3 }' "$T/$p.truth" | sort -u | wc -l)
for cpus in 1 2; do
	"$ENC" --cpus $cpus --buildid-dir "$T/bid" -o "$T/n.data" "$T/$p.truth" ||
		fail "$p: ptgen-encode --cpus $cpus"
	"$PERF" --buildid-dir "$T/bid" script -i "$T/n.data" --itrace=be \
		-F tid,ip,addr,flags > "$T/n.perf" 2> "$T/n.perr" ||
		fail "$p: perf script --itrace=be failed: $(tail -1 "$T/n.perr")"
	$PCMP "$T/$p.truth" "$T/n.perf" > "$T/n.pcmp" ||
		{ cat "$T/n.pcmp" >&2; fail "$p --cpus $cpus: perf disagrees with the truth (bad encoding)"; }
	rm -rf "$T/out"
	"$PTCONV" "$T/n.data" -f text -o "$T/out" --buildid-dir "$T/bid" -q ||
		fail "$p --cpus $cpus: ptconv exited $?"
	$CMP "$T/$p.truth" "$T/out" --expect-gaps 0 > "$T/cmp" ||
		{ cat "$T/cmp" >&2; fail "$p --cpus $cpus: ptconv disagrees with the truth"; }
	n=$(grep -c reproduced "$T/cmp")
	[ "$n" -eq "$threads" ] || fail "$p --cpus $cpus: $n of $threads threads compared"
	echo "ok - $p --cpus $cpus: perf $(tr '\n' ' ' < "$T/n.pcmp"); ptconv: $n of $threads threads exact"
done
exit 0
