/* Little-endian loads from untrusted buffers.
 *
 * Every on-disk structure ptconv reads (perf.data, AUX data, trace files) is
 * little-endian and may be unaligned, so fields are loaded byte-wise through
 * memcpy rather than by casting pointers.
 */
#ifndef PTC_COMMON_BYTES_H
#define PTC_COMMON_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t ptc_le16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t ptc_le32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t ptc_le64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void ptc_put16(void *p, uint16_t v) { memcpy(p, &v, sizeof(v)); }
static inline void ptc_put32(void *p, uint32_t v) { memcpy(p, &v, sizeof(v)); }
static inline void ptc_put64(void *p, uint64_t v) { memcpy(p, &v, sizeof(v)); }

#endif
