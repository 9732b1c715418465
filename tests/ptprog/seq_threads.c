/* Threads one after another: each is created, computes a little and is
 * joined before the next starts, so that at most two are alive at a time
 * while many exit during the run (tests/pt_many_threads.sh).
 *	seq_threads N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *worker(void *arg)
{
	unsigned long s = (unsigned long)arg, acc = 0;

	for (int i = 0; i < 200; i++) {
		s = s * 1664525u + 1013904223u;
		acc += s >> 20;
	}
	return (void *)acc;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	unsigned long sum = 0;

	for (int i = 0; i < n; i++) {
		pthread_t t;
		void *r;
		if (pthread_create(&t, NULL, worker, (void *)(unsigned long)(i + 1)))
			return 1;
		pthread_join(t, &r);
		sum += (unsigned long)r;
	}
	printf("%d threads, %lu\n", n, sum);
	return 0;
}
