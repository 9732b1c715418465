#include "common/time_conv.h"

uint64_t ptc_time_conv_ticks(const struct ptc_time_conv *tc, uint64_t ticks)
{
	uint64_t quot, rem;

	if (!tc->valid)
		return ticks;
	if (tc->cap_user_time_short)
		ticks = tc->time_cycles + ((ticks - tc->time_cycles) & tc->time_mask);
	if (tc->time_shift >= 64)
		return tc->time_zero;
	/* Split so that the multiplication cannot overflow, as the kernel does. */
	quot = ticks >> tc->time_shift;
	rem = ticks & ((1ull << tc->time_shift) - 1);
	return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> tc->time_shift);
}
