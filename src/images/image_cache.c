/* The image cache: each distinct (file, build-id) is located and loaded
 * once, and so is each failure, so that a missing image costs one lookup
 * and one message however many mappings name it.
 *
 * Not thread-safe: one cache per decoding thread, or a lock around _get.
 * The images themselves are immutable and may be shared between threads.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "images/image.h"
#include "images/locate.h"

struct cache_entry {
	char *filename;		/* as the mapping names it */
	uint8_t build_id[20];
	size_t build_id_size;	/* 0: none expected */
	char *path;		/* the file used, NULL when none */
	struct ptc_image *img;	/* NULL after a failure */
	int owner;		/* this entry frees img (others share it) */
	int rc;			/* 0 or the error of the first attempt */
	char *errmsg;
};

struct ptc_image_cache {
	struct ptc_image_cache_options opt;
	char *symfs, *buildid_dir, *table_dir;
	struct cache_entry *e;
	size_t n, cap;
	/* Open-addressing hash of (filename, build-id) -> 1 + entry index, so
	 * that a run with many processes and mappings looks up in O(1). */
	uint32_t *slot;
	size_t nslots;		/* a power of two, at least 2 * cap */
};

static const uint8_t e_none[1];

static uint64_t key_hash(const char *filename, const uint8_t *id, size_t idsz)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (; *filename; filename++)
		h = (h ^ (uint8_t)*filename) * 1099511628211ULL;
	for (i = 0; i < idsz; i++)
		h = (h ^ id[i]) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static void slot_insert(struct ptc_image_cache *c, size_t index)
{
	const struct cache_entry *e = &c->e[index];
	size_t mask = c->nslots - 1;
	size_t k = (size_t)key_hash(e->filename, e->build_id, e->build_id_size) & mask;

	while (c->slot[k])
		k = (k + 1) & mask;
	c->slot[k] = (uint32_t)index + 1;
}

/* Make room for one more entry (entries and hash slots). */
static int reserve(struct ptc_image_cache *c)
{
	size_t i, cap, nslots;
	struct cache_entry *ne;
	uint32_t *ns;

	if (c->n < c->cap)
		return 0;
	cap = c->cap ? 2 * c->cap : 16;
	if (cap >= UINT32_MAX / 4)
		return -ptc_err_overflow;
	ne = realloc(c->e, cap * sizeof(*ne));
	if (!ne)
		return -ptc_err_nomem;
	c->e = ne;
	nslots = 4 * cap;
	ns = calloc(nslots, sizeof(*ns));
	if (!ns)
		return -ptc_err_nomem;
	free(c->slot);
	c->slot = ns;
	c->nslots = nslots;
	c->cap = cap;
	for (i = 0; i < c->n; i++)
		slot_insert(c, i);
	return 0;
}

static size_t trim_id(const uint8_t *id, size_t size)
{
	if (!id)
		return 0;
	if (size > 20)
		size = 20;
	while (size && !id[size - 1])
		size--;
	return size;
}

int ptc_image_cache_new(struct ptc_image_cache **out, const struct ptc_image_cache_options *opt)
{
	struct ptc_image_cache *c;

	if (!out)
		return -ptc_err_invalid;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ptc_err_nomem;
	if (opt) {
		c->opt = *opt;
		if (opt->symfs && !(c->symfs = strdup(opt->symfs)))
			goto nomem;
		if (opt->buildid_dir && !(c->buildid_dir = strdup(opt->buildid_dir)))
			goto nomem;
		if (opt->table_dir && !(c->table_dir = strdup(opt->table_dir)))
			goto nomem;
	}
	c->opt.symfs = c->symfs;
	c->opt.buildid_dir = c->buildid_dir;
	c->opt.table_dir = c->table_dir;
	*out = c;
	return 0;
nomem:
	free(c->symfs);
	free(c->buildid_dir);
	free(c);
	return -ptc_err_nomem;
}

void ptc_image_cache_free(struct ptc_image_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		if (c->e[i].owner)
			ptc_image_free(c->e[i].img);
		free(c->e[i].filename);
		free(c->e[i].path);
		free(c->e[i].errmsg);
	}
	free(c->e);
	free(c->slot);
	free(c->symfs);
	free(c->buildid_dir);
	free(c->table_dir);
	free(c);
}

void ptc_image_cache_tables(const struct ptc_image_cache *c, size_t *loaded, size_t *from_table_cache)
{
	struct ptc_image_stats st;
	size_t i;

	*loaded = *from_table_cache = 0;
	for (i = 0; i < c->n; i++)
		if (c->e[i].owner && c->e[i].img) {
			ptc_image_stats(c->e[i].img, &st);
			++*loaded;
			*from_table_cache += st.table_cached != 0;
		}
}

static struct cache_entry *find(struct ptc_image_cache *c, const char *filename,
				const uint8_t *id, size_t idsz)
{
	size_t mask = c->nslots - 1, k;

	if (!c->nslots)
		return NULL;
	k = (size_t)key_hash(filename, id, idsz) & mask;
	for (; c->slot[k]; k = (k + 1) & mask) {
		struct cache_entry *e = &c->e[c->slot[k] - 1];

		if (e->build_id_size == idsz && !memcmp(e->build_id, id, idsz) &&
		    strcmp(e->filename, filename) == 0)
			return e;
	}
	return NULL;
}

/* An image already loaded from the same file with the same expectation
 * (a second name for one file, e.g. through a symlink). */
static struct ptc_image *find_loaded(struct ptc_image_cache *c, const char *path,
				     const uint8_t *id, size_t idsz)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->e[i].img && c->e[i].path && c->e[i].build_id_size == idsz &&
		    !memcmp(c->e[i].build_id, id, idsz) && strcmp(c->e[i].path, path) == 0)
			return c->e[i].img;
	return NULL;
}

