/* -f cbpexp writer (see cbpexp.h).
 *
 * Entries stream through one zstd frame straight into the output file after
 * a placeholder header; the branch table, the images and the real header
 * are written at end().  Memory: the distinct (ip, target) pairs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zstd.h>

#include "common/error.h"
#include "writers/cbpexp.h"
#include "writers/writers.h"

#define HEADER_SIZE 72
#define MAX_INDEX 0x7fffffffu

struct cbp_branch {
	uint64_t ip, target;
	uint32_t length, type;
};

struct cbp_image {
	uint64_t start;
	char name[256];
	char *path;
};

struct cbp_writer {
	struct ptc_sink sink;
	FILE *f;
	char out[4096];		/* the file's name, once complete */
	ZSTD_CStream *z;
	uint8_t *zout;
	size_t zout_size;
	uint32_t ebuf[4096];
	size_t nebuf;
	uint64_t num_entries, entries_size;

	struct cbp_branch *br;
	size_t nbr, cap_br;
	uint32_t *hash;		/* index + 1, 0 empty */
	size_t hash_size;
	struct front { uint64_t ip, target; uint32_t idx; } *front;	/* direct-mapped */

	struct cbp_image *img;
	size_t nimg;
	int err;
	char errmsg[4200];	/* the first failure: sink.errmsg */
};

/* Note the first failure of file (the output, or an image read), with
 * errno's reason. */
static int cw_fail(struct cbp_writer *w, const char *file, const char *what)
{
	if (!w->errmsg[0])
		snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s: %s", file, what, strerror(errno));
	return -ptc_err_io;
}

static const char *cw_errmsg(void *ctx)
{
	return ((struct cbp_writer *)ctx)->errmsg;
}

static size_t hslot(uint64_t ip, uint64_t target, size_t size)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ull ^ (target + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
	return (size_t)((h ^ (h >> 29)) & (size - 1));
}

static int rehash(struct cbp_writer *w, size_t size)
{
	uint32_t *h = calloc(size, sizeof(*h));
	size_t i, j;

	if (!h)
		return -ptc_err_nomem;
	for (i = 0; i < w->nbr; i++) {
		for (j = hslot(w->br[i].ip, w->br[i].target, size); h[j]; j = (j + 1) & (size - 1))
			;
		h[j] = (uint32_t)i + 1;
	}
	free(w->hash);
	w->hash = h;
	w->hash_size = size;
	return 0;
}

#define FRONT (1u << 14)

static int64_t branch_index_slow(struct cbp_writer *w, const struct ptc_branch *b);

/* Most branches have one target: a small direct-mapped cache in front of
 * the hash table keeps the hot ones in cache. */
static inline int64_t branch_index(struct cbp_writer *w, const struct ptc_branch *b)
{
	struct front *f = &w->front[(b->ip ^ (b->ip >> 14) ^ (b->target << 3)) & (FRONT - 1)];
	int64_t idx;

	if (f->ip == b->ip && f->target == b->target && f->idx != UINT32_MAX)
		return f->idx;
	idx = branch_index_slow(w, b);
	if (idx >= 0) {
		f->ip = b->ip;
		f->target = b->target;
		f->idx = (uint32_t)idx;
	}
	return idx;
}

static int64_t branch_index_slow(struct cbp_writer *w, const struct ptc_branch *b)
{
	size_t j;
	struct cbp_branch *n;

	for (j = hslot(b->ip, b->target, w->hash_size); w->hash[j]; j = (j + 1) & (w->hash_size - 1)) {
		const struct cbp_branch *c = &w->br[w->hash[j] - 1];
		if (c->ip == b->ip && c->target == b->target)
			return w->hash[j] - 1;
	}
	if (w->nbr >= MAX_INDEX)
		return -ptc_err_overflow;
	if (w->nbr == w->cap_br) {
		size_t ncap = w->cap_br ? w->cap_br * 2 : 1024;
		n = realloc(w->br, ncap * sizeof(*n));
		if (!n)
			return -ptc_err_nomem;
		w->br = n;
		w->cap_br = ncap;
	}
	n = &w->br[w->nbr];
	n->ip = b->ip;
	n->target = b->target;
	n->length = b->length;
	n->type = b->kind;
	w->hash[j] = (uint32_t)++w->nbr;
	if (w->nbr * 2 > w->hash_size) {
		int err = rehash(w, w->hash_size * 2);
		if (err < 0)
			return err;
	}
	return (int64_t)w->nbr - 1;
}

