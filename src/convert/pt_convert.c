/* The Intel PT conversion pipeline (see pt_convert.h).
 *
 * 1. One pass over the recording: sideband records into the sideband model,
 *    AUXTRACE pieces into per-queue lists (their bytes stay in the file and
 *    are read when decoded; from a pipe they are kept in memory).
 * 2. Each queue's pieces, sorted by offset, form contiguous runs; a run ends
 *    where bytes are missing or where an AUX record says data was lost.
 * 3. The queues are decoded interleaved in time order, so that a thread that
 *    moves between CPUs gets its branches in the order it executed them.
 * 4. Each thread's branches go to its writers; a summary closes the job.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/json.h"
#include "decoders/intel_pt/engine.h"
#include "convert/pt_convert.h"
#include "decoders/intel_pt/ptdec.h"
#include "decoders/intel_pt/tnt_path.h"
#include "images/image.h"
#include "images/locate.h"
#include "input/perf_reader.h"
#include "sideband/sideband.h"
#include "sideband/tracepoint.h"
#include "writers/cbpexp.h"
#include "writers/text.h"
#include "writers/writers.h"

enum { FMT_CBPEXP = 1, FMT_TEXT = 2 };

struct piece {
	uint64_t offset, size, file_off;
	uint64_t claimed;	/* > size: the record's size, of which the file ends
				 * before size bytes (the rest is a counted loss) */
	uint8_t *data;		/* pipe input: the bytes */
	int lost;		/* the record's data was in damaged input: none here */
};

#define DAMAGED_WHY "trace data lost in damaged input (skipped by the reader)"


struct run {
	uint64_t start, end;	/* stream offsets */
	uint64_t lost;		/* bytes missing before it (UINT64_MAX unknown) */
	const char *why;
};

struct susp {
	uint64_t s, e;
};

/* A window of a queue's stream: about WINDOW bytes that end at a PSB,
 * decoded as one piece.  With -j, the windows of a run are planned ahead
 * and decoded ahead by the workers (ptdec.h, ptc_pt_decode_ahead). */
enum { W_PLANNED, W_QUEUED, W_BUSY, W_DONE };

struct window {
	struct window *next;		/* in its queue, oldest first */
	struct window *next_work;	/* in the workers' list */
	struct queue *q;
	uint64_t start, end;		/* stream offsets */
	uint8_t *buf;			/* the bytes */
	int fresh;			/* starts a run (or follows a skip): set_buffer */
	int continued;			/* the next window continues it */
	uint64_t lost;
	int cause;
	const char *why;
	char msg[160];
	int state;
	struct ptc_pt_ahead *ahead;	/* the workers' log (NULL: none) */
	int shared;			/* it has a thread traced on other CPUs too */
	/* Encoding ahead (writers.h): the tables of the writer of the thread
	 * the queue was in when the window was planned, and the encoding of
	 * the branches the log's tap took (ptc_pt_tap). */
	struct ptc_ahead_tables *tables;
	struct ptc_ahead_out *out;
	struct ptc_ahead_enc *enc;	/* the encoder of the thread decoding it ahead */
};

struct queue {
	struct susp *susp;	/* PARTIAL/COLLISION ranges (walker engine) */
	size_t nsusp;
	uint32_t idx;
	int unnumbered;		/* no record numbered it: idx is made up (add_unheld_queues) */
	int cpu;
	uint32_t tid;
	struct piece *p;
	size_t np, capp;
	struct run *runs;
	size_t nruns, cur;
	struct run tail;	/* data lost after the last run (lost 0: none) */
	/* The recording is cut short after a tail of known size: whatever
	 * came after it is lost too, an unknown amount (summary.json lists
	 * it as a loss of its own). */
	int tail_open;
	uint8_t *buf;
	uint64_t bufsize;
	uint64_t wpos;		/* walker: next stream offset to load in the current run */
	uint64_t skipped;	/* bytes before wpos left undecoded: no PSB near enough */
	int started, done;
	struct ptc_pt_engine *eng;	/* the walker or libipt (engine.h) */
	/* Its statistics once done, when a -j worker of a per-thread
	 * recording freed its engine (a recording may have thousands of
	 * threads, each its own queue: the engines of the queues being
	 * decoded are alive, not every queue's). */
	struct ptc_pt_stats st;
	struct window *wfirst, *wlast;	/* planned, not yet decoded */
	size_t nwin;
	struct window *win;		/* being decoded */
	int replaying;			/* win's log is being replayed (2: it began) */
};

struct conv;

struct cthread {
	struct ptc_pt_thread pt;
	uint64_t unwritten;		/* branches decoded after its outputs were finished */
	struct ptc_sink tee;
	struct ptc_sink *text, *cbp;
	struct conv *conv;
	/* The output-format registry's writer (ptconv, bt9, champsim, ...)
	 * and the code bytes it reads: the thread's mappings at code_time. */
	struct ptc_writer *w;
	struct ptc_sink ws;
	struct ptc_code_reader code;
	struct ptc_symbol_reader syms;	/* (xray, perfetto) the symbols of code's images */
	uint64_t code_time, code_until;
	uint64_t code_epoch;		/* changes with code_time (syms.epoch) */
	struct ptc_pt_region code_reg;
	int code_have;
	uint64_t lost_upto;	/* sideband-loss ranges up to this time got their gap */
	int lost_all;		/* the gap of a loss with no time was sent */
	int skipped;		/* --time left branches out since the writer's last one */
	uint64_t skip_next;	/* where the last branch left out leads (0 unknown) */
	char name[64];
	const char *comm;
	int wanted;
	uint64_t time_start, time_end;	/* --time */
	int finished;		/* its outputs are complete and closed (finish_thread) */
	int cpu_told;		/* the CPU its writer was told (ptc_writer_cpu), -1 none */
	int error_shown;	/* what failed in its outputs was said (output_error) */
};

struct conv {
	const struct ptc_convert_options *opt;
	const struct ptc_pt_options *pto;
	struct ptc_perf_reader *r;
	struct ptc_sideband *sb;
	struct ptc_image_cache *ic;
	int formats;
	char wformats[256];	/* the -f formats of the writer registry, comma-separated */
	int use_writer;
	struct ptc_writer_pool *pool;	/* --max-open-outputs: the writers' open outputs */
	struct ptc_writer_procs *procs;	/* the files threads share (xray, perfetto) */
	unsigned max_open;		/* its limit */
	char outdir[4096];
	/* The recording could not be read to its end: why, and the bytes
	 * after the damage (not read, so not decoded). */
	char input_error[512];
	uint64_t unread_bytes;
	uint64_t damage;	/* places where the reader skipped damaged input */
	uint64_t malformed_records;	/* sideband records that could not be parsed */
	uint64_t damaged_switches;	/* switch records their neighbours contradict */
	uint64_t damaged_aux;		/* AUX records their neighbours contradict (aux_damaged) */

	struct queue *q;
	size_t nq;

	struct cthread **th;
	size_t nth, capth;

	char **missing;		/* "file (build-id X): reason", reported once */
	size_t nmissing;

	pthread_mutex_t lock;	/* shared state, when queues decode in parallel */
	size_t next_queue;	/* -j: the next queue a worker takes */
	int worker_err;
	struct ptc_pt_params params;
	struct ptc_pt_env env;
	struct ptc_path_memo *memo;	/* the converting thread's memo of TNT paths */
	int per_thread;
	int per_cpu_out;
	int have_tsc_config, tsc_enabled;
	uint64_t orphan_gaps;
	uint64_t aux_errors;
	int fatal;

	/* attribution through the sideband */
	struct ptc_sched_switch_samples ss;
	uint64_t have_sched_switch;	/* AUXTRACE_INFO's: 1 sched_switch, 2/3 switch records */
	uint64_t *cpu_seen;		/* per CPU: latest time thread_at was asked (+1; 0 never) */
	size_t ncpu_seen;
	uint64_t lost_gaps;		/* records-lost gaps given to threads */
	struct lost_span *spans;	/* losses on a CPU whose gaps are still due */
	size_t nspans, capspans;

	/* Threads whose outputs are finished once decoding is past their
	 * exit (see finish_exited), in order of EXIT time. */
	struct exit_at { uint64_t time; uint32_t tid; } *exits;
	size_t nexits, next_exit;
	uint64_t late_branches, late_gaps;	/* for a thread already finished: not written */
	uint64_t prog_total, prog_done;		/* trace bytes, for the progress line */
	time_t prog_t0;
	uint64_t untimed_cpus;		/* CPUs whose threads cannot be told apart (no timing) */
	const struct ptc_perf_attr *pt_attr;	/* the Intel PT event (NULL: not known) */

	/* -j on the windows of one queue: workers decode them ahead */
	int ahead;			/* on */
	size_t ahead_depth;		/* windows decoded ahead at most, all queues */
	size_t inflight;		/* windows given to the workers, not yet used */
	size_t ndone;			/* of them decoded, waiting for the driver (wlock) */
	int ahead_wait;			/* wait for the workers rather than decode a window
					 * no worker took yet (tests: the same windows
					 * replayed on every run) */
	pthread_mutex_t wlock;
	pthread_cond_t work_cv, done_cv;
	struct window *work_first, *work_last;
	int work_stop;
	/* the writers' jobs (ptc_jobs: compressing a chunk), which the
	 * workers take when no window waits or the driver is behind them
	 * (ahead_worker()) */
	struct ptc_jobs jobs;
	struct ptc_job *job_first, *job_last;
	size_t detached;		/* detached jobs queued or running */
	int detached_failed;		/* one of them failed */
	struct ptc_pt_ahead **spent;	/* logs replayed, their memory for the next */
	size_t nspent;
	int encode_ahead;		/* the windows' taps go to encoders (writers.h) */
	uint32_t ahead_per_node;	/* ptc_writer_config's ahead_records_per_node */
	uint32_t chunk_records;		/* and chunk_records (0: the default) */
	struct ptc_ahead_out **outs;	/* spent encodings, for the next windows */
	size_t nouts;
	struct ptc_ahead_enc *drv_enc;	/* the driver's encoder (driver_scratch) */
	pthread_t *ahead_th;
	int nahead_th;
	/* the driver's own decoder of windows ahead, for while it waits
	 * (take_work()); NULL until then */
	struct ptc_pt_decoder *drv_scratch;
	int drv_scratch_failed;
	uint32_t *shared;		/* tids traced on more than one CPU, sorted */
	size_t nshared;
	uint64_t windows, windows_replayed, windows_shared;
	uint64_t windows_spliced, records_spliced;	/* encoded ahead (env_tap_splice) */

	/* raw mode */
	struct ptc_image **raw_img;
	int64_t *raw_bias;
	size_t nraw;
	const char **raw_path;
	uint64_t *raw_start;
};

static enum ptc_pt_engine_kind engine_kind(const struct conv *c)
{
	return c->pto->engine_libipt ? PTC_PT_ENGINE_LIBIPT : PTC_PT_ENGINE_WALKER;
}

/* ---- threads and their writers ---- */

static int tee_begin(void *ctx, const struct ptc_thread_info *ti)
{
	struct cthread *t = ctx;
	int err = 0;

	if (t->text && (err = t->text->begin(t->text->ctx, ti)) < 0)
		return err;
	if (t->cbp && (err = t->cbp->begin(t->cbp->ctx, ti)) < 0)
		return err;
	if (t->w && (err = t->ws.begin(t->ws.ctx, ti)) < 0)
		return err;
	return 0;
}

/* The writer reads code at the time of the branches it is given: feed it
 * runs of branches with the same time, so that a mapping change (exec,
 * dlopen, munmap) between two runs is seen.  The paths marked among them
 * (m, nm) go with their runs (a path's records share one time; in the
 * sparse batch it is its first record). */
/* The mappings code_read() reads from are the thread's process's at
 * code_time, and stay so for every time up to code_until (exclusive):
 * records of any time in between can share them.  (Time 0 is unknown,
 * and alone: code_until 1.) */
static int same_code_time(uint64_t time, uint64_t code_time, uint64_t code_until)
{
	return time - code_time < code_until - code_time;
}

/* The end of the run of records from b[i] on (up to b[n]) whose time is in
 * [from, until).  A path's records share its first record's time (struct
 * ptc_path), so the one each path has in a sparse batch speaks for them
 * all.  m[*j] is the first mark at or after b[i]; it becomes the first at
 * or after the end. */
static size_t same_code_run(const struct ptc_branch *b, size_t i, size_t n, const struct ptc_path_mark *m,
			    size_t nm, size_t *j, uint64_t from, uint64_t until)
{
	/* four at a time, the tests and-ed (most batches are one run: the
	 * loop runs over every record) */
	while (n - i >= 4 && (same_code_time(b[i].time, from, until) & same_code_time(b[i + 1].time, from, until) &
			      same_code_time(b[i + 2].time, from, until) & same_code_time(b[i + 3].time, from, until)))
		i += 4;
	while (i < n && same_code_time(b[i].time, from, until))
		i++;
	if (i == n)
		*j = nm;	/* (the whole batch, as usual) */
	while (*j < nm && m[*j].at < i)
		++*j;
	return i;
}

static int writer_branches(struct cthread *t, const struct ptc_branch *b, size_t n,
			   const struct ptc_path_mark *m, size_t nm)
{
	struct ptc_path_mark run[PTC_PT_BATCH];
	size_t i = 0, k, j = 0, j0, r;
	int err;

	if (t->pt.cpu != t->cpu_told && t->pt.cpu >= 0) {
		/* (the queue of a per-CPU recording that decodes it now) */
		if ((err = ptc_writer_cpu(t->w, (uint32_t)t->pt.cpu)) < 0)
			return err;
		t->cpu_told = t->pt.cpu;
	}
	while (i < n) {
		if (!same_code_time(b[i].time, t->code_time, t->code_until)) {
			t->code_time = b[i].time;
			t->code_until = !t->code_time ? 1
					: t->conv->sb ? ptc_sb_next_map_change(t->conv->sb, t->pt.pid, t->code_time)
					: UINT64_MAX;
			t->code_have = 0;
			t->code_epoch++;
		}
		j0 = j;
		k = same_code_run(b, i, n, m, nm, &j, t->code_time, t->code_until);
		if (j == j0) {
			err = t->ws.branches(t->ws.ctx, b + i, k - i);
		} else {
			const struct ptc_path_mark *rm = m + j0;

			r = j - j0;
			if (i) {
				/* (the marks say where in b + i) */
				for (r = 0; j0 + r < j; r++) {
					run[r].at = m[j0 + r].at - (uint32_t)i;
					run[r].path = m[j0 + r].path;
				}
				rm = run;
			}
			err = t->ws.paths ? t->ws.paths(t->ws.ctx, b + i, k - i, rm, r)
					  : ptc_batch_give_dense(t->ws.branches, t->ws.ctx, b + i, k - i, rm, r);
		}
		if (err < 0)
			return err;
		i = k;
	}
	return 0;
}

static int in_time(const struct cthread *t, const struct ptc_branch *b)
{
	return b->time >= t->time_start && b->time <= t->time_end;
}

/* --time for the registry's writer: the kept runs of branches, each after
 * a start record saying where its first block begins (the destination of
 * the last branch left out), so that per-instruction formats stay exact. */
static int writer_time_filtered(struct cthread *t, const struct ptc_branch *b, size_t n)
{
	size_t i = 0, j;
	int err;

	while (i < n) {
		if (!in_time(t, &b[i])) {
			const struct ptc_branch *x = &b[i++];
			t->skip_next = x->kind == PTC_BR_FAR && !x->target ? x->ip + x->length
				     : x->taken ? x->target : x->ip + x->length;
			t->skipped = 1;
			continue;
		}
		for (j = i; j < n && in_time(t, &b[j]); j++)
			;
		if (t->skipped) {
			struct ptc_gap g;

			memset(&g, 0, sizeof(g));
			g.cause = PTC_GAP_START;
			g.resume_offset = UINT64_MAX;
			g.time = b[i].time;
			g.resume_ip = t->skip_next;
			g.detail = "--time: the trace starts again";
			t->skipped = 0;
			if ((err = t->ws.gap(t->ws.ctx, &g)) < 0)
				return err;
		}
		if ((err = writer_branches(t, b + i, j - i, NULL, 0)) < 0)
			return err;
		i = j;
	}
	return 0;
}

static int tee_branches(void *ctx, const struct ptc_branch *b, size_t n);

static int tee_paths(void *ctx, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	struct cthread *t = ctx;
	struct ptc_branch kept[PTC_PT_BATCH];
	int err;

	_Static_assert(PTC_DENSE_PIECE <= PTC_PT_BATCH, "a dense piece fits kept[]");
	if (nm && (t->finished || t->time_start || t->time_end != UINT64_MAX || t->text || t->cbp))
		/* every record wanted: the sparse batch made dense */
		return ptc_batch_give_dense(tee_branches, ctx, b, n, m, nm);
	if (t->finished) {
		/* After the thread's exit (a tid used again, or a clock that
		 * disagrees with the sideband): not written, so taken out of
		 * the thread's counts (hand_over() made them) and counted as
		 * unwritten, a loss that the summary reports and --strict
		 * fails on. */
		size_t i;

		for (i = 0; i < n; i++) {
			t->pt.by_kind[b[i].kind < PTC_BR_KIND_NR ? b[i].kind : PTC_BR_FAR]--;
			t->pt.insns -= b[i].insns;
			t->pt.not_taken -= !b[i].taken;
		}
		t->unwritten += n;
		__atomic_fetch_add(&t->conv->late_branches, n, __ATOMIC_RELAXED);
		return 0;
	}

	if (t->time_start || t->time_end != UINT64_MAX) {
		if (t->w && (err = writer_time_filtered(t, b, n)) < 0)
			return err;
		/* --time: branches whose (last known) time is outside go */
		size_t i, k = 0;
		for (i = 0; i < n; i++)
			if (b[i].time >= t->time_start && b[i].time <= t->time_end && k < PTC_PT_BATCH)
				kept[k++] = b[i];
		b = kept;
		n = k;
		if (!n)
			return 0;
	} else if (t->w && (err = writer_branches(t, b, n, m, nm)) < 0) {
		return err;
	}
	if (t->text && (err = t->text->branches(t->text->ctx, b, n)) < 0)
		return err;
	if (t->cbp && (err = t->cbp->branches(t->cbp->ctx, b, n)) < 0)
		return err;
	return 0;
}

static int tee_branches(void *ctx, const struct ptc_branch *b, size_t n)
{
	return tee_paths(ctx, b, n, NULL, 0);
}

static int tee_gap(void *ctx, const struct ptc_gap *g)
{
	struct cthread *t = ctx;
	int err;

	if (t->finished) {
		__atomic_fetch_add(&t->conv->late_gaps, 1, __ATOMIC_RELAXED);
		return 0;
	}

	if (t->text && (err = t->text->gap(t->text->ctx, g)) < 0)
		return err;
	if (t->cbp && (err = t->cbp->gap(t->cbp->ctx, g)) < 0)
		return err;
	if (t->w && (err = t->ws.gap(t->ws.ctx, g)) < 0)
		return err;
	t->skipped = 0;	/* the gap says where execution resumes */
	return 0;
}

static int tee_end(void *ctx)
{
	struct cthread *t = ctx;
	int err = 0, e;

	if (t->text && (e = t->text->end(t->text->ctx)) < 0)
		err = e;
	if (t->cbp && (e = t->cbp->end(t->cbp->ctx)) < 0)
		err = e;
	if (t->w && (e = t->ws.end(t->ws.ctx)) < 0)
		err = e;
	return err;
}

static int region_at_locked(void *ctx, struct ptc_pt_thread *pt, uint64_t time, uint64_t ip,
			    struct ptc_pt_region *out, int *cause, char *msg, size_t msglen);


/* Say, once per thread, what failed in t's outputs: the sink's own account
 * (the file and the system's reason) when one has it, else err's name. */
static void output_error(const struct conv *c, struct cthread *t, int err)
{
	const struct ptc_sink *sinks[] = { t->w ? &t->ws : NULL, t->text, t->cbp };
	const char *m = NULL;
	size_t i;

	if (t->error_shown)
		return;
	t->error_shown = 1;
	for (i = 0; !m && i < sizeof(sinks) / sizeof(sinks[0]); i++) {
		const char *e = sinks[i] && sinks[i]->errmsg ? sinks[i]->errmsg(sinks[i]->ctx) : NULL;

		if (e && e[0])
			m = e;
	}
	if (m)
		ptc_cli_error("%s", m);
	else
		ptc_cli_error("%s/%s: writing failed: %s", c->outdir, t->name, ptc_errstr(err));
}

/* Code bytes for the writers: the same image + bias lookup as the walker's
 * (sideband mappings of the thread's process at the time of the branches
 * being written, the vDSO included; --image regions for raw PT). */
static int code_region(struct cthread *t, uint64_t ip)
{
	struct conv *c = t->conv;

	if (!t->code_have || ip < t->code_reg.start || ip >= t->code_reg.end) {
		struct ptc_pt_region reg;
		char msg[256];
		int cause, err;

		pthread_mutex_lock(&c->lock);
		err = region_at_locked(c, &t->pt, t->code_time, ip, &reg, &cause, msg, sizeof(msg));
		pthread_mutex_unlock(&c->lock);
		if (err < 0)
			return 0;
		t->code_reg = reg;
		t->code_have = 1;
	}
	return 1;
}

