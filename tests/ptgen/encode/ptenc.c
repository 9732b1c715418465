/* ptenc: packet policy of one Intel PT stream (see ptenc.h). */
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "common/error.h"
#include "ptenc.h"

#define CALLSTACK_DEPTH 64	/* the hardware's RET-compression stack */
#define PACKET_ROOM 128		/* bytes kept free in the chunk: one PSB+ fits */
#define SHORT_TNT_BITS 6
#define LONG_TNT_BITS 47

struct ptenc {
	struct ptenc_config cfg;
	struct pt_config ptcfg;
	struct pt_encoder *enc;
	uint8_t *buf;
	uint64_t handed;	/* stream bytes already given to the sink */

	uint64_t next_psb, last_psb;
	uint64_t last_ip;	/* IP compression reference */
	int have_last_ip;	/* cleared at PSB and OVF */
	uint64_t now;		/* TSC of the latest event */

	uint64_t tnt;		/* pending TNT bits, oldest in the highest bit */
	unsigned tnt_bits;

	uint64_t stack[CALLSTACK_DEPTH];	/* ring; top at stack[(bottom + depth - 1) % N] */
	unsigned bottom, depth;

	int enabled;		/* PacketEn: in user mode and tracing */
	unsigned mode;		/* MODE.EXEC's: 32 or 64 (0: 64) */
	int overflow;		/* dropping packets after OVF */
	int stop;		/* 1: not writing (AUX full), 2: restart with PSB+ */
	uint64_t stop_left;	/* bytes still not to be written */

	uint64_t mtc_tick;	/* last crystal tick >> mtc_period announced */
	uint64_t last_timing;	/* TSC of the last TSC or MTC packet */
	uint64_t last_cyc;	/* TSC of the last CYC packet */
	int have_time;

	struct ptenc_stats st;
};

static int hand_chunk(struct ptenc *e)
{
	uint64_t off;
	int err = pt_enc_get_offset(e->enc, &off);

	if (err < 0)
		return -ptc_err_internal;
	if (!off)
		return 0;
	if (e->cfg.sink) {
		err = e->cfg.sink(e->cfg.sink_ctx, e->buf, off, e->handed);
		if (err < 0)
			return err;
	}
	e->handed += off;
	if (pt_enc_sync_set(e->enc, 0) < 0)
		return -ptc_err_internal;
	return 0;
}

uint64_t ptenc_offset(const struct ptenc *e)
{
	uint64_t off = 0;

	pt_enc_get_offset(e->enc, &off);
	return e->handed + off;
}

static int put(struct ptenc *e, const struct pt_packet *pkt)
{
	uint64_t off;
	int n;

	if (pt_enc_get_offset(e->enc, &off) < 0)
		return -ptc_err_internal;
	if (off + PACKET_ROOM > e->cfg.chunk_size) {
		int err = hand_chunk(e);

		if (err)
			return err;
		off = 0;
	}
	n = pt_enc_next(e->enc, pkt);
	if (n < 0)
		return -ptc_err_internal;
	if (e->stop) {
		/* Not written: take the packet back, count it as lost. */
		if (pt_enc_sync_set(e->enc, off) < 0)
			return -ptc_err_internal;
		e->st.bytes_lost += (uint64_t)n;
		if (e->stop == 1 && e->stop_left <= (uint64_t)n)
			e->stop = 2;
		else if (e->stop == 1)
			e->stop_left -= (uint64_t)n;
		return 0;
	}
	e->st.bytes += (uint64_t)n;
	return 0;
}

static int put_simple(struct ptenc *e, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	return put(e, &pkt);
}

int ptenc_new(struct ptenc **out, const struct ptenc_config *cfg)
{
	struct ptenc *e;

	if (!out || !cfg || cfg->chunk_size < 4 * PACKET_ROOM ||
	    cfg->mtc_period > 15 || !cfg->tsc_ctc_ratio || !cfg->psb_period)
		return -ptc_err_invalid;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ptc_err_nomem;
	e->cfg = *cfg;
	e->buf = malloc(cfg->chunk_size);
	if (!e->buf) {
		free(e);
		return -ptc_err_nomem;
	}
	pt_config_init(&e->ptcfg);
	e->ptcfg.begin = e->buf;
	e->ptcfg.end = e->buf + cfg->chunk_size;
	e->enc = pt_alloc_encoder(&e->ptcfg);
	if (!e->enc) {
		free(e->buf);
		free(e);
		return -ptc_err_nomem;
	}
	e->last_psb = UINT64_MAX;
	*out = e;
	return 0;
}

void ptenc_free(struct ptenc *e)
{
	if (!e)
		return;
	pt_free_encoder(e->enc);
	free(e->buf);
	free(e);
}

