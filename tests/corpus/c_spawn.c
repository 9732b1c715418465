/* Corpus: posix_spawn (glibc: clone with CLONE_VM|CLONE_VFORK) and vfork,
 * each child execs c_nolibc (found beside this program); the parent is
 * blocked in the kernel until the child's exec. */
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char path[4096];
	char *args[] = { "c_nolibc", NULL };
	const char *slash = strrchr(argv[0], '/');
	int len = slash ? (int)(slash - argv[0]) + 1 : 0;
	int st1 = -1, st2 = -1;
	pid_t pid;

	snprintf(path, sizeof(path), "%.*sc_nolibc", len, argv[0]);
	fflush(stdout);
	if (posix_spawn(&pid, path, NULL, NULL, args, environ) != 0 ||
	    waitpid(pid, &st1, 0) != pid)
		return 1;
	pid = vfork();
	if (pid == 0) {
		execv(path, args);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st2, 0) != pid)
		return 1;
	printf("spawned %d %d\n", st1, st2);
	return 0;
}
