/* Every SPE packet kind and every defined bit, one at a time.
 *
 * The byte sequences are built here from the architecture's encoding
 * description (Arm ARM, Statistical Profiling Extension packets), written
 * out in binary so that each can be checked against the manual:
 *   PAD 00000000, END 00000001, TIMESTAMP 01110001,
 *   EVENTS 01sz0010, DATA_SOURCE 01sz0011, CONTEXT 01sz01ii,
 *   OP_TYPE 01sz10cc, ADDRESS 10110iii, COUNTER 10011iii,
 *   extended header 001000ii before ADDRESS/COUNTER (index ii:iii).
 */
#include <string.h>

#include "../lib/check.h"
#include "common/error.h"
#include "decoders/arm_spe/spe_record.h"

#define B(x) ((uint8_t)(x))

static int decode(struct ptc_spe_packet *p, const uint8_t *b, size_t n)
{
	return ptc_spe_packet_decode(p, b, n, 0);
}

static void test_simple(void)
{
	struct ptc_spe_packet p;
	uint8_t pad[] = { 0x00 }, end[] = { 0x01 };
	uint8_t ts[] = { 0x71, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };

	CHECK_EQ_U64(decode(&p, pad, 1), 1);
	CHECK_EQ_U64(p.kind, PTC_SPE_PKT_PAD);
	CHECK_EQ_U64(decode(&p, end, 1), 1);
	CHECK_EQ_U64(p.kind, PTC_SPE_PKT_END);
	CHECK_EQ_U64(decode(&p, ts, sizeof(ts)), 9);
	CHECK_EQ_U64(p.kind, PTC_SPE_PKT_TIMESTAMP);
	CHECK_EQ_U64(p.payload, 0x1122334455667788ULL);
	CHECK_EQ_U64(decode(&p, ts, 8), (uint64_t)-ptc_err_truncated);
}

/* EVENTS 01sz0010: sz 00 -> 1 byte, 01 -> 2, 10 -> 4, 11 -> 8. */
static void test_events(void)
{
	static const uint8_t hdr[4] = { 0x42, 0x52, 0x62, 0x72 };	/* 0100 0010, 0101 0010, 0110 0010, 0111 0010 */
	static const unsigned int size[4] = { 1, 2, 4, 8 };
	static const struct { unsigned int bit; const char *name; } named[] = {
		{ 0, "EXCEPTION-GEN" }, { 1, "RETIRED" }, { 2, "L1D-ACCESS" }, { 3, "L1D-REFILL" },
		{ 4, "TLB-ACCESS" }, { 5, "TLB-REFILL" }, { 6, "NOT-TAKEN" }, { 7, "MISPRED" },
		{ 8, "LLC-ACCESS" }, { 9, "LLC-REFILL" }, { 10, "REMOTE-ACCESS" }, { 11, "ALIGNMENT" },
		{ 16, "TXN" }, { 17, "SVE-PARTIAL-PRED" }, { 18, "SVE-EMPTY-PRED" },
		{ 19, "L2D-ACCESS" }, { 20, "L2D-MISS" }, { 21, "HITM" }, { 22, "LFB" },
		{ 23, "SNOOPED" }, { 24, "STREAMING-SVE" }, { 25, "SMCU" },
	};
	struct ptc_spe_packet p;
	unsigned int s, bit, i;

	for (s = 0; s < 4; s++) {
		for (bit = 0; bit < size[s] * 8; bit++) {
			uint8_t b[9] = { hdr[s] };

			b[1 + bit / 8] = B(1u << (bit % 8));
			CHECK_EQ_U64(decode(&p, b, 1 + size[s]), 1 + size[s]);
			CHECK_EQ_U64(p.kind, PTC_SPE_PKT_EVENTS);
			CHECK_EQ_U64(p.payload_size, size[s]);
			CHECK_EQ_U64(p.payload, 1ULL << bit);
			CHECK_EQ_U64(decode(&p, b, size[s]), (uint64_t)-ptc_err_truncated);
		}
	}
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		const char *n = ptc_spe_event_name(named[i].bit);
		CHECK(n && !strcmp(n, named[i].name), "event bit %u: %s", named[i].bit, n ? n : "(null)");
	}
	for (bit = 12; bit < 16; bit++)
		CHECK(ptc_spe_event_name(bit) == NULL, "bit %u is IMPLEMENTATION DEFINED", bit);
	CHECK(ptc_spe_event_name(26) == NULL, "bit 26 undefined");

	/* The record predicates read exactly one bit each. */
	{
		struct ptc_spe_record r;
		memset(&r, 0, sizeof(r));
		r.events = 1u << 1;
		CHECK(ptc_spe_retired(&r) && !ptc_spe_not_taken(&r) && !ptc_spe_mispredicted(&r), "retired");
		r.events = 1u << 6;
		CHECK(!ptc_spe_retired(&r) && ptc_spe_not_taken(&r) && !ptc_spe_mispredicted(&r), "not taken");
		r.events = 1u << 7;
		CHECK(!ptc_spe_retired(&r) && !ptc_spe_not_taken(&r) && ptc_spe_mispredicted(&r), "mispredicted");
	}
}

