/* perf.data reader: a streaming iterator over the records of a perf.data
 * file or pipe.
 *
 * One handle reads one recording.  Records come out in file order; records
 * wrapped in COMPRESSED/COMPRESSED2 are decompressed (zstd, streaming) and
 * come out one by one as if they had been written plainly.  Memory does not
 * grow with the recording: a record's bytes live in a buffer owned by the
 * reader and stay valid until the next call to ptc_perf_next().
 *
 * AUXTRACE records are followed by trace data that the record's header.size
 * does not count.  The reader does not load it: the caller streams it with
 * ptc_perf_read_aux() before the next ptc_perf_next(), or, in file mode,
 * remembers rec->aux_offset and reads it later with ptc_perf_pread().
 *
 * Every size and offset is checked against the input before use.  On bad
 * input a function returns a negative ptc error code and ptc_perf_errmsg()
 * says "FILE: offset 0xN: reason".  A damaged record header in the data
 * section (a size below 8, not a multiple of 8 where perf always writes
 * one, too small for the record's type, running past the data section; an
 * AUXTRACE record whose trace data does not end where a record starts) does
 * not stop the reading: the reader scans forward for the next offset where
 * a chain of plausible records starts, goes on from there and counts the
 * bytes in between as skipped (ptc_perf_skip(), stats.skipped_bytes).
 * Problems that do not stop the reading (a malformed feature section,
 * garbage after the last record of a pipe-mode recording, a file cut inside
 * AUX data -- whose bytes present can still be read before the error,
 * damage) are kept as warnings, ptc_perf_warning().
 *
 * Records are handed out 8-byte aligned (copied when they sit misaligned in
 * the input), so u64 arrays in them may be read directly.  A record that came
 * out of a COMPRESSED record has rec->compressed set and rec->offset of that
 * COMPRESSED record.  Unknown record types are skipped and counted.
 * Files written on a big-endian machine are refused (-ptc_err_foreign_endian).
 */
#ifndef PTC_INPUT_PERF_READER_H
#define PTC_INPUT_PERF_READER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "input/perf_abi.h"

struct ptc_perf_reader;

/* Which sample_id / sample fields a record carried. */
enum ptc_sid_valid {
	PTC_SID_TID = 1 << 0,	/* pid, tid */
	PTC_SID_TIME = 1 << 1,
	PTC_SID_ID = 1 << 2,
	PTC_SID_STREAM_ID = 1 << 3,
	PTC_SID_CPU = 1 << 4,
	PTC_SID_IDENTIFIER = 1 << 5,
	PTC_SID_IP = 1 << 6,	/* samples only */
};

struct ptc_perf_sample_id {
	uint32_t valid;		/* enum ptc_sid_valid bits */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id, stream_id;
	uint32_t cpu;
	uint64_t ip;		/* PERF_RECORD_SAMPLE only */
};

/* One event of the recording (an entry of the attrs section or a HEADER_ATTR record). */
struct ptc_perf_attr {
	struct perf_event_attr attr;	/* zero-extended to this build's size */
	uint32_t file_attr_size;	/* attr.size as written in the file */
	const uint64_t *ids;		/* sample ids that belong to this event */
	size_t nr_ids;
	const char *name;		/* from EVENT_DESC, or NULL */
};

struct ptc_perf_record {
	uint32_t type;			/* PERF_RECORD_* or PTC_REC_* */
	uint16_t misc;
	uint16_t size;			/* header.size, bytes */
	uint64_t offset;		/* where the record starts in the input */
	int compressed;			/* came out of a COMPRESSED record, which starts at offset */
	const uint8_t *data;		/* the whole record, header included, size bytes (8-byte aligned) */
	struct ptc_perf_sample_id sid;	/* parsed sample_id_all trailer or sample fields */
	/* PTC_REC_AUXTRACE only: */
	uint64_t aux_size;		/* trace bytes following the record */
	uint64_t aux_offset;		/* their position in the input */
	/* Damage: the record's trace data past its aux_size bytes (all of it
	 * when aux_size is 0) may have been in damaged input, skipped and
	 * counted in a skip; how much is unknown. */
	int aux_lost;
};

/* Facts from the header's feature sections (file mode) or HEADER_FEATURE
 * records (pipe mode, filled in as they are read).  Strings are NUL-terminated
 * or NULL when absent. */
struct ptc_perf_build_id {
	int32_t pid;
	uint16_t misc;
	uint8_t size;			/* bytes of build_id that are valid */
	uint8_t build_id[20];
	const char *filename;
};

