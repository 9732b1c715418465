#!/bin/sh
# A file under its final name is whole (issue 18): every output is written
# under a temporary name (".NAME.ptconv-part") and renamed once complete.
# A conversion to every format is killed (SIGKILL) at many points; each
# file then under a final name must be byte for byte the file of an
# uninterrupted run (the output is deterministic), and the compressed ones
# must pass their own tools' tests.  A rerun into the same directory
# removes the killed run's temporaries and writes the same files.
. "${top_srcdir:-.}/tests/lib/common.sh"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
[ -x "$WALK" ] || skip "ptgen-walk not built"
command -v python3 >/dev/null || skip "python3 not installed"
BIN=$(walk_binary)
scratch
"$WALK" --branches 400000 --seed 3 --threads 2 -o "$T/w.data" "$BIN" 2>"$T/err" || { cat "$T/err"; fail "ptgen-walk"; }
F=ptconv,bt9,champsim,cbp2025,xtrace,bbv,text,xray
"$PTCONV" "$T/w.data" -f $F -o "$T/ref" -q -j 2 || fail "the uninterrupted run exited $?"
ls -A "$T/ref" | grep -q '^\.' && fail "an uninterrupted run left temporaries: $(ls -A "$T/ref" | grep '^\.')"
nref=$(ls "$T/ref" | wc -l)
[ "$nref" -ge 9 ] || fail "only $nref files in the reference run"

