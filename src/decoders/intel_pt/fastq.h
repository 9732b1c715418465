/* ptconv's own query decoder: packets -> "taken?", "where to?", events.
 *
 * The walker (ptdec.c) asks its questions of a query decoder.  libipt's
 * (pt_query_decoder) answers one conditional branch per call through
 * several layers; this one answers the same questions, in the same words
 * (libipt's status bits, error codes and struct pt_event), from packets
 * that libipt's packet decoder reads, and hands out a cached TNT bit with
 * a few instructions inline.
 *
 * It handles the packets of an ordinary user-mode recording: PSB+, TNT,
 * TIP, TIP.PGE/PGD, FUP, MODE.Exec (and MODE.TSX inside PSB+), TSC, TMA,
 * MTC, CBR and PAD.  ptc_fq_supported() says whether a buffer holds only
 * those (and nothing a resynchronisation could land inside of); a buffer
 * that holds anything else (OVF, CYC, PIP, VMCS, power events, PTWRITE,
 * MODE.TSX outside PSB+, broken packets) is left to libipt's query
 * decoder, so that the answers are libipt's either way.  tests/unit/
 * test_fastq.c and tests/fuzz/fuzz_fastq.c ask both decoders the same
 * questions and require the same answers.
 */
#ifndef PTC_DECODERS_INTEL_PT_FASTQ_H
#define PTC_DECODERS_INTEL_PT_FASTQ_H

#include <stdint.h>

#include <intel-pt.h>

#include "decoders/intel_pt/last_ip.h"

/* libipt's timing state (pt_time) without cycle counting: the estimate
 * of the TSC at the last timing packet. */
struct ptc_fq_time {
	uint64_t tsc, base, fc;
	uint32_t ctc, lost_mtc;
	uint8_t cbr;
	uint8_t have_tsc, have_tma, have_mtc, have_cbr;
};

/* Events waiting for the packet they bind to (libipt's event queue). */
enum { PTC_FQ_PSBEND, PTC_FQ_TIP, PTC_FQ_FUP, PTC_FQ_BINS };
#define PTC_FQ_QUEUE 8

struct ptc_fq {
	struct pt_config cfg;
	struct pt_packet_decoder *pk;
	struct pt_packet_decoder *scan;	/* looks ahead for erratum BDM70 */
	uint64_t size;

	/* The packet at pos, decoded ahead (next_pos == pos): libipt's
	 * "next decoder function". */
	struct pt_packet next;
	int next_err;			/* 0, or why there is no packet at pos */
	uint64_t next_pos;		/* UINT64_MAX: not fetched */
	uint64_t pos, sync;
	int have_pos, have_sync;

	int enabled, consume_packet;
	struct pt_event *event;		/* the event the last packet produced */

	struct ptc_last_ip lip;		/* IP compression */

	uint64_t tnt, tnt_index;	/* cached TNT bits, index at the next one */

	struct ptc_fq_time time, last_time;

	struct pt_event queue[PTC_FQ_BINS][PTC_FQ_QUEUE];
	uint8_t qbegin[PTC_FQ_BINS], qend[PTC_FQ_BINS];
	struct pt_event standalone;
};

/* Does [cfg->begin, cfg->end) hold only packets this decoder handles, from
 * its first PSB to its end, with every PSB pattern in it at a packet
 * boundary?  1 yes, 0 no, <0 out of memory.  Also 0 for a configuration
 * it does not follow (decoder callbacks for unknown packets). */
int ptc_fq_supported(const struct pt_config *cfg);

/* Decode cfg's buffer (which must stay valid); 0 or -pte_nomem. */
int ptc_fq_init(struct ptc_fq *q, const struct pt_config *cfg);
void ptc_fq_fini(struct ptc_fq *q);

/* The calls mean what libipt's pt_qry_* of the same names mean. */
int ptc_fq_sync_forward(struct ptc_fq *q, uint64_t *ip);
int ptc_fq_get_offset(const struct ptc_fq *q, uint64_t *offset);
int ptc_fq_get_sync_offset(const struct ptc_fq *q, uint64_t *offset);
int ptc_fq_indirect_branch(struct ptc_fq *q, uint64_t *addr);
int ptc_fq_event(struct ptc_fq *q, struct pt_event *ev, size_t size);
int ptc_fq_cond_branch_refill(struct ptc_fq *q, int *taken);

/* ---- inline parts of the queries (the walker asks them at every packet) ---- */

/* Is opc a TNT-8 packet (one byte: not a PAD, not an extended opcode)? */
static inline int ptc_fq_is_tnt_8(uint8_t opc)
{
	return !(opc & 1) && opc > 2;
}

