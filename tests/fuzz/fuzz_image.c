/* Fuzz target: images from arbitrary bytes (ELF or raw code) and lookups
 * in their branch tables.  Anything may fail; nothing may crash, read out
 * of bounds or hang. */
#include <stddef.h>
#include <stdint.h>

#include "images/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ptc_tbranch *br;
	struct ptc_image *img;
	struct ptc_image_stats st;
	uint8_t buf[32];
	char err[256];
	size_t n, i;
	int64_t bias;

	if (ptc_image_from_bytes(&img, "fuzz", data, size, 0x400000, err, sizeof(err)) < 0)
		return 0;
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
	ptc_image_bias(img, 0x7f0000000000, 0, &bias);
	ptc_image_bias(img, 0x7f0000001000, 0x1000, &bias);
	ptc_image_stats(img, &st);
	ptc_image_free(img);
	return 0;
}
