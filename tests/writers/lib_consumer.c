/* A program of a libptconv-trace user: it sees only the installed header
 * <ptconv/trace.h> and links the shared library found by pkg-config
 * (tests/trace_library.sh).  It lists a trace's records as ptconv dump
 * does, for tests/writers/cmp_dump.py, then checks that seeking to every
 * 97th record and instruction agrees with what it read, and that PARTS
 * threads, each with its own handle seeked to its share of the records
 * (the way ptconv-trace(5) says to read one file in parallel), read
 * exactly the records of the sequential read.
 *   lib_consumer FILE.ptc */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ptconv/trace.h>

#define PARTS 4

/* FNV-1a over whole records */
static uint64_t hash_records(uint64_t h, const struct ptc_trace_record *r, size_t n)
{
	const unsigned char *p = (const unsigned char *)r;
	size_t i;

	for (i = 0; i < n * sizeof(*r); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

struct part {
	const char *path;
	uint64_t first, count, hash;
	int ok;
};

/* One thread's share: its own handle, seeked to its first record. */
static void *read_part(void *arg)
{
	struct ptc_trace_record *rec = malloc(1000 * sizeof(*rec));
	struct part *p = arg;
	uint64_t left = p->count;
	struct ptc_trace *t;
	int err, got = 0;

	p->hash = 0xcbf29ce484222325ull;
	t = rec ? ptc_trace_open(p->path, &err) : NULL;
	if (!t || ptc_trace_seek_record(t, p->first) < 0) {
		ptc_trace_close(t);
		free(rec);
		return NULL;
	}
	while (left && (got = ptc_trace_read(t, rec, left < 1000 ? (size_t)left : 1000)) > 0) {
		p->hash = hash_records(p->hash, rec, (size_t)got);
		left -= (uint64_t)got;
	}
	p->ok = !left && got >= 0;
	ptc_trace_close(t);
	free(rec);
	return NULL;
}

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
	uint64_t n = 0, insns = 0, i, *at = NULL, cap = 0, seq[PARTS];
	struct part parts[PARTS];
	pthread_t th[PARTS];
	int got, err, k;

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
	for (k = 0; k < PARTS; k++) {
		parts[k].path = argv[1];
		parts[k].first = info.records * (uint64_t)k / PARTS;
		parts[k].count = info.records * (uint64_t)(k + 1) / PARTS - parts[k].first;
		parts[k].ok = 0;
		seq[k] = 0xcbf29ce484222325ull;
	}
	while ((got = ptc_trace_read(t, rec, 4096)) > 0) {
		for (i = 0; i < (uint64_t)got; i++) {
			for (k = PARTS - 1; k > 0 && n + i < parts[k].first; k--)
				;
			seq[k] = hash_records(seq[k], &rec[i], 1);
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
	for (k = 0; k < PARTS; k++)
		if (pthread_create(&th[k], NULL, read_part, &parts[k]))
			return 1;
	for (k = 0; k < PARTS; k++)
		pthread_join(th[k], NULL);
	for (k = 0; k < PARTS; k++) {
		if (!parts[k].ok || parts[k].hash != seq[k]) {
			fprintf(stderr, "lib_consumer: part %d (records %" PRIu64 " +%" PRIu64 ") read in parallel: %s\n",
				k, parts[k].first, parts[k].count, parts[k].ok ? "other records" : "failed");
			return 1;
		}
	}
	printf("# %d parts read in parallel: the same records\n", PARTS);
	free(at);
	ptc_trace_close(t);
	return 0;
}