static size_t code_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	struct cthread *t = ctx;

	if (!code_region(t, ip))
		return 0;
	if (ip + n > t->code_reg.end)
		n = (size_t)(t->code_reg.end - ip);
	return ptc_image_read(t->code_reg.img, (uint64_t)((int64_t)ip - t->code_reg.bias), buf, n);
}

/* Function symbols for the writers (xray, perfetto), from the image of the region
 * that code_read() reads, named as the recording names the file. */
static void sym_lookup(void *ctx, uint64_t addr, struct ptc_symbol *out)
{
	struct cthread *t = ctx;
	const struct ptc_pt_region *r = &t->code_reg;
	const struct ptc_sym *s;
	uint64_t v, lo, hi, rlo, rhi;

	memset(out, 0, sizeof(*out));
	if (!code_region(t, addr))
		return;
	v = (uint64_t)((int64_t)addr - r->bias);
	rlo = (uint64_t)((int64_t)r->start - r->bias);
	rhi = (uint64_t)((int64_t)r->end - r->bias);
	s = ptc_image_symbol(r->img, v, &lo, &hi);
	out->lo = (uint64_t)((int64_t)(lo > rlo ? lo : rlo) + r->bias);
	out->hi = (uint64_t)((int64_t)(hi < rhi ? hi : rhi) + r->bias);
	out->image = r->tag ? ((const struct ptc_sb_map *)r->tag)->filename : ptc_image_name(r->img);
	out->vaddr = v;
	if (s) {
		out->start = (uint64_t)((int64_t)s->addr + r->bias);
		out->name = s->name;
	}
}

/* sym_lookup() answers as it did while code_time stays (0: before any). */
static uint64_t sym_epoch(void *ctx)
{
	return ((const struct cthread *)ctx)->code_epoch;
}

static int wanted(struct conv *c, uint32_t pid, uint32_t tid, const char *comm)
{
	const struct ptc_convert_options *o = c->opt;

	if (o->pid >= 0 && (long)pid != o->pid)
		return 0;
	if (o->tid >= 0 && (long)tid != o->tid)
		return 0;
	if (o->comm && (!comm || strcmp(comm, o->comm)))
		return 0;
	return 1;
}

static struct cthread *find_thread(struct conv *c, uint32_t tid)
{
	size_t i;

	for (i = c->nth; i > 0; i--)
		if (c->th[i - 1]->pt.tid == tid)
			return c->th[i - 1];
	return NULL;
}

static struct cthread *get_thread(struct conv *c, uint32_t pid, uint32_t tid, const char *name_hint)
{
	struct cthread *t = find_thread(c, tid);
	char path[4200];
	struct ptc_thread_info ti;
	int err;

	if (t)
		return t;
	if (c->nth == c->capth) {
		size_t ncap = c->capth ? c->capth * 2 : 16;
		struct cthread **n = realloc(c->th, ncap * sizeof(*n));
		if (!n)
			return NULL;
		c->th = n;
		c->capth = ncap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cpu_told = -1;
	c->th[c->nth++] = t;
	if (c->sb) {
		const struct ptc_sb_thread *s = ptc_sb_thread(c->sb, tid);
		t->comm = s ? s->comm : NULL;
	}
	t->wanted = wanted(c, pid, tid, t->comm);
	t->time_start = c->opt->time_start;
	t->time_end = c->opt->time_end;
	if (name_hint)
		snprintf(t->name, sizeof(t->name), "%s", name_hint);
	else
		snprintf(t->name, sizeof(t->name), "%u-%u", pid, tid);
	ptc_pt_thread_init(&t->pt, pid, tid, NULL);
	t->pt.user = t;
	t->conv = c;
	if (c->sb && !c->per_thread && !c->per_cpu_out) {
		/* A forked child returns through its parent's frames (a vfork
		 * child, which runs while the parent waits in the system call,
		 * even with compressed returns on the parent's CPU).  Per-CPU
		 * queues are decoded in time order, so the parent's stack is
		 * the one it had when the child first runs.  (Per-thread
		 * queues may be decoded in parallel: nothing to copy there
		 * that would not depend on the order.) */
		const struct ptc_sb_thread *s = ptc_sb_thread(c->sb, tid);
		const struct cthread *parent = s && s->ptid != tid ? find_thread(c, s->ptid) : NULL;
		if (parent && ptc_pt_thread_copy_stack(&t->pt, &parent->pt) < 0)
			return NULL;
	}
	if (!t->wanted)
		return t;
	if (c->formats & FMT_TEXT) {
		snprintf(path, sizeof(path), "%s/%s.txt", c->outdir, t->name);
		if (ptc_text_sink_new(&t->text, path) < 0) {
			ptc_cli_error("%s: cannot write: %s", path, strerror(errno));
			c->fatal = PTC_EXIT_OUTPUT;
			return t;
		}
	}
	if (c->formats & FMT_CBPEXP) {
		snprintf(path, sizeof(path), "%s/%s.cbpexp", c->outdir, t->name);
		if (ptc_cbpexp_sink_new(&t->cbp, path, c->pto->zstd_level) < 0) {
			ptc_cli_error("%s: cannot write: %s", path, strerror(errno));
			c->fatal = PTC_EXIT_OUTPUT;
			return t;
		}
	}
	if (c->use_writer) {
		struct ptc_writer_config cfg;

		memset(&cfg, 0, sizeof(cfg));
		t->code.read = code_read;
		t->code.ctx = t;
		cfg.outdir = c->outdir;
		cfg.code = &t->code;
		t->syms.lookup = sym_lookup;
		t->syms.epoch = sym_epoch;
		t->syms.ctx = t;
		cfg.symbols = &t->syms;
		cfg.procs = c->procs;
		cfg.untimed = c->have_tsc_config && !c->tsc_enabled;
		cfg.bbv_interval = c->pto->bbv_interval;
		cfg.threads = c->opt->jobs;
		cfg.pool = c->pool;
		cfg.ahead_tables = c->encode_ahead;
		cfg.ahead_records_per_node = c->ahead_per_node;
		cfg.chunk_records = c->chunk_records;
		cfg.jobs = c->ahead ? &c->jobs : NULL;
		err = ptc_writer_new(&t->w, c->wformats, &cfg);
		if (err < 0) {
			ptc_cli_error("%s: cannot write %s: %s", c->outdir, c->wformats, ptc_errstr(err));
			c->fatal = PTC_EXIT_OUTPUT;
			return t;
		}
		t->ws = ptc_writer_sink(t->w);
	}
	t->tee.begin = tee_begin;
	t->tee.branches = tee_branches;
	t->tee.paths = tee_paths;
	t->tee.gap = tee_gap;
	t->tee.end = tee_end;
	t->tee.ctx = t;
	t->pt.sink = &t->tee;
	ti.pid = pid;
	ti.tid = tid;
	ti.comm = t->comm;
	/* per-CPU streams (--per-cpu) carry the CPU in the high-bit tid */
	ti.cpu = (tid & 0x80000000u) ? (int)(tid & 0x7fffffffu) : -1;
	err = t->tee.begin(t->tee.ctx, &ti);
	if (err < 0) {
		output_error(c, t, err);
		c->fatal = PTC_EXIT_OUTPUT;
	}
	return t;
}

static struct ptc_pt_thread *thread_at_locked(void *ctx, int cpu, uint32_t qtid, uint64_t time);

/* A records-lost gap in t's stream: the sideband that attributes this part
 * of the trace to t (switches) and maps its code (MMAPs) may miss records.
 * Nothing of the trace itself is lost: lost_branches and lost_bytes are 0. */
static void lost_gap(struct conv *c, struct cthread *t, const struct ptc_sb_lost_range *r,
		     uint64_t time)
{
	struct ptc_gap g;
	char detail[320], where[48];

	if (r->cpu >= 0)
		snprintf(where, sizeof(where), "cpu %d", r->cpu);
	else if (r->tid >= 0)
		snprintf(where, sizeof(where), "thread %lld's buffer", (long long)r->tid);
	else
		snprintf(where, sizeof(where), "an unknown buffer");
	if (r->damaged)
		snprintf(detail, sizeof(detail), "sideband records may be lost in %" PRIu64 " bytes of damaged "
			 "input at offset 0x%" PRIx64 " (perf times %" PRIu64 " to %s): thread attribution and "
			 "mappings may be wrong", r->damaged, r->offset, r->t_start,
			 r->t_end == PTC_SB_TIME_MAX ? "the end" : "later");
	else if (r->t_end == PTC_SB_TIME_MAX)
		snprintf(detail, sizeof(detail), "%" PRIu64 " sideband records lost on %s at an unknown time "
			 "(LOST record at offset 0x%" PRIx64 "): thread attribution and mappings may be wrong",
			 r->count, where, r->offset);
	else
		snprintf(detail, sizeof(detail), "%" PRIu64 " sideband records lost on %s between perf times %"
			 PRIu64 " and %" PRIu64 " (LOST record at offset 0x%" PRIx64 "): thread attribution "
			 "and mappings may be wrong", r->count, where, r->t_start, r->t_end, r->offset);
	memset(&g, 0, sizeof(g));
	g.cause = PTC_GAP_RECORDS_LOST;
	g.time = time;
	g.detail = detail;
	c->lost_gaps++;
	t->pt.gaps++;
	t->pt.gaps_by_cause[PTC_GAP_RECORDS_LOST]++;
	if (!t->pt.sink || t->pt.sink_error)
		return;
	/* its branches so far come before the gap */
	if (ptc_pt_thread_flush(&t->pt) < 0)
		return;
	if (t->pt.sink->gap) {
		int err = t->pt.sink->gap(t->pt.sink->ctx, &g);
		if (err < 0)
			t->pt.sink_error = err;
	}
}

/* Asked who runs on cpu at time: when records were lost on that CPU (or
 * thread) since the CPU was last asked, this answer may be wrong. */
static void check_lost_sideband(struct conv *c, struct cthread *t, int cpu, uint64_t time)
{
	const struct ptc_sb_lost_range *r;
	size_t n, i;
	uint64_t since = 0;

	r = ptc_sb_lost_ranges(c->sb, &n);
	if (!n)
		return;
	if (!c->per_thread && cpu >= 0) {
		if ((size_t)cpu >= c->ncpu_seen) {
			size_t nn = (size_t)cpu + 1;
			uint64_t *v = realloc(c->cpu_seen, nn * sizeof(*v));
			if (!v)
				return;
			memset(v + c->ncpu_seen, 0, (nn - c->ncpu_seen) * sizeof(*v));
			c->cpu_seen = v;
			c->ncpu_seen = nn;
		}
		since = c->cpu_seen[cpu] ? c->cpu_seen[cpu] - 1 : 0;
		if (time && time + 1 > c->cpu_seen[cpu])
			c->cpu_seen[cpu] = time + 1;
	}
	for (i = 0; i < n; i++) {
		if (c->per_thread ? (r[i].tid >= 0 && r[i].tid != (int64_t)t->pt.tid)
				  : (r[i].cpu >= 0 && r[i].cpu != cpu))
			continue;
		if (r[i].t_end == PTC_SB_TIME_MAX && !r[i].t_start) {
			if (t->lost_all)
				continue;
			t->lost_all = 1;
		} else {
			/* without time, any loss may concern this answer */
			if (time && (r[i].t_start > time || r[i].t_end < since))
				continue;
			if (r[i].t_end < t->lost_upto || (t->lost_upto && r[i].t_end == t->lost_upto))
				continue;
			t->lost_upto = r[i].t_end;
		}
		lost_gap(c, t, &r[i], time);
	}
}

/* Damaged switch records left the thread running on cpu at time unknown
 * (its trace goes to nobody): the threads it may be get their
 * records-lost gap here, where their stream may lack a piece. */
static void gap_unknown_threads(struct conv *c, int cpu, uint64_t time)
{
	uint32_t pid[8], tid[8];
	size_t i, n = ptc_sb_unknown_on_cpu(c->sb, cpu, time, pid, tid, 8);

	for (i = 0; i < n; i++) {
		struct cthread *t = get_thread(c, pid[i], tid[i], NULL);
		if (t)
			check_lost_sideband(c, t, cpu, time);
	}
}

static struct ptc_pt_thread *env_thread_at(void *ctx, int cpu, uint32_t qtid, uint64_t time)
{
	struct conv *c = ctx;
	struct ptc_pt_thread *t;

	pthread_mutex_lock(&c->lock);
	t = thread_at_locked(ctx, cpu, qtid, time);
	pthread_mutex_unlock(&c->lock);
	return t;
}

static struct ptc_pt_thread *thread_at_locked(void *ctx, int cpu, uint32_t qtid, uint64_t time)
{
	struct conv *c = ctx;
	uint32_t pid = 0, tid = 0;
	struct cthread *t;
	char name[32];

	if (!c->sb) {
		t = get_thread(c, 0, 0, "raw");
		return t ? &t->pt : NULL;
	}
	if (c->per_thread && qtid != UINT32_MAX) {
		const struct ptc_sb_thread *s = ptc_sb_thread(c->sb, qtid);
		tid = qtid;
		pid = s ? s->pid : qtid;
	} else if (ptc_sb_thread_on_cpu(c->sb, cpu, time, &pid, &tid) < 0) {
		gap_unknown_threads(c, cpu, time);
		return NULL;
	}
	if (c->per_cpu_out) {
		/* One stream per CPU: the thread state is the CPU's, the
		 * address space the running process's. */
		snprintf(name, sizeof(name), "cpu%d", cpu);
		t = get_thread(c, pid, (uint32_t)cpu | 0x80000000u, name);
		if (t)
			t->pt.pid = pid;
	} else {
		t = get_thread(c, pid, tid, NULL);
	}
	if (t)
		check_lost_sideband(c, t, cpu, time);
	return t ? &t->pt : NULL;
}

/* thread_at_locked()'s answer without its side effects (ptdec.h). */
static int env_who_runs(void *ctx, int cpu, uint32_t qtid, uint64_t time, uint32_t *pid, uint32_t *tid)
{
	struct conv *c = ctx;

	if (!c->sb) {
		*pid = *tid = 0;
		return 0;
	}
	if (c->per_thread && qtid != UINT32_MAX) {
		const struct ptc_sb_thread *s = ptc_sb_thread(c->sb, qtid);
		*tid = qtid;
		*pid = s ? s->pid : qtid;
	} else if (ptc_sb_thread_on_cpu(c->sb, cpu, time, pid, tid) < 0) {
		return -1;
	}
	if (c->per_cpu_out)
		*tid = (uint32_t)cpu | 0x80000000u;
	return 0;
}

/* ---- losses on a CPU: the gaps of the threads that ran there ----
 *
 * A loss of one CPU's trace (env lost_on_cpu) hides the branches of every
 * thread switched in there meanwhile.  Each such stretch gets the loss's
 * gap in its thread's stream at the stretch's start, once every queue has
 * been decoded up to that time (their settled time, as for exits): the
 * thread has then been given what it did before, on any CPU, and nothing
 * of what it did after.  decode_all() stops the queues there (spans_due()).
 * A span is kept, not its stretches: a queue lost whole can span a
 * recording's every switch. */
struct lost_span {
	int cpu;
	uint64_t next;		/* its switch-ins after this time are still due */
	uint64_t end;		/* ... up to this time (inclusive) */
	struct ptc_gap gap;
	char detail[160];
};

struct last_switch_in {
	uint32_t tid;
	int found;
	uint64_t time;
};

static void last_switch_in_of(void *arg, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct last_switch_in *l = arg;

	(void)pid;
	if (tid == l->tid) {
		l->found = 1;
		l->time = time;
	}
}

struct placing {
	struct conv *c;
	const struct ptc_gap *g;	/* the span's */
	int err;
};

static void place_gap(void *arg, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct placing *p = arg;
	struct cthread *t;
	struct ptc_gap g;
	int err;

	if (!tid || p->err < 0)
		return;	/* idle */
	pthread_mutex_lock(&p->c->lock);
	t = get_thread(p->c, pid, tid, NULL);
	pthread_mutex_unlock(&p->c->lock);
	/* (nothing since its last gap: another adds nothing) */
	if (!t || t->pt.after_gap)
		return;
	g = *p->g;
	g.time = time;
	t->pt.pending_insns = 0;
	t->pt.depth = 0;
	t->pt.after_gap = 1;
	if ((err = ptc_pt_thread_gap(&t->pt, &g)) < 0)
		p->err = err;
}

static int place_span(struct conv *c, size_t k, uint64_t upto);

/* The time up to which every queue not done, of another CPU than cpu, has
 * handed its threads all their branches (UINT64_MAX: none is left). */
static uint64_t others_settled(const struct conv *c, int cpu)
{
	uint64_t settled = UINT64_MAX;
	size_t i;

	for (i = 0; i < c->nq; i++) {
		const struct queue *q = &c->q[i];
		uint64_t t;

		if (q->done || !q->eng || q->cpu == cpu)
			continue;
		t = ptc_pt_engine_settled_time(q->eng);
		if (t < settled)
			settled = t;
	}
	return settled;
}

static int env_lost_on_cpu(void *ctx, int cpu, uint64_t t0, uint64_t t1, const struct ptc_gap *g,
			   struct ptc_pt_thread *owner, struct ptc_pt_thread *resumer)
{
	struct conv *c = ctx;
	const struct cthread *r = resumer ? resumer->user : NULL;
	struct lost_span *s;
	uint64_t end = t1;

	(void)owner;	/* (a later stretch of its, after it ran elsewhere, loses branches too) */
	if (!c->sb || c->per_thread || c->per_cpu_out)
		return 0;
	if (r) {
		/* the resuming thread's last switch-in ends the loss */
		struct last_switch_in l = { r->pt.tid, 0, 0 };

		ptc_sb_threads_between(c->sb, cpu, t0, t1, last_switch_in_of, &l);
		if (l.found)
			end = l.time - 1;
	}
	if (t1 == UINT64_MAX && !resumer) {
		/* The trace ends in the loss: the thread the sideband has
		 * running at its start, switched in before the trace showed
		 * it, lost what it did from there on. */
		uint32_t pid, tid;
		struct placing p = { c, g, 0 };

		if (ptc_sb_thread_on_cpu(c->sb, cpu, t0, &pid, &tid) == 0 &&
		    (!owner || !owner->user || ((const struct cthread *)owner->user)->pt.tid != tid)) {
			place_gap(&p, pid, tid, t0);
			if (p.err < 0)
				return p.err;
		}
	}
	if (end <= t0 || ptc_sb_next_switch_in(c->sb, cpu, t0) > end)
		return 0;	/* nobody else ran */
	if (c->nspans == c->capspans) {
		size_t cap = c->capspans ? 2 * c->capspans : 8;
		struct lost_span *v = realloc(c->spans, cap * sizeof(*v));

		if (!v)
			return -ptc_err_nomem;
		c->spans = v;
		c->capspans = cap;
	}
	s = &c->spans[c->nspans++];
	s->cpu = cpu;
	s->next = t0;
	s->end = end;
	s->gap = *g;
	snprintf(s->detail, sizeof(s->detail), "%s", g->detail ? g->detail : "");
	s->gap.detail = s->detail;
	/* The stretches that the other CPUs' queues are past already go now:
	 * this queue decodes on from here, and a thread of the span that runs
	 * here again must have its gap before those branches. */
	return place_span(c, c->nspans - 1, others_settled(c, cpu));
}

/* The next switch-in span s's gap is due at (UINT64_MAX: none is left). */
static uint64_t span_due(const struct conv *c, const struct lost_span *s)
{
	uint64_t t = ptc_sb_next_switch_in(c->sb, s->cpu, s->next);

	return t != PTC_SB_TIME_MAX && t <= s->end ? t : UINT64_MAX;
}

/* The earliest switch-in a span's gap is due at (UINT64_MAX: none). */
static uint64_t spans_due(const struct conv *c)
{
	uint64_t due = UINT64_MAX, t;
	size_t i;

	for (i = 0; i < c->nspans; i++)
		if ((t = span_due(c, &c->spans[i])) < due)
			due = t;
	return due;
}

/* Span k's gaps due up to time upto. */
static int place_span(struct conv *c, size_t k, uint64_t upto)
{
	struct lost_span *s = &c->spans[k];
	struct placing p = { c, &s->gap, 0 };
	uint64_t due;

	while ((due = span_due(c, s)) != UINT64_MAX && due <= upto) {
		ptc_sb_threads_between(c->sb, s->cpu, s->next, due, place_gap, &p);
		s->next = due;
		if (p.err < 0)
			return p.err;
	}
	return 0;
}

/* The spans' gaps due up to time upto, in time order. */
static int place_gaps(struct conv *c, uint64_t upto)
{
	int err;

	while (c->nspans) {
		uint64_t due = UINT64_MAX;
		size_t i, k = 0;

		for (i = 0; i < c->nspans; i++) {
			uint64_t t = span_due(c, &c->spans[i]);

			if (t == UINT64_MAX) {
				c->spans[i--] = c->spans[--c->nspans];	/* done */
				continue;
			}
			if (t < due) {
				due = t;
				k = i;
			}
		}
		if (due == UINT64_MAX || due > upto)
			break;
		if ((err = place_span(c, k, due)) < 0)
			return err;
	}
	return 0;
}

/* ---- images ---- */

static void report_missing(struct conv *c, const char *what)
{
	size_t i;
	char **n;

	for (i = 0; i < c->nmissing; i++)
		if (!strcmp(c->missing[i], what))
			return;
	n = realloc(c->missing, (c->nmissing + 1) * sizeof(*n));
	if (!n)
		return;
	c->missing = n;
	c->missing[c->nmissing] = strdup(what);
	if (c->missing[c->nmissing]) {
		c->nmissing++;
		if (!c->opt->quiet)
			ptc_cli_error("warning: %s", what);
	}
}

static void add_image_to_writer(struct cthread *t, const struct ptc_sb_map *m,
				const struct ptc_image *img)
{
	if (t && t->cbp)
		ptc_cbpexp_add_image(t->cbp, m->start - m->pgoff, m->filename, ptc_image_name(img));
}

static int region_at_locked(void *ctx, struct ptc_pt_thread *pt, uint64_t time, uint64_t ip,
			    struct ptc_pt_region *out, int *cause, char *msg, size_t msglen);

static int env_region_at(void *ctx, struct ptc_pt_thread *pt, uint64_t time, uint64_t ip,
			 struct ptc_pt_region *out, int *cause, char *msg, size_t msglen)
{
	struct conv *c = ctx;
	int err;

