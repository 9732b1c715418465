/* Reader check and benchmark for libptconv-trace:
 *   bench_reader FILE.ptc            read it all, print counts and records/s
 *   bench_reader -s FILE.ptc         also check that seeking to every
 *                                    record and instruction number agrees
 *                                    with the sequential read.
 *   bench_reader -r N [-n] FILE.ptc  read it N times; -n: the records are
 *                                    not looked at (the library's own rate,
 *                                    without the caller's use of them). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptconv/trace.h"
#include "../lib/check.h"

/* CPU time of this process: the machine may be shared. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct ptc_trace_record buf[1024];
	struct ptc_trace_record *all = NULL;
	struct ptc_trace_info info;
	struct ptc_trace *t;
	uint64_t n = 0, insns = 0, sum = 0, cap = 0;
	int seek = 0, got, err, rounds = 1, r, look = 1;
	double t0, dt;
	const char *path;

	if (argc > 2 && !strcmp(argv[1], "-s"))
		seek = 1;
	if (argc > 2 && !strcmp(argv[1], "-r")) {
		rounds = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		look = 0;
		argv++;
		argc--;
	}
	path = argv[argc - 1];
	t = ptc_trace_open(path, &err);
	if (!t) {
		fprintf(stderr, "bench_reader: %s: %s\n", path, ptc_trace_errstr(err));
		return 1;
	}
	ptc_trace_info(t, &info);
	t0 = now();
	for (r = 0; r < rounds; r++) {
		ptc_trace_seek_record(t, 0);
		n = insns = 0;
		while ((got = ptc_trace_read(t, buf, 1024)) > 0) {
			int i;
			for (i = 0; look && i < got; i++) {
				insns += buf[i].kind == PTC_TRACE_GAP ? 0 : buf[i].insns;
				sum += buf[i].ip ^ buf[i].target;
			}
			if (seek && r == 0) {
				if (n + got > cap) {
					cap = (n + got) * 2;
					all = realloc(all, cap * sizeof(*all));
				}
				memcpy(all + n, buf, got * sizeof(*buf));
			}
			n += got;
		}
		if (got < 0) {
			fprintf(stderr, "bench_reader: %s\n", ptc_trace_errmsg(t));
			return 1;
		}
	}
	dt = now() - t0;
	printf("records %" PRIu64 " instructions %" PRIu64 " chunks %" PRIu64 " nodes %" PRIu64
	       " rate %.3g records/s of CPU time (checksum %" PRIx64 ")\n", n, insns, info.chunks,
	       info.static_branches, n * rounds / (dt > 0 ? dt : 1e-9), sum);
	CHECK_EQ_U64(n, info.records);
	if (look)
		CHECK_EQ_U64(insns + info.tail_insns, info.instructions);
	if (seek) {
		uint64_t i, at = 0, step = n / 97 + 1;
		for (i = 0; i < n; i += step) {
			struct ptc_trace_record one;
			CHECK(ptc_trace_seek_record(t, i) == 0, "seek %" PRIu64, i);
			CHECK(ptc_trace_read(t, &one, 1) == 1, "read at %" PRIu64, i);
			CHECK(!memcmp(&one, &all[i], sizeof(one)), "record %" PRIu64 " differs after seek", i);
		}
		/* Every instruction number maps to the record holding it. */
		for (i = 0; i < n; i++) {
			uint32_t before = 0;
			struct ptc_trace_record one;
			uint64_t k;
			if (all[i].kind == PTC_TRACE_GAP)
				continue;
			for (k = 0; k < all[i].insns; k += all[i].insns / 3 + 1) {
				if ((at + k) % 7)
					continue;
				CHECK(ptc_trace_seek_insn(t, at + k, &before) == 0, "seek insn %" PRIu64, at + k);
				CHECK_EQ_U64(before, k);
				CHECK(ptc_trace_read(t, &one, 1) == 1 && !memcmp(&one, &all[i], sizeof(one)),
				      "insn %" PRIu64 ": wrong record", at + k);
			}
			at += all[i].insns;
		}
		CHECK(ptc_trace_seek_insn(t, at, &(uint32_t){ 0 }) == -5, "seek past the end");
	}
	free(all);
	ptc_trace_close(t);
	return check_result();
}
