/* ptconv's own query decoder over libipt's packet decoder; see fastq.h.
 *
 * The answers must be libipt's, word for word: the walker's gaps, times and
 * offsets come from them.  So this follows the rules libipt's query decoder
 * applies (Intel SDM, "Intel Processor Trace", as libipt reads it), for the
 * packets it handles:
 *
 *  - The decoder reads ahead to the next packet that answers a query (TNT,
 *    TIP) or starts an event, applying timing and other status packets on
 *    the way; the status of a query says whether an event or the end comes
 *    next, but only once the cached TNT bits are used up.
 *  - Events bind to a later packet: MODE.Exec and a FUP (an asynchronous
 *    branch) to the next TIP, TIP.PGE or TIP.PGD; PSB+'s MODE and CBR to its
 *    PSBEND.  A packet with events bound to it is decoded once per event and
 *    consumed with the last.
 *  - A PSB+ resets the last IP; its FUP says whether tracing is on.
 *  - Time: TSC sets it; TMA gives the crystal clock (CTC) at that TSC; each
 *    MTC then adds the CTC periods since the previous one, converted with
 *    CPUID 0x15's ratio.  A query's time is the time before the packet that
 *    answered it was read ahead of.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/table256.h"
#include "decoders/intel_pt/fastq.h"

/* Payload sizes of MTC and TMA's CTC field, in bits. */
#define MTC_BITS 8
#define TMA_CTC_BITS 16
#define PSB_SIZE 16
#define PSBEND_SIZE 2

/* ---- fetching the next packet ---- */

/* Little-endian value of the n (at most 8) bytes at p, of which avail are
 * in the buffer: one load when 8 are. */
static inline uint64_t le(const uint8_t *p, unsigned n, uint64_t avail)
{
	uint64_t v = 0;

	if (avail >= 8)
		return n >= 8 ? ptc_le64(p) : ptc_le64(p) & ((1ull << (8 * n)) - 1);
	while (n--)
		v = (v << 8) | p[n];
	return v;
}

/* The size of a packet of those that make up most of a trace (TNT-8, PAD,
 * MTC, TSC, TIP, TIP.PGE, TIP.PGD, FUP) by its first byte; 0 for the
 * others (CYC, extended opcodes, ...), which the packet decoder reads.  A
 * constant expression, so that a table holds it: one load per packet
 * rather than a chain of tests. */
#define IP_PACKET_SIZE(ipc) ((ipc) == 0 ? 1 : (ipc) == 1 ? 3 : (ipc) == 2 ? 5 : (ipc) == 3 || (ipc) == 4 ? 7 \
			     : (ipc) == 6 ? 9 : 0)
#define IS_IP_PACKET(o) (((o) & 0x1f) == 0x0d || ((o) & 0x1f) == 0x11 || ((o) & 0x1f) == 0x01 || \
			 ((o) & 0x1f) == 0x1d)
#define COMMON_SIZE(o) (!((o) & 1) ? ((o) != 2)		/* TNT-8 or PAD; 0x02 begins an extended opcode */ \
			: (o) == 0x59 ? 2				/* MTC */ \
			: (o) == 0x19 ? 8				/* TSC */ \
			: ((o) & 3) == 3 ? 0				/* CYC */ \
			: IS_IP_PACKET(o) ? IP_PACKET_SIZE((o) >> 5) : 0)
static const uint8_t common_sizes[256] = PTC_TABLE256(COMMON_SIZE);

/* The size of the packet at p when it is one of those; 0 for another
 * packet, or one cut by the end, which the packet decoder reads. */
static inline unsigned common_size(const uint8_t *p, uint64_t avail)
{
	unsigned n = common_sizes[p[0]];

	return n <= avail ? n : 0;
}

/* Those packets, read here rather than through the packet decoder's
 * dispatch (3-4 times faster per packet; the lockstep test compares the
 * result with libipt's); 0 for the others. */
static inline __attribute__((always_inline)) int parse_common(struct pt_packet *pk, const uint8_t *p, uint64_t avail)
{
	uint8_t opc = p[0];
	unsigned n = common_size(p, avail);

	if (!n)
		return 0;
	if (!(opc & 1)) {
		if (opc) {
			ptc_fq_parse_tnt_8(pk, opc);
		} else {
			pk->size = 1;
			pk->type = ppt_pad;
		}
		return 1;
	}
	pk->size = (uint8_t)n;
	if (opc == 0x59) {
		pk->type = ppt_mtc;
		pk->payload.mtc.ctc = p[1];
		return 1;
	}
	if (opc == 0x19) {
		pk->type = ppt_tsc;
		pk->payload.tsc.tsc = le(p + 1, 7, avail - 1);
		return 1;
	}
	switch (opc & 0x1f) {
	case 0x0d: pk->type = ppt_tip; break;
	case 0x11: pk->type = ppt_tip_pge; break;
	case 0x01: pk->type = ppt_tip_pgd; break;
	default: pk->type = ppt_fup; break;
	}
	pk->payload.ip.ipc = (enum pt_ip_compression)(opc >> 5);
	pk->payload.ip.ip = le(p + 1, n - 1, avail - 1);
	return 1;
}