const struct ptenc_stats *ptenc_stats(const struct ptenc *e)
{
	return &e->st;
}

uint64_t ptenc_last_psb(const struct ptenc *e)
{
	return e->last_psb;
}

int ptenc_enabled(const struct ptenc *e)
{
	return e->enabled;
}

int ptenc_stop(struct ptenc *e, uint64_t bytes)
{
	if (e->stop || e->overflow || !bytes)
		return -ptc_err_invalid;
	e->st.bytes_lost += e->tnt_bits ? 1 + e->tnt_bits / 8 : 0;
	e->tnt = 0;
	e->tnt_bits = 0;
	e->stop = 1;
	e->stop_left = bytes;
	return 0;
}

int ptenc_stopped(const struct ptenc *e)
{
	return e->stop != 0;
}

unsigned ptenc_pending_tnt(const struct ptenc *e)
{
	return e->tnt_bits;
}

int ptenc_in_overflow(const struct ptenc *e)
{
	return e->overflow;
}

/* --- timing -------------------------------------------------------------- */

static int put_tsc_tma(struct ptenc *e, uint64_t tsc)
{
	struct pt_packet pkt;
	uint64_t ctc = tsc / e->cfg.tsc_ctc_ratio;
	int err;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tsc;
	pkt.payload.tsc.tsc = tsc & ((1ULL << 56) - 1);
	err = put(e, &pkt);
	if (err)
		return err;
	e->st.tsc++;
	e->last_timing = tsc;
	e->have_time = 1;
	if (e->cfg.mtc) {
		/* TMA: the crystal clock at the TSC and the TSC ticks since
		 * that crystal tick, so MTCs can be placed in TSC time. */
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_tma;
		pkt.payload.tma.ctc = (uint16_t)ctc;
		pkt.payload.tma.fc = (uint16_t)(tsc % e->cfg.tsc_ctc_ratio);
		err = put(e, &pkt);
		if (err)
			return err;
		e->st.tma++;
		e->mtc_tick = ctc >> e->cfg.mtc_period;
	}
	return 0;
}

/* Timing packets due before a packet written at time tsc. */
static int put_timing(struct ptenc *e, uint64_t tsc, int cyc_eligible)
{
	struct pt_packet pkt;
	int err;

	if (e->cfg.mtc && e->have_time) {
		uint64_t tick = (tsc / e->cfg.tsc_ctc_ratio) >> e->cfg.mtc_period;

		/* More than 255 periods would wrap the 8-bit MTC payload: a
		 * TSC (and TMA) says the time unambiguously. */
		if (tick > e->mtc_tick + 255 && e->cfg.tsc) {
			err = put_tsc_tma(e, tsc);
			if (err)
				return err;
		}
		while (e->mtc_tick < tick) {
			e->mtc_tick++;
			memset(&pkt, 0, sizeof(pkt));
			pkt.type = ppt_mtc;
			pkt.payload.mtc.ctc = (uint8_t)e->mtc_tick;
			err = put(e, &pkt);
			if (err)
				return err;
			e->st.mtc++;
			e->last_timing = tsc;
		}
	}
	if (e->cfg.cyc && cyc_eligible && e->have_time && tsc > e->last_cyc) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_cyc;
		/* Core cycles = TSC ticks * CBR / max non-turbo ratio; the
		 * model runs at the nominal frequency, so one per tick. */
		pkt.payload.cyc.value = tsc - e->last_cyc;
		err = put(e, &pkt);
		if (err)
			return err;
		e->st.cyc++;
	}
	if (e->cfg.cyc && cyc_eligible)
		e->last_cyc = tsc;
	return 0;
}

/* --- control flow ---------------------------------------------------------- */

static int flush_tnt(struct ptenc *e, uint64_t tsc)
{
	struct pt_packet pkt;
	int err;

	if (!e->tnt_bits)
		return 0;
	err = put_timing(e, tsc, 1);
	if (err)
		return err;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = e->tnt_bits <= SHORT_TNT_BITS ? ppt_tnt_8 : ppt_tnt_64;
	pkt.payload.tnt.bit_size = (uint8_t)e->tnt_bits;
	pkt.payload.tnt.payload = e->tnt;
	e->tnt = 0;
	e->tnt_bits = 0;
	e->st.tnt_packets++;
	return put(e, &pkt);
}

static int add_tnt(struct ptenc *e, uint64_t tsc, int taken)
{
	e->tnt = (e->tnt << 1) | (taken ? 1 : 0);
	e->tnt_bits++;
	e->st.tnt_bits++;
	if (e->tnt_bits == (e->cfg.long_tnt ? LONG_TNT_BITS : SHORT_TNT_BITS))
		return flush_tnt(e, tsc);
	return 0;
}

