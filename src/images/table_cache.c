/* Branch tables kept on disk (table_cache.h).
 *
 * A file holds one table: a header, the arrays of struct ptc_image that the
 * sweep fills (bits, rank, first_br, runs, br) as they are in memory, and
 * an XXH3-64 of everything before it.  Its name is the key: XXH3-128 of the
 * format, the mode and the code the sweep reads (spans with their bytes,
 * regions).  A table depends on nothing else, so a file whose key and
 * checksum match holds the table a sweep would build; the checks after
 * the checksum keep a file written on purpose to mislead from making the
 * lookups read out of bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "common/error.h"
#include "common/trace_event.h"
#include "images/image_int.h"
#include "images/table_cache.h"

/* Bump when the table's layout or the sweep's results change. */
#define TABLE_FORMAT 1
#define MAGIC "PTCTBL\r\n"

struct file_header {
	char magic[8];
	uint32_t format;
	uint32_t byte_order;	/* 0x01020304 as written: the cache is this machine's */
	uint32_t tbranch_size, run_size;
	uint32_t mode, reserved;
	uint8_t key[16];
	uint64_t nwords, nruns, nbr;
	uint64_t ninsns, bad_bytes, first_bad;
};

struct layout {
	size_t words, runs, br, total;	/* bytes of each part, and of the file */
};

static int layout_of(uint64_t nwords, uint64_t nruns, uint64_t nbr, struct layout *l)
{
	/* counts from a file: refuse what cannot be memory (and overflow) */
	if (nwords >= (1ull << 40) || nruns >= (1ull << 40) || nbr >= PTC_NO_BRANCH)
		return -1;
	l->words = (size_t)(nwords + 1) * (sizeof(uint64_t) + 2 * sizeof(uint32_t));
	l->runs = (size_t)nruns * sizeof(struct ptc_run);
	l->br = (size_t)nbr * sizeof(struct ptc_tbranch);
	l->total = sizeof(struct file_header) + l->words + l->runs + l->br + sizeof(uint64_t);
	return 0;
}

/* The pages of [p, p + n), part of a file's mapping, mapped at once
 * (Linux 5.14 on; a hint): the hash reads every byte, and a fault per
 * 64 KiB of file costs more than one call (about 14 us each on a virtual
 * machine: python3's code, 100 of them). */
static void map_in(const void *p, size_t n)
{
#ifdef MADV_POPULATE_READ
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), from = (uintptr_t)p & ~(page - 1);

	if (n)
		(void)madvise((void *)from, (uintptr_t)p + n - from, MADV_POPULATE_READ);
#else
	(void)p;
	(void)n;
#endif
}

void ptc_table_cache_key(const struct ptc_image *img, uint8_t key[16])
{
	XXH3_state_t *st = XXH3_createState();
	const uint32_t head[2] = { TABLE_FORMAT, img->mode };
	const struct ptc_image *b = img->base ? img->base : img;
	XXH128_hash_t h;
	size_t i;

	memset(key, 0, 16);
	if (!st)
		return;		/* an all-zero key: never stored, never found */
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, head, sizeof(head));
	XXH3_128bits_update(st, &b->nspans, sizeof(b->nspans));
	for (i = 0; i < b->nspans; i++) {
		const struct ptc_span *s = &b->spans[i];

		map_in(s->bytes, (size_t)s->size);
		XXH3_128bits_update(st, &s->vaddr, sizeof(s->vaddr));
		XXH3_128bits_update(st, &s->size, sizeof(s->size));
		XXH3_128bits_update(st, s->bytes, (size_t)s->size);
	}
	XXH3_128bits_update(st, &b->nregions, sizeof(b->nregions));
	XXH3_128bits_update(st, b->regions, b->nregions * sizeof(*b->regions));
	h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	XXH128_canonicalFromHash((XXH128_canonical_t *)key, h);
}

