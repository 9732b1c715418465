/* perf.data writer: the counterpart of perf_reader.h, used by the test
 * generator (ptgen-encode) and by anything that needs to produce a recording
 * Linux perf accepts.
 *
 * One handle writes one recording to a file descriptor, streaming: records
 * go out through a bounded buffer as they are given, so memory does not grow
 * with the recording (only the AUXTRACE index, 16 bytes per AUXTRACE record,
 * is kept for the file-mode AUXTRACE feature).
 *
 * File mode (needs a seekable descriptor) lays the file out as perf does:
 *
 *	header (104 bytes) | attr ids | attrs | data | feature index | features
 *
 * and rewrites the header when the recording is finished.  Pipe mode writes
 * the 16-byte pipe header, then one HEADER_ATTR record per event, one
 * HEADER_FEATURE record per feature that perf record synthesizes in a pipe
 * (HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS, CPUDESC, CPUID, TOTAL_MEM,
 * EVENT_DESC, CLOCKID, ...; not BUILD_ID, CMDLINE, SAMPLE_TIME, AUXTRACE),
 * the TRACING_DATA feature's bytes (when set) behind a HEADER_TRACING_DATA
 * record as perf record writes them, one HEADER_BUILD_ID record per
 * build-id entry, then the data records.
 *
 * Order of use:
 *	ptc_perf_writer_new()
 *	ptc_perf_writer_add_attr() ...		(events and their sample ids)
 *	ptc_perf_writer_set_*() ...		(feature sections)
 *	ptc_perf_writer_record()/_event()/_auxtrace() ...
 *	ptc_perf_writer_finish()
 *	ptc_perf_writer_free()
 * The first record freezes the attrs (and in pipe mode the features, except
 * those that only exist in file mode: SAMPLE_TIME and AUXTRACE).
 *
 * Functions return 0 (or a positive count) on success and a negative ptc
 * error code on failure; ptc_perf_writer_errmsg() then says why.
 */
#ifndef PTC_INPUT_PERF_WRITER_H
#define PTC_INPUT_PERF_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "input/perf_abi.h"

struct ptc_perf_writer;

enum ptc_perf_writer_mode {
	PTC_PERF_WRITE_FILE,	/* PERFILE2 file with feature sections */
	PTC_PERF_WRITE_PIPE,	/* stream, as `perf record -o -` writes */
};

/* The sample_id trailer of a kernel record (attr.sample_id_all); which
 * fields are written is decided by the sample_type given with
 * ptc_perf_writer_set_sample_id_type(), as the kernel does. */
struct ptc_perf_writer_sid {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;		/* PERF_SAMPLE_ID and PERF_SAMPLE_IDENTIFIER */
	uint64_t stream_id;
	uint32_t cpu;
};

int ptc_perf_writer_new(struct ptc_perf_writer **out, int fd,
			enum ptc_perf_writer_mode mode);
/* Frees the handle; does not close the descriptor nor finish the file. */
void ptc_perf_writer_free(struct ptc_perf_writer *w);
/* Why the last call failed ("" when none did). */
const char *ptc_perf_writer_errmsg(const struct ptc_perf_writer *w);

/* An event: its attr (attr->size says how many bytes to write; 0 means this
 * build's sizeof), its name (for EVENT_DESC, may be NULL) and the sample ids
 * the kernel gave its per-CPU/per-thread instances.  Copied. */
int ptc_perf_writer_add_attr(struct ptc_perf_writer *w,
			     const struct perf_event_attr *attr,
			     const char *name, const uint64_t *ids,
			     uint32_t nr_ids);
/* Layout of the sample_id trailer added by ptc_perf_writer_event();
 * defaults to the sample_type of the first attr with sample_id_all. */
void ptc_perf_writer_set_sample_id_type(struct ptc_perf_writer *w,
					uint64_t sample_type);