/* (inlined: called for every packet) */
static inline __attribute__((always_inline)) void fetch(struct ptc_fq *q)
{
	int n;

	if (q->next_pos == q->pos)
		return;
	if (q->pos < q->size && parse_common(&q->next, q->cfg.begin + q->pos, q->size - q->pos)) {
		q->next_pos = q->pos;
		q->next_err = 0;
		return;
	}
	/* (pos never passes the end, so placing the decoder cannot fail) */
	n = pt_pkt_sync_set(q->pk, q->pos);
	if (n >= 0)
		n = pt_pkt_next(q->pk, &q->next, sizeof(q->next));
	q->next_pos = q->pos;
	q->next_err = n < 0 ? n : 0;
}

static void consume(struct ptc_fq *q)
{
	q->pos += q->next.size;
}

/* ---- the event queue ---- */

static struct pt_event *enqueue(struct ptc_fq *q, int bin)
{
	uint8_t idx = q->qend[bin], end = (uint8_t)((idx + 1) % PTC_FQ_QUEUE);

	/* one slot stays free, as in libipt: a full bin is an error */
	if (q->qbegin[bin] == (end + 1) % PTC_FQ_QUEUE)
		return NULL;
	q->qend[bin] = end;
	memset(&q->queue[bin][idx], 0, sizeof(q->queue[bin][idx]));
	return &q->queue[bin][idx];
}

static struct pt_event *dequeue(struct ptc_fq *q, int bin)
{
	uint8_t b = q->qbegin[bin];

	if (b == q->qend[bin])
		return NULL;
	q->qbegin[bin] = (uint8_t)((b + 1) % PTC_FQ_QUEUE);
	return &q->queue[bin][b];
}

static int pending(const struct ptc_fq *q, int bin)
{
	return q->qbegin[bin] != q->qend[bin];
}

static struct pt_event *standalone(struct ptc_fq *q)
{
	memset(&q->standalone, 0, sizeof(q->standalone));
	return &q->standalone;
}

/* ---- last IP ---- */

static int ip_update(struct ptc_fq *q, const struct pt_packet_ip *p)
{
	return ptc_last_ip_update(&q->lip, p);
}

static int ip_query(const struct ptc_fq *q, uint64_t *ip)
{
	if (!q->lip.have) {
		if (ip)
			*ip = 0;
		return -pte_noip;
	}
	if (q->lip.suppressed) {
		if (ip)
			*ip = 0;
		return -pte_ip_suppressed;
	}
	if (ip)
		*ip = q->lip.ip;
	return 0;
}

/* An event's IP, or its ip_suppressed flag when there is none. */
static int event_ip(const struct ptc_fq *q, struct pt_event *ev, uint64_t *ip)
{
	int err = ip_query(q, ip);

	if (err == -pte_noip || err == -pte_ip_suppressed) {
		ev->ip_suppressed = 1;
		return 0;
	}
	return err;
}

/* ---- time ---- */

static void event_time(const struct ptc_fq *q, struct pt_event *ev)
{
	ev->tsc = q->time.tsc;
	ev->lost_mtc = q->time.lost_mtc;
	ev->lost_cyc = 0;
	ev->has_tsc = q->time.have_tsc;
}

static void time_tsc(struct ptc_fq_time *t, uint64_t tsc)
{
	t->have_tsc = 1;
	t->have_tma = 0;
	t->have_mtc = 0;
	t->tsc = t->base = tsc;
	t->ctc = 0;
	t->fc = 0;
	t->lost_mtc = 0;
}

static int time_tma(struct ptc_fq *q, const struct pt_packet_tma *p)
{
	struct ptc_fq_time *t = &q->time;
	uint32_t hi = q->cfg.mtc_freq + MTC_BITS;

	if (!t->have_tsc || t->have_tma)
		return -pte_bad_context;
	if (t->have_mtc)
		return -pte_internal;
	t->have_tma = 1;
	t->base -= p->fc;
	t->fc += p->fc;
	/* A TMA whose CTC field holds every bit an MTC has counts as one. */
	if (hi <= TMA_CTC_BITS)
		t->have_mtc = 1;
	t->ctc = p->ctc & ((1u << hi) - 1u);
	return 0;
}

