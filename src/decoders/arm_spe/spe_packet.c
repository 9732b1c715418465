/* ARM SPE packet layer (see spe_packet.h for the encodings). */
#include <stdio.h>
#include <string.h>

#include "common/bytes.h"
#include "common/error.h"
#include "decoders/arm_spe/spe_packet.h"

/* Header bits 5:4 hold log2 of the payload size. */
static unsigned int payload_size_of(uint8_t hdr)
{
	return 1u << ((hdr >> 4) & 3);
}

static uint64_t load_payload(const uint8_t *p, unsigned int size)
{
	switch (size) {
	case 1: return p[0];
	case 2: return ptc_le16(p);
	case 4: return ptc_le32(p);
	default: return ptc_le64(p);
	}
}

/* A packet whose payload size comes from header bits 5:4; hdr_bytes is 1,
 * or 2 after an extended header. */
static int with_payload(struct ptc_spe_packet *pkt, const uint8_t *buf, size_t len,
			unsigned int hdr_bytes)
{
	unsigned int psize = payload_size_of(buf[hdr_bytes - 1]);

	if (len < hdr_bytes + psize)
		return -ptc_err_truncated;
	pkt->payload_size = (uint8_t)psize;
	pkt->payload = load_payload(buf + hdr_bytes, psize);
	pkt->size = (uint8_t)(hdr_bytes + psize);
	return pkt->size;
}

int ptc_spe_packet_decode(struct ptc_spe_packet *pkt, const uint8_t *buf, size_t len,
			  uint64_t offset)
{
	uint8_t hdr;
	unsigned int hdr_bytes = 1, ext_index = 0;

	memset(pkt, 0, sizeof(*pkt));
	if (!len)
		return -ptc_err_truncated;
	hdr = buf[0];
	pkt->header = hdr;

	if (hdr == 0x00) {
		pkt->kind = PTC_SPE_PKT_PAD;
		pkt->size = 1;
		return 1;
	}
	if (hdr == 0x01) {
		pkt->kind = PTC_SPE_PKT_END;
		pkt->size = 1;
		return 1;
	}
	if (hdr == 0x71) {
		pkt->kind = PTC_SPE_PKT_TIMESTAMP;
		return with_payload(pkt, buf, len, 1);
	}
	/* 01sz 0010 and 01sz 0011 */
	if ((hdr & 0xcf) == 0x42) {
		pkt->kind = PTC_SPE_PKT_EVENTS;
		return with_payload(pkt, buf, len, 1);
	}
	if ((hdr & 0xcf) == 0x43) {
		pkt->kind = PTC_SPE_PKT_DATA_SOURCE;
		return with_payload(pkt, buf, len, 1);
	}
	/* 01sz 01ii and 01sz 10cc */
	if ((hdr & 0xcc) == 0x44) {
		pkt->kind = PTC_SPE_PKT_CONTEXT;
		pkt->index = hdr & 3;
		return with_payload(pkt, buf, len, 1);
	}
	if ((hdr & 0xcc) == 0x48) {
		pkt->kind = PTC_SPE_PKT_OP_TYPE;
		pkt->index = hdr & 3;
		return with_payload(pkt, buf, len, 1);
	}
	/* 0010 00ii: extended header, the packet header proper follows. */
	if ((hdr & 0xfc) == 0x20) {
		if (len < 2)
			return -ptc_err_truncated;
		pkt->extended = 1;
		ext_index = (unsigned int)(hdr & 3) << 3;
		if (buf[1] == 0x00) {
			/* Alignment pad: up to the next 2 << ii byte boundary
			 * of the stream (what Linux perf does; the AUX buffer
			 * starts page-aligned, so buffer and stream agree). */
			unsigned int align = 2u << (hdr & 3);
			unsigned int size = align - (unsigned int)(offset & (align - 1));

			if (size < 2)
				size += align;
			if (len < size)
				return -ptc_err_truncated;
			pkt->kind = PTC_SPE_PKT_ALIGN;
			pkt->index = (uint8_t)align;
			pkt->size = (uint8_t)size;
			return (int)size;
		}
		hdr_bytes = 2;
		hdr = buf[1];
		pkt->header = hdr;
	}
	/* 1011 0iii and 1001 1iii, short or after an extended header. */
	if ((hdr & 0xf8) == 0xb0) {
		pkt->kind = PTC_SPE_PKT_ADDRESS;
		pkt->index = (uint8_t)(ext_index | (hdr & 7));
		return with_payload(pkt, buf, len, hdr_bytes);
	}
	if ((hdr & 0xf8) == 0x98) {
		pkt->kind = PTC_SPE_PKT_COUNTER;
		pkt->index = (uint8_t)(ext_index | (hdr & 7));
		return with_payload(pkt, buf, len, hdr_bytes);
	}
	return -ptc_err_decode;
}

