/* Sideband model: what the kernel told perf about processes while the trace
 * was recorded.
 *
 * Fed with the perf.data records in file order, it answers the questions a
 * trace decoder has at a given perf time:
 *   - which thread ran on a CPU (SWITCH, SWITCH_CPU_WIDE, ITRACE_START),
 *   - which file was mapped at an address in a process (MMAP/MMAP2, with exec
 *     ending the old address space and fork copying the parent's),
 *   - what a thread is called and which process it belongs to (COMM, FORK),
 *   - where the kernel said AUX data was lost (AUX flags) and how many
 *     records were lost (LOST).
 * Everything is kept in memory; sideband is small next to the trace.
 */
#ifndef PTC_SIDEBAND_SIDEBAND_H
#define PTC_SIDEBAND_SIDEBAND_H

#include <stddef.h>
#include <stdint.h>

#include "input/perf_reader.h"

#define PTC_SB_TIME_MAX UINT64_MAX

/* One executable mapping of a process, valid for perf times [t_start, t_end). */
struct ptc_sb_map {
	uint64_t start, end, pgoff;
	uint64_t t_start, t_end;
	uint32_t pid;
	const char *filename;		/* owned by the sideband */
	uint8_t build_id[20];
	uint8_t build_id_size;		/* 0: unknown */
	/* Scratch for the consumer (e.g. the resolved image), zero initially. */
	void *user;
	int64_t user_bias;
	int user_state;
};

struct ptc_sb_thread {
	uint32_t pid, tid;
	const char *comm;		/* latest name, owned by the sideband */
	uint64_t t_start;		/* FORK/COMM time, 0 when seen from the start */
	uint64_t t_exit;		/* EXIT time, PTC_SB_TIME_MAX while alive */
};

/* An AUX record: the kernel's account of one piece of a CPU's (or thread's)
 * AUX buffer. */
struct ptc_sb_aux {
	uint64_t aux_offset, aux_size, flags, time;
	int cpu;			/* -1 when unknown */
	uint32_t tid;
};

struct ptc_sideband;

int ptc_sb_new(struct ptc_sideband **out);
void ptc_sb_free(struct ptc_sideband *sb);

/* Build-ids from the recording's BUILD_ID feature (used when an MMAP2 has none). */
int ptc_sb_add_build_ids(struct ptc_sideband *sb, const struct ptc_perf_info *info);

/* Feed one record; records the model does not need are ignored.  Returns 0
 * or a negative ptc error code (malformed record). */
int ptc_sb_add_record(struct ptc_sideband *sb, const struct ptc_perf_record *rec);

/* Sort the per-CPU timelines; call once after the last record. */
void ptc_sb_finish(struct ptc_sideband *sb);

/* The mapping of pid covering ip at time (PTC_SB_TIME_MAX: the latest one). */
struct ptc_sb_map *ptc_sb_find_map(struct ptc_sideband *sb, uint32_t pid,
				   uint64_t time, uint64_t ip);
/* All mappings, for reporting. */
struct ptc_sb_map *ptc_sb_maps(struct ptc_sideband *sb, size_t *count);

/* The thread running on cpu at time: 0 with tid and pid set, or -ptc_err_not_found
 * when the sideband never says.  With time unknown (0) the first thread the
 * CPU ran is returned. */
int ptc_sb_thread_on_cpu(const struct ptc_sideband *sb, int cpu, uint64_t time,
			 uint32_t *pid, uint32_t *tid);
/* Number of distinct switch entries of a CPU (0: none). */
size_t ptc_sb_cpu_switches(const struct ptc_sideband *sb, int cpu);

/* A thread's facts, NULL when never seen. */
const struct ptc_sb_thread *ptc_sb_thread(const struct ptc_sideband *sb, uint32_t tid);
const struct ptc_sb_thread *ptc_sb_threads(const struct ptc_sideband *sb, size_t *count);

const struct ptc_sb_aux *ptc_sb_aux_records(const struct ptc_sideband *sb, size_t *count);

/* Records lost (sum of the LOST records' counts) and LOST records seen. */
uint64_t ptc_sb_lost(const struct ptc_sideband *sb, uint64_t *nr_records);

#endif
