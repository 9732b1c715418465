/* --engine=libipt: libipt's block decoder (see blkdec.h).
 *
 * libipt reads code through a callback that asks the same environment as
 * the walker (so both engines see the same images); each block's last
 * instruction, when it is a branch, becomes a branch event once the next
 * block (or the event that ends tracing) says where it went.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>
#include <Zydis/Zydis.h>

#include "common/error.h"
#include "decoders/intel_pt/blkdec.h"
#include "decoders/intel_pt/bystanders.h"
#include "decoders/intel_pt/loss.h"
#include "decoders/intel_pt/unknown.h"
#include "images/branch_kind.h"
#include "images/x86_newer.h"

struct held_branch {
	int active;
	uint64_t ip, target;	/* target: direct target, 0 when indirect */
	uint32_t insns;
	int kind, length;
	struct ptc_pt_thread *thr;
};

/* The return addresses libipt's block decoder holds for compressed returns
 * (its retstack, not in its API): pushed by the calls this engine emits,
 * popped by the returns that go back to them, emptied where libipt empties
 * its own (at a synchronisation; not at an overflow).  As deep as libipt's. */
#define RETSTACK_DEPTH 64

struct shadow_retstack {
	uint64_t ret[RETSTACK_DEPTH];
	unsigned top, n;	/* ring: the deepest entries are overwritten */
};

/* What classify() found at an address of an image mapped with a bias, in
 * a mode: a program runs the same instructions again and again, and Zydis'
 * full decoding of each was most of this engine's time (xz, 8e7
 * instructions: 21 s).  An image's bytes do not change during a
 * conversion (nor does the image: images live as long as it), so an entry
 * holds what decoding the bytes again would find. */
struct classified {
	const struct ptc_image *img;	/* NULL: empty */
	uint64_t ip, target;
	int64_t bias;
	int8_t kind;
	uint8_t len, mode;
};

#define CLASSIFIED_BITS 15

struct ptc_blk_decoder {
	struct ptc_pt_params p;
	struct ptc_pt_env env;
	int cpu;
	uint32_t qtid;
	struct pt_config cfg;
	struct pt_block_decoder *blk;
	uint64_t base, end;
	int synced, enabled, status, piece_done;
	uint64_t min_sync;
	struct ptc_pt_thread *thr;
	struct ptc_pt_thread orphan;
	struct held_branch hb;
	struct shadow_retstack rs;
	uint64_t tsc, time;
	struct ptc_pt_loss loss;	/* the loss being decoded past (loss.h) */
	struct ptc_pt_losses ls;
	/* A closed gap whose time span is not known yet: the threads switched
	 * in on this CPU during it get the gap once time moves on. */
	struct ptc_pt_bystanders by;
	struct ptc_pt_region reg;
	int have_reg;
	struct ptc_pt_stats st;
	ZydisDecoder zy;	/* for code of the mode libipt's blocks say (zy_mode) */
	enum pt_exec_mode zy_mode;
	struct classified *cls;	/* 1 << CLASSIFIED_BITS, by address (NULL: none yet) */

	/* Windows (ptc_blk_decoder_continue): libipt walks past the last
	 * packet of a window until it needs the next one, so the last block
	 * of a window may run past where the next window's PSB says
	 * execution was.  Each block is therefore taken one step late
	 * (pend); the last one of a window (tail) is taken when the next
	 * window's PSB+ says how far it went. */
	struct pt_block pend, tail;
	int have_pend, have_tail;
	int continuing;		/* the current window continues the previous one */
	uint64_t next_ip;	/* after the last instruction taken (0 unknown) */
	uint64_t unknown_ip;	/* where libipt failed on an instruction (0 unknown) */
	uint64_t nomap_ip;	/* where it found no code (0 unknown) */
	uint64_t sync_off;	/* the last PSB synchronised at, in the window */
	/* Erratum BDM70: libipt's workaround is always on here (a PSB+ FUP
	 * that a TIP.PGE follows is skipped); where the CPU does not say it
	 * has the erratum (bdm70_own), a skipped FUP's IP, which a TIP.PGE
	 * elsewhere contradicts, as the walker finds.  psb_trace_off: tracing was
	 * off at the PSB synchronised at and nothing was decoded since, so a
	 * TIP.PGE now may follow a skipped FUP. */
	int bdm70_own, psb_trace_off;
};

