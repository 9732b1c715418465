/* Corpus: signal handlers.  SIGUSR1 sent to itself (delivered on the way
 * back from kill), SIGSEGV from a faulting store left with siglongjmp, and
 * SIGALRM from an interval timer while waiting in sigsuspend(), all
 * deterministic: SIGALRM stays blocked until sigsuspend() atomically waits
 * for it (pause() would race with a timer that fires before it, which is
 * likely when single-stepped). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t usr1, alrm;
static sigjmp_buf jb;

static void on_usr1(int sig) { usr1 += sig; }
static void on_alrm(int sig) { alrm++; }
static void on_segv(int sig) { siglongjmp(jb, 1); }

int main(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	int faults = 0;
	sigset_t alrm_set, wait_set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	sa.sa_handler = on_alrm;
	sigaction(SIGALRM, &sa, NULL);

	kill(getpid(), SIGUSR1);
	for (int i = 0; i < 3; i++)
		if (!sigsetjmp(jb, 1))
			*(volatile int *)(long)(8 + i) = i;
		else
			faults++;
	sigemptyset(&alrm_set);
	sigaddset(&alrm_set, SIGALRM);
	sigprocmask(SIG_BLOCK, &alrm_set, &wait_set);
	sigdelset(&wait_set, SIGALRM);
	setitimer(ITIMER_REAL, &it, NULL);
	while (!alrm)
		sigsuspend(&wait_set);
	printf("usr1 %d faults %d alrm %d\n", (int)usr1, faults, (int)alrm);
	return 0;
}
