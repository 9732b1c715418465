/* Corpus: setjmp/longjmp out of nested calls. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;

__attribute__((noinline)) static void inner(int n)
{
	if (n <= 0)
		longjmp(env, 42);
	if (n < 1000)
		inner(n - 1);
}

int main(void)
{
	int r, total = 0;

	for (int i = 0; i < 5; i++) {
		r = setjmp(env);
		if (r == 0)
			inner(i * 3);
		total += r + i;
	}
	printf("longjmp total %d\n", total);
	return 0;
}
