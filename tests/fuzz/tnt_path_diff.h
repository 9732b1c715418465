/* The walker with its memo of TNT paths against the walker one branch at a
 * time (the reference), on raw Intel PT bytes for the fuzz image
 * (pt_fuzz_image.h): both must give the same branches, gaps and call
 * stacks, and every path the walker marks must be what struct ptc_path
 * says (its records' count, kinds, taken bits, instructions and time, and
 * the same records wherever the same path starts at the same address).
 * Used by fuzz_tnt_path.c. */
#ifndef PTC_TESTS_FUZZ_TNT_PATH_DIFF_H
#define PTC_TESTS_FUZZ_TNT_PATH_DIFF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/intel_pt/ptdec.h"
#include "pt_fuzz_image.h"

/* What one decoding gave, as bytes to compare. */
struct tp_log {
	uint8_t *p;
	size_t len, cap;
	uint64_t path_records, paths;	/* marked */
	const char *bad;		/* a broken promise of a mark, or NULL */
};

/* Paths seen: id -> the first record's ip and a digest of the rest. */
#define TP_SEEN 4096
struct tp_seen {
	uint64_t id, ip, digest;
};

struct tp_run {
	struct tp_log *log;
	struct tp_seen seen[TP_SEEN];
};

static void tp_put(struct tp_log *l, const void *p, size_t n)
{
	if (l->len + n > l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 65536;
		uint8_t *np;
		while (ncap < l->len + n)
			ncap *= 2;
		np = realloc(l->p, ncap);
		if (!np)
			abort();
		l->p = np;
		l->cap = ncap;
	}
	memcpy(l->p + l->len, p, n);
	l->len += n;
}

static uint64_t tp_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static int tp_s_begin(void *ctx, const struct ptc_thread_info *t) { (void)ctx, (void)t; return 0; }
static int tp_s_end(void *ctx) { (void)ctx; return 0; }

static int tp_s_branches(void *ctx, const struct ptc_branch *b, size_t n)
{
	struct tp_run *r = ctx;
	size_t i;

	for (i = 0; i < n; i++) {
		/* field by field: the struct's padding is not compared */
		uint64_t v[4] = { b[i].ip, b[i].target, b[i].time,
				  (uint64_t)b[i].insns << 32 | (uint64_t)b[i].kind << 24 |
				  (uint64_t)b[i].taken << 16 | (uint64_t)b[i].length << 8 | b[i].flags };
		tp_put(r->log, v, sizeof(v));
	}
	return 0;
}

/* Path p's records b[0, p->records), as ptc_path_records() made them from
 * its first record in the sparse batch. */
static void tp_check_path(struct tp_run *r, const struct ptc_branch *b, const struct ptc_path *p)
{
	uint64_t kinds = 0, taken = 0, digest = 0;
	uint32_t bits = 0, not_taken = 0, insns = 0, i;
	struct tp_seen *s;

	for (i = 0; i < p->records; i++) {
		kinds += (uint64_t)1 << (9 * b[i].kind);
		not_taken += !b[i].taken;
		if (b[i].kind == PTC_BR_COND)
			taken |= (uint64_t)(b[i].taken != 0) << bits++;
		if (i) {
			insns += b[i].insns;
			if (b[i].time != b[0].time)
				r->log->bad = "a path's records have different times";
			digest = tp_mix(digest, b[i].insns);
		}
		digest = tp_mix(digest, b[i].ip);
		digest = tp_mix(digest, b[i].target);
		digest = tp_mix(digest, (uint64_t)b[i].kind << 16 | (uint64_t)b[i].taken << 8 | b[i].length);
		if (i)
			digest = tp_mix(digest, b[i].flags);
	}
	if (kinds != p->kinds || taken != p->taken || bits != p->bits || not_taken != p->not_taken ||
	    insns != p->insns)
		r->log->bad = "a path's counts are not its records'";
	s = &r->seen[p->id % TP_SEEN];
	if (s->id == p->id && s->ip == b[0].ip && s->digest != digest)
		r->log->bad = "a path stands for other records at the same address";
	s->id = p->id;
	s->ip = b[0].ip;
	s->digest = digest;
	r->log->paths++;
	r->log->path_records += p->records;
}

/* A sparse batch: each path stands as its first record, marked; its
 * records are made, checked, and logged in its place. */
static int tp_s_paths(void *ctx, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	struct tp_run *r = ctx;
	struct ptc_branch rec[PTC_PATH_RECORDS_MAX];
	size_t i = 0, j;

	for (j = 0; j < nm; j++) {
		const struct ptc_path *p = m[j].path;

		if (m[j].at >= n || (j && m[j].at <= m[j - 1].at)) {
			r->log->bad = "marks out of the batch or out of order";
			return 0;
		}
		if (!p->id || !p->records || p->records > PTC_PATH_RECORDS_MAX) {
			r->log->bad = "a path's id or count is wrong";
			return 0;
		}
		tp_s_branches(ctx, b + i, m[j].at - i);
		ptc_path_records(rec, p, &b[m[j].at]);
		tp_check_path(r, rec, p);
		tp_s_branches(ctx, rec, p->records);
		i = m[j].at + 1;
	}
	return tp_s_branches(ctx, b + i, n - i);
}

