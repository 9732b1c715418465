/* Fuzz target: the table cache's reader (src/images/table_cache.c) on
 * files whose checksum is right and whose contents are anything.  A
 * random file never passes the checksum, so the target writes each input
 * as a table would be written (ptc_table_cache_store: a right header, key
 * and checksum) around arrays taken from the input, reads it back, and
 * looks up branches in what was accepted.  The reader must refuse or
 * accept; lookups in an accepted table must not crash or read out of
 * bounds. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images/image.h"
#include "images/image_int.h"
#include "images/table_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int ptc_fuzz_replayed(int n);

static char dir[] = "/tmp/fuzz-table-cache.XXXXXX";
static int have_dir, accepted;

/* The replay's verdict: the seeds (real tables) must have been read back. */
int ptc_fuzz_replayed(int n)
{
	printf("%d of %d inputs read back as tables\n", accepted, n);
	return accepted ? 0 : 1;
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[sizeof(dir) + 300];

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* A little x86-64 code: a few jumps, a call, a return (the table's shape:
 * spans and words, not its branches, which come from the input). */
static const uint8_t code[] = {
	0x90, 0x74, 0x02, 0xeb, 0x00, 0xe8, 0x01, 0x00, 0x00, 0x00, 0xc3, 0xff, 0xe0, 0x0f, 0x05,
	0x48, 0x89, 0xc3, 0x75, 0xf0, 0xc3, 0x90, 0x90, 0x90, 0xe9, 0xe0, 0xff, 0xff, 0xff,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3,
};

/* n bytes of the input at *p (zeros past its end). */
static void *part(const uint8_t **p, const uint8_t *end, size_t n)
{
	uint8_t *v = calloc(1, n ? n : 1);
	size_t k = (size_t)(end - *p) < n ? (size_t)(end - *p) : n;

	if (v && k)
		memcpy(v, *p, k);
	*p += k;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct ptc_image *img;
	uint8_t key[16];
	char err[256];
	size_t nw, i;

	if (!have_dir) {
		if (!mkdtemp(dir))
			abort();
		have_dir = 1;
		atexit(remove_dir);
	}
	if (size < 2 || ptc_image_from_bytes(&img, "fuzz", code, sizeof(code), 0x400000, err, sizeof(err)) < 0)
		return 0;
	ptc_table_cache_key(img, key);
	/* the arrays from the input: as many runs and branches as its first
	 * two bytes say */
	nw = img->nwords;
	ptc_image_drop_table(img);
	img->nwords = nw++;
	img->nruns = data[0] % 8;
	img->nbr = data[1] % 64;
	p += 2;
	img->bits = part(&p, end, nw * sizeof(*img->bits));
	img->rank = part(&p, end, nw * sizeof(*img->rank));
	img->first_br = part(&p, end, nw * sizeof(*img->first_br));
	img->runs = part(&p, end, img->nruns * sizeof(*img->runs));
	img->br = part(&p, end, img->nbr * sizeof(*img->br));
	if (img->bits && img->rank && img->first_br && img->runs && img->br &&
	    ptc_table_cache_store(img, dir, key) == 0) {
		ptc_image_drop_table(img);
		if (ptc_table_cache_load(img, dir, key) == 1) {
			/* accepted: every lookup stays inside the table */
			accepted++;
			for (i = 0; i < sizeof(code) + 4; i++) {
				uint32_t idx, n;
				const struct ptc_tbranch *br;
				size_t nbr;

				if (ptc_image_next_branch(img, 0x400000 + i - 2, &idx, &n) == 0) {
					br = ptc_image_branches(img, &nbr);
					if (idx >= nbr || br[idx].ip < 0x400000 - 2)
						abort();
				}
			}
		}
	}
	ptc_image_free(img);
	return 0;
}
