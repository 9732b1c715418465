/* Corpus: a switch compiled to a jump table (-O2, dense cases) and calls
 * through function pointers; dynamic PIE (PLT calls into libc). */
#include <stdio.h>

__attribute__((noinline)) static int op(int k, int x)
{
	switch (k) {
	case 0: return x + 1;
	case 1: return x * 3;
	case 2: return x - 7;
	case 3: return x ^ 0x55;
	case 4: return x << 2;
	case 5: return x >> 1;
	case 6: return x * x % 1009;
	case 7: return ~x;
	case 8: return x + 100;
	case 9: return x % 97;
	case 10: return x | 0x100;
	case 11: return x & 0xfff;
	default: return x;
	}
}

static int f_add(int x) { return x + 11; }
static int f_mul(int x) { return x * 5 % 10007; }
static int f_neg(int x) { return -x; }

int (*const table[])(int) = { f_add, f_mul, f_neg };

int main(void)
{
	int x = 1;

	for (int i = 0; i < 300; i++) {
		x = op(i % 13, x);
		x = table[(unsigned)(x ^ i) % 3](x);
	}
	printf("switch result %d\n", x);
	return 0;
}