	pthread_mutex_lock(&c->lock);
	err = region_at_locked(ctx, pt, time, ip, out, cause, msg, msglen);
	pthread_mutex_unlock(&c->lock);
	return err;
}

static int region_at_locked(void *ctx, struct ptc_pt_thread *pt, uint64_t time, uint64_t ip,
			    struct ptc_pt_region *out, int *cause, char *msg, size_t msglen)
{
	struct conv *c = ctx;
	struct ptc_sb_map *m;
	const struct ptc_image *img;
	size_t n;
	int err;

	if (!c->sb) {
		size_t i;
		for (i = 0; i < c->nraw; i++) {
			uint8_t byte;
			const struct ptc_tbranch *tb = ptc_image_branches(c->raw_img[i], &n);
			/* an image covers its code, before its first branch and
			 * after its last one too */
			if (ptc_image_read(c->raw_img[i], (uint64_t)((int64_t)ip - c->raw_bias[i]), &byte, 1) != 1)
				continue;
			out->img = c->raw_img[i];
			out->bias = c->raw_bias[i];
			out->tb = tb;
			out->ntb = (uint32_t)n;
			out->start = n ? (uint64_t)((int64_t)tb[0].ip + out->bias) : ip;
			if (ip < out->start)
				out->start = ip;
			out->end = n ? (uint64_t)((int64_t)(tb[n - 1].ip + tb[n - 1].length) + out->bias) : ip + 1;
			if (ip >= out->end)
				out->end = ip + 1;
			out->tag = NULL;
			return 0;
		}
		*cause = PTC_GAP_NO_IMAGE;
		snprintf(msg, msglen, "no --image covers it");
		return -ptc_err_not_found;
	}
	if (!pt) {
		*cause = PTC_GAP_NO_IMAGE;
		snprintf(msg, msglen, "no thread known");
		return -ptc_err_not_found;
	}
	m = ptc_sb_find_map(c->sb, pt->pid, time ? time : PTC_SB_TIME_MAX, ip);
	if (!m) {
		*cause = PTC_GAP_NO_IMAGE;
		snprintf(msg, msglen, "not in any mapping of pid %u", pt->pid);
		return -ptc_err_not_found;
	}
	if (m->user_state == 0) {
		char err_s[512], hex[41] = "none";
		int64_t bias;

		if (m->build_id_size)
			ptc_build_id_hex(m->build_id, m->build_id_size, hex);
		err = ptc_image_cache_get(c->ic, m->filename, m->build_id_size ? m->build_id : NULL,
					  m->build_id_size, &img, err_s, sizeof(err_s));
		if (err == 0 && ptc_image_bias(img, m->start, m->pgoff, &bias) == 0) {
			m->user = (void *)img;
			m->user_bias = bias;
			m->user_state = 1;
		} else {
			char what[1200];
			m->user_state = err == -ptc_err_mismatch ? -2 : -1;
			if (err == 0)
				snprintf(err_s, sizeof(err_s), "no executable segment at file offset 0x%" PRIx64,
					 m->pgoff);
			if (strstr(err_s, m->filename) && (!m->build_id_size || strstr(err_s, hex)))
				snprintf(what, sizeof(what), "%s", err_s);
			else
				snprintf(what, sizeof(what), "%s (build-id %s): %s", m->filename, hex, err_s);
			report_missing(c, what);
			/* every mapping of the same file shares the verdict */
			{
				size_t i, nm;
				struct ptc_sb_map *all = ptc_sb_maps(c->sb, &nm);
				for (i = 0; i < nm; i++)
					if (all[i].user_state == 0 && all[i].filename == m->filename &&
					    all[i].build_id_size == m->build_id_size &&
					    !memcmp(all[i].build_id, m->build_id, m->build_id_size))
						all[i].user_state = m->user_state;
			}
		}
	}
	if (m->user_state < 0) {
		*cause = m->user_state == -2 ? PTC_GAP_BUILD_ID : PTC_GAP_NO_IMAGE;
		snprintf(msg, msglen, "%s %s", m->filename,
			 m->user_state == -2 ? "has another build-id" : "not found");
		return -ptc_err_not_found;
	}
	img = m->user;
	out->img = img;
	out->bias = m->user_bias;
	out->tb = ptc_image_branches(img, &n);
	out->ntb = (uint32_t)n;
	out->start = m->start;
	out->end = m->end;
	out->tag = m;
	add_image_to_writer(pt->user, m, img);
	return 0;
}

static void env_orphan_gap(void *ctx, const struct ptc_gap *g)
{
	struct conv *c = ctx;

	pthread_mutex_lock(&c->lock);
	c->orphan_gaps++;
	pthread_mutex_unlock(&c->lock);
}

/* ---- queues ---- */

static struct queue *find_queue(struct conv *c, uint32_t idx)
{
	size_t i;

	for (i = 0; i < c->nq; i++)
		if (c->q[i].idx == idx)
			return &c->q[i];
	return NULL;
}

static struct queue *get_queue(struct conv *c, uint32_t idx, int cpu, uint32_t tid)
{
	struct queue *n = find_queue(c, idx);

	if (n)
		return n;
	n = realloc(c->q, (c->nq + 1) * sizeof(*n));
	if (!n)
		return NULL;
	c->q = n;
	n = &c->q[c->nq++];
	memset(n, 0, sizeof(*n));
	n->idx = idx;
	n->cpu = cpu;
	n->tid = tid;
	return n;
}

/* Which AUX buffer an AUX record is about: in a per-CPU recording its
 * CPU's; in a per-thread one the event's, found by its sample id (the
 * event's ids are listed in the order of the per-thread buffers, which
 * AUXTRACE records number), else by the thread (a record written after
 * the thread's exit may name none: tid 0).  Returns the queue index, or
 * -1 when the record does not say. */
static int64_t aux_queue_index(const struct conv *c, const struct ptc_sb_aux *a)
{
	size_t k;

	if (!c->per_thread || !a->have_id || !c->pt_attr)
		return -1;
	for (k = 0; k < c->pt_attr->nr_ids; k++)
		if (c->pt_attr->ids[k] == a->id)
			return (int64_t)k;
	return -1;
}

static int aux_of_queue(const struct conv *c, const struct ptc_sb_aux *a, const struct queue *q)
{
	int64_t k;

	if (!c->per_thread)
		return a->cpu >= 0 && a->cpu == q->cpu;
	k = aux_queue_index(c, a);
	if (k >= 0)
		return (uint64_t)k == q->idx;
	return a->tid && a->tid == q->tid;
}

/* A CPU (per-CPU recording) or thread (per-thread) whose AUX records say
 * its AUX buffer held trace data but which has no AUXTRACE record at all
 * (each lost in damaged input or removed from the file): an empty queue,
 * whose data plan_runs() makes an aux-lost gap, so that the loss is
 * counted and placed rather than invisible.  (A per-thread AUX buffer is
 * never shared with an inherited child: the kernel refuses to map one.) */
static int input_cut_short(const struct conv *c)
{
	size_t n = c->r ? ptc_perf_nr_skips(c->r) : 0;

	return c->input_error[0] || (n && ptc_perf_skip(c->r, n - 1)->to_end);
}

static int add_unheld_queues(struct conv *c)
{
	size_t naux = 0, i, k;
	const struct ptc_sb_aux *aux = ptc_sb_aux_records(c->sb, &naux);
	uint32_t idx = UINT32_MAX;
	/* the CPUs there are (perf's header; else any a queue could have) */
	uint64_t ncpu = c->r && ptc_perf_info(c->r)->nr_cpus_avail ? ptc_perf_info(c->r)->nr_cpus_avail : 65536;

	for (i = 0; i < naux; i++) {
		int64_t known = aux_queue_index(c, &aux[i]);
		uint32_t tid = aux[i].tid;
		int held = 0;

		if (!aux[i].aux_size || (aux[i].flags & PTC_AUX_FLAG_OVERWRITE) ||
		    (c->per_thread ? known < 0 && !aux[i].tid : aux[i].cpu < 0))
			continue;	/* it does not say which buffer */
		if (!c->per_thread && known < 0 && (uint64_t)aux[i].cpu >= ncpu) {
			/* a CPU the recording does not have: its sample id is
			 * damaged */
			if (!c->opt->quiet)
				ptc_cli_error("warning: %s: an AUX record names cpu %d, which the recording does "
					      "not have: damaged, not believed", ptc_perf_name(c->r), aux[i].cpu);
			c->damaged_aux++;
			continue;
		}
		for (k = 0; k < c->nq && !held; k++)
			held = aux_of_queue(c, &aux[i], &c->q[k]);
		if (held)
			continue;
		if (known >= 0) {
			idx = (uint32_t)known;
			/* the thread, from a record that names it */
			for (k = 0; k < naux && !tid; k++)
				if (aux_queue_index(c, &aux[k]) == known)
					tid = aux[k].tid;
		} else {
			while (find_queue(c, idx))
				idx--;	/* an index no AUXTRACE record used */
		}
		struct queue *q = get_queue(c, idx, c->per_thread ? -1 : aux[i].cpu,
					    c->per_thread && tid ? tid : UINT32_MAX);
		if (!q)
			return -ptc_err_nomem;
		q->unnumbered = known < 0;
	}
	/* A recording cut short (or damaged to its end) can have lost every
	 * record of a CPU's trace, AUX records included, while context
	 * switches there before the cut remain: that CPU's queue is lost
	 * whole, and the threads it ran lost branches (env_lost_on_cpu()). */
	if (c->sb && !c->per_thread && input_cut_short(c)) {
		size_t nsb = ptc_sb_nr_cpus(c->sb), cpu;

		for (cpu = 0; cpu < nsb && cpu <= INT32_MAX; cpu++) {
			int held = 0;
			struct queue *q;

			for (k = 0; k < c->nq && !held; k++)
				held = c->q[k].cpu == (int)cpu;
			if (held || ptc_sb_next_switch_in(c->sb, (int)cpu, 0) == PTC_SB_TIME_MAX)
				continue;
			while (find_queue(c, idx))
				idx--;	/* an index no AUXTRACE record used */
			if (!(q = get_queue(c, idx, (int)cpu, UINT32_MAX)))
				return -ptc_err_nomem;
			q->unnumbered = 1;
		}
	}
	return 0;
}

static int cmp_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}


/* Cut a queue's pieces into contiguous runs.  Bytes missing between pieces
 * end a run; so does every AUX record that reports a loss: TRUNCATED (data
 * after the record's range was lost) cuts at its end, PARTIAL and COLLISION
 * (the range itself has a hole somewhere) exclude the whole range, because
 * packets after an unknown hole would decode into plausible but wrong
 * branches. */
struct cut {
	uint64_t s, e;
	const char *why;
};