static int key_is_zero(const uint8_t key[16])
{
	static const uint8_t zero[16];

	return !memcmp(key, zero, 16);
}

static void file_name(char *buf, size_t len, const char *dir, const uint8_t key[16], unsigned mode)
{
	char hex[33];
	int i;

	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	snprintf(buf, len, "%s/%s.x%u", dir, hex, mode);
}

/* The bitmap words the image's spans take, one per 64 code bytes of each,
 * as the sweep lays them out. */
static size_t words_of(const struct ptc_image *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->nspans; i++)
		n += (size_t)((b->spans[i].size + 63) / 64);
	return n;
}

/* What a sweep guarantees and the lookups rely on; a file that passed its
 * checksum fails these only when it was made to. */
static int plausible(const struct ptc_image *img)
{
	const struct ptc_image *b = img->base ? img->base : img;
	uint64_t total = 0, prev_ip = 0;
	size_t w, i, sp;

	for (w = 0; w <= img->nwords; w++) {
		if (img->rank[w] != total || img->first_br[w] > img->nbr ||
		    (w && img->first_br[w] < img->first_br[w - 1]))
			return 0;
		total += (uint64_t)__builtin_popcountll(img->bits[w]);
	}
	if (total > UINT32_MAX || img->first_br[img->nwords] != img->nbr)
		return 0;
	for (i = 0; i < img->nbr; i++) {
		const struct ptc_tbranch *t = &img->br[i];

		if ((i && t->ip <= prev_ip) || t->kind >= PTC_BR_KIND_NR || !t->length || t->length > 15 ||
		    (t->target_next != PTC_NO_BRANCH && t->target_next >= img->nbr))
			return 0;
		prev_ip = t->ip;
	}
	/* runs lie inside the code, each in one span: a branch found in a
	 * run is ranked in the bitmap of the span of the address asked */
	for (i = 0, sp = 0; i < img->nruns; i++) {
		const struct ptc_run *r = &img->runs[i];

		if (r->start > r->end || (i && r->start < img->runs[i - 1].end))
			return 0;
		while (sp < b->nspans && b->spans[sp].vaddr + b->spans[sp].size <= r->start)
			sp++;
		if (sp == b->nspans || r->start < b->spans[sp].vaddr ||
		    r->end > b->spans[sp].vaddr + b->spans[sp].size)
			return 0;
	}
	return 1;
}

/* The part of n bytes at *off of the mapped file at map, aligned for
 * what it holds (NULL: it is not). */
static void *part_at(uint8_t *map, uint64_t *off, size_t n, size_t align)
{
	void *p = map + *off;

	if (*off % align)
		return NULL;
	*off += n;
	return p;
}