struct ptc_perf_info {
	int pipe_mode;
	uint64_t data_offset, data_size;	/* file mode: the data section */
	uint64_t features[PTC_FEAT_BITS / 64];	/* feature bitmap */
	const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	const char *cmdline;		/* argv joined by spaces */
	uint32_t nr_cpus_online, nr_cpus_avail;
	uint64_t total_mem_kb;
	uint64_t clockid_res_ns;
	const struct ptc_perf_build_id *build_ids;
	size_t nr_build_ids;
	const uint8_t *tracing_data;	/* raw TRACING_DATA (for libtraceevent) */
	size_t tracing_data_size;
	/* PTC_REC_TIME_CONV, once seen */
	int have_time_conv;
	uint64_t time_shift, time_mult, time_zero, time_cycles, time_mask;
	int cap_user_time_zero, cap_user_time_short;
	/* Added later: where tracing_data starts in the input (for messages) */
	uint64_t tracing_data_offset;
};

/* Counters for everything read, skipped or dropped. */
struct ptc_perf_stats {
	uint64_t records[PTC_REC_USER_MAX];	/* by type, as delivered */
	uint64_t unknown_records;		/* types ptconv does not know: skipped */
	uint64_t compressed_records;		/* COMPRESSED and COMPRESSED2 seen */
	uint64_t decompressed_bytes;
	uint64_t aux_bytes;			/* AUXTRACE payload bytes seen */
	uint64_t bytes_read;
	/* Added after the first version of this interface: */
	uint64_t warnings;			/* problems that did not stop reading */
	uint64_t bad_sample_ids;		/* records too short for their sample_id fields */
	uint64_t trailing_offset, trailing_bytes;	/* pipe mode: garbage after the last record */
	/* damaged input (ptc_perf_skip()) */
	uint64_t skips;				/* places where the reading resynchronised */
	uint64_t skipped_bytes;			/* input bytes skipped there, lost */
	uint64_t repairs;			/* damaged records read whole anyway */
	uint64_t features_unread;		/* feature sections past the file's end or too
						 * large: not read (a warning says which) */
};

/* Where the reader met damage in the data section.  bytes is what it
 * skipped from offset on (0: a record header repaired, nothing lost); to_end
 * when no intact record followed.  Records in the skipped bytes are lost,
 * sideband and trace data alike; t_start and t_end bound the perf times of
 * the records around the damage (0 and UINT64_MAX when unknown), so that a
 * consumer can tell which part of the recording the lost sideband concerned.
 * message is "FILE: offset 0xN: reason ...". */
struct ptc_perf_skip {
	uint64_t offset, bytes;
	uint64_t t_start, t_end;
	int to_end;
	uint64_t merged;			/* later skips folded into the last one kept */
	const char *message;
};

/* Further feature-section facts (for `ptconv info`). */
struct ptc_perf_pmu { uint32_t type; const char *name; };
struct ptc_perf_extra {
	const struct ptc_perf_pmu *pmus;	/* PMU_MAPPINGS */
	size_t nr_pmus;
	char **core_siblings, **thread_siblings;	/* CPU_TOPOLOGY */
	size_t nr_core_siblings, nr_thread_siblings;
	char **hybrid_pmus, **hybrid_cpus;	/* HYBRID_TOPOLOGY */
	size_t nr_hybrid, nr_hybrid_cpus;
	int have_sample_time;
	uint64_t sample_time_first, sample_time_last;	/* SAMPLE_TIME */
	int have_compressed;			/* COMPRESSED feature */
	uint32_t comp_version, comp_type, comp_level, comp_ratio, comp_mmap_len;
	uint64_t auxtrace_index_entries;	/* AUXTRACE feature */
};

/* Open a recording; path "-" reads standard input (pipe mode is detected
 * from the header, whatever the input is).  On failure *out is NULL and, when
 * errmsg is not NULL, a message is written to errmsg (errlen bytes). */
int ptc_perf_open(struct ptc_perf_reader **out, const char *path,
		  char *errmsg, size_t errlen);
/* Same on an open descriptor; name is used in messages; the reader does not close fd. */
int ptc_perf_open_fd(struct ptc_perf_reader **out, int fd, const char *name,
		     char *errmsg, size_t errlen);
void ptc_perf_close(struct ptc_perf_reader *r);

/* Next record: 1 and *rec filled, 0 at the end, <0 on error (the reader
 * stays usable only for ptc_perf_errmsg/stats/close after an error). */
int ptc_perf_next(struct ptc_perf_reader *r, struct ptc_perf_record *rec);

/* Stream the current AUXTRACE record's trace bytes: returns bytes copied
 * (0 once all are read), <0 on error or truncation. */
ssize_t ptc_perf_read_aux(struct ptc_perf_reader *r, void *buf, size_t n);

/* Read n bytes at an absolute input offset when the input is a regular file
 * (file mode, or pipe mode saved to a file); <0 when the range is not inside
 * the file or the input is a pipe. */