static void test_data_source_context(void)
{
	struct ptc_spe_packet p;
	uint8_t ds1[] = { 0x43, 0x05 };			/* 0100 0011: 1 byte */
	uint8_t ds2[] = { 0x53, 0x34, 0x12 };		/* 0101 0011: 2 bytes */
	uint8_t c1[] = { 0x64, 0x39, 0x30, 0x00, 0x00 };	/* 0110 0100: CONTEXTIDR_EL1 */
	uint8_t c2[] = { 0x65, 0x78, 0x56, 0x34, 0x12 };	/* 0110 0101: CONTEXTIDR_EL2 */

	CHECK_EQ_U64(decode(&p, ds1, 2), 2);
	CHECK_EQ_U64(p.kind, PTC_SPE_PKT_DATA_SOURCE);
	CHECK_EQ_U64(p.payload, 5);
	CHECK_EQ_U64(decode(&p, ds2, 3), 3);
	CHECK_EQ_U64(p.kind, PTC_SPE_PKT_DATA_SOURCE);
	CHECK_EQ_U64(p.payload, 0x1234);
	CHECK_EQ_U64(decode(&p, c1, 5), 5);
	CHECK_EQ_U64(p.kind, PTC_SPE_PKT_CONTEXT);
	CHECK_EQ_U64(p.index, PTC_SPE_CTX_EL1);
	CHECK_EQ_U64(p.payload, 12345);
	CHECK_EQ_U64(decode(&p, c2, 5), 5);
	CHECK_EQ_U64(p.index, PTC_SPE_CTX_EL2);
	CHECK_EQ_U64(p.payload, 0x12345678);
}

static void op(unsigned int cls, uint8_t payload, struct ptc_spe_op *o)
{
	struct ptc_spe_packet p;
	uint8_t b[2] = { B(0x48 | cls), payload };	/* 0100 10cc */

	CHECK_EQ_U64(decode(&p, b, 2), 2);
	CHECK_EQ_U64(p.kind, PTC_SPE_PKT_OP_TYPE);
	CHECK_EQ_U64(p.index, cls);
	CHECK_EQ_U64(p.payload, payload);
	ptc_spe_op_fields(p.index, (uint8_t)p.payload, o);
}