static int tp_s_gap(void *ctx, const struct ptc_gap *g)
{
	struct tp_run *r = ctx;
	uint64_t v[7] = { g->cause, g->aux_offset, g->resume_offset, g->ip, g->resume_ip,
			  g->lost_bytes, g->time };

	tp_put(r->log, v, sizeof(v));
	return 0;
}

static struct ptc_pt_thread tp_thr, tp_other;

static struct ptc_pt_thread *tp_thread_at(void *ctx, int cpu, uint32_t qtid, uint64_t time)
{
	(void)ctx, (void)cpu, (void)qtid, (void)time;
	return &tp_thr;
}

static int tp_lost_on_cpu(void *ctx, int cpu, uint64_t t0, uint64_t t1, const struct ptc_gap *g,
			  struct ptc_pt_thread *owner, struct ptc_pt_thread *resumer)
{
	(void)ctx, (void)cpu;
	if (t1 <= t0 || &tp_other == owner || &tp_other == resumer)
		return 0;
	tp_other.after_gap = 1;
	return ptc_pt_thread_gap(&tp_other, g);
}

static void tp_stack(struct tp_log *l, const struct ptc_pt_thread *t)
{
	uint64_t d = t->depth;

	tp_put(l, &d, sizeof(d));
	if (t->depth)
		tp_put(l, t->stack, t->depth * sizeof(*t->stack));
}

/* Decode data (a private copy: the decoder reads up to its last byte only)
 * with or without the memo into log[0] (the thread that runs) and log[1]
 * (the one that ran while the trace was lost): each thread's stream is
 * what must not change, not how the two interleave (batches are handed
 * over at other times with the memo). */
static void tp_decode(const uint8_t *data, size_t size, int no_paths, struct tp_log log[2])
{
	struct ptc_pt_env env = { .thread_at = tp_thread_at, .region_at = pt_fuzz_region_at,
				  .lost_on_cpu = tp_lost_on_cpu };
	struct ptc_sink sink[2] = { { tp_s_begin, tp_s_branches, tp_s_gap, tp_s_end, NULL, tp_s_paths },
				    { tp_s_begin, tp_s_branches, tp_s_gap, tp_s_end, NULL, tp_s_paths } };
	struct tp_run *run = calloc(2, sizeof(*run));
	struct ptc_pt_params p;
	struct ptc_pt_decoder *d;
	uint8_t *copy = malloc(size ? size : 1);

	if (!run || !copy)
		abort();
	memcpy(copy, data, size);
	run[0].log = &log[0];
	run[1].log = &log[1];
	sink[0].ctx = &run[0];
	sink[1].ctx = &run[1];
	pt_fuzz_image();
	pt_fuzz_params(&p);
	p.no_paths = no_paths;
	ptc_pt_thread_init(&tp_thr, 1, 1, &sink[0]);
	ptc_pt_thread_init(&tp_other, 1, 2, &sink[1]);
	if (ptc_pt_decoder_new(&d, &p, &env, 0, UINT32_MAX) == 0) {
		if (ptc_pt_decoder_set_buffer(d, copy, size, 0, 0, 0, NULL) == 0)
			while (ptc_pt_decoder_run(d, 0) > 0)
				;
		ptc_pt_decoder_finish(d);
		ptc_pt_thread_flush(&tp_thr);
		ptc_pt_thread_flush(&tp_other);
		tp_stack(&log[0], &tp_thr);
		tp_stack(&log[1], &tp_other);
		ptc_pt_decoder_free(d);
	}
	ptc_pt_thread_fini(&tp_thr);
	ptc_pt_thread_fini(&tp_other);
	free(copy);
	free(run);
}

/* Both ways; NULL when they agree and every mark keeps its promises, else
 * what is wrong.  *paths, *records: the marks seen. */
static const char *tp_compare(const uint8_t *data, size_t size, uint64_t *paths, uint64_t *records)
{
	struct tp_log a[2], b[2];
	const char *why = NULL;
	int k;

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	tp_decode(data, size, 0, a);
	tp_decode(data, size, 1, b);
	*paths = *records = 0;
	for (k = 0; k < 2; k++) {
		if (a[k].bad)
			why = a[k].bad;
		else if (b[k].paths)
			why = "the walker one branch at a time marked a path";
		else if (a[k].len != b[k].len || (a[k].len && memcmp(a[k].p, b[k].p, a[k].len)))
			why = "the memo's branches, gaps or call stack of a thread differ from one branch at a time";
		*paths += a[k].paths;
		*records += a[k].path_records;
		free(a[k].p);
		free(b[k].p);
	}
	return why;
}

#endif