static int time_mtc(struct ptc_fq *q, const struct pt_packet_mtc *p)
{
	struct ptc_fq_time *t = &q->time;
	uint8_t freq = q->cfg.mtc_freq;
	uint32_t last = t->ctc, ctc = (uint32_t)p->ctc << freq, delta;
	int had_mtc = t->have_mtc;
	uint64_t fc;

	if (t->have_tsc && !t->have_tma)
		return 0;	/* no CTC to count from since the TSC */
	t->have_mtc = 1;
	t->fc = 0;
	t->ctc = ctc;
	if (!had_mtc) {
		/* The first MTC after a TMA: the TMA gave the CTC's low 16
		 * bits; this MTC's bits above them say which period it was
		 * in (one earlier when the low bits went backwards). */
		uint32_t lo, hi;

		if (!t->have_tma)
			return 0;
		if (last & ~((1u << TMA_CTC_BITS) - 1u))
			return -pte_internal;
		lo = ctc & ((1u << TMA_CTC_BITS) - 1u);
		hi = ctc & ~((1u << TMA_CTC_BITS) - 1u);
		if (lo < last) {
			hi -= 1u << TMA_CTC_BITS;
			hi &= ((1u << MTC_BITS) - 1u) << freq;
		}
		last |= hi;
	}
	if (ctc < last) {
		/* the MTC counter wrapped (once) */
		ctc += 1u << (freq + MTC_BITS);
		if (ctc < last) {
			t->lost_mtc++;
			return -pte_bad_packet;
		}
	}
	delta = ctc - last;
	if (!q->cfg.cpuid_0x15_eax || !q->cfg.cpuid_0x15_ebx)
		return 0;	/* no CTC:TSC ratio: the time stays */
	fc = ((uint64_t)delta * q->cfg.cpuid_0x15_ebx) / q->cfg.cpuid_0x15_eax;
	t->tsc = t->base = t->base + fc;
	return 0;
}

static int time_cbr(struct ptc_fq *q, const struct pt_packet_cbr *p)
{
	if (!p->ratio)
		return -pte_bad_packet;
	q->time.have_cbr = 1;
	q->time.cbr = p->ratio;
	return 0;
}

/* ---- what the next packet is to a query ---- */

static int is_branch_packet(const struct pt_packet *p)
{
	return p->type == ppt_tip || p->type == ppt_tnt_8 || p->type == ppt_tnt_64;
}

/* Does the next packet produce an event? */
static int will_event(const struct ptc_fq *q)
{
	if (q->next_err)
		return 0;
	switch (q->next.type) {
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_mode:
	case ppt_cbr:
	case ppt_ovf:
	case ppt_pip:
	case ppt_stop:
	case ppt_vmcs:
	case ppt_mnt:
	case ppt_exstop:
	case ppt_mwait:
	case ppt_pwre:
	case ppt_pwrx:
	case ppt_ptw:
		return 1;
	case ppt_psbend:
		return pending(q, PTC_FQ_PSBEND);
	case ppt_tip:
		return pending(q, PTC_FQ_TIP);
	case ppt_fup:
		return pending(q, PTC_FQ_FUP);
	default:
		return 0;
	}
}

static int status_flags(const struct ptc_fq *q)
{
	int flags = 0;

	if (!q->tnt_index) {
		if (will_event(q))
			flags |= pts_event_pending;
		if (q->next_err == -pte_eos)
			flags |= pts_eos;
	}
	return flags;
}

int ptc_fq_status_full(const struct ptc_fq *q)
{
	return status_flags(q);
}

/* ---- decoding one packet ---- */

static int decode_psb(struct ptc_fq *q);

static int decode_tip(struct ptc_fq *q)
{
	struct pt_event *ev;
	int err = ip_update(q, &q->next.payload.ip);

	if (err < 0)
		return err;
	ev = dequeue(q, PTC_FQ_TIP);
	if (ev) {
		switch (ev->type) {
		case ptev_async_branch:
			q->consume_packet = 1;
			err = event_ip(q, ev, &ev->variant.async_branch.to);
			break;
		case ptev_exec_mode:
			err = event_ip(q, ev, &ev->variant.exec_mode.ip);
			break;
		default:
			return -pte_bad_context;
		}
		if (err < 0)
			return err;
		q->event = ev;
		if (pending(q, PTC_FQ_TIP) || !q->consume_packet)
			return 0;
		q->consume_packet = 0;
	}
	consume(q);
	return 0;
}

