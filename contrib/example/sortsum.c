/* The bundled example: a small program with the control flow a branch
 * predictor cares about (loops, data-dependent conditionals, calls through a
 * function pointer, recursion).  `make example` records it with the
 * ground-truth generator and converts the recording with ptconv. */
#include <stdio.h>
#include <stdlib.h>

static int ascending(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static unsigned fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
	int v[512];
	unsigned seed = 12345, odd = 0;
	long sum = 0;

	for (int i = 0; i < 512; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (int)(seed >> 16) % 1000;
	}
	qsort(v, 512, sizeof(v[0]), ascending);
	for (int i = 0; i < 512; i++) {
		if (v[i] & 1)
			odd++;
		sum += v[i];
	}
	printf("sum %ld, odd %u, median %d, fib(15) %u\n", sum, odd, v[256], fib(15));
	return 0;
}
