/* SimPoint 3.2 basic-block vectors (--bbv INTERVAL, -f bbv): one line
 *	T:id:count :id:count ...
 * per interval of exactly INTERVAL instructions (the last one may be
 * shorter), with count = instructions executed in block id during the
 * interval.  A block is the code from a branch destination up to and
 * including the next branch; ids count from 1 in order of first execution.
 * A block that straddles an interval boundary has its instructions split
 * at the boundary, so that interval k is exactly instructions
 * [k*INTERVAL, (k+1)*INTERVAL) and `ptconv slice --start k*INTERVAL
 * --count INTERVAL` cuts the same instructions.  No interval is empty.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writers/fmt.h"
#include "writers/insn.h"
#include "writers/wutil.h"

struct block {
	uint64_t start, ip;
	uint32_t insns;
};

struct bbv {
	struct ptc_wctx *c;
	char path[4096];
	struct ptc_zout *z;
	uint64_t interval, left;	/* instructions left in the current interval */
	uint64_t next_start;
	struct block *blocks;
	size_t n_blocks, cap_blocks;
	struct ptc_map ids;
	uint64_t *count;		/* per block, current interval */
	size_t cap_count;
	uint32_t *touched;
	size_t n_touched, cap_touched;
	char line[64];
};

static uint64_t block_key(uint64_t start, uint64_t ip, uint32_t insns, uint32_t probe)
{
	return ptc_hash64(start ^ ptc_hash64(ip + ((uint64_t)insns << 48) + probe)) >> 1;
}

static int flush_interval(struct bbv *w)
{
	size_t i;
	int err;

	if (!w->n_touched)
		return 0;
	/* suspended (bbv_suspend): the file goes on */
	if ((err = ptc_wfile_resume(w->c, &w->z, w->path)) < 0)
		return err;
	if ((err = ptc_zout_write(w->z, "T", 1)) < 0)
		goto io;
	for (i = 0; i < w->n_touched; i++) {
		uint32_t id = w->touched[i];
		int n = snprintf(w->line, sizeof(w->line), ":%" PRIu32 ":%" PRIu64 " ", id + 1, w->count[id]);
		if ((err = ptc_zout_write(w->z, w->line, (size_t)n)) < 0)
			goto io;
		w->count[id] = 0;
	}
	if ((err = ptc_zout_write(w->z, "\n", 1)) < 0)
		goto io;
	w->n_touched = 0;
	return 0;
io:
	return ptc_wfail_z(w->c, w->path, err, ptc_zout_errno(w->z), "write");
}

static int add_count(struct bbv *w, uint32_t id, uint64_t n)
{
	if (!w->count[id]) {
		if (w->n_touched == w->cap_touched) {
			size_t cap = w->cap_touched ? w->cap_touched * 2 : 1024;
			uint32_t *t = realloc(w->touched, cap * sizeof(*t));
			if (!t)
				return -ptc_err_nomem;
			w->touched = t;
			w->cap_touched = cap;
		}
		w->touched[w->n_touched++] = id;
	}
	w->count[id] += n;
	return 0;
}

/* insns instructions of the block [start .. ip] (ip 0: a block without
 * its branch, the trace's tail). */