const char *ptc_spe_packet_name(unsigned int kind)
{
	static const char *const names[PTC_SPE_PKT_KIND_NR] = {
		[PTC_SPE_PKT_PAD] = "PAD",
		[PTC_SPE_PKT_END] = "END",
		[PTC_SPE_PKT_TIMESTAMP] = "TIMESTAMP",
		[PTC_SPE_PKT_EVENTS] = "EVENTS",
		[PTC_SPE_PKT_DATA_SOURCE] = "DATA_SOURCE",
		[PTC_SPE_PKT_CONTEXT] = "CONTEXT",
		[PTC_SPE_PKT_OP_TYPE] = "OP_TYPE",
		[PTC_SPE_PKT_ADDRESS] = "ADDRESS",
		[PTC_SPE_PKT_COUNTER] = "COUNTER",
		[PTC_SPE_PKT_ALIGN] = "ALIGN",
	};
	return kind < PTC_SPE_PKT_KIND_NR ? names[kind] : "UNKNOWN";
}

const char *ptc_spe_addr_index_name(unsigned int index)
{
	static const char *const names[] = { "PC", "TGT", "VA", "PA", "PBT" };
	return index < 5 ? names[index] : NULL;
}

const char *ptc_spe_counter_index_name(unsigned int index)
{
	static const char *const names[] = { "TOT", "ISSUE", "XLAT" };
	return index < 3 ? names[index] : NULL;
}

const char *ptc_spe_event_name(unsigned int bit)
{
	static const char *const names[26] = {
		[PTC_SPE_EV_EXCEPTION_GEN] = "EXCEPTION-GEN",
		[PTC_SPE_EV_RETIRED] = "RETIRED",
		[PTC_SPE_EV_L1D_ACCESS] = "L1D-ACCESS",
		[PTC_SPE_EV_L1D_REFILL] = "L1D-REFILL",
		[PTC_SPE_EV_TLB_ACCESS] = "TLB-ACCESS",
		[PTC_SPE_EV_TLB_WALK] = "TLB-REFILL",
		[PTC_SPE_EV_NOT_TAKEN] = "NOT-TAKEN",
		[PTC_SPE_EV_MISPREDICTED] = "MISPRED",
		[PTC_SPE_EV_LLC_ACCESS] = "LLC-ACCESS",
		[PTC_SPE_EV_LLC_MISS] = "LLC-REFILL",
		[PTC_SPE_EV_REMOTE_ACCESS] = "REMOTE-ACCESS",
		[PTC_SPE_EV_ALIGNMENT] = "ALIGNMENT",
		[PTC_SPE_EV_TRANSACTIONAL] = "TXN",
		[PTC_SPE_EV_PARTIAL_PREDICATE] = "SVE-PARTIAL-PRED",
		[PTC_SPE_EV_EMPTY_PREDICATE] = "SVE-EMPTY-PRED",
		[PTC_SPE_EV_L2D_ACCESS] = "L2D-ACCESS",
		[PTC_SPE_EV_L2D_MISS] = "L2D-MISS",
		[PTC_SPE_EV_CACHE_DATA_MODIFIED] = "HITM",
		[PTC_SPE_EV_RECENTLY_FETCHED] = "LFB",
		[PTC_SPE_EV_DATA_SNOOPED] = "SNOOPED",
		[PTC_SPE_EV_STREAMING_SVE] = "STREAMING-SVE",
		[PTC_SPE_EV_SMCU] = "SMCU",
	};
	return bit < 26 ? names[bit] : NULL;
}

