/* Test program for ptgen-encode: control flow that exercises the Intel PT
 * encoder's policy on real code.  Deterministic output, no input.
 *  - recursion deeper than the 64-entry RET-compression stack
 *  - indirect calls through a table and a switch (jump table)
 *  - setjmp/longjmp: returns that do not match their call
 *  - system calls (write) and a signal handler (raise, sigreturn)
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile int sink;
static jmp_buf env;

static int __attribute__((noinline)) deep(int n)
{
	if (n == 0)
		return 1;
	return deep(n - 1) + (n & 3);
}

static int __attribute__((noinline)) op_add(int a) { return a + 3; }
static int __attribute__((noinline)) op_mul(int a) { return a * 5; }
static int __attribute__((noinline)) op_xor(int a) { return a ^ 0x55; }
static int (*const ops[])(int) = { op_add, op_mul, op_xor };

static int __attribute__((noinline)) classify(int v)
{
	switch (v % 7) {
	case 0: return v + 1;
	case 1: return v * 3;
	case 2: return v - 7;
	case 3: return v ^ 9;
	case 4: return v << 1;
	case 5: return v >> 1;
	default: return -v;
	}
}

static void __attribute__((noinline)) jumper(int n)
{
	if (n > 3)
		longjmp(env, n);
	jumper(n + 1);
	sink++;
}

static void on_signal(int sig)
{
	sink += sig;
}

int main(void)
{
	char buf[64];
	int acc = 0, i, n;

	for (i = 0; i < 3; i++)
		acc += deep(100 + i);
	for (i = 0; i < 300; i++)
		acc = ops[i % 3](acc) & 0xffff;
	for (i = 0; i < 200; i++)
		acc += classify(acc + i) & 0xff;
	for (i = 0; i < 3; i++)
		if (!setjmp(env))
			jumper(0);
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	n = snprintf(buf, sizeof(buf), "pe_calls %d %d\n", acc, sink);
	if (write(1, buf, (size_t)n) != n)
		return 1;
	return 0;
}
