/* ptconv convert TRACE.ptc...: traces in ptconv's own format turned into
 * the other formats.
 *
 * The records are read back with libptconv-trace and given to the writers
 * as the decoders give them branch events; the code bytes the
 * per-instruction formats decode come from the blocks the trace embeds,
 * the function symbols xray and perfetto need from the symbols it embeds
 * (at the record being written: the batches end where they change).  So
 * neither the recording nor the binaries are needed: a trace kept on its
 * own, or a slice cut by ptconv slice for a simulation point, becomes a
 * ChampSim, CBP2025, BT9 or xtrace trace, and the traces of a process's
 * threads its XRay logs and Perfetto timeline (ptconv-convert(1)).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/error.h"
#include "common/trace_event.h"
#include "ptconv/trace.h"
#include "writers/ptc_format.h"
#include "writers/writers.h"

#define BATCH 4096

int ptc_is_ptc_trace(const char *path)
{
	char magic[sizeof(PTCF_MAGIC) - 1];
	FILE *f = fopen(path, "rb");
	int yes;

	if (!f)
		return 0;
	yes = fread(magic, 1, sizeof(magic), f) == sizeof(magic) && !memcmp(magic, PTCF_MAGIC, sizeof(magic));
	fclose(f);
	return yes;
}

void ptc_branch_from_record(const struct ptc_trace_record *r, struct ptc_branch *b)
{
	b->ip = r->ip;
	b->target = r->target;
	b->time = r->time;
	b->insns = r->insns;
	b->kind = r->kind;
	b->taken = r->taken;
	b->length = r->length;
	b->flags = r->flags;
}

void ptc_gap_from_trace(const struct ptc_trace_gap *tg, struct ptc_gap *g)
{
	g->cause = tg->cause;
	g->aux_offset = tg->aux_offset;
	g->resume_offset = tg->resume_offset;
	g->time = tg->time;
	g->ip = tg->ip;
	g->resume_ip = tg->resume_ip;
	g->lost_branches = tg->lost_branches;
	g->lost_bytes = tg->lost_bytes;
	g->detail = tg->detail;
}

uint64_t ptc_record_dest(const struct ptc_trace_record *r)
{
	if (r->kind == PTC_TRACE_GAP)
		return r->target;
	if (r->kind == PTC_TRACE_FAR && !r->target)
		return r->ip + r->length;	/* syscall returns behind itself */
	return r->taken ? r->target : r->ip + r->length;
}

/* The symbols embedded in the trace, at the record being written. */
static void trace_sym(void *ctx, uint64_t addr, struct ptc_symbol *out)
{
	const struct ptc_trace_syms *ts = ctx;
	struct ptc_trace_symbol s;

	memset(out, 0, sizeof(*out));
	if (!ptc_trace_symbol(ts->t, ts->record, addr, &s))
		return;
	out->start = s.start;
	out->lo = s.lo;
	out->hi = s.hi;
	out->name = s.name;
	out->image = s.image;
	out->vaddr = s.vaddr;
}

static size_t trace_code(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	return ptc_trace_code(ctx, ip, buf, n);
}

void ptc_trace_code_reader(struct ptc_trace *t, struct ptc_code_reader *code)
{
	code->read = trace_code;
	code->ctx = t;
}

int ptc_trace_writer_begin(struct ptc_trace *t, const char *formats, struct ptc_writer_config *cfg,
			   struct ptc_code_reader *code, struct ptc_trace_syms *syms, struct ptc_writer **w,
			   struct ptc_sink *s)
{
	struct ptc_trace_info info;
	struct ptc_thread_info ti;
	int err;

	ptc_trace_info(t, &info);
	ptc_trace_code_reader(t, code);
	cfg->code = code;
	/* what the recording had that the writers need of it: its symbols
	 * (a .ptc written from it keeps them) and whether it was timed */
	syms->reader.lookup = trace_sym;
	syms->reader.ctx = syms;
	syms->t = t;
	syms->record = 0;
	cfg->symbols = &syms->reader;
	cfg->untimed = !!(ptc_trace_flags(t) & PTC_TRACE_UNTIMED);
	if ((err = ptc_writer_new(w, formats, cfg)) < 0)
		return err;
	*s = ptc_writer_sink(*w);
	ti.pid = info.pid;
	ti.tid = info.tid;
	ti.comm = info.comm;
	ti.cpu = info.cpu;
	return s->begin(s->ctx, &ti);
}

