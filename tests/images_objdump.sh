#!/bin/sh
# Branch tables against GNU objdump on real binaries: small C programs
# compiled here with switch jump tables, function pointers, PLT calls, tail
# calls and loops, as PIE, non-PIE and static executables, plus the system
# C library, for x86-64 and (where the compiler can, gcc-multilib) i386.  Every branch objdump lists must be in the table with the same
# kind, length and target, nothing else, and the instruction counts from
# every instruction start to the next branch must equal objdump's listing,
# whether one thread builds the table or several.
. "${top_srcdir:-.}/tests/lib/common.sh"
command -v objdump >/dev/null 2>&1 || skip "objdump (binutils) not installed"
CC=${CC_FOR_TESTS:-cc}
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler"
TEST_IMAGE="$top_builddir/tests/unit/test_image"
scratch

cat > "$T/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sq(int x) { return x * x; }
static int neg(int x) { return -x; }
static int (*const ops[])(int) = { sq, neg };

__attribute__((noinline)) int dispatch(int op, int x)
{
	switch (op) {	/* dense: a jump table at -O2 */
	case 0: return x + 1;
	case 1: return x - 7;
	case 2: return x * 3;
	case 3: return x ^ 0x55;
	case 4: return x << 2;
	case 5: return x >> 1;
	case 6: return ~x;
	case 7: return x % 13;
	default: return ops[op & 1](x);	/* indirect call */
	}
}

__attribute__((noinline)) long loop(const char *s)
{
	long h = 0;

	while (*s)
		h = h * 31 + *s++;
	return h;
}

int main(int argc, char **argv)
{
	char buf[64];
	int i, acc = 0;

	for (i = 0; i < argc * 100; i++)
		acc += dispatch(i % 11, i);
	snprintf(buf, sizeof(buf), "%d", acc);	/* PLT calls */
	printf("%s %ld %zu\n", buf, loop(argv[0]), strlen(buf));
	return acc == 42 ? EXIT_FAILURE : EXIT_SUCCESS;
}
C

built=0
for flags in "-O2 -fPIE -pie" "-O2 -fno-pie -no-pie" "-O0 -fPIE -pie" \
	     "-O3 -fcf-protection=full -fPIE -pie" "-O2 -fno-plt -fPIE -pie" \
	     "-Os -static"; do
	name=$(echo "$flags" | tr -c 'a-zA-Z0-9\n' '_')
	if $CC $flags -o "$T/$name" "$T/prog.c" 2>"$T/cc.err"; then
		"$T/$name" >/dev/null || fail "compiled program $name failed to run"
		set -- "$@" "$T/$name"
		built=$((built + 1))
	else
		echo "note: could not build with $flags: $(head -1 "$T/cc.err")" >&2
	fi
done
[ "$built" -gt 0 ] || skip "could not compile any test program"

libc=$($CC -print-file-name=libc.so.6)
[ -f "$libc" ] && set -- "$@" "$libc"

# i386 programs and C library (gcc-multilib), whose tables decode 32-bit
# code (objdump disassembles an ELF32 file as i386 code)
for flags in "-O2 -fPIE -pie" "-O2 -fno-pie -no-pie" "-Os -static"; do
	name=m32$(echo "$flags" | tr -c 'a-zA-Z0-9\n' '_')
	if $CC -m32 $flags -o "$T/$name" "$T/prog.c" 2>"$T/cc.err"; then
		"$T/$name" >/dev/null 2>"$T/run.err"
		st=$?
		# 126: the kernel does not run i386 programs (built without
		# IA32 emulation); the tables are read from the file all the same
		[ $st = 0 ] || [ $st = 126 ] || fail "compiled program $name failed to run (exit $st)"
		[ $st = 126 ] && echo "note: this kernel does not run $name" >&2
		set -- "$@" "$T/$name"
	else
		echo "note: no i386 program with $flags: $(head -1 "$T/cc.err")" >&2
	fi
done
libc32=$($CC -m32 -print-file-name=libc.so.6 2>/dev/null)
[ "$libc32" != libc.so.6 ] && [ -f "$libc32" ] && set -- "$@" "$libc32"

"$TEST_IMAGE" --objdump "$@"
# the same with the decoding shared among threads (large code only: the C
# library and the static program)
"$TEST_IMAGE" --objdump --threads 3 "$@"
