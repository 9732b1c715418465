#!/bin/sh
# The sample-id fields the reader parses (sample_id_all trailers laid out by
# each record's event, found by id when the events differ; the leading fields
# of SAMPLE records) against what `perf script -D` prints for every record:
# "CPU TIME OFFSET [SIZE]: PERF_RECORD_<type> ... pid/tid: ip" -- per record
# offset, on every shared recording perf reads and on fresh ones.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_perf
command -v python3 >/dev/null || skip "python3 not installed"
scratch
files=""
if [ -d "$PTC_SHARED/data" ]; then
	for f in "$PTC_SHARED"/data/intel_pt/* "$PTC_SHARED"/data/perf_format/perf.data.* \
		 "$PTC_SHARED"/data/cs_etm/*.data; do
		head -c 8 "$f" | grep -q PERFILE2 && files="$files $f"
	done
fi
if "$PERF" record -q -e cpu-clock -o "$T/plain.data" -- "$PTCONV" --version >/dev/null 2>&1; then
	files="$files $T/plain.data"
	"$PERF" record -q -e cpu-clock -e dummy -o - -- "$PTCONV" --version 2>/dev/null >"$T/pipe.data" &&
		files="$files $T/pipe.data"
fi
[ -n "$files" ] || skip "no recordings"
st=0
for f in $files; do
	pipe=0
	if [ "$(od -An -tu8 -j8 -N8 "$f" | tr -d ' ')" = 16 ]; then
		pipe=1
		cat "$f" | "$PERF" script -D -i - >"$T/perf" 2>/dev/null
	else
		"$PERF" script -D -i "$f" >"$T/perf" 2>/dev/null
	fi
	"$top_builddir/tests/unit/test_perf_reader" --records "$f" >"$T/ours" 2>"$T/err" ||
		{ echo "FAIL: reading $f: $(cat "$T/err")"; st=1; continue; }
	python3 - "$f" "$T/perf" "$T/ours" "$pipe" <<'PY' || st=1
import collections, re, sys
name, perf, ours, pipe = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == '1'
short = name.split('/')[-1]
p = collections.defaultdict(list)
for l in open(perf, errors='replace'):
    # perf prints the CPU column only when the events sample the CPU
    m = re.match(r'^(?:(\d+) )?(\d+) (0x[0-9a-f]+) \[0x[0-9a-f]+\]: PERF_RECORD_([A-Z0-9_]+)(.*)$', l)
    if m:
        off = int(m.group(3), 16) + (16 if pipe else 0)
        cpu = int(m.group(1)) if m.group(1) is not None else None
        p[off].append((cpu, int(m.group(2)), m.group(4), m.group(5)))
o = {}
for l in open(ours):
    off, typ, valid, cpu, time, pid, tid, ip = l.split()
    o.setdefault(int(off, 16), []).append((int(typ), int(valid), int(cpu), int(time), int(pid), int(tid), int(ip, 16)))
TID, TIME, CPU, IP = 1, 2, 16, 64
fails, n = [], 0
for off, recs in o.items():
    if len(recs) != 1 or len(p.get(off, [])) != 1:
        continue	# compressed records share an offset; perf skipped some
    typ, valid, cpu, time, pid, tid, ip = recs[0]
    pcpu, ptime, ptype, rest = p[off][0]
    if typ >= 64:
        continue	# perf tool records carry no sample id
    n += 1
    if valid & CPU and pcpu is not None and pcpu != cpu:
        fails.append('0x%x %s: cpu perf %d, ptconv %d' % (off, ptype, pcpu, cpu))
    if valid & TIME and ptime != time:
        fails.append('0x%x %s: time perf %d, ptconv %d' % (off, ptype, ptime, time))
    if ptype.startswith('SAMPLE'):
        m = re.search(r': (-?\d+)/(-?\d+): (0x[0-9a-f]+)', rest)
        if m and valid & TID and (int(m.group(1)) & 0xffffffff, int(m.group(2)) & 0xffffffff) != (pid, tid):
            fails.append('0x%x SAMPLE: pid/tid perf %s/%s, ptconv %d/%d' % (off, m.group(1), m.group(2), pid, tid))
        if m and valid & IP and int(m.group(3), 16) != ip:
            fails.append('0x%x SAMPLE: ip perf %s, ptconv 0x%x' % (off, m.group(3), ip))
print('%s: sample ids of %d records compared with perf' % (short, n))
for f in fails[:20]:
    print('FAIL %s: %s' % (short, f))
sys.exit(1 if fails else 0)
PY
done
exit $st
