/* LLVM XRay flight-data-recorder logs (-f xray): the calls and returns of
 * a process's threads as function enter, exit and tail-exit records, and
 * the instrumentation map that names the function ids
 * (ptconv-formats(5), "xray").
 *
 * Each thread's writer follows the thread's calls on a stack of frames
 * (function, return address) and spools its records, in the log's own
 * encoding with the thread's own function numbers, under a temporary
 * name.  Once the conversion is over, ptc_writer_procs_finish() gives
 * each process's functions their ids (in address order) and writes
 * xray.PID.fdr: the file header, then one buffer per thread (in TID
 * order): BufferExtents, NewBuffer, WallClockTime, PID, NewCPUId and the
 * thread's records, renumbered; and xray.PID.map.yaml.  The bytes depend
 * on the threads' events alone, not on the order in which threads ended.
 *
 * Times are perf times in nanoseconds, written as the log's TSC with a
 * cycle frequency of 1 GHz, so that a count of cycles is exactly a count
 * of nanoseconds.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bytes.h"
#include "writers/fmt.h"
#include "writers/wutil.h"

#define XRAY_VERSION 3
#define XRAY_FDR 1
#define XRAY_HZ 1000000000ull
#define FID_LIMIT (1u << 28)	/* function ids have 28 bits */

/* Function record types and metadata record kinds of the FDR format. */
enum { R_ENTER = 0, R_EXIT = 1, R_TAIL_EXIT = 2 };
enum { M_NEW_BUFFER = 0, M_NEW_CPU = 2, M_TSC_WRAP = 3, M_WALLCLOCK = 4, M_EXTENTS = 7, M_PID = 9 };

/* A function a thread met: the symbol's entry, or (no symbol) the address
 * a call went to. */
struct xfunc {
	uint64_t start;
	uint64_t vaddr;		/* start as an address of its image */
	char *name;		/* NULL: no symbol */
	char *image;		/* NULL: in no known image */
	uint32_t id;		/* in the log (ptc_writer_procs_finish) */
};

struct frame {
	uint32_t fn;		/* the thread's function number */
	uint64_t ret;		/* where its return goes, 0 when unknown */
};

/* What a thread's log needs of it, kept until ptc_writer_procs_finish. */
struct xlog {
	uint32_t pid, tid;
	char spool[4096];	/* its records go to this name's temporary */
	uint64_t bytes;		/* spooled */
	uint64_t first;		/* TSC of its first record (the NewCPUId base) */
	int have_first;
	int done;		/* its writer finished: the spool is complete */
	int own_log;		/* xray:threads: a log of its own */
	struct xfunc *fn;	/* the thread's functions, by its numbers */
	size_t nfn, capfn;
};

/* A thread's writer. */
struct xthread {
	struct xlog *log;
	struct ptc_wctx *c;
	const struct ptc_symbol_reader *sym;
	struct ptc_zout *z;
	int untimed;		/* the clock counts instructions */
	uint64_t insns;		/* instructions so far */
	uint64_t last;		/* TSC of the last record */
	struct frame *st;
	size_t depth, capst;
	struct ptc_map ids;	/* hash of start -> function number, probed */
	struct ptc_symbol cache[4];
	unsigned ncache, next_cache;
	/* call targets met, direct-mapped: their function (gen: the
	 * mappings they were met in, counted by forget_symbols()) */
	struct {
		uint64_t addr;
		uint32_t gen, fn;
	} targets[1024];
	uint32_t gen;
};