/* The smallest IP compression that lets the decoder rebuild ip from the
 * last IP. */
static enum pt_ip_compression choose_ipc(const struct ptenc *e, uint64_t ip)
{
	uint64_t last = e->last_ip;

	/* Without a reference (after PSB or OVF) the IP goes in full. */
	if (!e->have_last_ip)
		return ((int64_t)(ip << 16) >> 16) == (int64_t)ip ?
			pt_ipc_sext_48 : pt_ipc_full;
	if ((last >> 16) == (ip >> 16))
		return pt_ipc_update_16;
	if ((last >> 32) == (ip >> 32))
		return pt_ipc_update_32;
	if ((last >> 48) == (ip >> 48))
		return pt_ipc_update_48;
	if (((int64_t)(ip << 16) >> 16) == (int64_t)ip)
		return pt_ipc_sext_48;
	return pt_ipc_full;
}

static int put_ip(struct ptenc *e, uint64_t tsc, enum pt_packet_type type,
		  uint64_t ip, int suppressed)
{
	struct pt_packet pkt;
	int err = flush_tnt(e, tsc);

	if (!err)
		err = put_timing(e, tsc, 1);
	if (err)
		return err;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	if (suppressed) {
		pkt.payload.ip.ipc = pt_ipc_suppressed;
	} else {
		pkt.payload.ip.ipc = choose_ipc(e, ip);
		pkt.payload.ip.ip = ip;
		e->last_ip = ip;
		e->have_last_ip = 1;
	}
	switch (type) {
	case ppt_tip: e->st.tip++; break;
	case ppt_fup: e->st.fup++; break;
	case ppt_tip_pge: e->st.tip_pge++; break;
	case ppt_tip_pgd: e->st.tip_pgd++; break;
	default: break;
	}
	return put(e, &pkt);
}

static int put_mode_exec(struct ptenc *e)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec = pt_set_exec_mode(e->mode == 32 ? ptem_32bit : ptem_64bit);
	e->st.mode_exec++;
	return put(e, &pkt);
}

void ptenc_set_mode(struct ptenc *e, unsigned bits)
{
	e->mode = bits;
}

static void stack_clear(struct ptenc *e)
{
	e->bottom = 0;
	e->depth = 0;
}

static void stack_push(struct ptenc *e, uint64_t ret)
{
	if (e->depth == CALLSTACK_DEPTH) {
		/* Full: the oldest entry is lost. */
		e->bottom = (e->bottom + 1) % CALLSTACK_DEPTH;
		e->depth--;
		e->st.callstack_dropped++;
	}
	e->stack[(e->bottom + e->depth) % CALLSTACK_DEPTH] = ret;
	e->depth++;
}

/* PSB+: a synchronisation point.  The decoders restart here with an empty
 * call stack and no last IP, so the encoder forgets both too. */
static int put_psb_plus(struct ptenc *e, uint64_t tsc, uint64_t ip)
{
	struct pt_packet pkt;
	int err = flush_tnt(e, tsc);

	if (err)
		return err;
	/* Keep PSB+ inside one chunk. */
	if (e->cfg.chunk_size - (ptenc_offset(e) - e->handed) < PACKET_ROOM) {
		err = hand_chunk(e);
		if (err)
			return err;
	}
	e->stop = 0;
	e->last_psb = ptenc_offset(e);
	e->next_psb = e->last_psb + e->cfg.psb_period;
	err = put_simple(e, ppt_psb);
	if (err)
		return err;
	e->st.psb++;
	e->last_ip = 0;
	e->have_last_ip = 0;
	stack_clear(e);
	if (e->cfg.tsc) {
		err = put_tsc_tma(e, tsc);
		if (err)
			return err;
	}
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_cbr;
	pkt.payload.cbr.ratio = (uint8_t)e->cfg.cbr;
	err = put(e, &pkt);
	if (err)
		return err;
	e->st.cbr++;
	if (e->enabled) {
		err = put_mode_exec(e);
		if (err)
			return err;
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_fup;
		pkt.payload.ip.ipc = choose_ipc(e, ip);
		pkt.payload.ip.ip = ip;
		e->last_ip = ip;
		e->have_last_ip = 1;
		err = put(e, &pkt);
		if (err)
			return err;
		e->st.fup++;
	}
	return put_simple(e, ppt_psbend);
}

static int maybe_psb(struct ptenc *e, uint64_t tsc, uint64_t ip)
{
	if (e->stop == 1)
		return 0;
	if (e->stop == 2) {
		/* Writing again: whatever was pending is lost. */
		e->tnt_bits = 0;
		e->tnt = 0;
		return put_psb_plus(e, tsc, ip);
	}
	if (ptenc_offset(e) + (e->tnt_bits ? 8 : 0) < e->next_psb)
		return 0;
	return put_psb_plus(e, tsc, ip);
}

