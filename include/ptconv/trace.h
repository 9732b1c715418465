/* libptconv-trace: read traces written by ptconv (-f ptconv).
 *
 * The file format is described in ptconv-trace(5).  A trace holds one
 * thread's executed branches in order, each with the exact number of
 * instructions that ran since the previous branch, plus explicit gap records
 * where the recording lost data, and the code bytes of every executed block,
 * so that it can be read without the binaries or the recording.
 *
 * Streaming use:
 *
 *	int err;
 *	struct ptc_trace *t = ptc_trace_open("trace.1234.ptc", &err);
 *	struct ptc_trace_record rec[4096];
 *	int n;
 *	while ((n = ptc_trace_read(t, rec, 4096)) > 0)
 *		... rec[0..n) ...
 *	if (n < 0) fprintf(stderr, "%s\n", ptc_trace_errmsg(t));
 *	ptc_trace_close(t);
 *
 * A handle is not thread-safe; to read one file in parallel, open it once
 * per thread and ptc_trace_seek_record() each handle to its part (seeking
 * costs at most one chunk of decoding, see ptc_trace_info.chunks).
 *
 * Functions return 0 or a count on success and a negative error code on
 * failure; ptc_trace_errstr() names a code and ptc_trace_errmsg() tells the
 * file, byte offset and reason of the handle's last error.
 */
#ifndef PTCONV_TRACE_H
#define PTCONV_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTC_TRACE_VERSION 3

/* Record kinds: 0..6 are branches (the cbp-experiments type numbers, plus
 * 6 = far transfer such as syscall), 7 is a gap. */
enum ptc_trace_kind {
	PTC_TRACE_JMP = 0,	/* direct unconditional jump */
	PTC_TRACE_JMP_IND = 1,	/* indirect jump */
	PTC_TRACE_CALL = 2,	/* direct call */
	PTC_TRACE_CALL_IND = 3,	/* indirect call */
	PTC_TRACE_RET = 4,	/* return */
	PTC_TRACE_COND = 5,	/* conditional direct jump */
	PTC_TRACE_FAR = 6,	/* syscall and other far transfers */
	PTC_TRACE_GAP = 7,	/* the trace is not exact here: see below */
};

/* One record, 32 bytes.  For a branch: ip, taken target (also for a
 * not-taken conditional; 0 when unknown), perf time of the last timing
 * packet (0 when none), the instructions since the previous branch's
 * destination with this branch included, kind, taken (1/0), the branch
 * instruction's length and flags (bit 0: first branch after a gap, bit 1:
 * first record of a slice, its insns cut to the slice start).
 * For a gap (kind PTC_TRACE_GAP): ip = last known IP, target = IP where
 * tracing resumed (0 if never), time, insns = the gap's number for
 * ptc_trace_gap(), taken = its cause, length = 0. */
struct ptc_trace_record {
	uint64_t ip;
	uint64_t target;
	uint64_t time;
	uint32_t insns;
	uint8_t kind;
	uint8_t taken;
	uint8_t length;
	uint8_t flags;
};

enum ptc_trace_flags {
	PTC_TRACE_AFTER_GAP = 1 << 0,
	PTC_TRACE_SLICE_START = 1 << 1,
};

/* Gap causes (the same numbers as ptconv's decoders use). */
enum ptc_trace_gap_cause {
	PTC_TRACE_GAP_OVERFLOW,		/* the hardware dropped packets */
	PTC_TRACE_GAP_AUX_LOST,		/* trace buffer data lost */
	PTC_TRACE_GAP_RECORDS_LOST,	/* sideband records lost */
	PTC_TRACE_GAP_NO_IMAGE,		/* code in no known image */
	PTC_TRACE_GAP_BUILD_ID,		/* image with a different build-id */
	PTC_TRACE_GAP_DECODE,		/* packets contradicting the code */
	PTC_TRACE_GAP_DISABLED,		/* tracing off, then on elsewhere */
	PTC_TRACE_GAP_START,		/* not a loss: the stream (or a slice) starts at target */
};

struct ptc_trace_gap {
	uint8_t cause;
	uint64_t aux_offset, resume_offset, time, ip, resume_ip;
	uint64_t lost_branches;		/* UINT64_MAX when unknown */
	uint64_t lost_bytes;
	const char *detail;		/* "" when none; valid until the next ptc_trace_gap() call of this thread */
};

struct ptc_trace_info {
	uint32_t version;
	uint32_t pid, tid;
	int32_t cpu;			/* -1 for a per-thread stream */
	const char *comm;
	uint64_t records;		/* branch and gap records */
	uint64_t branches;		/* branch records */
	uint64_t instructions;		/* sum of insns over the branch records + tail_insns */
	uint64_t tail_insns;		/* instructions after the last branch (slices) */
	uint64_t gaps;
	uint64_t chunks;
	uint64_t static_branches;	/* distinct (block, branch) nodes */
};

/* Where a trace file's bytes go (ptconv info): its three parts as stored,
 * and what the compressed ones expand to.  The static part is one zstd
 * frame, so its sections are known only expanded. */