struct ptc_writer_procs {
	pthread_mutex_t mu;
	char outdir[4096];
	struct xlog **th;
	size_t n, cap;
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

static void xlog_free(struct xlog *x)
{
	size_t i;

	for (i = 0; i < x->nfn; i++) {
		free(x->fn[i].name);
		free(x->fn[i].image);
	}
	free(x->fn);
	free(x);
}

void ptc_writer_procs_free(struct ptc_writer_procs *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		ptc_out_discard(p->th[i]->spool);
		xlog_free(p->th[i]);
	}
	free(p->th);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* ---- the thread's writer ---- */

static int xfail_write(struct xthread *x)
{
	return ptc_wfail(x->c, ptc_err_io, "%s: write: %s", x->log->spool, strerror(ptc_zout_errno(x->z)));
}

static int spool(struct xthread *x, const void *p, size_t n)
{
	int err;

	if ((err = ptc_wfile_resume(x->c, &x->z, x->log->spool)) < 0)
		return err;
	if (ptc_zout_write(x->z, p, n) < 0)
		return xfail_write(x);
	x->log->bytes += n;
	return 0;
}

/* One 16-byte metadata record: its kind, then up to 15 bytes. */
static void metadata(uint8_t rec[16], unsigned kind)
{
	memset(rec, 0, 16);
	rec[0] = (uint8_t)(kind << 1 | 1);
}

/* A function record of type at time (a TSC in ns, never below the last
 * one: the deltas are unsigned).  A delta that needs more than 32 bits
 * gets a TSCWrap record with the full time first. */
static int record(struct xthread *x, unsigned type, uint32_t fn, uint64_t time)
{
	uint8_t rec[16];
	uint64_t delta;
	int err;

	if (!x->log->have_first) {
		x->log->have_first = 1;
		x->log->first = x->last = time;
	}
	if (time < x->last)
		time = x->last;
	delta = time - x->last;
	if (delta > UINT32_MAX) {
		metadata(rec, M_TSC_WRAP);
		ptc_put64(rec + 1, time);
		if ((err = spool(x, rec, 16)) < 0)
			return err;
		delta = 0;
	}
	x->last = time;
	ptc_put32(rec, (uint32_t)(type << 1 | fn << 4));
	ptc_put32(rec + 4, (uint32_t)delta);
	return spool(x, rec, 8);
}

/* A branch's time: its perf time, or when it has none (no timing packet
 * yet) the last record's; in a recording without timing packets, the
 * instructions the thread executed so far (this branch included). */
static uint64_t when(const struct xthread *x, uint64_t time)
{
	if (x->untimed)
		return x->insns;
	return time > x->last ? time : x->last;
}

/* What the symbols say of addr, through a small cache of ranges (a
 * mapping changes only in a system call: the cache is emptied at every
 * far branch and gap). */
static const struct ptc_symbol *sym_at(struct xthread *x, uint64_t addr)
{
	struct ptc_symbol *s;
	unsigned i;

	for (i = 0; i < x->ncache; i++)
		if (addr >= x->cache[i].lo && addr < x->cache[i].hi)
			return &x->cache[i];
	s = &x->cache[x->next_cache];
	x->next_cache = (x->next_cache + 1) % 4;
	if (x->ncache < 4)
		x->ncache++;
	memset(s, 0, sizeof(*s));
	if (x->sym)
		x->sym->lookup(x->sym->ctx, addr, s);
	/* (the strings are not kept: func() copies those it needs) */
	s->name = s->start ? "" : NULL;
	s->image = NULL;
	if (s->lo > addr || s->hi <= addr) {
		s->lo = addr;
		s->hi = addr + 1;
	}
	return s;
}

static void forget_symbols(struct xthread *x)
{
	x->ncache = 0;
	x->next_cache = 0;
	x->gen++;
}

static uint64_t func_key(uint64_t start, uint32_t probe)
{
	return ptc_hash64(start + probe) >> 1;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The thread's number of the function that addr belongs to, or (no
 * symbol) of the function that starts at addr; created on first use.
 * UINT32_MAX when out of memory or ids. */
static uint32_t func(struct xthread *x, uint64_t addr)
{
	struct ptc_symbol s;
	uint64_t start;
	uint32_t id, probe;
	size_t slot = (size_t)(ptc_hash64(addr) % 1024);

	if (x->targets[slot].addr == addr && x->targets[slot].gen == x->gen)
		return x->targets[slot].fn;
	memset(&s, 0, sizeof(s));
	if (x->sym)
		x->sym->lookup(x->sym->ctx, addr, &s);
	start = s.start ? s.start : addr;
	for (probe = 0;; probe++) {
		id = ptc_map_get(&x->ids, func_key(start, probe));
		if (id == UINT32_MAX)
			break;
		if (x->log->fn[id].start == start && !x->log->fn[id].name == !s.start &&
		    !x->log->fn[id].image == !s.image && (!s.image || !strcmp(x->log->fn[id].image, s.image)))
			goto found;
	}
	if (x->log->nfn + 1 >= FID_LIMIT)
		return UINT32_MAX;
	if (x->log->nfn == x->log->capfn) {
		size_t cap = x->log->capfn ? x->log->capfn * 2 : 256;
		struct xfunc *n = realloc(x->log->fn, cap * sizeof(*n));
		if (!n)
			return UINT32_MAX;
		x->log->fn = n;
		x->log->capfn = cap;
	}
	id = (uint32_t)x->log->nfn;
	memset(&x->log->fn[id], 0, sizeof(x->log->fn[id]));
	x->log->fn[id].start = start;
	x->log->fn[id].vaddr = s.image ? s.vaddr - (addr - start) : 0;
	x->log->fn[id].name = s.start ? dup_or_null(s.name ? s.name : "") : NULL;
	x->log->fn[id].image = dup_or_null(s.image);
	if ((s.start && !x->log->fn[id].name) || (s.image && !x->log->fn[id].image) ||
	    ptc_map_put(&x->ids, func_key(start, probe), id) < 0) {
		free(x->log->fn[id].name);
		free(x->log->fn[id].image);
		return UINT32_MAX;
	}
	x->log->nfn++;
found:
	x->targets[slot].addr = addr;
	x->targets[slot].gen = x->gen;
	x->targets[slot].fn = id;
	return id;
}

static int nomem(struct xthread *x)
{
	return ptc_wfail(x->c, ptc_err_nomem, "%s: out of memory (or more than %u functions)",
			 x->log->spool, FID_LIMIT - 1);
}

static int push(struct xthread *x, uint32_t fn, uint64_t ret, uint64_t time)
{
	if (x->depth == x->capst) {
		size_t cap = x->capst ? x->capst * 2 : 256;
		struct frame *n = realloc(x->st, cap * sizeof(*n));
		if (!n)
			return nomem(x);
		x->st = n;
		x->capst = cap;
	}
	x->st[x->depth].fn = fn;
	x->st[x->depth].ret = ret;
	x->depth++;
	return record(x, R_ENTER, fn, time);
}

/* Leave the frames above depth d, the innermost first. */
static int unwind(struct xthread *x, size_t d, uint64_t time)
{
	int err;

	while (x->depth > d) {
		x->depth--;
		if ((err = record(x, R_EXIT, x->st[x->depth].fn, time)) < 0)
			return err;
	}
	return 0;
}

/* A return to target: it leaves the frame it returns from (the innermost
 * one whose return address is target, or the innermost frame when its
 * return address is unknown) and the frames above it; one from before the
 * trace (or before a loss) leaves none. */
static int ret(struct xthread *x, uint64_t target, uint64_t time)
{
	size_t i;

	if (x->depth && !x->st[x->depth - 1].ret)
		return unwind(x, x->depth - 1, time);
	for (i = x->depth; i-- > 0;)
		if (x->st[i].ret == target)
			return unwind(x, i, time);
	return 0;
}

/* A jump (or a far branch) to target: a tail call when target is the
 * entry of another function than the one jumped from; a jump into a
 * function that is on the stack below the innermost frame leaves the
 * frames above it (longjmp, an exception's landing pad). */
static int jump(struct xthread *x, uint64_t from, uint64_t target, uint64_t time)
{
	const struct ptc_symbol *sf, *st;
	uint64_t from_start, to_start;
	uint32_t fn;
	size_t i;
	int err;

	sf = sym_at(x, from);
	if (target >= sf->lo && target < sf->hi)
		return 0;	/* within the function (or the same stretch without one) */
	from_start = sf->start;
	st = sym_at(x, target);
	to_start = st->start;
	if (!to_start || to_start == from_start)
		return 0;
	if (to_start == target) {
		if ((fn = func(x, target)) == UINT32_MAX)
			return nomem(x);
		if (!x->depth)
			return push(x, fn, 0, time);
		if ((err = record(x, R_TAIL_EXIT, x->st[x->depth - 1].fn, time)) < 0)
			return err;
		x->st[x->depth - 1].fn = fn;
		return record(x, R_ENTER, fn, time);
	}
	for (i = x->depth; i-- > 0;)
		if (x->log->fn[x->st[i].fn].start == to_start && x->log->fn[x->st[i].fn].name)
			return unwind(x, i + 1, time);
	return 0;
}

static int xray_branch(struct xthread *x, const struct ptc_branch *b)
{
	uint64_t t;
	uint32_t fn;

	x->insns += b->insns;
	t = when(x, b->time);

	switch (b->kind) {
	case PTC_BR_CALL:
	case PTC_BR_CALL_IND:
		if ((fn = func(x, b->target)) == UINT32_MAX)
			return nomem(x);
		return push(x, fn, b->ip + b->length, t);
	case PTC_BR_RET:
		return ret(x, b->target, t);
	case PTC_BR_JMP:
	case PTC_BR_JMP_IND:
	case PTC_BR_COND:
		return b->taken && b->target ? jump(x, b->ip, b->target, t) : 0;
	case PTC_BR_FAR:
		/* a system call: mappings may change; user mode resumed at
		 * target (0: behind the instruction), at a signal handler's
		 * entry a frame begins that its return leaves */
		forget_symbols(x);
		if (b->target && b->target != b->ip + b->length) {
			const struct ptc_symbol *s = sym_at(x, b->target);
			if (s->start == b->target) {
				if ((fn = func(x, b->target)) == UINT32_MAX)
					return nomem(x);
				return push(x, fn, 0, t);
			}
		}
		return 0;
	default:
		return 0;
	}
}

static int xray_branches(void *st, const struct ptc_branch *b, size_t n)
{
	struct xthread *x = st;
	size_t i;
	int err;

	for (i = 0; i < n; i++)
		if ((err = xray_branch(x, &b[i])) < 0)
			return err;
	return 0;
}

/* A loss: what happened meanwhile is unknown, so every open frame is
 * left here, explicitly (the returns after the loss that would have left
 * them leave nothing). */
static int xray_gap(void *st, const struct ptc_gap *g)
{
	struct xthread *x = st;

	forget_symbols(x);
	return unwind(x, 0, when(x, g->time));
}

static int xray_finish(void *st)
{
	struct xthread *x = st;
	int err;

	/* (frames still open at the end stay open, as in a log cut short) */
	if ((err = ptc_wfile_close(x->c, &x->z, x->log->spool)) < 0)
		return err;
	x->log->done = 1;
	return 0;
}

static int xray_suspend(void *st)
{
	struct xthread *x = st;

	return ptc_wfile_close(x->c, &x->z, x->log->spool);
}

/* The writer goes; what the log needs of the thread stays in procs. */
static void xray_free(void *st)
{
	struct xthread *x = st;

	ptc_zout_abort(x->z);
	free(x->st);
	ptc_map_free(&x->ids);
	free(x);
}

static int xray_open(void **st, const struct ptc_writer_config *cfg, const struct ptc_thread_info *t,
		     struct ptc_wctx *c)
{
	struct ptc_writer_procs *p = cfg->procs;
	struct ptc_writer_config pc = *cfg;
	struct ptc_thread_info ti = { 0, 0, NULL, -1 };
	struct xthread *x;
	struct xlog *log;
	char suffix[64];
	int err;

