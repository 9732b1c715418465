/* Fuzz target: images from arbitrary bytes (ELF or raw code) and lookups
 * in their branch tables, of every execution mode (16-, 32- and 64-bit
 * code).  Anything may fail; nothing may crash, read out of bounds or
 * hang. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "images/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lookups around every branch of img's table and at the input's first
 * offsets. */
static void probe(const struct ptc_image *img, size_t size)
{
	const struct ptc_tbranch *br;
	uint8_t buf[32];
	size_t n, i;

	br = ptc_image_branches(img, &n);
	for (i = 0; i < n && i < 4096; i++) {
		uint32_t idx, insns;

		/* Every branch's neighbourhood, including inside instructions. */
		ptc_image_next_branch(img, br[i].ip, &idx, &insns);
		ptc_image_next_branch(img, br[i].ip + 1, &idx, &insns);
		if (br[i].target)
			ptc_image_next_branch(img, br[i].target, &idx, &insns);
		ptc_image_read(img, br[i].ip, buf, sizeof(buf));
	}
	for (i = 0; i < size && i < 256; i++) {
		uint32_t idx, insns;

		ptc_image_next_branch(img, 0x400000 + i, &idx, &insns);
		ptc_image_next_branch(img, i, &idx, &insns);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned modes[] = { 16, 32, 64 };
	const struct ptc_image *m;
	struct ptc_image *img;
	struct ptc_image_stats st;
	char err[256];
	size_t i;
	int64_t bias;

	if (ptc_image_from_bytes(&img, "fuzz", data, size, 0x400000, err, sizeof(err)) < 0)
		return 0;
	probe(img, size);
	/* the same code in every execution mode: a table built on first use,
	 * the same one when asked again, from the image or from another
	 * mode's */
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const struct ptc_image *again, *next;

		if (ptc_image_in_mode(img, modes[i], &m, err, sizeof(err)) < 0)
			continue;
		probe(m, size);
		if (ptc_image_in_mode(img, modes[i], &again, err, sizeof(err)) < 0 || again != m ||
		    ptc_image_mode(m) != modes[i] ||
		    (ptc_image_in_mode(m, modes[(i + 1) % 3], &next, err, sizeof(err)) == 0 &&
		     ptc_image_mode(next) != modes[(i + 1) % 3]))
			abort();
	}
	ptc_image_bias(img, 0x7f0000000000, 0, &bias);
	ptc_image_bias(img, 0x7f0000001000, 0x1000, &bias);
	ptc_image_stats(img, &st);
	ptc_image_free(img);
	return 0;
}
