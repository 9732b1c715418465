/* Minimal assertion helpers for the unit tests.
 *
 * A test program exits 0 when every check held, 1 when one failed and 77
 * (Automake's "skipped") when what it needs is absent; each failed check
 * prints where it failed and why.
 */
#ifndef PTC_TESTS_CHECK_H
#define PTC_TESTS_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int ptc_check_failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			ptc_check_failures++;                                  \
		}                                                              \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                     \
	CHECK((uint64_t)(a) == (uint64_t)(b), "%s = %" PRIu64 ", want %" PRIu64, \
	      #a, (uint64_t)(a), (uint64_t)(b))

#define SKIP(...)                                                              \
	do {                                                                   \
		fprintf(stderr, "SKIP: " __VA_ARGS__);                         \
		fputc('\n', stderr);                                           \
		exit(77);                                                      \
	} while (0)

static inline int check_result(void)
{
	if (ptc_check_failures)
		fprintf(stderr, "%d check(s) failed\n", ptc_check_failures);
	return ptc_check_failures ? 1 : 0;
}

#endif
