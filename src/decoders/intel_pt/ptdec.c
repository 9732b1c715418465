/* Intel PT walker: a query decoder answers "taken?" and "where to?" (ptconv's
 * own, fastq.h, where a window holds only the packets it handles, else
 * libipt's), the images' branch tables say where the next branch is and how
 * many instructions lead to it.  See ptdec.h.
 *
 * The walker's position is (region, index of the next branch, instructions
 * from the current IP up to and including that branch).  After a direct
 * branch or a fall-through the next position is one table entry away
 * (target_next/target_insns, i + 1/fall_insns).  A return continues at
 * its call's fall-through entry (the call stack keeps the call's index),
 * an indirect branch at a target seen before through a small cache; only
 * a new target, an event or a region change needs a search.  Where the
 * bits of a TNT packet are at hand, the branches they decide come from a
 * memo of paths (tnt_path.h), several per lookup.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>
#include <Zydis/Zydis.h>

#if defined(__GNUC__) && !defined(__clang__)
/* Called for most branches: through the GOT directly rather than through
 * a PLT stub (one jump less per call). */
extern int pt_qry_cond_branch(struct pt_query_decoder *decoder, int *taken) __attribute__((noplt));
#endif

#include "common/bytes.h"
#include "common/error.h"
#include "common/grow.h"
#include "common/table256.h"
#include "decoders/intel_pt/bystanders.h"
#include "decoders/intel_pt/fastq.h"
#include "decoders/intel_pt/loss.h"
#include "decoders/intel_pt/ptdec.h"
#include "decoders/intel_pt/tnt_path.h"
#include "decoders/intel_pt/unknown.h"
#include "images/x86_newer.h"

#define RCACHE 8
#define CHAIN 64		/* direct branches remembered since the last query */
#define DIRECT_MAX (1u << 22)	/* direct branches in a row: an endless loop */
#define ICACHE 4096	/* indirect targets: ip -> next branch, direct-mapped */
/* Return addresses kept per thread: deeper than any real stack (8 MiB of
 * 16-byte frames is 2^19); beyond, the oldest half is dropped, so that a
 * trace that only calls does not grow memory without bound. */
#define STACK_MAX (1u << 21)

struct ptc_pt_decoder {
	struct ptc_pt_params p;
	struct ptc_pt_env env;
	int cpu;
	uint32_t qtid;
	struct pt_config cfg;
	/* The query decoder of the current (sub-)piece: ptconv's (fq, when
	 * fast) where it handles every packet of the piece, else libipt's. */
	struct pt_query_decoder *qry;
	struct ptc_fq fq;
	int fast;
	/* Runs of conditional and direct branches per TNT bits (fast only) */
	struct ptc_path_memo *memo;
	int own_memo;

	uint64_t base;		/* stream offset of the current piece */
	size_t size;

	int status;		/* last query status bits */
	int synced;		/* the query decoder is synchronised */
	int enabled;		/* tracing on: ip is valid */
	struct pt_event ev;
	int have_ev;
	uint64_t last_sync_off;
	/* Tracing was on at the last PSB+ synchronised at (its IP), and the
	 * branches decoded before it: erratum BDM70. */
	int psb_on;
	uint64_t psb_ip, psb_branches;

	struct ptc_pt_thread *thr;
	uint32_t rc_pid;	/* pid the region cache belongs to */
	struct ptc_pt_region rc[RCACHE];
	unsigned nrc, rc_next;
	struct ptc_pt_region reg;
	int have_reg;

	struct icache {
		uint64_t ip;
		const struct ptc_image *img;
		int64_t bias;
		uint32_t idx, insns;
	} *icache;

	/* Blocks walked through direct branches since the last packet was
	 * consumed: a PSB's FUP may name any of them. */
	uint64_t chain_s[CHAIN], chain_e[CHAIN];
	unsigned nchain;
	uint64_t ndirect;

	int skipping;		/* in unknown code: waiting for a TIP to known code */

	uint64_t ip;		/* run-time IP where walking continues */
	uint32_t idx, insns;	/* next branch in reg and instructions to it */
	int have_idx;

	/* The execution mode (16, 32, 64: MODE.Exec) of the code at ip,
	 * whose tables the regions hold, and the one a MODE.Exec bound to
	 * the next TIP sets there (0: none). */
	unsigned mode, mode_next;

	uint64_t tsc, time;	/* last known */
	int have_tsc;

	struct ptc_pt_loss pg;		/* the loss being decoded past (loss.h) */
	struct ptc_pt_losses ls;
	/* A closed gap whose time span is not known yet: the threads switched
	 * in on this CPU during it get the gap once time moves on. */
	struct ptc_pt_bystanders by;
	uint64_t min_sync;	/* resync only at a PSB at or after this piece offset */
	int piece_done;
	struct ptc_pt_thread orphan;	/* walks while no thread is known */

	/* A piece with suspect ranges (AUX PARTIAL/COLLISION: a hole somewhere)
	 * is decoded one PSB segment at a time; branches of a suspect
	 * segment are held until the next PSB confirms the walker's state. */
	const uint8_t *piece;
	uint64_t piece_off;
	size_t piece_size;
	struct sub { uint64_t s, e; int spec; } *subs;
	size_t nsubs, cursub;
	int continuing;		/* the current sub-piece continues the previous */
	/* At the end of the last piece, the IP the walker stood at without
	 * having looked it up (an indirect branch's target), and where the
	 * packet that named it ended (UINT64_MAX: none such): a no-image
	 * loss found there in the next piece begins there, as in one piece. */
	uint64_t held_ip, held_ip_named;
	uint64_t held_ip_piece;	/* the piece they were noted at (its offset + 1) */
	int spec_mode;		/* branches go to spec[] */
	struct spec_branch { struct ptc_pt_thread *t; struct ptc_branch b; } *spec;
	size_t nspec, capspec;
	uint64_t spec_start;	/* stream offset where the held branches begin */
	size_t nspec_ok;	/* held branches already confirmed by a PSB */
	uint64_t spec_run_start;	/* first suspect sub-piece of the current run of them */
	int spec_run_failed;	/* a suspect segment of that run was rejected */
	struct ptc_pt_stats st;
	char msg[256];

	/* Decoding a window ahead (ptc_pt_decode_ahead): the log, and
	 * whether the enable in progress is the window's first PSB's. */
	struct ptc_pt_ahead *cap;
	int cap_sync;
	/* The next piece continues this one at a PSB: the walk stops where
	 * the packets end rather than walking direct branches on, as it
	 * stops where a PSB+ waits within a piece (its time is theirs), so
	 * that where pieces end does not change the output. */
	int continued;
};

