/* Corpus: recursion deeper than 64 frames (the Intel PT return-compression
 * stack depth), then unwinding; mutual recursion too.  Built -O0 so that
 * the calls stay calls. */
#include <stdio.h>

static int down(int n);

static int up(int n)
{
	return n <= 0 ? 1 : down(n - 1) + (n & 3);
}

static int down(int n)
{
	return n <= 0 ? 2 : up(n - 1) * 3 % 1000003;
}

static long depth(int n)
{
	if (n == 0)
		return 0;
	return depth(n - 1) + n;
}

int main(void)
{
	long a = depth(200);
	long b = depth(70);
	int c = up(150);

	printf("depth(200)=%ld depth(70)=%ld up(150)=%d\n", a, b, c);
	return 0;
}