static int decode_tnt(struct ptc_fq *q)
{
	const struct pt_packet_tnt *p = &q->next.payload.tnt;

	if (q->tnt_index)
		return -pte_bad_context;
	if (!p->bit_size)
		return -pte_bad_packet;
	ptc_fq_cache_tnt(q);
	return 0;
}

static int decode_tip_pge(struct ptc_fq *q)
{
	struct pt_event *ev;
	int err = ip_update(q, &q->next.payload.ip);

	if (err < 0)
		return err;
	if (!q->consume_packet) {
		ev = standalone(q);
		ev->type = ptev_enabled;
		if (ip_query(q, &ev->variant.enabled.ip) < 0)
			return -pte_bad_packet;
		event_time(q, ev);
		q->tnt_index = 0;
		q->tnt = 0;
		q->consume_packet = 1;
		q->enabled = 1;
	} else {
		ev = dequeue(q, PTC_FQ_TIP);
		if (!ev)
			return -pte_internal;
		if (ev->type != ptev_exec_mode)
			return -pte_bad_context;
		err = event_ip(q, ev, &ev->variant.exec_mode.ip);
		if (err < 0)
			return err;
	}
	q->event = ev;
	if (pending(q, PTC_FQ_TIP))
		return 0;
	q->consume_packet = 0;
	consume(q);
	return 0;
}

static int decode_tip_pgd(struct ptc_fq *q)
{
	struct pt_event *ev;
	int err = ip_update(q, &q->next.payload.ip);

	if (err < 0)
		return err;
	ev = dequeue(q, PTC_FQ_TIP);
	if (ev) {
		switch (ev->type) {
		case ptev_async_branch: {
			/* an interrupt that left the traced context */
			uint64_t at = ev->variant.async_branch.from;
			ev->type = ptev_async_disabled;
			ev->variant.async_disabled.at = at;
			err = event_ip(q, ev, &ev->variant.async_disabled.ip);
			if (err < 0)
				return err;
			break;
		}
		case ptev_exec_mode:
			ev->ip_suppressed = 1;
			break;
		default:
			return -pte_bad_context;
		}
	} else {
		ev = standalone(q);
		ev->type = ptev_disabled;
		err = event_ip(q, ev, &ev->variant.disabled.ip);
		if (err < 0)
			return err;
		event_time(q, ev);
	}
	q->event = ev;
	if (pending(q, PTC_FQ_TIP))
		return 0;
	q->enabled = 0;
	consume(q);
	return 0;
}

static int decode_fup(struct ptc_fq *q)
{
	struct pt_event *ev;
	uint64_t ip;
	int err = ip_update(q, &q->next.payload.ip);

	if (err < 0)
		return err;
	ev = dequeue(q, PTC_FQ_FUP);
	if (ev) {
		if (ev->type != ptev_tsx)
			return -pte_internal;
		if (!ev->variant.tsx.aborted)
			q->consume_packet = 1;
		err = event_ip(q, ev, &ev->variant.tsx.ip);
		if (err < 0)
			return err;
		q->event = ev;
		if (pending(q, PTC_FQ_FUP) || !q->consume_packet)
			return 0;
		q->consume_packet = 0;
	} else {
		/* an asynchronous branch from ip: bound to the next TIP */
		err = ip_query(q, &ip);
		if (err < 0)
			return err;
		ev = enqueue(q, PTC_FQ_TIP);
		if (!ev)
			return -pte_nomem;
		ev->type = ptev_async_branch;
		ev->variant.async_branch.from = ip;
		event_time(q, ev);
	}
	consume(q);
	return 0;
}

static int decode_mode(struct ptc_fq *q)
{
	const struct pt_packet_mode *p = &q->next.payload.mode;
	struct pt_event *ev;

	switch (p->leaf) {
	case pt_mol_exec:
		ev = enqueue(q, PTC_FQ_TIP);
		if (!ev)
			return -pte_nomem;
		ev->type = ptev_exec_mode;
		ev->variant.exec_mode.mode = pt_get_exec_mode(&p->bits.exec);
		event_time(q, ev);
		break;
	case pt_mol_tsx:
		if (!q->enabled) {
			ev = standalone(q);
			ev->variant.tsx.ip = 0;
			ev->ip_suppressed = 1;
			q->event = ev;
		} else {
			ev = enqueue(q, PTC_FQ_FUP);
			if (!ev)
				return -pte_nomem;
		}
		ev->type = ptev_tsx;
		ev->variant.tsx.speculative = p->bits.tsx.intx;
		ev->variant.tsx.aborted = p->bits.tsx.abrt;
		event_time(q, ev);
		break;
	}
	consume(q);
	return 0;
}

