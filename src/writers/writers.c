/* The writer registry: -f names to formats, and a fan-out sink. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zstd.h>

#include "writers/fmt.h"
#include "writers/insn.h"

static const struct ptc_fmt_ops *const all_ops[] = {
	&ptc_fmt_ptconv, &ptc_fmt_bt9, &ptc_fmt_champsim, &ptc_fmt_cbp2025,
	&ptc_fmt_xtrace, &ptc_fmt_bbv, &ptc_fmt_xray, &ptc_fmt_perfetto,
};
#define NOPS (sizeof(all_ops) / sizeof(all_ops[0]))
/* Compression contexts kept for the next writers: one would be enough if
 * writers finished in turn; a few more cover writers of several decoding
 * threads finishing together. */
#define POOL_ZC_MAX 8

static const struct ptc_writer_format *const all_formats[] = {
	&ptc_fmt_ptconv.fmt, &ptc_fmt_bt9.fmt, &ptc_fmt_champsim.fmt,
	&ptc_fmt_cbp2025.fmt, &ptc_fmt_xtrace.fmt, &ptc_fmt_bbv.fmt, &ptc_fmt_xray.fmt,
	&ptc_fmt_perfetto.fmt, NULL,
};

const struct ptc_writer_format *const *ptc_writer_formats(void)
{
	return all_formats;
}

static const struct ptc_fmt_ops *find_ops(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NOPS; i++)
		if (strlen(all_ops[i]->fmt.name) == len &&
		    !strncmp(all_ops[i]->fmt.name, name, len))
			return all_ops[i];
	return NULL;
}

/* The decimal number p[0..len) into *v: 0, or -1 when it is none or
 * above max. */
static int parse_count(const char *p, size_t len, uint64_t max, uint64_t *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9' || *v > (max - (uint64_t)(p[i] - '0')) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(p[i] - '0');
	}
	return len ? 0 : -1;
}

/* One -f entry, NAME[:OPTION]...: the format and its options applied to
 * cfg (ptconv-formats(5)).  Options: a number, the compression level
 * (ptconv: zstd 1-22 of the chunks; bt9, cbp2025 and champsim with gz:
 * gzip 1-9; champsim: xz preset 0-9), for champsim gz or xz, for cbp2025
 * slots, for xray threads, for perfetto min-dur=N and max-depth=N.  NULL
 * when the name or an option is not valid. */
static const struct ptc_fmt_ops *parse_entry(const char *p, size_t len, struct ptc_writer_config *cfg)
{
	size_t nl = strcspn(p, ":");
	const struct ptc_fmt_ops *o;
	int level = -1;

	if (nl > len)
		nl = len;
	o = find_ops(p, nl);
	if (!o)
		return NULL;
	p += nl;
	len -= nl;
	while (len) {
		size_t ol;
		p++;
		len--;
		ol = strcspn(p, ":");
		if (ol > len)
			ol = len;
		if (o == &ptc_fmt_champsim && ol == 2 && !strncmp(p, "gz", 2)) {
			cfg->champsim_gz = 1;
		} else if (o == &ptc_fmt_champsim && ol == 2 && !strncmp(p, "xz", 2)) {
			cfg->champsim_gz = 0;
		} else if (o == &ptc_fmt_cbp2025 && ol == 5 && !strncmp(p, "slots", 5)) {
			cfg->cbp2025_slots = 1;
		} else if (o == &ptc_fmt_xray && ol == 7 && !strncmp(p, "threads", 7)) {
			cfg->xray_threads = 1;
		} else if (o == &ptc_fmt_perfetto && ol > 8 && !strncmp(p, "min-dur=", 8)) {
			if (parse_count(p + 8, ol - 8, UINT64_MAX, &cfg->perfetto_min_dur) < 0)
				return NULL;
		} else if (o == &ptc_fmt_perfetto && ol > 10 && !strncmp(p, "max-depth=", 10)) {
			uint64_t v;
			if (parse_count(p + 10, ol - 10, UINT32_MAX, &v) < 0 || !v)
				return NULL;
			cfg->perfetto_max_depth = (uint32_t)v;
		} else if (ol >= 1 && ol <= 2 && p[0] >= '0' && p[0] <= '9' &&
			   (ol == 1 || (p[1] >= '0' && p[1] <= '9'))) {
			level = ol == 1 ? p[0] - '0' : (p[0] - '0') * 10 + p[1] - '0';
		} else {
			return NULL;
		}
		p += ol;
		len -= ol;
	}
	if (level >= 0) {
		int lo = 1, hi = 9;
		if (o == &ptc_fmt_ptconv)
			hi = 22;
		else if (o == &ptc_fmt_champsim && !cfg->champsim_gz)
			lo = 0;
		else if (o != &ptc_fmt_bt9 && o != &ptc_fmt_cbp2025 && o != &ptc_fmt_champsim)
			return NULL;	/* xtrace and bbv are not compressed */
		if (level < lo || level > hi)
			return NULL;
		/* xz preset 0 is a valid choice: keep it apart from "default" */
		cfg->level = level ? level : -1;
	}
	return o;
}

