/* Growing an array by doubling (the one helper for it). */
#ifndef PTC_COMMON_GROW_H
#define PTC_COMMON_GROW_H

#include <stdlib.h>

#include "common/error.h"

/* Room in *v (of *cap elements of elem bytes) for need: the capacity
 * doubled from *cap (first when 0) until it does.  0, or -ptc_err_nomem
 * with *v and *cap as they were. */
static inline int ptc_grow(void **v, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t ncap = *cap ? *cap : first;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*v, ncap * elem);
	if (!p)
		return -ptc_err_nomem;
	*v = p;
	*cap = ncap;
	return 0;
}

#endif
