/* Helpers shared by the writers. */
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/types.h>
#include <zlib.h>

#include "common/error.h"
#include "writers/wutil.h"

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

/* Blocked gzip (ptc_zout_open_mt): the input is cut into GZ_BLOCK-byte
 * blocks, each compressed on its own into one gzip member, so that blocks
 * can be compressed on several threads and the bytes still depend only on
 * the input and the level.  On CBP2025 records 4 MiB blocks cost 0.6% of
 * size at level 6 (1 MiB: 2%), as the 32 KiB window restarts. */
#define GZ_BLOCK (4u << 20)

/* One block of blocked gzip; jobs form a ring, written out in order. */
struct zjob {
	uint8_t *in, *out;
	size_t in_len, out_len, out_cap;
	enum { J_FREE, J_QUEUED, J_RUNNING, J_DONE } state;
	int err;
};

/* A suspended stream (ptc_zout_suspend): what it takes to go on with the
 * same gzip member or xz stream in a new ptc_zout. */
struct ptc_zsusp {
	enum ptc_zkind kind;
	int level;
	int started;			/* the file holds the stream's start */
	int ended;			/* and the whole of it: blocked gzip members,
					   plain bytes */
	uint32_t crc;			/* gzip: CRC-32 of the member's data so far */
	uint64_t total;			/* gzip: its size so far */
	uint64_t *blocks;		/* xz: unpadded and uncompressed size of each
					   block written so far, in pairs */
	size_t nblocks, cap;
};

struct ptc_zout {
	FILE *f;
	enum ptc_zkind kind;
	int level;
	struct ptc_zsusp *sus;		/* a resumed stream (ptc_zout_resume), else NULL */
	int raw;			/* gzip: deflate data only, continuing a member */
	uint32_t crc;			/* raw: CRC-32 of the member's data so far */
	size_t skip;			/* xz: bytes of hdr still to drop (a resumed
					   stream's encoder starts a new stream) */
	uint8_t hdr[LZMA_STREAM_HEADER_SIZE];
	int blocked;			/* gzip members of GZ_BLOCK (threads > 0) */
	int threads;			/* compressing threads of this file (0: classic) */
	z_stream gz;
	lzma_stream xz;
	uint8_t in[1 << 16];
	size_t in_len;
	uint8_t out[1 << 16];
	int err_no;
	uint64_t total_in;		/* bytes given to ptc_zout_write */
	/* Blocked gzip: jobs[fill] is being filled, jobs[head] is the oldest
	 * not yet written; workers take queued jobs from jobs[next_run]. */
	struct zjob *jobs;
	int njobs, fill, head, next_run, stop, gz_ready;
	uint64_t blocks;		/* blocks submitted */
	pthread_t *th;
	int nth;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
};

/* Compressing threads per file at most.  Each holds up to about three xz
 * blocks or four gzip blocks of memory, touched only as data comes (a
 * small file costs little whatever its threads); a file's threads are
 * not shared with other files, whose number and sizes are not known when
 * it is opened. */
#define MAX_THREADS 8

/* The xz block size, from the preset alone so that the bytes never depend
 * on the thread count: eight dictionaries, at most 32 MiB (or one
 * dictionary when larger).  Each block starts with an empty dictionary: on
 * ChampSim records at preset 3 (4 MiB dictionary) 32 MiB blocks make the
 * file 8-10% larger than one stream, liblzma's default of three dictionaries
 * 21%.  Memory: about three blocks per thread (130 MiB at preset 3). */
static uint64_t xz_block_size(uint32_t preset)
{
	lzma_options_lzma o;
	uint64_t b;

	if (lzma_lzma_preset(&o, preset))
		return 32u << 20;
	b = 8ull * o.dict_size;
	if (b > (32u << 20))
		b = o.dict_size > (32u << 20) ? o.dict_size : 32u << 20;
	return b;
}

/* Compress one block into one gzip member with stream s (set up by
 * deflateInit2 for a gzip wrapper). */