# check DIR: every file under a final name is the reference's
check() {
	for f in "$1"/*; do
		[ -e "$f" ] || continue
		b=$(basename "$f")
		cmp -s "$f" "$T/ref/$b" || fail "$b under its final name differs from the complete file"
		case $b in
		*.xz) ! command -v xz >/dev/null || xz -t "$f" || fail "$b: xz -t" ;;
		*.gz) gzip -t "$f" || fail "$b: gzip -t" ;;
		*.ptc) "$PTCONV" info "$f" >/dev/null || fail "$b: ptconv info" ;;
		*.json) python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$f" || fail "$b: not JSON" ;;
		esac
	done
}
killed=0 partial=0
for d in 0.05 0.1 0.2 0.3 0.5 0.8 1.2 1.8 2.5; do
	rm -rf "$T/k"
	"$PTCONV" "$T/w.data" -f $F -o "$T/k" -q -j 2 & pid=$!
	sleep $d
	kill -KILL $pid 2>/dev/null && killed=$((killed + 1))
	wait $pid 2>/dev/null
	[ -d "$T/k" ] || continue
	n=$(ls "$T/k" | wc -l)
	[ "$n" -lt "$nref" ] && partial=$((partial + 1))
	check "$T/k"
	# a rerun into the directory: no temporary left, the same files
	"$PTCONV" "$T/w.data" -f $F -o "$T/k" -q -j 2 2>"$T/err" || fail "rerun after a kill at $d s exited $?"
	ls -A "$T/k" | grep -q '^\.' && fail "the rerun left temporaries: $(ls -A "$T/k" | grep '^\.')"
	diff -r "$T/ref" "$T/k" >/dev/null || fail "the rerun after a kill at $d s wrote other files"
done
[ $killed -ge 3 ] || fail "only $killed conversions were still running when killed"
echo "ok - $killed conversions killed ($partial with files missing), every file under a final name whole; reruns the same"

# What a killed run leaves, read as a trace: `ptconv info` says what it is
rm -rf "$T/k"
"$PTCONV" "$T/w.data" -f $F -o "$T/k" -q -j 2 & pid=$!
sleep 0.5
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
unfinished=0
for f in "$T"/k/.*.ptc.ptconv-part; do
	[ -e "$f" ] || continue
	"$PTCONV" info "$f" >/dev/null 2>"$T/err" && fail "info took an unfinished trace"
	unfinished=$((unfinished + 1))
	grep -q "incomplete trace\|cut short\|unfinished output" "$T/err" || fail "info on an unfinished trace: $(cat "$T/err")"
done
[ $unfinished -ge 1 ] || fail "the run killed at 0.5 s left no unfinished .ptc to read"
: > "$T/empty.ptc"
"$PTCONV" info "$T/empty.ptc" >/dev/null 2>"$T/err" && fail "info took an empty file"
grep -q "empty file" "$T/err" || fail "info on an empty file: $(cat "$T/err")"
head -c 5000 "$T/ref/$(cd "$T/ref" && ls *.ptc | head -1)" > "$T/cut.ptc"
"$PTCONV" info "$T/cut.ptc" >/dev/null 2>"$T/err" && fail "info took a cut trace"
grep -q "cut short" "$T/err" || fail "info on a cut trace: $(cat "$T/err")"
echo "ok - ptconv info names an unfinished, a cut and an empty trace as such"

# SIGTERM and SIGINT: the conversion stops at its next trace window,
# removes its unfinished files, says so, and dies of the signal
stopped=0
for sig in TERM INT; do
	for d in 0.2 0.6 1.2; do
		rm -rf "$T/s"
		# (a background job of a script ignores SIGINT unless set up)
		( trap - INT; exec "$PTCONV" "$T/w.data" -f $F -o "$T/s" -q -j 2 2>"$T/serr" ) & pid=$!
		sleep $d
		kill -$sig $pid 2>/dev/null || continue
		wait $pid
		st=$?
		case $sig in TERM) want=143 ;; INT) want=130 ;; esac
		[ $st = 0 ] && continue	# it had finished
		[ $st = $want ] || fail "SIG$sig at $d s: exit status $st, want $want (death by the signal)"
		grep -q "interrupted" "$T/serr" || fail "SIG$sig at $d s: nothing said: $(cat "$T/serr")"
		ls -A "$T/s" | grep -q '^\.' && fail "SIG$sig at $d s: temporaries left: $(ls -A "$T/s" | grep '^\.')"
		check "$T/s"
		stopped=$((stopped + 1))
	done
done
[ $stopped -ge 2 ] || fail "only $stopped conversions were stopped by a signal"
echo "ok - $stopped conversions stopped by SIGTERM or SIGINT: no temporary left, the files kept whole, death by the signal"

# The directory is this run's: an earlier conversion's files of other
# formats go (summary.json lists exactly this run's), files that are not
# ptconv's names stay, and so does the input even when it is there
rm -rf "$T/d"; mkdir "$T/d"
cp -r "$T/ref/." "$T/d/"
for f in notes.txt trace.c trace.1.ptc.bak 1-2.txt.orig xtrace.log; do echo keep > "$T/d/$f"; done
cp "$T/w.data" "$T/d/trace.7.ptc"	# an input with an output's name
mkdir "$T/d2"; echo '{"another": "tool"}' > "$T/d2/summary.json"
"$PTCONV" "$T/d/trace.7.ptc" -f bt9 -o "$T/d" 2>"$T/err" || fail "run into a used directory exited $?"
for f in notes.txt trace.c trace.1.ptc.bak 1-2.txt.orig xtrace.log; do
	[ "$(cat "$T/d/$f")" = keep ] || fail "$f, not a ptconv output, was touched"
done
cmp -s "$T/d/trace.7.ptc" "$T/w.data" || fail "the input was touched"
left=$(cd "$T/d" && ls | grep -v -e '^notes.txt$' -e '^trace.c$' -e '^trace.1.ptc.bak$' -e '^1-2.txt.orig$' \
	-e '^xtrace.log$' -e '^trace.7.ptc$' -e '\.bt9\.gz$' -e '^summary.json$')
[ -z "$left" ] || fail "files of the earlier run left: $left"
grep -q "removed" "$T/err" || fail "nothing said about the earlier run's files"
python3 - "$T/d/summary.json" <<'PY' || fail "summary.json lists other files than this run's"
import json, sys
s = json.load(open(sys.argv[1]))
files = [f for t in s["threads"] for f in t.get("files", [])]
assert files and all(f.endswith(".bt9.gz") for f in files), files
PY
# another tool's summary.json is not taken for an earlier run's
"$PTCONV" "$T/w.data" -f bt9 -o "$T/d2" -q 2>/dev/null
[ $? = 4 ] || fail "a run into a directory with another tool's summary.json did not refuse to replace it"
grep -q another "$T/d2/summary.json" || fail "another tool's summary.json was replaced"
echo "ok - a run into a used directory removes the earlier conversion's files only"

# Write errors without root: a file size limit (ulimit -f, SIGXFSZ
# ignored) makes writes fail with EFBIG at several points of the run.
# Exit status 4, the failing file named, no temporary left, and every file
# under a final name whole (a thread's files are finished only when its
# whole trace is written)
failed=0
for lim in 8 64 512 4096; do
	rm -rf "$T/f"
	( ulimit -f $lim; trap '' XFSZ; exec "$PTCONV" "$T/w.data" -f $F -o "$T/f" -q -j 2 ) 2>"$T/ferr"
	st=$?
	[ $st = 0 ] && continue
	[ $st = 4 ] || { cat "$T/ferr" >&2; fail "file size limit $lim KiB: exit status $st, want 4"; }
	grep -q "$T/f/" "$T/ferr" || fail "file size limit $lim KiB: no file named: $(cat "$T/ferr")"
	ls -A "$T/f" | grep -q '^\.' && fail "file size limit $lim KiB: temporaries left: $(ls -A "$T/f" | grep '^\.')"
	check "$T/f"
	failed=$((failed + 1))
done
[ $failed -ge 2 ] || fail "only $failed runs hit the file size limit"
echo "ok - $failed runs whose writes failed (EFBIG): exit 4, the file named, no temporary, every file whole"

# -o naming the input file: refused before anything is written, the input
# untouched
cp "$T/w.data" "$T/in.data"
"$PTCONV" "$T/in.data" -o "$T/in.data" -q 2>"$T/err"
st=$?
[ $st = 4 ] || fail "-o naming the input: exit status $st, want 4"
grep -q "in.data: cannot create the output directory: Not a directory" "$T/err" || fail "-o naming the input: $(cat "$T/err")"
cmp -s "$T/in.data" "$T/w.data" || fail "-o naming the input: the input changed"
echo "ok - -o naming the input is refused, the input untouched"
