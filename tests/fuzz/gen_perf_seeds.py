#!/usr/bin/env python3
"""Synthesise small perf.data files as seeds for fuzz_perf_reader.

Each seed exercises one part of the format: file mode with several events
(sample_id_all, PERF_SAMPLE_IDENTIFIER), feature sections, AUXTRACE data,
pipe mode with in-stream header records, COMPRESSED and COMPRESSED2 records
(zstd via the `zstd` command) whose records straddle two compressed records.
Usage: gen_perf_seeds.py OUTDIR
"""
import os
import struct
import subprocess
import sys

ST_IP, ST_TID, ST_TIME, ST_ID, ST_CPU, ST_IDENTIFIER = 1, 2, 4, 64, 128, 1 << 16


def attr(type_, config, sample_type, sample_id_all=True, exclude_kernel=False):
    flags = (1 << 18 if sample_id_all else 0) | (1 << 5 if exclude_kernel else 0)
    # type, size, config, sample_period, sample_type, read_format, flags ...
    a = struct.pack('<IIQQQQQ', type_, 128, config, 1, sample_type, 0, flags)
    return a + bytes(128 - len(a))


def rec(type_, body, misc=0):
    size = 8 + len(body)
    pad = (-size) % 8
    return struct.pack('<IHH', type_, misc, size + pad) + body + bytes(pad)


def sid(pid, tid, time, id_, cpu):
    # trailer for sample_type TID|TIME|ID|CPU|IDENTIFIER, in that order
    return struct.pack('<IIQQIIQ', pid, tid, time, id_, cpu, 0, id_)


def cstr(s, align=8):
    b = s.encode() + b'\0'
    return b + bytes((-len(b)) % align)


def pstr(s):
    b = s.encode() + b'\0'
    b += bytes((-len(b)) % 64)
    return struct.pack('<I', len(b)) + b


ST = ST_IDENTIFIER | ST_IP | ST_TID | ST_TIME | ST_ID | ST_CPU


def records(with_aux=True):
    out = []
    t = 1000
    out.append(rec(3, struct.pack('<II', 42, 42) + cstr('bench') + sid(42, 42, t, 11, 0), misc=1 << 13))
    out.append(rec(7, struct.pack('<IIIIQ', 42, 1, 43, 42, t) + sid(42, 43, t, 11, 1)))
    bid = bytes(range(1, 21))
    out.append(rec(10, struct.pack('<IIQQQ', 42, 42, 0x400000, 0x1000, 0) +
                   struct.pack('<BBH', 20, 0, 0) + bid + struct.pack('<II', 5, 2) +
                   cstr('/usr/bin/bench') + sid(42, 42, t + 1, 11, 0), misc=2 | (1 << 14)))
    out.append(rec(1, struct.pack('<IIQQQ', 42, 42, 0x7f0000, 0x2000, 0) + cstr('/lib/libc.so.6') +
                   sid(42, 42, t + 2, 21, 0), misc=2))
    out.append(rec(12, struct.pack('<II', 42, 42) + sid(42, 42, t + 3, 11, 0)))
    out.append(rec(15, struct.pack('<II', 42, 43) + sid(0, 0, t + 4, 11, 0), misc=1 << 13))
    out.append(rec(9, struct.pack('<QQIIQQI', 21, 0x401000, 42, 42, t + 5, 21, 0) + bytes(4)))
    out.append(rec(11, struct.pack('<QQQ', 0, 4096, 1 | 4) + sid(42, 42, t + 6, 11, 0)))
    out.append(rec(2, struct.pack('<QQ', 11, 3) + sid(42, 42, t + 7, 11, 0)))
    out.append(rec(13, struct.pack('<Q', 5) + sid(42, 42, t + 8, 21, 0)))
    out.append(rec(72, struct.pack('<IIIIIIQ', 1, 2, 0, 42, 42, 1, 0x401234) +
                   b'decoder error'.ljust(64, b'\0') + struct.pack('<QII', t + 9, 0, 0)))
    # intel_pt AUXTRACE_INFO: 17 fields then the filter string
    filt = cstr('filter main @ /usr/bin/bench')
    priv = [8, 31, 1789569706, 0, 1, 1 << 10, 1 << 11, 3, 0, 1, 1 << 9, 0xf << 14, 100, 2, 2, 12,
            len(filt)]
    out.append(rec(70, struct.pack('<II', 1, 0) + struct.pack('<%dQ' % len(priv), *priv) + filt))
    out.append(rec(79, struct.pack('<QQQQQBB', 31, 1789569706, 5, 0, 0, 1, 0) + bytes(6)))
    if with_aux:
        data = bytes((i * 7) & 0xff for i in range(200))
        out.append(rec(71, struct.pack('<QQQIIII', len(data), 0, 0x1234, 0, 42, 0, 0)) + data)
        data2 = bytes(64)
        out.append(rec(71, struct.pack('<QQQIIII', len(data2), 200, 0x1234, 1, 43, 1, 0)) + data2)
    out.append(rec(4, struct.pack('<IIIIQ', 42, 1, 43, 42, t + 10) + sid(42, 43, t + 10, 11, 1)))
    out.append(rec(68, b''))
    out.append(rec(200, b'unknown record type'))
    return out


