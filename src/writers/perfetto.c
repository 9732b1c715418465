/* Perfetto traces (-f perfetto): the calls and returns of the threads as
 * slices on a timeline that ui.perfetto.dev opens, in Perfetto's protobuf
 * trace format (ptconv-formats(5), "perfetto"; the messages used are in
 * perfetto_trace.proto, encoded with protobuf-c).
 *
 * Each thread's writer follows its calls (calls.h, the rules of -f xray)
 * and spools its packets, a packet sequence of its own (its TID is the
 * sequence id), under a temporary name: first its track (a
 * TrackDescriptor with the thread's pid, tid and name, and the sequence's
 * defaults pointing its events at that track), then one TrackEvent per
 * slice begin and end.  A function's name is given once per thread, in
 * the packet of its first slice (InternedData), and referred to by its
 * number after that, so that a slice begin takes some 20 bytes and an
 * end 15.  Once the conversion is over, ptc_writer_procs_finish() writes
 * perfetto.pftrace: a process track per process (its pid and name), then
 * the threads' packets, in (pid, tid) order: the bytes depend on the
 * threads' events alone.
 *
 * Filters that keep a large recording loadable: perfetto:min-dur=N leaves
 * out the slices shorter than N (they are known at their end, so a slice
 * begin waits until its slice has lasted N; its parents have lasted at
 * least as long, so the begins still come in order), perfetto:max-depth=N
 * the slices nested deeper than N; --time cuts the recording itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers/calls.h"
#include "writers/fmt.h"
#include "writers/perfetto_trace.pb-c.h"
#include "writers/wutil.h"

#define SEQ_CLEARED 1		/* SequenceFlags: incremental state cleared */
#define SEQ_NEEDS_STATE 2	/* ... the packet uses it (interned names) */

/* What the file needs of a thread, kept until ptc_writer_procs_finish. */
struct pfpart {
	struct ptc_procs_part id;	/* first: the procs list sorts by it */
	char *comm;		/* NULL when not known */
	char spool[4096];	/* its packets go to this name's temporary */
	uint64_t bytes;		/* spooled */
	int done;		/* its writer finished: the spool is complete */
};

/* An open frame as the slices see it. */
struct pframe {
	uint32_t fn;
	uint64_t start;
};

/* Packets are packed into buf, which goes to the spool when full. */
struct pbuf {
	uint8_t *p;
	size_t n, cap;
};

struct pwriter {
	struct pfpart *part;
	struct ptc_wctx *c;
	struct ptc_zout *z;
	struct ptc_calls calls;
	struct ptc_funcs fns;
	uint64_t min_dur;	/* perfetto:min-dur, 0: every slice */
	uint32_t max_depth;	/* perfetto:max-depth, 0: any depth */
	struct pframe *st;
	size_t depth, capst;
	size_t begun;		/* the frames at the bottom whose begins are written */
	uint8_t *named;		/* per function: its name was given */
	size_t capnamed;
	const char *lost;	/* the cause of the gap being handled */
	struct pbuf buf;
};

void ptc_perfetto_part_free(void *part)
{
	struct pfpart *x = part;

	ptc_out_discard(x->spool);
	free(x->comm);
	free(x);
}

/* ---- the thread's writer ---- */

static int nomem(struct pwriter *w)
{
	return ptc_wfail(w->c, ptc_err_nomem, "%s: out of memory", w->part->spool);
}

/* Room in buf for len more bytes. */
static int grow(struct pwriter *w, size_t len)
{
	size_t cap = w->buf.cap ? w->buf.cap : 65536;
	uint8_t *n;

	while (cap < w->buf.n + len)
		cap *= 2;
	if (!(n = realloc(w->buf.p, cap)))
		return nomem(w);
	w->buf.p = n;
	w->buf.cap = cap;
	return 0;
}

