/* The files the threads of a conversion share (fmt.h, ptc_writer_procs):
 * a list of the threads' parts per format, written at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers/fmt.h"

static void (*const part_free[PTC_PROCS_NR])(void *) = { ptc_xray_part_free, ptc_perfetto_part_free };
static int (*const procs_finish[PTC_PROCS_NR])(struct ptc_writer_procs *, struct ptc_wctx *) = {
	ptc_xray_procs_finish, ptc_perfetto_procs_finish,
};

int ptc_writer_procs_new(struct ptc_writer_procs **procs)
{
	struct ptc_writer_procs *p = calloc(1, sizeof(*p));

	*procs = NULL;
	if (!p)
		return -ptc_err_nomem;
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p);
		return -ptc_err_nomem;
	}
	*procs = p;
	return 0;
}

/* (p->mu held) */
static void free_parts(struct ptc_writer_procs *p)
{
	size_t i, k;

	for (k = 0; k < PTC_PROCS_NR; k++) {
		for (i = 0; i < p->list[k].n; i++)
			part_free[k](p->list[k].v[i]);
		p->list[k].n = 0;
	}
}

void ptc_writer_procs_free(struct ptc_writer_procs *p)
{
	size_t k;

	if (!p)
		return;
	free_parts(p);
	for (k = 0; k < PTC_PROCS_NR; k++)
		free(p->list[k].v);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

static int cmp_part(const void *a, const void *b)
{
	const struct ptc_procs_part *x = *(struct ptc_procs_part *const *)a;
	const struct ptc_procs_part *y = *(struct ptc_procs_part *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void ptc_procs_sort(struct ptc_writer_procs *p, enum ptc_procs_kind kind)
{
	if (p->list[kind].n)
		qsort(p->list[kind].v, p->list[kind].n, sizeof(void *), cmp_part);
}

int ptc_procs_add(struct ptc_writer_procs *p, enum ptc_procs_kind kind, void *part, const char *outdir)
{
	struct ptc_procs_list *l = &p->list[kind];
	int err = 0;

	pthread_mutex_lock(&p->mu);
	if (!p->outdir[0])
		snprintf(p->outdir, sizeof(p->outdir), "%s", outdir ? outdir : ".");
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void **n = realloc(l->v, cap * sizeof(*n));
		if (n) {
			l->v = n;
			l->cap = cap;
		}
	}
	if (l->n < l->cap)
		l->v[l->n++] = part;
	else
		err = -ptc_err_nomem;
	pthread_mutex_unlock(&p->mu);
	return err;
}

int ptc_writer_procs_finish(struct ptc_writer_procs *p, char *err, size_t errlen)
{
	struct ptc_wctx c;
	size_t k;
	int rc = 0;

	memset(&c, 0, sizeof(c));
	pthread_mutex_lock(&p->mu);
	for (k = 0; k < PTC_PROCS_NR && !rc; k++)
		if (p->list[k].n)
			rc = procs_finish[k](p, &c);
	free_parts(p);
	pthread_mutex_unlock(&p->mu);
	if (rc && err && errlen)
		snprintf(err, errlen, "%s", c.err[0] ? c.err : "writing the files of the processes failed");
	free(c.warn);
	return rc;
}

int ptc_procs_check(const struct ptc_writer_config *cfg, const struct ptc_thread_info *t, struct ptc_wctx *c,
		    const char *name)
{
	if (!cfg->procs)
		return ptc_wfail(c, ptc_err_unsupported, "%s: written from a recording (perf.data), which "
				 "has the threads and the images' symbols, not from a ptconv trace", name);
	if (t && t->cpu >= 0)
		return ptc_wfail(c, ptc_err_unsupported, "%s: a per-CPU stream mixes threads "
				 "(convert per thread)", name);
	return 0;
}

int ptc_procs_spool(const struct ptc_writer_config *cfg, struct ptc_wctx *c, enum ptc_procs_kind kind,
		    const char *name, struct ptc_procs_part *part, char *spool, size_t size, struct ptc_zout **z)
{
	struct ptc_writer_config pc = *cfg;
	struct ptc_thread_info ti = { 0, part->pid, NULL, -1 };
	char suffix[32];
	int err;

	pc.prefix = name;
	snprintf(suffix, sizeof(suffix), "%u.spool", part->tid);
	if (ptc_wpath(spool, size, &pc, &ti, suffix) < 0)
		return ptc_wfail(c, ptc_err_invalid, "%s: output path too long", name);
	if ((err = ptc_wfile_open(c, z, spool)) < 0)
		return err;
	if ((err = ptc_procs_add(cfg->procs, kind, part, cfg->outdir)) < 0) {
		ptc_zout_abort(*z);
		*z = NULL;
		ptc_out_discard(spool);
	}
	return err;
}
