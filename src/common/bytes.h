/* Little-endian loads from untrusted buffers, and the stores and varints
 * ptconv writes.
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

/* v as a varint (7 bits a byte, the low ones first; the top bit: more
 * follow) at p, which has room for 10 bytes; returns its end. */
static inline uint8_t *ptc_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* A signed difference d (as uint64_t) made small when |d| is: 2|d|, less
 * one when negative, for ptc_put_varint(). */
static inline uint64_t ptc_zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

/* The difference ptc_zigzag() made v of. */
static inline uint64_t ptc_unzigzag(uint64_t v)
{
	return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
}

#endif
