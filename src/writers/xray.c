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
#include "writers/calls.h"
#include "writers/fmt.h"
#include "writers/wutil.h"

#define XRAY_VERSION 3
#define XRAY_FDR 1
#define XRAY_HZ 1000000000ull
#define FID_LIMIT (1u << 28)	/* function ids have 28 bits */

/* Function record types and metadata record kinds of the FDR format. */
enum { R_ENTER = 0, R_EXIT = 1, R_TAIL_EXIT = 2 };
enum { M_NEW_BUFFER = 0, M_NEW_CPU = 2, M_TSC_WRAP = 3, M_WALLCLOCK = 4, M_CUSTOM = 5, M_EXTENTS = 7,
       M_PID = 9 };

/* The custom event at the start of each buffer of a log of several
 * threads (write_buffer()). */
static const char process_start[] = "ptconv: the process's first record";

/* What a thread's log needs of it, kept until ptc_writer_procs_finish. */
struct xlog {
	struct ptc_procs_part id;	/* first: the procs list sorts by it */
	char spool[4096];	/* its records go to this name's temporary */
	uint64_t bytes;		/* spooled */
	uint64_t first;		/* TSC of its first record (the NewCPUId base) */
	uint32_t first_cpu;	/* the CPU of its first record (0: not known) */
	int have_first;
	int done;		/* its writer finished: the spool is complete */
	int own_log;		/* xray:threads: a log of its own */
	struct ptc_funcs fn;	/* the thread's functions, by its numbers */
};

/* A thread's writer. */
struct xthread {
	struct xlog *log;
	struct ptc_wctx *c;
	struct ptc_zout *z;
	uint64_t last;		/* TSC of the last record */
	uint32_t cpu;		/* the CPU the thread runs on now (ptc_writer_cpu) */
	uint32_t cpu_told;	/* the CPU the log says now */
	struct ptc_calls calls;
};

void ptc_xray_part_free(void *part)
{
	struct xlog *x = part;

	ptc_out_discard(x->spool);
	ptc_funcs_free(&x->fn);
	free(x);
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
		x->log->first_cpu = x->cpu_told = x->cpu;
	}
	if (time < x->last)
		time = x->last;
	if (x->cpu != x->cpu_told) {
		/* the thread moved: a NewCPUId record, whose TSC is the base
		 * of the deltas after it */
		metadata(rec, M_NEW_CPU);
		ptc_put16(rec + 1, (uint16_t)x->cpu);
		ptc_put64(rec + 3, time);
		if ((err = spool(x, rec, 16)) < 0)
			return err;
		x->cpu_told = x->cpu;
		x->last = time;
	}
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

static int nomem(struct xthread *x)
{
	return ptc_wfail(x->c, ptc_err_nomem, "%s: out of memory (or more than %u functions)",
			 x->log->spool, FID_LIMIT - 1);
}

static int x_enter(void *ctx, uint32_t fn, size_t depth, uint64_t time)
{
	(void)depth;
	return record(ctx, R_ENTER, fn, time);
}

static int x_leave(void *ctx, uint32_t fn, size_t depth, uint64_t time, enum ptc_calls_how how)
{
	(void)depth;
	return record(ctx, how == PTC_CALLS_TAIL ? R_TAIL_EXIT : R_EXIT, fn, time);
}

static int xray_cpu(void *st, uint32_t cpu)
{
	struct xthread *x = st;

	x->cpu = cpu;
	return 0;
}

static int calls_error(struct xthread *x, int err)
{
	return err == -ptc_err_nomem ? nomem(x) : err;
}

static int xray_branches(void *st, const struct ptc_branch *b, size_t n)
{
	struct xthread *x = st;
	int err;

	if ((err = ptc_calls_branches(&x->calls, b, n)) < 0)
		return calls_error(x, err);
	return 0;
}

/* A loss: what happened meanwhile is unknown, so every open frame is
 * left here, explicitly (the returns after the loss that would have left
 * them leave nothing). */
static int xray_gap(void *st, const struct ptc_gap *g)
{
	struct xthread *x = st;

	return calls_error(x, ptc_calls_gap(&x->calls, g->time));
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
	ptc_calls_fini(&x->calls);
	free(x);
}