/* The TNT-8 packet opc into pk: the bits below the highest set one. */
static inline __attribute__((always_inline)) void ptc_fq_parse_tnt_8(struct pt_packet *pk, uint8_t opc)
{
	uint64_t tnt = opc >> 1;
	uint8_t bits = (uint8_t)(63 - __builtin_clzll(tnt));

	pk->size = 1;
	pk->type = ppt_tnt_8;
	pk->payload.tnt.bit_size = bits;
	pk->payload.tnt.payload = tnt & ~(1ull << bits);
}

/* The packets from pos to the next branch packet or event, decoded (the
 * next one read ahead): 0 or a negative error. */
int ptc_fq_read_ahead(struct ptc_fq *q);

/* After a query took a branch packet (TNT, TIP): the time its branches
 * have, and the packets read ahead to the next branch packet or event: 0,
 * or a negative error (not the end, which the next query meets).  In short
 * when the next packet is a TNT-8, as it is after most (on gzip's trace
 * 91% of TNT packets follow a TNT): reading ahead would stop at it, a
 * branch packet, with nothing decoded. */
static inline __attribute__((always_inline)) int ptc_fq_read_on(struct ptc_fq *q)
{
	int err;

	q->last_time = q->time;
	if (q->pos < q->size && ptc_fq_is_tnt_8(q->cfg.begin[q->pos])) {
		ptc_fq_parse_tnt_8(&q->next, q->cfg.begin[q->pos]);
		q->next_pos = q->pos;
		q->next_err = 0;
		return 0;
	}
	err = ptc_fq_read_ahead(q);
	return err < 0 && err != -pte_eos ? err : 0;
}

/* The TNT packet read ahead (of one bit or more) into the cache, and the
 * position past it. */
static inline void ptc_fq_cache_tnt(struct ptc_fq *q)
{
	q->tnt = q->next.payload.tnt.payload;
	q->tnt_index = 1ull << (q->next.payload.tnt.bit_size - 1);
	q->pos += q->next.size;
}

/* Read on to the next TNT packet when no bit is cached, as the next
 * conditional-branch query would (and failing as it would, leaving the
 * same state for it), without taking a bit: 0 or a negative error.
 * Inline for its usual case, the packet read ahead a TNT-8 (no event binds
 * to one); ptc_fq_tnt_fill_slow() reads to it through other packets. */
int ptc_fq_tnt_fill_slow(struct ptc_fq *q);
static inline int ptc_fq_tnt_fill(struct ptc_fq *q)
{
	const struct pt_packet_tnt *p = &q->next.payload.tnt;

	if (q->tnt_index)
		return 0;
	if (q->next_pos != q->pos || q->next_err || q->next.type != ppt_tnt_8 || !p->bit_size)
		return ptc_fq_tnt_fill_slow(q);
	q->event = NULL;
	ptc_fq_cache_tnt(q);
	return ptc_fq_read_on(q);
}
/* The status a query that took the cached TNT bits' last one returns
 * (ptc_fq_status_full(): every case; ptc_fq_status(): the usual ones first). */
int ptc_fq_status_full(const struct ptc_fq *q);
static inline int ptc_fq_status(const struct ptc_fq *q)
{
	/* The usual cases in short: bits left, or a TNT-8 or a TIP that no
	 * event binds to read ahead (no event pending, not the end). */
	if (q->tnt_index)
		return 0;
	if (!q->next_err && (q->next.type == ppt_tnt_8 ||
			     (q->next.type == ppt_tip && q->qbegin[PTC_FQ_TIP] == q->qend[PTC_FQ_TIP])))
		return 0;
	return ptc_fq_status_full(q);
}

/* pt_qry_time() (inline: the walker asks after every indirect branch) */
static inline int ptc_fq_time(const struct ptc_fq *q, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc)
{
	*tsc = q->last_time.tsc;
	if (lost_mtc)
		*lost_mtc = q->last_time.lost_mtc;
	if (lost_cyc)
		*lost_cyc = 0;
	return q->last_time.have_tsc ? 0 : -pte_no_time;
}

/* A conditional branch (or compressed return): while more bits of the
 * current TNT packet remain after this one, no packet needs reading and
 * the status is 0 (libipt reports events only once the bits are used). */
static inline int ptc_fq_cond_branch(struct ptc_fq *q, int *taken)
{
	if (q->tnt_index > 1) {
		*taken = (q->tnt & q->tnt_index) != 0;
		q->tnt_index >>= 1;
		return 0;
	}
	return ptc_fq_cond_branch_refill(q, taken);
}

#endif