static int cmp_cut(const void *a, const void *b)
{
	const struct cut *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* The recording could not be read to its end: cut short, or damaged from
 * some offset to its end. */

/* Where piece p's data ends without the padding perf adds to 8 bytes, when
 * p ends at data_end with all its bytes there: before its last zero bytes,
 * 7 at most (data_end otherwise). */
static uint64_t padded_end(struct conv *c, const struct piece *p, uint64_t data_end)
{
	uint8_t b[7];
	size_t n = p->size < sizeof(b) ? (size_t)p->size : sizeof(b), z = 0;

	if (p->lost || p->claimed > p->size || p->offset + p->size != data_end || !n || p->size % 8)
		return data_end;
	if (p->data)
		memcpy(b, p->data + p->size - n, n);
	else if (ptc_perf_pread(c->r, b, n, p->file_off + p->size - n) < 0)
		return data_end;
	while (z < n && !b[n - 1 - z])
		z++;
	return data_end - z;
}

/* A queue's AUX records follow one another: each begins where the one
 * before ended (the kernel's AUX head).  Is mine[k], of queue q's AUX
 * records that claim data (mine[0, n), in the recording's order), one
 * that its neighbours contradict, or that claims more than an AUX buffer
 * holds (a damaged field)?  Its claim of where the queue's data ends is
 * then not believed; said once, and --strict fails (summary.json
 * damaged_aux_records).  A record missing between two leaves both
 * believed: each agrees with its other neighbour. */
static int aux_damaged(struct conv *c, const struct queue *q, const struct ptc_sb_aux *const *mine, size_t n,
		       size_t k)
{
	const struct ptc_sb_aux *r = mine[k], *prev = NULL, *next = NULL;
	uint64_t end = r->aux_offset + r->aux_size;
	size_t i;
	int left, right, bad;

	/* (a copy of the record, a duplicated one, is no neighbour) */
	for (i = k; i-- > 0 && !prev;)
		if (mine[i]->aux_offset != r->aux_offset || mine[i]->aux_size != r->aux_size)
			prev = mine[i];
	for (i = k + 1; i < n && !next; i++)
		if (mine[i]->aux_offset != r->aux_offset || mine[i]->aux_size != r->aux_size)
			next = mine[i];
	left = !prev || prev->aux_offset + prev->aux_size == r->aux_offset;
	right = !next || end == next->aux_offset;
	bad = r->aux_size > ((uint64_t)1 << 32) || end < r->aux_offset ||	/* (no AUX buffer is that large) */
	      (prev && next && !left && !right) ||				/* both neighbours disagree */
	      (next && end > next->aux_offset) ||				/* overlaps the next */
	      (prev && !next && !left) ||					/* the last one, after a hole */
	      /* the first, though the queue's data starts where the first
	       * one would (q's pieces are sorted) */
	      (!prev && r->aux_offset && q->np && !q->p[0].offset);
	if (bad && !c->opt->quiet)
		ptc_cli_error("warning: %s: the AUX record of %s %d at AUX offset 0x%" PRIx64 " (%" PRIu64
			      " bytes, perf time %" PRIu64 ") disagrees with the queue's other AUX records: "
			      "damaged, its claim is not believed", ptc_perf_name(c->r),
			      q->cpu >= 0 ? "cpu" : "thread", q->cpu >= 0 ? q->cpu : (int)q->tid, r->aux_offset,
			      r->aux_size, r->time);
	c->damaged_aux += bad;
	return bad;
}

static int plan_runs(struct conv *c, struct queue *q)
{
	const struct piece *damaged = NULL;	/* its data lost, nothing after it yet */
	struct cut *cuts = NULL;
	size_t nc = 0, i, j, naux = 0, cap;
	const struct ptc_sb_aux *aux = c->sb ? ptc_sb_aux_records(c->sb, &naux) : NULL;
	const struct ptc_sb_aux **claims = NULL;
	size_t nclaims = 0, capclaims = 0;
	uint64_t claimed = 0;	/* where the AUX records say the queue's data ends */

	if (q->np)
		qsort(q->p, q->np, sizeof(*q->p), cmp_piece);
	/* the queue's AUX records that say where its data ends, in order */
	for (i = 0; i < naux; i++)
		if (aux[i].aux_size && !(aux[i].flags & PTC_AUX_FLAG_OVERWRITE) && aux_of_queue(c, &aux[i], q)) {
			if (nclaims == capclaims) {
				size_t ncap = capclaims ? 2 * capclaims : 64;
				const struct ptc_sb_aux **v = realloc(claims, ncap * sizeof(*v));

				if (!v) {
					free(claims);
					return -ptc_err_nomem;
				}
				claims = v;
				capclaims = ncap;
			}
			claims[nclaims++] = &aux[i];
		}
	for (i = 0; i < nclaims; i++)
		if (!aux_damaged(c, q, claims, nclaims, i) && claims[i]->aux_offset + claims[i]->aux_size > claimed)
			claimed = claims[i]->aux_offset + claims[i]->aux_size;
	free(claims);
	for (i = 0; i < naux; i++) {
		int mine = aux_of_queue(c, &aux[i], q);
		struct cut *n;
		if (!mine || !(aux[i].flags & (PTC_AUX_FLAG_TRUNCATED | PTC_AUX_FLAG_PARTIAL |
					       PTC_AUX_FLAG_COLLISION)))
			continue;
		n = realloc(cuts, (nc + 1) * sizeof(*cuts));
		if (!n) {
			free(cuts);
			return -ptc_err_nomem;
		}
		cuts = n;
		if ((aux[i].flags & (PTC_AUX_FLAG_PARTIAL | PTC_AUX_FLAG_COLLISION)) &&
		    !(aux[i].flags & PTC_AUX_FLAG_TRUNCATED) && ptc_pt_engine_checks_suspects(engine_kind(c)) &&
		    c->pto->check_partial) {
			/* --check-partial: the walker checks such ranges PSB
			 * segment by segment instead of skipping them */
			struct susp *ns = realloc(q->susp, (q->nsusp + 1) * sizeof(*ns));
			if (!ns) {
				free(cuts);
				return -ptc_err_nomem;
			}
			q->susp = ns;
			ns[q->nsusp].s = aux[i].aux_offset;
			ns[q->nsusp].e = aux[i].aux_offset + aux[i].aux_size;
			q->nsusp++;
			continue;
		}
		if (aux[i].flags & (PTC_AUX_FLAG_PARTIAL | PTC_AUX_FLAG_COLLISION)) {
			cuts[nc].s = aux[i].aux_offset;
			cuts[nc].e = aux[i].aux_offset + aux[i].aux_size;
			cuts[nc].why = (aux[i].flags & PTC_AUX_FLAG_COLLISION)
					       ? "AUX record flagged COLLISION: its data is skipped"
					       : "AUX record flagged PARTIAL: its data is skipped";
		} else {
			cuts[nc].s = cuts[nc].e = aux[i].aux_offset + aux[i].aux_size;
			cuts[nc].why = "AUX record flagged TRUNCATED: trace lost after it";
		}
		nc++;
	}
	if (nc)
		qsort(cuts, nc, sizeof(*cuts), cmp_cut);
	cap = q->np + 2 * nc + 1;
	q->runs = calloc(cap, sizeof(*q->runs));
	if (!q->runs) {
		free(cuts);
		return -ptc_err_nomem;
	}
	for (i = 0; i < q->np; i++) {
		struct piece *p = &q->p[i];
		uint64_t s = p->offset, e = p->offset + p->size;
		struct run *last = q->nruns ? &q->runs[q->nruns - 1] : NULL;

		if (last && s < last->end)
			s = last->end;	/* overlap (snapshot mode): keep the first copy */
		if (s < e) {
			if (last && s == last->end) {
				last->end = e;
			} else {
				struct run *r = &q->runs[q->nruns++];
				r->start = s;
				r->end = e;
				r->lost = last ? s - last->end : s;
				r->why = damaged ? DAMAGED_WHY : "AUX bytes missing from the recording";
			}
			damaged = NULL;
			last = &q->runs[q->nruns - 1];
		}
		/* what follows a record whose data went on in damaged input is
		 * missing for that reason (up to 7 bytes below the end so far:
		 * perf's padding) */
		if (p->lost && p->offset + p->size + 8 > (last ? last->end : 0))
			damaged = p;
	}
	for (j = 0; j < nc; j++) {
		for (i = 0; i < q->nruns; i++) {
			struct run *r = &q->runs[i];
			if (cuts[j].e < r->start || cuts[j].s > r->end)
				continue;
			if (cuts[j].s == cuts[j].e && (cuts[j].s == r->start || cuts[j].s == r->end))
				continue;	/* a cut at an existing boundary */
			if (cuts[j].s <= r->start && cuts[j].e >= r->end) {
				/* the whole run goes */
				r->end = r->start;
				continue;
			}
			if (cuts[j].s > r->start && cuts[j].e < r->end) {
				if (q->nruns == cap)
					break;
				memmove(r + 2, r + 1, (q->nruns - i - 1) * sizeof(*r));
				r[1].start = cuts[j].e;
				r[1].end = r->end;
				r[1].lost = cuts[j].e > cuts[j].s ? cuts[j].e - cuts[j].s : UINT64_MAX;
				r[1].why = cuts[j].why;
				r->end = cuts[j].s;
				q->nruns++;
				i++;
			} else if (cuts[j].s <= r->start) {
				r->lost = r->lost == UINT64_MAX ? UINT64_MAX : r->lost + (cuts[j].e - r->start);
				r->why = cuts[j].why;
				r->start = cuts[j].e;
			} else {
				r->end = cuts[j].s;
				if (i + 1 < q->nruns) {
					q->runs[i + 1].why = cuts[j].why;
					if (q->runs[i + 1].lost != UINT64_MAX)
						q->runs[i + 1].lost += cuts[j].e - cuts[j].s;
				}
			}
		}
	}
	/* drop emptied runs; what is missing before each run follows from
	 * the offsets (a TRUNCATED cut loses an unknown amount) */
	{
		uint64_t prev_end = 0, data_end = 0, cut_end = 0;
		for (i = 0; i < q->np; i++) {
			uint64_t e = q->p[i].offset + (q->p[i].claimed > q->p[i].size ? q->p[i].claimed : q->p[i].size);
			if (e > data_end)
				data_end = e;
			if (q->p[i].claimed > q->p[i].size && e > cut_end)
				cut_end = e;
		}
		if (claimed && claimed < data_end && data_end - claimed < 8) {
			/* perf pads an AUXTRACE record's data to 8 bytes (the
			 * queue's next record starts where the data really ends,
			 * over the padding): the AUX records say where the
			 * kernel's data ends, and the last record's padding is
			 * no trace */
			for (i = 0; i < q->nruns; i++)
				if (q->runs[i].end > claimed)
					q->runs[i].end = q->runs[i].start > claimed ? q->runs[i].start : claimed;
			data_end = claimed;
		} else if (claimed < data_end && !damaged && q->np) {
			/* No AUX record says where the data ends (removed or
			 * damaged, or none was written): the padding is the
			 * zero bytes (PAD packets) that end the last record's
			 * data, 7 at most, as the kernel's data would end
			 * anywhere else */
			uint64_t end = padded_end(c, &q->p[q->np - 1], data_end);

			for (i = 0; i < q->nruns; i++)
				if (q->runs[i].end > end)
					q->runs[i].end = q->runs[i].start > end ? q->runs[i].start : end;
			data_end = end;
		}
		for (i = 0; i < nc; i++)
			if (cuts[i].s == cuts[i].e && cuts[i].s == data_end) {
				/* TRUNCATED at the very end */
				q->tail.start = q->tail.end = data_end;
				q->tail.lost = UINT64_MAX;
				q->tail.why = cuts[i].why;
			} else if (cuts[i].e >= data_end && cuts[i].s < data_end) {
				q->tail.why = cuts[i].why;
			}
		const char *why = NULL;
		for (i = 0, j = 0; i < q->nruns; i++) {
			struct run r = q->runs[i];
			if (r.end <= r.start) {
				if (!why)
					why = r.why;
				continue;
			}
			if (r.start > prev_end)
				r.lost = r.start - prev_end;
			else if (r.lost != UINT64_MAX)
				r.lost = 0;
			if (r.lost && why && r.why == q->runs[i].why && !strcmp(r.why, "AUX bytes missing from the recording"))
				r.why = why;
			why = NULL;
			prev_end = r.end;
			q->runs[j++] = r;
		}
		if (damaged || claimed > (data_end > prev_end ? data_end : prev_end)) {
			/* the queue's last data was in damaged input, or its
			 * last AUXTRACE records are gone (destroyed, or
			 * removed whole): the kernel's AUX records say how
			 * much the AUX buffer held, an unknown amount when
			 * they end before */
			uint64_t end = data_end > prev_end ? data_end : prev_end;
			q->tail.start = q->tail.end = end > claimed ? end : claimed;
			q->tail.lost = claimed > end ? claimed - prev_end : UINT64_MAX;
			q->tail.why = damaged ? DAMAGED_WHY : "AUX records say the AUX buffer held trace data "
							      "that no AUXTRACE record of the recording holds";
		} else if (data_end > prev_end) {
			q->tail.start = q->tail.end = data_end;
			q->tail.lost = data_end - prev_end;
			if (!q->tail.why)
				q->tail.why = cut_end == data_end ? "the recording ends inside this trace data (file cut short)"
								   : "AUX bytes missing from the recording";
		}
	}
	q->nruns = j;
	free(cuts);
	if (q->tail.lost && q->tail.lost != UINT64_MAX && input_cut_short(c))
		q->tail_open = 1;
	if (!q->tail.lost && input_cut_short(c)) {
		/* what the file held after its end (or after the damage that
		 * runs to it) is unknown: any queue's trace may go on there */
		q->tail.start = q->tail.end = q->nruns ? q->runs[q->nruns - 1].end : 0;
		q->tail.lost = UINT64_MAX;
		q->tail.why = "the recording ends early (cut short, or damaged to its end): "
			      "the trace after this, if any, is lost";
	}
	return 0;
}

/* Read stream bytes [rn->start, rn->end) of a queue into q->buf. */
static int load_run(struct conv *c, struct queue *q, const struct run *rn)
{
	size_t i;
	uint64_t size = rn->end - rn->start;

	if (size > q->bufsize) {
		free(q->buf);
		q->buf = malloc(size ? size : 1);
		q->bufsize = q->buf ? size : 0;
		if (!q->buf)
			return -ptc_err_nomem;
	}
	for (i = 0; i < q->np; i++) {
		const struct piece *p = &q->p[i];
		uint64_t s = p->offset > rn->start ? p->offset : rn->start;
		uint64_t e = p->offset + p->size < rn->end ? p->offset + p->size : rn->end;
		int err;

		if (s >= e)
			continue;
		if (p->data) {
			memcpy(q->buf + (s - rn->start), p->data + (s - p->offset), e - s);
			continue;
		}
		pthread_mutex_lock(&c->lock);
		err = ptc_perf_pread(c->r, q->buf + (s - rn->start), e - s, p->file_off + (s - p->offset));
		pthread_mutex_unlock(&c->lock);
		if (err < 0) {
			ptc_cli_error("%s", ptc_perf_errmsg(c->r));
			return err;
		}
	}
	return 0;
}

/* Trace bytes per window: small enough that -j has windows to decode
 * ahead on a short recording and that their logs (about 2.5 MB for a
 * window of real programs' trace) stay in the caches, large enough to
 * amortise starting a query decoder.  Measured on real programs' trace:
 * -j 2 needs 5-10% less CPU with 32 KiB than with 128 KiB, -j 1 the same.
 * The same with and without -j: where windows end can still change the
 * times of some branches of streams with CYC packets (libipt's time at a
 * PSB+ read in the stream and at one it synchronises on differ). */
#define WINDOW (32u << 10)
/* A window without a PSB to end at grows, but not beyond this: a stream
 * with no PSB for that long (hardware writes one every few KiB) is decoded
 * up to the limit, and the bytes from there to the next PSB become a gap,
 * so that memory stays bounded whatever the data. */
#define WINDOW_MAX (256u << 20)

static const uint8_t psb_pattern[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

/* The stream offset of the first PSB at or after pos in run rn (rn->end
 * when none), read in pieces of chunk bytes through a buffer of its own. */
static int find_psb(struct conv *c, struct queue *q, const struct run *rn, uint64_t pos,
		    uint64_t chunk, uint64_t *at)
{
	struct queue scan = *q;	/* the same pieces, another buffer */
	struct run w;
	int err = 0;

	scan.buf = NULL;
	scan.bufsize = 0;
	for (*at = rn->end; pos < rn->end; pos = w.end - 15) {
		size_t i, n;

		w.start = pos;
		w.end = rn->end - pos > chunk ? pos + chunk : rn->end;
		if ((err = load_run(c, &scan, &w)) < 0)
			break;
		n = (size_t)(w.end - w.start);
		for (i = 0; i + 16 <= n; i++)
			if (scan.buf[i] == 0x02 && !memcmp(scan.buf + i, psb_pattern, 16)) {
				*at = w.start + i;
				goto out;
			}
		if (w.end == rn->end)
			break;
	}
out:
	free(scan.buf);
	return err;
}

/* The offset of the last PSB that starts in buf(from, size - 16], or 0
 * when none.  A PSB's 16 bytes hold a whole 8-byte word at an offset that
 * is a multiple of 8, 02 82 02 82 ... or 82 02 82 02 ...: the scan back
 * reads such words, and looks for the PSB only around one that matches
 * (byte by byte, it took 1% of a conversion's instructions). */
static size_t last_psb(const uint8_t *buf, size_t from, size_t size)
{
	uint64_t even, odd, v;
	size_t a, s, lo;

	if (size < 16 || size - 16 <= from)
		return 0;
	memcpy(&even, psb_pattern, 8);
	memcpy(&odd, psb_pattern + 1, 8);
	for (a = (size - 8) & ~(size_t)7;; a -= 8) {
		memcpy(&v, buf + a, 8);
		if (v == even || v == odd) {
			/* the PSBs whose word this is start at a - 7 to a */
			lo = a > from + 7 ? a - 7 : from + 1;
			for (s = a < size - 16 ? a : size - 16; s >= lo; s--)
				if (buf[s] == 0x02 && !memcmp(buf + s, psb_pattern, 16))
					return s;
		}
		if (a <= from + 7)
			return 0;	/* (a PSB after from has its word above a) */
	}
}

/* Both engines decode a run in windows of about WINDOW bytes that end at
 * a PSB: the next window starts at that PSB and continues the walk (the
 * PSB+ must agree with the decoder's state), so memory does not grow with
 * the recording.  Plan the next window of the current run: its bytes, and
 * how it starts. */
static int plan_window(struct conv *c, struct queue *q, struct window *nw)
{
	const struct run *rn = &q->runs[q->cur - 1];
	struct run w;
	/* (max, where a window without a PSB gives up, decides the output:
	 * the same with or without -j) */
	uint64_t want = WINDOW, max = WINDOW_MAX;
	uint64_t next = 0, lost = rn->lost;
	int cause = PTC_GAP_AUX_LOST, fresh = q->wpos == rn->start || q->skipped;
	const char *why = rn->why;
	const char *env = getenv("PTCONV_WINDOW_BYTES");	/* for tests: many windows */
	size_t cut;
	int err;

	if (env && strtoull(env, NULL, 0) >= 64)
		want = strtoull(env, NULL, 0);
	env = getenv("PTCONV_WINDOW_MAX_BYTES");		/* for tests: a small limit */
	if (env && strtoull(env, NULL, 0) >= want)
		max = strtoull(env, NULL, 0);
	for (;;) {
		w.start = q->wpos;
		w.end = rn->end - q->wpos > want ? q->wpos + want : rn->end;
		err = load_run(c, q, &w);
		if (err < 0)
			return err;
		if (w.end == rn->end)
			break;
		cut = last_psb(q->buf, 0, (size_t)(w.end - w.start));
		if (cut) {
			w.end = w.start + cut;
			break;
		}
		if (want >= max) {
			/* decode up to here; skip to the next PSB */
			err = find_psb(c, q, rn, w.end, want, &next);
			if (err < 0)
				return err;
			break;
		}
		want *= 2;	/* no PSB in the window: a larger one */
	}
	memset(nw, 0, sizeof(*nw));
	nw->q = q;
	nw->start = w.start;
	nw->end = w.end;
	nw->fresh = fresh;
	nw->continued = w.end < rn->end && next <= w.end;
	nw->lost = lost;
	nw->cause = cause;
	nw->why = why;
	if (q->skipped) {
		/* the previous window stopped short of a PSB */
		nw->lost = q->skipped;
		nw->cause = PTC_GAP_DECODE;
		snprintf(nw->msg, sizeof(nw->msg), "no PSB in %" PRIu64 " bytes of trace: %" PRIu64
			 " bytes up to the next PSB not decoded", max, q->skipped);
		nw->why = nw->msg;
	}
	/* the window takes the bytes */
	nw->buf = q->buf;
	q->buf = NULL;
	q->bufsize = 0;
	q->skipped = next > w.end ? next - w.end : 0;
	q->wpos = next > w.end ? next : w.end;
	return 0;
}

/* Hand window w to the engine to decode. */
static int use_window(struct queue *q, struct window *w)
{
	int err;
	size_t i;

	err = w->fresh ? ptc_pt_engine_set_buffer(q->eng, w->buf, w->end - w->start, w->start, w->lost,
						  w->cause, w->why)
		       : ptc_pt_engine_continue(q->eng, w->buf, w->end - w->start, w->start);
	if (err >= 0)
		ptc_pt_engine_set_continued(q->eng, w->continued);
	for (i = 0; err >= 0 && i < q->nsusp; i++)
		err = ptc_pt_engine_add_suspect(q->eng, q->susp[i].s, q->susp[i].e);
	return err;
}

/* Memory done with, for the next window a worker decodes: into pool (of
 * *n) while it holds fewer than there can be windows in flight; returns
 * item when it does not go there (the caller frees it). */
static void *keep_spent(struct conv *c, void **pool, size_t *n, void *item)
{
	pthread_mutex_lock(&c->wlock);
	if (*n < c->ahead_depth + (size_t)c->nahead_th) {
		pool[(*n)++] = item;
		item = NULL;
	}
	pthread_mutex_unlock(&c->wlock);
	return item;
}

/* The window's encoding and tables done with. */
static void drop_encoding(struct conv *c, struct window *w)
{
	ptc_ahead_tables_put(w->tables);
	w->tables = NULL;
	if (w->out)
		ptc_ahead_out_free(keep_spent(c, (void **)c->outs, &c->nouts, w->out));
	w->out = NULL;
}

static void free_window(struct conv *c, struct queue *q, struct window *w)
{
	if (!w)
		return;
	drop_encoding(c, w);
	ptc_pt_ahead_free(w->ahead);
	if (!q->buf) {
		/* the next window's bytes go there */
		q->buf = w->buf;
		q->bufsize = w->end - w->start;
	} else {
		free(w->buf);
	}
	free(w);
}

/* A log done with: its memory goes to the next window a worker decodes. */
static void spend(struct conv *c, struct window *w)
{
	drop_encoding(c, w);
	if (!w->ahead)
		return;
	ptc_pt_ahead_free(c->ahead ? keep_spent(c, (void **)c->spent, &c->nspent, w->ahead) : w->ahead);
	w->ahead = NULL;
}

/* Is tid traced on another CPU's queue too?  (collect_shared) */
static int is_shared(const struct conv *c, uint32_t tid)
{
	size_t lo = 0, hi = c->nshared;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->shared[mid] == tid)
			return 1;
		if (c->shared[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Whether w's log may be replayed here (the decoder checks the rest);
 * w->shared says whether it has a thread that other queues decode too. */
static int window_replayable(const struct conv *c, struct window *w)
{
	uint32_t tids[64];
	size_t n, i;

	if (!w->ahead || ptc_pt_ahead_unusable(w->ahead))
		return 0;
	n = ptc_pt_ahead_threads(w->ahead, tids, 64);
	if (n > 64)
		return 0;
	w->shared = 0;
	for (i = 0; i < n; i++)
		w->shared |= is_shared(c, tids[i]);
	return 1;
}

/* A window's tap (ptc_pt_tap): its encoder. */
static int tap_begin(void *ctx, uint64_t start)
{
	struct window *w = ctx;

	return ptc_ahead_enc_begin(w->enc, w->tables, start, w->out);
}

static int tap_paths(void *ctx, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	return ptc_ahead_enc_paths(((struct window *)ctx)->enc, b, n, m, nm);
}

/* Decode the oldest queued window ahead with scratch, its log for the
 * driver (called and returning with c->wlock held). */
static void take_work(struct conv *c, struct ptc_pt_decoder *scratch, struct ptc_ahead_enc *enc)
{
	struct window *w = c->work_first;
	const struct ptc_pt_tap tap = { tap_begin, tap_paths, w };
	struct ptc_pt_ahead *reuse;

	c->work_first = w->next_work;
	if (!c->work_first)
		c->work_last = NULL;
	w->state = W_BUSY;
	reuse = c->nspent ? c->spent[--c->nspent] : NULL;
	if (w->tables && enc && c->nouts)
		w->out = c->outs[--c->nouts];
	pthread_mutex_unlock(&c->wlock);
	if (w->tables && enc && !w->out && ptc_ahead_out_new(&w->out) < 0)
		w->out = NULL;
	w->enc = w->out ? enc : NULL;
	if (ptc_pt_decode_ahead(scratch, w->q->cpu, w->q->tid, w->buf, (size_t)(w->end - w->start),
				w->start, w->continued, reuse, w->enc ? &tap : NULL, &w->ahead) < 0) {
		ptc_pt_ahead_free(reuse);
		w->ahead = NULL;
	}
	if (w->enc)
		ptc_ahead_enc_end(w->enc);
	w->enc = NULL;
	pthread_mutex_lock(&c->wlock);
	w->state = W_DONE;
	c->ndone++;
	pthread_cond_broadcast(&c->done_cv);
}

/* A decoder of windows ahead (ptc_pt_decode_ahead()). */
static int scratch_new(struct conv *c, struct ptc_pt_decoder **out)
{
	const struct ptc_pt_env env = { .region_at = env_region_at, .who_runs = env_who_runs, .ctx = c };
	struct ptc_pt_params params = c->params;

	params.memo = NULL;	/* a memo of its own: its paths' sinks are the log's */
	return ptc_pt_decoder_new(out, &params, &env, -1, UINT32_MAX);
}

/* The driver's decoder of windows ahead, made on first use; NULL when it
 * cannot be. */
static struct ptc_pt_decoder *driver_scratch(struct conv *c)
{
	if (!c->drv_scratch && !c->drv_scratch_failed && scratch_new(c, &c->drv_scratch) < 0) {
		c->drv_scratch = NULL;
		c->drv_scratch_failed = 1;
	}
	if (c->drv_scratch && c->encode_ahead && !c->drv_enc && ptc_ahead_enc_new(&c->drv_enc) < 0)
		c->drv_enc = NULL;
	return c->drv_scratch;
}

/* A snapshot of the tables of the writer of the thread q's decoder is in
 * (NULL: none, or it cannot take records encoded ahead): the branches of
 * the windows planned now are likely to be that thread's. */
static struct ptc_ahead_tables *thread_tables(struct queue *q)
{
	struct ptc_pt_thread *t = q->eng ? ptc_pt_engine_thread(q->eng) : NULL;
	struct cthread *ct = (struct cthread *)t;

	return ct && ct->w && !ct->finished ? ptc_writer_ahead_tables(ct->w) : NULL;
}

/* Plan the next windows of the current run: with -j, while fewer than
 * ahead_depth windows of all queues are with the workers, and those that
 * continue the stream go to them; else the next one. */
static int plan_ahead(struct conv *c, struct queue *q)
{
	const struct run *rn = &q->runs[q->cur - 1];

	while (q->wpos < rn->end &&
	       (!q->nwin || (c->ahead && q->nwin < c->ahead_depth && c->inflight < c->ahead_depth))) {
		struct window *w = malloc(sizeof(*w));
		int err;
		if (!w)
			return -ptc_err_nomem;
		err = plan_window(c, q, w);
		if (err < 0) {
			free(w);
			return err;
		}
		if (q->wlast)
			q->wlast->next = w;
		else
			q->wfirst = w;
		q->wlast = w;
		q->nwin++;
		__atomic_fetch_add(&c->windows, 1, __ATOMIC_RELAXED);
		if (c->ahead && !w->fresh && !q->nsusp) {
			if (c->encode_ahead)
				w->tables = thread_tables(q);
			c->inflight++;
			pthread_mutex_lock(&c->wlock);
			w->state = W_QUEUED;
			if (c->work_last)
				c->work_last->next_work = w;
			else
				c->work_first = w;
			c->work_last = w;
			pthread_cond_signal(&c->work_cv);
			pthread_mutex_unlock(&c->wlock);
		}
	}
	return 0;
}

/* Decode the next window of the current run: replay its log when a worker
 * made one that fits, else decode it here. */
static int queue_next_window(struct conv *c, struct queue *q)
{
	struct window *w;
	int err = plan_ahead(c, q);

	if (err < 0)
		return err;
	w = q->wfirst;
	if (!w)
		return -ptc_err_internal;
	q->wfirst = w->next;
	if (!q->wfirst)
		q->wlast = NULL;
	q->nwin--;
	if (c->ahead && w->state != W_PLANNED) {
		c->inflight--;
		pthread_mutex_lock(&c->wlock);
		if (w->state == W_QUEUED && !c->ahead_wait) {
			/* no worker took it yet: decoding it here is quicker */
			struct window **pp = &c->work_first, *prev = NULL;
			while (*pp != w) {
				prev = *pp;
				pp = &(*pp)->next_work;
			}
			*pp = w->next_work;
			if (c->work_last == w)
				c->work_last = prev;
			w->state = W_PLANNED;
		}
		while (w->state == W_BUSY || w->state == W_QUEUED) {
			/* A worker has the window that comes next: rather than
			 * wait, decode a later one ahead as the workers do (the
			 * driver's share of the decoding when replaying and
			 * writing take it less time than decoding). */
			if (w->state == W_BUSY && c->work_first && driver_scratch(c)) {
				take_work(c, c->drv_scratch, c->drv_enc);
				continue;
			}
			pthread_cond_wait(&c->done_cv, &c->wlock);
		}
		if (w->state == W_DONE)
			c->ndone--;
		pthread_mutex_unlock(&c->wlock);
	}
	free_window(c, q, q->win);
	q->win = w;
	if (w->ahead && window_replayable(c, w)) {
		q->replaying = 1;
		/* refill behind it while the workers are idle */
		return plan_ahead(c, q);
	}
	spend(c, w);
	err = use_window(q, w);
	if (err >= 0)
		err = plan_ahead(c, q);
	return err;
}

/* Decode (or replay) the current window of q until the time limit. */
static int queue_run(struct conv *c, struct queue *q, uint64_t until)
{
	struct window *w = q->win;
	int err;

	if (!q->replaying)
		return ptc_pt_engine_run(q->eng, until);
	/* A thread that other queues decode too: the log assumed that
	 * nothing but the window changes the thread while it is replayed,
	 * which holds when the replay does not stop (and let other queues
	 * run) before its end. */
	if (q->replaying == 1 && w->shared && until < ptc_pt_ahead_stop_limit(w->ahead))
		err = -ptc_err_mismatch;
	else
		err = ptc_pt_engine_replay(q->eng, w->ahead, until);
	q->replaying = 2;
	if (err == -ptc_err_mismatch) {
		/* the log does not continue the decoder's state: decode the
		 * window here after all */
		q->replaying = 0;
		spend(c, w);
		err = use_window(q, w);
		if (err < 0)
			return err;
		return ptc_pt_engine_run(q->eng, until);
	}
	if (err == 0) {
		q->replaying = 0;
		c->windows_replayed++;
		c->windows_shared += w->shared;
		spend(c, w);
	}
	return err;
}

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

/* Detached jobs (ptc_jobs.detach: a file's end) queued or running at most,
 * per worker: each holds its writer's tables and an open file. */
#define DETACHED_PER_WORKER 2

/* Take queued job off the queue (c->wlock held). */
static void unqueue_job(struct conv *c, struct ptc_job *job)
{
	struct ptc_job **pp = &c->job_first, *prev = NULL;

	while (*pp != job) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	*pp = job->next;
	if (c->job_last == job)
		c->job_last = prev;
}

/* Run job, taken off the queue, on this thread (called and returning with
 * c->wlock held).  A detached job is gone when its run() returns. */
static void run_job(struct conv *c, struct ptc_job *job)
{
	const int detached = job->detached;
	int err;

	job->state = JOB_RUNNING;
	pthread_mutex_unlock(&c->wlock);
	err = job->run(job);
	pthread_mutex_lock(&c->wlock);
	if (detached) {
		c->detached--;
		if (err < 0)
			c->detached_failed = 1;
	} else {
		job->state = JOB_DONE;
	}
	pthread_cond_broadcast(&c->done_cv);
}

/* Queue a writer's job, for a worker to run (ahead_worker(); c->wlock
 * held). */
static void queue_job(struct conv *c, struct ptc_job *job, int detached)
{
	job->state = JOB_QUEUED;
	job->detached = detached;
	job->next = NULL;
	if (c->job_last)
		c->job_last->next = job;
	else
		c->job_first = job;
	c->job_last = job;
	pthread_cond_signal(&c->work_cv);
}

/* ptc_jobs.submit */
static void jobs_submit(void *ctx, struct ptc_job *job)
{
	struct conv *c = ctx;

	pthread_mutex_lock(&c->wlock);
	queue_job(c, job, 0);
	pthread_mutex_unlock(&c->wlock);
}

/* Until at most max detached jobs are queued or running: the oldest
 * queued one run here, or a worker's waited for (c->wlock held). */
static void detached_at_most(struct conv *c, size_t max)
{
	while (c->detached > max) {
		struct ptc_job *job = c->job_first;

		while (job && !job->detached)
			job = job->next;
		if (job) {
			unqueue_job(c, job);
			run_job(c, job);
		} else {
			pthread_cond_wait(&c->done_cv, &c->wlock);
		}
	}
}

/* ptc_jobs.detach */
static void jobs_detach(void *ctx, struct ptc_job *job)
{
	struct conv *c = ctx;

	pthread_mutex_lock(&c->wlock);
	detached_at_most(c, (size_t)DETACHED_PER_WORKER * (size_t)c->nahead_th - 1);
	queue_job(c, job, 1);
	c->detached++;
	pthread_mutex_unlock(&c->wlock);
}

/* Has a detached job failed so far?  (The conversion stops, as after a
 * writer's finish() that failed.) */
static int jobs_failed(struct conv *c)
{
	int failed;

	if (!c->ahead)
		return 0;
	pthread_mutex_lock(&c->wlock);
	failed = c->detached_failed;
	pthread_mutex_unlock(&c->wlock);
	return failed;
}

/* Every detached job run (before the writers go, and before the summary
 * says what was written); 1 if one failed (its writer says how). */
static int jobs_drain(struct conv *c)
{
	if (!c->ahead)
		return 0;
	pthread_mutex_lock(&c->wlock);
	detached_at_most(c, 0);
	pthread_mutex_unlock(&c->wlock);
	return jobs_failed(c);
}

/* The job done: run here if no worker took it yet, else waited for. */
static void jobs_wait(void *ctx, struct ptc_job *job)
{
	struct conv *c = ctx;

	pthread_mutex_lock(&c->wlock);
	if (job->state == JOB_QUEUED) {
		unqueue_job(c, job);
		run_job(c, job);
	}
	while (job->state != JOB_DONE)
		pthread_cond_wait(&c->done_cv, &c->wlock);
	pthread_mutex_unlock(&c->wlock);
}

/* The oldest job, run by a worker (called and returning with c->wlock
 * held). */
static void take_job(struct conv *c)
{
	struct ptc_job *job = c->job_first;

	unqueue_job(c, job);
	run_job(c, job);
}

/* The workers: decode queued windows ahead, oldest first, and run the
 * writers' jobs when no window waits, or when a window they decoded waits
 * for the driver: then the driver is behind, and a job it finds still
 * queued at its writer's next chunk it runs itself (jobs_wait()), on the
 * thread the conversion waits for.  (Taking jobs only when no window
 * waited left xz's chunks to the driver: 7% of its time in zstd; this
 * rule made xz -j 2 4-5% faster in wall time.) */
static void *ahead_worker(void *arg)
{
	struct conv *c = arg;
	struct ptc_pt_decoder *scratch = NULL;
	struct ptc_ahead_enc *enc = NULL;

	if (scratch_new(c, &scratch) < 0)
		return NULL;	/* the windows are decoded by the driver itself */
	if (c->encode_ahead && ptc_ahead_enc_new(&enc) < 0)
		enc = NULL;	/* (decoded only) */
	pthread_mutex_lock(&c->wlock);
	for (;;) {
		while (!c->work_first && !c->job_first && !c->work_stop)
			pthread_cond_wait(&c->work_cv, &c->wlock);
		if (c->work_stop)
			break;
		if (c->job_first && (!c->work_first || c->ndone))
			take_job(c);
		else
			take_work(c, scratch, enc);
	}
	pthread_mutex_unlock(&c->wlock);
	ptc_ahead_enc_free(enc);
	ptc_pt_decoder_free(scratch);
	return NULL;
}

static void stop_ahead(struct conv *c)
{
	int i;

	if (!c->nahead_th)
		return;
	pthread_mutex_lock(&c->wlock);
	c->work_stop = 1;
	pthread_cond_broadcast(&c->work_cv);
	pthread_mutex_unlock(&c->wlock);
	for (i = 0; i < c->nahead_th; i++)
		pthread_join(c->ahead_th[i], NULL);
	c->nahead_th = 0;
	ptc_pt_decoder_free(c->drv_scratch);
	c->drv_scratch = NULL;
}

static int queue_next_run(struct conv *c, struct queue *q)
{
	const struct run *rn;

	if (q->wfirst || (q->cur && q->cur <= q->nruns && q->wpos < q->runs[q->cur - 1].end))
		return queue_next_window(c, q);
	if (q->skipped) {
		/* the run ended without the PSB its last window looked for */
		char msg[160];
		uint64_t n = q->skipped;

		q->skipped = 0;
		snprintf(msg, sizeof(msg), "no PSB in the last %" PRIu64 " bytes of the trace: not decoded", n);
		return ptc_pt_engine_set_buffer(q->eng, NULL, 0, q->wpos, n, PTC_GAP_DECODE, msg);
	}
	if (q->cur == q->nruns && q->tail.lost) {
		/* the end of the queue's data was lost: say so */
		q->cur++;
		return ptc_pt_engine_set_buffer(q->eng, NULL, 0, q->tail.start, q->tail.lost,
						PTC_GAP_AUX_LOST, q->tail.why);
	}
	if (q->cur >= q->nruns) {
		q->done = 1;
		return ptc_pt_engine_finish(q->eng);
	}
	rn = &q->runs[q->cur++];
	q->wpos = rn->start;
	return queue_next_window(c, q);
}

static uint64_t queue_time(const struct queue *q)
{
	return ptc_pt_engine_time(q->eng);
}

static void progress(struct conv *c, time_t t0, uint64_t done, uint64_t total, int final)
{
	static time_t last;
	time_t now = time(NULL);

	if (!c->pto->progress || c->opt->quiet)
		return;
	if (!final && (now - t0 < 1 || now == last))
		return;
	last = now;
	fprintf(stderr, "\rptconv: decoding %3d%% (%" PRIu64 " of %" PRIu64 " MB)%s",
		total ? (int)(100.0 * (double)done / (double)total) : 100, done >> 20, total >> 20,
		final ? "\n" : "");
}

/* Threads end early, so that a recording of thousands of threads does not
 * keep every thread's output files and compressors to the end. */
static int finish_thread(struct conv *c, struct cthread *t);

/* A per-thread queue is one thread's: when it is done, so is the thread. */
/* The thread of a per-thread queue, or NULL. */
static struct cthread *queue_thread(struct conv *c, const struct queue *q)
{
	struct cthread *t;

	if (q->tid == UINT32_MAX)
		return NULL;
	pthread_mutex_lock(&c->lock);
	t = find_thread(c, q->tid);
	pthread_mutex_unlock(&c->lock);
	return t;
}

static void finish_queue_thread(struct conv *c, struct queue *q)
{
	struct cthread *t;

	if (!c->per_thread || c->per_cpu_out || !(t = queue_thread(c, q)))
		return;
	if (finish_thread(c, t))
		c->fatal = PTC_EXIT_OUTPUT;
}

/* Per CPU: a thread that exited before the time every queue is settled at
 * (ptc_pt_decoder_settled_time) gets nothing more from any queue.  With a
 * margin: a branch's time is the last timing packet's, which may equal
 * the EXIT record's (or, with cycle-accurate timing, pass it by a little)
 * while the thread's last branches are still to come. */
#define EXIT_MARGIN_NS 20000u

/* The time up to which every queue not done has handed its threads all
 * their branches (UINT64_MAX: every queue is done). */
static uint64_t settled_time(const struct conv *c)
{
	return others_settled(c, INT_MIN);
}

static void finish_exited(struct conv *c)
{
	uint64_t settled;

	if (c->next_exit >= c->nexits)
		return;
	settled = settled_time(c);
	while (c->next_exit < c->nexits && (settled == UINT64_MAX ||
					      c->exits[c->next_exit].time + EXIT_MARGIN_NS < settled)) {
		struct cthread *t = find_thread(c, c->exits[c->next_exit++].tid);
		if (t && finish_thread(c, t))
			c->fatal = PTC_EXIT_OUTPUT;
	}
}

static int cmp_exit(const void *a, const void *b)
{
	const struct exit_at *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The sideband's EXIT times, in order (per-CPU recordings written per
 * thread only). */
static int plan_exits(struct conv *c)
{
	const struct ptc_sb_thread *th;
	size_t n, i;

	if (!c->sb || c->per_thread || c->per_cpu_out)
		return 0;
	th = ptc_sb_threads(c->sb, &n);
	c->exits = calloc(n ? n : 1, sizeof(*c->exits));
	if (!c->exits)
		return -ptc_err_nomem;
	for (i = 0; i < n; i++)
		if (th[i].t_exit != PTC_SB_TIME_MAX) {
			c->exits[c->nexits].time = th[i].t_exit;
			c->exits[c->nexits++].tid = th[i].tid;
		}
	if (c->nexits)
		qsort(c->exits, c->nexits, sizeof(*c->exits), cmp_exit);
	return 0;
}

/* The threads' writers, finished or not (an unfinished one leaves its
 * files under their temporary names). */
static void free_writers(struct conv *c)
{
	size_t i;

	(void)jobs_drain(c);	/* (ends the files handed to the workers) */
	for (i = 0; i < c->nth; i++) {
		ptc_text_sink_free(c->th[i]->text);
		ptc_cbpexp_sink_free(c->th[i]->cbp);
		ptc_writer_free(c->th[i]->w);
		c->th[i]->text = c->th[i]->cbp = NULL;
		c->th[i]->w = NULL;
	}
}

static int interrupted(const struct conv *c)
{
	return c->opt->interrupted && *c->opt->interrupted;
}

/* Stopped before the end (by the user, or by an output that failed):
 * the files of the threads that ended are complete and stay; the others,
 * under their temporary names, go (finishing them would give whole files
 * of part of a thread's trace). */
static int stop_early(struct conv *c, const char *why, int status)
{
	size_t i;
	int removed;

	(void)jobs_drain(c);	/* (the files handed to the workers ended, or failed) */
	for (i = 0; i < c->nth; i++) {
		struct cthread *t = c->th[i];
		if ((t->w && ptc_writer_errmsg(t->w)[0]) || (t->pt.sink_error && !t->finished))
			output_error(c, t, t->pt.sink_error);
	}
	free_writers(c);
	removed = ptc_out_clean(c->outdir);
	ptc_cli_error("%s: the files of the threads that had ended are complete and stay in %s; "
		      "%d unfinished files removed", why, c->outdir, removed);
	return status;
}

/* The paths marked in the batch of queue q's thread point into the memo
 * of the worker that decodes it, which goes with the worker. */
static void drop_queue_paths(struct conv *c, struct queue *q)
{
	struct cthread *t = queue_thread(c, q);

	if (t)
		ptc_pt_thread_drop_paths(&t->pt);
}

/* -j N on a per-thread recording: each queue is one thread's, so queues
 * are independent and decode in parallel; the output does not change. */
static void *worker(void *arg)
{
	struct conv *c = arg;
	struct ptc_path_memo *memo = NULL;

	/* the queues this thread decodes share a memo of TNT paths (their
	 * sinks run here; the memo's paths must not reach another thread's) */
	if (!c->params.no_paths && ptc_path_memo_new(&memo, c->params.memo_bytes) < 0)
		memo = NULL;
	for (;;) {
		struct queue *q;
		int err = 0;

		pthread_mutex_lock(&c->lock);
		q = c->next_queue < c->nq && !c->worker_err ? &c->q[c->next_queue++] : NULL;
		pthread_mutex_unlock(&c->lock);
		if (!q) {
			ptc_path_memo_free(memo);
			return NULL;
		}
		/* the queue's engine from its start to its end only */
		err = ptc_pt_engine_new(&q->eng, engine_kind(c), &c->params, &c->env, q->cpu, q->tid);
		if (err >= 0) {
			ptc_pt_engine_set_memo(q->eng, memo);
			err = queue_next_run(c, q);
		}
		while (!q->done && err >= 0) {
			err = ptc_pt_engine_run(q->eng, UINT64_MAX);
			if (err == 0)
				err = queue_next_run(c, q);
			if (err >= 0 && interrupted(c))
				err = -ptc_err_interrupted;
		}
		if (err >= 0)
			finish_queue_thread(c, q);
		drop_queue_paths(c, q);	/* (after an error: unflushed) */
		if (q->eng) {
			q->st = *ptc_pt_engine_stats(q->eng);
			ptc_pt_engine_free(q->eng);
			q->eng = NULL;
		}
		if (c->prog_total > (64u << 20)) {
			size_t k;
			pthread_mutex_lock(&c->lock);
			for (k = 0; k < q->np; k++)
				c->prog_done += q->p[k].size;
			progress(c, c->prog_t0, c->prog_done, c->prog_total, 0);
			pthread_mutex_unlock(&c->lock);
		}
		if (err < 0) {
			pthread_mutex_lock(&c->lock);
			c->worker_err = err;
			pthread_mutex_unlock(&c->lock);
			ptc_path_memo_free(memo);
			return NULL;
		}
	}
}

static int decode_parallel(struct conv *c)
{
	pthread_t th[64];
	int n = c->opt->jobs < 64 ? c->opt->jobs : 64, i, started = 0;

	if ((size_t)n > c->nq)
		n = (int)c->nq;
	if (n <= 1) {
		worker(c);
		return c->worker_err;
	}
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, c) == 0)
			started++;
	if (!started)
		worker(c);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	return c->worker_err;
}

struct tid_cpu {
	uint32_t tid;
	int cpu;
};

struct shared_scan {
	struct tid_cpu *v;
	size_t n, cap;
	int cpu;
	int err;
};

static void shared_add(void *arg, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct shared_scan *s = arg;

	(void)pid, (void)time;
	if (s->n == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 256;
		struct tid_cpu *n = realloc(s->v, ncap * sizeof(*n));
		if (!n) {
			s->err = -ptc_err_nomem;
			return;
		}
		s->v = n;
		s->cap = ncap;
	}
	s->v[s->n].tid = tid;
	s->v[s->n++].cpu = s->cpu;
}

static int cmp_tid_cpu(const void *a, const void *b)
{
	const struct tid_cpu *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* The threads the sideband shows on more than one CPU that has a queue: a
 * window of one CPU's queue holding such a thread is replayed only in one
 * go (queue_run), because the other CPU's queue may decode the thread while
 * the replay stands at a stop point, and the log assumed its own view of
 * the thread's call stack and pending instructions. */
static int collect_shared(struct conv *c)
{
	struct shared_scan s;
	size_t i, j;

	if (!c->sb || c->per_thread || c->per_cpu_out || c->nq < 2)
		return 0;
	memset(&s, 0, sizeof(s));
	for (i = 0; i < c->nq && !s.err; i++) {
		uint32_t pid, tid;
		s.cpu = c->q[i].cpu;
		if (ptc_sb_thread_on_cpu(c->sb, s.cpu, 0, &pid, &tid) == 0)
			shared_add(&s, pid, tid, 0);
		ptc_sb_threads_between(c->sb, s.cpu, 0, UINT64_MAX, shared_add, &s);
	}
	if (s.err) {
		free(s.v);
		return s.err;
	}
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), cmp_tid_cpu);
	c->shared = malloc((s.n ? s.n : 1) * sizeof(*c->shared));
	if (!c->shared) {
		free(s.v);
		return -ptc_err_nomem;
	}
	for (i = 0; i < s.n; i = j) {
		int cpus = 1;
		for (j = i + 1; j < s.n && s.v[j].tid == s.v[i].tid; j++)
			cpus += s.v[j].cpu != s.v[j - 1].cpu;
		if (cpus > 1 && s.v[i].tid)
			c->shared[c->nshared++] = s.v[i].tid;
	}
	free(s.v);
	return 0;
}

/* -j N (N > 1) on queues decoded in time order: N - 1 workers decode the
 * windows ahead, the driver replays their logs (and decodes what they
 * did not reach). */
static int start_ahead(struct conv *c)
{
	int n = c->opt->jobs - 1, i, err;
	const char *env = getenv("PTCONV_AHEAD_DEPTH");	/* for tests */

	if (n < 1 || engine_kind(c) != PTC_PT_ENGINE_WALKER)
		return 0;
	/* (cbp-experiments lists the images its thread's branches used,
	 * told by region_at, which the replay does not call) */
	if (c->formats & FMT_CBPEXP)
		return 0;
	if (c->per_thread && c->nq > 1 && !c->per_cpu_out)
		return 0;	/* the queues themselves decode in parallel */
	if (n > 64)
		n = 64;
	if ((err = collect_shared(c)) < 0)
		return err;
	c->ahead_depth = env && atoi(env) > 0 ? (size_t)atoi(env) : 2 * (size_t)c->opt->jobs;
	env = getenv("PTCONV_AHEAD_WAIT");	/* for tests */
	c->ahead_wait = env && atoi(env) > 0;
	c->ahead_th = calloc((size_t)n, sizeof(*c->ahead_th));
	c->spent = calloc(c->ahead_depth + (size_t)n, sizeof(*c->spent));
	c->outs = calloc(c->ahead_depth + (size_t)n, sizeof(*c->outs));
	if (!c->ahead_th || !c->spent || !c->outs)
		return -ptc_err_nomem;
	pthread_mutex_init(&c->wlock, NULL);
	pthread_cond_init(&c->work_cv, NULL);
	pthread_cond_init(&c->done_cv, NULL);
	c->jobs.submit = jobs_submit;
	c->jobs.wait = jobs_wait;
	c->jobs.detach = jobs_detach;
	c->jobs.ctx = c;
	c->ahead = 1;
	for (i = 0; i < n; i++)
		if (pthread_create(&c->ahead_th[c->nahead_th], NULL, ahead_worker, c) == 0)
			c->nahead_th++;
	if (!c->nahead_th)
		c->ahead = 0;
	return 0;
}

/* A recording cut short (or damaged to its end) has lost the trace and the
 * context switches after the cut: a thread of a per-CPU recording that had
 * not exited may have run on, anywhere, without a queue's loss naming it.
 * Its stream ends in a gap, unless it does already. */
static int gap_cut_threads(struct conv *c)
{
	struct ptc_gap g;
	uint64_t last = 0;
	size_t i;
	int err;

	if (!c->sb || c->per_thread || c->per_cpu_out || !input_cut_short(c))
		return 0;
	for (i = 0; i < c->nq; i++)
		if (c->q[i].eng && queue_time(&c->q[i]) > last)
			last = queue_time(&c->q[i]);
	memset(&g, 0, sizeof(g));
	g.cause = PTC_GAP_AUX_LOST;
	g.resume_offset = UINT64_MAX;
	g.time = last;
	g.lost_branches = UINT64_MAX;
	g.detail = "the recording ends early (cut short, or damaged to its end): what the thread did "
		   "after, if anything, is lost";
	for (i = 0; i < c->nth; i++) {
		struct cthread *t = c->th[i];
		const struct ptc_sb_thread *s = ptc_sb_thread(c->sb, t->pt.tid);

		if (t->pt.after_gap || t->finished || (s && s->t_exit != PTC_SB_TIME_MAX))
			continue;
		t->pt.after_gap = 1;
		if ((err = ptc_pt_thread_gap(&t->pt, &g)) < 0)
			return err;
	}
	return 0;
}

/* Records encoded ahead that thread t's outputs can take at once: the
 * registry's writer's room, when it is all the thread writes and every
 * record goes there as it comes (tee_paths()). */
static uint64_t env_tap_room(void *ctx, struct ptc_pt_thread *t, void *tap_ctx)
{
	struct cthread *ct = (struct cthread *)t;
	const struct window *w = tap_ctx;

	(void)ctx;
	if (!ct->w || ct->finished || ct->time_start || ct->time_end != UINT64_MAX || ct->text || ct->cbp)
		return 0;
	return ptc_writer_ahead_room(ct->w, w->out);
}

static int env_tap_splice(void *ctx, struct ptc_pt_thread *t, void *tap_ctx)
{
	struct conv *c = ctx;
	struct cthread *ct = (struct cthread *)t;
	const struct window *w = tap_ctx;
	int err;

	c->windows_spliced++;
	c->records_spliced += ptc_ahead_out_records(w->out);
	if (ct->pt.cpu != ct->cpu_told && ct->pt.cpu >= 0) {
		/* (as writer_branches() tells it) */
		if ((err = ptc_writer_cpu(ct->w, (uint32_t)ct->pt.cpu)) < 0)
			return err;
		ct->cpu_told = ct->pt.cpu;
	}
	return ptc_writer_splice(ct->w, w->out);
}

static int decode_all(struct conv *c)
{
	const struct ptc_pt_env env = { .thread_at = env_thread_at, .region_at = env_region_at,
					.orphan_gap = env_orphan_gap, .lost_on_cpu = env_lost_on_cpu,
					.who_runs = env_who_runs, .tap_room = env_tap_room,
					.tap_splice = env_tap_splice, .ctx = c };
	/* Per-thread queues are independent: one after the other (or on -j
	 * threads), each thread finished when its queue is, rather than
	 * interleaved in time order, which would keep every thread's
	 * outputs open at once (decode_parallel(): each queue's engine is
	 * made when its decoding starts). */
	const int parallel = c->per_thread && c->nq > 1 && !c->per_cpu_out;
	size_t i;
	uint64_t total = 0, done = 0;
	time_t t0 = time(NULL);
	int err, shown = 0;

	c->env = env;

	c->params.no_fastq = c->pto->engine_query;
	c->params.no_paths = c->pto->engine_steps;
	{
		const char *bound = getenv("PTCONV_MEMO_BYTES");	/* for tests: a memo that fills up */

		if (bound && strtoull(bound, NULL, 0) > 0)
			c->params.memo_bytes = strtoull(bound, NULL, 0);
	}
	/* One memo of TNT paths for the queues that this thread decodes (in
	 * time order, or one after the other): the -j workers have their
	 * own (decode_parallel(), ahead_worker()). */
	if (!c->params.no_paths && ptc_path_memo_new(&c->memo, c->params.memo_bytes) < 0)
		return -ptc_err_nomem;
	c->params.memo = c->memo;
	if ((err = start_ahead(c)) < 0)
		return err;
	for (i = 0; i < c->nq; i++) {
		struct queue *q = &c->q[i];
		size_t k;
		for (k = 0; k < q->np; k++)
			total += q->p[k].size;
		err = plan_runs(c, q);
		if (err < 0)
			return err;
		if (parallel)
			continue;
		err = ptc_pt_engine_new(&q->eng, engine_kind(c), &c->params, &env, q->cpu, q->tid);
		if (err < 0)
			return err;
		err = queue_next_run(c, q);
		if (err < 0)
			return err;
	}
	if ((err = plan_exits(c)) < 0)
		return err;
	if (parallel) {
		c->prog_total = total;
		c->prog_t0 = t0;
		err = decode_parallel(c);
		if (total > (64u << 20))
			progress(c, t0, total, total, 1);
		return err;
	}
	for (;;) {
		struct queue *best = NULL;
		uint64_t until = UINT64_MAX, due;

		for (i = 0; i < c->nq; i++) {
			if (c->q[i].done)
				continue;
			if (!best || queue_time(&c->q[i]) < queue_time(best))
				best = &c->q[i];
		}
		if (!best)
			break;
		for (i = 0; i < c->nq; i++)
			if (!c->q[i].done && &c->q[i] != best && queue_time(&c->q[i]) < until)
				until = queue_time(&c->q[i]);
		/* back here once past the next exit, to finish that thread */
		if (c->next_exit < c->nexits && c->exits[c->next_exit].time + EXIT_MARGIN_NS < until)
			until = c->exits[c->next_exit].time + EXIT_MARGIN_NS + 1;
		/* and at the next switch-in a loss's gap is due at (one the
		 * queue is past already goes as soon as the others are too) */
		if (c->nspans && (due = spans_due(c)) < until && due > queue_time(best))
			until = due;
		err = queue_run(c, best, until);
		if (err < 0)
			return err;
		if (err == 0) {
			err = queue_next_run(c, best);
			if (err < 0)
				return err;
			if (best->done)
				finish_queue_thread(c, best);
		}
		/* the gaps due by now, before a thread that got one ends */
		if (c->nspans && (err = place_gaps(c, settled_time(c))) < 0)
			return err;
		finish_exited(c);
		if (c->fatal)
			return -ptc_err_io;
		if (interrupted(c))
			return -ptc_err_interrupted;
		if (total > (64u << 20)) {
			size_t k;
			done = 0;
			for (i = 0; i < c->nq; i++) {
				const struct queue *q = &c->q[i];
				for (k = 0; k + 1 < q->cur && k < q->nruns; k++)
					done += q->runs[k].end - q->runs[k].start;
				if (q->cur && q->cur <= q->nruns)
					done += q->wpos - q->runs[q->cur - 1].start;
			}
			progress(c, t0, done, total, 0);
			shown = 1;
		}
	}
	if (shown)
		progress(c, t0, total, total, 1);
	/* (every queue is done: the gaps still due go now) */
	if ((err = place_gaps(c, UINT64_MAX)) < 0)
		return err;
	return gap_cut_threads(c);
}

/* ---- reading the recording ---- */

static void parse_cpuid(const char *s, struct ptc_pt_params *p)
{
	int fam, mod, step;

	/* perf's CPUID feature: "GenuineIntel,6,85,4" */
	if (s && !strncmp(s, "GenuineIntel,", 13) && sscanf(s + 13, "%d,%d,%d", &fam, &mod, &step) == 3) {
		p->cpu_family = fam;
		p->cpu_model = mod;
		p->cpu_stepping = step;
	}
}

/* A sched:sched_switch sample: a switch on its CPU at its time, as
 * SWITCH_CPU_WIDE would say (the sideband uses it only for CPUs that have
 * no switch records). */
static int read_sched_switch(struct conv *c, const struct ptc_perf_record *rec)
{
	struct ptc_sched_switch sw;
	uint64_t bad = c->ss.bad;
	int k = ptc_sched_switch_sample(&c->ss, c->r, rec, &sw);

	if (k < 0) {
		if (!bad && !c->opt->quiet) {
			if (c->ss.err[0])
				ptc_cli_error("warning: %s: sched_switch samples cannot attribute the trace", c->ss.err);
			else
				ptc_cli_error("warning: %s: offset 0x%" PRIx64 ": malformed sched_switch sample, "
					      "ignored (further ones are counted)", ptc_perf_name(c->r), rec->offset);
		}
		return 0;
	}
	if (k == 0 || !(rec->sid.valid & PTC_SID_CPU))
		return 0;
	return ptc_sb_add_sched_switch(c->sb, rec->sid.cpu,
				       (rec->sid.valid & PTC_SID_TIME) ? rec->sid.time : 0,
				       (uint32_t)sw.next_pid);
}

/* A file cut inside an AUXTRACE record's payload (perf killed, a copy
 * interrupted): the bytes that are there are decoded, and the rest of the
 * record counts as lost at the end of its queue's data (plan_runs). */
static void clamp_to_file(struct conv *c)
{
	uint64_t fsize = ptc_perf_file_size(c->r);
	size_t i, k;

	if (!fsize)
		return;
	for (i = 0; i < c->nq; i++)
		for (k = 0; k < c->q[i].np; k++) {
			struct piece *p = &c->q[i].p[k];
			if (p->data || p->file_off + p->size <= fsize)
				continue;
			p->claimed = p->size;
			p->size = p->file_off < fsize ? fsize - p->file_off : 0;
			ptc_cli_error("%s: the file ends inside the trace data at 0x%" PRIx64 ": %" PRIu64
				      " of its %" PRIu64 " bytes are there, the rest is counted as lost",
				      ptc_perf_name(c->r), p->file_off, p->size, p->claimed);
		}
}

void ptc_convert_say_damage(const struct ptc_perf_reader *r)
{
	size_t i;

	for (i = 0; i < ptc_perf_nr_skips(r); i++) {
		const struct ptc_perf_skip *s = ptc_perf_skip(r, i);
		ptc_cli_error("warning: %s", s->message);
		if (s->merged)
			ptc_cli_error("warning: %s: damage at %" PRIu64 " more places after offset 0x%" PRIx64,
				      ptc_perf_name(r), s->merged, s->offset);
	}
}

/* Where the reader skipped damaged input: said on standard error, and the
 * sideband told that its records there are lost (records-lost gaps for the
 * threads that ran then). */
static int report_damage(struct conv *c)
{
	size_t i;

	ptc_convert_say_damage(c->r);
	for (i = 0; i < ptc_perf_nr_skips(c->r); i++) {
		const struct ptc_perf_skip *s = ptc_perf_skip(c->r, i);
		int err = s->bytes ? ptc_sb_add_damage(c->sb, s->offset, s->bytes, s->t_start, s->t_end) : 0;
		if (err < 0)
			return err;
	}
	c->damage = ptc_perf_stats(c->r)->skips;
	return 0;
}

/* Malformed sideband records in a row: from offset, bytes long, after a
 * record of time t_start. */
struct bad_records {
	uint64_t offset, bytes, t_start;
};

/* They end before a record of time t_end (PTC_SB_TIME_MAX: the file's end). */
static int add_bad(struct conv *c, struct bad_records *bad, uint64_t t_end)
{
	int err = ptc_sb_add_damage(c->sb, bad->offset, bad->bytes, bad->t_start, t_end);

	bad->bytes = 0;
	return err;
}

/* The switch records the sideband found contradicted by their neighbours
 * (struct ptc_sb_switch_damage): said with the file's offset, counted
 * (summary.json damaged_switches, --strict fails).  A repaired one's
 * thread is what its neighbours agree on; an unrepaired one's stretch is
 * a lost range, records-lost gaps for the threads that ran there. */
static void say_switch_damage(struct conv *c)
{
	size_t i, n;
	const struct ptc_sb_switch_damage *d = ptc_sb_switch_damage(c->sb, &n);

	c->damaged_switches = n;
	for (i = 0; i < n; i++) {
		char taken[96];

		if (d[i].repaired)
			snprintf(taken, sizeof(taken), "the records around it say %u/%u: taken as that",
				 d[i].pid_taken, d[i].tid_taken);
		else
			snprintf(taken, sizeof(taken), "no two records around it agree: the thread is unknown, "
				 "counted as records lost");
		ptc_cli_error("warning: %s: offset 0x%" PRIx64 ": damaged %s record on cpu %d at perf time %"
			      PRIu64 ": its %s thread %u/%u contradicts the switches around it; %s",
			      ptc_perf_name(c->r), d[i].offset, ptc_perf_record_name(PERF_RECORD_SWITCH_CPU_WIDE),
			      d[i].cpu, d[i].time, d[i].next_prev ? "next_prev" : "sample_id", d[i].pid, d[i].tid,
			      taken);
	}
}

static int read_records(struct conv *c, uint64_t **privcopy, size_t *nr_priv)
{
	struct ptc_perf_record rec;
	struct bad_records bad = { 0 };
	uint64_t last_time = 0;
	int err;

	*nr_priv = 0;
	err = ptc_sb_add_build_ids(c->sb, ptc_perf_info(c->r));
	if (err < 0)
		return err;
	while ((err = ptc_perf_next(c->r, &rec)) > 0) {
		if (rec.sid.valid & PTC_SID_TIME) {
			if (bad.bytes && (err = add_bad(c, &bad, rec.sid.time)) < 0)
				return err;
			last_time = rec.sid.time;
		}
		if (rec.type == PTC_REC_AUXTRACE_INFO && !*privcopy) {
			struct ptc_perf_auxtrace_info ai;
			if (ptc_perf_parse_auxtrace_info(&rec, &ai) == 0 && ai.type == PTC_AUXTRACE_INTEL_PT) {
				*privcopy = calloc(ai.nr_priv + 1, sizeof(uint64_t));
				if (!*privcopy)
					return -ptc_err_nomem;
				memcpy(*privcopy, ai.priv, ai.nr_priv * sizeof(uint64_t));
				*nr_priv = ai.nr_priv;
			}
		} else if (rec.type == PTC_REC_AUXTRACE) {
			struct ptc_perf_auxtrace at;
			struct queue *q;
			struct piece *p;
			int per_thread_piece;

			err = ptc_perf_parse_auxtrace(&rec, &at);
			if (err < 0) {
				ptc_cli_error("%s: offset 0x%" PRIx64 ": malformed AUXTRACE record",
					      ptc_perf_name(c->r), rec.offset);
				continue;
			}
			per_thread_piece = at.cpu == UINT32_MAX;
			q = get_queue(c, at.idx, per_thread_piece ? -1 : (int)at.cpu, at.tid);
			if (!q)
				return -ptc_err_nomem;
			if (q->np == q->capp) {
				size_t ncap = q->capp ? q->capp * 2 : 16;
				p = realloc(q->p, ncap * sizeof(*p));
				if (!p)
					return -ptc_err_nomem;
				q->p = p;
				q->capp = ncap;
			}
			p = &q->p[q->np++];
			memset(p, 0, sizeof(*p));
			p->offset = at.offset;
			p->size = rec.aux_size;
			p->file_off = rec.aux_offset;
			p->lost = rec.aux_lost;
			if (!ptc_perf_seekable(c->r) && rec.aux_size) {
				ssize_t got;
				uint64_t have = 0;
				if (rec.aux_size > (1ull << 34))
					return -ptc_err_bad_size;
				p->data = malloc(rec.aux_size);
				if (!p->data)
					return -ptc_err_nomem;
				while (have < rec.aux_size &&
				       (got = ptc_perf_read_aux(c->r, p->data + have, rec.aux_size - have)) > 0)
					have += (uint64_t)got;
				if (have < rec.aux_size) {
					ptc_cli_error("%s", ptc_perf_errmsg(c->r));
					p->size = have;
				}
			}
		} else if (rec.type == PTC_REC_AUXTRACE_ERROR) {
			struct ptc_perf_auxtrace_error ae;
			c->aux_errors++;
			if (!c->opt->quiet && ptc_perf_parse_auxtrace_error(&rec, &ae) == 0)
				ptc_cli_error("warning: AUXTRACE_ERROR recorded on cpu %u: %s", ae.cpu,
					      ae.msg ? ae.msg : "");
		} else {
			err = ptc_sb_add_record(c->sb, &rec);
			if (err < 0) {
				/* What it said (a switch, a mapping, a thread's
				 * start) is lost: a lost range from the last
				 * record's time to the next one's, as for damage
				 * the reader skipped, so that the threads it may
				 * concern get a gap and --strict fails. */
				if (!c->opt->quiet)
					ptc_cli_error("warning: %s: offset 0x%" PRIx64 ": malformed %s record, "
						      "counted as lost", ptc_perf_name(c->r), rec.offset,
						      ptc_perf_record_name(rec.type));
				if (!bad.bytes) {
					bad.offset = rec.offset;
					bad.t_start = last_time;
				}
				bad.bytes = rec.offset + rec.size - bad.offset;
				c->malformed_records++;
				continue;
			}
			if (rec.type == PERF_RECORD_SAMPLE) {
				err = read_sched_switch(c, &rec);
				if (err < 0)
					return err;
			}
		}
	}
	if (err < 0) {
		uint64_t fsize = ptc_perf_file_size(c->r), got = ptc_perf_stats(c->r)->bytes_read;
		ptc_cli_error("%s", ptc_perf_errmsg(c->r));
		/* keep what was read: the trace up to the damage is usable;
		 * the rest is a loss that the summary and --strict report */
		snprintf(c->input_error, sizeof(c->input_error), "%s", ptc_perf_errmsg(c->r));
		c->unread_bytes = fsize > got ? fsize - got : 0;
	}
	if (bad.bytes && add_bad(c, &bad, PTC_SB_TIME_MAX) < 0)
		return -ptc_err_nomem;
	err = report_damage(c);
	if (err < 0)
		return err;
	clamp_to_file(c);
	err = ptc_sb_finish(c->sb);
	if (err < 0)
		return err;
	say_switch_damage(c);
	err = ptc_sb_add_build_ids(c->sb, ptc_perf_info(c->r));
	if (err < 0)
		return err;
	return 0;
}

/* The recording's records into the sideband and the queues, and the
 * AUXTRACE_INFO's private values (*priv, NULL when none): nothing is kept
 * of them on failure. */
static int read_recording(struct conv *c, const uint64_t **priv, size_t *nr_priv)
{
	uint64_t *privcopy = NULL;
	int err = read_records(c, &privcopy, nr_priv);

	if (err < 0) {
		free(privcopy);
		privcopy = NULL;
		*nr_priv = 0;
	}
	*priv = privcopy;
	return err;
}

static void set_params(struct conv *c, const uint64_t *priv, size_t n)
{
	const struct ptc_perf_info *info = ptc_perf_info(c->r);
	struct ptc_pt_params *p = &c->params;
	size_t i;

	parse_cpuid(info->cpuid, p);
	if (info->have_time_conv) {
		p->tc.valid = 1;
		p->tc.time_shift = (uint32_t)info->time_shift;
		p->tc.time_mult = (uint32_t)info->time_mult;
		p->tc.time_zero = info->time_zero;
		p->tc.cap_user_time_short = info->cap_user_time_short;
		p->tc.time_cycles = info->time_cycles;
		p->tc.time_mask = info->time_mask;
	} else if (n > PTC_PT_TIME_ZERO) {
		p->tc.valid = 1;
		p->tc.time_shift = (uint32_t)priv[PTC_PT_TIME_SHIFT];
		p->tc.time_mult = (uint32_t)priv[PTC_PT_TIME_MULT];
		p->tc.time_zero = priv[PTC_PT_TIME_ZERO];
	}
	c->per_thread = n > PTC_PT_PER_CPU_MMAPS && !priv[PTC_PT_PER_CPU_MMAPS];
	if (n > PTC_PT_HAVE_SCHED_SWITCH)
		c->have_sched_switch = priv[PTC_PT_HAVE_SCHED_SWITCH];
	if (n > PTC_PT_TSC_CTC_D) {
		p->tsc_ctc_n = (uint32_t)priv[PTC_PT_TSC_CTC_N];
		p->tsc_ctc_d = (uint32_t)priv[PTC_PT_TSC_CTC_D];
	}
	if (n > PTC_PT_MAX_NONTURBO_RATIO)
		p->nom_freq = (uint8_t)priv[PTC_PT_MAX_NONTURBO_RATIO];
	for (i = 0; n > PTC_PT_TSC_BIT && i < ptc_perf_nr_attrs(c->r); i++) {
		const struct ptc_perf_attr *a = ptc_perf_attr(c->r, i);
		if (a->attr.type != priv[PTC_PT_PMU_TYPE])
			continue;
		if (!c->pt_attr)
			c->pt_attr = a;
		c->have_tsc_config = 1;
		c->tsc_enabled = (a->attr.config & priv[PTC_PT_TSC_BIT]) != 0;
		if (n > PTC_PT_MTC_FREQ_BITS) {
			unsigned shift = (unsigned)priv[PTC_PT_MTC_FREQ_BITS];
			if (shift < 60)
				p->mtc_freq = (uint8_t)((a->attr.config >> shift) & 0xf);
		}
	}
	/* A queue with a cpu but per-thread mmaps: the AUXTRACE cpu field says. */
	for (i = 0; i < c->nq; i++)
		if (c->q[i].cpu < 0)
			c->per_thread = 1;
}

/* ---- summary ---- */

static int cmp_thread(const void *a, const void *b)
{
	const struct cthread *x = *(struct cthread *const *)a, *y = *(struct cthread *const *)b;

	if (x->pt.pid != y->pt.pid)
		return x->pt.pid < y->pt.pid ? -1 : 1;
	return x->pt.tid < y->pt.tid ? -1 : x->pt.tid > y->pt.tid;
}

/* The files in the output directory, sorted (the registry's writers name
 * their files themselves: trace.TID.EXT, trace.cpuN.EXT, xtrace.TIME.ID.*). */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **outdir_names(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL, **nv;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[*n] = strdup(e->d_name)))
			break;
		(*n)++;
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void list_writer_files(struct ptc_json *j, char **names, size_t n, const struct cthread *t)
{
	char id[32], pre[48], xp[32];
	size_t i, il, xl;

	if (t->pt.tid & 0x80000000u)
		snprintf(id, sizeof(id), "%u", t->pt.tid & 0x7fffffffu);
	else
		snprintf(id, sizeof(id), "%u", t->pt.tid);
	snprintf(pre, sizeof(pre), (t->pt.tid & 0x80000000u) ? "trace.cpu%s." : "trace.%s.", id);
	il = strlen(id);
	snprintf(xp, sizeof(xp), "xray.%u.", t->pt.pid);
	xl = strlen(xp);
	for (i = 0; i < n; i++) {
		const char *s = names[i], *p;
		int mine = !strncmp(s, pre, strlen(pre));

		if (!mine && !strncmp(s, "xtrace.", 7) && (p = strchr(s + 7, '.')) &&
		    !strncmp(p + 1, id, il) && !strncmp(p + 1 + il, ".hint", 5))
			mine = 1;
		/* xray: its process's log and maps, or its own log */
		if (!mine && !strncmp(s, xp, xl)) {
			p = s + xl;
			mine = !strcmp(p, "fdr") || !strcmp(p, "map.yaml") || !strcmp(p, "map.elf") ||
			       (!strncmp(p, id, il) && !strcmp(p + il, ".fdr"));
		}
		/* perfetto: the one trace of every thread */
		if (!mine && !strcmp(s, "perfetto.pftrace"))
			mine = 1;
		if (mine)
			ptc_json_string(j, NULL, s);
	}
}