def feature_bytes():
    f = {}
    f[3] = pstr('seedhost')
    f[4] = pstr('6.1.0-seed')
    f[5] = pstr('6.1.seed')
    f[6] = pstr('x86_64')
    f[7] = struct.pack('<II', 4, 2)
    f[8] = pstr('Seed CPU')
    f[9] = pstr('GenuineIntel,6,85,4')
    f[10] = struct.pack('<Q', 1024)
    f[11] = struct.pack('<I', 3) + pstr('perf') + pstr('record') + pstr('./bench')
    bid = bytes(range(1, 21))
    be = struct.pack('<i', 42) + bid + bytes(4) + cstr('/usr/bin/bench', 64)
    f[2] = struct.pack('<IHH', 0, 2, 8 + len(be)) + be
    f[16] = struct.pack('<I', 2) + struct.pack('<I', 8) + pstr('intel_pt') + struct.pack('<I', 4) + pstr('cpu')
    f[21] = struct.pack('<QQ', 1000, 2000)
    f[23] = struct.pack('<Q', 1)
    return f


def event_desc(attrs_ids):
    b = struct.pack('<II', len(attrs_ids), 128)
    for (a, ids, name) in attrs_ids:
        b += a + struct.pack('<I', len(ids)) + pstr(name) + struct.pack('<%dQ' % len(ids), *ids)
    return b


ATTRS = [(attr(8, 0x2001 | (1 << 10), ST), [11, 12], 'intel_pt//u'),
         (attr(1, 9, ST, exclude_kernel=True), [21, 22], 'dummy:u')]


def file_mode(data):
    feats = feature_bytes()
    feats[12] = event_desc(ATTRS)
    attr_entry = 128 + 16
    attrs_off = 104
    ids_off = attrs_off + attr_entry * len(ATTRS)
    ids_blob = b''
    entries = b''
    for (a, ids, _) in ATTRS:
        entries += a + struct.pack('<QQ', ids_off + len(ids_blob), 8 * len(ids))
        ids_blob += struct.pack('<%dQ' % len(ids), *ids)
    data_off = ids_off + len(ids_blob)
    bits = sorted(feats)
    bitmap = 0
    for b in bits:
        bitmap |= 1 << b
    hdr = struct.pack('<QQQQQQQQQ', 0x32454c4946524550, 104, attr_entry, attrs_off,
                      len(entries), data_off, len(data), 0, 0)
    hdr += struct.pack('<QQQQ', bitmap & (2**64 - 1), bitmap >> 64, 0, 0)
    sec_off = data_off + len(data) + 16 * len(bits)
    table = b''
    blobs = b''
    for b in bits:
        table += struct.pack('<QQ', sec_off + len(blobs), len(feats[b]))
        blobs += feats[b]
    return hdr + entries + ids_blob + data + table + blobs


def pipe_mode(data):
    out = struct.pack('<QQ', 0x32454c4946524550, 16)
    for (a, ids, _) in ATTRS:
        out += rec(64, a + struct.pack('<%dQ' % len(ids), *ids))
    for b, v in sorted(feature_bytes().items()):
        out += rec(80, struct.pack('<Q', b) + v)
    out += rec(78, struct.pack('<QQ', 2, 21) + cstr('dummy:u'))
    out += rec(66, struct.pack('<I', 16) + bytes(4)) + b'tracing_data\0\0\0\0'
    return out + data


def zstd(b):
    return subprocess.run(['zstd', '-q', '-c', '-19'], input=b, stdout=subprocess.PIPE,
                          check=True).stdout


def compressed(plain, type2):
    """Compress plain into two COMPRESSED(2) records; the split falls inside a
    record so that a record straddles the two."""
    z = zstd(plain)
    half = len(z) // 2
    out = b''
    for part in (z[:half], z[half:]):
        if type2:
            size = 16 + len(part)
            out += struct.pack('<IHHQ', 83, 0, size + (-size) % 8, len(part)) + part + bytes((-size) % 8)
        else:
            out += struct.pack('<IHH', 81, 0, 8 + len(part)) + part
    return out


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    plain = b''.join(records())
    noaux = b''.join(records(with_aux=False))
    seeds = {
        'file.data': file_mode(plain),
        'pipe.data': pipe_mode(plain),
        'file-compressed.data': file_mode(compressed(noaux, False)),
        'pipe-compressed2.data': pipe_mode(compressed(noaux, True) + b'[ perf record: stray text ]\n'),
        'pipe-empty.data': struct.pack('<QQ', 0x32454c4946524550, 16),
    }
    for name, blob in seeds.items():
        with open(os.path.join(outdir, name), 'wb') as f:
            f.write(blob)


if __name__ == '__main__':
    main()
