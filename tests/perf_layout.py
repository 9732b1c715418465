"""The record layout of a perf.data file, read from the format itself
(perf's header: data section offset and size at bytes 40-56; pipe mode:
records from byte 16 on; an AUXTRACE record's trace data follows it, its
size at bytes 8-16), for the tests that damage recordings."""
import struct

PERF_RECORD_AUXTRACE = 71


def records(blob):
    """(offset, type, size, aux data size) of the data section's records;
    the data section's start and end."""
    if blob[8:16] == struct.pack('<Q', 16):
        start, end = 16, len(blob)
    else:
        start, size = struct.unpack_from('<QQ', blob, 40)
        end = start + size
    out, off = [], start
    while off < end:
        t, _, s = struct.unpack_from('<IHH', blob, off)
        more = struct.unpack_from('<Q', blob, off + 8)[0] if t == PERF_RECORD_AUXTRACE else 0
        out.append((off, t, s, more))
        off += s + more
    assert off == end
    return out, start, end
