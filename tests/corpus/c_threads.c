/* Corpus: three threads computing, then joined: per-thread work is fixed,
 * the output does not depend on the interleaving. */
#include <pthread.h>
#include <stdio.h>

struct work {
	unsigned seed;
	unsigned long result;
};

static void *worker(void *arg)
{
	struct work *w = arg;
	unsigned s = w->seed;
	unsigned long acc = 0;

	for (int i = 0; i < 3000; i++) {
		s = s * 1664525u + 1013904223u;
		acc += s >> 20;
	}
	w->result = acc;
	return NULL;
}

int main(void)
{
	pthread_t th[2];
	struct work w[3] = { { 1, 0 }, { 2, 0 }, { 3, 0 } };

	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, &w[i]);
	worker(&w[2]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("threads %lu %lu %lu\n", w[0].result, w[1].result, w[2].result);
	return 0;
}
