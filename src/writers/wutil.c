/* Helpers shared by the writers. */
#include <errno.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/error.h"
#include "writers/wutil.h"

uint64_t ptc_hash64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

int ptc_map_init(struct ptc_map *m)
{
	m->mask = 1023;
	m->n = 0;
	m->keys = malloc((m->mask + 1) * sizeof(*m->keys));
	m->vals = malloc((m->mask + 1) * sizeof(*m->vals));
	if (!m->keys || !m->vals)
		return -ptc_err_nomem;
	memset(m->keys, 0xff, (m->mask + 1) * sizeof(*m->keys));
	return 0;
}

void ptc_map_free(struct ptc_map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
}

uint32_t ptc_map_get(const struct ptc_map *m, uint64_t key)
{
	size_t i = ptc_hash64(key) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (m->keys[i] == UINT64_MAX)
			return UINT32_MAX;
	}
}

static void raw_put(uint64_t *keys, uint32_t *vals, size_t mask, uint64_t key, uint32_t val)
{
	size_t i = ptc_hash64(key) & mask;

	while (keys[i] != UINT64_MAX && keys[i] != key)
		i = (i + 1) & mask;
	keys[i] = key;
	vals[i] = val;
}

int ptc_map_put(struct ptc_map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->mask) {
		size_t nm = m->mask * 2 + 1, i;
		uint64_t *k = malloc((nm + 1) * sizeof(*k));
		uint32_t *v = malloc((nm + 1) * sizeof(*v));
		if (!k || !v) {
			free(k);
			free(v);
			return -ptc_err_nomem;
		}
		memset(k, 0xff, (nm + 1) * sizeof(*k));
		for (i = 0; i <= m->mask; i++)
			if (m->keys[i] != UINT64_MAX)
				raw_put(k, v, nm, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		m->keys = k;
		m->vals = v;
		m->mask = nm;
	}
	if (ptc_map_get(m, key) == UINT32_MAX)
		m->n++;
	raw_put(m->keys, m->vals, m->mask, key, val);
	return 0;
}

struct ptc_zout {
	FILE *f;
	enum ptc_zkind kind;
	z_stream gz;
	lzma_stream xz;
	uint8_t in[1 << 16];
	size_t in_len;
	uint8_t out[1 << 16];
	int err_no;
};

static int zopen(struct ptc_zout **zp, const char *path, enum ptc_zkind kind, int level,
		 const char *mode)
{
	struct ptc_zout *z = calloc(1, sizeof(*z));

	*zp = NULL;
	if (!z)
		return -ptc_err_nomem;
	z->kind = kind;
	z->f = fopen(path, mode);
	if (!z->f) {
		free(z);
		return -ptc_err_io;
	}
	if (kind == PTC_Z_GZIP) {
		/* windowBits 15 + 16: a gzip wrapper. */
		if (deflateInit2(&z->gz, level ? level : 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			goto bad;
	} else if (kind == PTC_Z_XZ) {
		lzma_stream init = LZMA_STREAM_INIT;
		z->xz = init;
		if (lzma_easy_encoder(&z->xz, level < 0 ? 0 : level ? (uint32_t)level : 6, LZMA_CHECK_CRC64) != LZMA_OK)
			goto bad;
	}
	*zp = z;
	return 0;
bad:
	fclose(z->f);
	free(z);
	return -ptc_err_nomem;
}

int ptc_zout_open(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level)
{
	return zopen(z, path, kind, level, "wb");
}

int ptc_zout_append(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level)
{
	return zopen(z, path, kind, level, "ab");
}

static int drain(struct ptc_zout *z, int finish)
{
	if (z->kind == PTC_Z_NONE) {
		if (z->in_len && fwrite(z->in, 1, z->in_len, z->f) != z->in_len)
			goto io;
		z->in_len = 0;
		return 0;
	}
	if (z->kind == PTC_Z_GZIP) {
		int r;
		z->gz.next_in = z->in;
		z->gz.avail_in = (uInt)z->in_len;
		do {
			size_t have;
			z->gz.next_out = z->out;
			z->gz.avail_out = sizeof(z->out);
			r = deflate(&z->gz, finish ? Z_FINISH : Z_NO_FLUSH);
			if (r == Z_STREAM_ERROR)
				return -ptc_err_internal;
			have = sizeof(z->out) - z->gz.avail_out;
			if (have && fwrite(z->out, 1, have, z->f) != have)
				goto io;
		} while (z->gz.avail_out == 0 || (finish && r != Z_STREAM_END));
	} else {
		lzma_ret r;
		z->xz.next_in = z->in;
		z->xz.avail_in = z->in_len;
		do {
			size_t have;
			z->xz.next_out = z->out;
			z->xz.avail_out = sizeof(z->out);
			r = lzma_code(&z->xz, finish ? LZMA_FINISH : LZMA_RUN);
			if (r != LZMA_OK && r != LZMA_STREAM_END)
				return -ptc_err_internal;
			have = sizeof(z->out) - z->xz.avail_out;
			if (have && fwrite(z->out, 1, have, z->f) != have)
				goto io;
		} while (z->xz.avail_out == 0 || (finish && r != LZMA_STREAM_END));
	}
	z->in_len = 0;
	return 0;
io:
	z->err_no = errno;
	return -ptc_err_io;
}

int ptc_zout_write(struct ptc_zout *z, const void *p, size_t n)
{
	const uint8_t *s = p;
	int err;

	while (n) {
		size_t k = sizeof(z->in) - z->in_len;
		if (k > n)
			k = n;
		memcpy(z->in + z->in_len, s, k);
		z->in_len += k;
		s += k;
		n -= k;
		if (z->in_len == sizeof(z->in) && (err = drain(z, 0)) < 0)
			return err;
	}
	return 0;
}

int ptc_zout_printf(struct ptc_zout *z, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -ptc_err_internal;
	return ptc_zout_write(z, line, (size_t)n);
}

int ptc_zout_errno(const struct ptc_zout *z)
{
	return z ? z->err_no : 0;
}

int ptc_zout_close(struct ptc_zout *z)
{
	int err = drain(z, 1);

	if (z->kind == PTC_Z_GZIP)
		deflateEnd(&z->gz);
	else if (z->kind == PTC_Z_XZ)
		lzma_end(&z->xz);
	if (fclose(z->f) != 0 && !err) {
		z->err_no = errno;
		err = -ptc_err_io;
	}
	free(z);
	return err;
}

void ptc_zout_abort(struct ptc_zout *z)
{
	if (!z)
		return;
	if (z->kind == PTC_Z_GZIP)
		deflateEnd(&z->gz);
	else if (z->kind == PTC_Z_XZ)
		lzma_end(&z->xz);
	fclose(z->f);
	free(z);
}
