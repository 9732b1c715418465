/* Test program for the Intel PT tests: two threads that each run a
 * different loop, then a fork whose child execs a program (argv[1]) and
 * the parent waits; a clock_gettime in the vDSO first.  Deterministic
 * control flow (but for the vDSO's), a few thousand branches. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static unsigned long collatz(unsigned long n)
{
	unsigned long steps = 0;

	while (n != 1) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		steps++;
	}
	return steps;
}

static void *worker(void *arg)
{
	unsigned long i, start = (unsigned long)arg, sum = 0;

	for (i = start; i < start + 40; i++)
		sum += collatz(i);
	sink += sum;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	struct timespec ts;
	int i, status;
	pid_t pid;

	/* runs in the vDSO */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += (unsigned long)ts.tv_nsec & 1;

	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(unsigned long)(i * 1000 + 7));
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pid = fork();
	if (pid == 0) {
		if (argc > 1)
			execv(argv[1], argv + 1);
		_exit(3);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
