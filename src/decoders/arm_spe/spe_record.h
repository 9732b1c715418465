/* ARM SPE record layer: packets to sampled-operation records.
 *
 * A record is the run of packets the hardware wrote for one sampled
 * operation, ended by an END or a TIMESTAMP packet.  The decoder below takes
 * the AUX stream of one queue (CPU or thread) in pieces as they come,
 * carries packets that straddle two pieces, and hands every complete record
 * to a callback as one struct holding every field.
 *
 * Corrupt data (a byte that is no packet header) is skipped: the record in
 * progress is dropped, packets are ignored up to the next record boundary
 * (END or TIMESTAMP), and decoding resumes with the first record after it
 * that starts with a PC address packet, as every record the hardware writes
 * does (a payload byte 0x01 or 0x71 can pass for a boundary while
 * skipping).  Everything skipped is counted in struct ptc_spe_decode_stats.
 *
 * Records are samples: one operation in N.  They are not a control-flow
 * trace and say nothing about the operations between two samples.
 */
#ifndef PTC_DECODERS_ARM_SPE_SPE_RECORD_H
#define PTC_DECODERS_ARM_SPE_SPE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/arm_spe/spe_packet.h"

/* Which fields of a record are present. */
enum ptc_spe_field {
	PTC_SPE_F_PC = 1 << 0,
	PTC_SPE_F_TARGET = 1 << 1,
	PTC_SPE_F_VADDR = 1 << 2,
	PTC_SPE_F_PADDR = 1 << 3,
	PTC_SPE_F_PREV_TARGET = 1 << 4,
	PTC_SPE_F_EVENTS = 1 << 5,
	PTC_SPE_F_DATA_SOURCE = 1 << 6,
	PTC_SPE_F_CONTEXT_EL1 = 1 << 7,
	PTC_SPE_F_CONTEXT_EL2 = 1 << 8,
	PTC_SPE_F_OP = 1 << 9,
	PTC_SPE_F_TIMESTAMP = 1 << 10,
	PTC_SPE_F_LAT_TOTAL = 1 << 11,
	PTC_SPE_F_LAT_ISSUE = 1 << 12,
	PTC_SPE_F_LAT_XLAT = 1 << 13,
	PTC_SPE_F_OTHER_ADDR = 1 << 14,	/* an ADDRESS packet with an index beyond PBT */
	PTC_SPE_F_OTHER_COUNTER = 1 << 15,	/* a COUNTER packet with an index beyond XLAT */
};

struct ptc_spe_record {
	uint64_t offset;		/* AUX stream offset of the record's first packet */
	uint32_t size;			/* bytes from first packet to END/TIMESTAMP inclusive */
	uint32_t present;		/* enum ptc_spe_field bits */
	uint16_t packets;		/* packets in the record, pads excluded */
	uint8_t ended_by_timestamp;	/* 1: TIMESTAMP, 0: END */

	struct ptc_spe_address pc, target, vaddr, paddr, prev_target;
	uint64_t events;		/* EVENTS payload */
	uint8_t events_size;		/* its size in bytes: 1, 2, 4 or 8 */
	uint8_t data_source_size;
	uint64_t data_source;		/* IMPLEMENTATION DEFINED encoding */
	uint32_t context_el1, context_el2;
	uint8_t op_class;		/* OP_TYPE header bits 1:0 */
	uint8_t op_payload;		/* OP_TYPE payload byte */
	struct ptc_spe_op op;		/* op_payload interpreted */
	uint64_t timestamp;		/* TIMESTAMP payload: the generic timer count */
	uint32_t lat_total, lat_issue, lat_xlat;
	/* Every COUNTER and ADDRESS index seen (bit i = index i); covers the
	 * three named latencies and any newer counter. */
	uint32_t counter_mask;
	uint32_t addr_mask;
	/* Counter values: counter[i] is valid only when bit i of counter_mask
	 * is set (the array is not cleared between records, for speed). */
	uint32_t counter[PTC_SPE_CNT_INDEX_NR];
};

/* Convenience predicates on the EVENTS payload. */
static inline int ptc_spe_retired(const struct ptc_spe_record *r)
{
	return (r->events >> PTC_SPE_EV_RETIRED) & 1;
}
static inline int ptc_spe_mispredicted(const struct ptc_spe_record *r)
{
	return (r->events >> PTC_SPE_EV_MISPREDICTED) & 1;
}
static inline int ptc_spe_not_taken(const struct ptc_spe_record *r)
{
	return (r->events >> PTC_SPE_EV_NOT_TAKEN) & 1;
}
static inline int ptc_spe_is_branch(const struct ptc_spe_record *r)
{
	return (r->present & PTC_SPE_F_OP) && r->op_class == PTC_SPE_OP_BRANCH;
}

struct ptc_spe_decode_stats {
	uint64_t bytes;			/* bytes fed */
	uint64_t packets;		/* packets decoded, pads included */
	uint64_t pad_bytes;		/* PAD and alignment bytes */
	uint64_t records;		/* complete records delivered */
	uint64_t empty_records;		/* END/TIMESTAMP with nothing before them: not delivered */
	uint64_t bad_bytes;		/* bytes that were no packet header: skipped */
	uint64_t resyncs;		/* times decoding lost and regained sync */
	uint64_t dropped_records;	/* records lost to corruption or to a stream break */
	uint64_t dropped_bytes;		/* bytes of those records (and skipped up to a boundary) */
	uint64_t discontinuities;	/* pieces that did not continue the previous one */
};

struct ptc_spe_decoder;

/* Called once per complete record; a negative return stops decoding and
 * is returned by ptc_spe_decoder_feed(). */
typedef int (*ptc_spe_record_fn)(void *ctx, const struct ptc_spe_record *rec);

int ptc_spe_decoder_new(struct ptc_spe_decoder **out, ptc_spe_record_fn fn, void *ctx);
void ptc_spe_decoder_free(struct ptc_spe_decoder *d);

/* Decode one piece of the stream found at AUX offset `offset`.  A piece
 * that continues the previous one (offset == previous offset + length)
 * completes a packet or record cut at the end of the previous piece; any
 * other piece starts afresh and what was pending is counted as dropped. */
int ptc_spe_decoder_feed(struct ptc_spe_decoder *d, const uint8_t *buf, size_t len,
			 uint64_t offset);

/* End of the stream: a record still in progress is counted as dropped. */
void ptc_spe_decoder_finish(struct ptc_spe_decoder *d);

const struct ptc_spe_decode_stats *ptc_spe_decoder_stats(const struct ptc_spe_decoder *d);

/* Offsets of the first and the most recent corrupt byte (for messages),
 * UINT64_MAX if none. */
uint64_t ptc_spe_decoder_first_error_offset(const struct ptc_spe_decoder *d);
uint64_t ptc_spe_decoder_last_error_offset(const struct ptc_spe_decoder *d);

#endif