const struct ptc_writer_format *ptc_writer_find(const char *name)
{
	struct ptc_writer_config cfg = { 0 };
	const struct ptc_fmt_ops *o = parse_entry(name, strlen(name), &cfg);

	return o ? &o->fmt : NULL;
}

int ptc_writer_per_process(const char *name)
{
	struct ptc_writer_config cfg = { 0 };

	const struct ptc_fmt_ops *o = parse_entry(name, strlen(name), &cfg);

	return o == &ptc_fmt_xray || o == &ptc_fmt_perfetto;
}

int ptc_writer_check_list(const char *formats, char *bad, size_t size)
{
	const char *p = formats;

	while (*p) {
		size_t len = strcspn(p, ",");
		struct ptc_writer_config cfg = { 0 };
		if (len && !parse_entry(p, len, &cfg)) {
			if (size) {
				size_t n = len < size - 1 ? len : size - 1;
				memcpy(bad, p, n);
				bad[n] = 0;
			}
			return -ptc_err_not_found;
		}
		p += len;
		if (*p)
			p++;
	}
	return 0;
}

int ptc_wfail(struct ptc_wctx *c, int code, const char *fmt, ...)
{
	va_list ap;

	/* the first failure is the one to tell: later ones follow from it
	 * (an event for a format whose file could not be opened) */
	if (!c->err[0]) {
		va_start(ap, fmt);
		vsnprintf(c->err, sizeof(c->err), fmt, ap);
		va_end(ap);
	}
	return -code;
}

void ptc_wwarn(struct ptc_wctx *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;
	char *nw;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	line[n] = 0;
	/* Bounded: a stream with millions of problems keeps the first ones. */
	if (c->warn_len > 64 * 1024)
		return;
	nw = realloc(c->warn, c->warn_len + n + 1);
	if (!nw)
		return;
	c->warn = nw;
	memcpy(c->warn + c->warn_len, line, n + 1);
	c->warn_len += n;
}

int ptc_wpath(char *buf, size_t size, const struct ptc_writer_config *cfg,
	      const struct ptc_thread_info *t, const char *suffix)
{
	int n;

	/* Per-CPU streams (--per-cpu) are named after the CPU. */
	if (t && t->cpu >= 0)
		n = snprintf(buf, size, "%s/%s.cpu%d.%s", cfg->outdir ? cfg->outdir : ".",
			     cfg->prefix ? cfg->prefix : "trace", t->cpu, suffix);
	else
		n = snprintf(buf, size, "%s/%s.%u.%s", cfg->outdir ? cfg->outdir : ".",
			     cfg->prefix ? cfg->prefix : "trace", t ? t->tid : 0, suffix);

	return n < 0 || (size_t)n >= size ? -ptc_err_invalid : 0;
}

