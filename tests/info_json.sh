#!/bin/sh
# `ptconv info --json` prints one valid JSON object for every shared
# recording (python's json module is the parser), the same facts as the text
# output, the event kinds the shared README documents (intel_pt for the
# Intel PT captures, cs_etm for the ETM captures), the Intel PT config
# fields perf's header shows as config = 0x300e601 decoded per the kernel's
# format (pt:0 tsc:10 mtc:9 branch:13 mtc_period:14-17 psb_period:24-27), and
# it reads pipe-mode recordings from standard input.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_shared
command -v python3 >/dev/null || skip "python3 not installed"
scratch
st=0
for f in "$PTC_SHARED"/data/intel_pt/* "$PTC_SHARED"/data/perf_format/* "$PTC_SHARED"/data/cs_etm/*.data; do
	head -c 8 "$f" | grep -q PERFILE2 || continue
	"$PTCONV" info --json "$f" >"$T/j" 2>"$T/e"
	rc=$?
	[ $rc -eq 0 ] || { echo "FAIL: exit $rc on $f: $(cat "$T/e")"; st=1; }
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["error"] is None, j["error"]' "$T/j" \
		|| { echo "FAIL: bad JSON for $f"; st=1; }
done
# text and JSON for a file that is not perf.data
"$PTCONV" info "$PTC_SHARED/data/cs_etm/perf_inject.data" 2>"$T/e" && fail "perf_inject.data accepted"
grep -q 'offset 0x0: not a perf.data file' "$T/e" || fail "no clear message: $(cat "$T/e")"

top_srcdir=$top_srcdir python3 - "$PTCONV" "$PTC_SHARED/data" <<'PY' || st=1
import json, subprocess, sys
ptc, data = sys.argv[1:3]
def info(path, stdin=None):
    args = [ptc, 'info', '--json', '-' if stdin else path]
    inp = open(path, 'rb') if stdin else None
    return json.loads(subprocess.run(args, stdin=inp, capture_output=True, check=True).stdout)
fails = []
pt = info(data + '/intel_pt/perf.data.intel_pt-4.14')
ev = pt['events'][0]
if ev['kind'] != 'intel_pt':
    fails.append('intel_pt event kind %s' % ev['kind'])
c = ev.get('intel_pt_config', {})
want = {'pt': 1, 'tsc': 1, 'mtc': 1, 'branch': 1, 'mtc_period': 3, 'psb_period': 3, 'cyc': 0, 'noretcomp': 0}
for k, v in want.items():
    if c.get(k) != v:
        fails.append('intel_pt config %s = %s, want %s' % (k, c.get(k), v))
if [e['kind'] for e in pt['events'][1:]] != ['other'] * 3:
    fails.append('cycles/dummy kinds %s' % [e['kind'] for e in pt['events']])
ai = pt['auxtrace_info']
if ai['kind'] != 'intel_pt' or ai['pmu_type'] != 6:
    fails.append('auxtrace info %s' % ai)
# per_cpu_mmaps: perf recorded per CPU (README); tsc_bit is the config bit 10
if ai['per_cpu_mmaps'] != 1 or ai['tsc_bit'] != 1 << 10 or ai['noretcomp_bit'] != 1 << 11:
    fails.append('auxtrace info fields %s' % ai)
# the README: 2 AUXTRACE records, 12,240 B on cpu 0, 137,728 B on cpu 3
if [(c['cpu'], c['bytes']) for c in pt['aux']['per_cpu']] != [(0, 12240), (3, 137728)]:
    fails.append('aux per cpu %s' % pt['aux']['per_cpu'])
paths = [i['path'] for i in pt['images']]
for p in ('/usr/bin/coreutils', '/lib64/libc-2.23.so'):
    if p not in paths:
        fails.append('image %s not listed' % p)
for f in ('cs_etm/perf_etm.data', 'cs_etm/perf_kernel.data'):
    e = info(data + '/' + f)
    if e['events'][0]['kind'] != 'cs_etm' or e['auxtrace_info']['kind'] != 'cs_etm':
        fails.append('%s kind %s' % (f, e['events'][0]['kind']))
# pipe mode from standard input (a real pipe) equals reading the file
a = info(data + '/intel_pt/perf.data.piped.intel_pt-4.14')
subprocess.run('cat "%s" | "%s" info --json - > /dev/null' % (data + '/intel_pt/perf.data.piped.intel_pt-4.14', ptc),
               shell=True, check=True)
b = json.loads(subprocess.run('cat "%s" | "%s" info --json -' % (data + '/intel_pt/perf.data.piped.intel_pt-4.14', ptc),
                              shell=True, capture_output=True, check=True).stdout)
for k in ('record_types', 'aux', 'threads', 'images', 'events'):
    if a[k] != b[k]:
        fails.append('stdin differs in %s' % k)
# the README: perf_with_missing_aux_data.data is an ETM file with no AUX data
m = info(data + '/cs_etm/perf_with_missing_aux_data.data')
if not m['aux']['aux_data_missing'] or m['aux']['bytes'] != 0 or m['aux']['aux_records'] == 0:
    fails.append('missing AUX data not flagged: %s' % m['aux'])
if pt['aux']['aux_data_missing']:
    fails.append('intel_pt file flagged as missing AUX data')
# the compressed2 pipe file: stray text after the last record, reported with its offset
z = info(data + '/perf_format/sleep.compressed2.pipe.data')
if z['trailing_garbage_bytes'] == 0 or not z['warnings'] or 'trailing garbage' not in z['warnings'][0]:
    fails.append('compressed2 pipe: trailing garbage not reported: %s' % z['warnings'])
if z['compressed_records'] < 1:
    fails.append('compressed2 pipe: no compressed records')
# the synthesised seeds: expected values are what tests/fuzz/gen_perf_seeds.py wrote
import os
seeds = os.environ['top_srcdir'] + '/tests/fuzz/seeds/fuzz_perf_reader/'
for f in ('file.data', 'pipe.data', 'file-compressed.data', 'pipe-compressed2.data'):
    s = info(seeds + f)
    want = {'hostname': 'seedhost', 'cmdline': 'perf record ./bench', 'unknown_records': 1}
    for k, v in want.items():
        if s[k] != v:
            fails.append('%s: %s = %r, want %r' % (f, k, s[k], v))
    if s['events'][0]['kind'] != 'intel_pt' or s['auxtrace_info']['filter'] != 'filter main @ /usr/bin/bench':
        fails.append('%s: event/filter %s %s' % (f, s['events'][0], s['auxtrace_info']))
    c = s['events'][0]['intel_pt_config']
    if (c['pt'], c['tsc'], c['branch'], c['mtc']) != (1, 1, 1, 0):
        fails.append('%s: config %s' % (f, c))
    a = s['aux']
    got = (a['aux_records'], a['truncated'], a['partial'], a['collision'], a['lost_records'],
           a['lost_events'], a['lost_samples_records'], a['lost_samples'])
    if got != (1, 1, 1, 0, 1, 3, 1, 5):
        fails.append('%s: aux/lost counts %s' % (f, got))
    if 'compressed' not in f:
        if [(c['cpu'], c['bytes']) for c in a['per_cpu']] != [(0, 200), (1, 64)] or \
           [(c['tid'], c['bytes']) for c in a['per_thread']] != [(42, 200), (43, 64)]:
            fails.append('%s: aux per cpu/thread %s %s' % (f, a['per_cpu'], a['per_thread']))
    e = s['auxtrace_error_list']
    if s['auxtrace_errors'] != 1 or e[0]['msg'] != 'decoder error' or e[0]['ip'] != 0x401234:
        fails.append('%s: auxtrace errors %s' % (f, e))
    th = [(t['pid'], t['tid'], t['comm'], t['forked'], t['exited']) for t in s['threads']]
    if th != [(42, 42, 'bench', False, False), (42, 43, 'bench', True, True)]:
        fails.append('%s: threads %s' % (f, th))
    im = [(i['path'], i['build_id']) for i in s['images']]
    if im != [('/usr/bin/bench', '0102030405060708090a0b0c0d0e0f1011121314'), ('/lib/libc.so.6', None)]:
        fails.append('%s: images %s' % (f, im))
for f in fails:
    print('FAIL ' + f)
sys.exit(1 if fails else 0)
PY
exit $st