	if (!p)
		return ptc_wfail(c, ptc_err_unsupported, "xray: a log per process is written from "
				 "a recording (perf.data), not from a ptconv trace");
	if (t && t->cpu >= 0)
		return ptc_wfail(c, ptc_err_unsupported, "xray: a per-CPU stream mixes threads "
				 "(convert per thread)");
	x = calloc(1, sizeof(*x));
	log = calloc(1, sizeof(*log));
	if (!x || !log || ptc_map_init(&x->ids) < 0) {
		free(x);
		free(log);
		return -ptc_err_nomem;
	}
	x->log = log;
	x->c = c;
	x->sym = cfg->symbols;
	x->gen = 1;
	x->untimed = cfg->untimed;
	log->pid = t ? t->pid : 0;
	log->tid = t ? t->tid : 0;
	log->own_log = cfg->xray_threads;
	/* its spool, xray.PID.TID.spool: never a final name, only its
	 * temporary (ptc_out_tmpname), which a killed run leaves to the
	 * next run's ptc_out_clean */
	pc.prefix = "xray";
	ti.tid = log->pid;
	snprintf(suffix, sizeof(suffix), "%u.spool", log->tid);
	if (ptc_wpath(log->spool, sizeof(log->spool), &pc, &ti, suffix) < 0)
		err = ptc_wfail(c, ptc_err_invalid, "xray: output path too long");
	else
		err = ptc_wfile_open(c, &x->z, log->spool);
	if (err < 0) {
		xray_free(x);
		free(log);
		return err;
	}
	pthread_mutex_lock(&p->mu);
	if (!p->n)
		snprintf(p->outdir, sizeof(p->outdir), "%s", cfg->outdir ? cfg->outdir : ".");
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct xlog **n = realloc(p->th, cap * sizeof(*n));
		if (n) {
			p->th = n;
			p->cap = cap;
		}
	}
	if (p->n < p->cap)
		p->th[p->n++] = log;
	else
		err = -ptc_err_nomem;
	pthread_mutex_unlock(&p->mu);
	if (err < 0) {
		ptc_zout_abort(x->z);
		x->z = NULL;
		ptc_out_discard(log->spool);
		xray_free(x);
		free(log);
		return err;
	}
	*st = x;
	return 0;
}

