#!/bin/sh
# Broken copies of the shared recordings through `ptconv info`: truncated at
# record boundaries (taken from `perf script -D`, the oracle for where records
# start) and inside records, bytes flipped, sizes zeroed or past the end,
# wrong and byte-swapped magic, huge claimed sizes under a small `ulimit -v`.
# Each must end with exit 0 or 3 -- never a crash or a sanitizer report --
# and a failure must name the file and an offset (the exact offset where the
# oracle says it is known).
. "${top_srcdir:-.}/tests/lib/common.sh"
need_shared
need_perf
command -v python3 >/dev/null || skip "python3 not installed (used to edit the copies)"
scratch
# A sanitizer build reserves terabytes of address space: no ulimit -v there.
asan=0
grep -q __asan_init "$PTCONV" 2>/dev/null && asan=1

python3 - "$PTCONV" "$PERF" "$PTC_SHARED/data" "$T" "$asan" "$top_builddir/tests/unit/test_perf_reader" <<'EOF'
import os, re, struct, subprocess, sys
ptconv, perf, data, tmp, asan, cutter = sys.argv[1:7]
asan = asan == '1'
fails = []
runs = 0

def boundaries(path, pipe):
    """Record starts (file offsets) and AUXTRACE record offsets, from perf."""
    if pipe:
        with open(path, 'rb') as f:
            out = subprocess.run([perf, 'script', '-D', '-i', '-'], stdin=f, capture_output=True).stdout
    else:
        out = subprocess.run([perf, 'script', '-D', '-i', path], capture_output=True).stdout
    starts, aux = set(), set()
    for l in out.decode(errors='replace').splitlines():
        m = re.match(r'^(0x[0-9a-f]+|0)(@\S+)? \[0x([0-9a-f]+)\]: event: (\d+)$', l)
        if m and '@(null)' not in l:
            off = int(m.group(1), 16) + (16 if pipe else 0)
            starts.add(off)
            if m.group(4) == '71':
                aux.add(off)
    return sorted(starts), sorted(aux)

def run(blob, name, want_offset=None, what='', expect_fail=False, limit_mem=False):
    global runs
    runs += 1
    path = os.path.join(tmp, name)
    with open(path, 'wb') as f:
        f.write(blob)
    cmd = [ptconv, 'info', path]
    pre = None
    if limit_mem and not asan:
        import resource
        def pre():
            resource.setrlimit(resource.RLIMIT_AS, (400 << 20, 400 << 20))
    p = subprocess.run(cmd, capture_output=True, preexec_fn=pre)
    err = p.stderr.decode(errors='replace')
    tag = '%s (%s)' % (what, name)
    if p.returncode not in (0, 3):
        fails.append('%s: exit %d: %s' % (tag, p.returncode, err[-600:]))
        return
    if 'Sanitizer' in err or 'runtime error' in err:
        fails.append('%s: sanitizer: %s' % (tag, err[-600:]))
        return
    if expect_fail and p.returncode != 3:
        fails.append('%s: accepted (exit 0), should fail' % tag)
        return
    if p.returncode == 3:
        if not re.search(re.escape(path) + r': offset 0x[0-9a-f]+: ', err):
            fails.append('%s: message without file and offset: %s' % (tag, err.strip()[-300:]))
        elif want_offset is not None and ('%s: offset 0x%x:' % (path, want_offset)) not in err:
            fails.append('%s: want offset 0x%x in: %s' % (tag, want_offset, err.strip()[-300:]))

files = [('intel_pt/perf.data.intel_pt-4.14', False), ('intel_pt/perf.data.piped.intel_pt-4.14', True),
         ('perf_format/perf.data.hybrid_topology', False),
         ('perf_format/perf.data.piped.header_features_aligned-6.12', True),
         ('perf_format/sleep.compressed2.pipe.data', True), ('cs_etm/perf_etm.data', False)]
