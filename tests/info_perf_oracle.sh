#!/bin/sh
# `ptconv info --json` against Linux perf, run now as the oracle, on every
# perf.data in the shared folder and on recordings perf makes now (plain and
# zstd-compressed, file and pipe mode):
#   - records by type    vs the "event: N" lines of `perf script -D`
#   - AUX bytes per CPU  vs perf's PERF_RECORD_AUXTRACE lines
#   - header facts and event names/types/configs vs `perf report --header-only`
# Where perf stops early (this perf may not know a newer format, e.g. type 83
# or a larger perf_event_attr) only what perf read is compared, and the test
# says so; for compressed recordings the zstd command then decompresses the
# payloads and the records inside are counted by walking their headers.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_perf
command -v python3 >/dev/null || skip "python3 not installed (used to compare JSON)"
scratch

files=""
if [ -d "$PTC_SHARED/data" ]; then
	for f in "$PTC_SHARED"/data/intel_pt/* "$PTC_SHARED"/data/perf_format/* \
		 "$PTC_SHARED"/data/cs_etm/*; do
		[ -f "$f" ] || continue
		head -c 8 "$f" | grep -q PERFILE2 || continue
		files="$files $f"
	done
else
	echo "note: shared data absent at $PTC_SHARED; only fresh recordings are compared"
fi

# Fresh recordings (software events work in a VM); skipped when perf may not record.
if "$PERF" record -q -e cpu-clock -o "$T/plain.data" -- "$PTCONV" --version >/dev/null 2>&1; then
	"$PERF" record -q -e cpu-clock -z -o "$T/z.data" -- "$PTCONV" --version >/dev/null 2>&1 &&
		files="$files $T/z.data"
	"$PERF" record -q -e cpu-clock -z -o - -- "$PTCONV" --version 2>/dev/null >"$T/zpipe.data" &&
		files="$files $T/zpipe.data"
	"$PERF" record -q -e cpu-clock -o - -- "$PTCONV" --version 2>/dev/null >"$T/pipe.data" &&
		files="$files $T/pipe.data"
	files="$files $T/plain.data"
else
	echo "note: perf record is not permitted here; no fresh recordings"
fi
[ -n "$files" ] || skip "no recordings to compare"

status=0
for f in $files; do
	# pipe-mode files go to perf through standard input (perf 6.1 misreads
	# some pipe-mode files given with -i FILE)
	if [ "$(od -An -tu8 -j8 -N8 "$f" | tr -d ' ')" = 16 ]; then
		cat "$f" | "$PERF" script -D -i - >"$T/dump" 2>"$T/dump.err"; echo $? >"$T/dump.rc"
		cat "$f" | "$PERF" report --header-only -I -i - >"$T/hdr" 2>/dev/null
		cat "$f" | "$PERF" buildid-list -i - >"$T/bids" 2>/dev/null
	else
		"$PERF" script -D -i "$f" >"$T/dump" 2>"$T/dump.err"; echo $? >"$T/dump.rc"
		"$PERF" report --header-only -I -i "$f" >"$T/hdr" 2>/dev/null
	fi
	"$PERF" buildid-list -i "$f" >"$T/bids" 2>/dev/null
	"$PTCONV" info --json "$f" >"$T/info.json" 2>"$T/info.err"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
		echo "FAIL $f: ptconv info exited $rc"; cat "$T/info.err"; status=1; continue
	fi
	python3 - "$f" "$T/dump" "$T/dump.err" "$(cat "$T/dump.rc")" "$T/hdr" "$T/info.json" "$T/bids" <<'EOF' || status=1
import collections, json, re, sys
name, dump, dump_err, perf_rc, hdr, info, bids = sys.argv[1:8]
short = name.split('/')[-1]
j = json.load(open(info))
fails = []
perf_err = open(dump_err, errors='replace').read()
lines = open(dump, errors='replace').read().splitlines()
types = collections.Counter()
aux_cpu = collections.Counter()
for l in lines:
    m = re.match(r'^(?:0x[0-9a-f]+|0)(?:@\S+)? \[0x[0-9a-f]+\]: event: (\d+)$', l)
    if m and '@(null)' not in l:	# perf synthesises some (e.g. attrs for cs_etm): not in the file
        types[int(m.group(1))] += 1
    m = re.search(r'PERF_RECORD_AUXTRACE size: 0x([0-9a-f]+)\s+offset: .* cpu: (-?\d+)', l)
    if m:
        aux_cpu[int(m.group(2))] += int(m.group(1), 16)
ours = {int(k): v for k, v in j['record_types'].items()}
perf_complete = perf_rc == '0' and 'failed to process' not in perf_err and types
def zstd_oracle():
    """For recordings this perf cannot read: walk the 8-byte record headers,
    let the zstd command decompress the COMPRESSED/COMPRESSED2 payloads, and
    count the records inside."""
    import shutil, struct, subprocess
    if not shutil.which('zstd'):
        return None
    b = open(name, 'rb').read()
    hsize = struct.unpack_from('<Q', b, 8)[0]
    if hsize == 16:
        pos, end = 16, len(b)
    else:
        pos, size = struct.unpack_from('<QQ', b, 40)
        end = pos + size
    counts, payload = collections.Counter(), b''
    while pos + 8 <= end:
        t, misc, sz = struct.unpack_from('<IHH', b, pos)
        if sz < 8 or pos + sz > end:
            break
        if t == 81:
            payload += b[pos + 8:pos + sz]
        elif t == 83:
            payload += b[pos + 16:pos + 16 + struct.unpack_from('<Q', b, pos + 8)[0]]
        elif t in (1, 2, 3, 4, 7, 9, 10) or 11 <= t <= 21 or 64 <= t <= 82:
            counts[t] += 1
        if t == 71:
            pos += struct.unpack_from('<Q', b, pos + 8)[0]
        pos += sz
    # perf flushes but never ends its zstd frame: zstd complains at the end
    # after writing everything out
    plain = subprocess.run(['zstd', '-d', '-c', '-q'], input=payload, capture_output=True).stdout
    p = 0
    while p + 8 <= len(plain):
        t, misc, sz = struct.unpack_from('<IHH', plain, p)
        if sz < 8:
            break
        counts[t] += 1
        p += sz
    return counts
if not types:
    z = zstd_oracle() if j['compressed_records'] else None
    if z:
        for t in set(z) | set(ours):
            if z.get(t, 0) != ours.get(t, 0):
                fails.append('type %d: zstd-decompressed walk %d, ptconv %d' % (t, z.get(t, 0), ours.get(t, 0)))
        print('%s: this perf cannot read it; %d records of %d types match a walk of the zstd command\'s output'
              % (short, sum(z.values()), len(z)))
    else:
        print('%s: perf read no records (%s): nothing to compare records with'
              % (short, perf_err.strip().splitlines()[-1] if perf_err.strip() else 'rc ' + perf_rc))
elif perf_complete:
    for t in set(types) | set(ours):
        if t in (81, 83):
            continue
        if types.get(t, 0) != ours.get(t, 0):
            fails.append('type %d: perf %d, ptconv %d' % (t, types.get(t, 0), ours.get(t, 0)))
    print('%s: %d records of %d types match perf' % (short, sum(types.values()), len(types)))
else:
    # perf stopped early: every record it read must be among ours
    for t, n in types.items():
        if t not in (81, 83) and n > ours.get(t, 0):
            fails.append('type %d: perf read %d before stopping, ptconv %d' % (t, n, ours.get(t, 0)))
    print('%s: perf stopped early (%s); its %d records are a subset of ptconv\'s %d'
          % (short, (perf_err.strip().splitlines() or ['rc ' + perf_rc])[-1],
             sum(types.values()), sum(ours.values())))
    z = zstd_oracle() if j['compressed_records'] else None
    if z:
        for t in set(z) | set(ours):
            if z.get(t, 0) != ours.get(t, 0):
                fails.append('type %d: zstd-decompressed walk %d, ptconv %d' % (t, z.get(t, 0), ours.get(t, 0)))
        print('%s: %d records of %d types match a walk of the zstd command\'s output'
              % (short, sum(z.values()), len(z)))
if aux_cpu:
    mine = {c['cpu']: c['bytes'] for c in j['aux']['per_cpu']}
    if dict(aux_cpu) != mine:
        fails.append('AUX bytes per cpu: perf %s, ptconv %s' % (dict(aux_cpu), mine))
    else:
        print('%s: AUX bytes per cpu match perf: %s' % (short, dict(aux_cpu)))
# header facts
h = {}
events = []
for l in open(hdr, errors='replace').read().splitlines():
    m = re.match(r'^# ([a-z ]+?) ?: (.*)$', l)
    if not m:
        continue
    k, v = m.group(1), m.group(2)
    if k == 'event':
        events.append(v)
    else:
        h.setdefault(k, v)
checks = [('hostname', 'hostname'), ('os release', 'os_release'), ('perf version', 'perf_version'),
          ('arch', 'arch'), ('cpudesc', 'cpu_desc'), ('cpuid', 'cpuid'), ('cmdline', 'cmdline'),
          ('nrcpus online', 'nr_cpus_online'), ('nrcpus avail', 'nr_cpus_avail')]
compared = 0
for pk, jk in checks:
    if pk in h:
        want = h[pk].strip()
        got = j.get(jk)
        got = '' if got is None else str(got).strip()
        if want != got:
            fails.append('%s: perf "%s", ptconv "%s"' % (pk, want, got))
        compared += 1
if 'total memory' in h:
    if h['total memory'] != '%d kB' % j['total_mem_kb']:
        fails.append('total memory: perf %s, ptconv %d' % (h['total memory'], j['total_mem_kb']))
    compared += 1
if events:
    if len(events) != len(j['events']):
        fails.append('perf lists %d events, ptconv %d' % (len(events), len(j['events'])))
    for pe, je in zip(events, j['events']):
        nm = re.match(r'name = (.*?), ', pe)
        ty = re.search(r'\btype = (\d+)', pe)
        cf = re.search(r'\bconfig = (0x[0-9a-f]+)', pe)
        if nm and je['name'] is not None and nm.group(1) != je['name']:
            fails.append('event name: perf %s, ptconv %s' % (nm.group(1), je['name']))
        if (int(ty.group(1)) if ty else 0) != je['type']:
            fails.append('event %s type: perf %s, ptconv %d' % (je['name'], ty and ty.group(1), je['type']))
        if (int(cf.group(1), 16) if cf else 0) != je['config']:
            fails.append('event %s config: perf %s, ptconv %d' % (je['name'], cf and cf.group(1), je['config']))
    compared += 1
# lists: PMU mappings, CPU topology, hybrid topology (perf -I)
hl = open(hdr, errors='replace').read().splitlines()
m = [l for l in hl if l.startswith('# pmu mappings: ')]
if m:
    perf_pmus = sorted(tuple(x.rsplit(' = ', 1)) for x in m[0][len('# pmu mappings: '):].split(', '))
    mine = sorted((p['name'], str(p['type'])) for p in j['pmus'])
    if perf_pmus != mine:
        fails.append('pmu mappings: perf %s, ptconv %s' % (perf_pmus, mine))
    compared += 1
st = [l.split(' : ', 1)[1] for l in hl if l.startswith('# sibling threads : ')]
if st:
    if st != j['thread_siblings']:
        fails.append('thread siblings: perf %s, ptconv %s' % (st, j['thread_siblings']))
    compared += 1
sc = [l.split(' : ', 1)[1] for l in hl if l.startswith('# sibling sockets : ')]
if sc:
    if sc != j['core_siblings']:
        fails.append('core siblings: perf %s, ptconv %s' % (sc, j['core_siblings']))
    compared += 1
hy = [re.match(r'^# (\S+) cpu list : (.*)$', l).groups() for l in hl
      if re.match(r'^# \S+ cpu list : ', l) and not re.match(r'^# node\d+ ', l)]	# nodeN: NUMA
if hy:
    mine = [(x['pmu'], x['cpus']) for x in j['hybrid_topology']]
    if hy != mine:
        fails.append('hybrid topology: perf %s, ptconv %s' % (hy, mine))
    compared += 1
print('%s: %d header facts and %d events compared with perf --header-only' % (short, compared, len(events)))
# build-ids of the mapped images vs perf buildid-list
nb = 0
for l in open(bids, errors='replace'):
    m = re.match(r'^([0-9a-f]{8,40}) (.*)$', l.strip())
    if not m:
        continue
    bid, path = m.groups()
    for im in j['images']:
        if im['path'] == path or (path == '[kernel.kallsyms]' and im['path'].startswith('[kernel.kallsyms]')):
            nb += 1
            if im['build_id'] != bid:
                fails.append('build-id of %s: perf %s, ptconv %s' % (path, bid, im['build_id']))
if nb:
    print('%s: build-ids of %d images match perf buildid-list' % (short, nb))
for f in fails:
    print('FAIL %s: %s' % (short, f))
sys.exit(1 if fails else 0)
EOF
done
exit $status