int ptc_table_cache_load(struct ptc_image *img, const char *dir, const uint8_t key[16])
{
	const struct ptc_image *b = img->base ? img->base : img;
	struct file_header h;
	struct layout l;
	uint64_t sum, off = sizeof(h);
	char path[4096];
	struct stat st;
	uint8_t *map = NULL;
	int fd, ok = 0;

	if (!dir || key_is_zero(key))
		return 0;
	file_name(path, sizeof(path), dir, key, img->mode);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(h) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		goto out;
	if (memcmp(h.magic, MAGIC, 8) || h.format != TABLE_FORMAT || h.byte_order != 0x01020304 ||
	    h.tbranch_size != sizeof(struct ptc_tbranch) || h.run_size != sizeof(struct ptc_run) ||
	    h.mode != img->mode || memcmp(h.key, key, 16) || h.nwords != words_of(b) ||
	    layout_of(h.nwords, h.nruns, h.nbr, &l) < 0 || l.total != (uint64_t)st.st_size)
		goto out;
	/* The table's arrays are the file's pages, mapped: reading them into
	 * the heap cost a copy and a fresh page of memory for each page of
	 * the file (libc's table is 7 MiB), while the lookups touch a few of
	 * them.  A file is replaced by a rename, never changed in place
	 * (ptc_table_cache_store()), so the mapping stays what was checked. */
	map = mmap(NULL, l.total, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED) {
		map = NULL;
		goto out;
	}
	memcpy(&sum, map + l.total - sizeof(sum), sizeof(sum));
	if (XXH3_64bits(map, l.total - sizeof(sum)) != sum)
		goto out;
	img->nwords = (size_t)h.nwords;
	img->nruns = (size_t)h.nruns;
	img->nbr = (size_t)h.nbr;
	img->bits = part_at(map, &off, (img->nwords + 1) * sizeof(*img->bits), _Alignof(uint64_t));
	img->rank = part_at(map, &off, (img->nwords + 1) * sizeof(*img->rank), _Alignof(uint32_t));
	img->first_br = part_at(map, &off, (img->nwords + 1) * sizeof(*img->first_br), _Alignof(uint32_t));
	img->runs = part_at(map, &off, l.runs, _Alignof(struct ptc_run));
	img->br = part_at(map, &off, l.br, _Alignof(struct ptc_tbranch));
	img->table_map = map;
	img->table_map_size = l.total;
	map = NULL;	/* the image's now */
	if (img->bits && img->rank && img->first_br && img->runs && img->br) {
		img->ninsns = h.ninsns;
		img->bad_bytes = h.bad_bytes;
		img->first_bad = h.first_bad;
		if (plausible(img))
			ok = 1;
	}
	if (ok != 1)
		ptc_image_drop_table(img);
out:
	if (map)
		munmap(map, l.total);
	close(fd);
	return ok;
}

static int write_all(int fd, const void *p, size_t n, XXH3_state_t *st)
{
	const uint8_t *c = p;

	XXH3_64bits_update(st, p, n);
	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* mkdir -p, for the one directory the cache is. */
static int make_dirs(const char *dir)
{
	char buf[4096], *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -1;
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int ptc_table_cache_store(const struct ptc_image *img, const char *dir, const uint8_t key[16])
{
	struct file_header h;
	XXH3_state_t *st;
	char path[4096], tmp[4200];
	uint64_t sum;
	size_t nw = img->nwords + 1;
	int fd, rc = -1;

	if (!dir || key_is_zero(key) || make_dirs(dir) < 0)
		return -1;
	file_name(path, sizeof(path), dir, key, img->mode);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	st = XXH3_createState();
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MAGIC, 8);
	h.format = TABLE_FORMAT;
	h.byte_order = 0x01020304;
	h.tbranch_size = sizeof(struct ptc_tbranch);
	h.run_size = sizeof(struct ptc_run);
	h.mode = img->mode;
	memcpy(h.key, key, 16);
	h.nwords = img->nwords;
	h.nruns = img->nruns;
	h.nbr = img->nbr;
	h.ninsns = img->ninsns;
	h.bad_bytes = img->bad_bytes;
	h.first_bad = img->first_bad;
	if (st && XXH3_64bits_reset(st) == XXH_OK && write_all(fd, &h, sizeof(h), st) == 0 &&
	    write_all(fd, img->bits, nw * sizeof(*img->bits), st) == 0 &&
	    write_all(fd, img->rank, nw * sizeof(*img->rank), st) == 0 &&
	    write_all(fd, img->first_br, nw * sizeof(*img->first_br), st) == 0 &&
	    write_all(fd, img->runs, img->nruns * sizeof(*img->runs), st) == 0 &&
	    write_all(fd, img->br, img->nbr * sizeof(*img->br), st) == 0) {
		sum = XXH3_64bits_digest(st);
		if (write_all(fd, &sum, sizeof(sum), st) == 0)
			rc = 0;
	}
	XXH3_freeState(st);
	if (close(fd) != 0)
		rc = -1;
	/* the file appears under its name whole, or not at all */
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -1;
	if (rc < 0)
		unlink(tmp);
	return rc;
}
