/* ARM SPE packet layer: one packet at a time, no state.
 *
 * The Statistical Profiling Extension writes, for each sampled operation,
 * a record: a run of packets ended by an END or a TIMESTAMP packet.  This
 * layer cuts a byte buffer into packets and names their fields; it knows
 * nothing about records (see spe_record.h).
 *
 * Header encodings (Arm ARM, "Statistical Profiling Extension packets"):
 *
 *   0000 0000                 PAD            no payload
 *   0000 0001                 END            no payload
 *   0111 0001                 TIMESTAMP      8-byte payload
 *   01sz 0010                 EVENTS         1/2/4/8-byte payload
 *   01sz 0011                 DATA_SOURCE    payload size from sz
 *   01sz 01ii                 CONTEXT        ii: 0 CONTEXTIDR_EL1, 1 CONTEXTIDR_EL2
 *   01sz 10cc                 OP_TYPE        cc: 0 other, 1 load/store/atomic, 2 branch/eret
 *   1011 0iii                 ADDRESS        8-byte payload, index iii
 *   1001 1iii                 COUNTER        2-byte payload, index iii
 *   0010 00ii  <short hdr>    extended header: ii are index bits 4:3 of the
 *                             ADDRESS or COUNTER header that follows
 *   0010 00ii  0000 0000      alignment pad: padding up to the next
 *                             2 << ii byte boundary of the buffer
 *
 * sz is log2 of the payload size in bytes (00: 1, 01: 2, 10: 4, 11: 8).
 * Payloads are little-endian.
 */
#ifndef PTC_DECODERS_ARM_SPE_SPE_PACKET_H
#define PTC_DECODERS_ARM_SPE_SPE_PACKET_H

#include <stddef.h>
#include <stdint.h>

enum ptc_spe_packet_kind {
	PTC_SPE_PKT_PAD,
	PTC_SPE_PKT_END,
	PTC_SPE_PKT_TIMESTAMP,
	PTC_SPE_PKT_EVENTS,
	PTC_SPE_PKT_DATA_SOURCE,
	PTC_SPE_PKT_CONTEXT,
	PTC_SPE_PKT_OP_TYPE,
	PTC_SPE_PKT_ADDRESS,
	PTC_SPE_PKT_COUNTER,
	PTC_SPE_PKT_ALIGN,	/* extended-header alignment pad */
	PTC_SPE_PKT_KIND_NR
};

/* ADDRESS packet indexes. */
enum ptc_spe_addr_index {
	PTC_SPE_ADDR_PC = 0,		/* instruction virtual address */
	PTC_SPE_ADDR_BRANCH_TARGET = 1,	/* branch target virtual address */
	PTC_SPE_ADDR_DATA_VIRT = 2,	/* data access virtual address */
	PTC_SPE_ADDR_DATA_PHYS = 3,	/* data access physical address */
	PTC_SPE_ADDR_PREV_BRANCH = 4,	/* previous branch target (FEAT_SPE_PBT) */
	PTC_SPE_ADDR_INDEX_NR = 32	/* extended headers give 5-bit indexes */
};

/* COUNTER packet indexes. */
enum ptc_spe_counter_index {
	PTC_SPE_CNT_TOTAL = 0,		/* total latency: dispatch to completion */
	PTC_SPE_CNT_ISSUE = 1,		/* issue latency: dispatch to issue */
	PTC_SPE_CNT_XLAT = 2,		/* translation latency */
	PTC_SPE_CNT_INDEX_NR = 32
};

/* CONTEXT packet indexes. */
enum ptc_spe_context_index {
	PTC_SPE_CTX_EL1 = 0,		/* CONTEXTIDR_EL1 */
	PTC_SPE_CTX_EL2 = 1,		/* CONTEXTIDR_EL2 */
};

/* OP_TYPE classes (header bits 1:0). */
enum ptc_spe_op_class {
	PTC_SPE_OP_OTHER = 0,
	PTC_SPE_OP_LDST = 1,		/* load, store, atomic */
	PTC_SPE_OP_BRANCH = 2,		/* branch or exception return */
};