/* "attribution": how the trace was given to threads (see ptconv-convert(1)). */
void ptc_convert_json_damage(struct ptc_json *j, const struct ptc_perf_reader *r)
{
	size_t i, n = r ? ptc_perf_nr_skips(r) : 0;

	ptc_json_u64(j, "skipped_input_bytes", r ? ptc_perf_stats(r)->skipped_bytes : 0);
	ptc_json_u64(j, "repaired_records", r ? ptc_perf_stats(r)->repairs : 0);
	/* feature sections cut off or too large: what they say (build-ids,
	 * the CPU, ...) is missing */
	ptc_json_u64(j, "unread_features", r ? ptc_perf_stats(r)->features_unread : 0);
	ptc_json_begin_array(j, "input_damage");
	for (i = 0; i < n; i++) {
		const struct ptc_perf_skip *s = ptc_perf_skip(r, i);
		ptc_json_begin_object(j, NULL);
		ptc_json_u64(j, "offset", s->offset);
		ptc_json_u64(j, "bytes", s->bytes);
		ptc_json_bool(j, "to_end", s->to_end);
		ptc_json_u64(j, "more_places", s->merged);
		ptc_json_string(j, "reason", s->message);
		ptc_json_end_object(j);
	}
	ptc_json_end_array(j);
}