static int bbv_block(struct bbv *w, uint64_t start, uint64_t ip, uint32_t insns)
{
	uint32_t id, probe = 0;
	uint64_t n = insns;
	int err;

	for (;; probe++) {
		id = ptc_map_get(&w->ids, block_key(start, ip, insns, probe));
		if (id == UINT32_MAX || (w->blocks[id].start == start &&
					 w->blocks[id].ip == ip && w->blocks[id].insns == insns))
			break;
	}
	if (id == UINT32_MAX) {
		if (w->n_blocks == w->cap_blocks) {
			size_t cap = w->cap_blocks ? w->cap_blocks * 2 : 1024;
			struct block *nb = realloc(w->blocks, cap * sizeof(*nb));
			uint64_t *nc = realloc(w->count, cap * sizeof(*nc));
			if (nb)
				w->blocks = nb;
			if (nc)
				w->count = nc;
			if (!nb || !nc)
				return -ptc_err_nomem;
			memset(w->count + w->cap_blocks, 0, (cap - w->cap_blocks) * sizeof(*nc));
			w->cap_blocks = cap;
		}
		id = (uint32_t)w->n_blocks++;
		w->blocks[id].start = start;
		w->blocks[id].ip = ip;
		w->blocks[id].insns = insns;
		if ((err = ptc_map_put(&w->ids, block_key(start, ip, insns, probe), id)) < 0)
			return err;
	}
	while (n) {
		uint64_t k = n < w->left ? n : w->left;
		if ((err = add_count(w, id, k)) < 0)
			return err;
		n -= k;
		w->left -= k;
		if (!w->left) {
			if ((err = flush_interval(w)) < 0)
				return err;
			w->left = w->interval;
		}
	}
	return 0;
}

static int bbv_branch(struct bbv *w, const struct ptc_branch *b)
{
	int err = bbv_block(w, w->next_start, b->ip, b->insns);

	w->next_start = ptc_branch_dest(b);
	return err;
}

static int bbv_branches(void *st, const struct ptc_branch *b, size_t n)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++)
		if ((err = bbv_branch(st, &b[i])) < 0)
			return err;
	return 0;
}

/* The instructions after the last branch count in the last interval, as
 * a block of their own. */
static int bbv_tail(void *st, uint64_t insns)
{
	struct bbv *w = st;

	if (insns > UINT32_MAX)
		return ptc_wfail(w->c, ptc_err_invalid, "%s: a tail of %" PRIu64 " instructions", w->path, insns);
	return bbv_block(w, w->next_start, 0, (uint32_t)insns);
}

static int bbv_gap(void *st, const struct ptc_gap *g)
{
	struct bbv *w = st;

	w->next_start = g->resume_ip;
	return 0;
}

static int bbv_finish(void *st)
{
	struct bbv *w = st;
	int err = flush_interval(w);

	return err < 0 ? err : ptc_wfile_finish(w->c, &w->z, w->path);
}

/* Idle (ptc_writer_pool): close the file; the counts stay. */
static int bbv_suspend(void *st)
{
	struct bbv *w = st;

	return ptc_wfile_close(w->c, &w->z, w->path);
}

static void bbv_free(void *st)
{
	struct bbv *w = st;

	ptc_zout_abort(w->z);
	ptc_map_free(&w->ids);
	free(w->blocks);
	free(w->count);
	free(w->touched);
	free(w);
}

static int bbv_open(void **st, const struct ptc_writer_config *cfg,
		    const struct ptc_thread_info *t, struct ptc_wctx *c)
{
	struct bbv *w = calloc(1, sizeof(*w));

	if (!w)
		return -ptc_err_nomem;
	w->c = c;
	w->interval = cfg->bbv_interval ? cfg->bbv_interval : 100000000;
	w->left = w->interval;
	if (ptc_map_init(&w->ids) < 0) {
		bbv_free(w);
		return -ptc_err_nomem;
	}
	if (ptc_wpath(w->path, sizeof(w->path), cfg, t, "bb") < 0) {
		bbv_free(w);
		return ptc_wfail(c, ptc_err_invalid, "bbv: output path too long");
	}
	{
		int err = ptc_wfile_open(c, &w->z, w->path);
		if (err < 0) {
			bbv_free(w);
			return err;
		}
	}
	*st = w;
	return 0;
}

const struct ptc_fmt_ops ptc_fmt_bbv = {
	{ "bbv", "SimPoint 3.2 basic-block vectors (.bb; --bbv INTERVAL sets the interval)", 0 },
	bbv_open, bbv_branches, bbv_gap, bbv_finish, bbv_free, bbv_suspend, bbv_tail,
	NULL,	/* paths: each record by itself */
	NULL,	/* cpu: not in the format */
	NULL, NULL, NULL,	/* encoding ahead: it wants the records */
};