/* EVENTS payload bits. */
enum ptc_spe_event_bit {
	PTC_SPE_EV_EXCEPTION_GEN = 0,
	PTC_SPE_EV_RETIRED = 1,
	PTC_SPE_EV_L1D_ACCESS = 2,
	PTC_SPE_EV_L1D_REFILL = 3,
	PTC_SPE_EV_TLB_ACCESS = 4,
	PTC_SPE_EV_TLB_WALK = 5,
	PTC_SPE_EV_NOT_TAKEN = 6,
	PTC_SPE_EV_MISPREDICTED = 7,
	PTC_SPE_EV_LLC_ACCESS = 8,
	PTC_SPE_EV_LLC_MISS = 9,
	PTC_SPE_EV_REMOTE_ACCESS = 10,
	PTC_SPE_EV_ALIGNMENT = 11,
	/* 12..15 IMPLEMENTATION DEFINED */
	PTC_SPE_EV_TRANSACTIONAL = 16,
	PTC_SPE_EV_PARTIAL_PREDICATE = 17,
	PTC_SPE_EV_EMPTY_PREDICATE = 18,
	PTC_SPE_EV_L2D_ACCESS = 19,
	PTC_SPE_EV_L2D_MISS = 20,
	PTC_SPE_EV_CACHE_DATA_MODIFIED = 21,
	PTC_SPE_EV_RECENTLY_FETCHED = 22,
	PTC_SPE_EV_DATA_SNOOPED = 23,
	PTC_SPE_EV_STREAMING_SVE = 24,
	PTC_SPE_EV_SMCU = 25,
	PTC_SPE_EV_BIT_NR = 64
};

#define PTC_SPE_EV(bit) (1ULL << (bit))

struct ptc_spe_packet {
	uint8_t kind;		/* enum ptc_spe_packet_kind */
	uint8_t size;		/* bytes taken, headers and payload */
	uint8_t payload_size;	/* 0, 1, 2, 4 or 8 */
	uint8_t index;		/* ADDRESS/COUNTER index, CONTEXT index, OP_TYPE class; ALIGN: boundary */
	uint8_t extended;	/* 1 when a 0b001000ii extended header came first */
	uint8_t header;		/* the (last) header byte */
	uint64_t payload;
};

/* Decode the packet at buf[0..len).  offset is buf's position in the AUX
 * stream (only alignment pads depend on it).  Returns the packet size (>0),
 * -ptc_err_truncated when len ends inside the packet, -ptc_err_decode when
 * buf[0] (or the byte after an extended header) is no defined header. */
int ptc_spe_packet_decode(struct ptc_spe_packet *pkt, const uint8_t *buf, size_t len,
			  uint64_t offset);

/* Names for messages and the CSV/dump outputs. */
const char *ptc_spe_packet_name(unsigned int kind);
const char *ptc_spe_addr_index_name(unsigned int index);	/* "PC", "TGT", "VA", "PA", "PBT", or NULL */
const char *ptc_spe_counter_index_name(unsigned int index);	/* "TOT", "ISSUE", "XLAT", or NULL */
const char *ptc_spe_event_name(unsigned int bit);		/* NULL for undefined/IMPDEF bits */

/* ADDRESS payload fields. */
struct ptc_spe_address {
	uint64_t addr;		/* virtual: bits 55:0 sign-extended from bit 55; physical: bits 55:0 */
	uint8_t el;		/* PC/TGT/PBT: exception level, bits 62:61 */
	uint8_t ns;		/* PC/TGT/PBT/PA: non-secure, bit 63 */
	uint8_t tag;		/* VA: top byte (bits 63:56, the pointer tag) */
	uint8_t ch;		/* PA: checked (MTE) access, bit 62 */
	uint8_t pat;		/* PA: physical address tag, bits 59:56 */
};
void ptc_spe_address_fields(unsigned int index, uint64_t payload, struct ptc_spe_address *out);

