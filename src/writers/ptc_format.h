/* On-disk layout of ptconv's own trace format, version 2, and what the reader still reads of version 1 (ptconv-trace(5)).
 * Shared by the writer (ptconv.c) and the reader library (trace_reader.c). */
#ifndef PTC_WRITERS_PTC_FORMAT_H
#define PTC_WRITERS_PTC_FORMAT_H

#define PTCF_MAGIC "PTCTRACE"
#define PTCF_VERSION 2
#define PTCF_HEADER_SIZE 64
#define PTCF_FLAG_COMPLETE 1u

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

/* static part: 64-byte head, LEB128 node and edge tables, fixed-size chunk
 * index and gaps, code, strings */
#define PTCF_S_HEAD 64
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

#endif