static int decode_psbend(struct ptc_fq *q)
{
	struct pt_event *ev = dequeue(q, PTC_FQ_PSBEND);
	int err = 0;

	if (!ev) {
		consume(q);
		return 0;
	}
	/* PSB+'s state, handed out as status updates at its end */
	ev->status_update = 1;
	event_time(q, ev);
	switch (ev->type) {
	case ptev_exec_mode:
		err = event_ip(q, ev, &ev->variant.exec_mode.ip);
		break;
	case ptev_tsx:
		err = event_ip(q, ev, &ev->variant.tsx.ip);
		break;
	case ptev_cbr:
		break;
	default:
		return -pte_internal;
	}
	if (err < 0)
		return err;
	q->event = ev;
	return 0;
}

static int decode_cbr(struct ptc_fq *q)
{
	struct pt_event *ev;
	int err = time_cbr(q, &q->next.payload.cbr);

	if (err < 0)
		return err;
	ev = standalone(q);
	ev->type = ptev_cbr;
	ev->variant.cbr.ratio = q->next.payload.cbr.ratio;
	q->event = ev;
	event_time(q, ev);
	consume(q);
	return 0;
}

/* A status packet: timing or padding. */
static int decode_status(struct ptc_fq *q)
{
	int err = 0;

	switch (q->next.type) {
	case ppt_pad:
		break;
	case ppt_tsc:
		time_tsc(&q->time, q->next.payload.tsc.tsc);
		break;
	case ppt_tma:
		err = time_tma(q, &q->next.payload.tma);
		break;
	case ppt_mtc:
		err = time_mtc(q, &q->next.payload.mtc);
		break;
	default:
		return -pte_internal;
	}
	if (err < 0)
		return err;
	consume(q);
	return 0;
}

/* libipt's decode function of the next packet. */
static int decode(struct ptc_fq *q)
{
	switch (q->next.type) {
	case ppt_pad:
	case ppt_tsc:
	case ppt_tma:
	case ppt_mtc:
		return decode_status(q);
	case ppt_psb:
		return decode_psb(q);
	case ppt_psbend:
		return decode_psbend(q);
	case ppt_tip:
		return decode_tip(q);
	case ppt_tnt_8:
	case ppt_tnt_64:
		return decode_tnt(q);
	case ppt_tip_pge:
		return decode_tip_pge(q);
	case ppt_tip_pgd:
		return decode_tip_pgd(q);
	case ppt_fup:
		return decode_fup(q);
	case ppt_mode:
		return decode_mode(q);
	case ppt_cbr:
		return decode_cbr(q);
	default:
		/* not handled here: ptc_fq_supported() keeps such streams
		 * from this decoder */
		return -pte_internal;
	}
}

/* Does a TIP.PGE follow at off, with nothing but the rest of PSB+ and
 * timing or mode packets before it?  1 yes, 0 no, <0 error. */
static int bdm70_applies(struct ptc_fq *q, uint64_t off)
{
	struct pt_packet p;
	int n;

	if (!q->scan) {
		q->scan = pt_pkt_alloc_decoder(&q->cfg);
		if (!q->scan)
			return -pte_nomem;
	}
	if (pt_pkt_sync_set(q->scan, off) < 0)
		return 0;
	for (;;) {
		n = pt_pkt_next(q->scan, &p, sizeof(p));
		if (n < 0)
			return n == -pte_eos ? 0 : n;
		switch (p.type) {
		case ppt_tip_pge:
			return 1;
		case ppt_pad:
		case ppt_tsc:
		case ppt_cbr:
		case ppt_psbend:
		case ppt_pip:
		case ppt_mode:
		case ppt_vmcs:
		case ppt_tma:
		case ppt_mtc:
		case ppt_cyc:
		case ppt_mnt:
			continue;
		default:
			return 0;
		}
	}
}