static void test_op_branch(void)
{
	struct ptc_spe_op o;
	/* class 2: payload bit 0 COND, bit 1 IND, bit 2 GCS, bits 4:3 CR. */
	static const struct { uint8_t v; int cond, ind, gcs, cr; } t[] = {
		{ 0x00, 0, 0, 0, 0 },	/* B */
		{ 0x01, 1, 0, 0, 0 },	/* B.cond */
		{ 0x02, 0, 1, 0, 0 },	/* BR */
		{ 0x04, 0, 0, 1, 0 },	/* GCS */
		{ 0x08, 0, 0, 0, 1 },	/* BL */
		{ 0x0a, 0, 1, 0, 1 },	/* BLR: indirect AND call */
		{ 0x10, 0, 0, 0, 2 },	/* return, direct (as encoded) */
		{ 0x12, 0, 1, 0, 2 },	/* RET: indirect AND return */
		{ 0x16, 0, 1, 1, 2 },	/* RET with GCS */
		{ 0x18, 0, 0, 0, 3 },	/* neither BL nor RET */
		{ 0x1a, 0, 1, 0, 3 },	/* indirect, other (e.g. ERET) */
		{ 0x0e, 0, 1, 1, 1 },	/* BLR with GCS */
		{ 0x19, 1, 0, 0, 3 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		op(PTC_SPE_OP_BRANCH, t[i].v, &o);
		CHECK(o.subclass == PTC_SPE_SUB_BRANCH, "0x%02x subclass", t[i].v);
		CHECK(o.cond == t[i].cond, "0x%02x cond %d", t[i].v, o.cond);
		CHECK(o.indirect == t[i].ind, "0x%02x indirect %d", t[i].v, o.indirect);
		CHECK(o.gcs == t[i].gcs, "0x%02x gcs %d", t[i].v, o.gcs);
		CHECK(o.cr == t[i].cr, "0x%02x cr %d", t[i].v, o.cr);
	}
}

static void test_op_other(void)
{
	struct ptc_spe_op o;

	op(PTC_SPE_OP_OTHER, 0x00, &o);		/* 0000 0000 other */
	CHECK(o.subclass == PTC_SPE_SUB_OTHER && !o.cond && !o.fp && !o.simd, "other");
	op(PTC_SPE_OP_OTHER, 0x01, &o);		/* 0000 0001 conditional select */
	CHECK(o.subclass == PTC_SPE_SUB_OTHER && o.cond && !o.fp && !o.simd, "csel");
	op(PTC_SPE_OP_OTHER, 0x02, &o);		/* 0000 0010 FP */
	CHECK(o.subclass == PTC_SPE_SUB_OTHER && !o.cond && o.fp && !o.simd, "fp");
	op(PTC_SPE_OP_OTHER, 0x04, &o);		/* 0000 0100 Advanced SIMD */
	CHECK(o.subclass == PTC_SPE_SUB_OTHER && !o.cond && !o.fp && o.simd, "simd");
	/* SVE other: 0xxx 1xx0; EVL 32 << bits 6:4, bit 2 PRED, bit 1 FP */
	op(PTC_SPE_OP_OTHER, 0x08, &o);		/* 0000 1000 */
	CHECK(o.subclass == PTC_SPE_SUB_SVE_OTHER && o.evl == 32 && !o.pred && !o.fp, "sve");
	op(PTC_SPE_OP_OTHER, 0x0c, &o);		/* 0000 1100 */
	CHECK(o.subclass == PTC_SPE_SUB_SVE_OTHER && o.evl == 32 && o.pred && !o.fp, "sve pred");
	op(PTC_SPE_OP_OTHER, 0x0a, &o);		/* 0000 1010 */
	CHECK(o.subclass == PTC_SPE_SUB_SVE_OTHER && o.evl == 32 && !o.pred && o.fp, "sve fp");
	op(PTC_SPE_OP_OTHER, 0x38, &o);		/* 0011 1000: EVL 256 */
	CHECK(o.subclass == PTC_SPE_SUB_SVE_OTHER && o.evl == 256, "sve evl %u", o.evl);
	op(PTC_SPE_OP_OTHER, 0x78, &o);		/* 0111 1000: EVL 4096 */
	CHECK(o.subclass == PTC_SPE_SUB_SVE_OTHER && o.evl == 4096, "sve evl %u", o.evl);
	/* SME other: 1xxx 1xx0; ETS 128 << bits {6:4,2}, bit 1 FP */
	op(PTC_SPE_OP_OTHER, 0x88, &o);		/* 1000 1000 */
	CHECK(o.subclass == PTC_SPE_SUB_SME_OTHER && o.ets == 128 && !o.fp, "sme %u", o.ets);
	op(PTC_SPE_OP_OTHER, 0x8c, &o);		/* 1000 1100: bit 2 -> 256 */
	CHECK(o.subclass == PTC_SPE_SUB_SME_OTHER && o.ets == 256, "sme ets %u", o.ets);
	op(PTC_SPE_OP_OTHER, 0x98, &o);		/* 1001 1000: bits 6:4 = 1 -> 512 */
	CHECK(o.subclass == PTC_SPE_SUB_SME_OTHER && o.ets == 512, "sme ets %u", o.ets);
	op(PTC_SPE_OP_OTHER, 0x8a, &o);		/* 1000 1010: FP */
	CHECK(o.subclass == PTC_SPE_SUB_SME_OTHER && o.fp, "sme fp");
	op(PTC_SPE_OP_OTHER, 0x11, &o);		/* 0001 0001: no defined sub-class */
	CHECK(o.subclass == PTC_SPE_SUB_UNKNOWN, "reserved other");
}

static void test_op_ldst(void)
{
	struct ptc_spe_op o;
	static const struct { uint8_t v; int sub, st, at, excl, ar; } t[] = {
		{ 0x00, PTC_SPE_SUB_GP_REG, 0, 0, 0, 0 },	/* 0000 0000 load GP */
		{ 0x01, PTC_SPE_SUB_GP_REG, 1, 0, 0, 0 },	/* 0000 0001 store GP */
		{ 0x02, PTC_SPE_SUB_EXTENDED, 0, 0, 0, 0 },	/* 000x xx1x extended */
		{ 0x06, PTC_SPE_SUB_EXTENDED, 0, 1, 0, 0 },	/* bit 2 atomic */
		{ 0x0a, PTC_SPE_SUB_EXTENDED, 0, 0, 1, 0 },	/* bit 3 exclusive */
		{ 0x12, PTC_SPE_SUB_EXTENDED, 0, 0, 0, 1 },	/* bit 4 acquire/release */
		{ 0x17, PTC_SPE_SUB_EXTENDED, 1, 1, 0, 1 },
		{ 0x04, PTC_SPE_SUB_SIMD_FP, 0, 0, 0, 0 },	/* 0000 010x */
		{ 0x05, PTC_SPE_SUB_SIMD_FP, 1, 0, 0, 0 },
		{ 0x10, PTC_SPE_SUB_UNSPEC_REG, 0, 0, 0, 0 },	/* 0001 000x */
		{ 0x14, PTC_SPE_SUB_MTE_TAG, 0, 0, 0, 0 },	/* 0001 010x */
		{ 0x15, PTC_SPE_SUB_MTE_TAG, 1, 0, 0, 0 },
		{ 0x20, PTC_SPE_SUB_MEMCPY, 0, 0, 0, 0 },	/* 0010 000x */
		{ 0x21, PTC_SPE_SUB_MEMCPY, 1, 0, 0, 0 },
		{ 0x25, PTC_SPE_SUB_MEMSET, 1, 0, 0, 0 },	/* 0010 0101 */
		{ 0x30, PTC_SPE_SUB_NV_SYSREG, 0, 0, 0, 0 },	/* 0011 000x */
		{ 0x40, PTC_SPE_SUB_GCS, 0, 0, 0, 0 },		/* 0100 0x0x */
		{ 0x41, PTC_SPE_SUB_GCS, 1, 0, 0, 0 },
		{ 0x08, PTC_SPE_SUB_SVE_SME_REG, 0, 0, 0, 0 },	/* xxxx 1x0x */
		{ 0x09, PTC_SPE_SUB_SVE_SME_REG, 1, 0, 0, 0 },
		{ 0x24, PTC_SPE_SUB_UNKNOWN, 0, 0, 0, 0 },	/* 0010 0100: reserved */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		op(PTC_SPE_OP_LDST, t[i].v, &o);
		CHECK(o.subclass == t[i].sub, "ldst 0x%02x: subclass %s", t[i].v,
		      ptc_spe_op_subclass_name(o.subclass));
		CHECK(o.store == t[i].st, "ldst 0x%02x store", t[i].v);
		CHECK(o.atomic == t[i].at && o.exclusive == t[i].excl && o.acq_rel == t[i].ar,
		      "ldst 0x%02x at/excl/ar %d%d%d", t[i].v, o.atomic, o.exclusive, o.acq_rel);
	}
	op(PTC_SPE_OP_LDST, 0x44, &o);			/* GCS common */
	CHECK(o.subclass == PTC_SPE_SUB_GCS && o.gcs_common, "gcs common");
	op(PTC_SPE_OP_LDST, 0x0c, &o);			/* SVE reg, predicated */
	CHECK(o.subclass == PTC_SPE_SUB_SVE_SME_REG && o.pred && !o.sg && o.evl == 32, "sve pred");
	op(PTC_SPE_OP_LDST, 0x88, &o);			/* SVE reg, scatter/gather */
	CHECK(o.subclass == PTC_SPE_SUB_SVE_SME_REG && !o.pred && o.sg, "sve sg");
	op(PTC_SPE_OP_LDST, 0x58, &o);			/* SVE reg, EVL 32 << 5 */
	CHECK(o.subclass == PTC_SPE_SUB_SVE_SME_REG && o.evl == 1024, "sve evl %u", o.evl);
	/* class 3 is reserved */
	op(3, 0x00, &o);
	CHECK(o.subclass == PTC_SPE_SUB_UNKNOWN, "class 3");
}

static void test_address(void)
{
	struct ptc_spe_packet p;
	struct ptc_spe_address a;
	unsigned int idx, el, ns;

	/* 1011 0iii, 8-byte payload: bit 63 NS, bits 62:61 EL, 55:0 address */
	for (idx = 0; idx < 5; idx++) {
		if (idx == PTC_SPE_ADDR_DATA_VIRT || idx == PTC_SPE_ADDR_DATA_PHYS)
			continue;
		for (el = 0; el < 4; el++) {
			for (ns = 0; ns < 2; ns++) {
				uint64_t v = 0x0000aaaabbbbccc0ULL | ((uint64_t)ns << 63) | ((uint64_t)el << 61);
				uint8_t b[9] = { B(0xb0 | idx) };
				int k;

				for (k = 0; k < 8; k++)
					b[1 + k] = B(v >> (8 * k));
				CHECK_EQ_U64(decode(&p, b, 9), 9);
				CHECK_EQ_U64(p.kind, PTC_SPE_PKT_ADDRESS);
				CHECK_EQ_U64(p.index, idx);
				ptc_spe_address_fields(p.index, p.payload, &a);
				CHECK_EQ_U64(a.addr, 0x0000aaaabbbbccc0ULL);
				CHECK_EQ_U64(a.el, el);
				CHECK_EQ_U64(a.ns, ns);
				CHECK_EQ_U64(decode(&p, b, 8), (uint64_t)-ptc_err_truncated);
			}
		}
	}
	/* A kernel PC: bits 55:48 all ones -> upper-half address. */
	{
		uint8_t b[] = { 0xb0, 0x10, 0x32, 0x54, 0x76, 0x00, 0x80, 0xff, 0xa0 };	/* EL1 NS */
		decode(&p, b, 9);
		ptc_spe_address_fields(p.index, p.payload, &a);
		CHECK_EQ_U64(a.addr, 0xffff800076543210ULL);
		CHECK_EQ_U64(a.el, 1);
		CHECK_EQ_U64(a.ns, 1);
	}
	/* Data VA: top byte is the tag. */
	{
		uint8_t b[] = { 0xb2, 0x08, 0x07, 0x06, 0x05, 0x04, 0x00, 0x00, 0xf2 };
		decode(&p, b, 9);
		CHECK_EQ_U64(p.index, PTC_SPE_ADDR_DATA_VIRT);
		ptc_spe_address_fields(p.index, p.payload, &a);
		CHECK_EQ_U64(a.addr, 0x0405060708ULL);
		CHECK_EQ_U64(a.tag, 0xf2);
		CHECK_EQ_U64(a.el, 0);
	}
	/* Data PA: bit 63 NS, bit 62 CH, bits 59:56 PAT, one at a time. */
	{
		static const struct { uint8_t top; int ns, ch, pat; } t[] = {
			{ 0x80, 1, 0, 0 }, { 0x40, 0, 1, 0 }, { 0x01, 0, 0, 1 },
			{ 0x08, 0, 0, 8 }, { 0x0f, 0, 0, 15 }, { 0xc5, 1, 1, 5 },
		};
		size_t i;
		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			uint8_t b[] = { 0xb3, 0x00, 0x10, 0x20, 0x30, 0x00, 0x00, 0x00, t[i].top };
			decode(&p, b, 9);
			CHECK_EQ_U64(p.index, PTC_SPE_ADDR_DATA_PHYS);
			ptc_spe_address_fields(p.index, p.payload, &a);
			CHECK_EQ_U64(a.addr, 0x30201000ULL);
			CHECK(a.ns == t[i].ns && a.ch == t[i].ch && a.pat == t[i].pat,
			      "PA top 0x%02x: ns %d ch %d pat %d", t[i].top, a.ns, a.ch, a.pat);
		}
	}
	/* Extended header 0010 00ii + 1011 0iii: index ii:iii. */
	{
		uint8_t b[] = { 0x21, 0xb3, 1, 2, 3, 4, 5, 6, 7, 8 };	/* 01:011 = 11 */
		uint8_t c[] = { 0x23, 0xb7, 1, 2, 3, 4, 5, 6, 7, 8 };	/* 11:111 = 31 */
		uint8_t e[] = { 0x20, 0xb1, 1, 2, 3, 4, 5, 6, 7, 8 };	/* 00:001 = 1 */
		CHECK_EQ_U64(decode(&p, b, 10), 10);
		CHECK(p.kind == PTC_SPE_PKT_ADDRESS && p.index == 11 && p.extended, "ext addr 11");
		CHECK_EQ_U64(p.payload, 0x0807060504030201ULL);
		CHECK_EQ_U64(decode(&p, c, 10), 10);
		CHECK(p.kind == PTC_SPE_PKT_ADDRESS && p.index == 31, "ext addr 31");
		CHECK_EQ_U64(decode(&p, e, 10), 10);
		CHECK(p.kind == PTC_SPE_PKT_ADDRESS && p.index == PTC_SPE_ADDR_BRANCH_TARGET, "ext addr 1");
		CHECK_EQ_U64(decode(&p, e, 9), (uint64_t)-ptc_err_truncated);
		CHECK_EQ_U64(decode(&p, e, 1), (uint64_t)-ptc_err_truncated);
	}
}

