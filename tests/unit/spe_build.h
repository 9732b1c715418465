/* Test helpers: SPE packets built from the architecture's encodings, and
 * perf.data recordings around them (written with the project's perf.data
 * writer).  Shared by the SPE tests; header-only on purpose. */
#ifndef PTC_TESTS_SPE_BUILD_H
#define PTC_TESTS_SPE_BUILD_H

#include <stdint.h>
#include <string.h>

struct spe_buf {
	uint8_t b[1 << 16];
	size_t n;
};

static inline void sb_byte(struct spe_buf *s, uint8_t v)
{
	if (s->n < sizeof(s->b))
		s->b[s->n++] = v;
}

static inline void sb_le(struct spe_buf *s, uint64_t v, unsigned int size)
{
	unsigned int i;

	for (i = 0; i < size; i++)
		sb_byte(s, (uint8_t)(v >> (8 * i)));
}

/* log2 of a payload size, the sz field of a header (bits 5:4) */
static inline uint8_t sb_sz(unsigned int size)
{
	return size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
}

/* ADDRESS 1011 0iii; extended 0010 00ii 1011 0iii for index > 7.
 * Virtual: bit 63 NS, bits 62:61 EL, bits 55:0 address. */
static inline void sb_addr(struct spe_buf *s, unsigned int idx, uint64_t addr, unsigned int el,
			   unsigned int ns)
{
	uint64_t v = (addr & 0x00ffffffffffffffULL) | ((uint64_t)(el & 3) << 61) | ((uint64_t)(ns & 1) << 63);

	if (idx > 7)
		sb_byte(s, (uint8_t)(0x20 | (idx >> 3)));
	sb_byte(s, (uint8_t)(0xb0 | (idx & 7)));
	sb_le(s, v, 8);
}

/* ADDRESS with a raw payload (data VA with tag, PA with ns/ch/pat). */
static inline void sb_addr_raw(struct spe_buf *s, unsigned int idx, uint64_t payload)
{
	sb_byte(s, (uint8_t)(0xb0 | (idx & 7)));
	sb_le(s, payload, 8);
}

/* COUNTER 1001 1iii, 2-byte payload */
static inline void sb_counter(struct spe_buf *s, unsigned int idx, uint16_t v)
{
	if (idx > 7)
		sb_byte(s, (uint8_t)(0x20 | (idx >> 3)));
	sb_byte(s, (uint8_t)(0x98 | (idx & 7)));
	sb_le(s, v, 2);
}

/* EVENTS 01sz 0010 */
static inline void sb_events(struct spe_buf *s, uint64_t bits, unsigned int size)
{
	sb_byte(s, (uint8_t)(0x42 | (sb_sz(size) << 4)));
	sb_le(s, bits, size);
}

/* OP_TYPE 0100 10cc, 1-byte payload */
static inline void sb_op(struct spe_buf *s, unsigned int cls, uint8_t payload)
{
	sb_byte(s, (uint8_t)(0x48 | (cls & 3)));
	sb_byte(s, payload);
}

/* CONTEXT 0110 01ii, 4-byte payload */
static inline void sb_context(struct spe_buf *s, unsigned int idx, uint32_t v)
{
	sb_byte(s, (uint8_t)(0x64 | (idx & 3)));
	sb_le(s, v, 4);
}

/* DATA_SOURCE 01sz 0011 */
static inline void sb_source(struct spe_buf *s, uint64_t v, unsigned int size)
{
	sb_byte(s, (uint8_t)(0x43 | (sb_sz(size) << 4)));
	sb_le(s, v, size);
}

static inline void sb_ts(struct spe_buf *s, uint64_t ts)
{
	sb_byte(s, 0x71);
	sb_le(s, ts, 8);
}

static inline void sb_end(struct spe_buf *s)
{
	sb_byte(s, 0x01);
}

static inline void sb_pad(struct spe_buf *s, unsigned int n)
{
	while (n--)
		sb_byte(s, 0x00);
}

/* A branch record as the hardware writes it, padded to 64 bytes like the
 * real ones (PC, OP, EVENTS, latencies, target, then TS or END). */
static inline void sb_branch(struct spe_buf *s, uint64_t pc, uint8_t op, uint64_t events,
			     uint16_t issue, uint16_t total, uint64_t tgt, int ctx_idx,
			     uint32_t ctx, int with_ts, uint64_t ts)
{
	size_t start = s->n;

	sb_addr(s, 0, pc, 0, 1);
	if (ctx_idx >= 0)
		sb_context(s, (unsigned int)ctx_idx, ctx);
	sb_op(s, 2, op);
	sb_events(s, events, 2);
	sb_counter(s, 1, issue);
	sb_counter(s, 0, total);
	sb_addr(s, 1, tgt, 0, 1);
	while (s->n - start < 64 - (with_ts ? 9 : 1))
		sb_byte(s, 0);
	if (with_ts)
		sb_ts(s, ts);
	else
		sb_end(s);
}

#endif