struct ptc_trace_layout {
	uint64_t file_bytes;
	uint64_t header_bytes;		/* the fixed header */
	uint64_t chunk_bytes;		/* the chunks as stored (one zstd frame each) */
	uint64_t chunk_raw_bytes;	/* expanded: taken bits, target slots, events */
	uint64_t max_chunk_records;	/* records of the largest chunk */
	uint64_t static_bytes;		/* the static part as stored, with its size head */
	uint64_t static_raw_bytes;	/* expanded: the sum of the six below and symbol_bytes */
	uint64_t static_head_bytes;	/* its fixed head of counts */
	uint64_t table_bytes;		/* node, edge and code span tables */
	uint64_t index_bytes;		/* the chunk index */
	uint64_t gap_table_bytes;
	uint64_t code_bytes;		/* the executed blocks' code */
	uint64_t string_bytes;		/* the thread's name and the gaps' details */
	uint64_t edges;			/* successor edges of all nodes */
	uint64_t code_ranges;		/* contiguous ranges of embedded code */
	uint64_t other_bytes;		/* in the file but in none of the three parts */
	/* (version 3) */
	uint64_t symbol_bytes;		/* the function symbols of the executed code */
	uint64_t symbols;		/* their entries */
};

struct ptc_trace;

/* Open a trace; on failure returns NULL and stores the error in *err. */
struct ptc_trace *ptc_trace_open(const char *path, int *err);

/* Like ptc_trace_open, also giving the reason ("file: offset: why") into
 * msg when it fails. */
struct ptc_trace *ptc_trace_open_msg(const char *path, int *err, char *msg, size_t size);

void ptc_trace_close(struct ptc_trace *t);

int ptc_trace_info(const struct ptc_trace *t, struct ptc_trace_info *info);

/* Fill *layout, of size bytes (sizeof(struct ptc_trace_layout) of the
 * caller's header: a later library that adds fields fills only those the
 * caller knows).  0, or a negative error code when size is too small
 * for the first five fields. */
int ptc_trace_layout(const struct ptc_trace *t, struct ptc_trace_layout *layout, size_t size);

/* Fill up to n records; returns the number filled, 0 at the end. */
int ptc_trace_read(struct ptc_trace *t, struct ptc_trace_record *rec, size_t n);

/* Position at record number index (0-based). */
int ptc_trace_seek_record(struct ptc_trace *t, uint64_t index);

/* Position at the record whose block holds instruction number insn (0-based,
 * counting every instruction of the trace); *before gets how many of that
 * record's instructions come before insn.  Returns -ptc_err_eos (5) when the
 * trace has fewer instructions. */
int ptc_trace_seek_insn(struct ptc_trace *t, uint64_t insn, uint32_t *before);

/* The record number the next ptc_trace_read() returns first, and the
 * number of instructions before it. */
uint64_t ptc_trace_tell(const struct ptc_trace *t, uint64_t *insns_before);

int ptc_trace_gap(const struct ptc_trace *t, uint64_t index, struct ptc_trace_gap *gap);

/* Read up to n code bytes at ip from the blocks embedded in the trace;
 * returns the number of bytes, 0 if ip is in no executed block. */
size_t ptc_trace_code(const struct ptc_trace *t, uint64_t ip, uint8_t *buf, size_t n);

/* A record kind's name: "jmp", "jmp-ind", "call", "call-ind", "ret",
 * "cond", "far" or "gap" ("unknown" for other numbers), as ptconv dump,
 * ptconv stats and -f text spell them. */
const char *ptc_trace_kind_name(int kind);

/* A gap cause's name: "overflow", "aux-lost", "records-lost", "no-image",
 * "build-id", "decode", "disabled" or "start" ("unknown" otherwise). */
const char *ptc_trace_gap_cause_name(int cause);

const char *ptc_trace_errmsg(const struct ptc_trace *t);
const char *ptc_trace_errstr(int code);

/* What the trace says of its recording. */
enum ptc_trace_file_flags {
	PTC_TRACE_UNTIMED = 1 << 1,	/* the recording had no timing packets (times are 0) */
};
uint32_t ptc_trace_flags(const struct ptc_trace *t);

/* Function symbols (version 3): what the recording's images said, when
 * the trace was written, of the addresses of its branches and their
 * targets.  The answer for run-time address addr at record number record:
 * 1 and *sym filled, or 0 (sym zeroed) when the trace holds none (an
 * address in no image, or not among those).  lo <= addr < hi are the
 * addresses around addr with the same answer. */
struct ptc_trace_symbol {
	uint64_t start;			/* the function's run-time start, 0 when none */
	uint64_t lo, hi;
	const char *name;		/* its name, NULL when none; valid while the trace is open */
	const char *image;		/* the file addr lies in as the recording names it, NULL none */
	uint64_t vaddr;			/* addr as an address of that file */
};
int ptc_trace_symbol(const struct ptc_trace *t, uint64_t record, uint64_t addr, struct ptc_trace_symbol *sym);
/* The answers are the same from record to the record before the one
 * returned (UINT64_MAX: to the end): the first record after record at
 * which the mappings changed. */
uint64_t ptc_trace_symbols_change(const struct ptc_trace *t, uint64_t record);

#ifdef __cplusplus
}
#endif

#endif