static void update_time(struct ptc_blk_decoder *d, const struct pt_event *ev)
{
	uint64_t tsc;
	uint32_t a, b;

	if (ev && ev->has_tsc)
		tsc = ev->tsc;
	else if (!d->blk || pt_blk_time(d->blk, &tsc, &a, &b) < 0)
		return;
	d->tsc = tsc;
	d->time = ptc_time_conv_ticks(&d->p.tc, tsc);
	/* (a sink error stays in its thread) */
	ptc_pt_bystanders_time(&d->by, d->time);
}

static int region(struct ptc_blk_decoder *d, uint64_t ip)
{
	int cause;
	char msg[128];

	if (d->have_reg && ip >= d->reg.start && ip < d->reg.end)
		return 0;
	d->have_reg = 0;
	if (d->env.region_at(d->env.ctx, d->thr, d->time, ip, &d->reg, &cause, msg, sizeof(msg)) < 0)
		return -1;
	d->have_reg = 1;
	return 0;
}

static int read_mem(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip, void *ctx)
{
	struct ptc_blk_decoder *d = ctx;
	size_t n;

	if (region(d, ip) < 0)
		return -pte_nomap;
	n = ptc_image_read(d->reg.img, (uint64_t)((int64_t)ip - d->reg.bias), buffer, size);
	return n ? (int)n : -pte_nomap;
}

static void retstack_note(struct shadow_retstack *rs, uint64_t ip, uint64_t target, int kind, int len)
{
	uint64_t next = ip + (uint64_t)len;

	/* a call to the next instruction is not a call (libipt, the CPU) */
	if (kind == PTC_BR_CALL_IND || (kind == PTC_BR_CALL && target != next)) {
		rs->top = (rs->top + 1) % RETSTACK_DEPTH;
		rs->ret[rs->top] = next;
		if (rs->n < RETSTACK_DEPTH)
			rs->n++;
	} else if (kind == PTC_BR_RET && rs->n && rs->ret[rs->top] == target) {
		rs->top = (rs->top + RETSTACK_DEPTH - 1) % RETSTACK_DEPTH;
		rs->n--;
	}
}

static int emit(struct ptc_blk_decoder *d, struct ptc_pt_thread *t, uint64_t ip, uint64_t target,
		uint32_t insns, int kind, int taken, int len)
{
	struct ptc_branch *b;

	retstack_note(&d->rs, ip, target, kind, len);
	d->st.branches++;
	if (t == &d->orphan)
		d->st.orphan_branches++;
	b = &t->batch[t->nbatch++];
	b->ip = ip;
	b->target = target;
	b->time = d->time;
	b->insns = insns;
	b->kind = (uint8_t)kind;
	b->taken = (uint8_t)taken;
	b->length = (uint8_t)len;
	b->flags = t->after_gap ? PTC_BRF_AFTER_GAP : 0;
	t->after_gap = 0;
	if (t->nbatch == PTC_PT_BATCH)
		return ptc_pt_thread_flush_settled(t);
	return 0;
}

