/* Corpus: fork, the child execs another corpus program (c_nolibc, found
 * beside this one), the parent waits for it. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096];
	const char *slash = strrchr(argv[0], '/');
	int len = slash ? (int)(slash - argv[0]) + 1 : 0;
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%.*sc_nolibc", len, argv[0]);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl(path, "c_nolibc", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