/* "damaged_switches": switch records contradicted by their neighbours,
 * the first 256 listed with what was made of them. */
static void summary_switch_damage(struct conv *c, struct ptc_json *j)
{
	size_t i, n = 0;
	const struct ptc_sb_switch_damage *d = c->sb ? ptc_sb_switch_damage(c->sb, &n) : NULL;

	ptc_json_u64(j, "damaged_switches", n);
	ptc_json_begin_array(j, "switch_damage");
	for (i = 0; i < n && i < 256; i++) {
		ptc_json_begin_object(j, NULL);
		ptc_json_u64(j, "offset", d[i].offset);
		ptc_json_u64(j, "cpu", (uint64_t)d[i].cpu);
		ptc_json_u64(j, "time", d[i].time);
		ptc_json_string(j, "field", d[i].next_prev ? "next_prev" : "sample_id");
		ptc_json_u64(j, "pid", d[i].pid);
		ptc_json_u64(j, "tid", d[i].tid);
		ptc_json_bool(j, "repaired", d[i].repaired);
		if (d[i].repaired) {
			ptc_json_u64(j, "pid_taken", d[i].pid_taken);
			ptc_json_u64(j, "tid_taken", d[i].tid_taken);
		}
		ptc_json_end_object(j);
	}
	ptc_json_end_array(j);
}