static void open_gap(struct ptc_blk_decoder *d, int cause, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Resolve the held branch now that we know where execution went (next_ip,
 * 0 when tracing stopped). */
static int resolve(struct ptc_blk_decoder *d, uint64_t next_ip, int stopped)
{
	struct held_branch *h = &d->hb;
	uint64_t target;
	int taken = 1;

	if (!h->active)
		return 0;
	h->active = 0;
	if (h->kind == PTC_BR_COND && stopped && next_ip && next_ip != h->target &&
	    next_ip != h->ip + (uint64_t)h->length) {
		/* the trace contradicts the code, as the walker finds */
		open_gap(d, PTC_GAP_DECODE,
			 "tracing stopped at the cond at 0x%" PRIx64 " with the TIP.PGD at 0x%" PRIx64
			 ", neither its target nor its fall-through", h->ip, next_ip);
		return 0;
	}
	if (h->kind == PTC_BR_COND) {
		target = h->target;
		taken = !stopped && next_ip != h->ip + (uint64_t)h->length;
		/* a TIP.PGD in place of its bit names where it went (libipt
		 * binds it to the branch and says nothing of its direction):
		 * taken when that is its target */
		if (stopped && next_ip && next_ip == target)
			taken = 1;
		if (target == h->ip + (uint64_t)h->length)
			taken = 1;
	} else if (h->kind == PTC_BR_JMP || h->kind == PTC_BR_CALL) {
		target = h->target;
	} else if (h->kind == PTC_BR_FAR && stopped) {
		target = ptc_pt_far_stop_target(next_ip);
	} else {
		target = next_ip;
	}
	return emit(d, h->thr, h->ip, target, h->insns, h->kind, taken, h->length);
}

static void open_gap(struct ptc_blk_decoder *d, int cause, const char *fmt, ...)
{
	va_list ap;
	uint64_t off = 0;

	d->hb.active = 0;
	if (d->blk)
		pt_blk_get_offset(d->blk, &off);
	va_start(ap, fmt);
	if (ptc_pt_loss_open(&d->loss, &d->ls, d->thr, d->enabled, cause, d->base + off, d->time, fmt, ap))
		d->enabled = 0;
	va_end(ap);
}

static int close_gap(struct ptc_blk_decoder *d, uint64_t off, uint64_t ip)
{
	return ptc_pt_loss_close(&d->loss, &d->ls, d->thr, off, ip, d->time);
}

/* The thread running now: libipt reads its code. */
static struct ptc_pt_thread *set_thread(struct ptc_blk_decoder *d)
{
	struct ptc_pt_thread *t = d->env.thread_at(d->env.ctx, d->cpu, d->qtid, d->time);

	if (!t)
		t = &d->orphan;
	if (t != d->thr) {
		ptc_pt_thread_flush_settled(d->thr);
		d->thr = t;
		t->cpu = d->cpu;
		d->have_reg = 0;
	}
	return t;
}

static int enable(struct ptc_blk_decoder *d, uint64_t ip)
{
	struct ptc_pt_thread *t = set_thread(d);
	uint64_t off = 0;
	int err;

	d->enabled = 1;
	if (d->loss.active && region(d, ip) < 0)
		/* tracing resumes in code no image covers: the loss goes on
		 * until decoding resumes in known code (loss.h) */
		return 0;
	pt_blk_get_offset(d->blk, &off);
	err = close_gap(d, d->base + off, ip);
	if (err >= 0 && t != &d->orphan)
		err = ptc_pt_thread_start(t, d->time, d->base + off, ip);
	return err;
}

/* Zydis for code of mode (libipt follows MODE.Exec and says the mode of
 * each block); an unknown mode is taken for 64-bit. */
static void zy_mode(struct ptc_blk_decoder *d, enum pt_exec_mode mode)
{
	if (mode == d->zy_mode)
		return;
	d->zy_mode = mode;
	if (mode == ptem_32bit)
		ZydisDecoderInit(&d->zy, ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
	else if (mode == ptem_16bit)
		ZydisDecoderInit(&d->zy, ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16);
	else
		ZydisDecoderInit(&d->zy, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

static int decode_kind(struct ptc_blk_decoder *d, uint64_t ip, int *len, uint64_t *target);

/* Classify the instruction at ip with Zydis (independently of the images'
 * branch tables), as code of the mode zy_mode() set: returns its kind, -1
 * for a non-branch, -2 when it cannot be read; *len its length, *target
 * its direct target (0 otherwise). */
static int classify(struct ptc_blk_decoder *d, uint64_t ip, int *len, uint64_t *target)
{
	struct classified *e;
	int kind;

	*target = 0;
	*len = 0;
	if (region(d, ip) < 0)
		return -2;
	if (!d->cls)
		d->cls = calloc((size_t)1 << CLASSIFIED_BITS, sizeof(*d->cls));
	if (!d->cls)
		return decode_kind(d, ip, len, target);
	e = &d->cls[(ip * 0x9e3779b97f4a7c15ull) >> (64 - CLASSIFIED_BITS)];
	if (e->img == d->reg.img && e->ip == ip && e->bias == d->reg.bias && e->mode == (uint8_t)d->zy_mode) {
		*len = e->len;
		*target = e->target;
		return e->kind;
	}
	kind = decode_kind(d, ip, len, target);
	if (kind == -2)
		return kind;
	e->img = d->reg.img;
	e->ip = ip;
	e->bias = d->reg.bias;
	e->mode = (uint8_t)d->zy_mode;
	e->kind = (int8_t)kind;
	e->len = (uint8_t)*len;
	e->target = *target;
	return kind;
}

/* classify() by decoding (d->reg: the region of ip). */
static int decode_kind(struct ptc_blk_decoder *d, uint64_t ip, int *len, uint64_t *target)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct ptc_x86_newer nw;
	uint8_t buf[16];
	size_t n;
	int direct;

	n = ptc_image_read(d->reg.img, (uint64_t)((int64_t)ip - d->reg.bias), buf, sizeof(buf));
	if (ptc_x86_newer_branch(buf, n, &nw) && d->zy_mode != ptem_32bit && d->zy_mode != ptem_16bit) {
		*len = nw.length;
		return nw.kind;
	}
	if (!n || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d->zy, buf, n, &in, ops)))
		return -2;
	*len = in.length;
	direct = in.operand_count_visible > 0 && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		 ops[0].imm.is_relative;
	if (direct && d->zy_mode == ptem_16bit) {
		/* IP wraps within a code segment whose base is not known:
		 * as libipt (and the tables), no wrap */
		*target = ip + in.length + (uint64_t)ops[0].imm.value.s;
	} else if (direct) {
		ZyanU64 t;
		if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], ip, &t)))
			*target = t;
	}
	/* the same kinds as the walker's tables (a far return is far) */
	return ptc_branch_kind(&in);
}