static int gz_block(z_stream *s, struct zjob *j)
{
	if (deflateReset(s) != Z_OK)
		return -ptc_err_internal;
	s->next_in = j->in;
	s->avail_in = (uInt)j->in_len;
	s->next_out = j->out;
	s->avail_out = (uInt)j->out_cap;
	if (deflate(s, Z_FINISH) != Z_STREAM_END)
		return -ptc_err_internal;
	j->out_len = j->out_cap - s->avail_out;
	return 0;
}

static void *gz_worker(void *arg)
{
	struct ptc_zout *z = arg;
	z_stream s;
	int ok;

	memset(&s, 0, sizeof(s));
	ok = deflateInit2(&s, z->level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK;
	pthread_mutex_lock(&z->mu);
	for (;;) {
		struct zjob *j = &z->jobs[z->next_run];
		if (j->state != J_QUEUED) {
			if (z->stop)
				break;
			pthread_cond_wait(&z->work, &z->mu);
			continue;
		}
		j->state = J_RUNNING;
		z->next_run = (z->next_run + 1) % z->njobs;
		pthread_mutex_unlock(&z->mu);
		j->err = ok ? gz_block(&s, j) : -ptc_err_nomem;
		pthread_mutex_lock(&z->mu);
		j->state = J_DONE;
		pthread_cond_broadcast(&z->done);
	}
	pthread_mutex_unlock(&z->mu);
	if (ok)
		deflateEnd(&s);
	return NULL;
}

static void gz_stop(struct ptc_zout *z)
{
	int i;

	if (!z->jobs)
		return;
	if (z->nth) {
		pthread_mutex_lock(&z->mu);
		z->stop = 1;
		pthread_cond_broadcast(&z->work);
		pthread_mutex_unlock(&z->mu);
		for (i = 0; i < z->nth; i++)
			pthread_join(z->th[i], NULL);
		pthread_mutex_destroy(&z->mu);
		pthread_cond_destroy(&z->work);
		pthread_cond_destroy(&z->done);
	}
	for (i = 0; i < z->njobs; i++) {
		free(z->jobs[i].in);
		free(z->jobs[i].out);
	}
	free(z->jobs);
	free(z->th);
	z->jobs = NULL;
}

/* Set up blocked gzip: with one thread the blocks are compressed inline,
 * else by threads workers over a ring of twice as many blocks. */
static int gz_start(struct ptc_zout *z)
{
	int i;

	z->njobs = z->threads > 1 ? 2 * z->threads : 1;
	z->jobs = calloc((size_t)z->njobs, sizeof(*z->jobs));
	if (!z->jobs)
		return -ptc_err_nomem;
	for (i = 0; i < z->njobs; i++) {
		struct zjob *j = &z->jobs[i];
		j->out_cap = deflateBound(&z->gz, GZ_BLOCK);
		j->in = malloc(GZ_BLOCK);
		j->out = malloc(j->out_cap);
		if (!j->in || !j->out)
			goto nomem;
	}
	if (z->threads > 1) {
		z->th = calloc((size_t)z->threads, sizeof(*z->th));
		if (!z->th)
			goto nomem;
		pthread_mutex_init(&z->mu, NULL);
		pthread_cond_init(&z->work, NULL);
		pthread_cond_init(&z->done, NULL);
		for (i = 0; i < z->threads; i++) {
			if (pthread_create(&z->th[i], NULL, gz_worker, z) != 0)
				break;
			z->nth++;
		}
		if (!z->nth) {
			/* No thread at all: compress inline (same bytes). */
			pthread_mutex_destroy(&z->mu);
			pthread_cond_destroy(&z->work);
			pthread_cond_destroy(&z->done);
		}
	}
	return 0;
nomem:
	gz_stop(z);
	return -ptc_err_nomem;
}

/* Whether a suspension keeps z's stream going (ptc_zout_suspend): one
 * gzip member written on one thread, or an xz stream.  Blocked gzip is
 * a sequence of members anyway: a suspension ends one. */
static int continues(enum ptc_zkind kind, int blocked)
{
	return kind == PTC_Z_XZ || (kind == PTC_Z_GZIP && !blocked);
}

/* Open path for writing (append: at its end; the file must exist), the
 * stream going on from sus when sus has started one. */
static int zopen(struct ptc_zout **zp, const char *path, enum ptc_zkind kind, int level,
		 int threads, int append, struct ptc_zsusp *sus)
{
	struct ptc_zout *z = calloc(1, sizeof(*z));
	int more;

	*zp = NULL;
	if (!z)
		return -ptc_err_nomem;
	z->kind = kind;
	if (append) {
		/* Appending continues a file this process wrote (a suspended
		 * output): if it is gone, that is an error, not a new file
		 * holding only the rest.  Read too: a resumed xz stream reads
		 * back the index of what it wrote. */
		int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
		z->f = fd < 0 ? NULL : fdopen(fd, "ab+");
		if (!z->f && fd >= 0) {
			int e = errno;
			close(fd);
			errno = e;
		}
	} else {
		z->f = fopen(path, "wb+");
	}
	if (!z->f) {
		free(z);
		return -ptc_err_io;
	}
	if (threads > 0 && kind != PTC_Z_NONE)
		z->threads = threads < MAX_THREADS ? threads : MAX_THREADS;
	more = sus && sus->started && continues(kind, threads > 0);
	if (kind == PTC_Z_GZIP) {
		z->level = level ? level : 6;
		/* windowBits 15 + 16: a gzip wrapper; -15: deflate data alone,
		 * after the member's data so far (one block ended at a byte
		 * boundary: a new deflate stream goes on from there, with an
		 * empty window). */
		if (deflateInit2(&z->gz, z->level, Z_DEFLATED, more ? -15 : 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			goto bad;
		z->gz_ready = 1;
		z->raw = more;
		if (more)
			z->crc = sus->crc;
		if (threads > 0) {
			z->blocked = 1;
			if (gz_start(z) < 0)
				goto bad;
		}
	} else if (kind == PTC_Z_XZ) {
		lzma_stream init = LZMA_STREAM_INIT;
		lzma_stream_flags fl = { .version = 0, .check = LZMA_CHECK_CRC64 };
		uint32_t preset = level < 0 ? 0 : level ? (uint32_t)level : 6;
		z->xz = init;
		if (threads > 0) {
			lzma_mt mt;
			memset(&mt, 0, sizeof(mt));
			mt.threads = (uint32_t)z->threads;
			mt.block_size = xz_block_size(preset);
			mt.preset = preset;
			mt.check = fl.check;
			if (lzma_stream_encoder_mt(&z->xz, &mt) != LZMA_OK)
				goto bad;
		} else if (lzma_easy_encoder(&z->xz, preset, fl.check) != LZMA_OK) {
			goto bad;
		}
		/* The encoder writes a whole stream: a resumed one drops its
		 * header (the file has it) and, at its end, its index. */
		if (more) {
			if (lzma_stream_header_encode(&fl, z->hdr) != LZMA_OK) {
				lzma_end(&z->xz);
				goto bad;
			}
			z->skip = sizeof(z->hdr);
		}
	}
	z->sus = sus;
	*zp = z;
	return 0;
bad:
	if (z->gz_ready)
		deflateEnd(&z->gz);
	fclose(z->f);
	free(z);
	errno = ENOMEM;	/* (the encoders' setup fails for want of memory) */
	return -ptc_err_nomem;
}

int ptc_zout_open(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level)
{
	return zopen(z, path, kind, level, 0, 0, NULL);
}

int ptc_zout_open_mt(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level,
		     int threads)
{
	return zopen(z, path, kind, level, threads < 1 ? 1 : threads, 0, NULL);
}

int ptc_zout_append(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level)
{
	return zopen(z, path, kind, level, 0, 1, NULL);
}

uint64_t ptc_zout_size_in(const struct ptc_zout *z)
{
	return z ? z->total_in : 0;
}

/* The encoder ran out of memory (xz's needs tens of MB): its error says
 * so, not a write's (ptc_zout_errno). */
static int mem_fail(struct ptc_zout *z)
{
	z->err_no = ENOMEM;
	return -ptc_err_nomem;
}

static int write_out(struct ptc_zout *z, const void *p, size_t n)
{
	if (z->skip && n) {
		/* a resumed xz stream's header, the one the file starts with */
		size_t k = n < z->skip ? n : z->skip;
		if (memcmp(p, z->hdr + sizeof(z->hdr) - z->skip, k))
			return -ptc_err_internal;
		z->skip -= k;
		p = (const uint8_t *)p + k;
		n -= k;
	}
	if (n && fwrite(p, 1, n, z->f) != n) {
		z->err_no = errno;
		return -ptc_err_io;
	}
	return 0;
}

/* Blocked gzip: wait for the oldest block, write it and free its slot. */
static int gz_retire(struct ptc_zout *z)
{
	struct zjob *j = &z->jobs[z->head];
	int err;

	if (z->nth) {
		pthread_mutex_lock(&z->mu);
		while (j->state != J_DONE)
			pthread_cond_wait(&z->done, &z->mu);
		pthread_mutex_unlock(&z->mu);
	}
	err = j->err == -ptc_err_nomem ? mem_fail(z) : j->err;
	if (!err)
		err = write_out(z, j->out, j->out_len);
	j->state = J_FREE;
	j->in_len = 0;
	z->head = (z->head + 1) % z->njobs;
	return err;
}

/* Blocked gzip: hand the filled block to the compressors and make the
 * next slot free for filling. */
static int gz_submit(struct ptc_zout *z)
{
	struct zjob *j = &z->jobs[z->fill];
	int err;

	if (!z->nth) {
		j->state = J_DONE;
		j->err = gz_block(&z->gz, j);
	} else {
		pthread_mutex_lock(&z->mu);
		j->state = J_QUEUED;
		pthread_cond_signal(&z->work);
		pthread_mutex_unlock(&z->mu);
	}
	z->blocks++;
	z->fill = (z->fill + 1) % z->njobs;
	if (z->jobs[z->fill].state != J_FREE && (err = gz_retire(z)) < 0)
		return err;
	return 0;
}

/* How drain ends: not at all, the stream (finish), or, for a gzip
 * member a suspension keeps going, the deflate data so far at a byte
 * boundary (a new deflater goes on from there). */
enum { D_RUN, D_FINISH, D_SYNC };

static int drain(struct ptc_zout *z, int how)
{
	int finish = how == D_FINISH, err;

	if (z->blocked) {
		/* ptc_zout_write fills the blocks directly: z->in stays empty. */
		if (finish) {
			/* The last, partial block (an empty file: one empty member). */
			if ((z->jobs[z->fill].in_len || !z->blocks) && (err = gz_submit(z)) < 0)
				return err;
			while (z->jobs[z->head].state != J_FREE)
				if ((err = gz_retire(z)) < 0)
					return err;
		}
		return 0;
	}
	if (z->kind == PTC_Z_NONE) {
		if ((err = write_out(z, z->in, z->in_len)) < 0)
			return err;
		z->in_len = 0;
		return 0;
	}
	if (z->kind == PTC_Z_GZIP) {
		int r, flush = finish ? Z_FINISH : how == D_SYNC ? Z_SYNC_FLUSH : Z_NO_FLUSH;
		if (z->raw)
			z->crc = (uint32_t)crc32(z->crc, z->in, (uInt)z->in_len);
		z->gz.next_in = z->in;
		z->gz.avail_in = (uInt)z->in_len;
		do {
			z->gz.next_out = z->out;
			z->gz.avail_out = sizeof(z->out);
			r = deflate(&z->gz, flush);
			if (r == Z_STREAM_ERROR)
				return -ptc_err_internal;
			if ((err = write_out(z, z->out, sizeof(z->out) - z->gz.avail_out)) < 0)
				return err;
		} while (z->gz.avail_out == 0 || (finish && r != Z_STREAM_END));
	} else {
		lzma_ret r;
		z->xz.next_in = z->in;
		z->xz.avail_in = z->in_len;
		do {
			z->xz.next_out = z->out;
			z->xz.avail_out = sizeof(z->out);
			r = lzma_code(&z->xz, finish ? LZMA_FINISH : LZMA_RUN);
			if (r == LZMA_MEM_ERROR)
				return mem_fail(z);
			if (r != LZMA_OK && r != LZMA_STREAM_END)
				return -ptc_err_internal;
			if ((err = write_out(z, z->out, sizeof(z->out) - z->xz.avail_out)) < 0)
				return err;
		} while (z->xz.avail_out == 0 || z->xz.avail_in || (finish && r != LZMA_STREAM_END));
	}
	z->in_len = 0;
	return 0;
}

int ptc_zout_write(struct ptc_zout *z, const void *p, size_t n)
{
	const uint8_t *s = p;
	int err;

	z->total_in += n;
	while (n) {
		/* Blocked gzip fills its blocks directly, else z->in. */
		uint8_t *buf = z->blocked ? z->jobs[z->fill].in : z->in;
		size_t *len = z->blocked ? &z->jobs[z->fill].in_len : &z->in_len;
		size_t cap = z->blocked ? GZ_BLOCK : sizeof(z->in), k = cap - *len;
		if (k > n)
			k = n;
		memcpy(buf + *len, s, k);
		*len += k;
		s += k;
		n -= k;
		if (*len == cap && (err = z->blocked ? gz_submit(z) : drain(z, D_RUN)) < 0)
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

static void zfree(struct ptc_zout *z)
{
	gz_stop(z);
	if (z->kind == PTC_Z_GZIP)
		deflateEnd(&z->gz);
	else if (z->kind == PTC_Z_XZ)
		lzma_end(&z->xz);
}

int ptc_zsusp_ended(const struct ptc_zsusp *s)
{
	return s && s->ended;
}

void ptc_zsusp_free(struct ptc_zsusp *s)
{
	if (s)
		free(s->blocks);
	free(s);
}

/* Whether z goes on with a stream that earlier ptc_zouts started. */
static int resumed(const struct ptc_zout *z)
{
	return z->sus && z->sus->started && continues(z->kind, z->blocked);
}

static int io_fail(struct ptc_zout *z)
{
	z->err_no = errno;
	return -ptc_err_io;
}

/* z's encoder has just ended an xz stream at the end of its file (all of
 * it but, resumed, its header): add the sizes of its blocks, from its
 * index, to z->sus, and cut the index and the stream footer off the file,
 * which then ends with the last block. */
static int xz_take_index(struct ptc_zout *z)
{
	uint8_t foot[LZMA_STREAM_HEADER_SIZE], *buf;
	struct ptc_zsusp *s = z->sus;
	lzma_stream_flags fl;
	lzma_index *idx = NULL;
	lzma_index_iter it;
	uint64_t lim = UINT64_MAX;
	size_t pos = 0;
	off_t end, at;
	int fd = fileno(z->f), err = 0;

	if (fflush(z->f) || (end = lseek(fd, 0, SEEK_END)) < 0)
		return io_fail(z);
	if (end < (off_t)sizeof(foot) || pread(fd, foot, sizeof(foot), end - (off_t)sizeof(foot)) != (ssize_t)sizeof(foot) ||
	    lzma_stream_footer_decode(&fl, foot) != LZMA_OK || fl.backward_size > (uint64_t)end - sizeof(foot))
		return -ptc_err_internal;
	at = end - (off_t)sizeof(foot) - (off_t)fl.backward_size;
	if (!(buf = malloc(fl.backward_size)))
		return -ptc_err_nomem;
	if (pread(fd, buf, fl.backward_size, at) != (ssize_t)fl.backward_size ||
	    lzma_index_buffer_decode(&idx, &lim, NULL, buf, &pos, fl.backward_size) != LZMA_OK) {
		free(buf);
		return -ptc_err_internal;
	}
	free(buf);
	lzma_index_iter_init(&it, idx);
	while (!err && !lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK)) {
		if (s->nblocks == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 16;
			uint64_t *b = realloc(s->blocks, cap * 2 * sizeof(*b));
			if (!b) {
				err = -ptc_err_nomem;
				break;
			}
			s->blocks = b;
			s->cap = cap;
		}
		s->blocks[2 * s->nblocks] = it.block.unpadded_size;
		s->blocks[2 * s->nblocks + 1] = it.block.uncompressed_size;
		s->nblocks++;
	}
	lzma_index_end(idx, NULL);
	if (!err && (ftruncate(fd, at) || fseeko(z->f, 0, SEEK_END)))
		err = io_fail(z);
	return err;
}

/* The end of a resumed stream, after its data: an xz stream's index of
 * every block it has and its footer, a gzip member's trailer. */
static int resumed_end(struct ptc_zout *z)
{
	struct ptc_zsusp *s = z->sus;
	lzma_stream_flags fl = { .version = 0, .check = LZMA_CHECK_CRC64 };
	lzma_index *idx;
	uint8_t *buf;
	size_t i, n, pos = 0;
	int err;

	if (z->kind == PTC_Z_GZIP) {
		uint8_t t[8];
		uint32_t len = (uint32_t)(s->total + z->total_in);	/* ISIZE: modulo 2^32 */
		for (i = 0; i < 4; i++) {
			t[i] = (uint8_t)(z->crc >> (8 * i));
			t[4 + i] = (uint8_t)(len >> (8 * i));
		}
		return write_out(z, t, sizeof(t));
	}
	if ((err = xz_take_index(z)) < 0)
		return err;
	if (!(idx = lzma_index_init(NULL)))
		return -ptc_err_nomem;
	for (i = 0; i < s->nblocks; i++)
		if (lzma_index_append(idx, NULL, s->blocks[2 * i], s->blocks[2 * i + 1]) != LZMA_OK) {
			lzma_index_end(idx, NULL);
			return -ptc_err_internal;
		}
	n = (size_t)lzma_index_size(idx);
	fl.backward_size = n;
	buf = malloc(n + LZMA_STREAM_HEADER_SIZE);
	if (!buf)
		err = -ptc_err_nomem;
	else if (lzma_index_buffer_encode(idx, buf, &pos, n) != LZMA_OK ||
		 lzma_stream_footer_encode(&fl, buf + n) != LZMA_OK)
		err = -ptc_err_internal;
	else
		err = write_out(z, buf, n + LZMA_STREAM_HEADER_SIZE);
	free(buf);
	lzma_index_end(idx, NULL);
	return err;
}

/* Free z after its stream ended or was given up; err is the result so far. */
static int zdone(struct ptc_zout *z, int err)
{
	int err_no;

	zfree(z);
	if (fclose(z->f) != 0 && !err)
		err = io_fail(z);
	ptc_zsusp_free(z->sus);
	err_no = z->err_no;
	free(z);
	if ((err == -ptc_err_io || err == -ptc_err_nomem) && err_no)
		errno = err_no;	/* the reason, for the caller's message */
	return err;
}

int ptc_zout_close(struct ptc_zout *z)
{
	int err = drain(z, D_FINISH);

	if (!err && resumed(z))
		err = resumed_end(z);
	return zdone(z, err);
}

void ptc_zout_abort(struct ptc_zout *z)
{
	if (z)
		zdone(z, -ptc_err_io);
}

int ptc_zout_suspend(struct ptc_zout **zp, struct ptc_zsusp **sp)
{
	struct ptc_zout *z = *zp;
	struct ptc_zsusp *s;
	int err = 0;

	if (!z)
		return 0;
	*zp = NULL;
	s = z->sus;
	z->sus = NULL;
	if (!s && !(s = calloc(1, sizeof(*s)))) {
		ptc_zout_abort(z);
		return -ptc_err_nomem;
	}
	*sp = s;
	if (!z->total_in) {
		/* Nothing of this ptc_zout reached the file (gzip and xz write
		 * their headers with the first data): the file is as before. */
		ptc_zout_abort(z);
		return 0;
	}
	if (!continues(z->kind, z->blocked)) {
		/* complete members, or plain bytes: the next ones follow */
		s->started = s->ended = 1;
		return ptc_zout_close(z);
	}
	if (z->kind == PTC_Z_GZIP) {
		/* The deflate data so far, ending at a byte boundary (an empty
		 * stored block); the member's CRC and size go on in s. */
		err = drain(z, D_SYNC);
		s->crc = z->raw ? z->crc : (uint32_t)z->gz.adler;
		s->total += z->total_in;
	} else {
		/* The stream with its blocks, less its index and footer. */
		z->sus = s;
		if (!(err = drain(z, D_FINISH)))
			err = xz_take_index(z);
		z->sus = NULL;
	}
	s->started = 1;
	return zdone(z, err);
}

int ptc_zout_resume(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level, int threads,
		    struct ptc_zsusp **s)
{
	int err = zopen(z, path, kind, level, threads, 1, *s);

	if (!err)
		*s = NULL;	/* *z has it */
	return err;
}