static void summary_attribution(struct conv *c, struct ptc_json *j)
{
	size_t i;
	uint64_t nl;

	ptc_json_begin_object(j, "attribution");
	ptc_json_string(j, "mode", c->per_thread ? "per-thread" : "per-cpu");
	ptc_json_u64(j, "have_sched_switch", c->have_sched_switch);
	ptc_json_u64(j, "sched_switch_samples", c->ss.samples);
	ptc_json_u64(j, "bad_sched_switch_samples", c->ss.bad);
	ptc_json_u64(j, "lost_records", ptc_sb_lost(c->sb, &nl));
	ptc_json_u64(j, "lost_record_ranges", nl);
	ptc_json_u64(j, "records_lost_gaps", c->lost_gaps);
	ptc_json_u64(j, "untimed_shared_cpus", c->untimed_cpus);
	ptc_json_begin_array(j, "cpus");
	for (i = 0; !c->per_thread && i < c->nq; i++) {
		int cpu = c->q[i].cpu;
		unsigned seen, used = ptc_sb_cpu_sources(c->sb, cpu, &seen);

		ptc_json_begin_object(j, NULL);
		ptc_json_u64(j, "cpu", (uint64_t)cpu);
		ptc_json_string(j, "source", ptc_sb_source_name(used));
		ptc_json_u64(j, "switches", ptc_sb_cpu_switches(c->sb, cpu));
		ptc_json_u64(j, "threads", ptc_sb_cpu_threads(c->sb, cpu));
		ptc_json_bool(j, "sched_switch_ignored", (seen & PTC_SB_SRC_SCHED_SWITCH) &&
							 !(used & PTC_SB_SRC_SCHED_SWITCH));
		ptc_json_end_object(j);
	}
	ptc_json_end_array(j);
	ptc_json_end_object(j);
}

/* The bytes of queue q's stream given to the decoder: its runs. */
static uint64_t queue_held(const struct queue *q)
{
	uint64_t n = 0;
	size_t k;

	for (k = 0; k < q->nruns; k++)
		n += q->runs[k].end - q->runs[k].start;
	return n;
}

static uint64_t held_bytes(const struct conv *c)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < c->nq; i++)
		n += queue_held(&c->q[i]);
	return n;
}

/* One missing piece of a queue's stream, as plan_runs() found it: the
 * bytes before a run, or after the last one (the tail). */
static void json_queue_loss(struct ptc_json *j, uint64_t end, uint64_t lost, const char *why)
{
	ptc_json_begin_object(j, NULL);
	if (lost == UINT64_MAX) {
		ptc_json_u64(j, "offset", end);
		ptc_json_null(j, "bytes");
	} else {
		ptc_json_u64(j, "offset", end - lost);
		ptc_json_u64(j, "bytes", lost);
	}
	ptc_json_string(j, "reason", why ? why : "trace data missing");
	ptc_json_end_object(j);
}

enum { QUEUE_LOSSES_LISTED = 256 };

/* "aux_queues": each AUX queue's account, so that the trace bytes held
 * plus those known missing add up to the stream the kernel wrote.  The
 * missing pieces are those of the queue's plan (plan_runs()): holes
 * between its AUXTRACE records, data lost in damaged input or after the
 * file's end, data the AUX records say the buffer held beyond the last
 * AUXTRACE record, ranges flagged PARTIAL or COLLISION; an unknown amount
 * (a TRUNCATED record, data lost with the AUX records that would say how
 * much) is counted in unknown_losses.  lost_trace_bytes adds what the
 * decoder could not decode of the bytes held: all the queue's gaps. */
static void summary_queues(struct conv *c, struct ptc_json *j)
{
	size_t i, k;

	ptc_json_begin_array(j, "aux_queues");
	for (i = 0; i < c->nq; i++) {
		const struct queue *q = &c->q[i];
		const struct ptc_pt_stats *s = q->eng ? ptc_pt_engine_stats(q->eng) : &q->st;
		uint64_t held = queue_held(q), missing = 0, unknown = 0, listed = 0;

		for (k = 0; k < q->nruns; k++) {
			if (q->runs[k].lost == UINT64_MAX)
				unknown++;
			else
				missing += q->runs[k].lost;
		}
		if (q->tail.lost == UINT64_MAX)
			unknown++;
		else
			missing += q->tail.lost;
		unknown += q->tail_open;
		ptc_json_begin_object(j, NULL);
		if (q->unnumbered)
			ptc_json_null(j, "index");
		else
			ptc_json_u64(j, "index", q->idx);
		if (q->cpu >= 0)
			ptc_json_i64(j, "cpu", q->cpu);
		else
			ptc_json_null(j, "cpu");
		if (q->tid != UINT32_MAX)
			ptc_json_u64(j, "tid", q->tid);
		else
			ptc_json_null(j, "tid");
		ptc_json_u64(j, "trace_bytes", held);
		ptc_json_u64(j, "missing_bytes", missing);
		ptc_json_u64(j, "unknown_losses", unknown);
		ptc_json_u64(j, "lost_trace_bytes", s->lost_bytes);
		ptc_json_begin_array(j, "losses");
		for (k = 0; k < q->nruns; k++)
			if (q->runs[k].lost && listed++ < QUEUE_LOSSES_LISTED)
				json_queue_loss(j, q->runs[k].start, q->runs[k].lost, q->runs[k].why);
		if (q->tail.lost && listed++ < QUEUE_LOSSES_LISTED)
			json_queue_loss(j, q->tail.start, q->tail.lost, q->tail.why);
		if (q->tail_open && listed++ < QUEUE_LOSSES_LISTED)
			json_queue_loss(j, q->tail.start, UINT64_MAX,
					"the recording ends early (cut short): the trace after this, if any, is lost");
		ptc_json_end_array(j);
		ptc_json_u64(j, "more_losses", listed > QUEUE_LOSSES_LISTED ? listed - QUEUE_LOSSES_LISTED : 0);
		ptc_json_end_object(j);
	}
	ptc_json_end_array(j);
}

static void summary(struct conv *c, uint64_t bytes, double secs)
{
	char path[4200], tmp[4300], summary[4200];
	FILE *f;
	struct ptc_json j;
	size_t i, k;
	uint64_t tb = 0, ti = 0, tg = 0, orphan = 0;
	struct ptc_pt_stats agg;
	char **names;
	size_t nnames = 0;

	memset(&agg, 0, sizeof(agg));
	for (i = 0; i < c->nq; i++) {
		const struct ptc_pt_stats *s = c->q[i].eng ? ptc_pt_engine_stats(c->q[i].eng) : &c->q[i].st;
		agg.psb += s->psb;
		agg.fast_bytes += s->fast_bytes;
		agg.lost_bytes += s->lost_bytes;
		agg.orphan_branches += s->orphan_branches;
		agg.gaps += s->gaps;
		for (k = 0; k < PTC_GAP_CAUSE_NR; k++)
			agg.gaps_by_cause[k] += s->gaps_by_cause[k];
	}
	orphan = agg.orphan_branches;
	/* sideband losses are given to threads by the attribution, not the decoder */
	agg.gaps += c->lost_gaps;
	agg.gaps_by_cause[PTC_GAP_RECORDS_LOST] += c->lost_gaps;
	if (c->nth)	/* (qsort's array may not be NULL, even empty) */
		qsort(c->th, c->nth, sizeof(*c->th), cmp_thread);
	names = c->use_writer ? outdir_names(c->outdir, &nnames) : NULL;

	snprintf(summary, sizeof(summary), "%s/summary.json", c->outdir);
	/* last, under its name only when whole, like every output */
	f = ptc_out_tmpname(tmp, sizeof(tmp), summary) < 0 ? NULL : fopen(tmp, "w");
	if (!f) {
		ptc_cli_error("%s: cannot write: %s", summary, strerror(errno));
		c->fatal = PTC_EXIT_OUTPUT;
	} else {
		ptc_json_init(&j, f);
		ptc_json_begin_object(&j, NULL);
		ptc_json_string(&j, "input", c->opt->input ? c->opt->input : c->pto->raw_pt);
		ptc_json_string(&j, "decoder", "intel_pt");
		ptc_json_string(&j, "engine", c->pto->engine_libipt ? "libipt" : c->pto->engine_query ? "query" :
				 c->pto->engine_steps ? "steps" : "walker");
		/* the bytes given to the decoders: the queues' (summary_queues) */
		ptc_json_u64(&j, "trace_bytes", held_bytes(c));
		ptc_json_u64(&j, "queues", c->nq);
		ptc_json_u64(&j, "psb_used", agg.psb);
		/* of the trace bytes, those ptconv's query decoder read (the
		 * rest went to libipt's: fastq.h) */
		ptc_json_u64(&j, "fast_path_bytes", agg.fast_bytes);
		ptc_json_u64(&j, "unattributed_branches", orphan);
		ptc_json_u64(&j, "unattributed_gaps", c->orphan_gaps);
		ptc_json_u64(&j, "lost_trace_bytes", agg.lost_bytes);
		/* branches and gaps of threads decoded after their exit: not written */
		ptc_json_u64(&j, "unwritten_branches", c->late_branches);
		ptc_json_u64(&j, "unwritten_gaps", c->late_gaps);
		/* the recording could not be read to its end (null: it was) */
		if (c->input_error[0])
			ptc_json_string(&j, "input_error", c->input_error);
		else
			ptc_json_null(&j, "input_error");
		ptc_json_u64(&j, "unread_input_bytes", c->unread_bytes);
		ptc_convert_json_damage(&j, c->r);
		ptc_json_u64(&j, "malformed_records", c->malformed_records);
		summary_switch_damage(c, &j);
		ptc_json_u64(&j, "damaged_aux_records", c->damaged_aux);
		if (c->sb) {
			uint64_t nl, lost = ptc_sb_lost(c->sb, &nl);
			ptc_json_u64(&j, "lost_records", lost);
		}
		ptc_json_u64(&j, "auxtrace_errors", c->aux_errors);
		if (c->pool) {
			/* how often a thread's outputs were closed and later
			 * continued as a new stream (--max-open-outputs) */
			ptc_json_u64(&j, "max_open_outputs", c->max_open);
			ptc_json_u64(&j, "output_suspensions", ptc_writer_pool_suspensions(c->pool));
		}
		summary_queues(c, &j);
		if (c->sb)
			summary_attribution(c, &j);
		/* in name order: with -j, workers may meet them first */
		if (c->nmissing > 1)
			qsort(c->missing, c->nmissing, sizeof(*c->missing), cmp_str);
		ptc_json_begin_array(&j, "missing_images");
		for (i = 0; i < c->nmissing; i++)
			ptc_json_string(&j, NULL, c->missing[i]);
		ptc_json_end_array(&j);
		ptc_json_begin_object(&j, "gaps_by_cause");
		for (k = 0; k < PTC_GAP_CAUSE_NR; k++)
			if (k != PTC_GAP_START)	/* not a loss */
				ptc_json_u64(&j, ptc_gap_cause_name((int)k), agg.gaps_by_cause[k]);
		ptc_json_end_object(&j);
		ptc_json_begin_array(&j, "threads");
		for (i = 0; i < c->nth; i++) {
			const struct cthread *t = c->th[i];
			ptc_json_begin_object(&j, NULL);
			ptc_json_u64(&j, "pid", t->pt.pid);
			ptc_json_u64(&j, "tid", t->pt.tid);
			ptc_json_string(&j, "comm", t->comm);
			ptc_json_bool(&j, "written", t->wanted);
			ptc_json_begin_array(&j, "files");
			if (t->wanted && (c->formats & FMT_CBPEXP)) {
				snprintf(path, sizeof(path), "%s.cbpexp", t->name);
				ptc_json_string(&j, NULL, path);
			}
			if (t->wanted && (c->formats & FMT_TEXT)) {
				snprintf(path, sizeof(path), "%s.txt", t->name);
				ptc_json_string(&j, NULL, path);
			}
			if (t->wanted && t->w)
				list_writer_files(&j, names, nnames, t);
			ptc_json_end_array(&j);
			ptc_json_begin_object(&j, "branches");
			for (k = 0; k < PTC_BR_KIND_NR; k++)
				ptc_json_u64(&j, ptc_branch_kind_name((int)k), t->pt.by_kind[k]);
			ptc_json_u64(&j, "cond-not-taken", t->pt.not_taken);
			ptc_json_end_object(&j);
			ptc_json_u64(&j, "instructions", t->pt.insns);
			ptc_json_u64(&j, "pending_instructions", t->pt.pending_insns);
			ptc_json_u64(&j, "gaps", t->pt.gaps);
			/* decoded after the thread's outputs were finished
			 * (its exit): in no file and not in the counts above */
			ptc_json_u64(&j, "unwritten_branches", t->unwritten);
			ptc_json_u64(&j, "lost_trace_bytes", t->pt.lost_bytes);
			ptc_json_end_object(&j);
		}
		ptc_json_end_array(&j);
		ptc_json_end_object(&j);
		fputc('\n', f);
		/* (a write that failed before the last one leaves fclose() 0) */
		if ((ferror(f) | (fclose(f) != 0)) || ptc_out_commit(summary) < 0) {
			ptc_cli_error("%s: cannot write: %s", summary, strerror(errno));
			c->fatal = PTC_EXIT_OUTPUT;
		}
	}
	for (i = 0; i < c->nth; i++) {
		const struct cthread *t = c->th[i];
		uint64_t nb = 0;
		for (k = 0; k < PTC_BR_KIND_NR; k++)
			nb += t->pt.by_kind[k];
		tb += nb;
		ti += t->pt.insns + t->pt.pending_insns;
		tg += t->pt.gaps;
		if (c->opt->quiet)
			continue;
		fprintf(stderr,
			"ptconv: %s tid %u pid %u (%s)%s: %" PRIu64 " branches (cond %" PRIu64 " [%" PRIu64
			" not taken], jmp %" PRIu64 ", jmp-ind %" PRIu64 ", call %" PRIu64 ", call-ind %" PRIu64
			", ret %" PRIu64 ", far %" PRIu64 "), %" PRIu64 " instructions, %" PRIu64 " gaps\n",
			t->name, t->pt.tid, t->pt.pid, t->comm ? t->comm : "?", t->wanted ? "" : " [filtered]",
			nb, t->pt.by_kind[PTC_BR_COND], t->pt.not_taken, t->pt.by_kind[PTC_BR_JMP],
			t->pt.by_kind[PTC_BR_JMP_IND], t->pt.by_kind[PTC_BR_CALL], t->pt.by_kind[PTC_BR_CALL_IND],
			t->pt.by_kind[PTC_BR_RET], t->pt.by_kind[PTC_BR_FAR], t->pt.insns + t->pt.pending_insns,
			t->pt.gaps);
	}
	if (!c->opt->quiet) {
		fprintf(stderr, "ptconv: total %" PRIu64 " branches, %" PRIu64 " instructions, %" PRIu64
				" gaps (", tb, ti, agg.gaps);
		for (k = 0; k < PTC_GAP_CAUSE_NR; k++)
			if (k != PTC_GAP_START)
				fprintf(stderr, "%s%s %" PRIu64, k ? ", " : "", ptc_gap_cause_name((int)k),
					agg.gaps_by_cause[k]);
		fprintf(stderr, "), %" PRIu64 " trace bytes skipped", agg.lost_bytes);
		if (c->damage)
			fprintf(stderr, ", damaged input: %" PRIu64 " bytes skipped at %" PRIu64 " places",
				ptc_perf_stats(c->r)->skipped_bytes, c->damage);
		if (orphan)
			fprintf(stderr, ", %" PRIu64 " branches of unknown threads", orphan);
		if (c->nmissing)
			fprintf(stderr, ", %zu images missing", c->nmissing);
		fprintf(stderr, "; %.2f s, output in %s/\n", secs, c->outdir);
		if (c->opt->table_dir) {
			/* not in summary.json either: the same with or without
			 * the tables kept from earlier runs */
			size_t nimg, ncached;

			ptc_image_cache_tables(c->ic, &nimg, &ncached);
			fprintf(stderr, "ptconv: %zu images, %zu branch tables from the table cache %s\n", nimg,
				ncached, c->opt->table_dir);
		}
		if (c->ahead)
			/* not in summary.json, which is the same for any -j */
			fprintf(stderr, "ptconv: -j %d: %" PRIu64 " of %" PRIu64 " trace windows decoded ahead "
				"and replayed (%" PRIu64 " with threads also traced on other CPUs); %" PRIu64
				" of them encoded ahead in part, %" PRIu64 " records\n", c->opt->jobs,
				c->windows_replayed, c->windows, c->windows_shared, c->windows_spliced,
				c->records_spliced);
	}
	for (i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	(void)tg;
}

/* ---- driver ---- */

/* cbpexp and text are this pipeline's own sinks; every other name goes to
 * the output-format registry (src/writers), one writer per thread. */
static int parse_formats(struct conv *c)
{
	const char *f = c->opt->formats ? c->opt->formats : "ptconv";
	char buf[256], *tok, *save = NULL;
	size_t len = 0;

	if (strlen(f) >= sizeof(buf)) {
		ptc_cli_error("-f: format list too long");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", f);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "cbpexp")) {
			c->formats |= FMT_CBPEXP;
		} else if (!strcmp(tok, "text")) {
			c->formats |= FMT_TEXT;
		} else if (ptc_writer_find(tok) && c->per_cpu_out && ptc_writer_per_process(tok)) {
			ptc_cli_error("-f %s: written from the threads' streams: not with --per-cpu",
				      tok);
			return -1;
		} else if (ptc_writer_find(tok)) {
			len += (size_t)snprintf(c->wformats + len, sizeof(c->wformats) - len, "%s%s",
						len ? "," : "", tok);
			c->use_writer = 1;
		} else {
			const struct ptc_writer_format *const *all = ptc_writer_formats();
			char names[200];
			size_t k, n = 0;

			for (k = 0; all[k]; k++)
				n += (size_t)snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0,
						      "%s, ", all[k]->name);
			char base[64];

			snprintf(base, sizeof(base), "%.*s", (int)strcspn(tok, ":"), tok);
			if (strchr(tok, ':') && ptc_writer_find(base))
				ptc_cli_error("-f %s: '%s' is not an option of %s (its options: ptconv-formats(5))",
					      tok, tok + strlen(base) + 1, base);
			else
				ptc_cli_error("unknown format '%s' (Intel PT supports: %scbpexp, text)", tok,
					      n < sizeof(names) ? names : "");
			return -1;
		}
	}
	if (c->pto->bbv_interval)
		c->use_writer = 1;	/* --bbv: a side output of the registry's writer */
	{
		/* With -j, the workers encode what they decode for the .ptc
		 * writer too (start_ahead(); for tests and measurements,
		 * PTCONV_ENCODE_AHEAD=0: the writer encodes it all). */
		const char *env = getenv("PTCONV_ENCODE_AHEAD");

		c->encode_ahead = c->use_writer && c->opt->jobs > 1 && !(env && !strcmp(env, "0"));
		/* for tests: snapshots of young tables too, and chunks that
		 * windows cross (ptc_writer_config) */
		env = getenv("PTCONV_AHEAD_RECORDS_PER_NODE");
		c->ahead_per_node = env ? (uint32_t)strtoul(env, NULL, 0) : 0;
		env = getenv("PTCONV_CHUNK_RECORDS");
		c->chunk_records = env ? (uint32_t)strtoul(env, NULL, 0) : 0;
	}
	if (!c->formats && !c->use_writer) {
		ptc_cli_error("-f: no format given");
		return -1;
	}
	c->max_open = c->opt->max_open_outputs ? c->opt->max_open_outputs
					       : ptc_writer_pool_default(c->wformats);
	if (c->use_writer && (ptc_writer_pool_new(&c->pool, c->max_open, c->opt->jobs) < 0 ||
			      ptc_writer_procs_new(&c->procs) < 0)) {
		ptc_cli_error("%s", ptc_errstr(-ptc_err_nomem));
		return -1;
	}
	return 0;
}