/* Turn a block into branch events: libipt follows direct jumps and calls
 * inside a block, so every instruction is classified; the block's last
 * instruction, when a branch, waits for the next block to say where it
 * went. */
static int process_block(struct ptc_blk_decoder *d, const struct pt_block *b, uint64_t stop,
			 int *reached)
{
	uint64_t ip = b->ip, target;
	uint16_t i;
	int kind, len, err;

	zy_mode(d, b->mode);
	for (i = 0; i < b->ninsn; i++) {
		if (stop && ip == stop) {
			*reached = 1;
			return 0;
		}
		d->thr->pending_insns++;
		kind = classify(d, ip, &len, &target);
		if (kind == -2) {
			d->nomap_ip = ip;
			return -pte_nomap;
		}
		if (i + 1 == b->ninsn) {
			if (kind >= 0) {
				d->hb.active = 1;
				d->hb.ip = ip;
				d->hb.kind = kind;
				d->hb.length = len;
				d->hb.target = target;
				d->hb.insns = (uint32_t)d->thr->pending_insns;
				d->hb.thr = d->thr;
				d->thr->pending_insns = 0;
				d->next_ip = 0;
			} else {
				d->next_ip = ip + (uint64_t)len;
			}
			break;
		}
		if (kind >= 0 && kind != PTC_BR_JMP && kind != PTC_BR_CALL) {
			/* a branch that needs trace, inside a block: one that
			 * libipt's decoder does not know (x86_newer.h) */
			d->unknown_ip = ip;
			return -pte_bad_insn;
		}
		if (kind == PTC_BR_JMP || kind == PTC_BR_CALL) {
			err = emit(d, d->thr, ip, target, (uint32_t)d->thr->pending_insns, kind, 1, len);
			d->thr->pending_insns = 0;
			if (err < 0)
				return err;
			ip = target;
		} else {
			ip += (uint64_t)len;
		}
	}
	if (stop && d->next_ip == stop)
		*reached = 1;
	return 0;
}

/* An overflow follows the held branch: libipt decoded it (a block ends at
 * a branch once its packet says where it goes) but the next block, which
 * would say where, is lost.  A direct jump or call went to its target; a
 * branch that took the last packet before the OVF (nothing binds after it
 * in the segment) went where that packet says: a conditional branch the
 * way its TNT bit says, a compressed return (a bit) to the address its
 * call pushed, an indirect branch to its TIP's IP.  Otherwise the branch
 * is dropped with the loss. */
static int resolve_before_ovf(struct ptc_blk_decoder *d)
{
	struct held_branch *h = &d->hb;
	struct ptc_pt_ovf_scan scan;
	uint64_t off = 0;

	if (!h->active)
		return 0;
	if (h->kind == PTC_BR_JMP || h->kind == PTC_BR_CALL)
		return resolve(d, h->target, 0);
	if (pt_blk_get_offset(d->blk, &off) < 0 || ptc_pt_ovf_scan(&d->cfg, d->sync_off, off, &scan) < 0)
		return 0;
	if (scan.last == PTC_PT_OVF_AFTER_BIT && h->kind == PTC_BR_COND)
		return resolve(d, scan.bit ? h->target : h->ip + (uint64_t)h->length, 0);
	if (scan.last == PTC_PT_OVF_AFTER_BIT && h->kind == PTC_BR_RET && scan.bit && d->rs.n)
		return resolve(d, d->rs.ret[d->rs.top], 0);
	if (scan.last == PTC_PT_OVF_AFTER_TIP &&
	    (h->kind == PTC_BR_RET || h->kind == PTC_BR_JMP_IND || h->kind == PTC_BR_CALL_IND))
		return resolve(d, scan.ip, 0);
	return 0;
}

/* The IP of the PSB+ at off: *ip, 1 when tracing is on there, 0 when it
 * is off, <0 when it cannot be read. */
