#!/usr/bin/env python3
# corrupt_ptc.py IN.ptc OUT.ptc CASE: rewrite a ptconv trace (ptconv-trace(5))
# with the streams of its first chunk that has the stream CASE damages
# damaged in one known way, everything else (the other chunks, the static
# part but for the chunk index) unchanged:
#   bits   the taken bits removed: the chunk's first conditional record has none
#   slots  the target slots removed: its first indirect record has none
#   slot   its first slot set to 127, more than any node here has edges
# Prints "K O": the damaged chunk's number and file offset, which the
# reader's error must name.
import struct
import subprocess
import sys


def zstd(b, decompress):
    # the frame must state its size, as ptconv's do
    args = ["zstd", "-d", "-c", "-q"] if decompress else ["zstd", "-19", "-c", "-q", "--stream-size=%d" % len(b)]
    return subprocess.run(args, input=b, stdout=subprocess.PIPE, check=True).stdout


def main():
    src, dst, case = sys.argv[1:4]
    data = open(src, "rb").read()
    soff = struct.unpack_from("<Q", data, 48)[0]
    zn, sn = struct.unpack_from("<QQ", data, soff)
    s = bytearray(zstd(data[soff + 16:soff + 16 + zn], True))
    nn, ne, nc, ng, codesz, strsz = struct.unpack_from("<QQQQQQ", s, 0)
    idx = sn - (nc * 48 + ng * 72 + codesz + strsz)
    out = bytearray(data[:64])
    done = None
    for i in range(nc):
        off, comp, first_rec, first_insn, n, raw = struct.unpack_from("<QQQQII", s, idx + i * 48)
        blob = data[off:off + comp]
        c = zstd(blob, True)
        cn, bl, sl, el = struct.unpack_from("<IIII", c, 0)
        bits, slots, ev = c[16:16 + bl], c[16 + bl:16 + bl + sl], c[16 + bl + sl:16 + bl + sl + el]
        if done is None and (bits if case == "bits" else slots):
            if case == "bits":
                bits = b""
            elif case == "slots":
                slots = b""
            elif case == "slot":
                slots = b"\x7f" + slots[1:]
            else:
                sys.exit("corrupt_ptc.py: unknown case " + case)
            c = struct.pack("<IIII", cn, len(bits), len(slots), len(ev)) + bits + slots + ev
            raw = len(c)
            blob = zstd(c, False)
            done = (i, len(out))
        struct.pack_into("<QQQQII", s, idx + i * 48, len(out), len(blob), first_rec, first_insn, n, raw)
        out += blob
    struct.pack_into("<Q", out, 48, len(out))
    z = zstd(bytes(s), False)
    out += struct.pack("<QQ", len(z), len(s)) + z
    open(dst, "wb").write(out)
    if done is None:
        sys.exit("corrupt_ptc.py: no chunk has that stream")
    print("%d %d" % done)


main()