static int put(struct cbp_writer *w, const void *p, size_t n)
{
	if (fwrite(p, 1, n, w->f) != n)
		return cw_fail(w, w->out, "write");
	return 0;
}

static int compress(struct cbp_writer *w, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { w->ebuf, w->nebuf * 4, 0 };
	size_t r;

	do {
		ZSTD_outBuffer out = { w->zout, w->zout_size, 0 };
		r = ZSTD_compressStream2(w->z, &out, &in, mode);
		if (ZSTD_isError(r))
			return -ptc_err_internal;
		if (out.pos && put(w, w->zout, out.pos) < 0)
			return -ptc_err_io;
		w->entries_size += out.pos;
	} while (mode == ZSTD_e_end ? r != 0 : in.pos < in.size);
	w->nebuf = 0;
	return 0;
}

static int cw_begin(void *ctx, const struct ptc_thread_info *t)
{
	return 0;
}

static int cw_branches(void *ctx, const struct ptc_branch *b, size_t n)
{
	struct cbp_writer *w = ctx;
	size_t i;

	if (w->err)
		return w->err;
	for (i = 0; i < n; i++) {
		int64_t idx;

		if (b[i].kind > PTC_BR_COND)
			continue;	/* far: no type in the format */
		idx = branch_index(w, &b[i]);
		if (idx < 0)
			return w->err = (int)idx;
		w->ebuf[w->nebuf++] = (uint32_t)idx | (b[i].taken ? 0x80000000u : 0);
		w->num_entries++;
		if (w->nebuf == sizeof(w->ebuf) / sizeof(w->ebuf[0])) {
			int err = compress(w, ZSTD_e_continue);
			if (err < 0)
				return w->err = err;
		}
	}
	return 0;
}

static int cw_gap(void *ctx, const struct ptc_gap *g)
{
	/* The format has no gap marker: the summary lists them. */
	return 0;
}

