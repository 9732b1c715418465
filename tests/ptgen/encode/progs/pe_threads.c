/* Test program for ptgen-encode: threads that the tracer preempts in user
 * mode and that block in system calls (join, futex), so the PT streams
 * carry interrupts, context switches and per-CPU interleaving. */
#include <pthread.h>
#include <stdio.h>

static volatile long results[3];

static void *work(void *arg)
{
	long id = (long)arg, s = 0, i;

	for (i = 0; i < 2500 + 500 * id; i++)
		s += (i % 5) ? i : -i;
	results[id] = s;
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	long i;

	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, (void *)(i + 1)))
			return 1;
	work((void *)0);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("pe_threads %ld %ld %ld\n", results[0], results[1], results[2]);
	return 0;
}