void ptc_spe_address_fields(unsigned int index, uint64_t payload, struct ptc_spe_address *out)
{
	uint64_t low = payload & ((1ULL << 56) - 1);

	memset(out, 0, sizeof(*out));
	switch (index) {
	case PTC_SPE_ADDR_DATA_PHYS:
		out->addr = low;
		out->ns = (uint8_t)(payload >> 63);
		out->ch = (uint8_t)((payload >> 62) & 1);
		out->pat = (uint8_t)((payload >> 56) & 0xf);
		break;
	case PTC_SPE_ADDR_DATA_VIRT:
		/* The top byte is the pointer tag; the address proper is
		 * 56 bits, upper half when bit 55 is set. */
		out->tag = (uint8_t)(payload >> 56);
		out->addr = (low & (1ULL << 55)) ? (low | 0xff00000000000000ULL) : low;
		break;
	default:
		/* PC, branch target, previous branch target (and, for
		 * unknown indexes, the same layout as the best guess). */
		out->ns = (uint8_t)(payload >> 63);
		out->el = (uint8_t)((payload >> 61) & 3);
		out->addr = (low & (1ULL << 55)) ? (low | 0xff00000000000000ULL) : low;
		break;
	}
}

void ptc_spe_op_fields(unsigned int cls, uint8_t v, struct ptc_spe_op *out)
{
	memset(out, 0, sizeof(*out));
	out->cls = (uint8_t)cls;
	switch (cls) {
	case PTC_SPE_OP_OTHER:
		if ((v & 0xf8) == 0) {
			out->subclass = PTC_SPE_SUB_OTHER;
			out->cond = v & 1;		/* conditional select */
			out->fp = (v >> 1) & 1;
			out->simd = (v >> 2) & 1;
		} else if ((v & 0x89) == 0x08) {
			out->subclass = PTC_SPE_SUB_SVE_OTHER;
			out->fp = (v >> 1) & 1;
			out->pred = (v >> 2) & 1;
			out->evl = (uint16_t)(32u << ((v >> 4) & 7));
		} else if ((v & 0x89) == 0x88) {
			out->subclass = PTC_SPE_SUB_SME_OTHER;
			out->fp = (v >> 1) & 1;
			out->ets = 128u << ((((v >> 4) & 7) << 1) | ((v >> 2) & 1));
		}
		break;
	case PTC_SPE_OP_LDST:
		out->store = v & 1;
		if ((v & 0xfe) == 0x00)
			out->subclass = PTC_SPE_SUB_GP_REG;
		else if ((v & 0xe2) == 0x02) {
			out->subclass = PTC_SPE_SUB_EXTENDED;
			out->atomic = (v >> 2) & 1;
			out->exclusive = (v >> 3) & 1;
			out->acq_rel = (v >> 4) & 1;
		} else if ((v & 0xfe) == 0x04)
			out->subclass = PTC_SPE_SUB_SIMD_FP;
		else if ((v & 0x0a) == 0x08) {
			out->subclass = PTC_SPE_SUB_SVE_SME_REG;
			out->pred = (v >> 2) & 1;
			out->sg = (v >> 7) & 1;
			out->evl = (uint16_t)(32u << ((v >> 4) & 7));
		} else if ((v & 0xfe) == 0x10)
			out->subclass = PTC_SPE_SUB_UNSPEC_REG;
		else if ((v & 0xfe) == 0x14)
			out->subclass = PTC_SPE_SUB_MTE_TAG;
		else if ((v & 0xfe) == 0x20)
			out->subclass = PTC_SPE_SUB_MEMCPY;
		else if (v == 0x25)
			out->subclass = PTC_SPE_SUB_MEMSET;
		else if ((v & 0xfe) == 0x30)
			out->subclass = PTC_SPE_SUB_NV_SYSREG;
		else if ((v & 0xfa) == 0x40) {
			out->subclass = PTC_SPE_SUB_GCS;
			out->gcs_common = (v >> 2) & 1;
		}
		break;
	case PTC_SPE_OP_BRANCH:
		/* Every attribute is its own bit: an indirect call (BLR) is
		 * 0x0a, a return 0x12, and neither may hide the other. */
		out->subclass = PTC_SPE_SUB_BRANCH;
		out->cond = v & 1;
		out->indirect = (v >> 1) & 1;
		out->gcs = (v >> 2) & 1;
		out->cr = (v >> 3) & 3;
		break;
	default:
		break;
	}
}