void ptc_wparts_init(struct ptc_wparts *p, const struct ptc_writer_config *cfg,
		     const struct ptc_thread_info *t, struct ptc_wctx *c, const char *ext)
{
	memset(p, 0, sizeof(*p));
	p->c = c;
	p->cfg = cfg;
	if (t)
		p->thread = *t;
	else
		p->thread.cpu = -1;
	p->thread.comm = NULL;	/* not needed, and only valid during begin() */
	p->ext = ext;
}

/* Open (or, resuming a suspended part, go on with) the part's stream. */
static int wparts_zopen(struct ptc_wparts *p, int resume)
{
	int err, threads = 0;

	if (p->threads)
		threads = p->granted = ptc_writer_pool_get_threads(p->cfg->pool, p->threads);
	if (resume)
		err = ptc_zout_resume(&p->z, p->tmp, p->zkind, p->level, threads, &p->sus);
	else
		err = threads ? ptc_zout_open_mt(&p->z, p->tmp, p->zkind, p->level, threads) :
				ptc_zout_open(&p->z, p->tmp, p->zkind, p->level);
	if (err < 0) {
		ptc_writer_pool_put_threads(p->cfg->pool, p->granted);
		p->granted = 0;
		return ptc_wfail_z(p->c, p->tmp, err, errno, "open");
	}
	return 0;
}

/* Give back the stream's compression threads. */
static void wparts_zdone(struct ptc_wparts *p)
{
	p->z = NULL;
	ptc_writer_pool_put_threads(p->cfg->pool, p->granted);
	p->granted = 0;
}

int ptc_wparts_open(struct ptc_wparts *p)
{
	char suffix[64];
	int err;

	if (p->part)
		snprintf(suffix, sizeof(suffix), "part%u.%s", p->part, p->ext);
	else
		snprintf(suffix, sizeof(suffix), "%s", p->ext);
	if (ptc_wpath(p->path, sizeof(p->path), p->cfg, &p->thread, suffix) < 0 ||
	    ptc_out_tmpname(p->tmp, sizeof(p->tmp), p->path) < 0)
		return ptc_wfail(p->c, ptc_err_invalid, "%s: output path too long", p->ext);
	if (p->open) {
		if ((err = p->open(p->st)) < 0)
			return err;
	} else if ((err = wparts_zopen(p, 0)) < 0) {
		return err;
	}
	p->is_open = 1;
	p->has_records = 0;
	return 0;
}

int ptc_wparts_write(struct ptc_wparts *p, const void *buf, size_t n)
{
	int err;

	/* Suspended: the stream goes on in its file. */
	if (!p->z && (err = wparts_zopen(p, 1)) < 0)
		return err;
	if ((err = ptc_zout_write(p->z, buf, n)) < 0)
		return ptc_wfail_z(p->c, p->path, err, ptc_zout_errno(p->z), "write");
	return 0;
}

int ptc_wparts_suspend(struct ptc_wparts *p)
{
	int err = 0;

	if (!p->is_open || p->open || !p->z)
		return 0;
	if ((err = ptc_zout_suspend(&p->z, &p->sus)) < 0)
		err = ptc_wfail_z(p->c, p->path, err, errno, "write");
	wparts_zdone(p);
	return err;
}

int ptc_wparts_close(struct ptc_wparts *p)
{
	int err;

	if (!p->is_open)
		return 0;
	p->is_open = 0;
	if (p->open) {
		/* (the format wrote p->tmp) */
		if ((err = p->close(p->st)) < 0)
			return err;
		return ptc_out_commit(p->path) < 0 ? ptc_wfail_commit(p->c, p->path) : 0;
	}
	/* Suspended: its stream ends in its file (an xz stream's index, a
	 * gzip member's trailer; an empty stream if it never had a byte),
	 * unless the file holds complete members already. */
	if (!p->z && ptc_zsusp_ended(p->sus)) {
		ptc_zsusp_free(p->sus);
		p->sus = NULL;
		return ptc_out_commit(p->path) < 0 ? ptc_wfail_commit(p->c, p->path) : 0;
	}
	if (!p->z && (err = wparts_zopen(p, 1)) < 0)
		return err;
	err = ptc_zout_close(p->z);
	wparts_zdone(p);
	if (err < 0)
		return ptc_wfail_z(p->c, p->path, err, errno, "write");
	return ptc_out_commit(p->path) < 0 ? ptc_wfail_commit(p->c, p->path) : 0;
}

