/* ARM SPE session: a recording's AUX queues to attributed samples.
 *
 * The caller (src/cli/convert_spe.c, reading perf.data) feeds what the
 * recording holds, in file order: the AUXTRACE_INFO metadata, TIME_CONV,
 * thread facts (COMM/FORK), scheduling facts (SWITCH records turned into
 * "from time T, cpu C runs pid/tid"), and each AUXTRACE record's trace
 * bytes.  The session keeps one record decoder per queue (CPU, or thread
 * for --per-thread recordings) and hands every decoded record to a callback
 * with its thread and time:
 *
 *   - thread: the CONTEXT packet when the record has one (the kernel writes
 *     the thread id to CONTEXTIDR_EL1, or CONTEXTIDR_EL2 under VHE), else
 *     the queue's thread (per-thread mode), else the thread the CPU ran at
 *     the record's time according to the switch events seen so far;
 *   - time: the TIMESTAMP packet (generic timer ticks) converted to perf
 *     time with TIME_CONV, as perf does.
 */
#ifndef PTC_DECODERS_ARM_SPE_SPE_SESSION_H
#define PTC_DECODERS_ARM_SPE_SPE_SESSION_H

#include "common/time_conv.h"
#include <stddef.h>
#include <stdint.h>

#include "decoders/arm_spe/spe_info.h"
#include "decoders/arm_spe/spe_record.h"

enum ptc_spe_tid_source {
	PTC_SPE_TID_NONE = 0,		/* unknown */
	PTC_SPE_TID_CONTEXT,		/* CONTEXT packet */
	PTC_SPE_TID_QUEUE,		/* per-thread AUX queue */
	PTC_SPE_TID_SWITCH,		/* CPU schedule from switch events */
};

struct ptc_spe_sample {
	const struct ptc_spe_record *rec;
	int32_t cpu;			/* -1: per-thread queue */
	int32_t pid, tid;		/* -1: unknown */
	uint8_t tid_source;		/* enum ptc_spe_tid_source */
	int have_time;
	uint64_t time;			/* perf time (ns) when have_time */
	const char *comm;		/* thread name, NULL when unknown */
};

typedef int (*ptc_spe_sample_fn)(void *ctx, const struct ptc_spe_sample *s);


struct ptc_spe_session_stats {
	uint64_t aux_records;		/* AUXTRACE pieces fed */
	uint64_t aux_bytes;
	uint64_t samples;		/* records delivered */
	uint64_t tid_from[4];		/* by enum ptc_spe_tid_source */
	uint64_t timed;			/* samples with a timestamp */
	struct ptc_spe_decode_stats decode;	/* summed over the queues */
	/* where the first corrupt byte was (first queue that has one) */
	int32_t bad_cpu, bad_tid;
	uint64_t bad_offset;			/* UINT64_MAX: none */
};

struct ptc_spe_session;

int ptc_spe_session_new(struct ptc_spe_session **out, ptc_spe_sample_fn fn, void *ctx);
void ptc_spe_session_free(struct ptc_spe_session *s);

/* The AUXTRACE_INFO priv words; err gets the reason on -ptc_err_bad_record. */
int ptc_spe_session_set_info(struct ptc_spe_session *s, const uint64_t *priv, size_t nr_priv,
			     char *err, size_t errlen);
const struct ptc_spe_info *ptc_spe_session_info(const struct ptc_spe_session *s);
void ptc_spe_session_set_time_conv(struct ptc_spe_session *s, const struct ptc_time_conv *tc);

/* Thread facts: tid belongs to pid and is named comm (may be NULL). */
int ptc_spe_session_thread(struct ptc_spe_session *s, int32_t pid, int32_t tid, const char *comm);
/* From perf time `time`, `cpu` runs pid/tid (-1/-1: nothing known, e.g. idle). */
int ptc_spe_session_sched(struct ptc_spe_session *s, int32_t cpu, uint64_t time,
			  int32_t pid, int32_t tid);

/* One AUXTRACE record's data: queue of cpu (or of tid when cpu is -1),
 * at AUX offset `offset`. */
int ptc_spe_session_aux(struct ptc_spe_session *s, int32_t cpu, int32_t tid, uint64_t offset,
			const uint8_t *data, size_t size);
/* End of the recording: pending records are counted as dropped. */
void ptc_spe_session_finish(struct ptc_spe_session *s);

const struct ptc_spe_session_stats *ptc_spe_session_stats(struct ptc_spe_session *s);

#endif