/* Trace t (opened from path) through a writer of formats into cfg's
 * directory: PTC_EXIT_OK, or the exit status of what failed (told). */
static int convert_one(const struct ptc_convert_options *opt, const char *path, struct ptc_trace *t,
		       const char *formats, struct ptc_writer_config *cfg, struct ptc_trace_record *rec,
		       struct ptc_branch *br, uint64_t *losses)
{
	struct ptc_writer *w = NULL;
	struct ptc_code_reader code;
	struct ptc_trace_syms syms;
	struct ptc_trace_info info;
	struct ptc_sink s;
	uint64_t index = 0, change, gaps = 0;
	int err, n, status = PTC_EXIT_OUTPUT;

	ptc_trace_info(t, &info);
	if ((err = ptc_trace_writer_begin(t, formats, cfg, &code, &syms, &w, &s)) < 0)
		goto werr;
	change = ptc_trace_symbols_change(t, 0);
	while ((n = ptc_trace_read(t, rec, BATCH)) > 0) {
		size_t k = 0;
		int i;
		/* branches go in runs, a gap after the run before it; a run
		 * ends where the embedded symbols change */
		for (i = 0; i < n; i++, index++) {
			struct ptc_trace_gap tg;
			struct ptc_gap g;
			if (index == change) {
				if (k && (err = s.branches(s.ctx, br, k)) < 0)
					goto werr;
				k = 0;
				syms.record = index;
				change = ptc_trace_symbols_change(t, index);
			}
			if (rec[i].kind != PTC_TRACE_GAP) {
				ptc_branch_from_record(&rec[i], &br[k++]);
				continue;
			}
			if (k && (err = s.branches(s.ctx, br, k)) < 0)
				goto werr;
			k = 0;
			if ((err = ptc_trace_gap(t, rec[i].insns, &tg)) < 0) {
				n = err;
				goto readerr;
			}
			ptc_gap_from_trace(&tg, &g);
			gaps += g.cause != PTC_GAP_START;
			if ((err = s.gap(s.ctx, &g)) < 0)
				goto werr;
		}
		if (k && (err = s.branches(s.ctx, br, k)) < 0)
			goto werr;
	}
	if (n < 0)
		goto readerr;
	if ((err = ptc_writer_tail(w, info.tail_insns)) < 0 || (err = s.end(s.ctx)) < 0)
		goto werr;
	if (ptc_writer_warnings(w)[0])
		ptc_cli_error("warning: %s", ptc_writer_warnings(w));
	if (!opt->quiet) {
		fprintf(stderr, "ptconv: %s: %" PRIu64 " branches, %" PRIu64 " instructions, %" PRIu64
			" gaps -> %s/ (%s)\n", path, info.branches, info.instructions, gaps, cfg->outdir, formats);
	}
	*losses += gaps;
	status = PTC_EXIT_OK;
	goto out;
readerr:
	/* What was read is written: the outputs end where the trace could no
	 * longer be read. */
	ptc_cli_error("%s", ptc_trace_errmsg(t)[0] ? ptc_trace_errmsg(t) : ptc_errstr(n));
	s.end(s.ctx);
	status = PTC_EXIT_INPUT;
	goto out;
werr:
	ptc_cli_error("%s", w && ptc_writer_errmsg(w)[0] ? ptc_writer_errmsg(w) : ptc_errstr(err));
out:
	ptc_writer_free(w);
	return status;
}

/* Whether the -f list has a format that writes the threads of a process
 * together (xray, perfetto). */
static int per_process(const char *formats)
{
	const char *p = formats;

	while (*p) {
		size_t len = strcspn(p, ",");
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1), p);
		if (ptc_writer_per_process(name))
			return 1;
		p += len;
		if (*p)
			p++;
	}
	return 0;
}

