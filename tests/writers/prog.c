/* A small deterministic program for the format tests: loops, a jump table,
 * direct and indirect calls, recursion and system calls.  An argument N
 * runs the loop N times instead of 300 (files of several compressed
 * blocks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }
static int (*const ops[])(int, int) = { add, sub, mul };

__attribute__((noinline)) static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) static int step(int i, int acc)
{
	switch (i % 7) {
	case 0: return acc + 3;
	case 1: return acc ^ 0x55;
	case 2: return acc * 3;
	case 3: return acc - 11;
	case 4: return acc >> 1;
	case 5: return acc | 0x100;
	default: return ops[i % 3](acc, i);
	}
}

int main(int argc, char **argv)
{
	volatile int acc = 1;
	char buf[64];
	int i, n = argc > 1 ? atoi(argv[1]) : 300;

	for (i = 0; i < n; i++)
		acc = step(i, acc);
	acc += fib(12);
	snprintf(buf, sizeof(buf), "acc=%d\n", acc);
	fputs(buf, stdout);
	return 0;
}