int ptenc_start(struct ptenc *e, uint64_t tsc)
{
	e->enabled = 0;
	e->last_cyc = tsc;
	e->now = tsc;
	return put_psb_plus(e, tsc, 0);
}

int ptenc_branch(struct ptenc *e, uint64_t tsc, enum ptenc_kind kind,
		 uint64_t ip, uint64_t target, int taken, unsigned len)
{
	int err;

	e->now = tsc;

	if (e->overflow)
		return 0;
	if (!e->enabled)
		return -ptc_err_invalid;
	err = maybe_psb(e, tsc, ip);
	if (err)
		return err;
	switch (kind) {
	case PTENC_COND:
		return add_tnt(e, tsc, taken);
	case PTENC_JMP:
		return 0;
	case PTENC_CALL:
		stack_push(e, ip + len);
		return 0;
	case PTENC_CALL_IND:
		stack_push(e, ip + len);
		return put_ip(e, tsc, ppt_tip, target, 0);
	case PTENC_JMP_IND:
		return put_ip(e, tsc, ppt_tip, target, 0);
	case PTENC_RET:
		if (e->cfg.retcomp && e->depth &&
		    e->stack[(e->bottom + e->depth - 1) % CALLSTACK_DEPTH] == target) {
			e->depth--;
			e->st.ret_compressed++;
			return add_tnt(e, tsc, 1);
		}
		/* A return that does not go where the matching call came
		 * from (longjmp, stack switch): an uncompressed TIP.  The
		 * stack is forgotten so that no later compressed return can
		 * depend on whether a decoder popped its own stack here. */
		if (e->depth)
			stack_clear(e);
		return put_ip(e, tsc, ppt_tip, target, 0);
	case PTENC_FAR:
		return ptenc_far_exit(e, tsc);
	}
	return -ptc_err_invalid;
}

int ptenc_far_exit(struct ptenc *e, uint64_t tsc)
{
	int err;

	e->now = tsc;

	if (e->overflow) {
		e->enabled = 0;
		return 0;
	}
	if (!e->enabled)
		return -ptc_err_invalid;
	err = put_ip(e, tsc, ppt_tip_pgd, 0, 1);
	e->enabled = 0;
	return err;
}

int ptenc_async_exit(struct ptenc *e, uint64_t tsc, uint64_t ip)
{
	int err;

	e->now = tsc;

	if (e->overflow) {
		e->enabled = 0;
		return 0;
	}
	if (!e->enabled)
		return -ptc_err_invalid;
	err = put_ip(e, tsc, ppt_fup, ip, 0);
	if (!err)
		err = put_ip(e, tsc, ppt_tip_pgd, 0, 1);
	e->enabled = 0;
	return err;
}

int ptenc_resume(struct ptenc *e, uint64_t tsc, uint64_t ip)
{
	int err;

	e->now = tsc;

	if (e->overflow) {
		e->enabled = 1;
		return 0;
	}
	if (e->enabled)
		return -ptc_err_invalid;
	err = maybe_psb(e, tsc, ip);
	if (err)
		return err;
	/* Packets stopped while in the kernel (no MTC either): the time at
	 * which user mode resumes comes with a TSC (and TMA). */
	if (e->cfg.tsc) {
		err = put_tsc_tma(e, tsc);
		if (err)
			return err;
	}
	err = put_timing(e, tsc, 0);
	if (!err)
		err = put_mode_exec(e);
	if (!err)
		err = put_ip(e, tsc, ppt_tip_pge, ip, 0);
	e->enabled = 1;
	return err;
}

int ptenc_overflow(struct ptenc *e, uint64_t tsc)
{
	int err;

	e->now = tsc;

	if (e->overflow)
		return 0;
	err = flush_tnt(e, tsc);
	if (err)
		return err;
	err = put_simple(e, ppt_ovf);
	e->st.ovf++;
	e->overflow = 1;
	e->last_ip = 0;
	e->have_last_ip = 0;
	stack_clear(e);
	return err;
}

int ptenc_overflow_end(struct ptenc *e, uint64_t tsc, uint64_t ip, int in_user)
{
	if (!e->overflow)
		return -ptc_err_invalid;
	e->overflow = 0;
	e->enabled = in_user;
	if (!in_user)
		return 0;
	/* The FUP after OVF carries the IP where tracing resumes, in full:
	 * the decoder has lost its last IP. */
	return put_ip(e, tsc, ppt_fup, ip, 0);
}

int ptenc_flush(struct ptenc *e)
{
	int err = flush_tnt(e, e->now);

	if (err)
		return err;
	return hand_chunk(e);
}