int ptc_convert_ptc(const struct ptc_convert_options *opt, const char *const *inputs, int n_inputs,
		    uint64_t bbv_interval)
{
	const char *formats = opt->formats ? opt->formats : "ptconv";
	struct ptc_trace_record *rec = NULL;
	struct ptc_branch *br = NULL;
	struct ptc_writer_config cfg = { 0 };
	struct ptc_trace **t;
	char dirbuf[4096], msg[1024] = "", bad[128];
	uint64_t losses = 0;
	int err, i, status = PTC_EXIT_OUTPUT;

	if (ptc_writer_check_list(formats, bad, sizeof(bad)) < 0) {
		/* cbpexp and text are the Intel PT pipeline's own: cbpexp
		 * names the recording's images, text is what ptconv dump
		 * prints */
		const struct ptc_writer_format *const *all = ptc_writer_formats();
		char names[200] = "";
		size_t k, len = 0;
		for (k = 0; all[k] && len < sizeof(names); k++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", k ? ", " : "",
						all[k]->name);
		ptc_cli_error("-f %s: a ptconv trace converts to %s (ptconv dump lists it as text)", bad,
			      names);
		return PTC_EXIT_USAGE;
	}
	t = calloc((size_t)n_inputs, sizeof(*t));
	if (!t) {
		ptc_cli_error("out of memory");
		return PTC_EXIT_OUTPUT;
	}
	/* all opened first: a bad one stops the conversion before any file */
	for (i = 0; i < n_inputs; i++) {
		struct ptc_trace_info a, b;
		int k;

		t[i] = ptc_trace_open_msg(inputs[i], &err, msg, sizeof(msg));
		if (!t[i]) {
			ptc_cli_error("%s", msg[0] ? msg : ptc_errstr(err));
			status = PTC_EXIT_INPUT;
			goto out;
		}
		/* the files are named after the thread: two of one thread
		 * would write the same ones */
		ptc_trace_info(t[i], &a);
		for (k = 0; k < i; k++) {
			ptc_trace_info(t[k], &b);
			if (a.tid == b.tid) {
				ptc_cli_error("%s and %s are traces of the same thread (%u): convert them "
					      "one at a time", inputs[k], inputs[i], a.tid);
				status = PTC_EXIT_USAGE;
				goto out;
			}
		}
	}
	cfg.outdir = opt->outdir;
	if (!cfg.outdir) {
		snprintf(dirbuf, sizeof(dirbuf), "%s.ptconv", inputs[0]);
		cfg.outdir = dirbuf;
	}
	/* only what a killed run left goes: the directory may hold the
	 * other threads' traces of the recording, which a reconversion keeps */
	{
		char why[4400];
		int old, tmp;
		if (ptc_out_prepare(cfg.outdir, inputs[0], 1, &old, &tmp, why, sizeof(why)) < 0) {
			ptc_cli_error("%s", why);
			goto out;
		}
	}
	cfg.bbv_interval = bbv_interval;
	cfg.threads = opt->jobs;
	if (per_process(formats) && ptc_writer_procs_new(&cfg.procs) < 0) {
		ptc_cli_error("out of memory");
		goto out;
	}
	rec = malloc(BATCH * sizeof(*rec));
	br = malloc(BATCH * sizeof(*br));
	if (!rec || !br) {
		ptc_cli_error("out of memory");
		goto out;
	}
	for (i = 0; i < n_inputs; i++) {
		struct ptc_trace_info info;
		ptc_trace_info(t[i], &info);
		if (info.version < 3 && cfg.procs)
			ptc_cli_error("warning: %s: a trace of format version %u holds no symbols: its "
				      "functions are named by address", inputs[i], info.version);
		if ((status = convert_one(opt, inputs[i], t[i], formats, &cfg, rec, br, &losses)) != PTC_EXIT_OK)
			goto out;
	}
	status = PTC_EXIT_OUTPUT;
	if (cfg.procs && ptc_writer_procs_finish(cfg.procs, msg, sizeof(msg)) < 0) {
		/* the files threads share (xray, perfetto), once all ended */
		ptc_cli_error("%s", msg);
		goto out;
	}
	status = losses && opt->strict ? PTC_EXIT_GAPS : PTC_EXIT_OK;
out:
	for (i = 0; i < n_inputs; i++)
		ptc_trace_close(t[i]);
	free(t);
	ptc_writer_procs_free(cfg.procs);
	free(rec);
	free(br);
	return status;
}
