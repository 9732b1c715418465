/* Sideband model: what the kernel told perf about processes while the trace
 * was recorded.
 *
 * Fed with the perf.data records in file order, it answers the questions a
 * trace decoder has at a given perf time:
 *   - which thread ran on a CPU (SWITCH, SWITCH_CPU_WIDE, ITRACE_START, or
 *     sched:sched_switch tracepoint samples decoded by the caller and given
 *     with ptc_sb_add_sched_switch(); used for a CPU only when it has no
 *     switch records),
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
	uint32_t ptid;			/* the thread that forked it (FORK), 0 unknown */
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
	int have_id;
	uint64_t id;			/* the event's sample id, when have_id */
};

/* Where a CPU's switch timeline comes from (bits). */
enum ptc_sb_source {
	PTC_SB_SRC_ITRACE_START = 1 << 0,
	PTC_SB_SRC_SWITCH = 1 << 1,		/* SWITCH or SWITCH_CPU_WIDE */
	PTC_SB_SRC_SCHED_SWITCH = 1 << 2,	/* sched:sched_switch samples */
};

/* Where records may be missing: a LOST record said count records of the
 * buffer of cpu (-1 unknown) / tid (-1 unknown) were dropped between
 * t_start (the previous record out of that CPU, 0 unknown) and t_end (the
 * LOST record's time; PTC_SB_TIME_MAX when it has none). */
struct ptc_sb_lost_range {
	int cpu;
	int64_t tid;
	uint64_t t_start, t_end;
	uint64_t count;
	uint64_t offset;		/* of the LOST record in the input */
	/* not 0: no LOST record but damaged input the reader skipped, this
	 * many bytes from offset on, that may have held records of any CPU
	 * or thread (count unknown, 0) */
	uint64_t damaged;
};

struct ptc_sideband;

int ptc_sb_new(struct ptc_sideband **out);
void ptc_sb_free(struct ptc_sideband *sb);

/* Build-ids from the recording's BUILD_ID feature (used when an MMAP2 has none). */
int ptc_sb_add_build_ids(struct ptc_sideband *sb, const struct ptc_perf_info *info);

/* Feed one record; records the model does not need are ignored.  Returns 0
 * or a negative ptc error code (malformed record). */
int ptc_sb_add_record(struct ptc_sideband *sb, const struct ptc_perf_record *rec);

/* A sched:sched_switch sample: from time on, thread next_tid (the kernel's
 * next_pid; 0 the idle task) runs on cpu.  Its process is looked up in the
 * COMM/FORK threads at ptc_sb_finish().  Kept only for CPUs that have no
 * SWITCH/SWITCH_CPU_WIDE records. */
int ptc_sb_add_sched_switch(struct ptc_sideband *sb, uint32_t cpu, uint64_t time,
			    uint32_t next_tid);

/* Check the SWITCH_CPU_WIDE records against each other (struct
 * ptc_sb_switch_damage) and sort the per-CPU timelines; call once after
 * the last record.  Returns 0 or -ptc_err_nomem. */
int ptc_sb_finish(struct ptc_sideband *sb);

/* The mapping of pid covering ip at time (PTC_SB_TIME_MAX: the latest one). */
struct ptc_sb_map *ptc_sb_find_map(struct ptc_sideband *sb, uint32_t pid,
				   uint64_t time, uint64_t ip);
/* The first time after time (not 0) at which a mapping of pid begins or
 * ends (PTC_SB_TIME_MAX: none).  ptc_sb_find_map() for pid gives the same
 * answer, for any ip, at every time from time up to that one. */
uint64_t ptc_sb_next_map_change(const struct ptc_sideband *sb, uint32_t pid, uint64_t time);
/* All mappings, for reporting. */
struct ptc_sb_map *ptc_sb_maps(struct ptc_sideband *sb, size_t *count);

/* The thread running on cpu at time: 0 with tid and pid set, or -ptc_err_not_found
 * when the sideband never says (or its switch records there are damaged
 * beyond repair, see struct ptc_sb_switch_damage).  With time unknown (0) the first thread the
 * CPU ran is returned. */
int ptc_sb_thread_on_cpu(const struct ptc_sideband *sb, int cpu, uint64_t time,
			 uint32_t *pid, uint32_t *tid);
/* When ptc_sb_thread_on_cpu() says not found because the switch records
 * there are damaged beyond repair: the threads it may be (at most max, in
 * pid and tid), which get a records-lost gap there.  0 otherwise. */