static struct ptc_pt_thread *ahead_thread(struct ptc_pt_decoder *d);
static void ahead_enable(struct ptc_pt_decoder *d, struct ptc_pt_thread *t, uint64_t offset, uint64_t ip);
static void ahead_stop(struct ptc_pt_decoder *d);
static void ahead_early_event(struct ptc_pt_decoder *d);
static void ahead_unusable(struct ptc_pt_ahead *a, const char *why);
static void ahead_timed(struct ptc_pt_decoder *d);
static void ahead_sync(struct ptc_pt_decoder *d, uint64_t off, int st, uint64_t ip);
static void ahead_mode_said(struct ptc_pt_decoder *d, unsigned bits);
static void ahead_mode_used(struct ptc_pt_decoder *d);
static const char *why(struct ptc_pt_decoder *d, int st, char *buf, size_t n);
static void decode_failed(struct ptc_pt_decoder *d, int cause, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- the query decoder ---- */

/* The questions the walker asks, of whichever query decoder reads the
 * current piece (the answers are the same: fastq.h). */
static inline int have_query(const struct ptc_pt_decoder *d)
{
	return d->fast || d->qry;
}

static inline int q_cond_branch(struct ptc_pt_decoder *d, int *taken)
{
	return d->fast ? ptc_fq_cond_branch(&d->fq, taken) : pt_qry_cond_branch(d->qry, taken);
}

static inline int q_indirect_branch(struct ptc_pt_decoder *d, uint64_t *ip)
{
	return d->fast ? ptc_fq_indirect_branch(&d->fq, ip) : pt_qry_indirect_branch(d->qry, ip);
}

static int q_event(struct ptc_pt_decoder *d, struct pt_event *ev)
{
	return d->fast ? ptc_fq_event(&d->fq, ev, sizeof(*ev)) : pt_qry_event(d->qry, ev, sizeof(*ev));
}

static int q_time(struct ptc_pt_decoder *d, uint64_t *tsc)
{
	uint32_t lm, lc;

	return d->fast ? ptc_fq_time(&d->fq, tsc, &lm, &lc) : pt_qry_time(d->qry, tsc, &lm, &lc);
}

static int q_sync_forward(struct ptc_pt_decoder *d, uint64_t *ip)
{
	return d->fast ? ptc_fq_sync_forward(&d->fq, ip) : pt_qry_sync_forward(d->qry, ip);
}

static int q_get_offset(const struct ptc_pt_decoder *d, uint64_t *off)
{
	return d->fast ? ptc_fq_get_offset(&d->fq, off) : pt_qry_get_offset(d->qry, off);
}

static int q_get_sync_offset(const struct ptc_pt_decoder *d, uint64_t *off)
{
	return d->fast ? ptc_fq_get_sync_offset(&d->fq, off) : pt_qry_get_sync_offset(d->qry, off);
}

static void drop_query(struct ptc_pt_decoder *d)
{
	if (d->fast)
		ptc_fq_fini(&d->fq);
	if (d->qry)
		pt_qry_free_decoder(d->qry);
	d->fast = 0;
	d->qry = NULL;
}

/* A query decoder for [cfg.begin, cfg.end): ptconv's when it handles
 * every packet there (and the walker may use it), else libipt's. */
static int new_query(struct ptc_pt_decoder *d)
{
	int ok = d->p.no_fastq ? 0 : ptc_fq_supported(&d->cfg);

	if (ok < 0)
		return -ptc_err_nomem;
	if (ok) {
		if (ptc_fq_init(&d->fq, &d->cfg) < 0)
			return -ptc_err_nomem;
		d->fast = 1;
		d->st.fast_bytes += (uint64_t)(d->cfg.end - d->cfg.begin);
		return 0;
	}
	d->qry = pt_qry_alloc_decoder(&d->cfg);
	return d->qry ? 0 : -ptc_err_nomem;
}

/* ---- threads ---- */

void ptc_pt_thread_init(struct ptc_pt_thread *t, uint32_t pid, uint32_t tid, struct ptc_sink *sink)
{
	memset(t, 0, offsetof(struct ptc_pt_thread, batch));
	t->pid = pid;
	t->tid = tid;
	t->cpu = -1;
	t->sink = sink;
	t->nbatch = 0;
	t->nmarks = 0;
	t->sink_error = 0;
	memset(t->by_kind, 0, sizeof(t->by_kind));
	t->not_taken = t->insns = t->gaps = t->lost_bytes = 0;
	memset(t->gaps_by_cause, 0, sizeof(t->gaps_by_cause));
}

/* Where execution continues after b (the writers' view: a far branch with
 * no known target returns behind itself), 0 when unknown. */
static uint64_t branch_next_ip(const struct ptc_branch *b)
{
	if (b->kind == PTC_BR_FAR && !b->target)
		return b->ip + b->length;
	return b->taken ? b->target : b->ip + b->length;
}

/* Where execution continues after the last of records b[0, n) with the
 * nm paths marked among them (a batch is sparse: struct ptc_path). */
static uint64_t batch_next_ip(const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	if (nm && m[nm - 1].at == n - 1) {
		struct ptc_branch last = ptc_path_last(m[nm - 1].path, &b[n - 1]);
		return branch_next_ip(&last);
	}
	return branch_next_ip(&b[n - 1]);
}

uint64_t ptc_pt_thread_stream_ip(const struct ptc_pt_thread *t)
{
	return t->nbatch ? batch_next_ip(t->batch, t->nbatch, t->marks, t->nmarks) : t->next_ip;
}

/* Is b a far transfer (into the kernel) whose user-mode destination is not
 * known yet?  Tracing stopped at it; where the thread resumes says. */
static int far_open(const struct ptc_branch *b)
{
	return b->kind == PTC_BR_FAR && !b->target;
}

/* Give the sink branches b[0, n), with the nm paths marked among them:
 * sparse if it takes paths, else dense. */
static int give(struct ptc_sink *s, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	if (nm && s->paths)
		return s->paths(s->ctx, b, n, m, nm);
	return ptc_batch_give_dense(s->branches, s->ctx, b, n, m, nm);
}

/* A branch kind's lane (count_batch()): an unknown kind counts as far. */
#define KIND_LANE(k) ((uint64_t)1 << (9 * ((k) < PTC_BR_KIND_NR ? (k) : PTC_BR_FAR)))
static const uint64_t kind_lane[256] = PTC_TABLE256(KIND_LANE);

/* Lanes (count_batch()) into counts per kind. */
static inline void add_lanes_to(uint64_t *by_kind, uint64_t lanes)
{
	unsigned k;

	for (k = 0; k < PTC_BR_KIND_NR; k++)
		by_kind[k] += (lanes >> (9 * k)) & 511;
}

/* What entries b[0, n) count, with the nm paths marked among them (a path
 * counts as its records): to by_kind, and added to *c. */
struct batch_counts {
	uint64_t records, insns, not_taken;
};

static inline void count_batch(const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm,
			       uint64_t *by_kind, struct batch_counts *c)
{
	uint64_t lanes = 0, insns = 0, not_taken = 0, records = n;
	size_t i, j, k;

	/* Statistics per batch rather than per branch.  The kinds are counted
	 * in 9-bit lanes of a register (a batch has at most 511 records):
	 * counting in memory would chain each increment to the previous one
	 * of the same kind through a store and a load.  Every entry is
	 * counted as a record first, then each path's first record is
	 * replaced by the path's counts: a loop that told paths from records
	 * as it went mispredicted at nearly every path (a few records lie
	 * between two paths), which cost more than the counting.  A path's
	 * kinds, up to PTC_PATH_RECORDS_MAX a lane, go to lanes of their
	 * own, emptied every 15 paths (a loop per 15 rather than a test per
	 * path: valgrind counted the test and its division as a third of
	 * the loop's instructions). */
	_Static_assert(PTC_PT_BATCH < 512 && PTC_BR_KIND_NR * 9 <= 64, "kind lanes");
	_Static_assert(15 * PTC_PATH_RECORDS_MAX < 512, "path kind lanes");
	for (i = 0; i < n; i++) {
		insns += b[i].insns;
		lanes += kind_lane[b[i].kind];
		not_taken += !b[i].taken;
	}
	for (j = 0; j < nm; j += 15) {
		const size_t end = nm - j > 15 ? j + 15 : nm;
		uint64_t path_lanes = 0;

		for (k = j; k < end; k++) {
			const struct ptc_path *p = m[k].path;
			const struct ptc_branch *first = &b[m[k].at];

			lanes -= kind_lane[first->kind];
			not_taken -= !first->taken;
			path_lanes += p->kinds;
			insns += p->insns;
			not_taken += p->not_taken;
			records += p->records - 1;
		}
		add_lanes_to(by_kind, path_lanes);
	}
	add_lanes_to(by_kind, lanes);
	c->records += records;
	c->insns += insns;
	c->not_taken += not_taken;
}

static int hand_over(struct ptc_pt_thread *t, const struct ptc_branch *b, size_t n,
		     const struct ptc_path_mark *m, size_t nm)
{
	struct batch_counts c = { 0, 0, 0 };
	int err;

	count_batch(b, n, m, nm, t->by_kind, &c);
	t->insns += c.insns;
	t->not_taken += c.not_taken;

	if (n)
		t->next_ip = batch_next_ip(b, n, m, nm);
	if (n && t->sink && !t->sink_error) {
		err = give(t->sink, b, n, m, nm);
		if (err < 0)
			t->sink_error = err;
	}
	return t->sink_error;
}

/* Hand the first n batched branches to the sink; the rest (at most one,
 * never a path's) move to the front of the batch. */
static int flush_first(struct ptc_pt_thread *t, size_t n)
{
	size_t i, nm = 0;

	if (t->no_hold) {
		/* a window's stand-in: its branches go to the log as they
		 * are; the real thread counts them when they are replayed */
		if (t->nbatch && !t->sink_error && give(t->sink, t->batch, t->nbatch, t->marks, t->nmarks) < 0)
			t->sink_error = -ptc_err_nomem;
		t->nbatch = 0;
		t->nmarks = 0;
		return t->sink_error;
	}
	/* What stays is never a path's first record (settled()): the marks
	 * are all below n but for, at most, the last one. */
	nm = t->nmarks;
	if (nm && t->marks[nm - 1].at >= n)
		nm--;
	hand_over(t, t->batch, n, t->marks, nm);
	for (i = n; i < t->nbatch; i++)
		t->batch[i - n] = t->batch[i];
	t->nbatch -= n;
	for (i = nm; i < t->nmarks; i++) {
		t->marks[i - nm] = t->marks[i];
		t->marks[i - nm].at -= (uint32_t)n;
	}
	t->nmarks -= nm;
	return t->sink_error;
}

void ptc_pt_thread_drop_paths(struct ptc_pt_thread *t)
{
	/* (a path is its first record in the batch: without its mark the
	 * records would be handed over wrong) */
	if (t->nmarks)
		t->nbatch = t->marks[0].at;
	t->nmarks = 0;
}

int ptc_pt_thread_flush(struct ptc_pt_thread *t)
{
	return flush_first(t, t->nbatch);
}

/* Of branches b[0, n) of t, those that can go to the sink now: all but a
 * far transfer at the end whose target is still unknown. */
static size_t settled(const struct ptc_pt_thread *t, const struct ptc_branch *b, size_t n)
{
	const struct ptc_path_mark *m = t->nmarks ? &t->marks[t->nmarks - 1] : NULL;

	if (!n || t->no_hold)
		return n;
	if (far_open(&b[n - 1]))
		return n - 1;
	/* (never a path: it is its first record in the batch) */
	if (t->keep_last && (!m || m->at + 1 < n))
		return n - 1;
	return n;
}

int ptc_pt_thread_flush_settled(struct ptc_pt_thread *t)
{
	return flush_first(t, settled(t, t->batch, t->nbatch));
}

int ptc_pt_thread_gap(struct ptc_pt_thread *t, const struct ptc_gap *g)
{
	int err;

	t->gaps++;
	t->gaps_by_cause[g->cause]++;
	t->lost_bytes += g->lost_bytes;
	if (ptc_pt_thread_flush(t) < 0)
		return t->sink_error;
	if (g->resume_ip) {
		t->started = 1;	/* the gap says where the stream resumes */
		t->next_ip = g->resume_ip;
	}
	if (t->sink && t->sink->gap) {
		err = t->sink->gap(t->sink->ctx, g);
		if (err < 0) {
			t->sink_error = err;
			return err;
		}
	}
	return 0;
}

int ptc_pt_thread_start(struct ptc_pt_thread *t, uint64_t time, uint64_t offset, uint64_t ip)
{
	struct ptc_gap g;
	const char *why = t->started ? "execution resumes elsewhere than the last branch leads"
				     : "trace starts";
	int err;

	if (t->pending_insns || !ip)
		return 0;
	if (t->started) {
		/* where the stream says execution continues */
		uint64_t next = t->next_ip;
		if (t->nbatch && far_open(&t->batch[t->nbatch - 1])) {
			/* User mode resumes after a far transfer (kept back
			 * by ptc_pt_thread_flush_settled): a system call
			 * returns behind itself (target 0), execve enters
			 * the new program, a signal its handler, sigreturn
			 * the interrupted code: that is where it went. */
			struct ptc_branch *b = &t->batch[t->nbatch - 1];
			if (ip != b->ip + b->length)
				b->target = ip;
			return 0;
		}
		if (t->nbatch)
			next = ptc_pt_thread_stream_ip(t);
		if (next == ip)
			return 0;
	}
	t->started = 1;
	if (ptc_pt_thread_flush(t) < 0)
		return t->sink_error;
	t->next_ip = ip;
	if (!t->sink || !t->sink->gap)
		return 0;
	memset(&g, 0, sizeof(g));
	g.cause = PTC_GAP_START;
	g.aux_offset = g.resume_offset = offset;
	g.time = time;
	g.resume_ip = ip;
	g.detail = why;
	err = t->sink->gap(t->sink->ctx, &g);
	if (err < 0)
		t->sink_error = err;
	return err;
}

void ptc_pt_thread_fini(struct ptc_pt_thread *t)
{
	free(t->stack);
	free(t->stack_call);
	t->stack = NULL;
	t->stack_call = NULL;
	t->depth = t->stack_cap = 0;
}

int ptc_pt_thread_copy_stack(struct ptc_pt_thread *child, const struct ptc_pt_thread *parent)
{
	size_t cap = parent->depth > 64 ? parent->depth : 64;
	uint64_t *s = malloc(cap * sizeof(*s));
	uint32_t *sc = malloc(cap * sizeof(*sc));

	if (!s || !sc) {
		free(s);
		free(sc);
		return -ptc_err_nomem;
	}
	if (parent->depth) {
		memcpy(s, parent->stack, parent->depth * sizeof(*s));
		memcpy(sc, parent->stack_call, parent->depth * sizeof(*sc));
	}
	ptc_pt_thread_fini(child);
	child->stack = s;
	child->stack_call = sc;
	child->depth = parent->depth;
	child->stack_cap = cap;
	return 0;
}

static int grow_stack(struct ptc_pt_thread *t)
{
	size_t ncap, keep;
	uint64_t *s;
	uint32_t *c;

	if (t->stack_cap >= STACK_MAX) {
		/* A trace that only calls: keep the newest half. */
		keep = t->depth - t->depth / 2;
		memmove(t->stack, t->stack + t->depth / 2, keep * sizeof(*t->stack));
		memmove(t->stack_call, t->stack_call + t->depth / 2, keep * sizeof(*t->stack_call));
		t->depth = keep;
		return 0;
	}
	ncap = t->stack_cap ? t->stack_cap * 2 : 64;
	s = realloc(t->stack, ncap * sizeof(*s));
	if (!s)
		return -ptc_err_nomem;
	t->stack = s;
	c = realloc(t->stack_call, ncap * sizeof(*c));
	if (!c)
		return -ptc_err_nomem;
	t->stack_call = c;
	t->stack_cap = ncap;
	return 0;
}

/* Does the direct call b push a return address that a compressed return
 * may pop?  Not a call to its own next instruction (call next; pop reg,
 * to read the IP): the processor leaves it out of the stack of return
 * compression (Intel SDM, "Indirect Transfer Compression for Returns"),
 * and so does libipt.  It stays a call branch. */
static inline int call_pushes(const struct ptc_tbranch *b)
{
	return !(b->flags & PTC_TBF_TARGET_IS_FALL);
}

static int shadow_hint(struct ptc_pt_thread *t, uint32_t i);

/* Push the return address of the call at table entry i of the current
 * region (bip its run-time address). */
static inline int push_ret(struct ptc_pt_thread *t, const struct ptc_tbranch *b, uint32_t i, uint64_t bip)
{
	if (t->depth == t->stack_cap && grow_stack(t) < 0)
		return -ptc_err_nomem;
	if (t->no_hold && shadow_hint(t, i) < 0)
		return -ptc_err_nomem;
	t->stack[t->depth] = bip + b->length;
	t->stack_call[t->depth] = i;
	t->depth++;
	return 0;
}

/* Where a return to ret continues, without a search: when entry call of
 * the region's table is a branch that ends right at ret (the call that
 * pushed it, as a rule) and its fall-through reaches the next entry by
 * straight-line code, the next branch is call + 1 and the instructions to
 * it are its fall_insns.  That holds by the table's construction whatever
 * table the hint came from, so a stale hint costs only the search. */
static inline int ret_position(const struct ptc_pt_region *reg, uint64_t ret, uint32_t call,
			       uint32_t *idx, uint32_t *insns)
{
	const struct ptc_tbranch *c;

	if ((uint64_t)call + 1 >= reg->ntb || ret < reg->start || ret >= reg->end)
		return 0;
	c = &reg->tb[call];
	if ((uint64_t)((int64_t)c->ip + reg->bias) + c->length != ret || !c->fall_insns)
		return 0;
	*idx = call + 1;
	*insns = c->fall_insns;
	return 1;
}

static inline int commit(struct ptc_pt_decoder *d, struct ptc_pt_thread *t, const struct ptc_branch *src)
{
	t->batch[t->nbatch++] = *src;
	d->st.branches++;
	if (t == &d->orphan)
		d->st.orphan_branches++;
	if (t->nbatch == PTC_PT_BATCH)
		return ptc_pt_thread_flush_settled(t);
	return 0;
}

static int hold(struct ptc_pt_decoder *d, struct ptc_pt_thread *t, const struct ptc_branch *b)
{
	if (d->nspec == d->capspec) {
		size_t ncap = d->capspec ? d->capspec * 2 : 4096;
		struct spec_branch *n = realloc(d->spec, ncap * sizeof(*n));
		if (!n)
			return -ptc_err_nomem;
		d->spec = n;
		d->capspec = ncap;
	}
	d->spec[d->nspec].t = t;
	d->spec[d->nspec].b = *b;
	d->nspec++;
	return 0;
}

static inline int emit(struct ptc_pt_decoder *d, uint64_t ip, uint64_t target,
		       uint32_t insns, int kind, int taken, int len)
{
	struct ptc_pt_thread *t = d->thr;
	struct ptc_branch *b, tmp;

	/* Filled in place, field by field, and never copied as a whole: a
	 * struct assembled on the stack and copied with 16-byte moves stalls
	 * on store forwarding, which cost more than the rest of this. */
	b = d->spec_mode ? &tmp : &t->batch[t->nbatch];
	b->ip = ip;
	b->target = target;
	b->time = d->time;
	b->insns = (uint32_t)(insns + t->pending_insns);
	b->kind = (uint8_t)kind;
	b->taken = (uint8_t)taken;
	b->length = (uint8_t)len;
	b->flags = t->after_gap ? PTC_BRF_AFTER_GAP : 0;
	t->after_gap = 0;
	t->pending_insns = 0;
	if (kind != PTC_BR_JMP && kind != PTC_BR_CALL)
		d->nchain = 0, d->ndirect = 0;
	if (d->spec_mode)
		return hold(d, t, b);
	d->st.branches++;
	if (t == &d->orphan)
		d->st.orphan_branches++;
	if (++t->nbatch == PTC_PT_BATCH)
		return ptc_pt_thread_flush_settled(t);
	return 0;
}

static int commit_spec(struct ptc_pt_decoder *d)
{
	size_t i;
	int err = 0;

	for (i = 0; i < d->nspec && err >= 0; i++)
		err = commit(d, d->spec[i].t, &d->spec[i].b);
	d->nspec = 0;
	d->nspec_ok = 0;
	return err < 0 ? err : 0;
}

/* ---- time ---- */

static void update_time(struct ptc_pt_decoder *d, const struct pt_event *ev)
{
	uint64_t tsc;

	if (ev && ev->has_tsc) {
		tsc = ev->tsc;
	} else if (q_time(d, &tsc) < 0) {
		return;
	}
	if (d->have_tsc && tsc == d->tsc)
		return;
	d->tsc = tsc;
	if (d->cap && !d->have_tsc)
		ahead_timed(d);
	d->have_tsc = 1;
	d->time = ptc_time_conv_ticks(&d->p.tc, tsc);
	/* (a sink error stays in its thread) */
	ptc_pt_bystanders_time(&d->by, d->time);
}

/* ---- gaps ---- */

static uint64_t cur_offset(struct ptc_pt_decoder *d)
{
	uint64_t off = 0;

	if (have_query(d) && q_get_offset(d, &off) < 0)
		off = 0;
	return d->base + off;
}

/* The trace stops being exact here: the current thread loses its pending
 * instructions and its call stack.  The gap is emitted when decoding resumes
 * (so that it can say where), or at the end. */
static void open_gap(struct ptc_pt_decoder *d, int cause, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void open_gap(struct ptc_pt_decoder *d, int cause, uint64_t offset, const char *fmt, ...)
{
	struct ptc_pt_loss *pg = &d->pg;
	va_list ap;
	int opened;

	if (d->spec_mode || d->nspec)
		d->spec_run_failed = 1;
	if (d->nspec) {
		/* The held branches after the last confirmed PSB came from the
		 * segment with the hole: not trusted; their threads lose their
		 * history.  Those before it are kept. */
		size_t i, ok = d->nspec_ok;
		struct ptc_pt_thread *first = d->spec[ok < d->nspec ? ok : 0].t;
		for (i = ok; i < d->nspec; i++) {
			struct ptc_pt_thread *t = d->spec[i].t;
			t->pending_insns = 0;
			t->depth = 0;
			t->after_gap = 1;
		}
		d->nspec = ok;
		commit_spec(d);
		if (!pg->active) {
			open_gap(d, PTC_GAP_AUX_LOST, d->spec_start,
				 "AUX data with a hole (PARTIAL/COLLISION): the segment did not decode consistently");
			pg->owner = first;
			return;
		}
	}
	va_start(ap, fmt);
	opened = ptc_pt_loss_open(pg, &d->ls, d->thr, d->enabled, cause, offset, d->time, fmt, ap);
	va_end(ap);
	if (!opened)
		return;	/* one gap absorbs the next failure before resuming */
	d->enabled = 0;
	d->have_idx = 0;
}

static int close_gap(struct ptc_pt_decoder *d, uint64_t resume_off, uint64_t resume_ip)
{
	return ptc_pt_loss_close(&d->pg, &d->ls, d->thr, resume_off, resume_ip, d->time);
}

/* ---- regions ---- */

static void set_thread(struct ptc_pt_decoder *d, struct ptc_pt_thread *t)
{
	d->thr = t;
	if (t)
		t->cpu = d->cpu;
	if (!t || t->pid != d->rc_pid) {
		d->nrc = 0;
		d->have_reg = 0;
		d->rc_pid = t ? t->pid : UINT32_MAX;
	}
}

/* d->reg's code as code of the current mode (the environment gives the
 * image, whose own table may decode another). */
static __attribute__((noinline, cold)) int region_in_mode(struct ptc_pt_decoder *d, int *cause)
{
	const struct ptc_image *m;
	size_t n;
	int err = ptc_image_in_mode(d->reg.img, d->mode, &m, d->msg, sizeof(d->msg));

	if (err < 0) {
		*cause = PTC_GAP_DECODE;
		return err;
	}
	d->reg.img = m;
	d->reg.tb = ptc_image_branches(m, &n);
	d->reg.ntb = (uint32_t)n;
	return 0;
}

/* Code of mode bits from d->ip on: the regions are looked up again, for
 * their tables of that mode, and the walker searches its position. */
static void set_mode(struct ptc_pt_decoder *d, unsigned bits)
{
	d->mode_next = 0;
	if (bits == d->mode)
		return;
	d->mode = bits;
	d->nrc = 0;
	d->have_reg = 0;
	d->have_idx = 0;
}

/* A TIP (or an asynchronous branch's, or TIP.PGD's) IP became the
 * walker's: a MODE.Exec bound to it takes effect there. */
static inline void tip_taken(struct ptc_pt_decoder *d)
{
	if (d->mode_next)
		set_mode(d, d->mode_next);
}

/* MODE.Exec's mode in bits, 0 when unknown. */
static unsigned exec_bits(const struct pt_event *ev)
{
	switch (ev->variant.exec_mode.mode) {
	case ptem_16bit:
		return 16;
	case ptem_32bit:
		return 32;
	case ptem_64bit:
		return 64;
	default:
		return 0;
	}
}

/* A MODE.Exec event: a PSB+'s says the mode at its IP, as does one while
 * tracing is off (TIP.PGE's, which comes next) or one bound to where the
 * walker already stands (an asynchronous branch's TIP, taken first);
 * otherwise it binds to the next TIP (a far branch's), whose IP the
 * walker takes later. */
static void exec_mode(struct ptc_pt_decoder *d, const struct pt_event *ev)
{
	unsigned bits = exec_bits(ev);

	if (!bits)
		return;
	if (d->cap)
		ahead_mode_said(d, bits);
	if (ev->status_update || !d->enabled || d->skipping ||
	    (!d->have_idx && !ev->ip_suppressed && ev->variant.exec_mode.ip == d->ip))
		set_mode(d, bits);
	else
		d->mode_next = bits == d->mode ? 0 : bits;
}

/* The environment's region at ip into d->reg and the cache (a miss of
 * lookup_region(), kept out of its way). */
static __attribute__((noinline)) int region_miss(struct ptc_pt_decoder *d, uint64_t ip, int *cause)
{
	int err;

	d->msg[0] = 0;
	err = d->env.region_at(d->env.ctx, d->thr, d->time, ip, &d->reg, cause, d->msg, sizeof(d->msg));
	if (err >= 0 && ptc_image_mode(d->reg.img) != d->mode)
		err = region_in_mode(d, cause);
	if (err < 0) {
		d->have_reg = 0;
		return err;
	}
	if (d->cap)
		ahead_mode_used(d);
	d->have_reg = 1;
	if (d->nrc < RCACHE) {
		d->rc[d->nrc++] = d->reg;
	} else {
		d->rc[d->rc_next] = d->reg;
		d->rc_next = (d->rc_next + 1) % RCACHE;
	}
	return 0;
}

/* The region at ip into d->reg (from the cache, else the environment's):
 * 0, or region_at's error with *cause and d->msg. */
/* The region at ip that the decoder holds (the current one or one of its
 * cache), NULL when it would have to ask the environment. */
static const struct ptc_pt_region *known_region(const struct ptc_pt_decoder *d, uint64_t ip)
{
	unsigned i;

	if (d->have_reg && ip >= d->reg.start && ip < d->reg.end)
		return &d->reg;
	for (i = 0; i < d->nrc; i++)
		if (ip >= d->rc[i].start && ip < d->rc[i].end)
			return &d->rc[i];
	return NULL;
}

static int lookup_region(struct ptc_pt_decoder *d, uint64_t ip, int *cause)
{
	const struct ptc_pt_region *r = known_region(d, ip);

	if (!r)
		return region_miss(d, ip, cause);
	if (r != &d->reg) {
		d->reg = *r;
		d->have_reg = 1;
	}
	return 0;
}

static int find_region(struct ptc_pt_decoder *d, uint64_t ip)
{
	int cause = PTC_GAP_NO_IMAGE, err = lookup_region(d, ip, &cause);

	if (err < 0) {
		open_gap(d, cause, cur_offset(d), "ip 0x%" PRIx64 ": %s", ip,
			 d->msg[0] ? d->msg : "no code mapped");
		/* (libipt 2.1's query decoder has read one packet further) */
		ptc_pt_loss_at_nomap(&d->pg, &d->cfg, d->base, d->last_sync_off, cur_offset(d) - d->base, ip,
				     ip == d->held_ip ? d->held_ip_named : UINT64_MAX);
	}
	return err;
}

/* The same without a gap when there is none (the caller decides). */
static int peek_region(struct ptc_pt_decoder *d, uint64_t ip)
{
	int cause;

	return lookup_region(d, ip, &cause);
}

/* Position the walker at ip (slow path). */
static int locate(struct ptc_pt_decoder *d, uint64_t ip)
{
	int err;

	struct icache *e;

	d->ip = ip;
	err = find_region(d, ip);
	if (err < 0)
		return err;
	/* Indirect branches go to few places (returns, switch tables,
	 * virtual calls): remember where each leads. */
	e = &d->icache[(ip ^ (ip >> 12)) & (ICACHE - 1)];
	if (e->ip == ip && e->img == d->reg.img && e->bias == d->reg.bias) {
		d->idx = e->idx;
		d->insns = e->insns;
		d->have_idx = 1;
		return 0;
	}
	err = ptc_image_next_branch(d->reg.img, (uint64_t)((int64_t)ip - d->reg.bias), &d->idx, &d->insns);
	if (err >= 0) {
		e->ip = ip;
		e->img = d->reg.img;
		e->bias = d->reg.bias;
		e->idx = d->idx;
		e->insns = d->insns;
	}
	if (err < 0)
		return err;	/* in d->reg, no branch ahead: step() decides */
	d->have_idx = 1;
	return 0;
}

/* Is the instruction a branch that a table lists (images/branch_table.c)? */
static int zy_branch(const ZydisDecodedInstruction *in)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_SYSRET:
	case ZYDIS_CATEGORY_INTERRUPT:
		return 1;
	default:
		return 0;
	}
}

/* Code from which no branch follows: the table of d->reg ends before it
 * (nop, hlt, a function's end after the image's last branch).  The
 * instructions from ip up to (not including) to, decoded one by one:
 * 0 and *n, or -1 when to is not on that straight-line path.  to
 * UINT64_MAX: up to the end of the image's code, which must hold no
 * branch (then ip is such code). */