/* perf (since 4.x) keeps DIR/.build-id/xx/yyyy as a symlink to a
 * directory holding the file as "elf"; ptc_locate_image (locate.c) looks
 * for a file at the link itself.  Until it learns the directory layout,
 * try it here.  Returns 1 with path set when that file has the id. */
static int perf_cache_dir_elf(const struct ptc_image_cache *c, const char *hex,
			      char *path, size_t pathlen)
{
	const char *dir = c->buildid_dir, *home = getenv("HOME");
	uint8_t have[20], want[20];
	char h[41];
	size_t n = strlen(hex) / 2, i;
	struct stat st;
	int got;

	if (!dir && !home)
		return 0;
	if (dir)
		snprintf(path, pathlen, "%s/.build-id/%.2s/%s/elf", dir, hex, hex + 2);
	else
		snprintf(path, pathlen, "%s/.debug/.build-id/%.2s/%s/elf", home, hex, hex + 2);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	got = ptc_read_build_id(path, have);
	if (got <= 0)
		return 0;
	for (i = 0; i < n && i < 20; i++) {
		memcpy(h, hex + 2 * i, 2);
		h[2] = 0;
		want[i] = (uint8_t)strtoul(h, NULL, 16);
	}
	return trim_id(have, (size_t)got) == n && !memcmp(have, want, n);
}

static int reply(const struct cache_entry *e, const struct ptc_image **img,
		 char *err, size_t errlen)
{
	*img = e->img;
	if (e->rc < 0 && err && errlen)
		snprintf(err, errlen, "%s", e->errmsg ? e->errmsg : ptc_errstr(e->rc));
	return e->rc;
}

int ptc_image_cache_get(struct ptc_image_cache *c, const char *filename,
			const uint8_t *build_id, size_t build_id_size,
			const struct ptc_image **img, char *err, size_t errlen)
{
	char path[PATH_MAX], real[PATH_MAX], hex[41], msg[PATH_MAX + 256];
	size_t idsz = trim_id(build_id, build_id_size);
	struct cache_entry *e;
	struct ptc_image *loaded = NULL;
	int rc, where;

	if (!c || !filename || !img)
		return -ptc_err_invalid;
	*img = NULL;
	e = find(c, filename, idsz ? build_id : e_none, idsz);
	if (e)
		return reply(e, img, err, errlen);

	rc = reserve(c);
	if (rc < 0)
		return rc;
	e = &c->e[c->n];
	memset(e, 0, sizeof(*e));
	e->filename = strdup(filename);
	if (!e->filename)
		return -ptc_err_nomem;
	if (idsz)
		memcpy(e->build_id, build_id, idsz);
	e->build_id_size = idsz;
	slot_insert(c, c->n);
	c->n++;

	ptc_build_id_hex(e->build_id, idsz, hex);
	msg[0] = 0;
	{
		struct ptc_locate_options lo = { c->symfs, c->buildid_dir };

		where = ptc_locate_image(&lo, filename, build_id,
					 build_id_size > 20 ? 20 : build_id_size, path, sizeof(path));
	}
	if (where == PTC_LOCATE_MISSING && idsz && perf_cache_dir_elf(c, hex, path, sizeof(path)))
		where = PTC_LOCATE_FOUND;
	if (where == PTC_LOCATE_MISMATCH && idsz) {
		/* ptc_locate_image compares ids byte for byte; perf pads short
		 * (e.g. 16-byte) ids with zeros, which the loader's check allows. */
		uint8_t have[20];
		int n = ptc_read_build_id(path, have);

		if (n > 0 && trim_id(have, (size_t)n) == idsz && !memcmp(have, e->build_id, idsz))
			where = PTC_LOCATE_FOUND;
	}
	if (where == PTC_LOCATE_MISSING || where < 0) {
		rc = where < 0 ? where : -ptc_err_not_found;
		snprintf(msg, sizeof(msg), "%s (build-id %s): image not found (looked in %s%s"
			 "the recorded path)", filename, idsz ? hex : "none",
			 idsz ? "the build-id cache, " : "", c->symfs ? "--symfs, " : "");
		goto done;
	}
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	e->path = strdup(real);
	if (!e->path) {
		rc = -ptc_err_nomem;
		goto done;
	}
	loaded = find_loaded(c, real, e->build_id, idsz);
	if (loaded) {
		e->img = loaded;
		rc = 0;
		goto done;
	}
	rc = ptc_image_load_elf_cached(&e->img, real, idsz ? e->build_id : NULL, idsz, c->opt.threads, c->opt.table_dir,
				   msg, sizeof(msg));
	if (rc == -ptc_err_mismatch && c->opt.force) {
		/* --force: the user vouches for the file. */
		rc = ptc_image_load_elf_cached(&e->img, real, NULL, 0, c->opt.threads, c->opt.table_dir, msg, sizeof(msg));
		if (rc == 0)
			e->owner = 1;
		goto done;
	}
	if (rc == 0)
		e->owner = 1;
	else if (rc == -ptc_err_mismatch && strcmp(real, filename) != 0) {
		/* Name the mapping too, not only the file found for it. */
		size_t fl = strlen(filename), ml = strlen(msg);

		if (fl + 2 + ml < sizeof(msg)) {
			memmove(msg + fl + 2, msg, ml + 1);
			memcpy(msg, filename, fl);
			memcpy(msg + fl, ": ", 2);
		}
	}
done:
	e->rc = rc;
	/* Without memory for the message, reply() falls back to the code name. */
	if (rc < 0)
		e->errmsg = strdup(msg[0] ? msg : ptc_errstr(rc));
	return reply(e, img, err, errlen);
}