static int psb_ip(const struct pt_config *cfg, uint64_t off, uint64_t *ip)
{
	struct pt_query_decoder *q = pt_qry_alloc_decoder(cfg);
	int st;

	*ip = 0;
	if (!q)
		return -pte_nomem;
	st = pt_qry_sync_set(q, ip, off);
	pt_qry_free_decoder(q);
	if (st < 0)
		return st;
	return !(st & pts_ip_suppressed);
}

/* The IP of the FUP in the PSB+ synchronised at that libipt's BDM70
 * workaround skipped (0: none).  Asked at the TIP.PGE after it, not at the
 * synchronisation: libipt 2.0 says there that the TIP.PGE is pending
 * (pts_event_pending), 2.1 and later first report the PSB+'s status
 * updates, and only then the TIP.PGE. */
static uint64_t skipped_fup(const struct ptc_blk_decoder *d)
{
	struct pt_config raw = d->cfg;
	uint64_t ip;

	if (!d->bdm70_own || !d->psb_trace_off)
		return 0;
	raw.errata.bdm70 = 0;
	return psb_ip(&raw, d->sync_off, &ip) == 1 ? ip : 0;
}

static int handle_event(struct ptc_blk_decoder *d, const struct pt_event *ev, uint64_t until, int *stop)
{
	uint64_t off = 0, fup;
	int err = 0;

	update_time(d, ev);
	d->st.events++;
	switch (ptc_pt_status_update(ev, d->enabled)) {
	case PTC_PT_STATUS_NONE:
		break;
	case PTC_PT_STATUS_ON:
		/* libipt refuses a status update that contradicts its own
		 * state (-pte_bad_status_update): this one is the PSB+ it
		 * starts at, before its first block */
		return enable(d, ev->variant.enabled.ip);
	default:
		/* nothing changed: the held branch waits for the next block */
		return 0;
	}
	switch (ev->type) {
	case ptev_enabled:
		err = resolve(d, 0, 1);
		fup = skipped_fup(d);
		d->psb_trace_off = 0;
		if (fup && fup != ev->variant.enabled.ip) {
			char hint[128];

			open_gap(d, PTC_GAP_DISABLED, "trace enabled at 0x%" PRIx64 " while already enabled%s",
				 ev->variant.enabled.ip,
				 ptc_pt_errata_hint(d->p.cpu_family != 0, "BDM70", hint, sizeof(hint)));
			d->loss.gap.ip = fup;
		}
		if (err >= 0)
			err = enable(d, ev->variant.enabled.ip);
		break;
	case ptev_disabled:
		err = resolve(d, ev->ip_suppressed ? 0 : ev->variant.disabled.ip, 1);
		d->enabled = 0;
		*stop = d->time >= until;
		break;
	case ptev_async_disabled:
		/* execution had reached "at": the held branch went there */
		err = resolve(d, ev->variant.async_disabled.at, 0);
		d->enabled = 0;
		*stop = d->time >= until;
		break;
	case ptev_overflow:
		/* the branch held was decoded before the packets were lost */
		err = resolve_before_ovf(d);
		if (err < 0)
			return err;
		open_gap(d, PTC_GAP_OVERFLOW, "overflow: the CPU dropped trace packets");
		if (pt_blk_get_offset(d->blk, &off) == 0)
			ptc_pt_loss_at_ovf(&d->loss, &d->cfg, d->base, d->sync_off, off);
		if (!ev->ip_suppressed)
			err = enable(d, ev->variant.overflow.ip);
		break;
	case ptev_async_branch:
		err = resolve(d, ev->variant.async_branch.from, 0);
		break;
	default:
		break;
	}
	return err;
}

/* Take a block libipt gave: it says where the held branch went, then its
 * instructions become events.  stop (0: none) ends it before that IP
 * (*reached says whether it was met). */
static int take_block(struct ptc_blk_decoder *d, const struct pt_block *b, uint64_t stop, int *reached)
{
	int err;

	d->psb_trace_off = 0;
	if (!d->enabled) {
		/* libipt resumed without an enable event (sync point with
		 * tracing on) */
		err = enable(d, b->ip);
		if (err < 0)
			return err;
	}
	err = resolve(d, b->ip, 0);
	if (err < 0)
		return err;
	return process_block(d, b, stop, reached);
}

/* Take the block held back, if any. */
static int take_pending(struct ptc_blk_decoder *d)
{
	int reached = 0;

	if (!d->have_pend)
		return 0;
	d->have_pend = 0;
	return take_block(d, &d->pend, 0, &reached);
}

/* The last block of the previous window, taken whole: there is no next
 * window (a new run, or the end), as if decoding had stopped there. */
static int take_tail(struct ptc_blk_decoder *d)
{
	int reached = 0;

	if (!d->have_tail)
		return 0;
	d->have_tail = 0;
	return take_block(d, &d->tail, 0, &reached);
}