/* One packet of a PSB+ header. */
static int decode_header(struct ptc_fq *q)
{
	const struct pt_packet *p = &q->next;
	struct pt_event *ev;
	int err;

	switch (p->type) {
	case ppt_pad:
	case ppt_tma:
	case ppt_mtc:
		return decode_status(q);
	case ppt_fup:
		if (q->cfg.errata.bdm70 && !q->enabled) {
			/* BDM70: a PSB+ right before tracing is enabled may
			 * hold a FUP although tracing is off; it is ignored */
			err = bdm70_applies(q, q->pos + p->size);
			if (err < 0)
				return err;
			if (err) {
				consume(q);
				return 0;
			}
		}
		err = ip_update(q, &p->payload.ip);
		if (err < 0)
			return err;
		/* an IP in PSB+ says tracing is on */
		if (p->payload.ip.ipc != pt_ipc_suppressed)
			q->enabled = 1;
		consume(q);
		return 0;
	case ppt_mode:
		ev = enqueue(q, PTC_FQ_PSBEND);
		if (!ev)
			return -pte_nomem;
		if (p->payload.mode.leaf == pt_mol_exec) {
			ev->type = ptev_exec_mode;
			ev->variant.exec_mode.mode = pt_get_exec_mode(&p->payload.mode.bits.exec);
		} else if (p->payload.mode.leaf == pt_mol_tsx) {
			ev->type = ptev_tsx;
			ev->variant.tsx.speculative = p->payload.mode.bits.tsx.intx;
			ev->variant.tsx.aborted = p->payload.mode.bits.tsx.abrt;
		}
		consume(q);
		return 0;
	case ppt_tsc:
		time_tsc(&q->time, p->payload.tsc.tsc);
		consume(q);
		return 0;
	case ppt_cbr:
		err = time_cbr(q, &p->payload.cbr);
		if (err < 0)
			return err;
		ev = enqueue(q, PTC_FQ_PSBEND);
		if (!ev)
			return -pte_nomem;
		ev->type = ptev_cbr;
		ev->variant.cbr.ratio = p->payload.cbr.ratio;
		consume(q);
		return 0;
	case ppt_psb:
	case ppt_psbend:
	case ppt_tip:
	case ppt_tnt_8:
	case ppt_tnt_64:
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_ovf:
	case ppt_stop:
	case ppt_exstop:
	case ppt_mwait:
	case ppt_pwre:
	case ppt_pwrx:
	case ppt_ptw:
		return -pte_bad_context;	/* not allowed in PSB+ */
	default:
		return -pte_internal;
	}
}

static int decode_psb(struct ptc_fq *q)
{
	uint64_t at = q->pos;
	int err;

	q->pos += PSB_SIZE;
	ptc_last_ip_reset(&q->lip);
	for (;;) {
		fetch(q);
		err = q->next_err;
		if (!err) {
			if (q->next.type == ppt_psbend)
				return 0;
			err = decode_header(q);
		}
		if (err) {
			/* not a usable PSB+: back to its start */
			q->pos = at;
			q->qbegin[PTC_FQ_PSBEND] = q->qend[PTC_FQ_PSBEND] = 0;
			fetch(q);
			return err;
		}
	}
}

/* ---- reading ahead ---- */

static int read_ahead(struct ptc_fq *q)
{
	for (;;) {
		int err;

		fetch(q);
		if (q->next_err)
			return q->next_err;
		if (is_branch_packet(&q->next) || will_event(q))
			return 0;
		err = decode(q);
		if (err) {
			/* a PSB+ cut by the end: nothing more to read */
			if (err == -pte_eos) {
				q->pos = q->size;
				q->next_pos = q->pos;
				q->next_err = -pte_eos;
			}
			return err;
		}
	}
}

int ptc_fq_read_ahead(struct ptc_fq *q)
{
	return read_ahead(q);
}

static int start(struct ptc_fq *q, uint64_t at, uint64_t *addr)
{
	int status, err;

	q->enabled = 0;
	q->consume_packet = 0;
	q->event = NULL;
	ptc_last_ip_reset(&q->lip);
	q->tnt = q->tnt_index = 0;
	memset(&q->time, 0, sizeof(q->time));
	memset(&q->last_time, 0, sizeof(q->last_time));
	memset(q->qbegin, 0, sizeof(q->qbegin));
	memset(q->qend, 0, sizeof(q->qend));
	q->sync = q->pos = at;
	q->have_sync = q->have_pos = 1;

	fetch(q);
	if (q->next_err)
		return q->next_err;
	if (q->next.type != ppt_psb)
		return -pte_nosync;
	err = decode_psb(q);
	if (err < 0)
		return err;
	/* the start IP comes from this PSB+, before reading ahead into
	 * the next one */
	if (addr && ip_query(q, addr) == 0)
		addr = NULL;
	err = read_ahead(q);
	if (err < 0)
		return err;
	status = status_flags(q);
	if (ip_query(q, addr) < 0 && addr)
		status |= pts_ip_suppressed;
	return status;
}