int ptc_wparts_gap(struct ptc_wparts *p, const struct ptc_gap *g)
{
	int err;

	if (g->cause == PTC_GAP_START)
		return 0;
	p->losses++;
	if (!p->is_open || !p->has_records)
		return 0;
	err = ptc_wparts_close(p);
	p->part++;
	return err;
}

void ptc_wparts_free(struct ptc_wparts *p)
{
	ptc_zout_abort(p->z);
	ptc_zsusp_free(p->sus);
	p->sus = NULL;
	if (p->cfg)
		wparts_zdone(p);
	p->z = NULL;
	p->is_open = 0;
}

int ptc_wfail_z(struct ptc_wctx *c, const char *path, int err, int err_no, const char *what)
{
	/* xz needs tens of MB: its running out is no full disk.  Still the
	 * output's failure (ptc_err_io, exit 4), not the decoding's. */
	if (err == -ptc_err_nomem || err_no == ENOMEM)
		return ptc_wfail(c, ptc_err_io, "%s: compressing ran out of memory (%s)", path,
				 strerror(ENOMEM));
	return ptc_wfail(c, ptc_err_io, "%s: %s: %s", path, what, strerror(err_no));
}

int ptc_wfail_commit(struct ptc_wctx *c, const char *path)
{
	return ptc_wfail(c, ptc_err_io, "%s: cannot give the complete file its name: %s", path,
			 strerror(errno));
}

/* Open (append) the temporary of output file path. */
static int wfile_zopen(struct ptc_wctx *c, struct ptc_zout **z, const char *path, int append)
{
	char tmp[4096];

	if (ptc_out_tmpname(tmp, sizeof(tmp), path) < 0)
		return ptc_wfail(c, ptc_err_invalid, "%s: path too long", path);
	if ((append ? ptc_zout_append(z, tmp, PTC_Z_NONE, 0) : ptc_zout_open(z, tmp, PTC_Z_NONE, 0)) < 0)
		return ptc_wfail(c, ptc_err_io, "%s: %s", tmp, strerror(errno));
	return 0;
}

int ptc_wfile_open(struct ptc_wctx *c, struct ptc_zout **z, const char *path)
{
	return wfile_zopen(c, z, path, 0);
}

int ptc_wfile_resume(struct ptc_wctx *c, struct ptc_zout **z, const char *path)
{
	return *z ? 0 : wfile_zopen(c, z, path, 1);
}

int ptc_wfile_close(struct ptc_wctx *c, struct ptc_zout **z, const char *path)
{
	int err = *z ? ptc_zout_close(*z) : 0;

	*z = NULL;
	return err < 0 ? ptc_wfail_z(c, path, err, errno, "write") : 0;
}

int ptc_wfile_finish(struct ptc_wctx *c, struct ptc_zout **z, const char *path)
{
	int err = ptc_wfile_close(c, z, path);

	if (err == 0 && ptc_out_commit(path) < 0)
		err = ptc_wfail_commit(c, path);
	return err;
}

/* ---- the pool of open writers ---- */

struct ptc_writer_pool {
	pthread_mutex_t mu;
	pthread_cond_t idle;		/* a writer's suspension ended */
	unsigned max_open, nopen;
	struct ptc_writer *lru, *mru;	/* the open writers, least recent first */
	int jobs, threads_used;		/* compression threads: budget, given out */
	uint64_t suspensions;
	/* Compression contexts that writers gave back, for the next ones: a
	 * ZSTD context's workspace (about 0.7 MB at ptconv's level) is memory
	 * the kernel must map and clear again for every new writer
	 * otherwise, and a recording of many short processes has one each
	 * (a shell script's 41 processes made 82 contexts, 58 MB). */
	struct ZSTD_CCtx_s *zc[POOL_ZC_MAX];
	unsigned nzc;
};

