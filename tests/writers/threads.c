/* A two-thread program for the format tests: each thread has its own
 * branch stream (and its own output files). */
#include <pthread.h>
#include <stdio.h>

static volatile int sink;

static void *worker(void *arg)
{
	int i, acc = (int)(long)arg;

	for (i = 0; i < 200; i++)
		acc = (acc & 1) ? acc * 3 + 1 : acc / 2 + i;
	sink = acc;
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i, acc = 7;

	pthread_create(&t, NULL, worker, (void *)27L);
	for (i = 0; i < 300; i++)
		acc += (i % 3) ? i : -i;
	pthread_join(t, NULL);
	printf("%d %d\n", acc, sink);
	return 0;
}
