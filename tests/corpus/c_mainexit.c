/* Corpus: the main thread leaves with pthread_exit while a worker still
 * runs; the worker joins the main thread (which the kernel reports only
 * when the whole process ends) and prints. */
#include <pthread.h>
#include <stdio.h>

static pthread_t main_thread;

static void *worker(void *arg)
{
	pthread_join(main_thread, NULL);
	printf("main thread gone, worker done\n");
	return arg;
}

int main(void)
{
	pthread_t t;

	main_thread = pthread_self();
	fflush(stdout);
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_exit(NULL);
}