static int flush(struct pwriter *w)
{
	int err;

	if (!w->buf.n)
		return 0;
	if ((err = ptc_wfile_resume(w->c, &w->z, w->part->spool)) < 0)
		return err;
	if (ptc_zout_write(w->z, w->buf.p, w->buf.n) < 0)
		return ptc_wfail(w->c, ptc_err_io, "%s: write: %s", w->part->spool,
				 strerror(ptc_zout_errno(w->z)));
	w->part->bytes += w->buf.n;
	w->buf.n = 0;
	return 0;
}

/* One packet of the thread's sequence, as an element of the Trace (its
 * field 1), to buf and, when that is full, to the spool. */
static int put(struct pwriter *w, Ptcpf__TracePacket *pk)
{
	Ptcpf__Trace tr = PTCPF__TRACE__INIT;
	Ptcpf__TracePacket *one[1] = { pk };
	size_t len;
	int err;

	pk->has_trusted_packet_sequence_id = 1;
	pk->trusted_packet_sequence_id = w->part->id.tid;
	tr.n_packet = 1;
	tr.packet = one;
	len = ptcpf__trace__get_packed_size(&tr);
	if (w->buf.n + len > w->buf.cap && (err = grow(w, len)) < 0)
		return err;
	w->buf.n += ptcpf__trace__pack(&tr, w->buf.p + w->buf.n);
	return w->buf.n >= 60000 ? flush(w) : 0;
}

static uint64_t thread_uuid(uint32_t pid, uint32_t tid)
{
	return 1ull << 62 | (uint64_t)pid << 32 | tid;
}

static uint64_t process_uuid(uint32_t pid)
{
	return 1ull << 63 | pid;
}

/* The sequence's start: its state cleared, its events' track by default
 * the thread's, and that track. */
static int start_sequence(struct pwriter *w)
{
	Ptcpf__TracePacket pk = PTCPF__TRACE_PACKET__INIT;
	Ptcpf__TracePacketDefaults def = PTCPF__TRACE_PACKET_DEFAULTS__INIT;
	Ptcpf__TrackEventDefaults tdef = PTCPF__TRACK_EVENT_DEFAULTS__INIT;
	Ptcpf__TrackDescriptor td = PTCPF__TRACK_DESCRIPTOR__INIT;
	Ptcpf__ThreadDescriptor thd = PTCPF__THREAD_DESCRIPTOR__INIT;
	int err;

	tdef.has_track_uuid = 1;
	tdef.track_uuid = thread_uuid(w->part->id.pid, w->part->id.tid);
	def.track_event_defaults = &tdef;
	pk.trace_packet_defaults = &def;
	pk.has_sequence_flags = 1;
	pk.sequence_flags = SEQ_CLEARED;
	if ((err = put(w, &pk)) < 0)
		return err;
	pk = (Ptcpf__TracePacket)PTCPF__TRACE_PACKET__INIT;
	td.has_uuid = 1;
	td.uuid = tdef.track_uuid;
	thd.has_pid = thd.has_tid = 1;
	thd.pid = (int32_t)w->part->id.pid;
	thd.tid = (int32_t)w->part->id.tid;
	thd.thread_name = w->part->comm;
	td.thread = &thd;
	pk.track_descriptor = &td;
	return put(w, &pk);
}

/* A slice event of type at time: a begin names function fn (given its
 * name the first time), an end at a loss (lost) says so. */