struct ptc_writer {
	struct ptc_writer_config cfg;
	struct ptc_writer_config fcfg[NOPS];	/* each format's, with its -f options */
	struct ptc_wctx ctx;
	const struct ptc_fmt_ops *ops[NOPS];
	void *st[NOPS];
	size_t n;
	int begun, ended;
	/* In cfg.pool's list of open writers (listed), last used by owner. */
	struct ptc_writer *prev, *next;
	int listed;
	pthread_t owner;
	int suspending;			/* being suspended, outside the pool's lock */
	int suspend_err;		/* a failed suspension, reported on the next event */
};

int ptc_writer_pool_new(struct ptc_writer_pool **pool, unsigned max_open, int jobs)
{
	struct ptc_writer_pool *p = calloc(1, sizeof(*p));
	int ok;

	*pool = NULL;
	if (!p)
		return -ptc_err_nomem;
	/* Not recursive: nothing is called with the lock held (a suspension,
	 * which gives compression threads back, runs after it is released),
	 * and idle is waited on with it. */
	ok = pthread_mutex_init(&p->mu, NULL) == 0;
	if (ok && pthread_cond_init(&p->idle, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		ok = 0;
	}
	if (!ok) {
		free(p);
		return -ptc_err_nomem;
	}
	p->max_open = max_open ? max_open : 1;
	p->jobs = jobs > 0 ? jobs : 1;
	*pool = p;
	return 0;
}

void ptc_writer_pool_free(struct ptc_writer_pool *p)
{
	if (!p)
		return;
	while (p->nzc)
		ZSTD_freeCCtx(p->zc[--p->nzc]);
	pthread_cond_destroy(&p->idle);
	pthread_mutex_destroy(&p->mu);
	free(p);
	/* The conversion is over: the calling thread's decoding cache too
	 * (the workers' went when they exited). */
	ptc_insn_cache_release();
}

struct ZSTD_CCtx_s *ptc_writer_pool_take_zc(struct ptc_writer_pool *p)
{
	struct ZSTD_CCtx_s *z = NULL;

	if (p) {
		pthread_mutex_lock(&p->mu);
		if (p->nzc)
			z = p->zc[--p->nzc];
		pthread_mutex_unlock(&p->mu);
	}
	return z ? z : ZSTD_createCCtx();
}

void ptc_writer_pool_give_zc(struct ptc_writer_pool *p, struct ZSTD_CCtx_s *z)
{
	if (!z)
		return;
	if (p) {
		pthread_mutex_lock(&p->mu);
		if (p->nzc < POOL_ZC_MAX) {
			p->zc[p->nzc++] = z;
			z = NULL;
		}
		pthread_mutex_unlock(&p->mu);
	}
	ZSTD_freeCCtx(z);
}

uint64_t ptc_writer_pool_suspensions(const struct ptc_writer_pool *p)
{
	return p ? p->suspensions : 0;
}

int ptc_writer_pool_get_threads(struct ptc_writer_pool *p, int want)
{
	int n;

	if (!p)
		return want;
	pthread_mutex_lock(&p->mu);
	n = p->jobs - p->threads_used;
	if (n > want)
		n = want;
	if (n < 1)
		n = 1;
	p->threads_used += n;
	pthread_mutex_unlock(&p->mu);
	return n;
}

void ptc_writer_pool_put_threads(struct ptc_writer_pool *p, int n)
{
	if (!p || !n)
		return;
	pthread_mutex_lock(&p->mu);
	p->threads_used -= n;
	pthread_mutex_unlock(&p->mu);
}

unsigned ptc_writer_pool_default(const char *formats)
{
	struct ptc_writer_config cfg = { 0 };
	const char *p = formats ? formats : "ptconv";
	uint64_t per = 0, mem, n;
	unsigned files = 1;
	struct rlimit rl;

	/* What one open writer may hold at worst, per format: an xz stream
	 * of 32 MiB blocks (block in, block out, encoder), blocked gzip
	 * (4 MiB in and out), else buffers.  Not the compression threads
	 * (the pool shares them), so that the limit, and with it the bytes,
	 * are the same for every -j. */
	while (*p) {
		size_t len = strcspn(p, ",");
		const struct ptc_fmt_ops *o = len ? parse_entry(p, len, &cfg) : NULL;
		if (o == &ptc_fmt_champsim && !cfg.champsim_gz)
			per += 100u << 20;
		else if (o == &ptc_fmt_champsim || o == &ptc_fmt_cbp2025 || o == &ptc_fmt_bt9)
			per += 10u << 20;
		else if (o)
			per += 1u << 20;
		if (o)
			files += o == &ptc_fmt_xtrace ? 2 : 1;
		p += len;
		if (*p)
			p++;
	}
	/* A fixed budget rather than the machine's memory: the limit decides
	 * where streams restart, so the same recording must give the same
	 * bytes on every machine. */
	mem = 4ull << 30;
	n = mem / (per ? per : 1);
	/* and what the file descriptors allow, keeping 64 for the rest */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		uint64_t fds = rl.rlim_cur > 64 + 2 * files ? (rl.rlim_cur - 64) / files : 2;
		if (fds < n)
			n = fds;
	}
	return n < 2 ? 2 : n > 4096 ? 4096 : (unsigned)n;
}

