/* Branch events: what every decoder produces and every writer consumes.
 *
 * Decoders (Intel PT walker, libipt engine, ...) turn trace packets into a
 * per-thread stream of executed branches and explicit gaps.  Writers see only
 * this stream (plus read access to code bytes, for formats that list every
 * instruction) and never perf.data or packets.
 */
#ifndef PTC_COMMON_TRACE_EVENT_H
#define PTC_COMMON_TRACE_EVENT_H

#include <stddef.h>
#include <stdint.h>

/* Branch kinds.  0..5 are the cbp-experiments type numbers on purpose. */
enum ptc_branch_kind {
	PTC_BR_JMP = 0,		/* direct unconditional jump */
	PTC_BR_JMP_IND = 1,	/* indirect jump */
	PTC_BR_CALL = 2,	/* direct call */
	PTC_BR_CALL_IND = 3,	/* indirect call */
	PTC_BR_RET = 4,		/* near return */
	PTC_BR_COND = 5,	/* conditional direct jump (jcc, jrcxz, loop) */
	PTC_BR_FAR = 6,		/* syscall, sysenter, int n, iret, far jmp/call/ret: leaves or enters user mode */
	PTC_BR_KIND_NR
};

struct ptc_branch {
	uint64_t ip;		/* address of the branch instruction */
	uint64_t target;	/* taken target (also for a not-taken conditional); far: where user
				 * mode resumed, 0 when at the next instruction or unknown */
	uint64_t time;		/* perf time (ns) of the last timing packet, 0 when none */
	uint32_t insns;		/* instructions since the previous branch event's target, this branch included */
	uint8_t kind;		/* enum ptc_branch_kind */
	uint8_t taken;		/* 1 taken, 0 not taken */
	uint8_t length;		/* instruction length in bytes */
	uint8_t flags;		/* enum ptc_branch_flags */
};

enum ptc_branch_flags {
	PTC_BRF_AFTER_GAP = 1 << 0,	/* first branch after a gap: insns counts from the resume IP */
};

/* A run of branch records that a decoder took as a whole from a memo (the
 * Intel PT walker's TNT paths, decoders/intel_pt/tnt_path.h).  Its id
 * identifies it: whenever the same path appears at the same first record
 * address, its records are the same (addresses, kinds, lengths, taken
 * bits, and the instruction counts of all but the first record), and they
 * share one time.
 *
 * A batch with paths is sparse: a path stands in it as its first record
 * alone, marked (struct ptc_path_mark), and the others are made from rec
 * when a sink needs them (ptc_path_records()).  Most records of a real
 * program are in paths, and most sinks that take paths need only their
 * totals, or a note of what they did with the path last time: copying
 * the records into every batch cost more than the sinks' work on them. */
#define PTC_PATH_RECORDS_MAX 32

struct ptc_path {
	uint64_t id;		/* never 0, never the same for two paths of a process */
	uint32_t records;	/* branches in it, PTC_PATH_RECORDS_MAX at most */
	uint32_t bits;		/* conditional branches among them (the TNT bits used) */
	uint64_t taken;		/* their taken bits, the first in bit 0 */
	uint64_t kinds;		/* records per kind, in 9-bit lanes (kind k at bit 9k) */
	uint32_t not_taken;	/* records not taken */
	uint32_t insns;		/* instructions of all records but the first */
	/* Its records where the code's addresses are the image's own (a
	 * mapping with bias 0), time 0; never changed while the path lives,
	 * so a sink on another thread may read them. */
	const struct ptc_branch *rec;
	/* The sink's: where the sinks of the decoder that made the path run
	 * (they and nothing else write here), one of them may keep notes on
	 * it, checking that they are its own.  Cache lines of its own. */
	_Alignas(64) unsigned char scratch[256];
};

/* Where a path stands in a sparse batch. */
struct ptc_path_mark {
	uint32_t at;		/* index of its first record */
	struct ptc_path *path;
};

/* Path p's records into out (p->records of them), from its first record as
 * the batch has it: its address says the mapping's bias, and the others
 * have its time and no flags. */
static inline void ptc_path_records(struct ptc_branch *out, const struct ptc_path *p,
				    const struct ptc_branch *first)
{
	const uint64_t bias = first->ip - p->rec[0].ip;
	uint32_t k;

	out[0] = *first;
	for (k = 1; k < p->records; k++) {
		out[k] = p->rec[k];
		out[k].ip += bias;
		out[k].target += bias;
		out[k].time = first->time;
	}
}

