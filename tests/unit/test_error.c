/* Every error code has a distinct name, and negated codes name the same. */
#include <string.h>

#include "common/error.h"
#include "../lib/check.h"

int main(void)
{
	int i, j;

	for (i = 0; i < ptc_err_max; i++) {
		CHECK(strcmp(ptc_errstr(i), "unknown error") != 0, "code %d unnamed", i);
		CHECK(!strcmp(ptc_errstr(i), ptc_errstr(-i)), "code %d", i);
		for (j = 0; j < i; j++)
			CHECK(strcmp(ptc_errstr(i), ptc_errstr(j)) != 0, "codes %d and %d share a name", i, j);
	}
	CHECK(!strcmp(ptc_errstr(ptc_err_max + 5), "unknown error"), "out of range");
	return check_result();
}