static void pool_unlink(struct ptc_writer_pool *p, struct ptc_writer *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		p->lru = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		p->mru = w->prev;
	w->prev = w->next = NULL;
	w->listed = 0;
	p->nopen--;
}

static void pool_append(struct ptc_writer_pool *p, struct ptc_writer *w)
{
	w->prev = p->mru;
	w->next = NULL;
	if (p->mru)
		p->mru->next = w;
	else
		p->lru = w;
	p->mru = w;
	w->listed = 1;
	p->nopen++;
}

/* Give up w's open outputs and big buffers until its next event. */
static void writer_suspend(struct ptc_writer *w)
{
	size_t i;
	int err;

	for (i = 0; i < w->n; i++) {
		if (w->st[i] && w->ops[i]->suspend && (err = w->ops[i]->suspend(w->st[i])) < 0 &&
		    !w->suspend_err)
			w->suspend_err = err;
	}
}

/* Wait (holding p->mu) until no thread is suspending w.  Only a caller
 * that hands one writer from thread to thread can get here while it is:
 * ptconv's conversions feed each writer from one thread at a time, and
 * a thread suspends only writers it used last itself. */
static void wait_idle(struct ptc_writer_pool *p, struct ptc_writer *w)
{
	while (w->suspending)
		pthread_cond_wait(&p->idle, &p->mu);
}

/* w gets an event: it becomes the most recently used writer, and when
 * that makes one too many open, the least recently used writer of the
 * calling thread is suspended.  Which writer, and so the output bytes,
 * is decided under the pool's lock in input order; the suspension itself
 * (finishing a compressed stream can take a while) runs after the lock is
 * released, so that other threads' writers do not wait for it: the victim
 * is out of the list and marked as being suspended until then.  Returns a
 * failure of w's own suspension. */
static int writer_touch(struct ptc_writer *w)
{
	struct ptc_writer_pool *p = w->cfg.pool;
	struct ptc_writer *v = NULL;
	pthread_t self;
	int err;

	if (!p)
		return 0;
	self = pthread_self();
	pthread_mutex_lock(&p->mu);
	wait_idle(p, w);
	if (w->listed)
		pool_unlink(p, w);
	w->owner = self;
	pool_append(p, w);
	if (p->nopen > p->max_open) {
		for (v = p->lru; v && v != w && !pthread_equal(v->owner, self); v = v->next)
			;
		if (v && v != w) {
			pool_unlink(p, v);
			p->suspensions++;
			v->suspending = 1;
		} else {
			v = NULL;
		}
	}
	err = w->suspend_err;
	w->suspend_err = 0;
	pthread_mutex_unlock(&p->mu);
	if (v) {
		writer_suspend(v);
		pthread_mutex_lock(&p->mu);
		v->suspending = 0;
		pthread_cond_broadcast(&p->idle);
		pthread_mutex_unlock(&p->mu);
	}
	return err;
}