/* The window's first PSB is at its start, where the previous window
 * ended: execution was at the PSB+'s IP then, so the previous window's
 * last block (walked by libipt without trace, until it needed a packet
 * that is in this window) is taken up to that IP.  Anything that does not
 * fit becomes a gap. */
static int continue_walk(struct ptc_blk_decoder *d, uint64_t sync_off)
{
	uint64_t ip;
	int on, reached = 0, err = 0;

	d->continuing = 0;
	on = sync_off == 0 ? psb_ip(&d->cfg, 0, &ip) : -pte_nosync;
	if (on <= 0 || !d->enabled || d->loss.active) {
		/* tracing off at the PSB (the tail had nowhere to go), or a
		 * broken PSB: take the tail whole, as at the end of a piece */
		err = take_tail(d);
		if (err >= 0 && d->enabled && on < 0)
			open_gap(d, PTC_GAP_DECODE, "libipt: no PSB at the start of the window at 0x%" PRIx64 ": %s",
				 d->base, pt_errstr(pt_errcode(on)));
		return err;
	}
	if (d->have_tail) {
		d->have_tail = 0;
		err = take_block(d, &d->tail, ip, &reached);
		if (err < 0)
			return err;
	} else {
		reached = d->next_ip == ip;
	}
	if (!reached && !d->hb.active)
		open_gap(d, PTC_GAP_DECODE, "libipt: the walk does not reach the IP 0x%" PRIx64
			 " of the PSB at 0x%" PRIx64, ip, d->base);
	return 0;
}

/* What taking a block fails with when the code cannot be decoded (not a
 * fatal error): no code there, or an instruction libipt does not know. */
static int undecodable(int err)
{
	return err == -pte_nomap || err == -pte_bad_insn;
}

/* A decode error at the current position: a gap, then the next PSB. */
static void decode_error(struct ptc_blk_decoder *d, int st)
{
	uint64_t off = 0, ip = d->unknown_ip ? d->unknown_ip : d->next_ip;
	char buf[160];
	const char *what = NULL;

	if (st == -pte_bad_insn && ip && region(d, ip) == 0) {
		/* an instruction libipt's decoder does not know: named when
		 * it is one of those ptconv knows (x86_newer.h) */
		uint8_t code[16];
		size_t n = ptc_image_read(d->reg.img, (uint64_t)((int64_t)ip - d->reg.bias), code, sizeof(code));

		what = ptc_pt_why_insn(code, n, ip, buf, sizeof(buf));
	}
	if (!what)
		what = ptc_pt_why(&d->cfg, d->sync_off, d->base, st, buf, sizeof(buf));
	if (!d->p.cpu_family && !d->cfg.errata.bdm64 && st != -pte_nomap && pt_blk_get_offset(d->blk, &off) == 0 &&
	    ptc_pt_abort_before(&d->cfg, d->sync_off, off, &ip)) {
		/* a TSX abort where the branch before it does not lead */
		char hint[128];

		open_gap(d, PTC_GAP_DECODE, "libipt: %s at a TSX abort at 0x%" PRIx64 "%s", what, ip,
			 ptc_pt_errata_hint(0, "BDM64", hint, sizeof(hint)));
	} else {
		if (st == -pte_nomap && d->hb.active && (d->hb.kind == PTC_BR_JMP || d->hb.kind == PTC_BR_CALL))
			/* a direct branch into code no image covers: it went
			 * there, and that is where decoding fails */
			resolve(d, d->hb.target, 0);
		open_gap(d, st == -pte_nomap ? PTC_GAP_NO_IMAGE : PTC_GAP_DECODE, "libipt: %s", what);
		if (st == -pte_nomap && d->nomap_ip && pt_blk_get_offset(d->blk, &off) == 0)
			ptc_pt_loss_at_nomap(&d->loss, &d->cfg, d->base, d->sync_off, off, d->nomap_ip, UINT64_MAX);
	}
	/* (an instruction libipt does not know is found in a block taken
	 * after libipt had read on: the next PSB after that) */
	d->unknown_ip = 0;
	d->nomap_ip = 0;
	if (pt_blk_get_offset(d->blk, &off) == 0 && off > d->min_sync)
		d->min_sync = off;
	d->synced = 0;
	d->status = 0;
}