static int event(struct pwriter *w, Ptcpf__TrackEvent__Type type, uint32_t fn, int lost, uint64_t time)
{
	Ptcpf__TracePacket pk = PTCPF__TRACE_PACKET__INIT;
	Ptcpf__TrackEvent ev = PTCPF__TRACK_EVENT__INIT;
	Ptcpf__InternedData in = PTCPF__INTERNED_DATA__INIT;
	Ptcpf__EventName en = PTCPF__EVENT_NAME__INIT, *ens[1] = { &en };
	Ptcpf__DebugAnnotation da = PTCPF__DEBUG_ANNOTATION__INIT, *das[1] = { &da };
	char name[4200];

	pk.has_timestamp = 1;
	pk.timestamp = time;
	ev.has_type = 1;
	ev.type = type;
	if (type == PTCPF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN) {
		ev.has_name_iid = 1;
		ev.name_iid = (uint64_t)fn + 1;
		pk.has_sequence_flags = 1;
		pk.sequence_flags = SEQ_NEEDS_STATE;
		if (fn >= w->capnamed) {
			size_t cap = w->capnamed ? w->capnamed : 256;
			uint8_t *n;
			while (cap <= fn)
				cap *= 2;
			if (!(n = realloc(w->named, cap)))
				return nomem(w);
			memset(n + w->capnamed, 0, cap - w->capnamed);
			w->named = n;
			w->capnamed = cap;
		}
		if (!w->named[fn]) {
			w->named[fn] = 1;
			ptc_func_demangled_name(&w->fns.v[fn], name, sizeof(name));
			en.has_iid = 1;
			en.iid = ev.name_iid;
			en.name = name;
			in.n_event_names = 1;
			in.event_names = ens;
			pk.interned_data = &in;
		}
	} else if (type == PTCPF__TRACK_EVENT__TYPE__TYPE_SLICE_END && lost) {
		da.name = "closed at a loss";
		da.string_value = (char *)w->lost;
		ev.n_debug_annotations = 1;
		ev.debug_annotations = das;
	}
	pk.track_event = &ev;
	return put(w, &pk);
}

/* The frames up to depth d that have lasted min_dur by time (and are
 * not nested deeper than max_depth) get their begins.  A frame's parents
 * began before it: the frames with begins are the bottom of the stack,
 * and a begin written late still comes after every event written before
 * (those of frames that ended before it began). */
static int begin_lasting(struct pwriter *w, size_t d, uint64_t time)
{
	int err;

	while (w->begun <= d && w->begun < w->depth) {
		const struct pframe *f = &w->st[w->begun];
		if (time - f->start < w->min_dur || (w->max_depth && w->begun >= w->max_depth))
			break;
		if ((err = event(w, PTCPF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, f->fn, 0, f->start)) < 0)
			return err;
		w->begun++;
	}
	return 0;
}

static int p_enter(void *ctx, uint32_t fn, size_t depth, uint64_t time)
{
	struct pwriter *w = ctx;

	if (depth >= w->capst) {
		size_t cap = w->capst ? w->capst * 2 : 256;
		struct pframe *n = realloc(w->st, cap * sizeof(*n));
		if (!n)
			return nomem(w);
		w->st = n;
		w->capst = cap;
	}
	w->st[depth].fn = fn;
	w->st[depth].start = time;
	w->depth = depth + 1;
	return begin_lasting(w, depth, time);
}

static int p_leave(void *ctx, uint32_t fn, size_t depth, uint64_t time, enum ptc_calls_how how)
{
	struct pwriter *w = ctx;
	int err;

	(void)fn;
	if ((err = begin_lasting(w, depth, time)) < 0)
		return err;
	w->depth = depth;
	if (w->begun <= depth)
		return 0;
	w->begun = depth;
	return event(w, PTCPF__TRACK_EVENT__TYPE__TYPE_SLICE_END, 0, how == PTC_CALLS_LOST, time);
}

static int calls_error(struct pwriter *w, int err)
{
	return err == -ptc_err_nomem ? nomem(w) : err;
}

static int pf_branches(void *st, const struct ptc_branch *b, size_t n)
{
	struct pwriter *w = st;

	return calls_error(w, ptc_calls_branches(&w->calls, b, n));
}

/* A loss: the open slices end there, each saying so ("closed at a loss":
 * the cause), and an instant event "trace lost: CAUSE" marks the place
 * (a stream's start is no loss: it ends the slices, if any, all the
 * same, as the calls after it are not known to be theirs). */
static int pf_gap(void *st, const struct ptc_gap *g)
{
	struct pwriter *w = st;
	Ptcpf__TracePacket pk = PTCPF__TRACE_PACKET__INIT;
	Ptcpf__TrackEvent ev = PTCPF__TRACK_EVENT__INIT;
	char name[96];
	int err;

	w->lost = ptc_gap_cause_name(g->cause);
	err = calls_error(w, ptc_calls_gap(&w->calls, g->time));
	w->lost = NULL;
	if (err < 0 || g->cause == PTC_GAP_START)
		return err;
	snprintf(name, sizeof(name), "trace lost: %s", ptc_gap_cause_name(g->cause));
	pk.has_timestamp = 1;
	pk.timestamp = ptc_calls_time(&w->calls, g->time);
	ev.has_type = 1;
	ev.type = PTCPF__TRACK_EVENT__TYPE__TYPE_INSTANT;
	ev.name = name;
	pk.track_event = &ev;
	return put(w, &pk);
}