int ptc_fq_sync_forward(struct ptc_fq *q, uint64_t *ip)
{
	uint64_t from, off;
	int err;

	/* libipt's packet decoder searches as the query decoder does: from
	 * a PSB's length past the last one, backed off by less than a PSB
	 * (so that none starting there is missed). */
	if (!q->have_pos) {
		/* from the very beginning: a new decoder's search */
		pt_pkt_free_decoder(q->pk);
		q->pk = pt_pkt_alloc_decoder(&q->cfg);
		if (!q->pk)
			return -pte_nomem;
		err = pt_pkt_sync_forward(q->pk);
	} else {
		/* a decoder synchronised at 'from' searches where this one
		 * must: from pos, backed off, or just past the last PSB */
		from = q->pos == q->sync ? q->sync : q->pos - PSB_SIZE;
		err = pt_pkt_sync_set(q->pk, from);
		if (err >= 0)
			err = pt_pkt_sync_forward(q->pk);
	}
	if (err < 0)
		return err;
	if (pt_pkt_get_sync_offset(q->pk, &off) < 0)
		return -pte_internal;
	q->next_pos = UINT64_MAX;
	return start(q, off, ip);
}

int ptc_fq_get_offset(const struct ptc_fq *q, uint64_t *offset)
{
	if (!q->have_pos)
		return -pte_nosync;
	*offset = q->pos;
	return 0;
}

int ptc_fq_get_sync_offset(const struct ptc_fq *q, uint64_t *offset)
{
	if (!q->have_sync)
		return -pte_nosync;
	*offset = q->sync;
	return 0;
}

/* ---- queries ---- */

int ptc_fq_tnt_fill_slow(struct ptc_fq *q)
{
	int err;

	if (q->tnt_index)
		return 0;
	for (;;) {
		fetch(q);
		if (q->next_err)
			return q->next_err;
		if (will_event(q) || q->next.type == ppt_tip)
			return -pte_bad_query;
		q->event = NULL;
		err = decode(q);
		if (err)
			return err;
		if (q->event)
			return -pte_event_ignored;
		if (q->next.type == ppt_tnt_8 || q->next.type == ppt_tnt_64)
			break;
		err = read_ahead(q);
		if (err)
			return err;
	}
	return ptc_fq_read_on(q);
}

int ptc_fq_cond_branch_refill(struct ptc_fq *q, int *taken)
{
	int err = ptc_fq_tnt_fill(q);

	if (err < 0)
		return err;
	*taken = (q->tnt & q->tnt_index) != 0;
	q->tnt_index >>= 1;
	return status_flags(q);
}

int ptc_fq_indirect_branch(struct ptc_fq *q, uint64_t *addr)
{
	int err, flags = 0;

	if (q->next_pos == q->pos && !q->next_err && q->next.type == ppt_tip && !pending(q, PTC_FQ_TIP)) {
		/* The usual case, the loop below's first round in short: the
		 * packet read ahead is a TIP that no event binds to. */
		uint64_t ip;

		q->event = NULL;
		if ((err = decode_tip(q)) < 0)
			return err;
		if (ip_query(q, &ip) < 0)
			flags |= pts_ip_suppressed;
		else
			*addr = ip;
		goto done;
	}
	for (;;) {
		fetch(q);
		if (q->next_err)
			return q->next_err;
		if (will_event(q))
			return -pte_bad_query;
		q->event = NULL;
		if ((q->next.type == ppt_tnt_8 || q->next.type == ppt_tnt_64) && q->tnt_index)
			return -pte_bad_query;
		err = decode(q);
		if (err)
			return err;
		if (q->event)
			return -pte_event_ignored;
		if (q->next.type == ppt_tip) {
			uint64_t ip;
			if (ip_query(q, &ip) < 0)
				flags |= pts_ip_suppressed;
			else
				*addr = ip;
			break;
		}
		err = read_ahead(q);
		if (err)
			return err;
	}
done:
	err = ptc_fq_read_on(q);
	if (err < 0)
		return err;
	return flags | ptc_fq_status(q);
}

int ptc_fq_event(struct ptc_fq *q, struct pt_event *ev, size_t size)
{
	int err;

	if (size < offsetof(struct pt_event, variant))
		return -pte_invalid;
	if (q->tnt_index)
		return -pte_bad_query;
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	for (;;) {
		fetch(q);
		if (q->next_err)
			return q->next_err;
		if (is_branch_packet(&q->next) && !will_event(q))
			return -pte_bad_query;
		q->event = NULL;
		err = decode(q);
		if (err)
			return err;
		if (q->event) {
			memcpy(ev, q->event, size);
			break;
		}
		err = read_ahead(q);
		if (err)
			return err;
	}
	q->last_time = q->time;
	err = read_ahead(q);
	if (err < 0 && err != -pte_eos)
		return err;
	return status_flags(q);
}