for rel, pipe in files:
    src = os.path.join(data, rel)
    if not os.path.exists(src):
        continue
    blob = open(src, 'rb').read()
    short = os.path.basename(rel)
    starts, aux = boundaries(src, pipe)
    if not pipe:
        data_off, data_size = struct.unpack_from('<QQ', blob, 40)
        data_end = data_off + data_size
    # every record boundary, and 3 and 20 bytes past it, in one process
    cutlist = []
    for b in starts:
        if 0 < b < len(blob):
            cutlist += [b, b + 3, b + 20]
    p = subprocess.run([cutter, '--cuts', src], input=''.join('%d\n' % c for c in cutlist).encode(),
                       capture_output=True)
    err = p.stderr.decode(errors='replace')
    if p.returncode != 0 or 'Sanitizer' in err or 'runtime error' in err:
        fails.append('%s: cutting crashed (exit %d): %s' % (short, p.returncode, err[-800:]))
    got = {}
    for l in p.stdout.decode(errors='replace').splitlines():
        n, code, msg = (l.split(' ', 2) + [''])[:3]
        got[int(n)] = (int(code), msg)
    for c in cutlist:
        runs += 1
        if c not in got:
            fails.append('%s cut at 0x%x: no result' % (short, c))
            continue
        code, msg = got[c]
        if code > 0:
            fails.append('%s cut at 0x%x: code %d' % (short, c, code))
        elif code < 0 and not re.search(r'broken\.data: offset 0x[0-9a-f]+: ', msg):
            fails.append('%s cut at 0x%x: message without offset: %s' % (short, c, msg))
        elif not pipe and c in starts and c < data_end and ('offset 0x%x:' % c) not in msg:
            # file mode: the data section says more records follow, and
            # the cut is exactly where the next record should start
            fails.append('%s cut at record 0x%x: want that offset in: "%s"' % (short, c, msg))
    # zero and tiny sizes at some boundaries
    for b in starts[1::max(1, len(starts) // 8)]:
        for size, why in ((0, 'size 0'), (4, 'size 4')):
            z = bytearray(blob)
            struct.pack_into('<H', z, b + 6, size)
            run(bytes(z), 'zero.data', b, '%s %s at 0x%x' % (short, why, b), expect_fail=True)
    last = starts[-1]
    z = bytearray(blob)
    struct.pack_into('<H', z, last + 6, 0xfff8)
    run(bytes(z), 'big.data', None if pipe else last, '%s last record size 0xfff8' % short,
        expect_fail=not pipe)
    # huge AUXTRACE sizes, memory limited
    for a in aux[:2]:
        for v in (1 << 62, (1 << 64) - 8, len(blob)):
            z = bytearray(blob)
            struct.pack_into('<Q', z, a + 8, v)
            run(bytes(z), 'hugeaux.data', a, '%s AUXTRACE size %#x at 0x%x' % (short, v, a),
                expect_fail=True, limit_mem=True)
    # flipped bytes at deterministic pseudo-random places
    x = 12345
    for i in range(25):
        x = (x * 1103515245 + 12345) & 0x7fffffff
        pos = x % len(blob)
        z = bytearray(blob)
        z[pos] ^= 0xff
        run(bytes(z), 'flip.data', None, '%s byte 0x%x flipped' % (short, pos), limit_mem=True)
    # magic
    run(b'PERFILE1' + blob[8:], 'magic.data', 0, '%s wrong magic' % short, expect_fail=True)
    run(struct.pack('>Q', 0x32454c4946524550) + blob[8:], 'swapped.data', 0,
        '%s byte-swapped magic' % short, expect_fail=True)
    if not pipe:
        for field, v in ((32, 1 << 62), (48, (1 << 63)), (48, len(blob) * 3), (40, 1 << 60), (16, 3)):
            z = bytearray(blob)
            struct.pack_into('<Q', z, field, v)
            run(bytes(z), 'hdr.data', None, '%s header field %d = %#x' % (short, field, v),
                limit_mem=True)
        # features table past the end: the file is readable, with a warning
        z = bytearray(blob)
        struct.pack_into('<Q', z, 48, data_size + 8)
        run(bytes(z), 'feat.data', None, '%s data size + 8' % short)
print('%d broken inputs run' % runs)
for f in fails:
    print('FAIL ' + f)
sys.exit(1 if fails else 0)
EOF