static int xray_open(void **st, const struct ptc_writer_config *cfg, const struct ptc_thread_info *t,
		     struct ptc_wctx *c)
{
	struct ptc_calls_sink sink = { x_enter, x_leave, NULL };
	struct xthread *x;
	struct xlog *log;
	int err;

	if ((err = ptc_procs_check(cfg, t, c, "xray")) < 0)
		return err;
	x = calloc(1, sizeof(*x));
	log = calloc(1, sizeof(*log));
	sink.ctx = x;
	if (!x || !log || ptc_calls_init(&x->calls, &log->fn, cfg->symbols, FID_LIMIT, cfg->untimed, &sink) < 0) {
		free(x);
		free(log);
		return -ptc_err_nomem;
	}
	x->log = log;
	x->c = c;
	log->id.pid = t ? t->pid : 0;
	log->id.tid = t ? t->tid : 0;
	log->own_log = cfg->xray_threads;
	if ((err = ptc_procs_spool(cfg, c, PTC_PROCS_XRAY, "xray", &log->id, log->spool, sizeof(log->spool),
				   &x->z)) < 0) {
		xray_free(x);
		free(log);
		return err;
	}
	*st = x;
	return 0;
}

const struct ptc_fmt_ops ptc_fmt_xray = {
	{ "xray", "LLVM XRay FDR log per process and its instrumentation map (xray.PID.fdr, .map.yaml)", 0 },
	xray_open, xray_branches, xray_gap, xray_finish, xray_free, xray_suspend, NULL, NULL, xray_cpu,
	NULL, NULL, NULL,	/* encoding ahead: it wants the records */
};

/* ---- the per-process files ---- */

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
	const struct ptc_func *x = *(struct ptc_func *const *)a, *y = *(struct ptc_func *const *)b;
	int c;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if ((c = cmp_str(x->image, y->image)))
		return c;
	return cmp_str(x->name, y->name);
}

/* Number the functions of threads th[0..n) (one process) from 1, the
 * same function of two threads the same; *count gets how many. */