int ptc_blk_decoder_run(struct ptc_blk_decoder *d, uint64_t until)
{
	int err;

	for (;;) {
		struct pt_block b;
		int st, stop = 0, reached = 0;

		if (!d->blk || d->piece_done)
			return 0;
		if (!d->synced) {
			uint64_t off = 0;
			st = pt_blk_sync_forward(d->blk);
			if (st == -pte_eos) {
				d->piece_done = 1;
				return 0;
			}
			if (pt_blk_get_sync_offset(d->blk, &off) == 0 && off < d->min_sync && st >= 0)
				continue;
			if (st < 0) {
				/* a broken PSB+ (or a packet libipt does not know
				 * right after it: it reads ahead): a loss up to
				 * the next PSB, which is tried */
				d->sync_off = off;
				decode_error(d, st);
				d->min_sync = off + 1;
				continue;
			}
			d->sync_off = off;
			d->min_sync = off + 1;
			d->synced = 1;
			d->rs.n = 0;	/* as libipt's at a synchronisation */
			ptc_pt_loss_synced(&d->loss, d->base + off);
			d->status = st;
			d->st.psb++;
			update_time(d, NULL);
			if (d->continuing) {
				err = continue_walk(d, off);
				if (err < 0 && !undecodable(err))
					return err;
				if (undecodable(err)) {
					decode_error(d, err);
					continue;
				}
			}
			d->psb_trace_off = (st & pts_ip_suppressed) != 0;
			if (!d->enabled && !(st & pts_ip_suppressed))
				/* tracing is on at the PSB: libipt reads the code
				 * of the thread running now before any block */
				set_thread(d);
		}
		while (d->status & pts_event_pending) {
			struct pt_event ev;
			st = pt_blk_event(d->blk, &ev, sizeof(ev));
			if (st < 0) {
				d->status = st;
				break;
			}
			d->status = st;
			/* the block before the event comes first */
			err = take_pending(d);
			if (undecodable(err)) {
				decode_error(d, err);
				break;
			}
			if (err < 0)
				return err;
			err = handle_event(d, &ev, until, &stop);
			if (err < 0)
				return err;
		}
		if (!d->synced)
			continue;
		if (stop)
			return 1;
		if (d->status < 0) {
			st = d->status;
		} else {
			memset(&b, 0, sizeof(b));
			st = pt_blk_next(d->blk, &b, sizeof(b));
			if (st == -pte_bad_query && (d->status & pts_eos))
				/* libipt 2.1 and later, where the trace ends
				 * before a branch that needs a packet (2.0:
				 * -pte_eos) */
				st = -pte_eos;
			if (st == -pte_nomap && !b.ninsn && b.ip)
				d->nomap_ip = b.ip;	/* libipt says where it found no code */
			err = take_pending(d);
			if (err >= 0 && st == -pte_nomap && !b.ninsn && b.ip && d->hb.active &&
			    d->hb.kind != PTC_BR_COND)
				/* the held branch went to b.ip (libipt says where
				 * it failed to read code), as the walker has it */
				err = resolve(d, b.ip, 0);
			if (err >= 0 && b.ninsn) {
				if (st >= 0 || st == -pte_eos) {
					/* taken one step late: at the end of the window
					 * it may have run past the next window's PSB */
					d->pend = b;
					d->have_pend = 1;
				} else {
					err = take_block(d, &b, 0, &reached);
				}
			}
			if (err < 0 && !undecodable(err))
				return err;
			if (undecodable(err))
				st = err;
			if (st >= 0) {
				d->status = st;
				continue;
			}
		}
		if (st == -pte_eos) {
			/* the window's end: its last block waits for the next
			 * window (continue), a new run (set_buffer) or finish */
			if (d->have_pend) {
				d->tail = d->pend;
				d->have_pend = 0;
				d->have_tail = 1;
			}
			d->piece_done = 1;
			return 0;
		}
		err = take_pending(d);
		if (err < 0 && !undecodable(err))
			return err;
		decode_error(d, st);
	}
}

