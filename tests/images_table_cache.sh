#!/bin/sh
# The branch-table cache (ptconv-convert(1), --table-cache): a conversion
# that reads its images' tables from the cache writes the same files as
# one that builds them (and as --no-table-cache), whatever was in the
# cache: files cut short, flipped bytes, another table under the name, a
# directory, an empty file.  A damaged file is never used (the table is
# built again and the file replaced), a cache that cannot be written
# changes nothing, and no temporary file stays.  The recording is a real
# execution of /bin/true (ptgen-trace, ptgen-encode), its branches checked
# against the truth by pt_truth_compare.py.  The tables themselves,
# field by field and with damage that keeps the checksum: test_image.
. "${top_srcdir:-.}/tests/lib/common.sh"
need_ptgen
command -v python3 >/dev/null || skip "python3 not installed"
CMP="python3 $top_srcdir/tests/pt_truth_compare.py"
scratch
"$TRACE" -o "$T/true.truth" -- /bin/true 2>"$T/trace.err" ||
	skip "ptgen-trace cannot trace here: $(tail -1 "$T/trace.err")"
"$ENC" -o "$T/t.data" --buildid-dir "$T/bid" "$T/true.truth" 2>"$T/enc.err" || fail "ptgen-encode: $(cat "$T/enc.err")"

n=0
conv() {	# NAME OPTIONS...: convert into $T/NAME, stderr in $T/NAME.err
	name=$1
	shift
	rm -rf "${T:?}/$name"
	XDG_CACHE_HOME="$T/xdg" "$PTCONV" "$T/t.data" -f ptconv,text -o "$T/$name" --buildid-dir "$T/bid" "$@" \
		2>"$T/$name.err" || fail "$name: ptconv $* exited $?: $(tail -2 "$T/$name.err")"
}
same() {	# NAME: the files of $T/NAME are those built without the cache
	diff -r "$T/nocache" "$T/$1" >/dev/null || fail "$1: other files than without the table cache"
}
cached() {	# NAME: "I J": the images loaded, the tables from the cache
	sed -n 's/^ptconv: \([0-9]*\) images, \([0-9]*\) branch tables from the table cache .*/\1 \2/p' "$T/$1.err"
}

conv nocache --no-table-cache
$CMP "$T/true.truth" "$T/nocache" --expect-gaps 0 >"$T/cmp" || { cat "$T/cmp"; fail "the truth"; }
[ -e "$T/xdg" ] && fail "--no-table-cache made $T/xdg"
grep -q "table cache" "$T/nocache.err" && fail "--no-table-cache reports a table cache"

# cold, then warm
conv cold --table-cache "$T/tc"
same cold
set -- $(cached cold)
imgs=${1:-0}
[ "$imgs" -ge 2 ] && [ "${2:-x}" = 0 ] || fail "cold: '$(cached cold)' (images, from the cache)"
files=$(ls "$T/tc" | wc -l)
[ "$files" -eq "$imgs" ] || fail "cold: $files files in the cache for $imgs images: $(ls "$T/tc")"
ls "$T/tc" | grep -v '^[0-9a-f]\{32\}\.x64$' && fail "other files than tables in the cache"
conv warm --table-cache "$T/tc"
same warm
[ "$(cached warm)" = "$imgs $imgs" ] || fail "warm: '$(cached warm)', want '$imgs $imgs'"
n=$((n + 1)); echo "ok $n - cold and warm: $imgs images, the same files as without the cache"

# the default place: XDG_CACHE_HOME, else HOME
conv dflt
same dflt
[ "$(ls "$T/xdg/ptconv/tables" | wc -l)" -eq "$imgs" ] || fail "default: no tables under XDG_CACHE_HOME"
rm -rf "$T/home"
mkdir "$T/home"
env -u XDG_CACHE_HOME HOME="$T/home" "$PTCONV" "$T/t.data" -f ptconv,text -o "$T/home_out" --buildid-dir "$T/bid" \
	2>"$T/home.err" || fail "HOME: exited $?"
[ "$(ls "$T/home/.cache/ptconv/tables" | wc -l)" -eq "$imgs" ] || fail "default: no tables under HOME/.cache"
n=$((n + 1)); echo "ok $n - default directories"

# -j 2 with a cold cache (tables built while windows are decoded ahead)
rm -rf "$T/tc2"
conv j2 --table-cache "$T/tc2" -j 2
same j2
n=$((n + 1)); echo "ok $n - -j 2, cold"

# damaged files: each is refused, rebuilt and replaced
big=$(ls -S "$T/tc" | head -1)
damage() {	# WHAT COMMAND [stays]: damage $T/tc/$big, convert, check
	cp -r "$T/tc" "$T/tc.good"
	sh -c "$2" || fail "damage $1: $2"
	conv dmg --table-cache "$T/tc"
	same dmg
	[ "$(cached dmg)" = "$imgs $((imgs - 1))" ] || fail "$1: '$(cached dmg)', want '$imgs $((imgs - 1))'"
	if [ -z "${3:-}" ]; then
		cmp -s "$T/tc/$big" "$T/tc.good/$big" || fail "$1: the damaged file was not replaced"
	fi
	ls "$T/tc" | grep -v '^[0-9a-f]\{32\}\.x64$' && fail "$1: other files left in the cache"
	rm -rf "$T/tc.good"
	n=$((n + 1)); echo "ok $n - $1: not used${3:+ (it stays)}${3:-, replaced}"
}
f="$T/tc/$big"
size=$(wc -c < "$f")
damage "cut in half" "head -c $((size / 2)) '$f' > '$f.x' && mv '$f.x' '$f'"
damage "cut by one byte" "head -c $((size - 1)) '$f' > '$f.x' && mv '$f.x' '$f'"
damage "one byte more" "printf x >> '$f'"
damage "empty" ": > '$f'"
damage "a flipped byte in the header" "printf '\\377' | dd of='$f' bs=1 seek=20 conv=notrunc 2>/dev/null"
damage "a flipped byte in the branches" "printf '\\377' | dd of='$f' bs=1 seek=$((size - 100)) conv=notrunc 2>/dev/null"
damage "a flipped byte in the checksum" "printf '\\377' | dd of='$f' bs=1 seek=$((size - 3)) conv=notrunc 2>/dev/null"
other=$(ls -S "$T/tc" | sed -n 2p)
damage "another table under its name" "cp '$T/tc/$other' '$f'"
# (a directory is not the cache's to remove: it stays, unused)
damage "a directory in its place" "rm '$f' && mkdir '$f'" stays

# a cache that cannot be made: the conversion is the same
: > "$T/plainfile"
conv nodir --table-cache "$T/plainfile/tc"
same nodir
[ "$(cached nodir)" = "$imgs 0" ] || fail "unwritable: '$(cached nodir)'"
n=$((n + 1)); echo "ok $n - a cache directory that cannot be made: the same files"

# The reader on files with a right checksum and any contents: the fuzz
# target's seed (a real table) and its mutants, replayed.
drv="$top_builddir/tests/fuzz/fuzz_table_cache"
seeds="$top_srcdir/tests/fuzz/seeds/fuzz_table_cache"
[ -x "$drv" ] || fail "$drv not built"
mkdir "$T/mut"
mutate_seeds "$seeds" "$T/mut" "1 2 3 10 40 100 200" 400 3
n=$((n + 1)); echo "ok $n - $(replay "$drv" "$seeds" "$T/mut" | tr '\n' ' ')"
exit 0