static void test_counter(void)
{
	struct ptc_spe_packet p;
	unsigned int idx;

	/* 1001 1iii, 2-byte payload */
	for (idx = 0; idx < 8; idx++) {
		uint8_t b[] = { B(0x98 | idx), 0x34, 0x12 };
		CHECK_EQ_U64(decode(&p, b, 3), 3);
		CHECK_EQ_U64(p.kind, PTC_SPE_PKT_COUNTER);
		CHECK_EQ_U64(p.index, idx);
		CHECK_EQ_U64(p.payload, 0x1234);
		CHECK_EQ_U64(decode(&p, b, 2), (uint64_t)-ptc_err_truncated);
	}
	CHECK(!strcmp(ptc_spe_counter_index_name(0), "TOT"), "total");
	CHECK(!strcmp(ptc_spe_counter_index_name(1), "ISSUE"), "issue");
	CHECK(!strcmp(ptc_spe_counter_index_name(2), "XLAT"), "translation");
	{
		uint8_t b[] = { 0x22, 0x9a, 0x07, 0x00 };	/* 10:010 = 18 */
		CHECK_EQ_U64(decode(&p, b, 4), 4);
		CHECK(p.kind == PTC_SPE_PKT_COUNTER && p.index == 18 && p.payload == 7, "ext counter");
	}
}

