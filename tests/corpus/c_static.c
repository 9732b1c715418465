/* Corpus: a static libc program (printf, qsort, string functions). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(void)
{
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
	return 0;
}
