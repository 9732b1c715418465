/* Test program for ptgen-encode: a child process (FORK sideband, the
 * child's code found through its parent's mappings). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int __attribute__((noinline)) collatz(long n)
{
	int steps = 0;

	while (n != 1) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		steps++;
	}
	return steps;
}

int main(void)
{
	int status = 0, s = 0;
	pid_t pid;
	long i;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	for (i = 1; i < 60; i++)
		s += collatz(i + (pid == 0 ? 1000 : 0));
	if (pid == 0)
		_exit(s & 0x7f);
	waitpid(pid, &status, 0);
	printf("pe_fork %d %d\n", s, WEXITSTATUS(status));
	return 0;
}