/* Feature sections.  set_feature takes the section's bytes as perf lays
 * them out; the helpers build the common ones.  EVENT_DESC is built from
 * the attrs and AUXTRACE from the AUXTRACE records (file mode) unless set
 * explicitly. */
int ptc_perf_writer_set_feature(struct ptc_perf_writer *w,
				enum ptc_perf_feature feat, const void *data,
				size_t size);
/* HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID: one perf string. */
int ptc_perf_writer_set_string(struct ptc_perf_writer *w,
			       enum ptc_perf_feature feat, const char *s);
/* TOTAL_MEM (kB), CLOCKID (the clock's resolution in ns), or any u64 feature. */
int ptc_perf_writer_set_u64(struct ptc_perf_writer *w,
			    enum ptc_perf_feature feat, uint64_t v);
int ptc_perf_writer_set_nrcpus(struct ptc_perf_writer *w, uint32_t avail,
			       uint32_t online);
int ptc_perf_writer_set_cmdline(struct ptc_perf_writer *w, int argc,
				const char *const *argv);
/* SAMPLE_TIME (file mode only): first and last sample time. */
int ptc_perf_writer_set_sample_time(struct ptc_perf_writer *w, uint64_t first,
				    uint64_t last);
/* One BUILD_ID feature entry.  misc is PERF_RECORD_MISC_USER or _KERNEL;
 * build-ids of 1..20 bytes. */
int ptc_perf_writer_add_build_id(struct ptc_perf_writer *w, int32_t pid,
				 uint16_t misc, const uint8_t *build_id,
				 size_t build_id_len, const char *filename);

/* perf record -z: from now on kernel records (types below 64) are
 * batched, 32 KiB at a time, into COMPRESSED records (one zstd frame
 * each; perf decompresses them with one stream), and the COMPRESSED
 * feature is set.  perf's own records and AUXTRACE data stay plain, as
 * perf record writes them.  Call before the first record. */
int ptc_perf_writer_set_compression(struct ptc_perf_writer *w, int level);

/* Writes the file header, attrs (and in pipe mode the features) now rather
 * than at the first record. */
int ptc_perf_writer_begin(struct ptc_perf_writer *w);

/* A complete record as it appears in the file: header.size bytes starting
 * with struct perf_event_header; header.size must be a multiple of 8. */
int ptc_perf_writer_record(struct ptc_perf_writer *w, const void *rec);

/* A record built from its type, misc and body (the bytes after the header):
 * the body is padded with zeros to 8 bytes, then, when sid is not NULL, the
 * sample_id trailer is appended. */
int ptc_perf_writer_event(struct ptc_perf_writer *w, uint32_t type,
			  uint16_t misc, const void *body, size_t body_size,
			  const struct ptc_perf_writer_sid *sid);

/* An AUXTRACE record followed by its size bytes of trace data, padded with
 * zeros to 8 bytes as perf record does (its size field counts the padding,
 * which an Intel PT decoder reads as PAD packets).
 * File mode adds it to the AUXTRACE feature's index. */
int ptc_perf_writer_auxtrace(struct ptc_perf_writer *w, uint64_t offset,
			     uint64_t reference, uint32_t idx, uint32_t tid,
			     uint32_t cpu, const void *data, uint64_t size);

/* FINISHED_ROUND: everything before it may be sorted and processed. */
int ptc_perf_writer_finished_round(struct ptc_perf_writer *w);

/* File mode: writes the feature sections and the final header.  Pipe mode:
 * flushes.  The recording is complete once this returns 0. */
int ptc_perf_writer_finish(struct ptc_perf_writer *w);

/* Bytes written so far (the file offset of the next record). */
uint64_t ptc_perf_writer_offset(const struct ptc_perf_writer *w);

/* Layout of a perf string in a feature section: u32 length (the string, its
 * NUL and zero padding to 64 bytes), then the bytes.  Returns the bytes
 * needed; writes them when buf is not NULL. */
size_t ptc_perf_string_put(void *buf, const char *s);

#endif
