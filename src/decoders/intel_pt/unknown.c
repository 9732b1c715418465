/* See unknown.h. */
#include "decoders/intel_pt/unknown.h"

#include <inttypes.h>
#include <stdio.h>

#include "images/x86_newer.h"

const char *ptc_pt_newer_packet(const uint8_t *p, size_t n)
{
	/* the opcodes of the SDM's packet formats: 02 13 CFE, 02 53 EVD
	 * (Event Trace), D9 TRIG (trigger tracing) */
	if (n >= 2 && p[0] == 0x02 && p[1] == 0x13)
		return "CFE packet (Event Trace)";
	if (n >= 2 && p[0] == 0x02 && p[1] == 0x53)
		return "EVD packet (Event Trace)";
	if (n >= 1 && p[0] == 0xd9)
		return "TRIG packet (trigger tracing)";
	return NULL;
}

/* Where libipt's packet decoder stops on an unknown opcode, reading from
 * the PSB at sync_off: 0 and *pos, or <0. */
static int unknown_at(const struct pt_config *cfg, uint64_t sync_off, uint64_t *pos)
{
	struct pt_packet_decoder *pk = pt_pkt_alloc_decoder(cfg);
	struct pt_packet p;
	int err;

	if (!pk)
		return -pte_nomem;
	err = pt_pkt_sync_set(pk, sync_off);
	while (err >= 0)
		err = pt_pkt_next(pk, &p, sizeof(p));
	if (err == -pte_bad_opc && pt_pkt_get_offset(pk, pos) == 0)
		err = 0;
	pt_pkt_free_decoder(pk);
	return err;
}

const char *ptc_pt_why(const struct pt_config *cfg, uint64_t sync_off, uint64_t base, int st, char *buf,
		       size_t n)
{
	struct pt_version v = pt_library_version();
	uint64_t pos = 0;
	const char *name;
	size_t left;

	if (st != -pte_bad_opc || unknown_at(cfg, sync_off, &pos) < 0) {
		snprintf(buf, n, "%s", pt_errstr(pt_errcode(st)));
		return buf;
	}
	left = (size_t)(cfg->end - cfg->begin) - (size_t)pos;
	name = ptc_pt_newer_packet(cfg->begin + pos, left);
	if (name)
		snprintf(buf, n, "a %s at 0x%" PRIx64 ", which libipt %u.%u does not decode", name, base + pos,
			 v.major, v.minor);
	else
		snprintf(buf, n, "an unknown opcode 0x%02x at 0x%" PRIx64 " (libipt %u.%u)", cfg->begin[pos],
			 base + pos, v.major, v.minor);
	return buf;
}

const char *ptc_pt_why_insn(const uint8_t *p, size_t n, uint64_t ip, char *buf, size_t len)
{
	struct pt_version v = pt_library_version();
	struct ptc_x86_newer nw;

	if (!ptc_x86_newer_branch(p, n, &nw))
		return NULL;
	snprintf(buf, len, "libipt %u.%u does not decode %s at 0x%" PRIx64, v.major, v.minor, nw.name, ip);
	return buf;
}

const char *ptc_pt_errata_hint(int cpu_known, const char *erratum, char *buf, size_t n)
{
	if (cpu_known)
		snprintf(buf, n, "%s", "");
	else
		snprintf(buf, n, " (erratum %s if the CPU has it: --cpu would resolve it)", erratum);
	return buf;
}

int ptc_pt_abort_before(const struct pt_config *cfg, uint64_t sync_off, uint64_t to, uint64_t *ip)
{
	struct pt_query_decoder *q;
	uint64_t off = 0, x;
	int st, taken, found = 0;
	unsigned n;

	/* only for a failure, at most a few thousand answers back */
	if (to < sync_off || to - sync_off > (1u << 16) || !(q = pt_qry_alloc_decoder(cfg)))
		return 0;
	st = pt_qry_sync_set(q, &x, sync_off);
	for (n = 0; st >= 0 && n < (1u << 16) && pt_qry_get_offset(q, &off) == 0 && off <= to; n++) {
		struct pt_event ev;

		/* An event pending at to was read by the decoder that failed
		 * there too: libipt 2.0 places a decoder after the packets it
		 * read, 2.1 and later (decoding on events) at the last one,
		 * the FUP that completes the event it holds.  An answer from
		 * a packet at to was not given: the failure was in its place. */
		if (off == to && !(st & pts_event_pending))
			break;
		if (st & pts_event_pending) {
			st = pt_qry_event(q, &ev, sizeof(ev));
			if (st >= 0 && ev.type == ptev_tsx && ev.variant.tsx.aborted && !ev.ip_suppressed) {
				found = 1;
				*ip = ev.variant.tsx.ip;
			} else if (st >= 0 && ev.type != ptev_async_branch) {
				found = 0;
			}
			continue;
		}
		st = pt_qry_cond_branch(q, &taken);
		if (st == -pte_bad_query)
			st = pt_qry_indirect_branch(q, &x);
		found = 0;
	}
	pt_qry_free_decoder(q);
	return found;
}
