/* A program of a libptconv-trace user: it sees only the installed header
 * <ptconv/trace.h> and links the shared library found by pkg-config
 * (tests/trace_library.sh).  It lists a trace's records as ptconv dump
 * does, for tests/writers/cmp_dump.py, then checks that seeking to every
 * 97th record and instruction agrees with what it read.
 *   lib_consumer FILE.ptc */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <ptconv/trace.h>

static int fail(struct ptc_trace *t, const char *what)
{
	fprintf(stderr, "lib_consumer: %s: %s\n", what, ptc_trace_errmsg(t));
	return 1;
}

int main(int argc, char **argv)
{
	static struct ptc_trace_record rec[4096];
	struct ptc_trace_info info;
	struct ptc_trace_layout layout;
	struct ptc_trace *t;
	uint64_t n = 0, insns = 0, i, *at = NULL, cap = 0;
	int got, err;

	if (argc != 2) {
		fprintf(stderr, "usage: lib_consumer FILE.ptc\n");
		return 2;
	}
	t = ptc_trace_open(argv[1], &err);
	if (!t) {
		fprintf(stderr, "lib_consumer: %s: %s\n", argv[1], ptc_trace_errstr(err));
		return 1;
	}
	if (ptc_trace_info(t, &info) < 0 || ptc_trace_layout(t, &layout, sizeof(layout)) < 0)
		return fail(t, "info");
	printf("# %s: version %u, %" PRIu64 " records, %" PRIu64 " bytes\n", argv[1], info.version,
	       info.records, layout.file_bytes);
	while ((got = ptc_trace_read(t, rec, 4096)) > 0) {
		for (i = 0; i < (uint64_t)got; i++) {
			const struct ptc_trace_record *r = &rec[i];
			struct ptc_trace_gap g;
			if (n + i >= cap) {
				cap = cap ? 2 * cap : 65536;
				at = realloc(at, cap * sizeof(*at));
				if (!at)
					return 1;
			}
			at[n + i] = insns;	/* instructions before the record */
			if (r->kind != PTC_TRACE_GAP) {
				printf("%" PRIu64 " %" PRIu64 " 0x%" PRIx64 " %s %u 0x%" PRIx64 " %" PRIu32 " %u\n",
				       n + i, r->time, r->ip, ptc_trace_kind_name(r->kind), r->taken, r->target,
				       r->insns, r->flags);
				insns += r->insns;
			} else if (ptc_trace_gap(t, r->insns, &g) == 0) {
				printf("%" PRIu64 " %" PRIu64 " gap cause %u ip 0x%" PRIx64 " resume 0x%" PRIx64 "\n",
				       n + i, r->time, r->taken, g.ip, g.resume_ip);
			} else {
				return fail(t, "gap");
			}
		}
		n += (uint64_t)got;
	}
	if (got < 0)
		return fail(t, "read");
	if (n != info.records || insns + info.tail_insns != info.instructions) {
		fprintf(stderr, "lib_consumer: read %" PRIu64 " records, %" PRIu64 " instructions; the header says %"
			PRIu64 ", %" PRIu64 "\n", n, insns + info.tail_insns, info.records, info.instructions);
		return 1;
	}
	for (i = 0; i < n; i += 97) {
		uint64_t before;
		if (ptc_trace_seek_record(t, i) < 0)
			return fail(t, "seek");
		if (ptc_trace_tell(t, &before) != i || before != at[i]) {
			fprintf(stderr, "lib_consumer: record %" PRIu64 ": %" PRIu64 " instructions before it, seeking"
				" says %" PRIu64 "\n", i, at[i], before);
			return 1;
		}
	}
	free(at);
	ptc_trace_close(t);
	return 0;
}
