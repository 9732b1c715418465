/* On-disk layout of ptconv's own trace format, version 3, and what the reader still reads of versions 1 and 2 (ptconv-trace(5)).
 * Shared by the writer (ptconv.c) and the reader library (trace_reader.c). */
#ifndef PTC_WRITERS_PTC_FORMAT_H
#define PTC_WRITERS_PTC_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PTCF_MAGIC "PTCTRACE"
#define PTCF_VERSION 3
#define PTCF_HEADER_SIZE 64
#define PTCF_FLAG_COMPLETE 1u
#define PTCF_FLAG_UNTIMED 2u	/* the recording had no timing packets */

/* header offsets */
#define PTCF_H_VERSION 8
#define PTCF_H_HSIZE 12
#define PTCF_H_FLAGS 16
#define PTCF_H_PID 20
#define PTCF_H_TID 24
#define PTCF_H_CPU 28
#define PTCF_H_RECORDS 32
#define PTCF_H_INSNS 40
#define PTCF_H_STATIC 48
#define PTCF_H_TAIL 56

/* static part: 64-byte head (80 from version 3), LEB128 node and edge
 * tables, fixed-size chunk index and gaps, code, strings, and from version
 * 3 the function symbols */
#define PTCF_S_HEAD 64
#define PTCF_S_HEAD_V3 80
#define PTCF_S_SYMBYTES 64	/* u64: bytes of the symbol table */
#define PTCF_S_SYMS 72		/* u64: its entries */
#define PTCF_CHUNK_SIZE 48
#define PTCF_GAP_SIZE 72

/* chunk head: n_records, bits_len, slots_len, events_len */
#define PTCF_C_HEAD 16

/* events in a chunk's event list */
enum {
	PTCF_EV_NODE = 1,	/* varint node: this record's node (prediction overridden) */
	PTCF_EV_TIME = 2,	/* zigzag varint: time delta from this record on */
	PTCF_EV_GAP = 3,	/* varint gap number: this record is a gap */
	PTCF_EV_FLAGS = 4,	/* u8: this record's flags */
	PTCF_EV_TAKEN = 5,	/* u8: this non-conditional record's taken value (normally 1) */
};

#define PTCF_NO_NODE 0xffffffffu
#define PTCF_MAX_CHUNK_RAW (256u << 20)
#define PTCF_MAX_STATIC_RAW (1ull << 34)

/* Version 2 leaves an edge's successor implicit when it is the
 * lowest-numbered node starting at the edge's destination.  Writer and
 * reader must find the same node, so both use this map: open addressing
 * over node numbers, the nodes' start addresses read from the caller's
 * array (start_of(nodes, i)). */
struct ptcf_start_map {
	uint32_t *slot;
	uint64_t mask;
};

static inline uint64_t ptcf_start_hash(uint64_t a)
{
	a ^= a >> 31;
	a *= 0x9e3779b97f4a7c15ull;
	return a ^ (a >> 29);
}

/* Node i's start: the field at byte offset off of element i (stride bytes). */
static inline uint64_t ptcf_node_start(const void *nodes, size_t stride, size_t off, uint64_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)nodes + i * stride + off, sizeof(v));
	return v;
}

/* 0, or -1 when out of memory. */
static inline int ptcf_start_map_build(struct ptcf_start_map *m, const void *nodes, size_t stride,
				       size_t off, uint64_t n)
{
	uint64_t size = 16, i, h;

	while (size < n * 2)
		size *= 2;
	m->slot = malloc(size * sizeof(*m->slot));
	if (!m->slot)
		return -1;
	memset(m->slot, 0xff, size * sizeof(*m->slot));
	m->mask = size - 1;
	for (i = 0; i < n; i++) {
		uint64_t start = ptcf_node_start(nodes, stride, off, i);
		for (h = ptcf_start_hash(start);; h++) {
			uint32_t *s = &m->slot[h & m->mask];
			if (*s == PTCF_NO_NODE) {
				*s = (uint32_t)i;
				break;
			}
			if (ptcf_node_start(nodes, stride, off, *s) == start)
				break;	/* a lower-numbered node has it */
		}
	}
	return 0;
}

static inline uint32_t ptcf_start_map_find(const struct ptcf_start_map *m, const void *nodes,
					   size_t stride, size_t off, uint64_t start)
{
	uint64_t h;

	for (h = ptcf_start_hash(start);; h++) {
		uint32_t s = m->slot[h & m->mask];
		if (s == PTCF_NO_NODE || ptcf_node_start(nodes, stride, off, s) == start)
			return s;
	}
}

#endif