static void test_alignment(void)
{
	struct ptc_spe_packet p;
	uint8_t z[16] = { 0x20, 0x00 };

	/* 0010 00ii 0000 0000: pad to a 2 << ii boundary */
	CHECK_EQ_U64(ptc_spe_packet_decode(&p, z, 16, 0), 2);
	CHECK_EQ_U64(p.kind, PTC_SPE_PKT_ALIGN);
	z[0] = 0x21;
	CHECK_EQ_U64(ptc_spe_packet_decode(&p, z, 16, 0), 4);
	CHECK_EQ_U64(ptc_spe_packet_decode(&p, z, 16, 2), 2);
	z[0] = 0x23;
	CHECK_EQ_U64(ptc_spe_packet_decode(&p, z, 16, 0), 16);
	CHECK_EQ_U64(ptc_spe_packet_decode(&p, z, 16, 4), 12);
	CHECK_EQ_U64(ptc_spe_packet_decode(&p, z, 8, 0), (uint64_t)-ptc_err_truncated);
}

/* Every first byte: the packet kind must follow the encoding table. */
static void test_all_headers(void)
{
	unsigned int h;

	for (h = 0; h < 256; h++) {
		uint8_t b[16] = { B(h), 0x99 };	/* 0x99 after an extended header: a counter */
		struct ptc_spe_packet p;
		int want, n = ptc_spe_packet_decode(&p, b, 16, 0);

		if (h == 0x00) want = PTC_SPE_PKT_PAD;
		else if (h == 0x01) want = PTC_SPE_PKT_END;
		else if (h == 0x71) want = PTC_SPE_PKT_TIMESTAMP;
		else if ((h >> 6) == 1 && (h & 0xf) == 2) want = PTC_SPE_PKT_EVENTS;
		else if ((h >> 6) == 1 && (h & 0xf) == 3) want = PTC_SPE_PKT_DATA_SOURCE;
		else if ((h >> 6) == 1 && ((h >> 2) & 3) == 1) want = PTC_SPE_PKT_CONTEXT;
		else if ((h >> 6) == 1 && ((h >> 2) & 3) == 2) want = PTC_SPE_PKT_OP_TYPE;
		else if ((h >> 3) == 0x16) want = PTC_SPE_PKT_ADDRESS;	/* 1011 0 */
		else if ((h >> 3) == 0x13) want = PTC_SPE_PKT_COUNTER;	/* 1001 1 */
		else if ((h >> 2) == 0x08) want = PTC_SPE_PKT_COUNTER;	/* 0010 00: extended */
		else want = -1;
		if (want < 0)
			CHECK(n == -ptc_err_decode, "header 0x%02x should be invalid, got %d", h, n);
		else
			CHECK(n > 0 && p.kind == want, "header 0x%02x: kind %d want %d", h,
			      n > 0 ? p.kind : n, want);
	}
	/* An extended header before anything but ADDRESS/COUNTER/alignment. */
	{
		uint8_t b[] = { 0x20, 0x42, 0x00 };
		struct ptc_spe_packet p;
		CHECK(ptc_spe_packet_decode(&p, b, 3, 0) == -ptc_err_decode, "ext + events");
	}
}

