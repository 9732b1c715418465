#!/bin/sh
# Image lookup in `ptconv info`: the ETM recording maps
# /data/local/tmp/etm_test_loop, whose build-id the recording stores; the
# shared folder has that binary.  Its build-id as readelf (the oracle) prints
# it must be what info reports; with the binary under --symfs it is found,
# with another ELF there it is a build-id mismatch, without it missing; in a
# build-id cache (--buildid-dir) it is found too.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_shared
command -v readelf >/dev/null || skip "readelf not installed"
scratch
rec="$PTC_SHARED/data/cs_etm/perf_etm.data"
bin="$PTC_SHARED/data/cs_etm/etm_test_loop"
[ -f "$rec" ] && [ -f "$bin" ] || skip "cs_etm recording or binary absent"
bid=$(readelf -n "$bin" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$bid" ] || fail "readelf found no build-id in $bin"

line() { "$PTCONV" info "$@" "$rec" | grep ' /data/local/tmp/etm_test_loop ' ; }

out=$(HOME="$T/nohome" line) || fail "no image line for etm_test_loop"
echo "$out"
# the recording stores 20 bytes: the 16-byte id and zeros
echo "$out" | grep -q "build-id ${bid}" || fail "build-id is not readelf's $bid: $out"
echo "$out" | grep -q ' missing$' || fail "should be missing without --symfs: $out"

mkdir -p "$T/symfs/data/local/tmp"
cp "$bin" "$T/symfs/data/local/tmp/etm_test_loop"
out=$(HOME="$T/nohome" line --symfs "$T/symfs")
echo "$out"
echo "$out" | grep -q "found: $T/symfs/data/local/tmp/etm_test_loop" || fail "not found under --symfs: $out"

other=/bin/true; [ -f "$other" ] || other=/usr/bin/true
cp "$other" "$T/symfs/data/local/tmp/etm_test_loop"
if readelf -n "$other" | grep -q 'Build ID'; then
	out=$(HOME="$T/nohome" line --symfs "$T/symfs")
	echo "$out"
	echo "$out" | grep -q 'build-id mismatch' || fail "another binary is not a mismatch: $out"
fi

mkdir -p "$T/cache/.build-id/$(echo "$bid" | cut -c1-2)"
cp "$bin" "$T/cache/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "${bid}00000000" | cut -c3-)"
out=$(HOME="$T/nohome" line --buildid-dir "$T/cache")
echo "$out"
echo "$out" | grep -q "found: $T/cache/.build-id/" || fail "not found in the build-id cache: $out"

# JSON says the same
HOME="$T/nohome" "$PTCONV" info --json --symfs "$T/symfs" "$rec" >/dev/null || fail "json run failed"
exit 0
