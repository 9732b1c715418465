#!/bin/sh
# Large recordings, made here so that nothing big is stored:
#  - a pipe-mode stream of 1 GiB (AUXTRACE records with 1 MiB of trace each,
#    and 2 million small records between them) fed to `ptconv info -`
#    through a pipe: every record and byte is counted, and the reader's
#    memory stays small (checked with getrusage when not built with ASan);
#  - a sparse file-mode recording whose AUXTRACE record claims 6 GiB of trace
#    (a hole in the file) with a record after it: offsets beyond 4 GiB work
#    and the trace is skipped with a seek, not read.
. "${top_srcdir:-.}/tests/lib/common.sh"
command -v python3 >/dev/null || skip "python3 not installed"
scratch
asan=0
grep -q __asan_init "$PTCONV" 2>/dev/null && asan=1

python3 - "$PTCONV" "$T" "$asan" <<'EOF'
import json, resource, struct, subprocess, sys
ptconv, tmp, asan = sys.argv[1], sys.argv[2], sys.argv[3] == '1'
fails = []

def rec(t, body, misc=0):
    return struct.pack('<IHH', t, misc, 8 + len(body)) + body

ST = 1 << 16 | 2 | 4 | 128	# IDENTIFIER | TID | TIME | CPU
attr = struct.pack('<IIQQQQQ', 1, 128, 9, 1, ST, 0, 1 << 18) + bytes(128 - 48)
sid = struct.pack('<IIQIIQ', 5, 6, 7, 1, 0, 42)
small = rec(12, struct.pack('<II', 5, 6) + sid)		# ITRACE_START, 40 bytes
n_aux, n_small_per = 1000, 2000
aux_size = 1 << 20

# 1. a 1 GiB pipe-mode stream through a pipe
p = subprocess.Popen([ptconv, 'info', '--json', '-'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
p.stdin.write(struct.pack('<QQ', 0x32454c4946524550, 16) + rec(64, attr + struct.pack('<Q', 42)))
block = small * n_small_per
trace = bytes(range(256)) * (aux_size // 256)
for i in range(n_aux):
    p.stdin.write(block)
    p.stdin.write(rec(71, struct.pack('<QQQIIII', aux_size, i * aux_size, 0, 0, 6, i % 4, 0)))
    p.stdin.write(trace)
    p.stdin.write(rec(68, b''))	# FINISHED_ROUND, as perf ends each pass (a stream without is cut short)
p.stdin.close()
out = p.stdout.read()
rc = p.wait()
ru = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss	# KiB
if rc != 0:
    fails.append('1 GiB stream: exit %d' % rc)
else:
    j = json.loads(out)
    want = {'64': 1, '12': n_aux * n_small_per, '71': n_aux, '68': n_aux}
    if j['record_types'] != want:
        fails.append('1 GiB stream: records %s, want %s' % (j['record_types'], want))
    if j['aux']['bytes'] != n_aux * aux_size:
        fails.append('1 GiB stream: aux bytes %d' % j['aux']['bytes'])
    cpus = {c['cpu']: c['bytes'] for c in j['aux']['per_cpu']}
    if cpus != {c: n_aux // 4 * aux_size for c in range(4)}:
        fails.append('1 GiB stream: per cpu %s' % cpus)
    print('1 GiB through a pipe: %d records, %d AUX bytes, max RSS %d KiB' %
          (sum(int(v) for v in j['record_types'].values()), j['aux']['bytes'], ru))
    if not asan and ru > 64 * 1024:
        fails.append('1 GiB stream: max RSS %d KiB > 64 MiB' % ru)

# 2. a sparse file with 6 GiB of claimed trace
big = 6 << 30
data = rec(71, struct.pack('<QQQIIII', big, 0, 0, 0, 6, 2, 0))
after = rec(12, struct.pack('<II', 5, 6) + sid)
data_off = 104 + 144 + 8
data_size = len(data) + big + len(after)
hdr = struct.pack('<QQQQQQQQQ', 0x32454c4946524550, 104, 144, 104, 144, data_off, data_size, 0, 0) + bytes(32)
path = tmp + '/sparse.data'
with open(path, 'wb') as f:
    f.write(hdr + attr + struct.pack('<QQ', 104 + 144, 8) + struct.pack('<Q', 42) + data)
    f.seek(data_off + len(data) + big)
    f.write(after)
p = subprocess.run([ptconv, 'info', '--json', path], capture_output=True)
if p.returncode != 0:
    fails.append('sparse: exit %d: %s' % (p.returncode, p.stderr.decode()[-300:]))
else:
    j = json.loads(p.stdout)
    if j['record_types'] != {'12': 1, '71': 1} or j['aux']['bytes'] != big:
        fails.append('sparse: %s, aux %d' % (j['record_types'], j['aux']['bytes']))
    print('sparse file of %d bytes: %s, %d AUX bytes skipped' % (data_off + data_size, j['record_types'], j['aux']['bytes']))
for f in fails:
    print('FAIL ' + f)
sys.exit(1 if fails else 0)
EOF