/* ---- set-up ---- */

int ptc_fq_init(struct ptc_fq *q, const struct pt_config *cfg)
{
	memset(q, 0, sizeof(*q));
	q->cfg = *cfg;
	q->size = (uint64_t)(cfg->end - cfg->begin);
	q->pk = pt_pkt_alloc_decoder(cfg);
	if (!q->pk)
		return -pte_nomem;
	q->next_pos = UINT64_MAX;
	return 0;
}

void ptc_fq_fini(struct ptc_fq *q)
{
	if (q->pk)
		pt_pkt_free_decoder(q->pk);
	if (q->scan)
		pt_pkt_free_decoder(q->scan);
	q->pk = q->scan = NULL;
}

/* Is this packet one the decoder handles where it stands? */
static int packet_supported(const struct pt_packet *p, int in_psb)
{
	switch (p->type) {
	case ppt_pad:
	case ppt_psb:
	case ppt_psbend:
	case ppt_tnt_8:
	case ppt_tnt_64:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_fup:
	case ppt_tsc:
	case ppt_tma:
	case ppt_mtc:
		return 1;
	case ppt_cbr:
		return p->payload.cbr.ratio != 0;
	case ppt_mode:
		/* a transaction's start or abort is libipt's to bind */
		return p->payload.mode.leaf == pt_mol_exec || (p->payload.mode.leaf == pt_mol_tsx && in_psb);
	default:
		return 0;
	}
}

int ptc_fq_supported(const struct pt_config *cfg)
{
	struct pt_packet_decoder *pk;
	struct pt_packet p;
	uint64_t *psb = NULL, off, end = (uint64_t)(cfg->end - cfg->begin);
	size_t npsb = 0, cap = 0, i;
	int ok = 1, in_psb = 0, n;

	if (cfg->decode.callback)
		return 0;
	pk = pt_pkt_alloc_decoder(cfg);
	if (!pk)
		return -pte_nomem;
	if (pt_pkt_sync_forward(pk) < 0) {
		pt_pkt_free_decoder(pk);
		return 1;	/* no PSB: nothing is decoded */
	}
	if (pt_pkt_get_sync_offset(pk, &off) < 0) {
		pt_pkt_free_decoder(pk);
		return 0;
	}
	for (;;) {
		/* the common packets as fetch() reads them (all handled: only
		 * their size matters here; a loop of its own, most of a trace's
		 * bytes), the rest by libipt's packet decoder */
		const uint8_t *at = cfg->begin + off, *const stop = cfg->begin + end;
		unsigned size;

		while (at < stop && (size = common_sizes[*at]) != 0 && size <= (size_t)(stop - at))
			at += size;
		off = (uint64_t)(at - cfg->begin);
		n = pt_pkt_sync_set(pk, off);
		if (n >= 0)
			n = pt_pkt_next(pk, &p, sizeof(p));
		if (n < 0) {
			/* the end, at a packet boundary, is the only way out */
			ok = n == -pte_eos && off == end;
			break;
		}
		if (!packet_supported(&p, in_psb)) {
			ok = 0;
			break;
		}
		if (p.type == ppt_psb) {
			if (npsb == cap) {
				uint64_t *np;
				cap = cap ? cap * 2 : 64;
				np = realloc(psb, cap * sizeof(*psb));
				if (!np) {
					free(psb);
					pt_pkt_free_decoder(pk);
					return -pte_nomem;
				}
				psb = np;
			}
			psb[npsb++] = off;
			in_psb = 1;
		} else if (p.type == ppt_psbend) {
			in_psb = 0;
		}
		off += (uint64_t)n;
	}
	/* Resynchronising lands on any PSB pattern: each must be one of the
	 * PSB packets above, or decoding from it would read other packets. */
	if (ok && pt_pkt_sync_set(pk, 0) >= 0) {
		i = 0;
		while (pt_pkt_sync_forward(pk) >= 0 && pt_pkt_get_sync_offset(pk, &off) >= 0) {
			while (i < npsb && psb[i] < off)
				i++;
			if (i == npsb || psb[i] != off) {
				ok = 0;
				break;
			}
		}
	}
	free(psb);
	pt_pkt_free_decoder(pk);
	return ok;
}
