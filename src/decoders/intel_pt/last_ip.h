/* The last IP of an Intel PT stream: IP packets carry only the bytes that
 * changed since the previous IP packet (IP compression), so a decoder keeps
 * the last full IP and applies each packet's update to it.  Reset at a PSB
 * (a fresh struct).  Shared by ptconv's query decoder (fastq.c) and the
 * packet scans of loss.c. */
#ifndef PTC_LAST_IP_H
#define PTC_LAST_IP_H

#include <stdint.h>

#include <intel-pt.h>

struct ptc_last_ip {
	uint64_t ip;
	int have;		/* an IP was given since the reset */
	int suppressed;		/* the last IP packet had none */
};

/* No IP known: at a PSB, where IP compression starts over. */
static inline void ptc_last_ip_reset(struct ptc_last_ip *l)
{
	l->ip = 0;
	l->have = l->suppressed = 0;
}

/* Apply packet p: 0, or -pte_bad_packet for an unknown compression. */
static inline int ptc_last_ip_update(struct ptc_last_ip *l, const struct pt_packet_ip *p)
{
	uint64_t ip = p->ip;

	switch (p->ipc) {
	case pt_ipc_suppressed:
		l->suppressed = 1;
		return 0;
	case pt_ipc_sext_48:
		ip &= 0xffffffffffffull;
		l->ip = (ip & (1ull << 47)) ? ip | ~0xffffffffffffull : ip;
		break;
	case pt_ipc_update_16:
		l->ip = (l->ip & ~0xffffull) | (ip & 0xffffull);
		break;
	case pt_ipc_update_32:
		l->ip = (l->ip & ~0xffffffffull) | (ip & 0xffffffffull);
		break;
	case pt_ipc_update_48:
		l->ip = (l->ip & ~0xffffffffffffull) | (ip & 0xffffffffffffull);
		break;
	case pt_ipc_full:
		l->ip = ip;
		break;
	default:
		return -pte_bad_packet;
	}
	l->have = 1;
	l->suppressed = 0;
	return 0;
}

#endif
