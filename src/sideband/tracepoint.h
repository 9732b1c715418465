/* Tracepoint samples: perf's tracing-data container and sched:sched_switch.
 *
 * A recording with tracepoint events (e.g. `perf record -e intel_pt//u`
 * where the kernel cannot write context-switch records, so perf adds
 * sched:sched_switch) carries the events' format descriptions in a
 * "tracing data" container: the TRACING_DATA feature section (file mode)
 * or the HEADER_TRACING_DATA record (pipe mode); perf_reader.h hands out its
 * bytes.  Layout (integers in the byte order the container names):
 *
 *	"\027\010\104tracing"	magic, 10 bytes
 *	version			NUL-terminated string ("0.5", "0.6")
 *	u8 big_endian, u8 long_size, u32 page_size
 *	"header_page\0" u64 size, bytes	ring-buffer page header format
 *	"header_event\0" u64 size, bytes
 *	u32 count, count x (u64 size, bytes)		ftrace event formats
 *	u32 systems, systems x (system name NUL-terminated,
 *		u32 count, count x (u64 size, bytes))	event formats
 *	u32 size, bytes		kallsyms
 *	u32 size, bytes		ftrace printk formats
 *	u64 size, bytes		saved cmdlines (version >= 0.6)
 *
 * ptc_tracing_data_parse() checks every size against the bytes present and
 * keeps pointers to the format texts; ptc_sched_switch_new() gives the
 * sched_switch format to libtraceevent and reads samples' raw data with it.
 */
#ifndef PTC_SIDEBAND_TRACEPOINT_H
#define PTC_SIDEBAND_TRACEPOINT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "input/perf_reader.h"

/* One event format text of the container. */
struct ptc_tracing_format {
	const char *system;		/* "ftrace" for the ftrace formats */
	const uint8_t *text;		/* points into the container */
	uint64_t size;
	uint64_t offset;		/* of the text in the container */
};

struct ptc_tracing_data {
	char version[16];
	int big_endian;
	unsigned long_size;
	uint32_t page_size;
	const uint8_t *header_page, *header_event;
	uint64_t header_page_size, header_event_size;
	struct ptc_tracing_format *formats;
	size_t nr_formats;
	uint64_t kallsyms_size, printk_size, cmdlines_size;
	uint64_t size;			/* bytes the container used */
	/* system names, owned */
	char **systems;
	size_t nr_systems;
};

/* Parses the container at data (n bytes; the data stay owned by the caller
 * and must outlive *out).  name (the file) and base (where the container
 * starts in it) are for messages: on failure err says
 * "NAME: offset 0xN: tracing data: reason". */
int ptc_tracing_data_parse(const uint8_t *data, size_t n, const char *name, uint64_t base,
			   struct ptc_tracing_data **out, char *err, size_t errlen);
void ptc_tracing_data_free(struct ptc_tracing_data *td);
/* The format text of system:event (matched on its "name: " line), or NULL. */
const struct ptc_tracing_format *ptc_tracing_data_find(const struct ptc_tracing_data *td,
						       const char *system, const char *event);

/* sched:sched_switch read through libtraceevent. */
struct ptc_sched_switch_reader;

struct ptc_sched_switch {
	int32_t prev_pid, next_pid;	/* kernel pids: thread ids */
	char prev_comm[16], next_comm[16];	/* NUL-terminated */
};

int ptc_sched_switch_new(struct ptc_sched_switch_reader **out,
			 const struct ptc_tracing_data *td, const char *name, uint64_t base,
			 char *err, size_t errlen);
void ptc_sched_switch_free(struct ptc_sched_switch_reader *r);
/* The tracepoint id (attr.config of the sched:sched_switch event). */
uint64_t ptc_sched_switch_id(const struct ptc_sched_switch_reader *r);
/* Decodes one sample's raw data; -ptc_err_bad_record when it is too short
 * for the fields or not a sched_switch (common_type). */
int ptc_sched_switch_read(const struct ptc_sched_switch_reader *r,
			  const uint8_t *raw, size_t size, struct ptc_sched_switch *out);

/* The PERF_SAMPLE_RAW bytes of a SAMPLE record written for attr (the fields
 * before it are skipped as attr.sample_type and attr.read_format say).
 * -ptc_err_not_found when the attr has no RAW, -ptc_err_bad_record when the
 * record is too short for what it claims. */
int ptc_perf_sample_raw(const struct ptc_perf_record *rec,
			const struct perf_event_attr *attr,
			const uint8_t **raw, uint32_t *size);

/* sched_switch samples of a recording, for a reader's consumer:
 *
 *	struct ptc_sched_switch_samples ss = { 0 };
 *	for each record: k = ptc_sched_switch_sample(&ss, reader, &rec, &sw);
 *	ptc_sched_switch_samples_fini(&ss);
 *
 * The tracing data is parsed at the first tracepoint sample (in pipe mode
 * its record comes before the samples). */
struct ptc_sched_switch_samples {
	struct ptc_tracing_data *td;
	struct ptc_sched_switch_reader *rd;
	int state;			/* 0 not tried, 1 ready, -1 unusable (err says why) */
	char err[320];
	uint64_t samples;		/* sched_switch samples decoded */
	uint64_t bad;			/* tracepoint samples that could not be decoded */
	uint64_t no_cpu;		/* decoded, but without a CPU field */
};

/* 1: rec is a sched_switch sample, *out filled (rec->sid has its cpu and
 * time); 0: it is not one; <0: a tracepoint sample that cannot be read
 * (no or bad tracing data, malformed record; ss->err says why when the
 * tracing data is the problem). */
int ptc_sched_switch_sample(struct ptc_sched_switch_samples *ss, const struct ptc_perf_reader *r,
			    const struct ptc_perf_record *rec, struct ptc_sched_switch *out);
void ptc_sched_switch_samples_fini(struct ptc_sched_switch_samples *ss);

#endif