/* Record layer: fields, boundaries, corruption and resynchronisation. */
struct collect {
	int n;
	struct ptc_spe_record r[8];
};

static int collect(void *ctx, const struct ptc_spe_record *r)
{
	struct collect *c = ctx;
	if (c->n < 8)
		c->r[c->n] = *r;
	c->n++;
	return 0;
}

static void test_records(void)
{
	static const uint8_t s[] = {
		/* record 1: BLR (indirect call), mispredicted, retired, context, END */
		0xb0, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80,	/* PC 0x401000 EL0 NS */
		0x65, 0xd2, 0x04, 0x00, 0x00,				/* CONTEXT EL2 1234 */
		0x4a, 0x0a,						/* OP branch 0000 1010 */
		0x52, 0x82, 0x00,					/* EVENTS retired|mispred */
		0x99, 0x05, 0x00, 0x98, 0x09, 0x00, 0x9a, 0x03, 0x00,	/* ISSUE 5 TOT 9 XLAT 3 */
		0xb1, 0x00, 0x20, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80,	/* TGT 0x402000 */
		0xb4, 0x00, 0x0f, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80,	/* PBT 0x400f00 */
		0x01,
		/* record 2: corrupt in the middle -> dropped */
		0xb0, 0x00, 0x11, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80,
		0x02,							/* no such header */
		0x4a, 0x01,
		0x71, 1, 0, 0, 0, 0, 0, 0, 0,				/* boundary */
		/* record 3: load with data addresses, TIMESTAMP */
		0x00, 0x00,
		0xb0, 0x00, 0x12, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80,	/* PC 0x401200 */
		0x49, 0x00,						/* LD GP */
		0x64, 0x39, 0x30, 0x00, 0x00,				/* CONTEXT EL1 12345 */
		0xb2, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00,	/* VA 0x10000000 */
		0xb3, 0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,	/* PA 0x5000 NS */
		0x43, 0x02,						/* DATA_SOURCE 2 */
		0x42, 0x06,						/* retired, L1D access */
		0x71, 0x10, 0x27, 0, 0, 0, 0, 0, 0,			/* TS 10000 */
		/* END alone: empty */
		0x01,
	};
	struct collect c = { 0 };
	struct ptc_spe_decoder *d;
	const struct ptc_spe_decode_stats *st;
	size_t cut;

	ptc_spe_decoder_new(&d, collect, &c);
	CHECK(ptc_spe_decoder_feed(d, s, sizeof(s), 0x1000) == 0, "feed");
	ptc_spe_decoder_finish(d);
	st = ptc_spe_decoder_stats(d);
	CHECK_EQ_U64(c.n, 2);
	CHECK_EQ_U64(st->records, 2);
	CHECK_EQ_U64(st->bad_bytes, 1);
	CHECK_EQ_U64(st->resyncs, 1);
	CHECK_EQ_U64(st->dropped_records, 1);
	CHECK_EQ_U64(st->empty_records, 1);
	CHECK_EQ_U64(ptc_spe_decoder_last_error_offset(d), 0x1000 + 56);

	CHECK_EQ_U64(c.r[0].offset, 0x1000);
	CHECK_EQ_U64(c.r[0].size, 47);
	CHECK_EQ_U64(c.r[0].pc.addr, 0x401000);
	CHECK_EQ_U64(c.r[0].context_el2, 1234);
	CHECK(c.r[0].present & PTC_SPE_F_CONTEXT_EL2, "ctx el2");
	CHECK(!(c.r[0].present & PTC_SPE_F_CONTEXT_EL1), "no ctx el1");
	CHECK(c.r[0].op.indirect && c.r[0].op.cr == PTC_SPE_CR_CALL && !c.r[0].op.cond, "BLR");
	CHECK(ptc_spe_retired(&c.r[0]) && ptc_spe_mispredicted(&c.r[0]), "events");
	CHECK_EQ_U64(c.r[0].events_size, 2);
	CHECK_EQ_U64(c.r[0].lat_issue, 5);
	CHECK_EQ_U64(c.r[0].lat_total, 9);
	CHECK_EQ_U64(c.r[0].lat_xlat, 3);
	CHECK_EQ_U64(c.r[0].counter_mask, 7);
	CHECK_EQ_U64(c.r[0].target.addr, 0x402000);
	CHECK_EQ_U64(c.r[0].prev_target.addr, 0x400f00);
	CHECK(c.r[0].present & PTC_SPE_F_PREV_TARGET, "pbt");
	CHECK_EQ_U64(c.r[0].ended_by_timestamp, 0);

	CHECK_EQ_U64(c.r[1].op_class, PTC_SPE_OP_LDST);
	CHECK_EQ_U64(c.r[1].context_el1, 12345);
	CHECK_EQ_U64(c.r[1].vaddr.addr, 0x10000000);
	CHECK_EQ_U64(c.r[1].paddr.addr, 0x5000);
	CHECK_EQ_U64(c.r[1].paddr.ns, 1);
	CHECK_EQ_U64(c.r[1].data_source, 2);
	CHECK_EQ_U64(c.r[1].timestamp, 10000);
	CHECK_EQ_U64(c.r[1].ended_by_timestamp, 1);
	CHECK_EQ_U64(c.r[1].pc.addr, 0x401200);
	ptc_spe_decoder_free(d);

	/* Cut anywhere into two contiguous pieces: same result. */
	for (cut = 0; cut <= sizeof(s); cut++) {
		struct collect c2 = { 0 };
		ptc_spe_decoder_new(&d, collect, &c2);
		ptc_spe_decoder_feed(d, s, cut, 0x1000);
		ptc_spe_decoder_feed(d, s + cut, sizeof(s) - cut, 0x1000 + cut);
		ptc_spe_decoder_finish(d);
		CHECK(c2.n == 2 && c2.r[0].target.addr == 0x402000 && c2.r[1].timestamp == 10000 &&
		      c2.r[0].lat_xlat == 3 && c2.r[1].paddr.addr == 0x5000,
		      "cut at %zu: %d records", cut, c2.n);
		ptc_spe_decoder_free(d);
	}

	/* A discontinuity drops the record in progress. */
	{
		struct collect c3 = { 0 };
		ptc_spe_decoder_new(&d, collect, &c3);
		ptc_spe_decoder_feed(d, s, 20, 0);
		ptc_spe_decoder_feed(d, s, 47, 500);
		ptc_spe_decoder_finish(d);
		st = ptc_spe_decoder_stats(d);
		CHECK_EQ_U64(c3.n, 1);
		CHECK_EQ_U64(st->discontinuities, 1);
		CHECK_EQ_U64(st->dropped_records, 1);
		CHECK_EQ_U64(c3.r[0].offset, 500);
		ptc_spe_decoder_free(d);
	}
	/* The stream ends inside a record: counted, not delivered. */
	{
		struct collect c4 = { 0 };
		ptc_spe_decoder_new(&d, collect, &c4);
		ptc_spe_decoder_feed(d, s, 30, 0);
		ptc_spe_decoder_finish(d);
		st = ptc_spe_decoder_stats(d);
		CHECK_EQ_U64(c4.n, 0);
		CHECK_EQ_U64(st->dropped_records, 1);
		ptc_spe_decoder_free(d);
	}
}

int main(void)
{
	test_simple();
	test_events();
	test_data_source_context();
	test_op_branch();
	test_op_other();
	test_op_ldst();
	test_address();
	test_counter();
	test_alignment();
	test_all_headers();
	test_records();
	return check_result();
}