static int make_outdir(struct conv *c, const char *input)
{
	if (c->opt->outdir)
		snprintf(c->outdir, sizeof(c->outdir), "%s", c->opt->outdir);
	else if (!strcmp(input, "-"))
		snprintf(c->outdir, sizeof(c->outdir), "stdin.ptconv");
	else
		snprintf(c->outdir, sizeof(c->outdir), "%s.ptconv", input);
	/* the directory is this run's: what an earlier conversion wrote
	 * there goes, finished or not (ptc_out_tmpname), and nothing else */
	{
		char err[4400];
		int old, tmp;
		if (ptc_out_prepare(c->outdir, input, 0, &old, &tmp, err, sizeof(err)) < 0) {
			ptc_cli_error("%s", err);
			return -1;
		}
		if ((old || tmp) && !c->opt->quiet)
			ptc_cli_error("%s: removed %d files and %d unfinished files of an earlier conversion",
				      c->outdir, old, tmp);
	}
	return 0;
}

/* The writer's warnings, one per line; long lists are cut (the same
 * problem tends to repeat for every block of an unmapped region). */
static void write_warnings(const char *w)
{
	size_t n = 0;

	while (*w && n < 10) {
		size_t len = strcspn(w, "\n");
		ptc_cli_error("warning: %.*s", (int)len, w);
		w += len;
		if (*w)
			w++;
		n++;
	}
	if (*w) {
		size_t more = 0;
		for (; *w; w++)
			more += *w == '\n' || !w[1];
		ptc_cli_error("warning: ... and %zu more", more);
	}
}

/* Complete and close thread t's outputs (nothing comes for it any more):
 * its last branches, the vDSO for cbpexp, then each sink's end, which
 * writes what the formats keep to the end and frees their buffers.
 * Returns 0 or PTC_EXIT_OUTPUT. */
static int finish_thread(struct conv *c, struct cthread *t)
{
	int err, ret = 0;

	if (t->finished)
		return 0;
	err = ptc_pt_thread_flush(&t->pt);
	if (t->cbp && c->sb) {
		/* the vDSO goes in even when no branch was walked in it */
		size_t k, nm;
		struct ptc_sb_map *m = ptc_sb_maps(c->sb, &nm);
		for (k = 0; k < nm; k++) {
			const struct ptc_image *img;
			char e[256];
			int got;
			if (m[k].pid != t->pt.pid || strcmp(m[k].filename, "[vdso]"))
				continue;
			pthread_mutex_lock(&c->lock);
			got = ptc_image_cache_get(c->ic, m[k].filename,
						  m[k].build_id_size ? m[k].build_id : NULL,
						  m[k].build_id_size, &img, e, sizeof(e));
			pthread_mutex_unlock(&c->lock);
			if (got == 0)
				add_image_to_writer(t, &m[k], img);
		}
	}
	if (t->pt.sink) {
		int e = t->pt.sink->end(t->pt.sink->ctx);
		if (e < 0 && !err)
			err = e;
	}
	t->finished = 1;
	if (err < 0) {
		output_error(c, t, err);	/* (before the sinks that say what failed go) */
		ret = PTC_EXIT_OUTPUT;
	} else if (jobs_failed(c)) {
		ret = PTC_EXIT_OUTPUT;	/* (said by stop_early(): the thread is another's) */
	}
	ptc_text_sink_free(t->text);
	ptc_cbpexp_sink_free(t->cbp);
	t->text = t->cbp = NULL;
	if (t->w && ptc_writer_warnings(t->w)[0] && !c->opt->quiet)
		write_warnings(ptc_writer_warnings(t->w));
	return ret;
}

static int finish_threads(struct conv *c)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < c->nth; i++)
		if (finish_thread(c, c->th[i]))
			ret = PTC_EXIT_OUTPUT;
	if (jobs_drain(c)) {
		/* a file whose end a worker wrote failed: its writer says how */
		for (i = 0; i < c->nth; i++)
			if (c->th[i]->w && ptc_writer_errmsg(c->th[i]->w)[0])
				output_error(c, c->th[i], -ptc_err_io);
		ret = PTC_EXIT_OUTPUT;
	}
	if ((c->late_branches || c->late_gaps) && !c->opt->quiet)
		ptc_cli_error("warning: %" PRIu64 " branches and %" PRIu64 " gaps were attributed to "
			      "threads after their exit: not written", c->late_branches, c->late_gaps);
	return ret;
}

static void free_conv(struct conv *c)
{
	size_t i, k;

	/* what no thread flushed (an error, an interrupt) no longer marks
	 * paths of the memos that go now */
	for (i = 0; i < c->nth; i++)
		ptc_pt_thread_drop_paths(&c->th[i]->pt);
	stop_ahead(c);
	for (i = 0; i < c->nq; i++) {
		ptc_pt_engine_free(c->q[i].eng);
		for (k = 0; k < c->q[i].np; k++)
			free(c->q[i].p[k].data);
		free(c->q[i].p);
		free(c->q[i].runs);
		free(c->q[i].susp);
		while (c->q[i].wfirst) {
			struct window *w = c->q[i].wfirst;
			c->q[i].wfirst = w->next;
			ptc_pt_ahead_free(w->ahead);
			ptc_ahead_tables_put(w->tables);
			ptc_ahead_out_free(w->out);
			free(w->buf);
			free(w);
		}
		if (c->q[i].win) {
			ptc_pt_ahead_free(c->q[i].win->ahead);
			ptc_ahead_tables_put(c->q[i].win->tables);
			ptc_ahead_out_free(c->q[i].win->out);
			free(c->q[i].win->buf);
			free(c->q[i].win);
		}
		free(c->q[i].buf);
	}
	free(c->q);
	free(c->shared);
	free(c->ahead_th);
	for (i = 0; i < c->nspent; i++)
		ptc_pt_ahead_free(c->spent[i]);
	free(c->spent);
	for (i = 0; i < c->nouts; i++)
		ptc_ahead_out_free(c->outs[i]);
	free(c->outs);
	ptc_ahead_enc_free(c->drv_enc);
	free_writers(c);
	for (i = 0; i < c->nth; i++) {
		ptc_pt_thread_fini(&c->th[i]->pt);
		free(c->th[i]);
	}
	free(c->th);
	ptc_writer_pool_free(c->pool);
	ptc_writer_procs_free(c->procs);
	free(c->exits);
	free(c->spans);
	free(c->cpu_seen);
	ptc_sched_switch_samples_fini(&c->ss);
	for (i = 0; i < c->nmissing; i++)
		free(c->missing[i]);
	free(c->missing);
	for (i = 0; i < c->nraw; i++)
		ptc_image_free(c->raw_img[i]);
	free(c->raw_img);
	free(c->raw_bias);
	if (c->ic)
		ptc_image_cache_free(c->ic);
	ptc_sb_free(c->sb);
	ptc_path_memo_free(c->memo);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int exit_status(struct conv *c)
{
	size_t i;
	uint64_t gaps = c->orphan_gaps;

	if (c->fatal)
		return c->fatal;
	for (i = 0; i < c->nth; i++)
		gaps += c->th[i]->pt.gaps;
	if (gaps || c->nmissing || c->input_error[0] || c->late_branches || c->damage || c->malformed_records ||
	    c->damaged_switches || c->damaged_aux ||
	    (c->r && ptc_perf_stats(c->r)->features_unread))
		return c->opt->strict ? PTC_EXIT_GAPS : PTC_EXIT_OK;
	return PTC_EXIT_OK;
}

/* Say what the attribution cannot do: a per-CPU trace without timing
 * packets cannot be split between the threads that shared a CPU (it all
 * goes to the CPU's first thread); sched_switch samples announced but not
 * readable. */
static void check_attribution(struct conv *c)
{
	size_t i;

	if (c->per_thread)
		return;
	if (c->have_sched_switch == 1 && !c->ss.samples && !c->opt->quiet)
		ptc_cli_error("warning: %s: the recording says threads are told apart by sched:sched_switch "
			      "samples, but none could be read%s%s", ptc_perf_name(c->r),
			      c->ss.err[0] ? ": " : "", c->ss.err);
	if (!c->have_tsc_config || c->tsc_enabled)
		return;
	for (i = 0; i < c->nq; i++) {
		int cpu = c->q[i].cpu;
		size_t n = ptc_sb_cpu_threads(c->sb, cpu);
		uint32_t pid, tid;

		if (n < 2)
			continue;
		c->untimed_cpus++;
		if (c->opt->quiet)
			continue;
		if (ptc_sb_thread_on_cpu(c->sb, cpu, 0, &pid, &tid) < 0)
			tid = 0;
		ptc_cli_error("warning: cpu %d: %zu threads ran on it but the trace has no timing packets "
			      "(tsc=0) to tell them apart: all of its trace goes to thread %u (record with "
			      "--per-thread, or keep tsc)", cpu, n, tid);
	}
}

/* After decode_all() returned err: the threads' files finished and the
 * summary written (or, interrupted, the unfinished files removed); the
 * exit status. */
static int end_run(struct conv *c, int err, const char *input, uint64_t bytes, double t0)
{
	int ret;

	if (!err && jobs_drain(c)) {
		/* the end of a file that a worker wrote failed: as if the
		 * thread's finish_thread() had (decoding stops there) */
		c->fatal = PTC_EXIT_OUTPUT;
		err = -ptc_err_io;
	}
	if (err == -ptc_err_interrupted)
		return stop_early(c, "interrupted", PTC_EXIT_INTERRUPTED);
	if (err < 0 && (c->fatal == PTC_EXIT_OUTPUT || err == -ptc_err_io))
		return stop_early(c, "output failed", PTC_EXIT_OUTPUT);
	if (err < 0 && !c->fatal) {
		ptc_cli_error("%s: decoding failed: %s", input, ptc_errstr(err));
		c->fatal = err == -ptc_err_io ? PTC_EXIT_OUTPUT : PTC_EXIT_INPUT;
	}
	ret = finish_threads(c);
	if (c->procs) {
		/* the files threads share (xray, perfetto), now that all ended */
		char msg[600];
		if (ptc_writer_procs_finish(c->procs, msg, sizeof(msg)) < 0) {
			ptc_cli_error("%s", msg);
			return stop_early(c, "output failed", PTC_EXIT_OUTPUT);
		}
	}
	if (ret)
		c->fatal = ret;
	summary(c, bytes, now_s() - t0);
	return exit_status(c);
}

int ptc_convert_intel_pt(const struct ptc_convert_options *opt, const struct ptc_pt_options *pto,
			 struct ptc_perf_reader *r)
{
	struct conv c;
	struct ptc_image_cache_options io;
	const uint64_t *priv = NULL;
	size_t nr_priv = 0, i;
	uint64_t bytes = 0;
	double t0 = now_s();
	int err, ret;

	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.lock, NULL);
	c.opt = opt;
	c.pto = pto;
	c.r = r;
	c.per_cpu_out = opt->per_cpu;
	if (parse_formats(&c) < 0)
		return PTC_EXIT_USAGE;
	if (ptc_sb_new(&c.sb) < 0)
		return PTC_EXIT_INPUT;
	err = read_recording(&c, &priv, &nr_priv);
	if (err < 0) {
		ptc_cli_error("%s: %s", opt->input, ptc_errstr(err));
		free((void *)priv);
		free_conv(&c);
		return PTC_EXIT_INPUT;
	}
	set_params(&c, priv, nr_priv);
	free((void *)priv);
	if (pto->cpu && sscanf(pto->cpu, "%d/%d/%d", &c.params.cpu_family, &c.params.cpu_model,
			       &c.params.cpu_stepping) < 2) {
		ptc_cli_error("--cpu: expected FAMILY/MODEL[/STEPPING], got '%s'", pto->cpu);
		free_conv(&c);
		return PTC_EXIT_USAGE;
	}
	if (!c.nq) {
		ptc_cli_error("%s: no Intel PT trace data (no AUXTRACE records)", opt->input);
		free_conv(&c);
		return PTC_EXIT_INPUT;
	}
	if (add_unheld_queues(&c) < 0) {
		ptc_cli_error("%s: %s", opt->input, ptc_errstr(-ptc_err_nomem));
		free_conv(&c);
		return PTC_EXIT_INPUT;
	}
	if (!opt->quiet) {
		uint64_t nl, lost = ptc_sb_lost(c.sb, &nl);
		if (lost)
			ptc_cli_error("warning: %" PRIu64 " sideband records lost (%" PRIu64 " LOST records): "
				      "thread switches or mappings may be missing", lost, nl);
	}
	check_attribution(&c);
	memset(&io, 0, sizeof(io));
	io.symfs = opt->symfs;
	io.buildid_dir = opt->buildid_dir;
	io.table_dir = opt->table_dir;
	io.force = opt->force;
	io.threads = opt->jobs;	/* -j: the threads are idle while the first tables are built */
	if (ptc_image_cache_new(&c.ic, &io) < 0 || make_outdir(&c, opt->input) < 0) {
		free_conv(&c);
		return PTC_EXIT_OUTPUT;
	}
	for (i = 0; i < c.nq; i++) {
		size_t k;
		for (k = 0; k < c.q[i].np; k++)
			bytes += c.q[i].p[k].size;
	}
	ret = end_run(&c, decode_all(&c), opt->input, bytes, t0);
	free_conv(&c);
	if (ret == PTC_EXIT_OUTPUT)
		ptc_out_clean(c.outdir);	/* a failed output leaves no temporary */
	return ret;
}

/* ---- raw PT ---- */

static int load_raw_image(struct conv *c, const char *spec)
{
	char path[4096], err_s[512];
	const char *colon;
	uint64_t addr = 0, off = 0;
	int has_addr = 0, err;
	struct ptc_image *img = NULL;
	int64_t bias = 0;

	colon = strchr(spec, ':');
	if (colon) {
		char *end;
		snprintf(path, sizeof(path), "%.*s", (int)(colon - spec), spec);
		addr = strtoull(colon + 1, &end, 0);
		has_addr = 1;
		if (*end == ':')
			off = strtoull(end + 1, &end, 0);
		if (*end) {
			ptc_cli_error("--image %s: expected PATH[:ADDR[:OFFSET]]", spec);
			return -1;
		}
	} else {
		snprintf(path, sizeof(path), "%s", spec);
	}
	err = ptc_image_load_elf_cached(&img, path, NULL, 0, 1, c->opt->table_dir, err_s, sizeof(err_s));
	if (err < 0 && has_addr) {
		/* not ELF: raw code bytes from OFFSET placed at ADDR */
		FILE *f = fopen(path, "rb");
		uint8_t *data = NULL;
		long size;
		if (!f) {
			ptc_cli_error("--image %s: %s", path, strerror(errno));
			return -1;
		}
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		if (size < 0 || (uint64_t)size <= off || fseek(f, (long)off, SEEK_SET) != 0 ||
		    !(data = malloc((size_t)size - off)) ||
		    fread(data, 1, (size_t)size - off, f) != (size_t)size - off) {
			fclose(f);
			free(data);
			ptc_cli_error("--image %s: cannot read from offset 0x%" PRIx64, path, off);
			return -1;
		}
		fclose(f);
		err = ptc_image_from_bytes(&img, path, data, (size_t)size - off, addr, err_s, sizeof(err_s));
		free(data);
		bias = 0;
	} else if (err == 0 && has_addr) {
		if (ptc_image_bias(img, addr, off, &bias) < 0) {
			ptc_cli_error("--image %s: no executable segment at file offset 0x%" PRIx64, spec, off);
			ptc_image_free(img);
			return -1;
		}
	}
	if (err < 0) {
		ptc_cli_error("--image %s", err_s);
		return -1;
	}
	c->raw_img = realloc(c->raw_img, (c->nraw + 1) * sizeof(*c->raw_img));
	c->raw_bias = realloc(c->raw_bias, (c->nraw + 1) * sizeof(*c->raw_bias));
	if (!c->raw_img || !c->raw_bias) {
		ptc_image_free(img);
		return -1;
	}
	c->raw_img[c->nraw] = img;
	c->raw_bias[c->nraw] = bias;
	c->nraw++;
	return 0;
}

int ptc_convert_raw_pt(const struct ptc_convert_options *opt, const struct ptc_pt_options *pto)
{
	struct conv c;
	struct queue *q;
	FILE *f;
	long size;
	size_t i;
	double t0 = now_s();
	int ret;

	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.lock, NULL);
	c.opt = opt;
	c.pto = pto;
	if (parse_formats(&c) < 0)
		return PTC_EXIT_USAGE;
	if (pto->cpu && sscanf(pto->cpu, "%d/%d/%d", &c.params.cpu_family, &c.params.cpu_model,
			       &c.params.cpu_stepping) < 2) {
		ptc_cli_error("--cpu: expected FAMILY/MODEL[/STEPPING], got '%s'", pto->cpu);
		return PTC_EXIT_USAGE;
	}
	for (i = 0; i < pto->nr_images; i++)
		if (load_raw_image(&c, pto->images[i]) < 0) {
			free_conv(&c);
			return PTC_EXIT_INPUT;
		}
	q = get_queue(&c, 0, 0, UINT32_MAX);
	if (!q || !(q->p = calloc(1, sizeof(*q->p)))) {
		free_conv(&c);
		return PTC_EXIT_INPUT;
	}
	f = fopen(pto->raw_pt, "rb");
	if (!f) {
		ptc_cli_error("%s: %s", pto->raw_pt, strerror(errno));
		free_conv(&c);
		return PTC_EXIT_INPUT;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	q->np = 1;
	q->p[0].size = size > 0 ? (uint64_t)size : 0;
	q->p[0].data = malloc(q->p[0].size ? q->p[0].size : 1);
	if (!q->p[0].data || fread(q->p[0].data, 1, q->p[0].size, f) != q->p[0].size) {
		fclose(f);
		ptc_cli_error("%s: cannot read", pto->raw_pt);
		free_conv(&c);
		return PTC_EXIT_INPUT;
	}
	fclose(f);
	if (make_outdir(&c, pto->raw_pt) < 0) {
		free_conv(&c);
		return PTC_EXIT_OUTPUT;
	}
	ret = end_run(&c, decode_all(&c), pto->raw_pt, q->p[0].size, t0);
	free_conv(&c);
	if (ret == PTC_EXIT_OUTPUT)
		ptc_out_clean(c.outdir);	/* a failed output leaves no temporary */
	return ret;
}