/* w is done: out of the pool. */
static void writer_leave(struct ptc_writer *w)
{
	struct ptc_writer_pool *p = w->cfg.pool;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	wait_idle(p, w);
	if (w->listed)
		pool_unlink(p, w);
	pthread_mutex_unlock(&p->mu);
}

int ptc_writer_new(struct ptc_writer **wp, const char *formats,
		   const struct ptc_writer_config *cfg)
{
	struct ptc_writer *w;
	const char *p = formats ? formats : "ptconv";
	size_t i;

	*wp = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ptc_err_nomem;
	w->cfg = *cfg;
	while (*p) {
		size_t len = strcspn(p, ",");
		struct ptc_writer_config fc = *cfg;
		const struct ptc_fmt_ops *o = len ? parse_entry(p, len, &fc) : NULL;

		if (len && !o) {
			free(w);
			return -ptc_err_not_found;
		}
		for (i = 0; o && i < w->n; i++)
			if (w->ops[i] == o)
				o = NULL;
		if (o) {
			w->fcfg[w->n] = fc;
			w->ops[w->n++] = o;
		}
		p += len;
		if (*p)
			p++;
	}
	/* --bbv is a side output of any format list. */
	if (cfg->bbv_interval) {
		for (i = 0; i < w->n && w->ops[i] != &ptc_fmt_bbv; i++)
			;
		if (i == w->n) {
			w->fcfg[w->n] = *cfg;
			w->ops[w->n++] = &ptc_fmt_bbv;
		}
	}
	if (!w->n) {
		free(w);
		return -ptc_err_invalid;
	}
	*wp = w;
	return 0;
}

