/* Fuzz target: windows decoded ahead and replayed (ptdec.h) against the
 * same windows decoded in place.  The bytes are cut at every PSB into
 * windows; one decoder decodes them one after the other
 * (ptc_pt_decoder_continue), the other replays a log that a scratch
 * decoder made of each window first, decoding in place only what the
 * replay refuses.  Both must hand their threads the same branches and gaps
 * in the same order (abort() otherwise), whatever the bytes, over the
 * fuzz image (pt_fuzz_image.h).  The time limit 0 makes both stop at every point where
 * tracing stops, as interleaved queues do.
 * Seeds: tests/fuzz/seeds/fuzz_pt_decoder. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "decoders/intel_pt/ptdec.h"
#include "pt_fuzz_image.h"

static unsigned long replayed, in_place;	/* windows after the first */

static void report(void)
{
	fprintf(stderr, "fuzz_pt_ahead: %lu windows replayed, %lu decoded in place\n", replayed, in_place);
}

/* What one side's thread was handed, in order: records as they are, gaps
 * by the fields that do not point into the decoder's memory. */
struct side {
	struct ptc_pt_thread thr;
	uint8_t *log;
	size_t len, cap;
};

static void put(struct side *s, const void *p, size_t n)
{
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		while (cap < s->len + n)
			cap *= 2;
		s->log = realloc(s->log, cap);
		if (!s->log)
			abort();
		s->cap = cap;
	}
	memcpy(s->log + s->len, p, n);
	s->len += n;
}

static int s_begin(void *ctx, const struct ptc_thread_info *t) { return 0; }
static int s_branches(void *ctx, const struct ptc_branch *b, size_t n)
{
	size_t i;

	/* record by record: how they are grouped into batches is not an
	 * event (the walker hands a batch over early before a path from its
	 * memo that does not fit, the replay in whole batches) */
	for (i = 0; i < n; i++) {
		put(ctx, "B", 1);
		put(ctx, &b[i], sizeof(b[i]));
	}
	return 0;
}
static int s_gap(void *ctx, const struct ptc_gap *g)
{
	uint64_t f[8] = { g->cause, g->aux_offset, g->resume_offset, g->time, g->ip, g->resume_ip,
			  g->lost_branches, g->lost_bytes };

	put(ctx, "G", 1);
	put(ctx, f, sizeof(f));
	return 0;
}
static int s_end(void *ctx) { return 0; }

static struct ptc_pt_thread *thread_at(void *ctx, int cpu, uint32_t qtid, uint64_t time)
{
	return &((struct side *)ctx)->thr;
}

static int who_runs(void *ctx, int cpu, uint32_t qtid, uint64_t time, uint32_t *pid, uint32_t *tid)
{
	*pid = *tid = 1;
	return 0;
}


static const uint8_t psb[16] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82 };

/* Decode windows [cut[i], cut[i + 1]) of buf with d; scratch non-NULL:
 * replay what it decodes ahead where the replay takes it. */
static void decode(struct ptc_pt_decoder *d, struct ptc_pt_decoder *scratch, const uint8_t *buf,
		   const size_t *cut, size_t ncut)
{
	size_t i;

	for (i = 0; i + 1 < ncut; i++) {
		size_t s = cut[i], n = cut[i + 1] - cut[i];
		int more = i + 2 < ncut, err = -1;

		if (i && scratch) {
			struct ptc_pt_ahead *a;
			if (ptc_pt_decode_ahead(scratch, 0, UINT32_MAX, buf + s, n, s, more, NULL, NULL, &a) < 0)
				abort();
			while ((err = ptc_pt_decoder_replay(d, a, 0)) > 0)
				;
			ptc_pt_ahead_free(a);
			if (err == 0) {
				replayed++;
				continue;
			}
			if (err != -ptc_err_mismatch)
				abort();
			in_place++;
		}
		err = i ? ptc_pt_decoder_continue(d, buf + s, n, s) : ptc_pt_decoder_set_buffer(d, buf, n, 0, 0, 0, NULL);
		if (err < 0)
			abort();
		ptc_pt_decoder_set_continued(d, more);
		while (ptc_pt_decoder_run(d, 0) > 0)
			;
	}
	ptc_pt_decoder_finish(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ptc_sink sinks[2] = { { s_begin, s_branches, s_gap, s_end, NULL },
					    { s_begin, s_branches, s_gap, s_end, NULL } };
	struct side side[2];
	struct ptc_pt_params p;
	struct ptc_pt_decoder *d[2], *scratch;
	size_t *cut, ncut = 0, i;
	uint8_t *copy;

	if (!pt_fuzz_img) {
		pt_fuzz_image();
		atexit(report);
	}
	if (size > (1u << 18) || !size)
		return 0;
	copy = malloc(size);
	cut = malloc((size + 2) * sizeof(*cut));
	if (!copy || !cut)
		abort();
	memcpy(copy, data, size);
	/* windows: the bytes before the first PSB, then from each PSB on */
	cut[ncut++] = 0;
	for (i = 1; i + 16 <= size; i++)
		if (!memcmp(copy + i, psb, 16)) {
			cut[ncut++] = i;
			i += 15;
		}
	cut[ncut++] = size;
	pt_fuzz_params(&p);
	memset(side, 0, sizeof(side));
	for (i = 0; i < 2; i++) {
		struct ptc_pt_env env = { .thread_at = thread_at, .region_at = pt_fuzz_region_at, .ctx = &side[i] };
		sinks[i].ctx = &side[i];
		ptc_pt_thread_init(&side[i].thr, 1, 1, &sinks[i]);
		if (ptc_pt_decoder_new(&d[i], &p, &env, 0, UINT32_MAX) < 0)
			abort();
	}
	{
		struct ptc_pt_env env = { .region_at = pt_fuzz_region_at, .who_runs = who_runs };
		if (ptc_pt_decoder_new(&scratch, &p, &env, -1, UINT32_MAX) < 0)
			abort();
	}
	decode(d[0], NULL, copy, cut, ncut);
	decode(d[1], scratch, copy, cut, ncut);
	for (i = 0; i < 2; i++) {
		ptc_pt_thread_flush(&side[i].thr);
		put(&side[i], &side[i].thr.pending_insns, sizeof(side[i].thr.pending_insns));
		/* and the call stack the next windows start from (the return
		 * addresses: the call's table index is a hint the replay
		 * does not have) */
		put(&side[i], &side[i].thr.depth, sizeof(side[i].thr.depth));
		if (side[i].thr.depth)
			put(&side[i], side[i].thr.stack, side[i].thr.depth * sizeof(*side[i].thr.stack));
	}
	if (side[0].len != side[1].len || memcmp(side[0].log, side[1].log, side[0].len)) {
		fprintf(stderr, "fuzz_pt_ahead: the replay handed the thread other events than decoding in place "
			"(%zu and %zu bytes of log)\n", side[0].len, side[1].len);
		abort();
	}
	for (i = 0; i < 2; i++) {
		ptc_pt_decoder_free(d[i]);
		ptc_pt_thread_fini(&side[i].thr);
		free(side[i].log);
	}
	ptc_pt_decoder_free(scratch);
	free(cut);
	free(copy);
	return 0;
}
