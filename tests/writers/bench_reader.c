/* Reader check and benchmark for libptconv-trace:
 *   bench_reader FILE.ptc            read it all, print counts and records/s
 *   bench_reader -s FILE.ptc         also check that seeking agrees with
 *                                    the sequential read: to about 100
 *                                    records, and to every 7th
 *                                    instruction number (about 20000 on
 *                                    long traces).
 *   bench_reader -r N [-n] FILE.ptc  read it N times; -n: the records are
 *                                    not looked at (the library's own rate,
 *                                    without the caller's use of them).
 *   bench_reader -r N -b B ...       read in batches of B (1..1024) records
 *   bench_reader -h B FILE.ptc       read it in batches of B records and
 *                                    print a hash of all 32 bytes of every
 *                                    record, to compare two readers.
 *   bench_reader -d B FILE.ptc       read it in batches of B records and
 *                                    list them as ptconv dump does (for
 *                                    cmp_dump.py). */
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
	int seek = 0, got, err, rounds = 1, r, look = 1, batch = 0, chunk = 1024, dump = 0;
	double t0, dt;
	const char *path;

	if (argc > 2 && !strcmp(argv[1], "-s"))
		seek = 1;
	if (argc > 2 && !strcmp(argv[1], "-r")) {
		rounds = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc > 3 && !strcmp(argv[1], "-b")) {
		chunk = atoi(argv[2]);
		if (chunk < 1 || chunk > 1024)
			chunk = 1024;
		argv += 2;
		argc -= 2;
	}
	if (argc > 3 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "-d"))) {
		dump = argv[1][1] == 'd';
		batch = atoi(argv[2]);
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
	if (batch > 0) {
		struct ptc_trace_record *b = calloc(batch, sizeof(*b));
		uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a over the records' bytes */
		if (!b)
			return 1;
		while ((got = ptc_trace_read(t, b, batch)) > 0) {
			const unsigned char *p = (const unsigned char *)b;
			size_t i;
			for (i = 0; !dump && i < got * sizeof(*b); i++)
				h = (h ^ p[i]) * 0x100000001b3ull;
			for (i = 0; dump && i < (size_t)got; i++) {
				const struct ptc_trace_record *x = &b[i];
				struct ptc_trace_gap g;
				if (x->kind != PTC_TRACE_GAP) {
					printf("%" PRIu64 " %" PRIu64 " 0x%" PRIx64 " %s %u 0x%" PRIx64 " %" PRIu32 " %u\n",
					       n + i, x->time, x->ip, ptc_trace_kind_name(x->kind), x->taken, x->target, x->insns,
					       x->flags);
				} else if (ptc_trace_gap(t, x->insns, &g) == 0) {
					printf("%" PRIu64 " %" PRIu64 " gap cause %u ip 0x%" PRIx64 " resume 0x%" PRIx64 "\n",
					       n + i, x->time, x->taken, g.ip, g.resume_ip);
				}
			}
			n += got;
		}
		if (!dump)
			printf("records %" PRIu64 " batch %d hash %016" PRIx64 " end %d\n", n, batch, h, got);
		else if (got < 0)
			fprintf(stderr, "bench_reader: %s\n", ptc_trace_errmsg(t));
		free(b);
		ptc_trace_close(t);
		return got < 0;
	}
	t0 = now();
	for (r = 0; r < rounds; r++) {
		ptc_trace_seek_record(t, 0);
		n = insns = 0;
		while ((got = ptc_trace_read(t, buf, chunk)) > 0) {
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
		/* Instruction numbers map to the record holding them: every
		 * 7th one, or on long traces about 20000 spread evenly (each
		 * seek may decode a whole chunk). */
		uint64_t total = 0, x = 0, istep;
		for (i = 0; i < n; i++)
			total += all[i].kind == PTC_TRACE_GAP ? 0 : all[i].insns;
		istep = total / 20000 > 7 ? total / 20000 : 7;
		for (i = 0; i < n; i++) {
			uint32_t before = 0;
			struct ptc_trace_record one;
			if (all[i].kind == PTC_TRACE_GAP)
				continue;
			for (; x < at + all[i].insns; x += istep) {
				CHECK(ptc_trace_seek_insn(t, x, &before) == 0, "seek insn %" PRIu64, x);
				CHECK_EQ_U64(before, x - at);
				CHECK(ptc_trace_read(t, &one, 1) == 1 && !memcmp(&one, &all[i], sizeof(one)),
				      "insn %" PRIu64 ": wrong record", x);
			}
			at += all[i].insns;
		}
		CHECK(ptc_trace_seek_insn(t, at, &(uint32_t){ 0 }) == -5, "seek past the end");
	}
	free(all);
	ptc_trace_close(t);
	return check_result();
}
