/* The code and recording parameters that the Intel PT fuzz targets decode
 * against (fuzz_pt_decoder.c, fuzz_pt_ahead.c): a counted loop, a call and
 * return, an indirect jump, a system call, mapped at PT_FUZZ_BASE; the
 * seeds in tests/fuzz/seeds/fuzz_pt_decoder are valid streams for it. */
#ifndef PTC_TESTS_FUZZ_PT_FUZZ_IMAGE_H
#define PTC_TESTS_FUZZ_PT_FUZZ_IMAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/intel_pt/ptdec.h"
#include "images/image.h"

#define PT_FUZZ_BASE 0x400000u

static const uint8_t pt_fuzz_code[] = {
	0x31, 0xc0,			/* 400000: xor eax, eax */
	0xff, 0xc0,			/* 400002: inc eax */
	0x83, 0xf8, 0x05,		/* 400004: cmp eax, 5 */
	0x75, 0xf9,			/* 400007: jne 400002 */
	0xe8, 0x0a, 0x00, 0x00, 0x00,	/* 400009: call 400018 */
	0xff, 0xe3,			/* 40000e: jmp rbx */
	0x0f, 0x05,			/* 400010: syscall */
	0xeb, 0xec,			/* 400012: jmp 400000 */
	0x90, 0x90, 0x90, 0x90,		/* 400014: nop x4 */
	0x90,				/* 400018: nop */
	0xc3,				/* 400019: ret */
};

static struct ptc_image *pt_fuzz_img;

/* The image, made on first use (abort() if it cannot be). */
static struct ptc_image *pt_fuzz_image(void)
{
	char err[128];

	if (!pt_fuzz_img && ptc_image_from_bytes(&pt_fuzz_img, "fuzz", pt_fuzz_code, sizeof(pt_fuzz_code),
						 PT_FUZZ_BASE, err, sizeof(err)) < 0)
		abort();
	return pt_fuzz_img;
}

/* The environment's region_at: the image, or no code. */
static int pt_fuzz_region_at(void *ctx, struct ptc_pt_thread *t, uint64_t time, uint64_t ip,
			     struct ptc_pt_region *out, int *cause, char *msg, size_t msglen)
{
	size_t n;

	(void)ctx, (void)t, (void)time, (void)msglen;
	if (ip < PT_FUZZ_BASE || ip >= PT_FUZZ_BASE + sizeof(pt_fuzz_code)) {
		*cause = PTC_GAP_NO_IMAGE;
		msg[0] = 0;
		return -1;
	}
	out->img = pt_fuzz_image();
	out->bias = 0;
	out->tb = ptc_image_branches(out->img, &n);
	out->ntb = (uint32_t)n;
	out->start = PT_FUZZ_BASE;
	out->end = PT_FUZZ_BASE + sizeof(pt_fuzz_code);
	out->tag = NULL;
	return 0;
}

/* A Skylake-SP recording with MTC and TSC timing. */
static void pt_fuzz_params(struct ptc_pt_params *p)
{
	memset(p, 0, sizeof(*p));
	p->cpu_family = 6;
	p->cpu_model = 85;
	p->mtc_freq = 3;
	p->nom_freq = 20;
	p->tsc_ctc_n = 80;
	p->tsc_ctc_d = 1;
}

#endif
