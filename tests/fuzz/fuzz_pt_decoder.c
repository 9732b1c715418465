/* Fuzz target: raw Intel PT bytes through the walker (and, for every third
 * input, libipt's block engine) against a fixed image: a counted loop, a
 * call and return, an indirect jump, a system call.  The sideband says a
 * second thread ran on the CPU whenever time advanced, so that every loss
 * also takes the path of the threads that ran during it (bystanders).  Nothing the bytes say
 * may crash the decoder, make it loop forever or grow memory unboundedly.
 * Seeds: tests/fuzz/seeds/fuzz_pt_decoder (valid streams for this image). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/intel_pt/blkdec.h"
#include "decoders/intel_pt/ptdec.h"
#include "pt_fuzz_image.h"

static struct ptc_pt_thread thr, other;
static uint64_t seen;

static int s_begin(void *ctx, const struct ptc_thread_info *t) { return 0; }
static int s_branches(void *ctx, const struct ptc_branch *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		seen += b[i].insns + b[i].kind;
	return 0;
}
static int s_gap(void *ctx, const struct ptc_gap *g) { seen += g->cause; return 0; }
static int s_end(void *ctx) { return 0; }
static struct ptc_sink sink = { s_begin, s_branches, s_gap, s_end, NULL };

static struct ptc_pt_thread *thread_at(void *ctx, int cpu, uint32_t qtid, uint64_t time)
{
	return &thr;
}

/* The other thread ran while the trace was lost: it gets the gap at
 * once (ptconv's environment places it in time). */
static int lost_on_cpu(void *ctx, int cpu, uint64_t t0, uint64_t t1, const struct ptc_gap *g,
		       struct ptc_pt_thread *owner, struct ptc_pt_thread *resumer)
{
	(void)ctx, (void)cpu;
	if (t1 <= t0 || &other == owner || &other == resumer)
		return 0;
	other.after_gap = 1;
	return ptc_pt_thread_gap(&other, g);
}


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptc_pt_env env = { .thread_at = thread_at, .region_at = pt_fuzz_region_at,
				  .lost_on_cpu = lost_on_cpu };
	struct ptc_pt_params p;
	uint8_t *copy;

	pt_fuzz_image();
	if (size > (1u << 20))
		return 0;
	/* a private copy: the decoder may read up to the last byte only */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	pt_fuzz_params(&p);
	ptc_pt_thread_init(&thr, 1, 1, &sink);
	ptc_pt_thread_init(&other, 1, 2, &sink);
	{
		struct ptc_pt_decoder *d;
		if (ptc_pt_decoder_new(&d, &p, &env, 0, UINT32_MAX) == 0) {
			if (ptc_pt_decoder_set_buffer(d, copy, size, 0, 0, 0, NULL) == 0) {
				/* exercise the PSB-segment mode on half of the inputs */
				if (size && (data[0] & 1))
					ptc_pt_decoder_add_suspect(d, size / 3, size / 2 + 1);
				while (ptc_pt_decoder_run(d, 0) > 0)
					;
			}
			ptc_pt_decoder_finish(d);
			ptc_pt_decoder_free(d);
		}
	}
	ptc_pt_thread_flush(&thr);
	ptc_pt_thread_fini(&thr);
	ptc_pt_thread_flush(&other);
	ptc_pt_thread_fini(&other);
	if (size % 3 == 0) {
		struct ptc_blk_decoder *b;
		ptc_pt_thread_init(&thr, 1, 1, &sink);
		ptc_pt_thread_init(&other, 1, 2, &sink);
		if (ptc_blk_decoder_new(&b, &p, &env, 0, UINT32_MAX) == 0) {
			if (ptc_blk_decoder_set_buffer(b, copy, size, 0, 0, 0, NULL) == 0)
				while (ptc_blk_decoder_run(b, 0) > 0)
					;
			ptc_blk_decoder_finish(b);
			ptc_blk_decoder_free(b);
		}
		ptc_pt_thread_flush(&thr);
		ptc_pt_thread_fini(&thr);
		ptc_pt_thread_flush(&other);
		ptc_pt_thread_fini(&other);
	}
	free(copy);
	return 0;
}