size_t ptc_sb_unknown_on_cpu(const struct ptc_sideband *sb, int cpu, uint64_t time, uint32_t *pid,
			      uint32_t *tid, size_t max);
/* Call fn for every thread switched in on cpu at a time in (t0, t1], in
 * time order, with that time (the threads a trace gap on that CPU between
 * t0 and t1 took data from, besides the one running at t0).  Returns how
 * many. */
size_t ptc_sb_threads_between(const struct ptc_sideband *sb, int cpu, uint64_t t0, uint64_t t1,
			      void (*fn)(void *arg, uint32_t pid, uint32_t tid, uint64_t time), void *arg);
/* The time of the first switch-in on cpu after time t that
 * ptc_sb_threads_between() would list, PTC_SB_TIME_MAX when none. */
uint64_t ptc_sb_next_switch_in(const struct ptc_sideband *sb, int cpu, uint64_t t);
/* Number of distinct switch entries of a CPU (0: none). */
size_t ptc_sb_cpu_switches(const struct ptc_sideband *sb, int cpu);
/* Number of distinct threads other than idle (tid 0) the CPU ran, after
 * ptc_sb_finish(). */
size_t ptc_sb_cpu_threads(const struct ptc_sideband *sb, int cpu);
/* The sources (enum ptc_sb_source bits) of a CPU's timeline after
 * ptc_sb_finish(); *seen (may be NULL) gets those seen, dropped ones included. */
unsigned ptc_sb_cpu_sources(const struct ptc_sideband *sb, int cpu, unsigned *seen);
/* "switch", "sched_switch", "itrace_start" or "none": the main source of a
 * timeline with these source bits. */
const char *ptc_sb_source_name(unsigned sources);
/* One more than the highest CPU number any record named. */
size_t ptc_sb_nr_cpus(const struct ptc_sideband *sb);

/* A thread's facts, NULL when never seen. */
const struct ptc_sb_thread *ptc_sb_thread(const struct ptc_sideband *sb, uint32_t tid);
const struct ptc_sb_thread *ptc_sb_threads(const struct ptc_sideband *sb, size_t *count);

const struct ptc_sb_aux *ptc_sb_aux_records(const struct ptc_sideband *sb, size_t *count);

/* Damaged input the reader skipped (bytes from offset on): the records in
 * it are lost, records of any CPU or thread from between perf times t_start
 * and t_end (0 and PTC_SB_TIME_MAX when unknown).  Kept as a lost range. */
int ptc_sb_add_damage(struct ptc_sideband *sb, uint64_t offset, uint64_t bytes, uint64_t t_start,
		      uint64_t t_end);

/* A SWITCH_CPU_WIDE record whose thread its neighbours contradict.  The
 * records of a CPU witness each other: a switch-out of A to B (next_prev
 * B) is followed by the switch-in of B (next_prev A), and the next
 * switch-out is B's again, so up to four fields name the thread of each
 * stretch between two switches.  A field the others outvote (at least two
 * agreeing, more than any other answer) is repaired to their answer; a
 * thread named once in all the switch records and never announced (COMM,
 * FORK, ITRACE_START) has no vote.  Without such a majority the stretch's
 * thread is unknown: its entry gives no thread, and the stretch is a lost
 * range of damaged records on that CPU (records-lost gaps). */
struct ptc_sb_switch_damage {
	uint64_t offset;		/* of the record in the input */
	uint64_t time;			/* its perf time */
	int cpu;
	int next_prev;			/* the field: next_prev pid/tid, else sample_id's */
	uint32_t pid, tid;		/* what it says */
	uint32_t pid_taken, tid_taken;	/* what its neighbours say (when repaired) */
	int repaired;			/* 0: no majority, the stretch is a lost range */
	uint64_t t_start, t_end;	/* the stretch the field speaks of (0, MAX: open) */
};

/* The damaged switch records found by ptc_sb_finish(), per CPU in time order. */
const struct ptc_sb_switch_damage *ptc_sb_switch_damage(const struct ptc_sideband *sb, size_t *count);

/* Records lost (sum of the LOST records' counts) and LOST records seen. */
uint64_t ptc_sb_lost(const struct ptc_sideband *sb, uint64_t *nr_records);
/* Each LOST record's range, in file order. */
const struct ptc_sb_lost_range *ptc_sb_lost_ranges(const struct ptc_sideband *sb, size_t *count);

#endif
