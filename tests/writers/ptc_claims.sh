#!/bin/sh
# A .ptc whose static part claims more than it holds (issue 19): the reader
# expands the part in steps, checks its head's counts against the size it
# claims before expanding the rest, and refuses it naming the offset, with
# memory bounded by what the file really holds:
#   zeros  a frame of 256 MiB of zeros claiming as much (the head's counts,
#          all 0, cannot fill it)
#   claim  a frame holding 1 KiB whose header claims 3 GiB, followed by
#          a 128 KiB skippable frame (so that the ratio of the sizes is
#          one zstd can reach), read with 1 GiB of address space
# (Before, the first took 256 MiB and the second failed for want of a
# 3 GiB allocation.)
. "${top_srcdir:-.}/tests/lib/common.sh"
WALK="$top_builddir/tests/ptgen/ptgen-walk"
[ -x "$WALK" ] || skip "ptgen-walk not built"
command -v zstd >/dev/null || skip "zstd not installed"
BIN=$(walk_binary)
scratch
"$WALK" --branches 5000 --seed 2 -o "$T/w.data" "$BIN" >/dev/null 2>&1 || fail "ptgen-walk"
"$PTCONV" "$T/w.data" -o "$T/o" -q || fail "ptconv"
ptc=$(ls "$T"/o/*.ptc | head -1)
python3 - "$ptc" "$T" <<'PY' || fail "cannot make the hostile files"
import struct, subprocess, sys
src, t = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
soff = struct.unpack_from("<Q", data, 48)[0]
def write(name, frame, claim):
    open("%s/%s.ptc" % (t, name), "wb").write(data[:soff] + struct.pack("<QQ", len(frame), claim) + frame)
zeros = subprocess.run(["zstd", "-1", "-c", "-q", "--stream-size=%d" % (256 << 20)],
                       input=bytes(256 << 20), stdout=subprocess.PIPE, check=True).stdout
write("zeros", zeros, 256 << 20)
# 1 KiB in a frame without a content size, then 3 GiB written into its
# header: descriptor bits 6-7 = 3 (an 8-byte size after the window byte)
f = bytearray(subprocess.run(["zstd", "-1", "-c", "-q", "--no-content-size", "--no-check"],
                             input=bytes(range(256)) * 4, stdout=subprocess.PIPE, check=True).stdout)
assert f[:4] == b"\x28\xb5\x2f\xfd" and not (f[4] & 0xe3), hex(f[4])
f[4] |= 0xc0
f[6:6] = struct.pack("<Q", 3 << 30)
f += struct.pack("<II", 0x184D2A50, 128 << 10) + bytes(128 << 10)
write("claim", bytes(f), 3 << 30)
PY
for c in zeros claim; do
	python3 - "$PTCONV" "$T/$c.ptc" "$T/$c.out" <<'PY' || fail "$c: $(cat "$T/$c.out")"
import resource, subprocess, sys
ptconv, f, out = sys.argv[1:4]
asan = b"__asan_init" in open(ptconv, "rb").read()
def limit():
    if not asan:  # (a sanitizer build reserves terabytes of address space)
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
r = subprocess.run([ptconv, "info", f], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                   preexec_fn=limit)
open(out, "w").write(r.stderr)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
if r.returncode != 3:
    sys.exit("exit %d, want 3 (bad input)" % r.returncode)
if "offset" not in r.stderr and "0x" not in r.stderr:
    sys.exit("the error names no offset")
if "out of memory" in r.stderr:
    sys.exit("out of memory: the claim was allocated")
if peak > 64 << 10 and not asan:
    sys.exit("peak memory %d KB" % peak)
print("ok - %s: refused (%s), peak %d KB" % (f.rsplit("/", 1)[1], r.stderr.strip().splitlines()[-1], peak))
PY
done
exit 0
