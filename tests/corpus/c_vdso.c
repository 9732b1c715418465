/* Corpus: the vDSO: clock_gettime, gettimeofday and time, which glibc
 * answers in the vDSO without a system call.  The output does not depend
 * on the time. */
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

int main(void)
{
	struct timespec a, b, c;
	struct timeval tv;
	time_t t;
	int ok = 1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_REALTIME, &c);
	gettimeofday(&tv, NULL);
	t = time(NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ok &= b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec);
	ok &= tv.tv_sec >= c.tv_sec - 1 && t >= tv.tv_sec - 1;
	printf("vdso clocks %s\n", ok ? "consistent" : "INCONSISTENT");
	return !ok;
}
