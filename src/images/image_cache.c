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
	char *symfs, *buildid_dir;
	struct cache_entry *e;
	size_t n, cap;
};

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

static void id_hex(const uint8_t *id, size_t size, char *out)
{
	size_t i;

	for (i = 0; i < size; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * size] = 0;
}

/* Private stand-in for ptc_locate_image (src/images/locate.c, developed on
 * another branch): the path under --symfs, then the path itself.  Build-id
 * checks happen when the candidate is loaded. */
static int locate(const struct ptc_image_cache *c, const char *filename,
		  char *path, size_t pathlen)
{
	struct stat st;

	if (c->symfs) {
		snprintf(path, pathlen, "%s/%s", c->symfs, filename);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return PTC_LOCATE_FOUND;
	}
	snprintf(path, pathlen, "%s", filename);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return PTC_LOCATE_FOUND;
	return PTC_LOCATE_MISSING;
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
	}
	c->opt.symfs = c->symfs;
	c->opt.buildid_dir = c->buildid_dir;
	*out = c;
	return 0;
nomem:
	free(c->symfs);
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
	free(c->symfs);
	free(c->buildid_dir);
	free(c);
}

static struct cache_entry *find(struct ptc_image_cache *c, const char *filename,
				const uint8_t *id, size_t idsz)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->e[i].build_id_size == idsz && !memcmp(c->e[i].build_id, id, idsz) &&
		    strcmp(c->e[i].filename, filename) == 0)
			return &c->e[i];
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
	e = find(c, filename, build_id, idsz);
	if (e)
		return reply(e, img, err, errlen);

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct cache_entry *ne = realloc(c->e, cap * sizeof(*ne));

		if (!ne)
			return -ptc_err_nomem;
		c->e = ne;
		c->cap = cap;
	}
	e = &c->e[c->n];
	memset(e, 0, sizeof(*e));
	e->filename = strdup(filename);
	if (!e->filename)
		return -ptc_err_nomem;
	memcpy(e->build_id, build_id, idsz);
	e->build_id_size = idsz;
	c->n++;

	id_hex(e->build_id, idsz, hex);
	msg[0] = 0;
	where = locate(c, filename, path, sizeof(path));
	if (where == PTC_LOCATE_MISSING || where < 0) {
		rc = where < 0 ? where : -ptc_err_not_found;
		snprintf(msg, sizeof(msg), "%s (build-id %s): image not found%s%s", filename,
			 idsz ? hex : "none", c->symfs ? " (symfs " : "",
			 c->symfs ? c->symfs : "");
		if (c->symfs)
			strncat(msg, ")", sizeof(msg) - strlen(msg) - 1);
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
	rc = ptc_image_load_elf(&e->img, real, idsz ? e->build_id : NULL, idsz, msg, sizeof(msg));
	if (rc == -ptc_err_mismatch && c->opt.force) {
		/* --force: the user vouches for the file; say so once anyway. */
		rc = ptc_image_load_elf(&e->img, real, NULL, 0, msg, sizeof(msg));
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