int ptc_blk_decoder_new(struct ptc_blk_decoder **out, const struct ptc_pt_params *p,
			const struct ptc_pt_env *env, int cpu, uint32_t queue_tid)
{
	struct ptc_blk_decoder *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ptc_err_nomem;
	d->p = *p;
	d->env = *env;
	d->cpu = cpu;
	d->qtid = queue_tid;
	ptc_pt_thread_init(&d->orphan, UINT32_MAX, UINT32_MAX, NULL);
	d->thr = &d->orphan;
	ptc_pt_losses_init(&d->ls, &d->by, &d->env, cpu, queue_tid, &d->st, &d->orphan);
	pt_config_init(&d->cfg);
	if (p->cpu_family) {
		d->cfg.cpu.vendor = pcv_intel;
		d->cfg.cpu.family = (uint16_t)p->cpu_family;
		d->cfg.cpu.model = (uint8_t)p->cpu_model;
		d->cfg.cpu.stepping = (uint8_t)p->cpu_stepping;
		if (pt_cpu_errata(&d->cfg.errata, &d->cfg.cpu) < 0)
			memset(&d->cfg.errata, 0, sizeof(d->cfg.errata));
	}
	/* a PSB+ FUP at the IP of the TIP.PGE after it says nothing the
	 * TIP.PGE does not: the workaround is right whatever the CPU (the
	 * walker: bdm70_same()) */
	d->bdm70_own = !d->cfg.errata.bdm70;
	d->cfg.errata.bdm70 = 1;
	d->cfg.mtc_freq = p->mtc_freq;
	d->cfg.nom_freq = p->nom_freq;
	d->cfg.cpuid_0x15_eax = p->tsc_ctc_d;
	d->cfg.cpuid_0x15_ebx = p->tsc_ctc_n;
	d->zy_mode = ptem_unknown;
	zy_mode(d, ptem_64bit);
	*out = d;
	return 0;
}

void ptc_blk_decoder_free(struct ptc_blk_decoder *d)
{
	if (!d)
		return;
	if (d->blk)
		pt_blk_free_decoder(d->blk);
	ptc_pt_thread_fini(&d->orphan);
	free(d->cls);
	free(d);
}

static int new_window(struct ptc_blk_decoder *d, const uint8_t *buf, size_t size, uint64_t offset)
{
	struct pt_image *img;

	d->synced = 0;
	d->min_sync = 0;
	d->piece_done = 0;
	d->status = 0;
	d->base = offset;
	d->end = offset + size;
	d->st.bytes += size;
	if (!size)
		return 0;
	d->cfg.begin = (uint8_t *)buf;
	d->cfg.end = (uint8_t *)buf + size;
	d->blk = pt_blk_alloc_decoder(&d->cfg);
	if (!d->blk)
		return -ptc_err_nomem;
	img = pt_blk_get_image(d->blk);
	if (!img || pt_image_set_callback(img, read_mem, d) < 0)
		return -ptc_err_internal;
	return 0;
}

int ptc_blk_decoder_set_buffer(struct ptc_blk_decoder *d, const uint8_t *buf, size_t size,
			       uint64_t offset, uint64_t lost, int gap_cause, const char *why)
{
	int err;

	if (d->blk) {
		pt_blk_free_decoder(d->blk);
		d->blk = NULL;
	}
	d->continuing = 0;
	err = take_tail(d);
	if (err < 0 && !undecodable(err))
		return err;
	if (lost && !d->loss.active) {
		/* as in the walker: the gap starts where the lost bytes do,
		 * and closing it counts up to where decoding resumes */
		open_gap(d, gap_cause, "%s", why ? why : "trace data missing");
		d->loss.gap.aux_offset = offset - (lost != UINT64_MAX ? lost : 0);
		d->loss.gap.lost_bytes = 0;
	}
	d->hb.active = 0;
	d->enabled = 0;
	return new_window(d, buf, size, offset);
}

int ptc_blk_decoder_continue(struct ptc_blk_decoder *d, const uint8_t *buf, size_t size, uint64_t offset)
{
	if (d->blk) {
		pt_blk_free_decoder(d->blk);
		d->blk = NULL;
	}
	d->continuing = 1;
	return new_window(d, buf, size, offset);
}

int ptc_blk_decoder_finish(struct ptc_blk_decoder *d)
{
	int err = take_tail(d);

	if (err >= 0 || undecodable(err))
		err = resolve(d, 0, 1);

	ptc_pt_loss_to_end(&d->loss, d->end);
	if (err >= 0)
		err = close_gap(d, UINT64_MAX, 0);
	if (d->blk) {
		pt_blk_free_decoder(d->blk);
		d->blk = NULL;
	}
	return err;
}

uint64_t ptc_blk_decoder_time(const struct ptc_blk_decoder *d)
{
	return d->time;
}

uint64_t ptc_blk_decoder_settled_time(const struct ptc_blk_decoder *d)
{
	uint64_t t = d->time;

	if (d->have_pend || d->have_tail || d->hb.active)
		return 0;
	if (d->loss.active && d->loss.gap.time < t)
		t = d->loss.gap.time;
	if (d->by.pending && d->by.gap.time < t)
		t = d->by.gap.time;
	return t;
}

const struct ptc_pt_stats *ptc_blk_decoder_stats(const struct ptc_blk_decoder *d)
{
	return &d->st;
}