const struct ptc_fmt_ops ptc_fmt_xray = {
	{ "xray", "LLVM XRay FDR log per process and its instrumentation map (xray.PID.fdr, .map.yaml)", 0 },
	xray_open, xray_branches, xray_gap, xray_finish, xray_free, xray_suspend, NULL, NULL,
};

/* ---- the per-process files ---- */

static int cmp_thread(const void *a, const void *b)
{
	const struct xlog *x = *(struct xlog *const *)a, *y = *(struct xlog *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;	/* NULL first */
	return strcmp(a, b);
}

/* The order of a process's functions: by address, then image, then name
 * (NULL first): an order of the functions themselves. */
static int cmp_func(const void *a, const void *b)
{
	const struct xfunc *x = *(struct xfunc *const *)a, *y = *(struct xfunc *const *)b;
	int c;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if ((c = cmp_str(x->image, y->image)))
		return c;
	return cmp_str(x->name, y->name);
}

/* Number the functions of threads th[0..n) (one process) from 1, the
 * same function of two threads the same; *count gets how many. */
static int number_functions(struct xlog **th, size_t n, struct xfunc ***sorted, size_t *count)
{
	size_t total = 0, i, k, m = 0;
	struct xfunc **v;
	uint32_t id = 0;

	for (i = 0; i < n; i++)
		total += th[i]->nfn;
	v = malloc((total ? total : 1) * sizeof(*v));
	if (!v)
		return -ptc_err_nomem;
	for (i = 0; i < n; i++)
		for (k = 0; k < th[i]->nfn; k++)
			v[m++] = &th[i]->fn[k];
	qsort(v, m, sizeof(*v), cmp_func);
	for (i = 0; i < m; i++) {
		if (!i || cmp_func(&v[i - 1], &v[i]))
			id++;
		v[i]->id = id;
	}
	if (id >= FID_LIMIT) {
		free(v);
		return -ptc_err_overflow;
	}
	*sorted = v;
	*count = m;
	return 0;
}

struct out {
	struct ptc_wctx c;
	struct ptc_zout *z;
	char path[4096];
};

static int out_write(struct out *o, const void *p, size_t n)
{
	if (ptc_zout_write(o->z, p, n) < 0)
		return ptc_wfail(&o->c, ptc_err_io, "%s: write: %s", o->path, strerror(ptc_zout_errno(o->z)));
	return 0;
}

/* Thread x's buffer: its metadata, then its spooled records with the
 * process's function ids. */
static int write_buffer(struct out *o, const struct xlog *x)
{
	uint8_t pre[5 * 16], buf[65536];
	char tmp[4200];
	FILE *f;
	size_t got, pos = 0, have = 0;
	uint64_t left = x->bytes;
	int err;

	/* BufferExtents (the bytes that follow it), NewBuffer, WallClockTime
	 * (the first record's perf time, since boot), PID, NewCPUId (the CPU
	 * is not known per branch: 0; the TSC base) */
	metadata(pre, M_EXTENTS);
	ptc_put64(pre + 1, 4 * 16 + x->bytes);
	metadata(pre + 16, M_NEW_BUFFER);
	ptc_put32(pre + 17, x->tid);
	metadata(pre + 32, M_WALLCLOCK);
	ptc_put64(pre + 33, x->first / XRAY_HZ);
	ptc_put32(pre + 41, (uint32_t)(x->first % XRAY_HZ));
	metadata(pre + 48, M_PID);
	ptc_put32(pre + 49, x->pid);
	metadata(pre + 64, M_NEW_CPU);
	ptc_put64(pre + 67, x->first);
	if ((err = out_write(o, pre, sizeof(pre))) < 0)
		return err;
	if (ptc_out_tmpname(tmp, sizeof(tmp), x->spool) < 0 || !(f = fopen(tmp, "rb")))
		return ptc_wfail(&o->c, ptc_err_io, "%s: %s", tmp, strerror(errno));
	/* records: 8 bytes, or 16 for metadata (the TSCWrap) */
	while (left) {
		size_t need;

		if (have - pos < 16) {
			memmove(buf, buf + pos, have - pos);
			have -= pos;
			pos = 0;
			got = fread(buf + have, 1, sizeof(buf) - have, f);
			have += got;
			if (have < 8)
				break;
		}
		need = (buf[pos] & 1) ? 16 : 8;
		if (have - pos < need || need > left)
			break;
		if (!(buf[pos] & 1)) {
			uint32_t w = ptc_le32(buf + pos);
			uint32_t local = w >> 4;
			if (local >= x->nfn)
				break;
			ptc_put32(buf + pos, (w & 0xf) | x->fn[local].id << 4);
		}
		if ((err = out_write(o, buf + pos, need)) < 0) {
			fclose(f);
			return err;
		}
		pos += need;
		left -= need;
	}
	fclose(f);
	if (left)
		return ptc_wfail(&o->c, ptc_err_io, "%s: the spooled records of thread %u end early", tmp, x->tid);
	return 0;
}

/* The log of threads th[0..n), xray.PID.fdr, or for one thread of its
 * own xray.PID.TID.fdr. */
static int write_log(struct out *o, const struct ptc_writer_procs *p, struct xlog **th, size_t n)
{
	uint8_t head[32];
	size_t i;
	int err, len;

	if (n == 1 && th[0]->own_log)
		len = snprintf(o->path, sizeof(o->path), "%s/xray.%u.%u.fdr", p->outdir, th[0]->pid,
			       th[0]->tid);
	else
		len = snprintf(o->path, sizeof(o->path), "%s/xray.%u.fdr", p->outdir, th[0]->pid);
	if (len >= (int)sizeof(o->path))
		return ptc_wfail(&o->c, ptc_err_invalid, "xray: output path too long");
	if ((err = ptc_wfile_open(&o->c, &o->z, o->path)) < 0)
		return err;
	memset(head, 0, sizeof(head));
	ptc_put16(head, XRAY_VERSION);
	ptc_put16(head + 2, XRAY_FDR);
	ptc_put32(head + 4, 3);	/* constant and non-stop: nanoseconds */
	ptc_put64(head + 8, XRAY_HZ);
	if ((err = out_write(o, head, sizeof(head))) < 0)
		return err;
	for (i = 0; i < n; i++)
		if (th[i]->bytes && (err = write_buffer(o, th[i])) < 0)
			return err;
	return ptc_wfile_finish(&o->c, &o->z, o->path);
}

/* name as a YAML double-quoted scalar */
static int yaml_str(struct out *o, const char *s)
{
	if (ptc_zout_write(o->z, "\"", 1) < 0)
		goto io;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		int r;
		if (ch == '"' || ch == '\\')
			r = ptc_zout_printf(o->z, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			r = ptc_zout_printf(o->z, "\\x%02x", ch);
		else
			r = ptc_zout_write(o->z, s, 1);
		if (r < 0)
			goto io;
	}
	if (ptc_zout_write(o->z, "\"", 1) < 0)
		goto io;
	return 0;
io:
	return ptc_wfail(&o->c, ptc_err_io, "%s: write: %s", o->path, strerror(ptc_zout_errno(o->z)));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A function's name in the maps: its symbol's; without one IMAGE+0xVADDR
 * (IMAGE the file's base name, VADDR the address in it), or 0xADDRESS. */
static void func_name(const struct xfunc *f, char *name, size_t size)
{
	if (f->name)
		snprintf(name, size, "%s", f->name);
	else if (f->image)
		snprintf(name, size, "%s+0x%" PRIx64, base_name(f->image), f->vaddr);
	else
		snprintf(name, size, "0x%" PRIx64, f->start);
}

/* The instrumentation map: one entry per function, its id, address and
 * name. */
static int write_map(struct out *o, const struct ptc_writer_procs *p, struct xfunc **v, size_t m,
		     uint32_t pid)
{
	size_t i;
	int err;

	if (snprintf(o->path, sizeof(o->path), "%s/xray.%u.map.yaml", p->outdir, pid) >=
	    (int)sizeof(o->path))
		return ptc_wfail(&o->c, ptc_err_invalid, "xray: output path too long");
	if ((err = ptc_wfile_open(&o->c, &o->z, o->path)) < 0)
		return err;
	if (ptc_zout_printf(o->z, "---\n") < 0)
		goto io;
	for (i = 0; i < m; i++) {
		const struct xfunc *f = v[i];
		char name[4200];

		if (i && v[i - 1]->id == f->id)
			continue;
		func_name(f, name, sizeof(name));
		if (ptc_zout_printf(o->z, "- { id: %" PRIu32 ", address: 0x%" PRIx64 ", function: 0x%" PRIx64
				    ", kind: function-enter, always-instrument: true, function-name: ",
				    f->id, f->start, f->start) < 0)
			goto io;
		if ((err = yaml_str(o, name)) < 0)
			return err;
		if (ptc_zout_printf(o->z, " }\n") < 0)
			goto io;
	}
	if (ptc_zout_printf(o->z, "...\n") < 0)
		goto io;
	return ptc_wfile_finish(&o->c, &o->z, o->path);
io:
	return ptc_wfail(&o->c, ptc_err_io, "%s: write: %s", o->path, strerror(ptc_zout_errno(o->z)));
}

/* The same map as an ELF file that llvm-xray symbolizes (its -m reads
 * the xray_instr_map section's entries, its symbolizer the symbol table):
 * an entry per function (version 0: absolute addresses) in id order, and
 * a symbol per function in a section without bytes that spans them.
 * Not written when two functions share an address (the entries would
 * then number them differently). */
static int write_elf_map(struct out *o, const struct ptc_writer_procs *p, struct xfunc **v, size_t m,
			 uint32_t pid)
{
	static const char shstr[] = "\0xray_instr_map\0.text\0.symtab\0.strtab\0.shstrtab";
	enum { SH_MAP = 1, SH_TEXT = 16, SH_SYMTAB = 22, SH_STRTAB = 30, SH_SHSTRTAB = 38 };
	uint8_t b[64];
	uint64_t nf = 0, strsize = 1, lo = UINT64_MAX, hi = 0, off_sym, off_str, off_shstr, off_sh;
	size_t i;
	int err;

	for (i = 0; i < m; i++) {
		char name[4200];

		if (i && v[i - 1]->id == v[i]->id)
			continue;
		if (i && v[i - 1]->start == v[i]->start)
			return 0;
		func_name(v[i], name, sizeof(name));
		strsize += strlen(name) + 1;
		nf++;
		if (v[i]->start < lo)
			lo = v[i]->start;
		if (v[i]->start >= hi)
			hi = v[i]->start + 1;
	}
	if (!nf)
		lo = hi = 0;
	off_sym = 64 + 32 * nf;
	off_str = off_sym + 24 * (nf + 1);
	off_shstr = off_str + strsize;
	off_sh = (off_shstr + sizeof(shstr) + 7) & ~7ull;
	if (snprintf(o->path, sizeof(o->path), "%s/xray.%u.map.elf", p->outdir, pid) >= (int)sizeof(o->path))
		return ptc_wfail(&o->c, ptc_err_invalid, "xray: output path too long");
	if ((err = ptc_wfile_open(&o->c, &o->z, o->path)) < 0)
		return err;
	/* the ELF header: 64-bit, little-endian, executable, x86-64 */
	memset(b, 0, 64);
	memcpy(b, "\177ELF\2\1\1", 7);
	ptc_put16(b + 16, 2);
	ptc_put16(b + 18, 62);
	ptc_put32(b + 20, 1);
	ptc_put64(b + 40, off_sh);
	ptc_put16(b + 52, 64);
	ptc_put16(b + 58, 64);
	ptc_put16(b + 60, 6);
	ptc_put16(b + 62, 5);
	if ((err = out_write(o, b, 64)) < 0)
		return err;
	/* the entries: address, function, kind 0 (entry), always, version 0 */
	for (i = 0; i < m; i++) {
		if (i && v[i - 1]->id == v[i]->id)
			continue;
		memset(b, 0, 32);
		ptc_put64(b, v[i]->start);
		ptc_put64(b + 8, v[i]->start);
		b[17] = 1;
		if ((err = out_write(o, b, 32)) < 0)
			return err;
	}
	/* the symbols: global functions of size 1 in .text */
	memset(b, 0, 24);
	if ((err = out_write(o, b, 24)) < 0)
		return err;
	strsize = 1;
	for (i = 0; i < m; i++) {
		char name[4200];

		if (i && v[i - 1]->id == v[i]->id)
			continue;
		func_name(v[i], name, sizeof(name));
		memset(b, 0, 24);
		ptc_put32(b, (uint32_t)strsize);
		b[4] = 1 << 4 | 2;
		ptc_put16(b + 6, 2);
		ptc_put64(b + 8, v[i]->start);
		ptc_put64(b + 16, 1);
		if ((err = out_write(o, b, 24)) < 0)
			return err;
		strsize += strlen(name) + 1;
	}
	if ((err = out_write(o, "", 1)) < 0)
		return err;
	for (i = 0; i < m; i++) {
		char name[4200];

		if (i && v[i - 1]->id == v[i]->id)
			continue;
		func_name(v[i], name, sizeof(name));
		if ((err = out_write(o, name, strlen(name) + 1)) < 0)
			return err;
	}
	if ((err = out_write(o, shstr, sizeof(shstr))) < 0)
		return err;
	memset(b, 0, 8);
	if ((err = out_write(o, b, off_sh - off_shstr - sizeof(shstr))) < 0)
		return err;
	/* the section headers */
	{
		const struct {
			uint32_t name, type;
			uint64_t flags, addr, off, size;
			uint32_t link, info;
			uint64_t align, entsize;
		} sh[6] = {
			{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
			{ SH_MAP, 1, 2, 0, 64, 32 * nf, 0, 0, 8, 0 },
			{ SH_TEXT, 8, 6, lo, off_sym, hi - lo, 0, 0, 1, 0 },
			{ SH_SYMTAB, 2, 0, 0, off_sym, 24 * (nf + 1), 4, 1, 8, 24 },
			{ SH_STRTAB, 3, 0, 0, off_str, strsize, 0, 0, 1, 0 },
			{ SH_SHSTRTAB, 3, 0, 0, off_shstr, sizeof(shstr), 0, 0, 1, 0 },
		};
		for (i = 0; i < 6; i++) {
			ptc_put32(b, sh[i].name);
			ptc_put32(b + 4, sh[i].type);
			ptc_put64(b + 8, sh[i].flags);
			ptc_put64(b + 16, sh[i].addr);
			ptc_put64(b + 24, sh[i].off);
			ptc_put64(b + 32, sh[i].size);
			ptc_put32(b + 40, sh[i].link);
			ptc_put32(b + 44, sh[i].info);
			ptc_put64(b + 48, sh[i].align);
			ptc_put64(b + 56, sh[i].entsize);
			if ((err = out_write(o, b, 64)) < 0)
				return err;
		}
	}
	return ptc_wfile_finish(&o->c, &o->z, o->path);
}

int ptc_writer_procs_finish(struct ptc_writer_procs *p, char *err, size_t errlen)
{
	struct out o;
	size_t i, j;
	int rc = 0;

	memset(&o, 0, sizeof(o));
	pthread_mutex_lock(&p->mu);
	if (p->n)
		qsort(p->th, p->n, sizeof(*p->th), cmp_thread);
	for (i = 0; i < p->n && !rc; i = j) {
		struct xfunc **v = NULL;
		size_t m = 0, k;
		uint64_t bytes;

		for (j = i; j < p->n && p->th[j]->pid == p->th[i]->pid; j++)
			;
		for (k = i, bytes = 0; k < j; k++) {
			if (!p->th[k]->done)
				break;
			bytes += p->th[k]->bytes;
		}
		/* a thread's writer did not finish (its error was told), or no
		 * thread of the process has a record: no files */
		if (k < j || !bytes)
			continue;
		if ((rc = number_functions(p->th + i, j - i, &v, &m)) < 0) {
			snprintf(o.c.err, sizeof(o.c.err), "xray.%u: %s", p->th[i]->pid,
				 rc == -ptc_err_overflow ? "more functions than 28-bit ids hold" :
							   "out of memory");
			break;
		}
		if (p->th[i]->own_log) {
			for (k = i; k < j && !rc; k++)
				if (p->th[k]->bytes)	/* (a thread without records has no log) */
					rc = write_log(&o, p, p->th + k, 1);
		} else {
			rc = write_log(&o, p, p->th + i, j - i);
		}
		if (!rc)
			rc = write_map(&o, p, v, m, p->th[i]->pid);
		if (!rc)
			rc = write_elf_map(&o, p, v, m, p->th[i]->pid);
		free(v);
		if (rc) {
			ptc_zout_abort(o.z);
			o.z = NULL;
			ptc_out_discard(o.path);
		}
	}
	for (i = 0; i < p->n; i++) {
		ptc_out_discard(p->th[i]->spool);
		xlog_free(p->th[i]);
	}
	p->n = 0;
	pthread_mutex_unlock(&p->mu);
	if (rc && err && errlen)
		snprintf(err, errlen, "%s", o.c.err[0] ? o.c.err : "xray: writing failed");
	free(o.c.warn);
	return rc;
}
