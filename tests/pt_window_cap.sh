#!/bin/sh
# Memory stays bounded when the trace has no PSB where a window could end
# (issue 3).  A window grows to at most 16 times its size looking for a PSB;
# beyond, the bytes up to the next PSB become a gap.  A real program
# (ptgen-trace) is encoded with a PSB every 2 KiB and converted with
# 64-byte windows limited to 1 KiB (PTCONV_WINDOW_MAX_BYTES): both engines must
#   - report each skip as a decode gap from the window's end to the first
#     PSB after it that Linux perf's packet dump lists,
#     and count its bytes once (lost-bytes = resume - aux);
#   - decode everything else exactly (each run between gaps is a run of
#     the ground truth, pt_truth_compare.py);
#   - count no more lost bytes than the recording has.
. "${top_srcdir:-.}/tests/lib/common.sh"
. "$top_srcdir/tests/ptgen/trace-lib.sh"
need_perf
need_encoder

p=c_static
trace_corpus "$p"
"$ENC" --psb-period 0 --buildid-dir "$T/bid" -o "$T/n.data" "$T/$p.truth" || fail "ptgen-encode failed"
"$PERF" script -D -i "$T/n.data" 2>/dev/null |
	sed -n 's/^\.  *\([0-9a-f]*\):.* PSB$/\1/p' > "$T/psb"
[ "$(wc -l < "$T/psb")" -gt 1 ] || fail "perf lists $(wc -l < "$T/psb") PSBs, want several"
aux=$("$PTCONV" info "$T/n.data" | awk '/^aux data:/ { print $3; exit }')
for eng in walker libipt; do
	rm -rf "$T/out"
	PTCONV_WINDOW_BYTES=64 PTCONV_WINDOW_MAX_BYTES=1024 "$PTCONV" "$T/n.data" -f text -o "$T/out" --buildid-dir "$T/bid" -q \
		--engine=$eng > "$T/err" 2>&1
	st=$?
	[ $st -le 1 ] || { cat "$T/err" >&2; fail "$eng: ptconv exited $st"; }
	$CMP "$T/$p.truth" "$T/out" > "$T/cmp" ||
		{ cat "$T/cmp" >&2; fail "$eng: a run between gaps differs from the truth"; }
	python3 - "$T/psb" "$T/out" "$aux" "$eng" <<'PY' || fail "$eng: gaps do not match perf's PSBs"
import glob, json, sys
psb = sorted(int(l, 16) for l in open(sys.argv[1]) if l.strip())
skips = 0
for f in glob.glob(sys.argv[2] + "/*.txt"):
    for line in open(f):
        w = line.split()
        if len(w) < 3 or w[1] != "gap" or "no PSB in" not in line:
            continue
        kv = dict(x.split("=", 1) for x in line.split(" : ")[0].split()[3:] if "=" in x)
        a = int(kv["aux"], 16)
        r = None if kv["resume"] == "-" else int(kv["resume"], 16)
        lost = int(kv["lost-bytes"])
        skips += 1
        inside = [p for p in psb if a < p <= (r if r is not None else 1 << 62)]
        if r is not None:
            # resumed at the first PSB after the window's end: the loss
            # ends there (ptconv-convert(1), GAPS)
            if inside != [r]:
                sys.exit("gap %x-%x: not resumed at the first PSB after it (perf: %s)"
                         % (a, r, [hex(p) for p in inside[:2]]))
            if lost != r - a:
                sys.exit("gap %x-%x: lost-bytes %d, want %d" % (a, r, lost, r - a))
        elif inside:
            sys.exit("gap from %x to the end skips the PSB at %x" % (a, inside[0]))
s = json.load(open(sys.argv[2] + "/summary.json"))
def find(o, k):
    if isinstance(o, dict):
        for kk, v in o.items():
            if kk == k:
                yield v
            else:
                yield from find(v, k)
    elif isinstance(o, list):
        for v in o:
            yield from find(v, k)
tot = max(find(s, "lost_trace_bytes"), default=0)
if not skips:
    sys.exit("no 'no PSB' gap although windows were capped")
if tot > int(sys.argv[3]):
    sys.exit("lost %d bytes of a %s-byte trace" % (tot, sys.argv[3]))
print("ok - %s: %d skips to the next PSB, each counted once; %d of %s bytes lost" % (sys.argv[4], skips, tot, sys.argv[3]))
PY
	grep -q . "$T/cmp" && echo "   $(grep -c reproduced "$T/cmp") thread(s), runs between gaps exact"
done

# Per CPU, threads switched in while data was lost lost branches too,
# though the trace never shows them running: c_spawn's three processes
# share one CPU.  With both engines every thread's trace must still be runs
# of the truth separated by gaps, never a run that silently stops short,
# and each "ran during" gap must hide branches the truth has for its thread
# (pt_truth_compare --bystanders).  The libipt engine cannot tell the
# direction of a jcc to its own fall-through (c_nolibc has one): --jcc0-any.
# Whether a skip covers a switch depends on where the PSBs fall, that is on
# every branch before: c_spawn builds its child's path from argv[0] and
# passes its environment on, so it runs as ./c_spawn with an empty
# environment, and posix_spawn's child looks at every signal the parent
# does not leave at its default (nohup and the background jobs of a script
# ignore some, and exec keeps that), so it runs with all signals at their
# defaults: the same trace in any build directory and test harness.  Three
# window caps are tried; together they must give such gaps.
p=c_spawn
mkdir "$T/fixed"
cp "$CORPUS/c_spawn" "$CORPUS/c_nolibc" "$T/fixed/" || fail "copy the corpus"
(cd "$T/fixed" && env -i python3 -c '
import os, signal, sys
for s in signal.valid_signals():
    if s not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$PTGEN_TRACE" -o "$T/$p.truth" -- ./c_spawn > /dev/null 2> "$T/$p.err")
grep -q '^X ' "$T/$p.truth" || fail "$p: ptgen-trace failed: $(cat "$T/$p.err")"
"$ENC" --cpus 1 --psb-period 0 --buildid-dir "$T/bid" -o "$T/s.data" "$T/$p.truth" || fail "ptgen-encode failed"
for eng in walker libipt; do
	jcc0=
	[ $eng = libipt ] && jcc0=--jcc0-any
	all=0 each=
	for max in 256 512 1024; do
		rm -rf "$T/out"
		PTCONV_WINDOW_BYTES=64 PTCONV_WINDOW_MAX_BYTES=$max "$PTCONV" "$T/s.data" -f text -o "$T/out" \
			--buildid-dir "$T/bid" -q --engine=$eng > "$T/err" 2>&1
		[ $? -le 1 ] || { cat "$T/err" >&2; fail "$p, $eng, cap $max: ptconv failed"; }
		$CMP --bystanders $jcc0 "$T/$p.truth" "$T/out" > "$T/cmp" ||
			{ cat "$T/cmp" >&2; fail "$p, $eng, cap $max: a thread's trace differs from the truth or stops without a gap"; }
		n=$(sed -n "s/^bystanders: \([0-9]*\) .*/\1/p" "$T/cmp")
		all=$((all + ${n:-0}))
		each="$each ${n:-0}"
	done
	[ $all -gt 0 ] || fail "$p, $eng: no thread got a gap for running during a loss, with any cap"
	echo "ok - $p on 1 CPU, $eng: $(grep -c reproduced "$T/cmp") threads, runs between gaps exact; gaps for threads that ran during a loss, each confirmed by the truth, with caps 256, 512, 1024:$each"
done
exit 0