static void le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le32(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int read_file(const char *path, uint8_t **data, uint64_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *d;

	*data = NULL;
	*size = 0;
	if (!f)
		return -ptc_err_io;
	if (fstat(fileno(f), &st) != 0 || st.st_size < 0 || (uint64_t)st.st_size > (1ull << 32)) {
		fclose(f);
		return -ptc_err_io;
	}
	d = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!d || fread(d, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(d);
		fclose(f);
		return -ptc_err_io;
	}
	fclose(f);
	*data = d;
	*size = (uint64_t)st.st_size;
	return 0;
}

static int cw_end(void *ctx)
{
	struct cbp_writer *w = ctx;
	uint8_t hdr[HEADER_SIZE], rec[288];
	uint64_t branches_offset, images_offset, data_offset;
	size_t i;
	int err = w->err;

	if (!w->f)
		return 0;
	if (!err)
		err = compress(w, ZSTD_e_end);
	branches_offset = HEADER_SIZE + w->entries_size;
	for (i = 0; !err && i < w->nbr; i++) {
		uint8_t b[24];
		le64(b, w->br[i].ip);
		le64(b + 8, w->br[i].target);
		le32(b + 16, w->br[i].length);
		le32(b + 20, w->br[i].type);
		err = put(w, b, sizeof(b));
	}
	images_offset = branches_offset + 24 * (uint64_t)w->nbr;
	data_offset = images_offset + 288 * (uint64_t)w->nimg;
	/* image table, then the bytes in the same order */
	{
		uint64_t *sizes = calloc(w->nimg + 1, sizeof(*sizes));
		uint64_t off = data_offset;
		if (!sizes)
			err = err ? err : -ptc_err_nomem;
		for (i = 0; !err && i < w->nimg; i++) {
			struct stat st;
			if (stat(w->img[i].path, &st) == 0 && st.st_size > 0)
				sizes[i] = (uint64_t)st.st_size;
			memset(rec, 0, sizeof(rec));
			le64(rec, w->img[i].start);
			le64(rec + 8, sizes[i]);
			le64(rec + 16, sizes[i]);
			le64(rec + 24, off);
			memcpy(rec + 32, w->img[i].name, strnlen(w->img[i].name, 255));
			off += sizes[i];
			err = put(w, rec, sizeof(rec));
		}
		for (i = 0; !err && i < w->nimg; i++) {
			uint8_t *data;
			uint64_t size;
			if (!sizes[i])
				continue;
			if (read_file(w->img[i].path, &data, &size) < 0 || size != sizes[i]) {
				free(data);
				err = cw_fail(w, w->img[i].path, "cannot read the image to embed");
				break;
			}
			err = put(w, data, size);
			free(data);
		}
		free(sizes);
	}
	if (!err) {
		le64(hdr, PTC_CBPEXP_MAGIC);
		le64(hdr + 8, 0);
		le64(hdr + 16, w->num_entries);
		le64(hdr + 24, HEADER_SIZE);
		le64(hdr + 32, w->entries_size);
		le64(hdr + 40, w->nbr);
		le64(hdr + 48, branches_offset);
		le64(hdr + 56, w->nimg);
		le64(hdr + 64, images_offset);
		if (fseek(w->f, 0, SEEK_SET) != 0)
			err = cw_fail(w, w->out, "seek");
		else
			err = put(w, hdr, sizeof(hdr));
	}
	if (fclose(w->f) != 0 && !err)
		err = cw_fail(w, w->out, "close");
	w->f = NULL;
	if (!err && ptc_out_commit(w->out) < 0)
		err = cw_fail(w, w->out, "cannot give the complete file its name");
	return err;
}

int ptc_cbpexp_sink_new(struct ptc_sink **out, const char *path, int level)
{
	struct cbp_writer *w = calloc(1, sizeof(*w));
	uint8_t zero[HEADER_SIZE] = { 0 };

	*out = NULL;
	if (!w)
		return -ptc_err_nomem;
	{
		char tmp[4096];
		if (snprintf(w->out, sizeof(w->out), "%s", path) < (int)sizeof(w->out) &&
		    ptc_out_tmpname(tmp, sizeof(tmp), path) == 0)
			w->f = fopen(tmp, "w+b");
	}
	w->front = malloc(FRONT * sizeof(*w->front));
	if (w->front) {
		size_t i;
		for (i = 0; i < FRONT; i++)
			w->front[i].idx = UINT32_MAX;
	}
	w->z = ZSTD_createCStream();
	w->zout_size = ZSTD_CStreamOutSize();
	w->zout = malloc(w->zout_size);
	if (!w->f || !w->z || !w->zout || !w->front || rehash(w, 1024) < 0 ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, level)) ||
	    put(w, zero, sizeof(zero)) < 0) {
		int err = w->f ? -ptc_err_nomem : -ptc_err_io;
		ptc_cbpexp_sink_free(&w->sink);
		return err;
	}
	w->sink.begin = cw_begin;
	w->sink.branches = cw_branches;
	w->sink.gap = cw_gap;
	w->sink.end = cw_end;
	w->sink.errmsg = cw_errmsg;
	w->sink.ctx = w;
	*out = &w->sink;
	return 0;
}

int ptc_cbpexp_add_image(struct ptc_sink *s, uint64_t start, const char *name, const char *path)
{
	struct cbp_writer *w = s->ctx;
	struct cbp_image *n;
	size_t i;

	for (i = 0; i < w->nimg; i++)
		if (w->img[i].start == start && !strcmp(w->img[i].path, path))
			return 0;
	n = realloc(w->img, (w->nimg + 1) * sizeof(*n));
	if (!n)
		return -ptc_err_nomem;
	w->img = n;
	n = &w->img[w->nimg];
	memset(n, 0, sizeof(*n));
	n->start = start;
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->path = strdup(path);
	if (!n->path)
		return -ptc_err_nomem;
	w->nimg++;
	return 0;
}

void ptc_cbpexp_sink_free(struct ptc_sink *s)
{
	struct cbp_writer *w;
	size_t i;

	if (!s || !s->ctx) {
		/* a half-built writer */
		if (s && !s->ctx) {
			w = (struct cbp_writer *)s;
			goto free_it;
		}
		return;
	}
	w = s->ctx;
free_it:
	if (w->f)
		fclose(w->f);
	ZSTD_freeCStream(w->z);
	free(w->zout);
	free(w->br);
	free(w->hash);
	free(w->front);
	for (i = 0; i < w->nimg; i++)
		free(w->img[i].path);
	free(w->img);
	free(w);
}
