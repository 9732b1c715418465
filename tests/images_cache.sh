#!/bin/sh
# The image cache finds files where Linux perf itself puts them: a build-id
# cache filled by `perf buildid-cache -a`, and otherwise the recorded path;
# a missing file or a build-id mismatch is an error naming file and id, and
# --force uses the mismatching file.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_perf
CC=${CC_FOR_TESTS:-cc}
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler"
command -v readelf >/dev/null 2>&1 || skip "readelf (binutils) not installed"
TEST_IMAGE="$top_builddir/tests/unit/test_image"
scratch

echo 'int main(void) { return 0; }' > "$T/a.c"
echo 'int main(void) { return 1; }' > "$T/b.c"
$CC -O2 -Wl,--build-id=sha1 -o "$T/prog" "$T/a.c" || skip "cannot compile"
$CC -O2 -Wl,--build-id=sha1 -o "$T/other" "$T/b.c" || skip "cannot compile"
# The build-ids as binutils reads them (not as ptconv does).
id=$(readelf -n "$T/prog" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
other=$(readelf -n "$T/other" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$id" ] && [ -n "$other" ] && [ "$id" != "$other" ] || fail "no build-ids: '$id' '$other'"

"$PERF" --buildid-dir "$T/cache" buildid-cache -a "$T/prog" 2>"$T/perf.err" ||
	skip "perf buildid-cache failed: $(cat "$T/perf.err")"
[ -e "$T/cache/.build-id/$(echo "$id" | cut -c1-2)" ] || skip "perf made no build-id cache"

# 1. The recorded path still exists: found (in the cache or at the path).
out=$("$TEST_IMAGE" --cache-get "$T/cache" "$T/prog" "$id") || fail "lookup failed: $out"

# 2. The file is gone from its path: the build-id cache has it.
mv "$T/prog" "$T/prog.moved"
out=$("$TEST_IMAGE" --cache-get "$T/cache" "$T/prog" "$id") || fail "not found in the cache: $out"
case "$out" in "ok $T/cache/"*) ;; *) fail "expected a file under the cache: $out" ;; esac

# 3. Neither there nor cached under that id: not found, naming both.
out=$("$TEST_IMAGE" --cache-get "$T/cache" "$T/nothere" "$other") && fail "found a missing file: $out"
case "$out" in *"not found"*"$T/nothere"*"$other"*) ;; *) fail "missing-file message: $out" ;; esac

# 4. A different file at the recorded path: a mismatch naming file and ids.
cp "$T/other" "$T/prog"
rm -rf "$T/cache2"
out=$("$TEST_IMAGE" --cache-get "$T/cache2" "$T/prog" "$id") && fail "accepted a mismatch: $out"
case "$out" in *mismatch*"$T/prog"*"$other"*"$id"*) ;; *) fail "mismatch message: $out" ;; esac

# 5. --force uses it anyway.
out=$("$TEST_IMAGE" --cache-get "$T/cache2" "$T/prog" "$id" force) || fail "--force: $out"
case "$out" in "ok $T/prog") ;; *) fail "--force used another file: $out" ;; esac


# 6. A separate debug-info file (the build-id matches, the code is absent):
#    an error naming it, not an image without code.
if command -v objcopy >/dev/null 2>&1; then
	cp "$T/prog.moved" "$T/dbg"
	objcopy --only-keep-debug "$T/dbg" "$T/dbg.debug" && mv "$T/dbg.debug" "$T/dbg"
	out=$("$TEST_IMAGE" --cache-get "$T/cache3" "$T/dbg" "$id") && fail "used a debug-info file: $out"
	case "$out" in *"$T/dbg"*) ;; *) fail "debug-info message: $out" ;; esac
	echo "debug-info file: $out"
fi
echo "image cache: build-id cache, missing, mismatch, --force and debug-info files behave"