static int w_begin(void *ctx, const struct ptc_thread_info *t)
{
	struct ptc_writer *w = ctx;
	size_t i;
	int err;

	if (w->begun)
		return ptc_wfail(&w->ctx, ptc_err_invalid, "writer: begin called twice");
	w->begun = 1;
	if ((err = writer_touch(w)) < 0)
		return err;
	for (i = 0; i < w->n; i++) {
		err = w->ops[i]->open(&w->st[i], &w->fcfg[i], t, &w->ctx);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Before an event (what) goes to w's formats: it must come between
 * begin and end, and w's outputs must be open (the pool). */
static int writer_event(struct ptc_writer *w, const char *what)
{
	size_t i;

	if (w->ended)
		return ptc_wfail(&w->ctx, ptc_err_invalid, "writer: %s after the end", what);
	for (i = 0; i < w->n; i++)
		if (!w->st[i])
			return ptc_wfail(&w->ctx, ptc_err_invalid, "writer: %s before begin", what);
	return writer_touch(w);
}

static int w_paths(void *ctx, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	struct ptc_writer *w = ctx;
	size_t i;
	int err;

	if ((err = writer_event(w, "branches")) < 0)
		return err;
	for (i = 0; i < w->n; i++) {
		if (w->ops[i]->paths)
			err = w->ops[i]->paths(w->st[i], b, n, m, nm);
		else
			err = ptc_batch_give_dense(w->ops[i]->branches, w->st[i], b, n, m, nm);
		if (err < 0)
			return err;
	}
	return 0;
}

static int w_branches(void *ctx, const struct ptc_branch *b, size_t n)
{
	return w_paths(ctx, b, n, NULL, 0);
}

static int w_gap(void *ctx, const struct ptc_gap *g)
{
	struct ptc_writer *w = ctx;
	size_t i;
	int err;

	if ((err = writer_event(w, "gap")) < 0)
		return err;
	for (i = 0; i < w->n; i++) {
		err = w->ops[i]->gap(w->st[i], g);
		if (err < 0)
			return err;
	}
	return 0;
}

static int w_end(void *ctx)
{
	struct ptc_writer *w = ctx;
	size_t i;
	int err, first = 0;

	if (w->ended)
		return 0;
	w->ended = 1;
	writer_leave(w);
	first = w->suspend_err;
	for (i = 0; i < w->n; i++) {
		if (!w->st[i])
			continue;
		err = w->ops[i]->finish(w->st[i]);
		if (err == PTC_FMT_DETACHED) {
			w->st[i] = NULL;	/* the job's now */
			continue;
		}
		if (err < 0 && !first)
			first = err;
		/* Nothing is written after the end: the formats' buffers and
		 * compressors go now, not when the caller frees the writer
		 * (a recording may have thousands of threads that ended long
		 * before the conversion does). */
		w->ops[i]->free(w->st[i]);
		w->st[i] = NULL;
	}
	return first;
}

int ptc_writer_tail(struct ptc_writer *w, uint64_t insns)
{
	size_t i;
	int err;

	if (!insns && !w->ended)
		return 0;	/* nothing to give (after the end, still an error) */
	if ((err = writer_event(w, "tail")) < 0)
		return err;
	for (i = 0; i < w->n; i++) {
		if (w->ops[i]->tail && (err = w->ops[i]->tail(w->st[i], insns)) < 0)
			return err;
	}
	return 0;
}

int ptc_writer_cpu(struct ptc_writer *w, uint32_t cpu)
{
	size_t i;
	int err;

	/* (a note for the next records: no output is touched) */
	if (w->ended)
		return ptc_wfail(&w->ctx, ptc_err_invalid, "writer: cpu after the end");
	for (i = 0; i < w->n; i++) {
		if (w->st[i] && w->ops[i]->cpu && (err = w->ops[i]->cpu(w->st[i], cpu)) < 0)
			return err;
	}
	return 0;
}

/* The one format that takes records encoded ahead, its state; NULL when
 * the writer has other formats too (they want the records themselves). */
static void *ahead_state(const struct ptc_writer *w)
{
	return w->n == 1 && w->st[0] && !w->ended && w->ops[0]->splice ? w->st[0] : NULL;
}

struct ptc_ahead_tables *ptc_writer_ahead_tables(struct ptc_writer *w)
{
	void *st = ahead_state(w);

	return st ? w->ops[0]->ahead_tables(st) : NULL;
}

uint64_t ptc_writer_ahead_room(struct ptc_writer *w, const struct ptc_ahead_out *o)
{
	void *st = ahead_state(w);

	return st ? w->ops[0]->ahead_room(st, o) : 0;
}

int ptc_writer_splice(struct ptc_writer *w, const struct ptc_ahead_out *o)
{
	void *st = ahead_state(w);
	int err;

	if (!st)
		return ptc_wfail(&w->ctx, ptc_err_invalid, "writer: records encoded ahead for formats that cannot take them");
	if ((err = writer_event(w, "branches")) < 0)
		return err;
	return w->ops[0]->splice(st, o);
}

static const char *w_errmsg(void *ctx)
{
	return ((struct ptc_writer *)ctx)->ctx.err;
}

struct ptc_sink ptc_writer_sink(struct ptc_writer *w)
{
	struct ptc_sink s = { w_begin, w_branches, w_gap, w_end, w, w_paths, w_errmsg };

	return s;
}

const char *ptc_writer_errmsg(const struct ptc_writer *w)
{
	return w->ctx.err;
}

const char *ptc_writer_warnings(const struct ptc_writer *w)
{
	return w->ctx.warn ? w->ctx.warn : "";
}

void ptc_writer_free(struct ptc_writer *w)
{
	size_t i;

	if (!w)
		return;
	writer_leave(w);
	for (i = 0; i < w->n; i++)
		if (w->st[i])
			w->ops[i]->free(w->st[i]);
	free(w->ctx.warn);
	free(w);
}