/* OP_TYPE payload, interpreted per class.  Each flag is one bit (or field)
 * of the payload, tested on its own so that combinations (an indirect
 * call, a conditional return with GCS) keep every attribute. */
enum ptc_spe_op_subclass {
	PTC_SPE_SUB_UNKNOWN = 0,
	/* class OTHER */
	PTC_SPE_SUB_OTHER,		/* bits 7:3 == 0 */
	PTC_SPE_SUB_SVE_OTHER,		/* bits {7,3,0} == 0b010 */
	PTC_SPE_SUB_SME_OTHER,		/* bits {7,3,0} == 0b110 */
	/* class LDST */
	PTC_SPE_SUB_GP_REG,		/* bits 7:1 == 0b0000000 */
	PTC_SPE_SUB_EXTENDED,		/* bits 7:5 == 0 and bit 1: atomic, exclusive, acquire/release */
	PTC_SPE_SUB_SIMD_FP,		/* bits 7:1 == 0b0000010 */
	PTC_SPE_SUB_SVE_SME_REG,	/* bit 3 == 1, bit 1 == 0 */
	PTC_SPE_SUB_UNSPEC_REG,		/* bits 7:1 == 0b0001000 */
	PTC_SPE_SUB_MTE_TAG,		/* bits 7:1 == 0b0001010 */
	PTC_SPE_SUB_MEMCPY,		/* bits 7:1 == 0b0010000 */
	PTC_SPE_SUB_MEMSET,		/* bits 7:0 == 0b00100101 */
	PTC_SPE_SUB_NV_SYSREG,		/* bits 7:1 == 0b0011000 */
	PTC_SPE_SUB_GCS,		/* bits 7:3 == 0b01000, bit 1 == 0 */
	/* class BRANCH */
	PTC_SPE_SUB_BRANCH,
	PTC_SPE_SUB_NR
};

enum ptc_spe_call_return {
	PTC_SPE_CR_NONE = 0,		/* bits 4:3 == 00 */
	PTC_SPE_CR_CALL = 1,		/* 01: branch with link */
	PTC_SPE_CR_RETURN = 2,		/* 10: procedure return */
	PTC_SPE_CR_OTHER = 3,		/* 11: neither (e.g. ERET and other non-BL, non-RET) */
};

struct ptc_spe_op {
	uint8_t cls;		/* enum ptc_spe_op_class, 3 = reserved */
	uint8_t subclass;	/* enum ptc_spe_op_subclass */
	/* branch */
	uint8_t cond;		/* bit 0: conditional (class OTHER: conditional select) */
	uint8_t indirect;	/* bit 1 */
	uint8_t gcs;		/* bit 2: guarded control stack data access */
	uint8_t cr;		/* bits 4:3, enum ptc_spe_call_return */
	/* load/store */
	uint8_t store;		/* bit 0: store (0: load) */
	uint8_t atomic;		/* EXTENDED bit 2 */
	uint8_t exclusive;	/* EXTENDED bit 3 */
	uint8_t acq_rel;	/* EXTENDED bit 4 */
	uint8_t sg;		/* SVE_SME_REG bit 7: scatter/gather */
	uint8_t pred;		/* SVE: bit 2 predicated */
	uint8_t fp;		/* OTHER/SVE/SME: bit 1 floating point */
	uint8_t simd;		/* OTHER bit 2: Advanced SIMD */
	uint8_t gcs_common;	/* GCS bit 2: common GCS access */
	uint16_t evl;		/* SVE: effective vector length in bits, 32 << bits 6:4 */
	uint32_t ets;		/* SME: effective tile size, 128 << bits {6:4,2} */
};
void ptc_spe_op_fields(unsigned int cls, uint8_t payload, struct ptc_spe_op *out);
const char *ptc_spe_op_subclass_name(unsigned int subclass);

/* Human description of a packet, for dumps ("PC 0x... el0 ns=1"); returns
 * what snprintf returns. */
int ptc_spe_packet_describe(const struct ptc_spe_packet *pkt, char *buf, size_t len);

#endif