int ptc_perf_pread(struct ptc_perf_reader *r, void *buf, size_t n, uint64_t offset);

const struct ptc_perf_info *ptc_perf_info(const struct ptc_perf_reader *r);
const struct ptc_perf_stats *ptc_perf_stats(const struct ptc_perf_reader *r);
size_t ptc_perf_nr_attrs(const struct ptc_perf_reader *r);
const struct ptc_perf_attr *ptc_perf_attr(const struct ptc_perf_reader *r, size_t i);
/* The attr a sample id belongs to; the only attr when there is one; else NULL. */
const struct ptc_perf_attr *ptc_perf_attr_of(const struct ptc_perf_reader *r, uint64_t id);
const char *ptc_perf_name(const struct ptc_perf_reader *r);	/* file name for messages */
const char *ptc_perf_errmsg(const struct ptc_perf_reader *r);
/* Problems that did not stop reading (malformed feature sections, trailing
 * garbage ...), "FILE: offset 0xN: reason"; the first 16 are kept, all are
 * counted in stats.warnings. */
size_t ptc_perf_nr_warnings(const struct ptc_perf_reader *r);
const char *ptc_perf_warning(const struct ptc_perf_reader *r, size_t i);
const struct ptc_perf_extra *ptc_perf_extra(const struct ptc_perf_reader *r);
/* The places where the reader skipped damaged input, in input order; the
 * first 256 are kept (the last one kept absorbs the others' bytes and
 * times), all are counted in stats.skips. */
size_t ptc_perf_nr_skips(const struct ptc_perf_reader *r);
const struct ptc_perf_skip *ptc_perf_skip(const struct ptc_perf_reader *r, size_t i);
/* Whether ptc_perf_pread works (the input is a regular file). */
int ptc_perf_seekable(const struct ptc_perf_reader *r);
/* The size of a seekable input, 0 for a stream. */
uint64_t ptc_perf_file_size(const struct ptc_perf_reader *r);
/* The name of a record type, e.g. "MMAP2", "AUXTRACE"; "UNKNOWN" otherwise. */
const char *ptc_perf_record_name(uint32_t type);

/* Decoded record bodies.  Each parser checks the record's size and returns
 * -ptc_err_bad_record on a malformed record; pointers point into rec->data. */
struct ptc_perf_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t prot, flags;		/* MMAP2 only */
	int has_build_id;		/* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t build_id_size;
	uint8_t build_id[20];
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	const char *filename;
	int executable;			/* misc says data mapping (PERF_RECORD_MISC_MMAP_DATA) when 0 */
};
int ptc_perf_parse_mmap(const struct ptc_perf_record *rec, struct ptc_perf_mmap *out);

struct ptc_perf_comm { uint32_t pid, tid; const char *comm; int exec; };
int ptc_perf_parse_comm(const struct ptc_perf_record *rec, struct ptc_perf_comm *out);

/* FORK and EXIT */
struct ptc_perf_task { uint32_t pid, ppid, tid, ptid; uint64_t time; };
int ptc_perf_parse_task(const struct ptc_perf_record *rec, struct ptc_perf_task *out);

struct ptc_perf_aux { uint64_t aux_offset, aux_size, flags; };
int ptc_perf_parse_aux(const struct ptc_perf_record *rec, struct ptc_perf_aux *out);

struct ptc_perf_itrace_start { uint32_t pid, tid; };
int ptc_perf_parse_itrace_start(const struct ptc_perf_record *rec, struct ptc_perf_itrace_start *out);

/* SWITCH and SWITCH_CPU_WIDE (next_prev_* are 0 for SWITCH). */
struct ptc_perf_switch { int out; int preempt; uint32_t next_prev_pid, next_prev_tid; };
int ptc_perf_parse_switch(const struct ptc_perf_record *rec, struct ptc_perf_switch *out);

struct ptc_perf_lost { uint64_t id, lost; };
int ptc_perf_parse_lost(const struct ptc_perf_record *rec, struct ptc_perf_lost *out);

struct ptc_perf_auxtrace { uint64_t size, offset, reference; uint32_t idx, tid, cpu; };
int ptc_perf_parse_auxtrace(const struct ptc_perf_record *rec, struct ptc_perf_auxtrace *out);

struct ptc_perf_auxtrace_info { uint32_t type; const uint64_t *priv; size_t nr_priv; };
int ptc_perf_parse_auxtrace_info(const struct ptc_perf_record *rec, struct ptc_perf_auxtrace_info *out);

struct ptc_perf_auxtrace_error {
	uint32_t type, code, cpu, pid, tid, fmt, machine_pid, vcpu;
	uint64_t ip, time;
	const char *msg;
};
int ptc_perf_parse_auxtrace_error(const struct ptc_perf_record *rec, struct ptc_perf_auxtrace_error *out);

#endif