const char *ptc_spe_op_subclass_name(unsigned int subclass)
{
	static const char *const names[PTC_SPE_SUB_NR] = {
		[PTC_SPE_SUB_UNKNOWN] = "UNKNOWN",
		[PTC_SPE_SUB_OTHER] = "OTHER",
		[PTC_SPE_SUB_SVE_OTHER] = "SVE-OTHER",
		[PTC_SPE_SUB_SME_OTHER] = "SME-OTHER",
		[PTC_SPE_SUB_GP_REG] = "GP-REG",
		[PTC_SPE_SUB_EXTENDED] = "EXTENDED",
		[PTC_SPE_SUB_SIMD_FP] = "SIMD-FP",
		[PTC_SPE_SUB_SVE_SME_REG] = "SVE-SME-REG",
		[PTC_SPE_SUB_UNSPEC_REG] = "UNSPEC-REG",
		[PTC_SPE_SUB_MTE_TAG] = "MTE-TAG",
		[PTC_SPE_SUB_MEMCPY] = "MEMCPY",
		[PTC_SPE_SUB_MEMSET] = "MEMSET",
		[PTC_SPE_SUB_NV_SYSREG] = "NV-SYSREG",
		[PTC_SPE_SUB_GCS] = "GCS",
		[PTC_SPE_SUB_BRANCH] = "BRANCH",
	};
	return subclass < PTC_SPE_SUB_NR ? names[subclass] : "UNKNOWN";
}

int ptc_spe_packet_describe(const struct ptc_spe_packet *pkt, char *buf, size_t len)
{
	struct ptc_spe_address a;
	const char *name;

	switch (pkt->kind) {
	case PTC_SPE_PKT_ADDRESS:
		ptc_spe_address_fields(pkt->index, pkt->payload, &a);
		name = ptc_spe_addr_index_name(pkt->index);
		if (pkt->index == PTC_SPE_ADDR_DATA_VIRT)
			return snprintf(buf, len, "VA 0x%llx tag=0x%x",
					(unsigned long long)a.addr, a.tag);
		if (pkt->index == PTC_SPE_ADDR_DATA_PHYS)
			return snprintf(buf, len, "PA 0x%llx ns=%d ch=%d pat=%x",
					(unsigned long long)a.addr, a.ns, a.ch, a.pat);
		if (name)
			return snprintf(buf, len, "%s 0x%llx el%d ns=%d", name,
					(unsigned long long)a.addr, a.el, a.ns);
		return snprintf(buf, len, "ADDRESS[%u] 0x%llx", pkt->index,
				(unsigned long long)pkt->payload);
	case PTC_SPE_PKT_COUNTER:
		name = ptc_spe_counter_index_name(pkt->index);
		if (name)
			return snprintf(buf, len, "LAT %llu %s", (unsigned long long)pkt->payload, name);
		return snprintf(buf, len, "COUNTER[%u] %llu", pkt->index,
				(unsigned long long)pkt->payload);
	case PTC_SPE_PKT_CONTEXT:
		return snprintf(buf, len, "CONTEXT 0x%llx el%d",
				(unsigned long long)pkt->payload, pkt->index + 1);
	case PTC_SPE_PKT_TIMESTAMP:
		return snprintf(buf, len, "TS %llu", (unsigned long long)pkt->payload);
	case PTC_SPE_PKT_DATA_SOURCE:
		return snprintf(buf, len, "DATA-SOURCE %llu", (unsigned long long)pkt->payload);
	case PTC_SPE_PKT_EVENTS:
	case PTC_SPE_PKT_OP_TYPE:
		return snprintf(buf, len, "%s 0x%llx", ptc_spe_packet_name(pkt->kind),
				(unsigned long long)pkt->payload);
	default:
		return snprintf(buf, len, "%s", ptc_spe_packet_name(pkt->kind));
	}
}
