/* Corpus: a static libc program (printf, qsort, string functions), and
 * REP string instructions (one instruction each, however many iterations:
 * single-stepping traps after every iteration). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void rep_movsb(char *dst, const char *src, unsigned long n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static void rep_stosq(long *dst, long v, unsigned long n)
{
	__asm__ volatile("rep stosq" : "+D"(dst), "+c"(n) : "a"(v) : "memory");
}

int main(void)
{
	static char copy[200];
	static long fill[50];
	int v[64];
	char buf[128];
	unsigned s = 12345;
	long sum = 0;

	for (int i = 0; i < 64; i++) {
		s = s * 1103515245u + 12345u;
		v[i] = (int)(s >> 16) % 1000;
	}
	qsort(v, 64, sizeof(v[0]), cmp);
	for (int i = 0; i < 64; i++)
		sum += (long)v[i] * (i + 1);
	snprintf(buf, sizeof(buf), "min %d max %d weighted %ld", v[0], v[63], sum);
	printf("%s (%zu chars)\n", buf, strlen(buf));
	rep_movsb(copy, buf, sizeof(buf));
	rep_stosq(fill, 7, 50);
	rep_stosq(fill, 9, 0);
	printf("%s %ld\n", copy, fill[0] + fill[49]);
	return 0;
}
