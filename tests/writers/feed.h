/* The test feeders' branch events (xray_feed.c, ptc_syms_feed.c). */
#ifndef PTC_TESTS_WRITERS_FEED_H
#define PTC_TESTS_WRITERS_FEED_H

#include <string.h>

#include "common/trace_event.h"

/* A taken branch of kind from ip to target at time, of length bytes,
 * insns instructions after the previous one's destination. */
static inline struct ptc_branch feed_branch(uint64_t ip, uint64_t target, int kind, uint64_t time,
					    uint8_t length, uint32_t insns)
{
	struct ptc_branch b;

	memset(&b, 0, sizeof(b));
	b.ip = ip;
	b.target = target;
	b.kind = (uint8_t)kind;
	b.taken = 1;
	b.length = length;
	b.time = time;
	b.insns = insns;
	return b;
}

#endif
