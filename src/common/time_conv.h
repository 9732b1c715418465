/* Hardware timestamps to perf time.
 *
 * perf records how the kernel converts the CPU's counter (Intel TSC, Arm
 * generic timer) to perf's clock in TIME_CONV (and, in older Intel PT files,
 * in AUXTRACE_INFO).  Every decoder that puts perf times on trace events
 * applies the same arithmetic, so it lives here once.
 */
#ifndef PTC_COMMON_TIME_CONV_H
#define PTC_COMMON_TIME_CONV_H

#include <stdint.h>

struct ptc_time_conv {
	int valid;			/* 0: leave ticks as they are */
	uint64_t time_shift, time_mult, time_zero;
	uint64_t time_cycles, time_mask;	/* cap_user_time_short only */
	int cap_user_time_short;
};

/* ticks * mult >> shift + zero, without overflowing the product. */
uint64_t ptc_time_conv_ticks(const struct ptc_time_conv *tc, uint64_t ticks);

#endif
