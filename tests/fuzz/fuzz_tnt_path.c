/* Fuzz target: the walker's memo of TNT paths against the walker one
 * branch at a time, on any bytes, for the fuzz image (tnt_path_diff.h).
 * A difference or a mark that breaks struct ptc_path's promises aborts;
 * a replay of inputs none of which used the memo fails.
 * Seeds: tests/fuzz/seeds/fuzz_pt_decoder (valid streams for the image). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tnt_path_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int ptc_fuzz_replayed(int n);

static uint64_t all_paths, all_records;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t paths, records;
	const char *why;

	if (size > (1u << 20))
		return 0;
	why = tp_compare(data, size, &paths, &records);
	if (why) {
		fprintf(stderr, "fuzz_tnt_path: %s\n", why);
		abort();
	}
	all_paths += paths;
	all_records += records;
	return 0;
}

/* Replaying seeds (not under libFuzzer): they must have used the memo. */
int ptc_fuzz_replayed(int n)
{
	fprintf(stderr, "fuzz_tnt_path: %llu paths of %llu branches, the same as one branch at a time\n",
		(unsigned long long)all_paths, (unsigned long long)all_records);
	if (n && !all_paths) {
		fprintf(stderr, "fuzz_tnt_path: the inputs never used the memo\n");
		return 1;
	}
	return 0;
}