static int pf_finish(void *st)
{
	struct pwriter *w = st;
	int err;

	/* the slices still open at the end stay open (a trace cut short):
	 * those that lasted min_dur by then begin */
	if (w->depth && (err = begin_lasting(w, w->depth - 1, ptc_calls_now(&w->calls))) < 0)
		return err;
	if ((err = flush(w)) < 0 || (err = ptc_wfile_close(w->c, &w->z, w->part->spool)) < 0)
		return err;
	w->part->done = 1;
	return 0;
}

static int pf_suspend(void *st)
{
	struct pwriter *w = st;
	int err;

	if ((err = flush(w)) < 0)
		return err;
	free(w->buf.p);
	w->buf.p = NULL;
	w->buf.cap = 0;
	return ptc_wfile_close(w->c, &w->z, w->part->spool);
}

/* The writer goes; what the file needs of the thread stays in procs. */
static void pf_free(void *st)
{
	struct pwriter *w = st;

	ptc_zout_abort(w->z);
	ptc_calls_fini(&w->calls);
	ptc_funcs_free(&w->fns);
	free(w->st);
	free(w->named);
	free(w->buf.p);
	free(w);
}

static int pf_open(void **st, const struct ptc_writer_config *cfg, const struct ptc_thread_info *t,
		   struct ptc_wctx *c)
{
	struct ptc_calls_sink sink = { p_enter, p_leave, NULL };
	struct pwriter *w;
	struct pfpart *part;
	int err;

	if ((err = ptc_procs_check(cfg, t, c, "perfetto")) < 0)
		return err;
	w = calloc(1, sizeof(*w));
	part = calloc(1, sizeof(*part));
	sink.ctx = w;
	if (!w || !part || ptc_calls_init(&w->calls, &w->fns, cfg->symbols, UINT32_MAX, cfg->untimed, &sink) < 0 ||
	    (t && t->comm && !(part->comm = strdup(t->comm)))) {
		if (w)
			ptc_calls_fini(&w->calls);
		free(w);
		free(part);
		return -ptc_err_nomem;
	}
	w->part = part;
	w->c = c;
	w->min_dur = cfg->perfetto_min_dur;
	w->max_depth = cfg->perfetto_max_depth;
	part->id.pid = t ? t->pid : 0;
	part->id.tid = t ? t->tid : 0;
	if ((err = ptc_procs_spool(cfg, c, PTC_PROCS_PERFETTO, "perfetto", &part->id, part->spool,
				   sizeof(part->spool), &w->z)) < 0) {
		free(part->comm);
		free(part);
		pf_free(w);
		return err;
	}
	/* (from here on, part is procs') */
	if ((err = start_sequence(w)) < 0) {
		pf_free(w);
		return err;
	}
	*st = w;
	return 0;
}

const struct ptc_fmt_ops ptc_fmt_perfetto = {
	{ "perfetto", "Perfetto timeline of the function calls per thread (perfetto.pftrace)", 0 },
	pf_open, pf_branches, pf_gap, pf_finish, pf_free, pf_suspend, NULL, NULL,
	NULL,	/* cpu: tracks are threads */
	NULL, NULL, NULL,	/* encoding ahead: it wants the records */
};

/* ---- the file ---- */

struct pfout {
	struct ptc_wctx *c;
	struct ptc_zout *z;
	char path[4096];
};

static int out_write(struct pfout *o, const void *p, size_t n)
{
	if (ptc_zout_write(o->z, p, n) < 0)
		return ptc_wfail(o->c, ptc_err_io, "%s: write: %s", o->path, strerror(ptc_zout_errno(o->z)));
	return 0;
}