#define TAIL_MAX (1u << 16)
static int straight_insns(struct ptc_pt_decoder *d, uint64_t ip, uint64_t to, uint32_t *n)
{
	ZydisDecoder zy;
	uint8_t buf[ZYDIS_MAX_INSTRUCTION_LENGTH];
	uint32_t k;

	if (d->mode == 32)
		ZydisDecoderInit(&zy, ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
	else if (d->mode == 16)
		ZydisDecoderInit(&zy, ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16);
	else
		ZydisDecoderInit(&zy, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (k = 0; k < TAIL_MAX; k++) {
		ZydisDecodedInstruction in;
		struct ptc_x86_newer nw;
		size_t got;

		if (ip == to) {
			*n = k;
			return 0;
		}
		got = ptc_image_read(d->reg.img, (uint64_t)((int64_t)ip - d->reg.bias), buf, sizeof(buf));
		if (!got) {
			*n = k;
			return to == UINT64_MAX && k ? 0 : -1;
		}
		if ((ptc_x86_newer_branch(buf, got, &nw) && d->mode == 64) ||
		    ZYAN_FAILED(ZydisDecoderDecodeInstruction(&zy, NULL, buf, got, &in)) ||
		    zy_branch(&in))
			return -1;
		ip += in.length;
		if (ip > to)
			return -1;
	}
	return -1;
}

/* ---- events ---- */

static int fetch_event(struct ptc_pt_decoder *d)
{
	int st = q_event(d, &d->ev);

	if (st < 0)
		return st;
	d->status = st;
	d->have_ev = 1;
	d->st.events++;
	return 0;
}

/* Is the held event one that waits for the walker to reach an IP? */
static int event_bound_ip(const struct pt_event *ev, uint64_t *ip)
{
	switch (ev->type) {
	case ptev_async_disabled:
		*ip = ev->variant.async_disabled.at;
		return 1;
	case ptev_async_branch:
		*ip = ev->variant.async_branch.from;
		return 1;
	default:
		return 0;
	}
}

/* Start tracing at ip in the thread running now. */
static int enable_at(struct ptc_pt_decoder *d, uint64_t ip)
{
	struct ptc_pt_thread *t;
	int err;

	if (d->cap) {
		/* decoding ahead: the thread is a stand-in, and the replay
		 * asks thread_at here */
		t = ahead_thread(d);
		ahead_enable(d, t, cur_offset(d), ip);
	} else {
		t = d->env.thread_at(d->env.ctx, d->cpu, d->qtid, d->time);
	}

	if (!t)
		t = &d->orphan;
	if (t != d->thr) {
		/* keep per-CPU streams in order */
		ptc_pt_thread_flush_settled(d->thr);
		set_thread(d, t);
	}
	t->keep_last = d->cfg.errata.bdm64;
	/* Tracing was off: the process may have mapped, unmapped or exec'd
	 * meanwhile, so the cached regions are looked up again. */
	d->nrc = 0;
	d->have_reg = 0;
	d->enabled = 1;
	d->skipping = 0;
	d->ip = ip;
	d->have_idx = 0;
	tip_taken(d);
	d->nchain = 0;
	d->ndirect = 0;
	if (d->pg.active && peek_region(d, ip) < 0)
		/* tracing resumes in code no image covers: the loss goes on
		 * until decoding resumes in known code (loss.h) */
		return 0;
	err = close_gap(d, cur_offset(d), ip);
	/* (not while branches are held for --check-partial: they come first) */
	if (err >= 0 && t != &d->orphan && !d->nspec)
		err = ptc_pt_thread_start(t, d->time, cur_offset(d), ip);
	return err;
}

/* A PSB+'s word on whether tracing is on (and at which IP): libipt 2.1
 * and later report it at every PSB as a status update, ptev_enabled or
 * ptev_disabled with status_update set, once the bits before the PSB are
 * used up; libipt 2.0 and ptconv's query decoder only as the status of a
 * synchronisation.  It is a state, not a change: where it agrees with the
 * walker nothing happens and nothing is lost.  Where it does not, the
 * trace contradicts what was decoded before (as libipt's own decoders
 * say, -pte_bad_status_update): a decode gap, and the walk goes on in the
 * state the PSB+ gives. */
int ptc_pt_status_update(const struct pt_event *ev, int enabled)
{
	if (!ev->status_update || (ev->type != ptev_enabled && ev->type != ptev_disabled))
		return PTC_PT_STATUS_NONE;
	if ((ev->type == ptev_enabled) == (enabled != 0))
		return PTC_PT_STATUS_AGREES;
	return ev->type == ptev_enabled ? PTC_PT_STATUS_ON : PTC_PT_STATUS_OFF;
}

static int apply_status(struct ptc_pt_decoder *d, int verdict)
{
	const struct pt_event *ev = &d->ev;

	d->have_ev = 0;
	switch (verdict) {
	case PTC_PT_STATUS_ON:
		if (!d->pg.active)
			open_gap(d, PTC_GAP_DECODE, cur_offset(d),
				 "the PSB+ says tracing is on at 0x%" PRIx64 ", where the trace had stopped it",
				 ev->variant.enabled.ip);
		return enable_at(d, ev->variant.enabled.ip);
	case PTC_PT_STATUS_OFF:
		open_gap(d, PTC_GAP_DECODE, cur_offset(d), "the PSB+ says tracing is off, where the trace had it on");
		return 0;
	default:
		return 0;
	}
}

/* Erratum BDM70 (most cores from Broadwell on): a PSB+ right before a
 * TIP.PGE may hold a FUP although tracing is off.  libipt's decoders skip
 * such a FUP where the CPU has the erratum (pt_errata.bdm70).  Here tracing
 * was on since the PSB+ synchronised at, and nothing was decoded since: */
static int bdm70_fresh(const struct ptc_pt_decoder *d)
{
	return d->psb_on && d->st.branches == d->psb_branches && !d->thr->pending_insns && d->ip == d->psb_ip;
}

/* ... and the TIP.PGE names the PSB+'s IP: the two say the same whatever
 * the CPU (execution was there, nothing ran in between), not a loss. */
static int bdm70_same(const struct ptc_pt_decoder *d, uint64_t ip)
{
	return bdm70_fresh(d) && ip == d->psb_ip;
}

/* libipt's bound on the instructions its BDM64 workaround walks. */
#define BDM64_STEPS 256

/* Is to reached from ip by straight-line code and direct jumps and calls
 * within BDM64_STEPS instructions (to itself not counted)?  The region
 * the walker stands in is kept. */
static int bdm64_reaches(struct ptc_pt_decoder *d, uint64_t ip, uint64_t to)
{
	struct ptc_pt_region keep = d->reg;
	int had = d->have_reg, ok = 0;
	uint32_t steps = 0, idx, n, idx2, n2;

	while (steps <= BDM64_STEPS && peek_region(d, ip) == 0) {
		const struct ptc_tbranch *b;
		uint64_t bip;

		if (ptc_image_next_branch(d->reg.img, (uint64_t)((int64_t)ip - d->reg.bias), &idx, &n) < 0) {
			ok = straight_insns(d, ip, to, &n) == 0 && steps + n <= BDM64_STEPS;
			break;
		}
		b = &d->reg.tb[idx];
		bip = (uint64_t)((int64_t)b->ip + d->reg.bias);
		if (to >= ip && to <= bip) {
			ok = ptc_image_next_branch(d->reg.img, (uint64_t)((int64_t)to - d->reg.bias), &idx2, &n2) == 0 &&
			     idx2 == idx && n2 <= n && steps + (n - n2) <= BDM64_STEPS;
			break;
		}
		if (b->kind != PTC_BR_JMP && b->kind != PTC_BR_CALL)
			break;
		steps += n;
		ip = (uint64_t)((int64_t)b->target + d->reg.bias);
	}
	d->reg = keep;
	d->have_reg = had;
	return ok;
}

/* The current thread's last branch record while it can still change:
 * not handed to the sink yet, not part of a path. */
static struct ptc_branch *last_record(struct ptc_pt_decoder *d)
{
	struct ptc_pt_thread *t = d->thr;
	const struct ptc_path_mark *m = t->nmarks ? &t->marks[t->nmarks - 1] : NULL;

	if (d->spec_mode || d->nspec)
		return d->nspec > d->nspec_ok && d->spec[d->nspec - 1].t == t ? &d->spec[d->nspec - 1].b : NULL;
	if (!t->nbatch || (m && m->at + 1 >= t->nbatch))
		return NULL;
	return &t->batch[t->nbatch - 1];
}

/* Erratum BDM64 (Broadwell): a TSX abort right after a branch may leave
 * that branch's TNT bit or TIP wrong.  As libipt's decoders work around it
 * (pt_errata.bdm64): where the abort's IP is not reached from where the
 * branch's packet sent the walker (bdm64_reaches()), the branch went to
 * the abort's IP instead; a conditional branch, then, to its target or its
 * fall-through.  Without the workaround that is the trace contradicting
 * the code, a decode gap, which says so when the CPU is not known. */
static void tsx_abort(struct ptc_pt_decoder *d)
{
	const struct pt_event *ev = &d->ev;
	uint64_t at = ev->variant.tsx.ip;
	struct ptc_branch *b;
	char hint[128];

	if (!ev->variant.tsx.aborted || ev->ip_suppressed || !d->enabled || d->pg.active || d->skipping ||
	    d->thr->pending_insns || !(b = last_record(d)))
		return;
	if ((b->kind != PTC_BR_COND && b->kind != PTC_BR_JMP_IND && b->kind != PTC_BR_CALL_IND &&
	     b->kind != PTC_BR_RET) ||
	    branch_next_ip(b) != d->ip || bdm64_reaches(d, d->ip, at))
		return;
	if (!d->cfg.errata.bdm64) {
		if (!d->p.cpu_family)
			decode_failed(d, PTC_GAP_DECODE,
				      "TSX abort at 0x%" PRIx64 " after the %s at 0x%" PRIx64
				      ", whose packet leads elsewhere%s",
				      at, ptc_branch_kind_name(b->kind), b->ip,
				      ptc_pt_errata_hint(0, "BDM64", hint, sizeof(hint)));
		return;	/* else the walk finds the contradiction */
	}
	if (d->cap) {
		/* the record may be in the log already */
		ahead_unusable(d->cap, "erratum BDM64");
		return;
	}
	if (b->kind == PTC_BR_COND) {
		if (at != b->target && at != b->ip + b->length) {
			decode_failed(d, PTC_GAP_DECODE,
				      "a TSX abort at 0x%" PRIx64 " right after the cond at 0x%" PRIx64
				      " (erratum BDM64), neither its target nor its fall-through",
				      at, b->ip);
			return;
		}
		b->taken = at == b->target;
	} else {
		b->target = at;
	}
	d->ip = at;
	d->have_idx = 0;
}

/* Events that do not wait for an IP; returns 1 to stop (time limit). */
static int apply_event(struct ptc_pt_decoder *d, uint64_t until)
{
	const struct pt_event *ev = &d->ev;
	int err, verdict;

	update_time(d, ev);
	verdict = ptc_pt_status_update(ev, d->enabled);
	if (verdict != PTC_PT_STATUS_NONE)
		return apply_status(d, verdict);
	switch (ev->type) {
	case ptev_enabled:
		if (d->enabled && !d->pg.active && d->thr && !bdm70_same(d, ev->variant.enabled.ip)) {
			/* Enabled twice: what happened in between is unknown. */
			char hint[128];

			open_gap(d, PTC_GAP_DISABLED, cur_offset(d),
				 "trace enabled at 0x%" PRIx64 " while already enabled%s", ev->variant.enabled.ip,
				 bdm70_fresh(d) ? ptc_pt_errata_hint(d->p.cpu_family != 0, "BDM70", hint, sizeof(hint))
						: "");
		}
		d->have_ev = 0;
		return enable_at(d, ev->variant.enabled.ip);
	case ptev_tsx:
		d->have_ev = 0;
		tsx_abort(d);
		return 0;
	case ptev_exec_mode:
		d->have_ev = 0;
		exec_mode(d, ev);
		return 0;
	case ptev_overflow:
		d->have_ev = 0;
		open_gap(d, PTC_GAP_OVERFLOW, cur_offset(d), "overflow: the CPU dropped trace packets");
		ptc_pt_loss_at_ovf(&d->pg, &d->cfg, d->base, d->last_sync_off, cur_offset(d) - d->base);
		if (!ev->ip_suppressed)
			return enable_at(d, ev->variant.overflow.ip);
		return 0;
	case ptev_disabled:
		/* A synchronous disable binds to a branch; when tracing is off
		 * already (e.g. right after sync) it just confirms. */
		if (d->enabled)
			return 0;
		d->have_ev = 0;
		return 0;
	case ptev_async_disabled:
	case ptev_async_branch:
		if (d->enabled)
			return 0;	/* waits for its IP */
		/* Not walking: nothing to bind. */
		d->have_ev = 0;
		if (ev->type == ptev_async_branch && !ev->ip_suppressed && !d->pg.active) {
			err = enable_at(d, ev->variant.async_branch.to);
			if (err < 0)
				return err;
		}
		return 0;
	default:
		/* paging, timing, power, ptwrite: nothing to do for user-mode
		 * control flow. */
		d->have_ev = 0;
		return 0;
	}
	(void)until;
}

/* The piece ends inside a suspect range: the last segment has no PSB after
 * it to confirm it.  When the range's hole was found already, the tail is
 * kept (one hole per AUX record); otherwise it is dropped with a gap. */
static void end_spec(struct ptc_pt_decoder *d)
{
	if (!d->nspec)
		return;
	if (d->spec_run_failed) {
		commit_spec(d);
		return;
	}
	if (!d->enabled && !d->have_ev && !d->pg.active) {
		/* The last segment ended cleanly (tracing off) like every
		 * other: the hole was not located, nothing of the range can
		 * be trusted. */
		d->nspec_ok = 0;
		d->spec_start = d->spec_run_start;
		open_gap(d, PTC_GAP_AUX_LOST, d->spec_run_start, "unused");
		snprintf(d->pg.detail, sizeof(d->pg.detail),
			 "AUX data with a hole (PARTIAL/COLLISION) that decoding could not locate: "
			 "the whole range is skipped");
		return;
	}
	open_gap(d, PTC_GAP_AUX_LOST, d->spec_start, "unused");
}

/* ---- synchronisation ---- */

/* Where a PSB+'s IP lies for the walker (consistent()): in the block of
 * chain entry chain (< d->nchain: direct branches walked since), or in
 * the current block, skipped instructions past where the walker stands
 * and before branch idx of d->reg (PTC_NO_BRANCH: at d->ip itself). */
struct psb_place {
	unsigned chain;
	uint32_t idx;
	int64_t skipped;
};

/* Does the walker's state agree with a PSB+ (status st, ip) that follows
 * it without a gap?  If so, *at says where ip lies. */
static int consistent(struct ptc_pt_decoder *d, int st, uint64_t ip, struct psb_place *at)
{
	uint32_t idx, n;

	at->chain = CHAIN;
	at->idx = PTC_NO_BRANCH;
	at->skipped = 0;
	if (d->have_ev)
		/* A piece that ends right after a TIP.PGD (an interrupt's FUP
		 * and TIP.PGD, then the PSB): the walker holds the disable, to
		 * take it where the walk reaches its IP with no packet needed,
		 * and the PSB+ says tracing is off. */
		return (d->ev.type == ptev_async_disabled || d->ev.type == ptev_disabled) &&
		       (st & pts_ip_suppressed) != 0;
	if (!d->enabled)
		return (st & pts_ip_suppressed) != 0;
	if (st & pts_ip_suppressed)
		return 0;
	{
		/* the PSB may have come before direct branches walked since */
		unsigned i;
		for (i = 0; i < d->nchain; i++)
			if (ip >= d->chain_s[i] && ip <= d->chain_e[i]) {
				at->chain = i;
				return 1;
			}
	}
	if (ip == d->ip)
		return 1;
	if (!d->have_idx && ip > d->ip && !(d->have_reg && d->ip >= d->reg.start && d->ip < d->reg.end) &&
	    peek_region(d, d->ip) < 0)
		return 0;
	if (ip < d->ip || !d->have_reg || ip >= d->reg.end || d->ip < d->reg.start)
		return 0;
	if (ptc_image_next_branch(d->reg.img, (uint64_t)((int64_t)ip - d->reg.bias), &idx, &n) < 0)
		return 0;
	if (!d->have_idx) {
		/* after an indirect branch: the PSB may have come a few
		 * instructions into its target's block */
		uint32_t idx0, n0;
		if (ptc_image_next_branch(d->reg.img, (uint64_t)((int64_t)d->ip - d->reg.bias), &idx0, &n0) < 0 ||
		    idx != idx0)
			return 0;
		at->skipped = (int64_t)n0 - (int64_t)n;
	} else {
		if (idx != d->idx)
			return 0;
		at->skipped = (int64_t)d->insns - (int64_t)n;
	}
	at->idx = idx;
	return 1;
}

/* Synchronise at the next PSB at or after d->min_sync. */
static int resync(struct ptc_pt_decoder *d)
{
	uint64_t ip = 0, off = 0;
	int st, cont = d->continuing;

	d->continuing = 0;
	if (!cont) {
		d->have_ev = 0;
		d->enabled = 0;
		d->have_idx = 0;
		d->skipping = 0;
		d->mode_next = 0;
	}
	d->status = 0;
	for (;;) {
		st = q_sync_forward(d, &ip);
		if (st == -pte_eos)
			return st;
		if (q_get_sync_offset(d, &off) < 0)
			return -pte_eos;
		if (off < d->min_sync)
			continue;
		if (st < 0) {
			/* A broken PSB+ (or a packet libipt does not know
			 * right after it: libipt reads ahead): a loss up to
			 * the next PSB, which is tried. */
			char wbuf[160];

			d->last_sync_off = off;
			open_gap(d, PTC_GAP_DECODE, d->base + off, "at the PSB at 0x%" PRIx64 ": %s", d->base + off,
				 why(d, st, wbuf, sizeof(wbuf)));
			d->min_sync = off + 1;
			cont = 0;
			continue;
		}
		break;
	}
	d->synced = 1;
	d->min_sync = off + 1;
	d->last_sync_off = off;
	ptc_pt_loss_synced(&d->pg, d->base + off);
	d->st.psb++;
	if (cont) {
		struct psb_place at;
		if (consistent(d, st, ip, &at)) {
			/* not a synchronisation: the walk goes on */
			d->st.psb--;
			d->status = st;
			if (!d->nspec)
				return 0;
			if (d->spec_run_failed) {
				/* the hole was found earlier in this range */
				d->spec_start = d->base;
				return commit_spec(d);
			}
			if (d->subs[d->cursub].spec) {
				/* keep holding until the range is over */
				d->nspec_ok = d->nspec;
				d->spec_start = d->base;
				return 0;
			}
			/* Every segment of the suspect range agreed with the next
			 * PSB, yet the kernel said it has a hole: nothing of it
			 * can be trusted. */
			d->nspec_ok = 0;
			d->spec_start = d->spec_run_start;
			open_gap(d, PTC_GAP_AUX_LOST, d->spec_run_start, "unused");
			snprintf(d->pg.detail, sizeof(d->pg.detail),
				 "AUX data with a hole (PARTIAL/COLLISION) that decoding could not locate: "
				 "the whole range is skipped");
		} else if (!d->nspec) {
			open_gap(d, PTC_GAP_DECODE, d->base + off,
				 "the walker's state does not match the PSB at 0x%" PRIx64, d->base + off);
		} else {
			open_gap(d, PTC_GAP_AUX_LOST, d->spec_start, "unused");
		}
		d->have_ev = 0;
		d->enabled = 0;
		d->have_idx = 0;
	}
	d->status = st;
	update_time(d, NULL);
	/* libipt hands out the PSB+'s time with its first event, not through
	 * pt_qry_time right after the sync: fetch that event now (run()
	 * applies it next anyway), so that the thread running at this point
	 * is looked up at this time, not at the time before the gap. */
	if ((st & pts_event_pending) && !d->have_ev && fetch_event(d) == 0)
		update_time(d, &d->ev);
	if (d->cap && !d->cap_sync++)
		ahead_sync(d, off, st, ip);
	d->psb_on = !(st & pts_ip_suppressed);
	d->psb_ip = ip;
	d->psb_branches = d->st.branches;
	if (!(st & pts_ip_suppressed)) {
		int err = enable_at(d, ip);
		d->cap_sync = 2;
		return err;
	}
	d->cap_sync = 2;
	return 0;
}

/* A decode failure: gap, then resynchronise after the current position. */
static void decode_failed(struct ptc_pt_decoder *d, int cause, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void decode_failed(struct ptc_pt_decoder *d, int cause, const char *fmt, ...)
{
	char buf[200];
	uint64_t off = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	open_gap(d, cause, cur_offset(d), "%s", buf);
	d->skipping = 0;
	if (have_query(d) && q_get_offset(d, &off) == 0 && off > d->min_sync)
		d->min_sync = off;
	d->synced = 0;
	d->have_ev = 0;
}

/* Why a query failed with st, in words (unknown.h: a packet the libipt
 * loaded does not know is named). */
static const char *why(struct ptc_pt_decoder *d, int st, char *buf, size_t n)
{
	return ptc_pt_why(&d->cfg, d->last_sync_off, d->base, st, buf, n);
}

enum { STEP_OK = 0, STEP_STOP = 1, STEP_DONE = 2 };

static int query_failed(struct ptc_pt_decoder *d, int st, uint64_t bip, int kind)
{
	char wbuf[160];

	if (st == -pte_eos) {
		d->piece_done = 1;
		return STEP_DONE;
	}
	if (st == -pte_bad_query && !d->have_ev) {
		/* Maybe an event comes first: hold it and try again. */
		if (fetch_event(d) == 0)
			return STEP_OK;
	}
	decode_failed(d, PTC_GAP_DECODE, "%s at the %s at 0x%" PRIx64,
		      why(d, st, wbuf, sizeof(wbuf)), ptc_branch_kind_name(kind), bip);
	return STEP_OK;
}

/* A direct branch at bip ends the block that started at d->ip. */
static inline int note_direct(struct ptc_pt_decoder *d, uint64_t bip)
{
	if (d->nchain < CHAIN) {
		d->chain_s[d->nchain] = d->ip;
		d->chain_e[d->nchain] = bip;
		d->nchain++;
	}
	if (++d->ndirect > DIRECT_MAX) {
		decode_failed(d, PTC_GAP_DECODE, "%u direct branches without a packet at 0x%" PRIx64
			      ": an endless loop the trace cannot show", DIRECT_MAX, bip);
		return -1;
	}
	return 0;
}

static inline void go_direct(struct ptc_pt_decoder *d, const struct ptc_tbranch *b)
{
	d->ip = (uint64_t)((int64_t)b->target + d->reg.bias);
	if (b->target_next != PTC_NO_BRANCH) {
		d->idx = b->target_next;
		d->insns = b->target_insns;
	} else {
		d->have_idx = 0;
	}
}

static inline void go_next(struct ptc_pt_decoder *d, const struct ptc_tbranch *b, uint64_t bip)
{
	d->ip = bip + b->length;
	if (b->fall_insns && d->idx + 1 < d->reg.ntb) {
		d->idx++;
		d->insns = b->fall_insns;
	} else {
		d->have_idx = 0;
	}
}

static int stop_if_late(struct ptc_pt_decoder *d, uint64_t until)
{
	if (d->cap)
		ahead_stop(d);
	return d->time >= until ? STEP_STOP : STEP_OK;
}

/* The held event takes place at evip, before executed instructions
 * since d->ip: apply it. */
static int bind_event(struct ptc_pt_decoder *d, uint64_t evip, uint32_t before, uint64_t until)
{
	if (d->cap)
		ahead_early_event(d);
	d->thr->pending_insns += before;
	d->have_ev = 0;
	update_time(d, &d->ev);
	if (d->ev.type == ptev_async_disabled) {
		d->enabled = 0;
		d->have_idx = 0;
		d->ip = evip;
		return stop_if_late(d, until);
	}
	/* async branch (interrupt with kernel tracing, tsx abort) */
	if (d->ev.ip_suppressed) {
		d->enabled = 0;
		d->have_idx = 0;
		return stop_if_late(d, until);
	}
	d->ip = d->ev.variant.async_branch.to;
	d->have_idx = 0;
	tip_taken(d);
	return STEP_OK;
}

/* At d->ip in code from which no branch follows (straight_insns()): what
 * can come is an event at an IP on the way (an interrupt, tracing
 * stopped) or the trace's end; a TNT bit, a TIP or a TIP.PGD needs a
 * branch, and contradicts the code. */
static int tail_step(struct ptc_pt_decoder *d, uint64_t until)
{
	const char *img = ptc_image_name(d->reg.img);
	char wbuf[160];
	uint64_t evip, tgt;
	uint32_t n;
	int st, taken;

	if (d->have_ev && event_bound_ip(&d->ev, &evip)) {
		if (evip < d->ip || straight_insns(d, d->ip, evip, &n) < 0) {
			decode_failed(d, PTC_GAP_DECODE, "event at 0x%" PRIx64 " is not an instruction on the path",
				      evip);
			return STEP_OK;
		}
		return bind_event(d, evip, n, until);
	}
	if (d->have_ev) {
		decode_failed(d, PTC_GAP_DECODE, "a TIP.PGD, but no branch follows 0x%" PRIx64 " in %s", d->ip, img);
		return STEP_OK;
	}
	st = q_cond_branch(d, &taken);
	if (st == -pte_bad_query)
		st = q_indirect_branch(d, &tgt);
	if (st >= 0) {
		decode_failed(d, PTC_GAP_DECODE, "a branch's packet, but no branch follows 0x%" PRIx64 " in %s",
			      d->ip, img);
		return STEP_OK;
	}
	if (st == -pte_eos) {
		d->piece_done = 1;
		return STEP_DONE;
	}
	if (st == -pte_bad_query && !d->have_ev && fetch_event(d) == 0)
		return STEP_OK;
	decode_failed(d, PTC_GAP_DECODE, "%s after 0x%" PRIx64 " in %s, where no branch follows",
		      why(d, st, wbuf, sizeof(wbuf)), d->ip, img);
	return STEP_OK;
}

/* Walk to the next branch and take it. */
static int step(struct ptc_pt_decoder *d, uint64_t until)
{
	const struct ptc_tbranch *b;
	struct ptc_pt_thread *t = d->thr;
	uint64_t bip, tgt = 0, evip;
	uint32_t insns, call = PTC_NO_BRANCH;
	int st, taken = 1, err;

	if (!d->have_idx) {
		size_t depth = t->depth;
		uint64_t ip = d->ip;
		int err2 = locate(d, ip);

		if (err2 < 0 && !d->have_reg) {
			/* Code in no known image (the kernel, a missing
			 * library): skip its packets until a TIP lands in
			 * known code.  Its calls and returns balance, so the
			 * thread's call stack stays. */
			t->depth = depth;
			d->skipping = 1;
			return STEP_OK;
		}
		if (err2 < 0) {
			uint32_t n;

			if (straight_insns(d, ip, UINT64_MAX, &n) == 0)
				return tail_step(d, until);
			open_gap(d, err2 == -ptc_err_not_found ? PTC_GAP_NO_IMAGE : PTC_GAP_DECODE, cur_offset(d),
				 "ip 0x%" PRIx64 " in %s: %s", ip, ptc_image_name(d->reg.img),
				 err2 == -ptc_err_not_found ? "not in the image's code"
							    : "not an instruction boundary");
			decode_failed(d, PTC_GAP_DECODE, "unused");
			return STEP_OK;
		}
	}
	b = &d->reg.tb[d->idx];
	bip = (uint64_t)((int64_t)b->ip + d->reg.bias);
	insns = d->insns;

	if (d->have_ev && event_bound_ip(&d->ev, &evip) && evip >= d->ip && evip <= bip) {
		uint32_t idx2, n2;

		err = ptc_image_next_branch(d->reg.img, (uint64_t)((int64_t)evip - d->reg.bias), &idx2, &n2);
		if (err < 0 || idx2 != d->idx || n2 > insns) {
			decode_failed(d, PTC_GAP_DECODE, "event at 0x%" PRIx64 " is not an instruction on the path",
				      evip);
			return STEP_OK;
		}
		return bind_event(d, evip, insns - n2, until);
	}

	/* A synchronous disable (TIP.PGD) binds to the next branch that
	 * leaves the traced code: far, indirect, return; a conditional branch
	 * (no TNT bit can come before the pending TIP.PGD: its packet takes
	 * the bit's place); a direct jump or call whose target is the
	 * TIP.PGD's IP (an address filter's edge). */
	if (d->have_ev && d->ev.type == ptev_disabled) {
		uint64_t dip = d->ev.ip_suppressed ? 0 : d->ev.variant.disabled.ip;
		int kind = b->kind;

		taken = 1;
		switch (kind) {
		case PTC_BR_COND:
			tgt = (uint64_t)((int64_t)b->target + d->reg.bias);
			if (!dip || (dip != tgt && dip != bip + b->length)) {
				/* the trace contradicts the code: lost up to where
				 * tracing resumes (the packets are in order) */
				d->have_ev = 0;
				update_time(d, &d->ev);
				open_gap(d, PTC_GAP_DECODE, cur_offset(d),
					 "tracing stopped at the cond at 0x%" PRIx64 " with %s 0x%" PRIx64
					 ", neither its target nor its fall-through",
					 bip, dip ? "the TIP.PGD at" : "no IP: the TIP.PGD of", dip ? dip : bip);
				return stop_if_late(d, until);
			}
			taken = dip == tgt;
			break;
		case PTC_BR_JMP:
		case PTC_BR_CALL:
			tgt = (uint64_t)((int64_t)b->target + d->reg.bias);
			if (!dip || dip != tgt)
				goto walk_on;	/* the TIP.PGD is a later branch's */
			break;
		case PTC_BR_FAR:
			tgt = ptc_pt_far_stop_target(dip);
			break;
		default:
			tgt = dip;
			if (d->cap && kind == PTC_BR_RET && tgt)
				/* a return that pops nothing, which the replay
				 * cannot tell from one that does */
				ahead_unusable(d->cap, "a return that disables tracing");
			break;
		}
		d->have_ev = 0;
		update_time(d, &d->ev);
		if ((kind == PTC_BR_CALL_IND || (kind == PTC_BR_CALL && call_pushes(b))) &&
		    push_ret(t, b, d->idx, bip) < 0)
			return -ptc_err_nomem;
		err = emit(d, bip, tgt, insns, kind, taken, b->length);
		if (err < 0)
			return err;
		d->enabled = 0;
		d->have_idx = 0;
		d->ip = kind == PTC_BR_COND ? dip : tgt;
		tip_taken(d);
		return stop_if_late(d, until);
	}
walk_on:

	switch (b->kind) {
	case PTC_BR_COND:
		st = q_cond_branch(d, &taken);
		if (st < 0)
			return query_failed(d, st, bip, b->kind);
		d->status = st;
		err = emit(d, bip, (uint64_t)((int64_t)b->target + d->reg.bias), insns, PTC_BR_COND, taken, b->length);
		if (taken)
			go_direct(d, b);
		else
			go_next(d, b, bip);
		break;
	case PTC_BR_CALL:
	case PTC_BR_JMP:
		if (note_direct(d, bip) < 0)
			return STEP_OK;
		if (b->kind == PTC_BR_CALL && call_pushes(b) && push_ret(t, b, d->idx, bip) < 0)
			return -ptc_err_nomem;
		err = emit(d, bip, (uint64_t)((int64_t)b->target + d->reg.bias), insns, b->kind, 1, b->length);
		go_direct(d, b);
		break;
	case PTC_BR_JMP_IND:
	case PTC_BR_CALL_IND:
		st = q_indirect_branch(d, &tgt);
		if (st < 0)
			return query_failed(d, st, bip, b->kind);
		d->status = st;
		if (st & pts_ip_suppressed) {
			decode_failed(d, PTC_GAP_DECODE, "suppressed target at the %s at 0x%" PRIx64,
				      ptc_branch_kind_name(b->kind), bip);
			return STEP_OK;
		}
		if (b->kind == PTC_BR_CALL_IND && push_ret(t, b, d->idx, bip) < 0)
			return -ptc_err_nomem;
		err = emit(d, bip, tgt, insns, b->kind, 1, b->length);
		d->ip = tgt;
		d->have_idx = 0;
		tip_taken(d);
		update_time(d, NULL);
		break;
	case PTC_BR_RET:
		st = q_cond_branch(d, &taken);
		if (st >= 0) {
			d->status = st;
			if (!taken) {
				decode_failed(d, PTC_GAP_DECODE, "not-taken bit for the return at 0x%" PRIx64, bip);
				return STEP_OK;
			}
			if (!t->depth) {
				decode_failed(d, PTC_GAP_DECODE,
					      "compressed return at 0x%" PRIx64 " with an empty call stack", bip);
				return STEP_OK;
			}
			tgt = t->stack[--t->depth];
			call = t->stack_call[t->depth];
		} else if (st == -pte_bad_query) {
			st = q_indirect_branch(d, &tgt);
			if (st < 0)
				return query_failed(d, st, bip, b->kind);
			d->status = st;
			if (st & pts_ip_suppressed) {
				decode_failed(d, PTC_GAP_DECODE, "suppressed target at the return at 0x%" PRIx64, bip);
				return STEP_OK;
			}
			/* An uncompressed return still ends its call (and
			 * may use its hint). */
			if (t->depth && t->stack[t->depth - 1] == tgt)
				call = t->stack_call[--t->depth];
			update_time(d, NULL);
			if (d->mode_next) {
				/* (a far return would be a far branch: the
				 * table is searched in the new mode) */
				tip_taken(d);
				call = PTC_NO_BRANCH;
			}
		} else {
			return query_failed(d, st, bip, b->kind);
		}
		err = emit(d, bip, tgt, insns, PTC_BR_RET, 1, b->length);
		d->ip = tgt;
		d->have_idx = 0;
		if (ret_position(&d->reg, tgt, call, &d->idx, &d->insns))
			d->have_idx = 1;
		break;
	case PTC_BR_FAR:
	default:
		/* syscall and friends without a disable event: with kernel
		 * tracing the TIP says where it went. */
		st = q_indirect_branch(d, &tgt);
		if (st < 0)
			return query_failed(d, st, bip, PTC_BR_FAR);
		d->status = st;
		if (st & pts_ip_suppressed)
			tgt = 0;
		err = emit(d, bip, tgt, insns, PTC_BR_FAR, 1, b->length);
		if (err < 0)
			return err;
		if (!tgt) {
			d->enabled = 0;
			d->have_idx = 0;
			tip_taken(d);
			return stop_if_late(d, until);
		}
		d->ip = tgt;
		d->have_idx = 0;
		tip_taken(d);
		update_time(d, NULL);
		break;
	}
	return err < 0 ? err : STEP_OK;
}

static int start_sub(struct ptc_pt_decoder *d, size_t i);

/* In code of no known image: drop its TNT bits and TIPs until one leads
 * back into known code (or an event says where tracing resumes). */
static int skip_unknown(struct ptc_pt_decoder *d, uint64_t until)
{
	uint64_t ip;
	int st, taken;

	for (;;) {
		if (d->have_ev && ptc_pt_status_update(&d->ev, 1) == PTC_PT_STATUS_AGREES) {
			/* a PSB+ on the way: tracing is still on */
			d->have_ev = 0;
			update_time(d, &d->ev);
			continue;
		}
		if (d->have_ev) {
			switch (d->ev.type) {
			case ptev_enabled:
			case ptev_overflow:
				d->skipping = 0;
				return STEP_OK;	/* run() applies it */
			case ptev_disabled:
			case ptev_async_disabled:
				d->have_ev = 0;
				d->skipping = 0;
				d->enabled = 0;
				d->have_idx = 0;
				update_time(d, &d->ev);
				return stop_if_late(d, until);
			case ptev_async_branch:
				d->have_ev = 0;
				if (d->ev.ip_suppressed)
					continue;
				ip = d->ev.variant.async_branch.to;
				goto found;
			case ptev_exec_mode:
				/* where the next TIP lands (skipping: at once) */
				d->have_ev = 0;
				update_time(d, &d->ev);
				exec_mode(d, &d->ev);
				continue;
			default:
				d->have_ev = 0;
				update_time(d, &d->ev);
				continue;
			}
		}
		if (d->status & pts_event_pending) {
			if (fetch_event(d) < 0)
				break;
			continue;
		}
		st = q_indirect_branch(d, &ip);
		if (st >= 0) {
			d->status = st;
			if (st & pts_ip_suppressed)
				continue;
			goto found;
		}
		if (st == -pte_bad_query) {
			st = q_cond_branch(d, &taken);
			if (st >= 0) {
				d->status = st;
				continue;
			}
			if (st == -pte_bad_query && fetch_event(d) == 0)
				continue;
		}
		if (st == -pte_eos) {
			d->piece_done = 1;
			return STEP_DONE;
		}
		break;
	}
	d->skipping = 0;
	decode_failed(d, PTC_GAP_DECODE, "bad packets in code of no known image");
	return STEP_OK;
found:
	update_time(d, NULL);
	/* quietly: the gap is open already */
	if (peek_region(d, ip) < 0)
		return STEP_OK;	/* still unknown: go on skipping */
	d->skipping = 0;
	d->ip = ip;
	d->have_idx = 0;
	d->nchain = d->ndirect = 0;
	return close_gap(d, cur_offset(d), ip);
}

/* The inner loop: conditional branches, direct jumps and calls, returns
 * and indirect branches whose target was seen before, as long as nothing
 * else (an event, an unknown target, a region change, a failed query)
 * needs attention; everything else goes through step(), which does the
 * same one branch at a time with every check.
 *
 * The walker's position and the output slot are kept in locals (the
 * compiler cannot keep d's fields in registers across the calls into
 * libipt) and written back by WALK_SAVE() whenever the loop hands over.
 * Records are filled in place in the thread's batch, so it must be a known
 * thread that takes branches directly: no held (--check-partial) branches,
 * no pending instructions or gap flag for its first record.
 *
 * Where a packet becomes a branch event: q_cond_branch() (a TNT bit:
 * a conditional or a compressed return) and q_indirect_branch() (a
 * TIP) below, then WALK_EMIT(); and, for the bits of a TNT packet that
 * ptconv's query decoder holds, the memo of TNT paths (tnt_path.h): a run
 * of branches those bits decide, copied into the batch and marked there
 * as a path for the sinks. */
#define WALK_SAVE()							\
	do {								\
		d->ip = ip;						\
		d->idx = idx;						\
		d->insns = insns;					\
		d->status = st;						\
		t->nbatch = (size_t)(out - t->batch);			\
	} while (0)

/* One record, field by field in its batch slot (a struct assembled on the
 * stack and copied with 16-byte moves stalls on store forwarding). */
#define WALK_EMIT(bip_, tgt_, kind_, taken_)				\
	do {								\
		out->ip = (bip_);					\
		out->target = (tgt_);					\
		out->time = d->time;					\
		out->insns = insns;					\
		out->kind = (uint8_t)(kind_);				\
		out->taken = (uint8_t)(taken_);				\
		out->length = b->length;				\
		out->flags = 0;						\
		d->st.branches++;					\
		if (++out == t->batch + PTC_PT_BATCH) {			\
			WALK_SAVE();					\
			err = ptc_pt_thread_flush_settled(t);		\
			if (err < 0)					\
				return err;				\
			out = t->batch + t->nbatch;			\
		}							\
	} while (0)

/* A query at the branch at bip failed.  A bad query (the packet is not
 * the kind asked for) consumed nothing: step() asks again and sorts it
 * out.  Any other failure is reported here, as step() would have: asking
 * again may get an answer (libipt's query decoder keeps a TNT packet whose
 * read-ahead failed and gives its bits next time), so the walker and
 * step() would go on differently from the same failure. */
#define WALK_QUERY_FAILED(st_, kind_)					\
	do {								\
		if ((st_) == -pte_bad_query)				\
			goto slow;					\
		WALK_SAVE();						\
		return query_failed(d, (st_), bip, (kind_));		\
	} while (0)

/* The first record of path p in a region mapped with bias: what a sparse
 * batch holds of the path (struct ptc_path), with the time, the
 * instructions before the path and the flags.  Field by field, as emit()
 * writes a record. */
static inline void path_first(struct ptc_branch *out, const struct ptc_tnt_path *p, int64_t bias, uint64_t time,
			      uint32_t insns, uint8_t flags)
{
	const struct ptc_path_step *s = &p->step[0];

	out->ip = (uint64_t)((int64_t)s->ip + bias);
	out->target = (uint64_t)((int64_t)s->target + bias);
	out->time = time;
	out->insns = insns;
	out->kind = s->kind;
	out->taken = s->taken;
	out->length = s->length;
	out->flags = flags;
}

static __attribute__((noinline)) int walk(struct ptc_pt_decoder *d, uint64_t until)
{
	struct ptc_pt_thread *t = d->thr;
	const struct ptc_tbranch *tb = d->reg.tb, *b;
	const int64_t bias = d->reg.bias;
	struct ptc_branch *out;
	struct icache *e;
	uint64_t ip, bip, tgt;
	uint32_t idx, insns;
	int st, st2, taken, err, kind;
	int fill_status = 0;	/* what the memo's refill read ahead (below) */
	const int stop = pts_event_pending | (d->continued ? pts_eos : 0);
	/* the memo while it takes paths (a full one costs more than it saves) */
	struct ptc_path_memo *memo = d->fast && d->memo && ptc_path_memo_open(d->memo) ? d->memo : NULL;

	if (!d->have_idx || d->have_ev)
		return step(d, until);
	if (d->status & pts_event_pending)
		return STEP_OK;	/* run() fetches the event first */
	if (d->spec_mode || t->pending_insns || t->after_gap || t == &d->orphan)
		return step(d, until);

	/* Few values live across the calls into libipt: the rest is read
	 * from d when needed (an L1 hit), not spilled and reloaded. */
	ip = d->ip;
	idx = d->idx;
	insns = d->insns;
	st = d->status;
	out = &t->batch[t->nbatch];

	for (;;) {
		if (st & stop) {
			WALK_SAVE();
			return STEP_OK;
		}
		b = &tb[idx];

		/* half the branches are conditional: test for them first
		 * rather than through a jump table */
		kind = b->kind;
		if (kind != PTC_BR_COND)
			goto other;
		if (memo && !d->fq.tnt_index) {
			/* The refill the query would make, with its outcome:
			 * a failure is reported as the query's, not asked again
			 * (the packet may have been taken: the bits would be
			 * there the second time); an event read ahead behind
			 * the packet comes with its first bit, and is taken
			 * before the others.  (fuzz_tnt_path found the memo
			 * taking four more bits than the walker without it.) */
			bip = (uint64_t)((int64_t)b->ip + bias);
			st2 = ptc_fq_tnt_fill(&d->fq);
			if (st2 < 0)
				WALK_QUERY_FAILED(st2, PTC_BR_COND);
			fill_status = ptc_fq_status(&d->fq) & stop;
			if (fill_status)
				goto cond_step;
		}
		if (memo && d->fq.tnt_index > 1) {
			/* Two bits or more of the TNT packet left: the
			 * branches they decide, from the memo. */
			const uint64_t ti = d->fq.tnt_index;
			const unsigned k = (unsigned)__builtin_ctzll(ti) + 1;
			const unsigned nb = k < PTC_PATH_BITS ? k : PTC_PATH_BITS;
			struct ptc_tnt_path *p =
				ptc_path_memo_get(memo, tb, d->reg.ntb, idx, nb,
						  (uint32_t)(d->fq.tnt >> (k - nb)) & ((1u << nb) - 1));

			if (!p)
				memo = NULL;	/* full: one branch at a time from now on */

			if (p && p->nsteps) {
				const struct ptc_path_step *s = p->step, *send = p->step + p->nsteps;

				/* The path goes into the batch as its first
				 * record, marked (a sparse batch: struct
				 * ptc_path); sinks make the others if they
				 * need them. */
				t->marks[t->nmarks].at = (uint32_t)(out - t->batch);
				t->marks[t->nmarks++].path = &p->path;
				path_first(out, p, bias, d->time, insns, 0);
				if (++out == t->batch + PTC_PT_BATCH) {
					/* (WALK_EMIT() expects room for one more) */
					WALK_SAVE();
					if ((err = ptc_pt_thread_flush_settled(t)) < 0)
						return err;
					out = t->batch + t->nbatch;
				}
				if (p->stack && !t->no_hold && t->depth + p->max_depth <= t->stack_cap) {
					/* what the path leaves on the thread's call
					 * stack: the return addresses of its calls
					 * that it does not return from (the room is
					 * there: no push would grow the stack) */
					uint32_t km;

					for (km = p->keep_mask; km; km &= km - 1) {
						s = &p->step[__builtin_ctz(km)];
						t->stack[t->depth] = (uint64_t)((int64_t)s->ip + bias) + s->length;
						t->stack_call[t->depth++] = s->idx;
					}
				} else if (p->stack) {
					/* the calls' return addresses, and the returns
					 * to them, on the thread's call stack, one by
					 * one (a window's stand-in notes each call's
					 * entry: shadow_hint()) */
					for (s = p->step; s < send; s++) {
						if (s->kind == PTC_BR_CALL) {
							if (call_pushes(&tb[s->idx]) &&
							    push_ret(t, &tb[s->idx], s->idx,
								     (uint64_t)((int64_t)s->ip + bias)) < 0) {
								WALK_SAVE();
								return -ptc_err_nomem;
							}
						} else if (s->kind == PTC_BR_RET) {
							t->depth--;	/* the path's own call */
						}
					}
				}
				d->st.branches += p->nsteps;
				d->fq.tnt_index = ti >> p->tnt_bits;
				if (!d->fq.tnt_index)
					st = ptc_fq_status(&d->fq);	/* it took the last bit */
				d->nchain = 0;
				d->ndirect = 0;
				idx = p->end_idx;
				insns = p->end_insns;
				ip = (uint64_t)((int64_t)p->end_ip + bias);
				continue;
			}
		}
cond_step:
		{
			uint32_t m, tn, fi, ok;
			uint64_t m64;

			/* Both successors' entries are needed next: the taken
			 * one is far away in the table; fetch it while the
			 * query runs. */
			if (b->target_next != PTC_NO_BRANCH)
				__builtin_prefetch(&tb[b->target_next]);
			bip = (uint64_t)((int64_t)b->ip + bias);
			st2 = q_cond_branch(d, &taken);
			if (st2 < 0)
				WALK_QUERY_FAILED(st2, PTC_BR_COND);
			st = st2 | fill_status;
			fill_status = 0;
			tgt = (uint64_t)((int64_t)b->target + bias);
			WALK_EMIT(bip, tgt, PTC_BR_COND, taken);
			d->nchain = 0;
			d->ndirect = 0;
			/* The successor by masks, not by a jump on taken: the
			 * host predicts the traced program's conditionals
			 * hardly better than chance (and the compiler turns
			 * conditional expressions into jumps). */
			m = -(uint32_t)(taken != 0);
			m64 = -(uint64_t)(taken != 0);
			tn = b->target_next;
			fi = b->fall_insns;
			ok = ((uint32_t)(tn != PTC_NO_BRANCH) & m) | ((uint32_t)(fi && idx + 1 < d->reg.ntb) & ~m);
			ip = (tgt & m64) | ((bip + b->length) & ~m64);
			insns = (b->target_insns & m) | (fi & ~m);
			idx = (tn & m) | ((idx + 1) & ~m);
			if (!ok)
				goto lost;
			continue;
		}
other:
		bip = (uint64_t)((int64_t)b->ip + bias);
		switch (kind) {
		case PTC_BR_JMP:
		case PTC_BR_CALL:
			/* note_direct() without its failure: step() reports an
			 * endless loop */
			if (d->ndirect >= DIRECT_MAX)
				goto slow;
			if (d->nchain < CHAIN) {
				d->chain_s[d->nchain] = ip;
				d->chain_e[d->nchain] = bip;
				d->nchain++;
			}
			d->ndirect++;
			if (kind == PTC_BR_CALL && call_pushes(b) && push_ret(t, b, idx, bip) < 0) {
				WALK_SAVE();
				return -ptc_err_nomem;
			}
			tgt = (uint64_t)((int64_t)b->target + bias);
			WALK_EMIT(bip, tgt, kind, 1);
			ip = tgt;
			if (b->target_next == PTC_NO_BRANCH)
				goto lost;
			idx = b->target_next;
			insns = b->target_insns;
			continue;
		case PTC_BR_RET:
			/* A compressed return (a taken bit) goes where its call
			 * said, and usually right back to the call's table; an
			 * uncompressed one (a TIP: bad query here) and every
			 * failure are step()'s. */
			if (!t->depth)
				goto slow;
			st2 = q_cond_branch(d, &taken);
			if (st2 < 0)
				WALK_QUERY_FAILED(st2, PTC_BR_RET);
			st = st2;
			if (!taken) {
				WALK_SAVE();
				decode_failed(d, PTC_GAP_DECODE, "not-taken bit for the return at 0x%" PRIx64, bip);
				return STEP_OK;
			}
			ip = t->stack[--t->depth];
			WALK_EMIT(bip, ip, PTC_BR_RET, 1);
			d->nchain = 0;
			d->ndirect = 0;
			if (!ret_position(&d->reg, ip, t->stack_call[t->depth], &idx, &insns))
				goto search;
			continue;
		case PTC_BR_JMP_IND:
		case PTC_BR_CALL_IND:
			st2 = q_indirect_branch(d, &tgt);
			if (st2 < 0)
				WALK_QUERY_FAILED(st2, kind);
			st = st2;
			if (st & pts_ip_suppressed) {
				WALK_SAVE();
				decode_failed(d, PTC_GAP_DECODE, "suppressed target at the %s at 0x%" PRIx64,
					      ptc_branch_kind_name(kind), bip);
				return STEP_OK;
			}
			if (kind == PTC_BR_CALL_IND && push_ret(t, b, idx, bip) < 0) {
				WALK_SAVE();
				return -ptc_err_nomem;
			}
			WALK_EMIT(bip, tgt, kind, 1);
			d->nchain = 0;
			d->ndirect = 0;
			ip = tgt;
			update_time(d, NULL);
			/* locate()'s cache, for a target in the same region */
			if (tgt < d->reg.start || tgt >= d->reg.end)
				goto search;
			e = &d->icache[(tgt ^ (tgt >> 12)) & (ICACHE - 1)];
			if (e->ip != tgt || e->img != d->reg.img || e->bias != bias)
				goto search;
			idx = e->idx;
			insns = e->insns;
			continue;
		default:
			goto slow;
		}
	}
search:
	/* After a return or indirect branch: run() takes pending events
	 * before step() searches the target (as when step() took it). */
	d->have_idx = 0;
	WALK_SAVE();
	return STEP_OK;
lost:
	/* the next position needs a search */
	d->have_idx = 0;
slow:
	WALK_SAVE();
	return step(d, until);
}

#undef WALK_QUERY_FAILED
#undef WALK_EMIT
#undef WALK_SAVE

/* The piece is over: note the IP the walker holds without having looked
 * it up, when no region it knows covers it (struct ptc_pt_decoder). */
static void note_held_ip(struct ptc_pt_decoder *d)
{
	if (!have_query(d) || d->held_ip_piece == d->piece_off + 1)
		return;
	d->held_ip_piece = d->piece_off + 1;
	d->held_ip_named = UINT64_MAX;
	if (!d->enabled || d->have_idx || d->pg.active || known_region(d, d->ip))
		return;
	d->held_ip = d->ip;
	d->held_ip_named = ptc_pt_ip_named_end(&d->cfg, d->base, d->last_sync_off, cur_offset(d) - d->base, d->ip);
}

int ptc_pt_decoder_run(struct ptc_pt_decoder *d, uint64_t until)
{
	char wbuf[160];
	int err;

	for (;;) {
		if (d->piece_done && d->cursub + 1 < d->nsubs) {
			/* next PSB segment of a piece with suspect ranges */
			err = start_sub(d, d->cursub + 1);
			if (err < 0)
				return err;
			continue;
		}
		if (!have_query(d) || d->piece_done) {
			end_spec(d);
			note_held_ip(d);
			return 0;
		}
		if (!d->synced) {
			err = resync(d);
			if (err == -pte_eos) {
				d->piece_done = 1;
				continue;
			}
			if (err < 0)
				return err;
			continue;
		}
		if (d->have_ev) {
			uint64_t bip;
			if (d->enabled && !d->ev.status_update &&
			    (event_bound_ip(&d->ev, &bip) || d->ev.type == ptev_disabled)) {
				/* waits for the walker */
			} else {
				int was = d->enabled;
				err = apply_event(d, until);
				if (err < 0)
					return err;
				if (was && !d->enabled && d->cap)
					ahead_stop(d);
				if (was && !d->enabled && d->time >= until)
					return 1;
				continue;
			}
		} else if (d->status & pts_event_pending) {
			err = fetch_event(d);
			if (err < 0)
				decode_failed(d, PTC_GAP_DECODE, "event: %s", why(d, err, wbuf, sizeof(wbuf)));
			continue;
		} else if (!d->enabled) {
			if (d->status & pts_eos) {
				d->piece_done = 1;
				continue;
			}
			err = fetch_event(d);
			if (err == -pte_eos) {
				d->piece_done = 1;
				continue;
			}
			if (err < 0)
				decode_failed(d, PTC_GAP_DECODE, "trace packets while tracing is off: %s",
					      why(d, err, wbuf, sizeof(wbuf)));
			continue;
		}
		if (d->continued && (d->status & pts_eos) && !d->skipping) {
			/* the rest of the piece is the next one's PSB+ */
			d->piece_done = 1;
			continue;
		}
		/* (a MODE.Exec waiting for its TIP: one branch at a time, so
		 * that the TIP's target is searched in the new mode) */
		if (__builtin_expect(d->skipping | d->mode_next, 0))
			err = d->skipping ? skip_unknown(d, until) : step(d, until);
		else
			err = walk(d, until);
		if (err < 0)
			return err;
		if (err == STEP_STOP)
			return 1;
		if (err == STEP_DONE)
			continue;	/* next sub-piece, or the end */
		if (d->thr->sink_error)
			return d->thr->sink_error;
	}
}

/* ---- life cycle ---- */

static struct ptc_pt_thread *no_thread(void *ctx, int cpu, uint32_t qtid, uint64_t time)
{
	return NULL;
}

/* The walker's state before any trace, on the queue of cpu / queue_tid
 * (d zeroed but for its parameters, environment and caches). */
static void start_state(struct ptc_pt_decoder *d, int cpu, uint32_t queue_tid)
{
	d->cpu = cpu;
	d->qtid = queue_tid;
	ptc_pt_thread_init(&d->orphan, UINT32_MAX, UINT32_MAX, NULL);
	d->thr = &d->orphan;
	d->rc_pid = UINT32_MAX;
	d->mode = 64;
	ptc_pt_losses_init(&d->ls, &d->by, &d->env, cpu, queue_tid, &d->st, &d->orphan);
}

int ptc_pt_decoder_new(struct ptc_pt_decoder **out, const struct ptc_pt_params *p,
		       const struct ptc_pt_env *env, int cpu, uint32_t queue_tid)
{
	struct ptc_pt_decoder *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ptc_err_nomem;
	d->p = *p;
	d->env = *env;
	d->held_ip_named = UINT64_MAX;
	if (!d->env.thread_at)
		d->env.thread_at = no_thread;
	d->icache = calloc(ICACHE, sizeof(*d->icache));
	if (!d->icache) {
		free(d);
		return -ptc_err_nomem;
	}
	if (!p->no_paths && p->memo) {
		d->memo = p->memo;
	} else if (!p->no_paths) {
		if (ptc_path_memo_new(&d->memo, p->memo_bytes) < 0) {
			free(d->icache);
			free(d);
			return -ptc_err_nomem;
		}
		d->own_memo = 1;
	}
	start_state(d, cpu, queue_tid);

	pt_config_init(&d->cfg);
	if (p->cpu_family) {
		d->cfg.cpu.vendor = pcv_intel;
		d->cfg.cpu.family = (uint16_t)p->cpu_family;
		d->cfg.cpu.model = (uint8_t)p->cpu_model;
		d->cfg.cpu.stepping = (uint8_t)p->cpu_stepping;
		/* libipt 2.0 does not know recent models: no errata then. */
		if (pt_cpu_errata(&d->cfg.errata, &d->cfg.cpu) < 0)
			memset(&d->cfg.errata, 0, sizeof(d->cfg.errata));
	}
	d->cfg.mtc_freq = p->mtc_freq;
	d->cfg.nom_freq = p->nom_freq;
	d->cfg.cpuid_0x15_eax = p->tsc_ctc_d;
	d->cfg.cpuid_0x15_ebx = p->tsc_ctc_n;
	*out = d;
	return 0;
}

void ptc_pt_decoder_free(struct ptc_pt_decoder *d)
{
	if (!d)
		return;
	if (d->own_memo && d->thr)
		ptc_pt_thread_drop_paths(d->thr);
	drop_query(d);
	ptc_pt_thread_fini(&d->orphan);
	free(d->subs);
	free(d->spec);
	free(d->icache);
	if (d->own_memo)
		ptc_path_memo_free(d->memo);
	free(d);
}

void ptc_pt_decoder_set_memo(struct ptc_pt_decoder *d, struct ptc_path_memo *memo)
{
	if (d->p.no_paths)
		return;
	if (d->own_memo) {
		if (d->thr)
			ptc_pt_thread_drop_paths(d->thr);
		ptc_path_memo_free(d->memo);
	}
	d->memo = memo;
	d->own_memo = 0;
}

/* Decode sub-piece i of the current piece. */
static int start_sub(struct ptc_pt_decoder *d, size_t i)
{
	const struct sub *sb = &d->subs[i];

	drop_query(d);
	d->continuing = i > 0;
	d->cursub = i;
	d->spec_mode = sb->spec;
	if (sb->spec && !d->nspec)
		d->spec_start = d->piece_off + sb->s;
	if (sb->spec && (i == 0 || !d->subs[i - 1].spec)) {
		d->spec_run_start = d->piece_off + sb->s;
		d->spec_run_failed = 0;
	}
	d->synced = 0;
	d->min_sync = 0;
	d->piece_done = 0;
	d->status = 0;
	d->base = d->piece_off + sb->s;
	d->size = (size_t)(sb->e - sb->s);
	if (!d->size) {
		d->piece_done = 1;
		return 0;
	}
	d->cfg.begin = (uint8_t *)d->piece + sb->s;
	d->cfg.end = (uint8_t *)d->piece + sb->e;
	return new_query(d);
}

int ptc_pt_decoder_set_buffer(struct ptc_pt_decoder *d, const uint8_t *buf, size_t size,
			      uint64_t offset, uint64_t lost, int gap_cause, const char *why)
{
	drop_query(d);
	end_spec(d);
	d->skipping = 0;
	d->held_ip_named = UINT64_MAX;	/* (a walk that starts afresh holds no IP) */
	if (lost && !d->pg.active) {
		/* The lost bytes are the stream offsets [offset - lost, offset):
		 * the gap starts there, and closing it counts everything up to
		 * where decoding resumes (an open gap covers them already). */
		open_gap(d, gap_cause, offset, "%s", why ? why : "trace data missing");
		d->pg.gap.aux_offset = offset - (lost != UINT64_MAX ? lost : 0);
		d->pg.gap.lost_bytes = 0;
	}
	d->enabled = 0;
	d->have_idx = 0;
	d->have_ev = 0;
	d->piece = buf;
	d->piece_off = offset;
	d->piece_size = size;
	d->st.bytes += size;
	d->nsubs = 1;
	if (!d->subs && !(d->subs = malloc(sizeof(*d->subs))))
		return -ptc_err_nomem;
	d->subs[0].s = 0;
	d->subs[0].e = size;
	d->subs[0].spec = 0;
	return start_sub(d, 0);
}

/* The next bytes of the same stream, right after the current piece and
 * starting with a PSB: the walk goes on (checked against that PSB+). */
int ptc_pt_decoder_continue(struct ptc_pt_decoder *d, const uint8_t *buf, size_t size, uint64_t offset)
{
	int err;

	drop_query(d);
	d->piece = buf;
	d->piece_off = offset;
	d->piece_size = size;
	d->st.bytes += size;
	d->nsubs = 1;
	d->subs[0].s = 0;
	d->subs[0].e = size;
	d->subs[0].spec = 0;
	err = start_sub(d, 0);
	d->continuing = 1;
	return err;
}

/* Mark [s, e) (stream offsets) of the current piece as holding a hole at an
 * unknown place: it is then decoded one PSB segment at a time, and a
 * segment's branches are kept only when the next PSB agrees with them. */
int ptc_pt_decoder_add_suspect(struct ptc_pt_decoder *d, uint64_t s, uint64_t e)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pk;
	uint64_t *psb = NULL, off;
	size_t npsb = 0, i, n;
	struct sub *subs;

	if (s < d->piece_off)
		s = d->piece_off;
	if (e > d->piece_off + d->piece_size)
		e = d->piece_off + d->piece_size;
	if (s >= e || d->cursub != 0 || !d->piece_size)
		return 0;
	s -= d->piece_off;
	e -= d->piece_off;
	if (d->nsubs == 1) {
		/* split the piece at every PSB */
		cfg = d->cfg;
		cfg.begin = (uint8_t *)d->piece;
		cfg.end = (uint8_t *)d->piece + d->piece_size;
		pk = pt_pkt_alloc_decoder(&cfg);
		if (!pk)
			return -ptc_err_nomem;
		while (pt_pkt_sync_forward(pk) >= 0 && pt_pkt_get_sync_offset(pk, &off) >= 0) {
			uint64_t *np = realloc(psb, (npsb + 1) * sizeof(*psb));
			if (!np) {
				free(psb);
				pt_pkt_free_decoder(pk);
				return -ptc_err_nomem;
			}
			psb = np;
			psb[npsb++] = off;
		}
		pt_pkt_free_decoder(pk);
		subs = realloc(d->subs, (npsb + 1) * sizeof(*subs));
		if (!subs) {
			free(psb);
			return -ptc_err_nomem;
		}
		d->subs = subs;
		n = 0;
		subs[n].s = 0;
		subs[n].e = npsb ? psb[0] : d->piece_size;
		subs[n++].spec = 0;
		for (i = 0; i < npsb; i++) {
			subs[n].s = psb[i];
			subs[n].e = i + 1 < npsb ? psb[i + 1] : d->piece_size;
			subs[n++].spec = 0;
		}
		d->nsubs = n;
		free(psb);
	}
	for (i = 0; i < d->nsubs; i++)
		if (d->subs[i].s < e && s < d->subs[i].e)
			d->subs[i].spec = 1;
	/* restart at the first sub-piece with the new layout */
	{
		int cont = d->continuing, err = start_sub(d, 0);
		d->continuing = cont;
		return err;
	}
}

int ptc_pt_decoder_finish(struct ptc_pt_decoder *d)
{
	int err;

	end_spec(d);
	/* never resumed: everything to the end is lost */
	ptc_pt_loss_to_end(&d->pg, d->piece_off + d->piece_size);
	err = close_gap(d, UINT64_MAX, 0);

	drop_query(d);
	return err;
}

uint64_t ptc_pt_decoder_time(const struct ptc_pt_decoder *d)
{
	return d->time;
}

uint64_t ptc_pt_decoder_settled_time(const struct ptc_pt_decoder *d)
{
	uint64_t t = d->time;

	if (d->pg.active && d->pg.gap.time < t)
		t = d->pg.gap.time;
	if (d->by.pending && d->by.gap.time < t)
		t = d->by.gap.time;
	if (d->nspec && d->spec[0].b.time < t)
		t = d->spec[0].b.time;
	return t;
}

struct ptc_pt_thread *ptc_pt_decoder_thread(const struct ptc_pt_decoder *d)
{
	return d->thr && d->thr != &d->orphan ? d->thr : NULL;
}

const struct ptc_pt_stats *ptc_pt_decoder_stats(const struct ptc_pt_decoder *d)
{
	return &d->st;
}

void ptc_pt_decoder_set_continued(struct ptc_pt_decoder *d, int continued)
{
	d->continued = continued;
}

/* ---- windows decoded ahead (ptdec.h) ---- */

enum { AOP_BRANCHES, AOP_ENABLE, AOP_STOP };

/* A user-mode trace holds up to about 4 branches per byte (direct ones,
 * which take no packet, included); a log starts with room for 6 slots of
 * LOG_SLOT_TYPICAL bytes a byte. */
#define AHEAD_RECORDS_PER_BYTE 6
#define LOG_SLOT_TYPICAL 8

/* One thing the walker did, in order.  BRANCHES: b slots of the log, in
 * its bytes [a, c), went to the thread; ENABLE: tracing (re)started in it
 * (time a, offset b, ip c), the first PSB's own when sync; STOP: a point
 * where tracing stopped at time a (where run() may return 1). */
struct ahead_op {
	uint8_t op, sync;
	uint32_t sh;
	uint64_t a, b, c;
	uint64_t pending;	/* ENABLE: the thread's instructions since its last
				 * branch in the window (ptc_pt_thread_start() decides
				 * on them) */
};

/* A stand-in for a thread met in the window: what the walker does to it
 * goes to the log (its sink).  Its call stack holds the window's calls
 * only: a compressed return needs no older one (the processor empties its
 * own at a PSB), and one that does is a gap, which makes the log
 * unusable. */
struct shadow {
	struct ptc_pt_thread t;
	struct ptc_sink sink;
	struct ptc_pt_ahead *a;
	uint32_t idx;
	struct ptc_pt_thread *real;	/* replay: the thread it stands for */
	int seen;			/* replay: a record of it was replayed */
	/* The table index of each call it pushed, in order: the replay gives
	 * the real thread's call stack the same hints, so that a return
	 * finds where it goes as it would have (ret_position()). */
	uint32_t *hints;
	size_t nhints, caphints;
	size_t hnext;			/* replay: the next one to give */
};

static struct shadow *shadow_of(struct ptc_pt_thread *t);

static int shadow_hint(struct ptc_pt_thread *t, uint32_t i)
{
	struct shadow *s = shadow_of(t);

	if (s->nhints == s->caphints) {
		size_t ncap = s->caphints ? s->caphints * 2 : 256;
		uint32_t *n = realloc(s->hints, ncap * sizeof(*n));

		if (!n) {
			ahead_unusable(s->a, "out of memory");
			return -ptc_err_nomem;
		}
		s->hints = n;
		s->caphints = ncap;
	}
	s->hints[s->nhints++] = i;
	return 0;
}

/* The records a thread's call stack follows: calls and returns. */
#define STACK_KINDS ((1u << PTC_BR_CALL) | (1u << PTC_BR_CALL_IND) | (1u << PTC_BR_RET))
/* Their lanes in struct ptc_path's kinds. */
#define STACK_LANES ((0x1ffull << 9 * PTC_BR_CALL) | (0x1ffull << 9 * PTC_BR_CALL_IND) | \
		     (0x1ffull << 9 * PTC_BR_RET))

/* What a packed log slot is relative to (log_put_record()): the slot
 * before it. */
struct log_state {
	uint64_t ip, time;	/* its first record's ip, and the time */
	uintptr_t path;		/* the last path */
	int64_t bias;		/* its mapping's bias */
};

/* The records a tap took, as the replay would have made them: the
 * thread's counts, where its stream went on, and the call stack (returns
 * that popped older frames than the records' own calls, in order, then
 * the frames they left, each with its push's number for the hint). */
struct tap_frame {
	uint64_t ret;
	uint64_t push;
};

struct tap_sum {
	uint64_t records, insns, not_taken, next_ip;
	uint64_t by_kind[PTC_BR_KIND_NR];
	uint64_t *rets;
	size_t nrets, caprets;
	struct tap_frame *frames;
	size_t depth, capframes, max_depth;
	uint64_t pushes;
};

struct ptc_pt_ahead {
	uint64_t offset;
	size_t size;
	const char *unusable;
	int synced, sync_st;
	uint64_t sync_off, sync_ip;
	int early_event;		/* an IP-bound event before the first branch */
	unsigned mode_said;		/* the first MODE.Exec's mode (0: none) */
	int mode_assumed;		/* code was looked up before it: in 64-bit mode */
	int timed;			/* the window's first time was decoded */
	int untimed;			/* something was logged before it: at the time the
					 * decoder had before the window */
	struct ahead_op *ops;
	size_t nops, capops;
	uint8_t *log;			/* the slots, packed (log_put_record()) */
	size_t nlog, caplog;
	struct log_state put;		/* the packing's state after the last slot */
	struct shadow **sh;
	size_t nsh;
	int end_sh;			/* the thread decoding ended in (-1: none) */
	uint64_t stop_limit;		/* the latest STOP's time + 1 (0: none) */
	struct ptc_pt_decoder *end;	/* the walker's state at the end */
	/* replay */
	int started;
	size_t op, done;		/* next op; slots of it replayed */
	size_t at;			/* the next slot's first byte */
	struct log_state get;		/* the unpacking's state there */
	size_t drop;			/* records of the first thread seen before the window */
	int64_t delta;			/* instructions its first record gains */
	/* the tap (ptc_pt_tap): what it took instead of the log stands after
	 * slot tap_slot of op 1 (the first thread's first branches) */
	struct ptc_pt_tap tap;		/* tap.paths NULL: none */
	int tapping;			/* 0 not yet, 1 taking, 2 no more */
	int tap_given;			/* replay: given to env.tap_splice() */
	size_t tap_slot;
	uint64_t tap_before;		/* records in the slots before it */
	struct tap_sum sum;		/* what the records it took did to the thread */
};

static void ahead_unusable(struct ptc_pt_ahead *a, const char *why)
{
	if (!a->unusable)
		a->unusable = why;
}

static int ahead_push_op(struct ptc_pt_ahead *a, int op, uint32_t sh, uint64_t x, uint64_t y, uint64_t z)
{
	struct ahead_op *o;

	if (a->nops == a->capops) {
		size_t ncap = a->capops ? a->capops * 2 : 256;
		struct ahead_op *n = realloc(a->ops, ncap * sizeof(*n));
		if (!n) {
			ahead_unusable(a, "out of memory");
			return -ptc_err_nomem;
		}
		a->ops = n;
		a->capops = ncap;
	}
	if (a->tapping == 1)
		a->tapping = 2;	/* (what the tap took stands before the op) */
	o = &a->ops[a->nops++];
	memset(o, 0, sizeof(*o));
	o->op = (uint8_t)op;
	o->sh = sh;
	o->a = x;
	o->b = y;
	o->c = z;
	return 0;
}

/* The log's slots, packed.  The driver reads the log from another core's
 * cache, and a window's slots at 32 bytes each (a record) were larger
 * than a core's cache: written to memory and read back, they took about
 * as much of -j 2's time as the walker's decoding of them (xz: 4.5M
 * slots).  Packed, a record takes 12 bytes and a path 7, in fields of
 * fixed size (varints cost the worker more to write than they saved).
 *
 * A slot is a tag byte, an extension byte when the tag says so, and the
 * fields, relative to the slot before:
 *   record: ip - the last slot's first ip (i32), target - ip (i32),
 *           insns (u16), length (u8), [taken (u8)], [flags (u8)]
 *   path:   the path's address - the last path's (i32), insns of its
 *           first record (u16), [flags (u8)], [the mapping's bias]
 *   either: [the time - the last time (varint, zigzag)]
 * A field that does not fit is written whole (8 bytes, u32 for insns),
 * as the extension byte says.  A path is a slot of its own, from which
 * the replay makes its first record (the others: a sparse batch, struct
 * ptc_path). */
enum {
	LOG_T_PATH = 0x80,	/* a path, else a record (kind: the tag's low 3 bits) */
	LOG_T_TIME = 0x40,	/* the time changed */
	LOG_T_EXT = 0x20,	/* an extension byte follows the tag */
	LOG_T_TAKEN1 = 0x10,	/* record: taken 1 */
};
enum {
	LOG_X_IP = 0x01,	/* the ip (a path: its address) in 8 bytes */
	LOG_X_TARGET = 0x02,	/* record: the target in 8 bytes */
	LOG_X_INSNS = 0x04,	/* insns in 4 bytes */
	LOG_X_TAKEN = 0x08,	/* record: taken (neither 0 nor 1) follows */
	LOG_X_FLAGS = 0x10,	/* flags follow */
	LOG_X_BIAS = 0x20,	/* path: the bias changed, 8 bytes follow */
};

/* The bytes of a slot at most. */
#define LOG_SLOT_MAX 48

static inline int log_fits32(int64_t v)
{
	return v == (int64_t)(int32_t)v;
}

/* A field relative to base: delta in 4 bytes, or whole in 8 (big). */
static inline uint8_t *log_put_rel(uint8_t *p, int big, uint64_t whole, int64_t delta)
{
	if (big) {
		ptc_put64(p, whole);
		return p + 8;
	}
	ptc_put32(p, (uint32_t)delta);
	return p + 4;
}

static inline const uint8_t *log_get_rel(const uint8_t *p, int big, uint64_t base, uint64_t *v)
{
	if (big) {
		*v = ptc_le64(p);
		return p + 8;
	}
	*v = base + (uint64_t)(int64_t)(int32_t)ptc_le32(p);
	return p + 4;
}

/* Instructions in 2 bytes, or 4 (big). */
static inline uint8_t *log_put_insns(uint8_t *p, int big, uint32_t insns)
{
	if (big) {
		ptc_put32(p, insns);
		return p + 4;
	}
	ptc_put16(p, (uint16_t)insns);
	return p + 2;
}

static inline const uint8_t *log_get_insns(const uint8_t *p, int big, uint32_t *insns)
{
	*insns = big ? ptc_le32(p) : ptc_le16(p);
	return p + (big ? 4 : 2);
}

/* The time at p, if it changed. */
static inline uint8_t *log_put_time(uint8_t *p, uint8_t *tag, struct log_state *st, uint64_t time)
{
	if (time != st->time) {
		*tag |= LOG_T_TIME;
		p = ptc_put_varint(p, ptc_zigzag(time - st->time));
		st->time = time;
	}
	return p;
}

/* Record b (no path's) at p; returns the end. */
static inline uint8_t *log_put_record(uint8_t *p, struct log_state *st, const struct ptc_branch *b)
{
	/* (b's fields read before any byte is stored: a store through p
	 * could change them, for all the compiler knows) */
	const uint64_t ip = b->ip, target = b->target, time = b->time;
	const uint32_t insns = b->insns;
	const uint8_t kind = b->kind, taken = b->taken, length = b->length, flags = b->flags;
	const int64_t dip = (int64_t)(ip - st->ip), dtg = (int64_t)(target - ip);
	uint8_t *tag = p++, *ext = p, x = 0;

	st->ip = ip;
	/* (the tests at once: a field that does not fit leaves a bit) */
	if (!((((uint64_t)dip + 0x80000000u) >> 32) | (((uint64_t)dtg + 0x80000000u) >> 32) | (insns >> 16) |
	      (taken >> 1) | flags)) {
		/* the usual slot, every field short: stored at fixed places
		 * (log_get() reads it so) */
		*tag = (uint8_t)((kind & 7) | (taken ? LOG_T_TAKEN1 : 0));
		ptc_put32(p, (uint32_t)dip);
		ptc_put32(p + 4, (uint32_t)dtg);
		ptc_put16(p + 8, (uint16_t)insns);
		p[10] = length;
		return log_put_time(p + 11, tag, st, time);
	}
	/* a field that does not fit: the extension byte says which */
	*tag = (uint8_t)((kind & 7) | (taken == 1 ? LOG_T_TAKEN1 : 0) | LOG_T_EXT);
	p++;
	if (!log_fits32(dip))
		x |= LOG_X_IP;
	if (!log_fits32(dtg))
		x |= LOG_X_TARGET;
	if (insns > 0xffff)
		x |= LOG_X_INSNS;
	if (taken > 1)
		x |= LOG_X_TAKEN;
	if (flags)
		x |= LOG_X_FLAGS;
	*ext = x;
	p = log_put_rel(p, x & LOG_X_IP, ip, dip);
	p = log_put_rel(p, x & LOG_X_TARGET, target, dtg);
	p = log_put_insns(p, x & LOG_X_INSNS, insns);
	*p++ = length;
	if (x & LOG_X_TAKEN)
		*p++ = taken;
	if (x & LOG_X_FLAGS)
		*p++ = flags;
	return log_put_time(p, tag, st, time);
}

/* Path p, whose first record is first, at out; returns the end. */
static inline uint8_t *log_put_path(uint8_t *out, struct log_state *st, const struct ptc_tnt_path *p,
				    const struct ptc_branch *first)
{
	/* (first's fields read before any byte is stored: log_put_record()) */
	const uint64_t ip = first->ip, time = first->time;
	const uint32_t insns = first->insns;
	const uint8_t flags = first->flags;
	const int64_t bias = (int64_t)(ip - p->step[0].ip);
	const int64_t dp = (int64_t)((uintptr_t)p - st->path);
	uint8_t *tag = out++, *ext = out, x = 0;

	*tag = LOG_T_PATH;
	if (!log_fits32(dp) || insns > 0xffff || flags || bias != st->bias) {
		out++;
		if (!log_fits32(dp))
			x |= LOG_X_IP;
		if (insns > 0xffff)
			x |= LOG_X_INSNS;
		if (flags)
			x |= LOG_X_FLAGS;
		if (bias != st->bias)
			x |= LOG_X_BIAS;
		*tag |= LOG_T_EXT;
		*ext = x;
	}
	out = log_put_rel(out, x & LOG_X_IP, (uint64_t)(uintptr_t)p, dp);
	out = log_put_insns(out, x & LOG_X_INSNS, insns);
	if (x & LOG_X_FLAGS)
		*out++ = flags;
	if (x & LOG_X_BIAS) {
		ptc_put64(out, (uint64_t)bias);
		out += 8;
		st->bias = bias;
	}
	st->path = (uintptr_t)p;
	st->ip = ip;
	return log_put_time(out, tag, st, time);
}

/* The slot at p into *rec (a path's: its first record) and *path (NULL:
 * a record); returns the next slot.  (The log is this process's own
 * writing: nothing to check.) */
static inline __attribute__((always_inline)) const uint8_t *
log_get(const uint8_t *p, struct log_state *st, struct ptc_branch *rec, const struct ptc_tnt_path **path)
{
	const uint8_t tag = *p++;

	if (!(tag & (LOG_T_PATH | LOG_T_EXT))) {
		/* the usual slot (log_put_record()) */
		rec->ip = st->ip + (uint64_t)(int64_t)(int32_t)ptc_le32(p);
		rec->target = rec->ip + (uint64_t)(int64_t)(int32_t)ptc_le32(p + 4);
		rec->insns = ptc_le16(p + 8);
		rec->length = p[10];
		rec->kind = tag & 7;
		rec->taken = (tag & LOG_T_TAKEN1) != 0;
		rec->flags = 0;
		*path = NULL;
		p += 11;
	} else {
		const uint8_t x = tag & LOG_T_EXT ? *p++ : 0;

		if (tag & LOG_T_PATH) {
			const struct ptc_tnt_path *tp;
			uint64_t at;
			uint32_t insns;
			uint8_t flags;

			p = log_get_rel(p, x & LOG_X_IP, st->path, &at);
			st->path = (uintptr_t)at;
			tp = (const struct ptc_tnt_path *)st->path;
			p = log_get_insns(p, x & LOG_X_INSNS, &insns);
			flags = x & LOG_X_FLAGS ? *p++ : 0;
			if (x & LOG_X_BIAS) {
				st->bias = (int64_t)ptc_le64(p);
				p += 8;
			}
			path_first(rec, tp, st->bias, 0, insns, flags);	/* (the time below) */
			*path = tp;
		} else {
			p = log_get_rel(p, x & LOG_X_IP, st->ip, &rec->ip);
			p = log_get_rel(p, x & LOG_X_TARGET, rec->ip, &rec->target);
			p = log_get_insns(p, x & LOG_X_INSNS, &rec->insns);
			rec->length = *p++;
			rec->kind = tag & 7;
			rec->taken = x & LOG_X_TAKEN ? *p++ : (tag & LOG_T_TAKEN1) != 0;
			rec->flags = x & LOG_X_FLAGS ? *p++ : 0;
			*path = NULL;
		}
	}
	st->ip = rec->ip;
	if (tag & LOG_T_TIME) {
		uint64_t v = 0;
		unsigned sh = 0;
		uint8_t c;

		do {
			c = *p++;
			v |= (uint64_t)(c & 0x7f) << sh;
			sh += 7;
		} while (c & 0x80);
		st->time += ptc_unzigzag(v);
	}
	rec->time = st->time;
	return p;
}

/* Records b[0, n) of shadow s, with the nm paths marked among them (m[k].at
 * relative to b; a sparse batch), to the log. */
static int log_slots(struct shadow *s, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m,
		     size_t nm)
{
	struct ptc_pt_ahead *a = s->a;
	struct ahead_op *last = a->nops ? &a->ops[a->nops - 1] : NULL;
	size_t base = a->nlog, i, k;
	struct log_state put;
	uint8_t *p;

	if (a->nlog + n * LOG_SLOT_MAX > a->caplog) {
		size_t ncap = a->caplog ? a->caplog * 2 : 65536;
		uint8_t *nl;
		while (ncap < a->nlog + n * LOG_SLOT_MAX)
			ncap *= 2;
		nl = realloc(a->log, ncap);
		if (!nl) {
			ahead_unusable(a, "out of memory");
			return -ptc_err_nomem;
		}
		a->log = nl;
		a->caplog = ncap;
	}
	p = a->log + a->nlog;
	/* the records up to the next path, then the path (the walker's
	 * paths are the memo's: struct ptc_path first in struct
	 * ptc_tnt_path); the packing's state in a local, which the bytes
	 * stored cannot change */
	put = a->put;
	for (k = 0, i = 0; k <= nm; k++) {
		const size_t end = k < nm ? m[k].at : n;

		for (; i < end; i++)
			p = log_put_record(p, &put, &b[i]);
		if (k < nm) {
			p = log_put_path(p, &put, (const struct ptc_tnt_path *)m[k].path, &b[i]);
			i++;
		}
	}
	a->put = put;
	a->nlog = (size_t)(p - a->log);
	if (last && last->op == AOP_BRANCHES && last->sh == s->idx && last->c == base) {
		last->b += n;
		last->c = a->nlog;
	} else if (ahead_push_op(a, AOP_BRANCHES, s->idx, base, n, a->nlog) < 0) {
		return -ptc_err_nomem;
	}
	return 0;
}

/* Does call record b push its return address?  (push_ret()'s callers) */
static inline int record_pushes(const struct ptc_branch *b)
{
	return b->kind == PTC_BR_CALL_IND ||
	       (b->kind == PTC_BR_CALL && b->target != b->ip + b->length /* call_pushes() */);
}


/* A call or return the tap took, on its call stack (replay_stack()'s,
 * with the real one below). */
static int tap_stack(struct tap_sum *u, const struct ptc_branch *b)
{
	if (record_pushes(b)) {
		if (ptc_grow((void **)&u->frames, &u->capframes, u->depth + 1, sizeof(*u->frames), 64) < 0)
			return -ptc_err_nomem;
		u->frames[u->depth].ret = b->ip + b->length;
		u->frames[u->depth++].push = u->pushes++;
		if (u->depth > u->max_depth)
			u->max_depth = u->depth;
	} else if (b->kind == PTC_BR_RET) {
		if (u->depth) {
			if (u->frames[u->depth - 1].ret == b->target)
				u->depth--;
		} else {
			if (ptc_grow((void **)&u->rets, &u->caprets, u->nrets + 1, sizeof(*u->rets), 64) < 0)
				return -ptc_err_nomem;
			u->rets[u->nrets++] = b->target;
		}
	}
	return 0;
}

/* What path p, at bias from its image's addresses, does to the tap's
 * stack: tap_stack() of each of its calls and returns, at once (struct
 * ptc_tnt_path: its returns pop only its own calls). */
static int tap_path_stack(struct tap_sum *u, const struct ptc_tnt_path *p, uint64_t bias)
{
	uint32_t pm;
	uint64_t push = u->pushes;

	if (ptc_grow((void **)&u->frames, &u->capframes, u->depth + p->max_depth, sizeof(*u->frames), 64) < 0)
		return -ptc_err_nomem;
	if (u->depth + p->max_depth > u->max_depth)
		u->max_depth = u->depth + p->max_depth;
	/* (its pushes in order, those that stay among them: no popcount in
	 * the baseline instruction set) */
	for (pm = p->push_mask; pm; pm &= pm - 1, push++) {
		const unsigned k = (unsigned)__builtin_ctz(pm);

		if (p->keep_mask >> k & 1) {
			const struct ptc_branch *r = &p->path.rec[k];

			u->frames[u->depth].ret = r->ip + bias + r->length;
			u->frames[u->depth++].push = push;
		}
	}
	u->pushes = push;
	return 0;
}

/* What entries b[0, n) (nm paths among them) that the tap took do: the
 * counts as hand_over() makes them, the calls and returns on the tap's
 * stack, in their order (a path's at once). */
static int tap_add(struct tap_sum *u, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m,
		   size_t nm)
{
	struct batch_counts c = { 0, 0, 0 };
	size_t i = 0, j;

	count_batch(b, n, m, nm, u->by_kind, &c);
	u->records += c.records;
	u->insns += c.insns;
	u->not_taken += c.not_taken;
	for (j = 0; j <= nm; j++) {
		const size_t end = j < nm ? m[j].at : n;

		for (; i < end; i++)
			if (((1u << b[i].kind) & STACK_KINDS) && tap_stack(u, &b[i]) < 0)
				return -ptc_err_nomem;
		if (j < nm) {
			const struct ptc_tnt_path *p = (const struct ptc_tnt_path *)m[j].path;

			if (p->stack && tap_path_stack(u, p, b[i].ip - p->path.rec[0].ip) < 0)
				return -ptc_err_nomem;
			i++;
		}
	}
	if (n)
		u->next_ip = batch_next_ip(b, n, m, nm);
	return 0;
}

/* The records in t's batch (a path counts as its records). */
static uint64_t batched_records(const struct ptc_pt_thread *t)
{
	uint64_t n = t->nbatch;
	size_t k;

	for (k = 0; k < t->nmarks; k++)
		n += t->marks[k].path->records - 1;
	return n;
}

/* The tap begins after last, the first thread's branch that the replay may
 * change (log_branches()), if the log is as the replay wants it then:
 * the PSB's enable, and that thread's branches. */
static void tap_begin(struct ptc_pt_ahead *a, const struct shadow *s, const struct ptc_branch *last)
{
	a->tapping = 2;
	if (a->nops != 2 || a->ops[0].op != AOP_ENABLE || !a->ops[0].sync || a->ops[0].sh != s->idx ||
	    a->ops[1].op != AOP_BRANCHES || a->ops[1].sh != s->idx)
		return;
	a->tap_slot = (size_t)a->ops[1].b;
	if (a->tap.begin(a->tap.ctx, branch_next_ip(last)) == 0)
		a->tapping = 1;
}

/* Records b[0, n) of shadow s (a sparse batch): to the tap while it takes
 * them (ptc_pt_tap), else to the log. */
static int log_branches(void *ctx, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	struct shadow *s = ctx;
	struct ptc_pt_ahead *a = s->a;
	struct ptc_path_mark rest[PTC_PT_BATCH];
	size_t i = 0, j = 0, k;
	int err;

	if (!a->tap.paths || a->tapping == 2)
		return log_slots(s, b, n, m, nm);
	if (a->tapping == 0) {
		int found = 0;

		/* the direct branches the replay may drop, and the next
		 * one, which may gain instructions: to the log */
		while (i < n && !found) {
			const int path = j < nm && m[j].at == i;

			j += (size_t)path;
			found = path || (b[i].kind != PTC_BR_JMP && b[i].kind != PTC_BR_CALL);
			a->tap_before += path ? m[j - 1].path->records : 1;
			i++;
		}
		if ((err = log_slots(s, b, i, m, j)) < 0)
			return err;
		if (!found)
			return 0;
		if (j && m[j - 1].at == i - 1) {
			const struct ptc_branch last = ptc_path_last(m[j - 1].path, &b[i - 1]);

			tap_begin(a, s, &last);
		} else {
			tap_begin(a, s, &b[i - 1]);
		}
		if (i == n)
			return 0;
	}
	for (k = j; k < nm; k++) {
		rest[k - j].at = m[k].at - (uint32_t)i;
		rest[k - j].path = m[k].path;
	}
	if (a->tapping == 1 && a->tap.paths(a->tap.ctx, b + i, n - i, rest, nm - j) == 0) {
		if (tap_add(&a->sum, b + i, n - i, rest, nm - j) < 0) {
			ahead_unusable(a, "out of memory");
			return -ptc_err_nomem;
		}
		return 0;
	}
	a->tapping = 2;
	return log_slots(s, b + i, n - i, rest, nm - j);
}

/* log_branches() with no paths. */
static int shadow_branches(void *ctx, const struct ptc_branch *b, size_t n)
{
	return log_branches(ctx, b, n, NULL, 0);
}

static int shadow_gap(void *ctx, const struct ptc_gap *g)
{
	struct shadow *s = ctx;

	/* a thread's start (not a loss) is the replay's to decide, from the
	 * real thread: ptc_pt_thread_start() at the enable */
	if (g->cause != PTC_GAP_START)
		ahead_unusable(s->a, "a gap");
	return 0;
}

/* Hand the batched records of the current thread to the log, so that
 * what comes next is logged after them. */
static void ahead_flush(struct ptc_pt_decoder *d)
{
	if (d->thr && d->thr != &d->orphan)
		ptc_pt_thread_flush(d->thr);
}

static struct ptc_pt_thread *ahead_thread(struct ptc_pt_decoder *d)
{
	struct ptc_pt_ahead *a = d->cap;
	struct shadow *s, **n;
	uint32_t pid, tid;
	size_t i;

	if (!d->env.who_runs ||
	    d->env.who_runs(d->env.ctx, d->cpu, d->qtid, d->time, &pid, &tid) < 0) {
		ahead_unusable(a, "no thread known");
		return NULL;
	}
	for (i = 0; i < a->nsh; i++)
		if (a->sh[i]->t.tid == tid) {
			a->sh[i]->t.pid = pid;
			return &a->sh[i]->t;
		}
	n = realloc(a->sh, (a->nsh + 1) * sizeof(*n));
	s = calloc(1, sizeof(*s));
	if (n)
		a->sh = n;
	if (!n || !s) {
		free(s);
		ahead_unusable(a, "out of memory");
		return NULL;
	}
	s->a = a;
	s->idx = (uint32_t)a->nsh;
	s->sink.branches = shadow_branches;
	s->sink.paths = log_branches;
	s->sink.gap = shadow_gap;
	s->sink.ctx = s;
	ptc_pt_thread_init(&s->t, pid, tid, &s->sink);
	s->t.no_hold = 1;
	s->t.user = NULL;	/* region_at: no writer to tell of images */
	a->sh[a->nsh++] = s;
	return &s->t;
}

static struct shadow *shadow_of(struct ptc_pt_thread *t)
{
	return (struct shadow *)(void *)((char *)t - offsetof(struct shadow, t));
}

static int is_shadow(const struct ptc_pt_decoder *d, const struct ptc_pt_thread *t)
{
	return t && t != &d->orphan && t->no_hold;
}

static void ahead_enable(struct ptc_pt_decoder *d, struct ptc_pt_thread *t, uint64_t offset, uint64_t ip)
{
	ahead_flush(d);
	if (!t)
		return;
	if (ahead_push_op(d->cap, AOP_ENABLE, shadow_of(t)->idx, d->time, offset, ip) == 0) {
		d->cap->ops[d->cap->nops - 1].sync = d->cap_sync == 1;
		d->cap->ops[d->cap->nops - 1].pending = t->pending_insns;
	}
}

static void ahead_stop(struct ptc_pt_decoder *d)
{
	if (d->time + 1 > d->cap->stop_limit)
		d->cap->stop_limit = d->time + 1;
	ahead_flush(d);
	ahead_push_op(d->cap, AOP_STOP, 0, d->time, 0, 0);
}

static void ahead_timed(struct ptc_pt_decoder *d)
{
	struct ptc_pt_ahead *a = d->cap;

	if (a->timed)
		return;
	a->timed = 1;
	if (a->nops || a->nlog || (d->thr && d->thr->nbatch))
		a->untimed = 1;
}

static void ahead_early_event(struct ptc_pt_decoder *d)
{
	if (!d->st.branches)
		d->cap->early_event = 1;
}

static void ahead_sync(struct ptc_pt_decoder *d, uint64_t off, int st, uint64_t ip)
{
	struct ptc_pt_ahead *a = d->cap;

	a->synced = 1;
	a->sync_off = off;
	a->sync_st = st;
	a->sync_ip = ip;
	if (off != 0)
		ahead_unusable(a, "the window's first PSB+ does not decode");
}

/* A MODE.Exec of the window said bits. */
static void ahead_mode_said(struct ptc_pt_decoder *d, unsigned bits)
{
	if (!d->cap->mode_said)
		d->cap->mode_said = bits;
}

/* A table was taken for the current mode: before any MODE.Exec of the
 * window, the scratch decoder's 64-bit mode. */
static void ahead_mode_used(struct ptc_pt_decoder *d)
{
	if (!d->cap->mode_said)
		d->cap->mode_assumed = 1;
}

/* The scratch decoder afresh for a window, its caches of code kept. */
static void ahead_reset(struct ptc_pt_decoder *d, int cpu, uint32_t qtid)
{
	struct ptc_pt_params p = d->p;
	struct ptc_pt_env env = d->env;
	struct pt_config cfg = d->cfg;
	struct icache *ic = d->icache;
	struct sub *subs = d->subs;
	struct ptc_path_memo *memo = d->memo;
	int own_memo = d->own_memo;

	drop_query(d);
	ptc_pt_thread_fini(&d->orphan);
	free(d->spec);
	memset(d, 0, sizeof(*d));
	d->p = p;
	d->env = env;
	d->cfg = cfg;
	d->icache = ic;
	d->subs = subs;
	d->memo = memo;
	d->own_memo = own_memo;
	start_state(d, cpu, qtid);
}

static void free_shadows(struct ptc_pt_ahead *a)
{
	size_t i;

	for (i = 0; i < a->nsh; i++) {
		ptc_pt_thread_fini(&a->sh[i]->t);
		free(a->sh[i]->hints);
		free(a->sh[i]);
	}
	free(a->sh);
	a->sh = NULL;
	a->nsh = 0;
}

/* A spent log made empty, its arrays kept (page faults on fresh memory
 * for every window cost more than the copying into them). */
static void ahead_clear(struct ptc_pt_ahead *a)
{
	free_shadows(a);
	a->nops = a->nlog = 0;
	memset(&a->put, 0, sizeof(a->put));
	a->unusable = NULL;
	a->synced = a->sync_st = a->early_event = a->started = a->timed = a->untimed = 0;
	a->mode_said = 0;
	a->mode_assumed = 0;
	a->sync_off = a->sync_ip = 0;
	a->op = a->done = a->drop = 0;
	a->delta = 0;
	a->stop_limit = 0;
	memset(&a->tap, 0, sizeof(a->tap));
	a->tapping = a->tap_given = 0;
	a->tap_slot = 0;
	a->tap_before = 0;
	{
		struct tap_sum u = a->sum;

		memset(&a->sum, 0, sizeof(a->sum));
		a->sum.rets = u.rets;
		a->sum.caprets = u.caprets;
		a->sum.frames = u.frames;
		a->sum.capframes = u.capframes;
	}
}

int ptc_pt_decode_ahead(struct ptc_pt_decoder *d, int cpu, uint32_t qtid, const uint8_t *buf,
			size_t size, uint64_t offset, int continued, struct ptc_pt_ahead *reuse,
			const struct ptc_pt_tap *tap, struct ptc_pt_ahead **out)
{
	struct ptc_pt_ahead *a = reuse ? reuse : calloc(1, sizeof(*a));
	size_t i;
	int err;

	*out = NULL;
	if (!a)
		return -ptc_err_nomem;
	if (reuse)
		ahead_clear(a);
	if (a->caplog < size * AHEAD_RECORDS_PER_BYTE * LOG_SLOT_TYPICAL) {
		/* room for a dense window at once: growing it would copy the
		 * log, and pages not written are not taken */
		uint8_t *nl = realloc(a->log, size * AHEAD_RECORDS_PER_BYTE * LOG_SLOT_TYPICAL);
		if (nl) {
			a->log = nl;
			a->caplog = size * AHEAD_RECORDS_PER_BYTE * LOG_SLOT_TYPICAL;
		}
	}
	a->offset = offset;
	a->size = size;
	a->end_sh = -1;
	if (tap)
		a->tap = *tap;
	ahead_reset(d, cpu, qtid);
	d->cap = a;
	err = ptc_pt_decoder_set_buffer(d, buf, size, offset, 0, 0, NULL);
	d->continued = continued;
	if (err >= 0)
		err = ptc_pt_decoder_run(d, UINT64_MAX);
	if (err < 0)
		ahead_unusable(a, "decoding failed");
	ahead_flush(d);
	d->cap = NULL;
	if (!a->timed && (a->nops || a->nlog))
		a->untimed = 1;
	if (!a->synced)
		ahead_unusable(a, "no PSB");
	if (d->st.gaps || d->pg.active || d->by.pending)
		ahead_unusable(a, "a gap");
	if (d->st.orphan_branches)
		ahead_unusable(a, "no thread known");
	for (i = 0; i < a->nsh; i++)
		if (a->sh[i]->t.stack_cap >= STACK_MAX)
			ahead_unusable(a, "a call stack deeper than kept");
	if (is_shadow(d, d->thr))
		a->end_sh = (int)shadow_of(d->thr)->idx;
	/* the stand-ins go with the log: the scratch decoder keeps none */
	d->thr = NULL;
	if (!a->end)
		a->end = malloc(sizeof(*d));
	if (!a->end) {
		ptc_pt_ahead_free(a);
		return -ptc_err_nomem;
	}
	memcpy(a->end, d, sizeof(*d));
	*out = a;
	return 0;
}

const char *ptc_pt_ahead_unusable(const struct ptc_pt_ahead *a)
{
	return a->unusable;
}

uint64_t ptc_pt_ahead_stop_limit(const struct ptc_pt_ahead *a)
{
	return a->stop_limit;
}

size_t ptc_pt_ahead_threads(const struct ptc_pt_ahead *a, uint32_t *tids, size_t max)
{
	size_t i;

	for (i = 0; i < a->nsh && i < max; i++)
		tids[i] = a->sh[i]->t.tid;
	return a->nsh;
}

void ptc_pt_ahead_free(struct ptc_pt_ahead *a)
{
	if (!a)
		return;
	free_shadows(a);
	free(a->ops);
	free(a->log);
	free(a->end);
	free(a->sum.rets);
	free(a->sum.frames);
	free(a);
}

/* Does the log continue the decoder's state as its own decoding of the
 * window would?  resync() in continuing mode checks the window's PSB+
 * with consistent() and then walks on from where the walker stands, which
 * may lie past the PSB's IP (direct branches need no packet: the walker
 * took them before the PSB was read) or before it.  The log's walk began
 * at the PSB's IP, so: the direct branches it took again are dropped (and
 * their calls are on the real stack once), and the first branch after the
 * PSB's IP counts the instructions from where the walker stood. */
static int ahead_fits(struct ptc_pt_decoder *d, struct ptc_pt_ahead *a)
{
	const struct ahead_op *o;
	struct psb_place at;
	uint64_t ip = a->sync_ip, bip, first_ip = 0;
	uint32_t idx, n;
	unsigned i;
	struct log_state st;
	const uint8_t *p;
	struct ptc_branch first;
	const struct ptc_tnt_path *path;

	a->drop = 0;
	a->delta = 0;
	if (a->unusable || d->cap || d->pg.active || d->by.pending || d->nspec || d->skipping ||
	    d->nsubs != 1 || d->spec_mode)
		return 0;
	/* What a tap took goes to the thread's outputs at once (which must
	 * have room for all), and its calls onto the thread's call stack,
	 * which must not be cut meanwhile (grow_stack()). */
	if (a->sum.records &&
	    (!d->env.tap_room || !d->env.tap_splice || !d->thr || d->thr == &d->orphan ||
	     d->env.tap_room(d->env.ctx, d->thr, a->tap.ctx) <
		     batched_records(d->thr) + a->tap_before + a->sum.records ||
	     d->thr->depth + a->tap_before + a->sum.max_depth >= STACK_MAX))
		return 0;
	if (!consistent(d, a->sync_st, ip, &at))
		return 0;
	if (a->untimed && d->have_tsc)
		return 0;	/* its first steps would have the decoder's time */
	/* Its code was decoded in the mode its first MODE.Exec said, or in
	 * 64-bit mode where it looked code up before any said one: the
	 * decoder's own decoding would have used its mode (and changed to
	 * the PSB+'s, searching its position again). */
	if (d->mode_next || d->mode != (a->mode_assumed || !a->mode_said ? 64 : a->mode_said))
		return 0;
	if (!d->enabled)
		return 1;	/* tracing off on both sides of the PSB */
	if (!a->nops || a->ops[0].op != AOP_ENABLE || !a->ops[0].sync || a->early_event)
		return 0;
	if (d->thr == &d->orphan || a->sh[a->ops[0].sh]->t.tid != d->thr->tid)
		return 0;	/* the sideband says another thread runs at the PSB */
	o = a->nops > 1 ? &a->ops[1] : NULL;
	if (!o || o->op != AOP_BRANCHES || o->sh != a->ops[0].sh || o->a)
		return 0;	/* (its slots are the log's first) */
	/* The walker's count of direct branches in a row (an endless loop
	 * past DIRECT_MAX is a gap) goes on over the PSB; the log's began
	 * at 0. */
	memset(&st, 0, sizeof(st));
	for (i = 0, p = a->log; i < o->b; i++) {
		p = log_get(p, &st, &first, &path);
		if (i == 0)
			first_ip = first.ip;
		if (path || (first.kind != PTC_BR_JMP && first.kind != PTC_BR_CALL))
			break;
		if (d->ndirect + i + 1 >= DIRECT_MAX)
			return 0;
	}
	if (at.chain < d->nchain) {
		a->drop = d->nchain - at.chain;
		if (o->b <= a->drop)
			return 0;
		memset(&st, 0, sizeof(st));
		for (i = 0, p = a->log; i < a->drop; i++) {
			p = log_get(p, &st, &first, &path);
			if (path || (first.kind != PTC_BR_JMP && first.kind != PTC_BR_CALL) ||
			    first.ip != d->chain_e[at.chain + i])
				return 0;
		}
		return 1;
	}
	if (at.idx == PTC_NO_BRANCH) {
		/* ip == d->ip */
		if (!d->have_idx)
			return 1;	/* the same search either way */
		if (ptc_image_next_branch(d->reg.img, (uint64_t)((int64_t)ip - d->reg.bias), &idx, &n) < 0 ||
		    idx != d->idx)
			return 0;
		at.idx = idx;
		at.skipped = (int64_t)d->insns - (int64_t)n;
	}
	a->delta = at.skipped;
	bip = (uint64_t)((int64_t)d->reg.tb[at.idx].ip + d->reg.bias);
	if (!o->b || first_ip != bip)
		return 0;
	return 1;
}

/* What emit() and the walker's call stack did with record b of the log's
 * thread s, on the real thread t: its first record takes the pending
 * instructions and the gap flag the thread brought into the window. */

/* The first record of shadow s that goes to its real thread t: with the
 * instructions and the gap flag t holds for it. */
static void replay_first(struct ptc_pt_ahead *a, struct shadow *s, struct ptc_pt_thread *t,
			 const struct ahead_op *o, struct ptc_branch *b)
{
	int64_t n = (int64_t)b->insns + (int64_t)t->pending_insns;

	if (o->sh == a->ops[0].sh && a->ops[0].sync)
		n += a->delta;
	b->insns = (uint32_t)n;
	if (t->after_gap)
		b->flags |= PTC_BRF_AFTER_GAP;
	t->pending_insns = 0;
	t->after_gap = 0;
	s->seen = 1;
}

/* A call or return b of shadow s on the real call stack of t, as the
 * walker keeps it: with the table index the shadow's call had. */
static inline int replay_stack(struct shadow *s, struct ptc_pt_thread *t, const struct ptc_branch *b)
{
	if (record_pushes(b)) {
		if (t->depth == t->stack_cap && grow_stack(t) < 0)
			return -ptc_err_nomem;
		t->stack[t->depth] = b->ip + b->length;
		t->stack_call[t->depth] = s->hnext < s->nhints ? s->hints[s->hnext++] : PTC_NO_BRANCH;
		t->depth++;
	} else if (b->kind == PTC_BR_RET && t->depth && t->stack[t->depth - 1] == b->target) {
		t->depth--;
	}
	return 0;
}

/* replay_stack() of each call and return of path p, at bias from its
 * image's addresses, at once (struct ptc_tnt_path), where t has the room
 * for its deepest call. */
static void replay_path_stack(struct shadow *s, struct ptc_pt_thread *t, const struct ptc_tnt_path *p,
			      uint64_t bias)
{
	size_t h = s->hnext;
	uint32_t pm;

	/* (each push takes the next hint while there is one) */
	for (pm = p->push_mask; pm; pm &= pm - 1, h += h < s->nhints) {
		const unsigned k = (unsigned)__builtin_ctz(pm);

		if (p->keep_mask >> k & 1) {
			const struct ptc_branch *r = &p->path.rec[k];

			t->stack[t->depth] = r->ip + bias + r->length;
			t->stack_call[t->depth++] = h < s->nhints ? s->hints[h] : PTC_NO_BRANCH;
		}
	}
	s->hnext = h;
}

static inline int
replay_record(struct ptc_pt_ahead *a, struct shadow *s, struct ptc_pt_thread *t, const struct ahead_op *o,
	      struct ptc_branch *b)
{
	if (!s->seen)
		replay_first(a, s, t, o, b);
	return ((1u << b->kind) & STACK_KINDS) ? replay_stack(s, t, b) : 0;
}

/* What the tap took, to the real thread t of shadow s where it stands
 * (after slot tap_slot of op 1): the records to the outputs, and what
 * replay_record() would have done with them to t. */
static int tap_give(struct ptc_pt_decoder *d, struct ptc_pt_ahead *a, struct shadow *s, struct ptc_pt_thread *t)
{
	const struct tap_sum *u = &a->sum;
	unsigned k;
	size_t i;
	int err;

	a->tap_given = 1;
	if (t->nbatch && ptc_pt_thread_flush(t) < 0)
		return t->sink_error;
	if ((err = d->env.tap_splice(d->env.ctx, t, a->tap.ctx)) < 0)
		return err;
	for (k = 0; k < PTC_BR_KIND_NR; k++)
		t->by_kind[k] += u->by_kind[k];
	t->insns += u->insns;
	t->not_taken += u->not_taken;
	t->next_ip = u->next_ip;
	for (i = 0; i < u->nrets; i++)
		if (t->depth && t->stack[t->depth - 1] == u->rets[i])
			t->depth--;
	for (i = 0; i < u->depth; i++) {
		const size_t h = s->hnext + u->frames[i].push;

		if (t->depth == t->stack_cap && grow_stack(t) < 0)
			return -ptc_err_nomem;
		t->stack[t->depth] = u->frames[i].ret;
		t->stack_call[t->depth] = h < s->nhints ? s->hints[h] : PTC_NO_BRANCH;
		t->depth++;
	}
	s->hnext += u->pushes;
	return 0;
}

/* Slots [a->done, o->b) of op o to the real thread, as the walker put them
 * in its batch (a path as its first record, marked) and flushed it when
 * full. */
static int replay_branches(struct ptc_pt_decoder *d, struct ptc_pt_ahead *a, const struct ahead_op *o)
{
	struct shadow *s = a->sh[o->sh];
	struct ptc_pt_thread *t = s->real;
	const uint8_t *at;
	struct log_state get;
	size_t done, tap_at;
	int err = 0;

	if (!t)
		return -ptc_err_internal;
	t->cpu = d->cpu;
	if (!a->done)
		a->at = (size_t)o->a;	/* (the ops' slots follow each other) */
	at = a->log + a->at;
	/* (the loop's state in locals, not through *a at every slot) */
	get = a->get;
	done = a->done;
	if (a->op == 1 && done < a->drop) {
		/* taken before the PSB already (their calls' hints too; they
		 * are records: ahead_fits()) */
		struct ptc_branch r;
		const struct ptc_tnt_path *p;

		for (; done < a->drop; done++) {
			at = log_get(at, &get, &r, &p);
			s->hnext += record_pushes(&r);
		}
	}
	tap_at = a->op == 1 && a->sum.records && !a->tap_given ? a->tap_slot : SIZE_MAX;
	while (err >= 0) {
		size_t n, nb, end;

		if (done == tap_at) {
			tap_at = SIZE_MAX;
			if ((err = tap_give(d, a, s, t)) < 0)
				break;
		}
		if (done >= o->b)
			break;
		/* the slots up to the tap's place or the batch's end, whichever
		 * comes first (nb: the batch's count, in a register; never full
		 * here: a full batch is flushed below, as the walker does) */
		n = o->b - done;
		if (tap_at - done < n)
			n = tap_at - done;
		nb = t->nbatch;
		if (PTC_PT_BATCH - nb < n)
			n = PTC_PT_BATCH - nb;
		for (end = nb + n; nb < end; nb++) {
			struct ptc_branch *out = t->batch + nb;
			const struct ptc_tnt_path *p;

			at = log_get(at, &get, out, &p);
			if (p) {
				const int64_t bias = get.bias;
				uint32_t k;

				if (!s->seen)
					replay_first(a, s, t, o, out);
				t->marks[t->nmarks].at = (uint32_t)nb;
				t->marks[t->nmarks++].path = (struct ptc_path *)&p->path;
				if (p->stack && t->depth + p->max_depth <= t->stack_cap)
					replay_path_stack(s, t, p, (uint64_t)bias);
				else if (p->stack)
					for (k = 0; k < p->nsteps && err >= 0; k++)
						if ((1u << p->step[k].kind) & STACK_KINDS) {
							struct ptc_branch r = p->path.rec[k];

							r.ip += (uint64_t)bias;
							r.target += (uint64_t)bias;
							err = replay_stack(s, t, &r);
						}
			} else {
				err = replay_record(a, s, t, o, out);
			}
			if (err < 0)
				break;
		}
		done += nb - t->nbatch;
		t->nbatch = nb;
		if (err >= 0 && nb == PTC_PT_BATCH && ptc_pt_thread_flush_settled(t) < 0)
			err = t->sink_error;
	}
	a->get = get;
	a->done = done;
	a->at = (size_t)(at - a->log);
	return err;
}

/* The real threads and the decoder in the state the window left them. */
static int ahead_adopt(struct ptc_pt_decoder *d, struct ptc_pt_ahead *a)
{
	const struct ptc_pt_decoder *e = a->end;
	size_t i;

	for (i = 0; i < a->nsh; i++) {
		const struct shadow *s = a->sh[i];
		struct ptc_pt_thread *t = s->real;
		if (!t)
			continue;
		t->pending_insns += s->t.pending_insns;
		if (s->t.after_gap)
			t->after_gap = 1;
	}
	if (a->end_sh >= 0 && a->sh[a->end_sh]->real)
		d->thr = a->sh[a->end_sh]->real;
	d->status = e->status;
	d->synced = e->synced;
	d->enabled = e->enabled;
	d->ev = e->ev;
	d->have_ev = e->have_ev;
	d->last_sync_off = e->last_sync_off;
	d->held_ip = e->held_ip;
	d->held_ip_named = e->held_ip_named;
	d->rc_pid = e->rc_pid;
	memcpy(d->rc, e->rc, sizeof(d->rc));
	d->nrc = e->nrc;
	d->rc_next = e->rc_next;
	d->reg = e->reg;
	d->have_reg = e->have_reg;
	memcpy(d->chain_s, e->chain_s, sizeof(d->chain_s));
	memcpy(d->chain_e, e->chain_e, sizeof(d->chain_e));
	d->nchain = e->nchain;
	d->ndirect = e->ndirect;
	d->skipping = e->skipping;
	d->ip = e->ip;
	d->idx = e->idx;
	d->insns = e->insns;
	d->have_idx = e->have_idx;
	d->mode = e->mode;
	d->mode_next = e->mode_next;
	if (a->timed) {
		/* (a window without a timing packet leaves the time where
		 * decoding it in place would: where it was before it, not at
		 * the scratch decoder's none) */
		d->tsc = e->tsc;
		d->time = e->time;
		d->have_tsc = e->have_tsc;
	}
	d->base = e->base;
	d->size = e->size;
	d->piece = NULL;	/* the window's bytes are not kept */
	d->piece_off = a->offset;
	d->piece_size = a->size;
	d->piece_done = 1;
	d->min_sync = 0;
	d->st.bytes += e->st.bytes;
	d->st.fast_bytes += e->st.fast_bytes;
	d->st.branches += e->st.branches - a->drop;
	d->st.psb += e->st.psb - 1;	/* its first PSB continued the walk */
	d->st.events += e->st.events;
	return 0;
}

int ptc_pt_decoder_replay(struct ptc_pt_decoder *d, struct ptc_pt_ahead *a, uint64_t until)
{
	int err;

	if (!a->started) {
		if (!ahead_fits(d, a))
			return -ptc_err_mismatch;
		a->started = 1;
		drop_query(d);
		a->op = a->done = 0;
		memset(&a->get, 0, sizeof(a->get));
	}
	while (a->op < a->nops) {
		const struct ahead_op *o = &a->ops[a->op];
		struct shadow *s = a->sh[o->sh];
		struct ptc_pt_thread *t;

		switch (o->op) {
		case AOP_BRANCHES:
			err = replay_branches(d, a, o);
			if (err < 0)
				return err;
			break;
		case AOP_ENABLE:
			if (o->sync) {
				/* the PSB's: the walker goes on in its thread */
				s->real = d->thr;
				break;
			}
			/* enable_at() */
			t = d->env.thread_at(d->env.ctx, d->cpu, d->qtid, o->a);
			if (!t)
				return -ptc_err_nomem;
			if (t->tid != s->t.tid)
				return -ptc_err_internal;
			s->real = t;
			if (t != d->thr) {
				ptc_pt_thread_flush_settled(d->thr);
				set_thread(d, t);
			}
			/* it sees the pending instructions it would have: those
			 * of before the window and those the log holds back */
			t->pending_insns += o->pending;
			err = ptc_pt_thread_start(t, o->a, o->b, o->c);
			t->pending_insns -= o->pending;
			if (err < 0)
				return err;
			break;
		case AOP_STOP:
			d->time = o->a;
			a->op++;
			a->done = 0;
			if (o->a >= until)
				return 1;
			continue;
		}
		a->op++;
		a->done = 0;
	}
	return ahead_adopt(d, a);
}