/* Path p's last record, from its first as the batch has it. */
static inline struct ptc_branch ptc_path_last(const struct ptc_path *p, const struct ptc_branch *first)
{
	struct ptc_branch last = p->rec[p->records - 1];

	if (p->records == 1)
		return *first;
	last.ip += first->ip - p->rec[0].ip;
	last.target += first->ip - p->rec[0].ip;
	last.time = first->time;
	return last;
}

/* A sparse batch b[0, n) with nm marks, made dense piece by piece: from
 * record *i on (*j: the first mark at or after it), as many whole records
 * as fit in out[0, room) (room: PTC_PATH_RECORDS_MAX at least); returns
 * how many, 0 at the end (common/trace_event.c). */
size_t ptc_batch_dense(const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm,
		       size_t *i, size_t *j, struct ptc_branch *out, size_t room);

/* Hand a sparse batch to branches(ctx, ...) dense, in pieces of
 * PTC_DENSE_PIECE records at most. */
#define PTC_DENSE_PIECE 256
int ptc_batch_give_dense(int (*branches)(void *ctx, const struct ptc_branch *b, size_t n), void *ctx,
			 const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm);

/* Why the trace stops being exact for a while. */
enum ptc_gap_cause {
	PTC_GAP_OVERFLOW,	/* OVF: the hardware dropped packets */
	PTC_GAP_AUX_LOST,	/* AUX TRUNCATED/PARTIAL/COLLISION, missing AUXTRACE bytes */
	PTC_GAP_RECORDS_LOST,	/* PERF_RECORD_LOST: sideband missing */
	PTC_GAP_NO_IMAGE,	/* code in no known image */
	PTC_GAP_BUILD_ID,	/* image found but its build-id differs */
	PTC_GAP_DECODE,		/* packets that contradict the code (e.g. TNT where no conditional) */
	PTC_GAP_DISABLED,	/* tracing disabled then enabled at an unrelated IP (not a syscall/interrupt) */
	PTC_GAP_START,		/* not a loss: the stream starts at resume_ip (ip 0); lets writers
				 * that list every instruction know where the first block begins */
	PTC_GAP_CAUSE_NR
};

struct ptc_gap {
	uint8_t cause;		/* enum ptc_gap_cause */
	uint64_t aux_offset;	/* byte offset in the AUX stream where decoding stopped */
	uint64_t resume_offset;	/* byte offset where it resumed, UINT64_MAX if never */
	uint64_t time;
	uint64_t ip;		/* last known IP, 0 if none */
	uint64_t resume_ip;	/* IP where it resumed, 0 if never */
	uint64_t lost_branches;	/* estimate, UINT64_MAX when unknown */
	uint64_t lost_bytes;	/* trace bytes skipped */
	const char *detail;	/* human text, may be NULL; valid during the callback */
};

/* The thread a stream belongs to. */
struct ptc_thread_info {
	uint32_t pid, tid;
	const char *comm;
	int cpu;		/* -1 for per-thread streams */
};

/* Code bytes for writers that list every instruction (ChampSim, CBP2025,
 * xtrace): read up to n bytes at ip; returns bytes read, 0 if unmapped. */
struct ptc_code_reader {
	size_t (*read)(void *ctx, uint64_t ip, uint8_t *buf, size_t n);
	void *ctx;
};

/* A consumer of one thread's event stream.  Branches come in batches for
 * speed; every callback returns 0 or a negative ptc error code, which stops
 * decoding of that stream. */
struct ptc_sink {
	int (*begin)(void *ctx, const struct ptc_thread_info *thread);
	int (*branches)(void *ctx, const struct ptc_branch *b, size_t n);
	int (*gap)(void *ctx, const struct ptc_gap *gap);
	int (*end)(void *ctx);
	void *ctx;
	/* Optional: a sparse batch (struct ptc_path): b[0, n) with the nm
	 * paths marked among them, in order.  NULL: the batch is made dense
	 * and given to branches(). */
	int (*paths)(void *ctx, const struct ptc_branch *b, size_t n,
		     const struct ptc_path_mark *m, size_t nm);
	/* Optional: after a call failed, what failed, naming the file and
	 * the system's reason ("" or NULL: nothing to add to the code). */
	const char *(*errmsg)(void *ctx);
};

/* "jmp", "cond", ... and "overflow", "aux-lost", ...; "unknown" for a
 * number out of range (src/common/trace_names.c). */
const char *ptc_branch_kind_name(int kind);
const char *ptc_gap_cause_name(int cause);

#endif
