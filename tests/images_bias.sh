#!/bin/sh
# ptc_image_bias against the kernel's own mappings: a program started here
# prints where main and a function of the C library are at run time and waits;
# its executable mappings from /proc/PID/maps give (start, pgoff) per file,
# and nm gives the symbols' link-time addresses.  For every layout (PIE,
# non-PIE, with and without separate code segments) run-time address =
# link-time address + bias must hold.
. "${top_srcdir:-.}/tests/lib/common.sh"
CC=${CC_FOR_TESTS:-cc}
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler"
command -v nm >/dev/null 2>&1 || skip "nm (binutils) not installed"
[ -r /proc/self/maps ] || skip "no /proc"
TEST_IMAGE="$top_builddir/tests/unit/test_image"
scratch

cat > "$T/p.c" <<'C'
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) int probe(int x) { return x * 7 + 1; }
int main(void)
{
	char c;
	printf("%p\n", (void *)probe);
	fflush(stdout);
	return read(0, &c, 1) < 0 ? probe(1) : 0;	/* wait until stdin closes */
}
C

n=0
for flags in "-fPIE -pie" "-fno-pie -no-pie" "-fPIE -pie -Wl,-z,noseparate-code" \
	     "-fno-pie -no-pie -Wl,-z,noseparate-code"; do
	name=$(echo "$flags" | tr -c 'a-zA-Z0-9\n' '_')
	$CC -O1 $flags -o "$T/$name" "$T/p.c" 2>/dev/null || { echo "note: cannot build $flags" >&2; continue; }
	mkfifo "$T/in.$name"
	"$T/$name" < "$T/in.$name" > "$T/out.$name" &
	pid=$!
	exec 3> "$T/in.$name"
	i=0
	while [ ! -s "$T/out.$name" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	runtime=$(head -1 "$T/out.$name")
	maps=$(grep " ..x. " /proc/$pid/maps | grep "$T/$name\$" | head -1)
	exec 3>&-
	wait $pid
	[ -n "$runtime" ] && [ -n "$maps" ] || fail "$name: no address or mapping ('$runtime' / '$maps')"
	start=${maps%%-*}
	pgoff=$(echo "$maps" | awk '{print $3}')
	bias=$("$TEST_IMAGE" --bias "$T/$name" "$start" "$pgoff") || fail "$name: no bias for $maps"
	linktime=$(nm "$T/$name" | awk '$3 == "probe" {print $1}')
	want=$(printf '0x%x' $((0x$linktime + bias)))
	got=$(printf '0x%x' $((runtime)))
	[ "$want" = "$got" ] || fail "$name: probe at $got, nm 0x$linktime + bias $bias = $want"
	echo "$name: mapping $start pgoff $pgoff -> bias $bias; probe $got = nm 0x$linktime + bias"
	n=$((n + 1))
done
[ $n -gt 0 ] || skip "could not build any test program"