static int number_functions(struct xlog **th, size_t n, struct ptc_func ***sorted, size_t *count)
{
	size_t total = 0, i, k, m = 0;
	struct ptc_func **v;
	uint32_t id = 0;

	for (i = 0; i < n; i++)
		total += th[i]->fn.n;
	v = malloc((total ? total : 1) * sizeof(*v));
	if (!v)
		return -ptc_err_nomem;
	for (i = 0; i < n; i++)
		for (k = 0; k < th[i]->fn.n; k++)
			v[m++] = &th[i]->fn.v[k];
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
 * process's function ids.  start: in a log of several threads, the time of
 * the process's first record, for a custom event before the thread's
 * records; 0 none.  (llvm-xray account takes the first record it reads,
 * of whichever thread its hash table gives first, for the earliest of
 * the log and refuses any earlier one after it: with that event first in
 * every buffer, the first record it reads is the earliest.) */
static int write_buffer(struct out *o, const struct xlog *x, uint64_t start)
{
	uint8_t pre[6 * 16], buf[65536];
	size_t npre = 5 * 16, event = start ? 16 + sizeof(process_start) - 1 : 0;
	char tmp[4200];
	FILE *f;
	size_t got, pos = 0, have = 0;
	uint64_t left = x->bytes;
	int err;

	/* BufferExtents (the bytes that follow it), NewBuffer, WallClockTime
	 * (the first record's perf time, since boot), PID, NewCPUId (the CPU
	 * of the first record, 0 when not known; the TSC base) */
	metadata(pre, M_EXTENTS);
	ptc_put64(pre + 1, 4 * 16 + event + x->bytes);
	metadata(pre + 16, M_NEW_BUFFER);
	ptc_put32(pre + 17, x->id.tid);
	metadata(pre + 32, M_WALLCLOCK);
	ptc_put64(pre + 33, x->first / XRAY_HZ);
	ptc_put32(pre + 41, (uint32_t)(x->first % XRAY_HZ));
	metadata(pre + 48, M_PID);
	ptc_put32(pre + 49, x->id.pid);
	metadata(pre + 64, M_NEW_CPU);
	ptc_put16(pre + 65, (uint16_t)x->first_cpu);
	ptc_put64(pre + 67, x->first);
	if (start) {
		metadata(pre + 80, M_CUSTOM);
		ptc_put32(pre + 81, (uint32_t)(sizeof(process_start) - 1));
		ptc_put64(pre + 85, start);
		npre += 16;
	}
	if ((err = out_write(o, pre, npre)) < 0 ||
	    (start && (err = out_write(o, process_start, sizeof(process_start) - 1)) < 0))
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
			if (local >= x->fn.n)
				break;
			ptc_put32(buf + pos, (w & 0xf) | x->fn.v[local].id << 4);
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
		return ptc_wfail(&o->c, ptc_err_io, "%s: the spooled records of thread %u end early", tmp, x->id.tid);
	return 0;
}

/* The log of threads th[0..n), xray.PID.fdr, or for one thread of its
 * own xray.PID.TID.fdr. */
static int write_log(struct out *o, const struct ptc_writer_procs *p, struct xlog **th, size_t n)
{
	uint8_t head[32];
	uint64_t start = UINT64_MAX;
	size_t i, logged = 0;
	int err, len;

	if (n == 1 && th[0]->own_log)
		len = snprintf(o->path, sizeof(o->path), "%s/xray.%u.%u.fdr", p->outdir, th[0]->id.pid,
			       th[0]->id.tid);
	else
		len = snprintf(o->path, sizeof(o->path), "%s/xray.%u.fdr", p->outdir, th[0]->id.pid);
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
	for (i = 0; i < n; i++) {
		if (th[i]->bytes && th[i]->first < start)
			start = th[i]->first;
		logged += th[i]->bytes > 0;
	}
	for (i = 0; i < n; i++)
		if (th[i]->bytes && (err = write_buffer(o, th[i], logged > 1 ? start : 0)) < 0)
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

/* The instrumentation map: one entry per function, its id, address and
 * name. */
static int write_map(struct out *o, const struct ptc_writer_procs *p, struct ptc_func **v, size_t m,
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
		const struct ptc_func *f = v[i];
		char name[4200];

		if (i && v[i - 1]->id == f->id)
			continue;
		ptc_func_name(f, name, sizeof(name));
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
static int write_elf_map(struct out *o, const struct ptc_writer_procs *p, struct ptc_func **v, size_t m,
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
		ptc_func_name(v[i], name, sizeof(name));
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
		ptc_func_name(v[i], name, sizeof(name));
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
		ptc_func_name(v[i], name, sizeof(name));
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

int ptc_xray_procs_finish(struct ptc_writer_procs *p, struct ptc_wctx *c)
{
	struct xlog **th = (struct xlog **)p->list[PTC_PROCS_XRAY].v;
	size_t n = p->list[PTC_PROCS_XRAY].n, i, j;
	struct out o;
	int rc = 0;

	memset(&o, 0, sizeof(o));
	ptc_procs_sort(p, PTC_PROCS_XRAY);
	for (i = 0; i < n && !rc; i = j) {
		struct ptc_func **v = NULL;
		size_t m = 0, k;
		uint64_t bytes;

		for (j = i; j < n && th[j]->id.pid == th[i]->id.pid; j++)
			;
		for (k = i, bytes = 0; k < j; k++) {
			if (!th[k]->done)
				break;
			bytes += th[k]->bytes;
		}
		/* a thread's writer did not finish (its error was told), or no
		 * thread of the process has a record: no files */
		if (k < j || !bytes)
			continue;
		if ((rc = number_functions(th + i, j - i, &v, &m)) < 0) {
			snprintf(o.c.err, sizeof(o.c.err), "xray.%u: %s", th[i]->id.pid,
				 rc == -ptc_err_overflow ? "more functions than 28-bit ids hold" :
							   "out of memory");
			break;
		}
		if (th[i]->own_log) {
			for (k = i; k < j && !rc; k++)
				if (th[k]->bytes)	/* (a thread without records has no log) */
					rc = write_log(&o, p, th + k, 1);
		} else {
			rc = write_log(&o, p, th + i, j - i);
		}
		if (!rc)
			rc = write_map(&o, p, v, m, th[i]->id.pid);
		if (!rc)
			rc = write_elf_map(&o, p, v, m, th[i]->id.pid);
		free(v);
		if (rc) {
			ptc_zout_abort(o.z);
			o.z = NULL;
			ptc_out_discard(o.path);
		}
	}
	if (rc)
		snprintf(c->err, sizeof(c->err), "%s", o.c.err[0] ? o.c.err : "xray: writing failed");
	free(o.c.warn);
	return rc;
}