/* Process pid's track: its pid and name (its main thread's, else its
 * first thread's). */
static int write_process(struct pfout *o, struct pfpart **th, size_t n)
{
	Ptcpf__Trace tr = PTCPF__TRACE__INIT;
	Ptcpf__TracePacket pk = PTCPF__TRACE_PACKET__INIT, *one[1] = { &pk };
	Ptcpf__TrackDescriptor td = PTCPF__TRACK_DESCRIPTOR__INIT;
	Ptcpf__ProcessDescriptor pd = PTCPF__PROCESS_DESCRIPTOR__INIT;
	uint8_t buf[512];
	size_t i, len;

	pd.has_pid = 1;
	pd.pid = (int32_t)th[0]->id.pid;
	pd.process_name = th[0]->comm;
	for (i = 0; i < n; i++)
		if (th[i]->id.tid == th[i]->id.pid && th[i]->comm)
			pd.process_name = th[i]->comm;
	td.has_uuid = 1;
	td.uuid = process_uuid(th[0]->id.pid);
	td.process = &pd;
	pk.track_descriptor = &td;
	pk.has_trusted_packet_sequence_id = 1;
	pk.trusted_packet_sequence_id = th[0]->id.pid;
	tr.n_packet = 1;
	tr.packet = one;
	/* (a comm is at most 16 bytes, the packet far below buf's size) */
	if (ptcpf__trace__get_packed_size(&tr) > sizeof(buf))
		return ptc_wfail(o->c, ptc_err_invalid, "%s: process %u: name too long", o->path, th[0]->id.pid);
	len = ptcpf__trace__pack(&tr, buf);
	return out_write(o, buf, len);
}

/* A thread's spooled packets, as they are. */
static int copy_spool(struct pfout *o, const struct pfpart *x)
{
	uint8_t buf[65536];
	char tmp[4200];
	uint64_t left = x->bytes;
	FILE *f;
	int err = 0;

	if (ptc_out_tmpname(tmp, sizeof(tmp), x->spool) < 0 || !(f = fopen(tmp, "rb")))
		return ptc_wfail(o->c, ptc_err_io, "%s: %s", tmp, strerror(errno));
	while (left && !err) {
		size_t got = fread(buf, 1, left < sizeof(buf) ? (size_t)left : sizeof(buf), f);
		if (!got)
			break;
		err = out_write(o, buf, got);
		left -= got;
	}
	fclose(f);
	if (!err && left)
		err = ptc_wfail(o->c, ptc_err_io, "%s: the spooled packets of thread %u end early", tmp, x->id.tid);
	return err;
}

int ptc_perfetto_procs_finish(struct ptc_writer_procs *p, struct ptc_wctx *c)
{
	struct pfpart **th = (struct pfpart **)p->list[PTC_PROCS_PERFETTO].v;
	size_t n = p->list[PTC_PROCS_PERFETTO].n, i, j;
	struct pfout o;
	int err = 0;

	/* a thread's writer did not finish (its error was told): no file */
	for (i = 0; i < n; i++)
		if (!th[i]->done)
			return 0;
	memset(&o, 0, sizeof(o));
	o.c = c;
	ptc_procs_sort(p, PTC_PROCS_PERFETTO);
	if (snprintf(o.path, sizeof(o.path), "%s/perfetto.pftrace", p->outdir) >= (int)sizeof(o.path))
		return ptc_wfail(c, ptc_err_invalid, "perfetto: output path too long");
	if ((err = ptc_wfile_open(c, &o.z, o.path)) < 0)
		return err;
	for (i = 0; i < n && !err; i = j) {
		for (j = i; j < n && th[j]->id.pid == th[i]->id.pid; j++)
			;
		err = write_process(&o, th + i, j - i);
	}
	for (i = 0; i < n && !err; i++)
		err = copy_spool(&o, th[i]);
	if (!err)
		return ptc_wfile_finish(c, &o.z, o.path);
	ptc_zout_abort(o.z);
	ptc_out_discard(o.path);
	return err;
}
