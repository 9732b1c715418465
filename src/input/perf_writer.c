/* perf.data writer (see perf_writer.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "common/bytes.h"
#include "common/error.h"
#include "input/perf_writer.h"

#define PW_BUF_SIZE (256 * 1024)
#define PW_NAME_ALIGN 64	/* perf's NAME_ALIGN for strings and file names */
#define PW_MISC_BUILD_ID_SIZE (1 << 15)	/* PERF_RECORD_MISC_BUILD_ID_SIZE */

struct pw_attr {
	struct perf_event_attr attr;
	uint32_t attr_size;	/* bytes written */
	char *name;
	uint64_t *ids;
	uint32_t nr_ids;
	uint64_t ids_offset;	/* file mode: where the ids were written */
};

struct pw_blob {
	uint8_t *data;
	size_t size, cap;
	int set;
};

struct ptc_perf_writer {
	int fd;
	enum ptc_perf_writer_mode mode;
	int begun, finished, failed;
	uint64_t offset;	/* bytes handed to write() plus buffered */
	uint8_t *buf;
	size_t buf_used;

	struct pw_attr *attrs;
	size_t nr_attrs;
	uint64_t sid_type;
	int sid_type_set;

	struct pw_blob feat[PTC_FEAT_LAST];
	struct pw_blob auxtrace_index;	/* {file_offset, size} pairs */
	uint64_t nr_auxtrace;

	uint64_t attrs_offset, data_offset;

	/* perf record -z: kernel records batched into COMPRESSED records. */
	ZSTD_CCtx *zc;
	int zlevel;
	uint8_t *zin, *zout;
	size_t zin_used;
	uint64_t z_plain, z_packed;	/* for the COMPRESSED feature's ratio */

	char errmsg[256];
};

/* Plain bytes per COMPRESSED record: what perf decompresses into its
 * comp_mmap_len buffer, and small enough that the compressed bytes fit a
 * record's 16-bit size. */
#define PW_Z_BATCH (32 * 1024)
#define PW_Z_OUT (ZSTD_COMPRESSBOUND(PW_Z_BATCH) + 8)

static int pw_fail(struct ptc_perf_writer *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int pw_fail(struct ptc_perf_writer *w, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	return -err;
}

static int blob_append(struct pw_blob *b, const void *data, size_t n)
{
	if (b->size + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->size + n)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p)
			return -ptc_err_nomem;
		b->data = p;
		b->cap = cap;
	}
	if (data)
		memcpy(b->data + b->size, data, n);
	else
		memset(b->data + b->size, 0, n);
	b->size += n;
	b->set = 1;
	return 0;
}

int ptc_perf_writer_new(struct ptc_perf_writer **out, int fd,
			enum ptc_perf_writer_mode mode)
{
	struct ptc_perf_writer *w;

	if (!out || fd < 0 ||
	    (mode != PTC_PERF_WRITE_FILE && mode != PTC_PERF_WRITE_PIPE))
		return -ptc_err_invalid;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ptc_err_nomem;
	w->buf = malloc(PW_BUF_SIZE);
	if (!w->buf) {
		free(w);
		return -ptc_err_nomem;
	}
	w->fd = fd;
	w->mode = mode;
	*out = w;
	return 0;
}

void ptc_perf_writer_free(struct ptc_perf_writer *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	for (i = 0; i < PTC_FEAT_LAST; i++)
		free(w->feat[i].data);
	free(w->auxtrace_index.data);
	ZSTD_freeCCtx(w->zc);
	free(w->zin);
	free(w->zout);
	free(w->buf);
	free(w);
}

const char *ptc_perf_writer_errmsg(const struct ptc_perf_writer *w)
{
	return w ? w->errmsg : "";
}

uint64_t ptc_perf_writer_offset(const struct ptc_perf_writer *w)
{
	return w->offset;
}

/* --- output ------------------------------------------------------------ */

static int write_all(struct ptc_perf_writer *w, const void *data, size_t n)
{
	const uint8_t *p = data;

	while (n) {
		ssize_t r = write(w->fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			w->failed = 1;
			return pw_fail(w, ptc_err_io, "write failed: %s",
				       strerror(errno));
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int pw_flush(struct ptc_perf_writer *w)
{
	int err;

	if (!w->buf_used)
		return 0;
	err = write_all(w, w->buf, w->buf_used);
	w->buf_used = 0;
	return err;
}

/* Appends n bytes (zeros when data is NULL) to the output. */
static int pw_out(struct ptc_perf_writer *w, const void *data, size_t n)
{
	const uint8_t *p = data;

	if (w->failed)
		return -ptc_err_io;
	w->offset += n;
	while (n) {
		size_t room = PW_BUF_SIZE - w->buf_used, k = n < room ? n : room;

		if (p) {
			memcpy(w->buf + w->buf_used, p, k);
			p += k;
		} else {
			memset(w->buf + w->buf_used, 0, k);
		}
		w->buf_used += k;
		n -= k;
		if (w->buf_used == PW_BUF_SIZE) {
			int err = pw_flush(w);

			if (err)
				return err;
		}
	}
	return 0;
}

static int pw_pwrite(struct ptc_perf_writer *w, const void *data, size_t n,
		     uint64_t off)
{
	const uint8_t *p = data;

	while (n) {
		ssize_t r = pwrite(w->fd, p, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return pw_fail(w, ptc_err_io, "pwrite at 0x%llx failed: %s",
				       (unsigned long long)off, strerror(errno));
		}
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* --- compression ------------------------------------------------------------ */

static int put_compressed_feature(struct ptc_perf_writer *w)
{
	/* version, type (1: zstd), level, ratio, mmap_len */
	uint32_t v[5] = { 1, 1, (uint32_t)w->zlevel,
			  w->z_packed ? (uint32_t)(w->z_plain / w->z_packed) : 0,
			  PW_Z_BATCH };

	w->feat[PTC_FEAT_COMPRESSED].size = 0;
	return blob_append(&w->feat[PTC_FEAT_COMPRESSED], v, sizeof(v));
}

int ptc_perf_writer_set_compression(struct ptc_perf_writer *w, int level)
{
	if (!w || w->begun)
		return -ptc_err_invalid;
	if (level < 1 || level > 22)
		return pw_fail(w, ptc_err_invalid, "zstd level %d", level);
	w->zc = ZSTD_createCCtx();
	w->zin = malloc(PW_Z_BATCH);
	w->zout = malloc(PW_Z_OUT);
	if (!w->zc || !w->zin || !w->zout)
		return -ptc_err_nomem;
	w->zlevel = level;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, level)))
		return pw_fail(w, ptc_err_invalid, "zstd level %d", level);
	return put_compressed_feature(w);
}

static int pw_out(struct ptc_perf_writer *w, const void *data, size_t n);

/* Writes the batched records as one COMPRESSED record (one zstd frame). */
static int z_flush(struct ptc_perf_writer *w)
{
	size_t n;
	uint8_t hdr[8];
	int err;

	if (!w->zin_used)
		return 0;
	n = ZSTD_compress2(w->zc, w->zout, PW_Z_OUT, w->zin, w->zin_used);
	if (ZSTD_isError(n))
		return pw_fail(w, ptc_err_internal, "zstd: %s", ZSTD_getErrorName(n));
	if (8 + n > UINT16_MAX)
		return pw_fail(w, ptc_err_internal, "compressed record too large");
	w->z_plain += w->zin_used;
	w->z_packed += 8 + n;
	w->zin_used = 0;
	ptc_put32(hdr, PTC_REC_COMPRESSED);
	ptc_put16(hdr + 4, 0);
	ptc_put16(hdr + 6, (uint16_t)(8 + n));
	err = pw_out(w, hdr, sizeof(hdr));
	return err ? err : pw_out(w, w->zout, n);
}

/* Appends a kernel record to the batch; n <= 64 KiB - 1. */
static int z_add(struct ptc_perf_writer *w, const void *rec, size_t n)
{
	int err = 0;

	if (w->zin_used + n > PW_Z_BATCH)
		err = z_flush(w);
	if (err)
		return err;
	if (n > PW_Z_BATCH)	/* a huge record goes out plain, as perf allows */
		return pw_out(w, rec, n);
	memcpy(w->zin + w->zin_used, rec, n);
	w->zin_used += n;
	return 0;
}

/* --- attrs and features -------------------------------------------------- */

int ptc_perf_writer_add_attr(struct ptc_perf_writer *w,
			     const struct perf_event_attr *attr,
			     const char *name, const uint64_t *ids,
			     uint32_t nr_ids)
{
	struct pw_attr *a, *attrs;

	if (!w || !attr || (nr_ids && !ids))
		return -ptc_err_invalid;
	if (w->begun)
		return pw_fail(w, ptc_err_invalid,
			       "attrs must be added before the first record");
	if (attr->size > sizeof(*attr))
		return pw_fail(w, ptc_err_invalid, "attr size %u > %zu",
			       attr->size, sizeof(*attr));
	attrs = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*attrs));
	if (!attrs)
		return -ptc_err_nomem;
	w->attrs = attrs;
	a = &attrs[w->nr_attrs];
	memset(a, 0, sizeof(*a));
	a->attr = *attr;
	a->attr_size = attr->size ? attr->size : sizeof(*attr);
	a->attr.size = a->attr_size;
	if (nr_ids) {
		a->ids = malloc(nr_ids * sizeof(*ids));
		if (!a->ids)
			return -ptc_err_nomem;
		memcpy(a->ids, ids, nr_ids * sizeof(*ids));
	}
	a->nr_ids = nr_ids;
	if (name) {
		a->name = strdup(name);
		if (!a->name) {
			free(a->ids);
			return -ptc_err_nomem;
		}
	}
	w->nr_attrs++;
	if (!w->sid_type_set && attr->sample_id_all) {
		w->sid_type = attr->sample_type;
		w->sid_type_set = 1;
	}
	return 0;
}

void ptc_perf_writer_set_sample_id_type(struct ptc_perf_writer *w,
					uint64_t sample_type)
{
	w->sid_type = sample_type;
	w->sid_type_set = 1;
}

static int feat_check(struct ptc_perf_writer *w, enum ptc_perf_feature feat)
{
	if ((int)feat <= PTC_FEAT_RESERVED || feat >= PTC_FEAT_LAST)
		return pw_fail(w, ptc_err_invalid, "feature %d out of range",
			       (int)feat);
	if (w->begun && w->mode == PTC_PERF_WRITE_PIPE)
		return pw_fail(w, ptc_err_invalid,
			       "pipe mode: features must be set before the first record");
	return 0;
}

int ptc_perf_writer_set_feature(struct ptc_perf_writer *w,
				enum ptc_perf_feature feat, const void *data,
				size_t size)
{
	int err = feat_check(w, feat);

	if (err)
		return err;
	w->feat[feat].size = 0;
	return blob_append(&w->feat[feat], data, size);
}

size_t ptc_perf_string_put(void *buf, const char *s)
{
	size_t len = strlen(s) + 1;
	size_t padded = (len + PW_NAME_ALIGN - 1) / PW_NAME_ALIGN * PW_NAME_ALIGN;

	if (buf) {
		uint8_t *p = buf;

		ptc_put32(p, (uint32_t)padded);
		memcpy(p + 4, s, len);
		memset(p + 4 + len, 0, padded - len);
	}
	return 4 + padded;
}

static int blob_string(struct pw_blob *b, const char *s)
{
	size_t n = ptc_perf_string_put(NULL, s);
	int err = blob_append(b, NULL, n);

	if (err)
		return err;
	ptc_perf_string_put(b->data + b->size - n, s);
	return 0;
}

int ptc_perf_writer_set_string(struct ptc_perf_writer *w,
			       enum ptc_perf_feature feat, const char *s)
{
	int err = feat_check(w, feat);

	if (err)
		return err;
	if (!s)
		return -ptc_err_invalid;
	w->feat[feat].size = 0;
	return blob_string(&w->feat[feat], s);
}

int ptc_perf_writer_set_u64(struct ptc_perf_writer *w,
			    enum ptc_perf_feature feat, uint64_t v)
{
	return ptc_perf_writer_set_feature(w, feat, &v, sizeof(v));
}

int ptc_perf_writer_set_nrcpus(struct ptc_perf_writer *w, uint32_t avail,
			       uint32_t online)
{
	uint32_t v[2] = { avail, online };

	return ptc_perf_writer_set_feature(w, PTC_FEAT_NRCPUS, v, sizeof(v));
}

int ptc_perf_writer_set_cmdline(struct ptc_perf_writer *w, int argc,
				const char *const *argv)
{
	struct pw_blob *b = &w->feat[PTC_FEAT_CMDLINE];
	uint32_t n = (uint32_t)argc;
	int err = feat_check(w, PTC_FEAT_CMDLINE), i;

	if (err)
		return err;
	b->size = 0;
	err = blob_append(b, &n, sizeof(n));
	for (i = 0; !err && i < argc; i++)
		err = blob_string(b, argv[i]);
	return err;
}

int ptc_perf_writer_set_sample_time(struct ptc_perf_writer *w, uint64_t first,
				    uint64_t last)
{
	uint64_t v[2] = { first, last };

	if ((int)PTC_FEAT_SAMPLE_TIME >= PTC_FEAT_LAST)
		return -ptc_err_internal;
	w->feat[PTC_FEAT_SAMPLE_TIME].size = 0;
	return blob_append(&w->feat[PTC_FEAT_SAMPLE_TIME], v, sizeof(v));
}

int ptc_perf_writer_add_build_id(struct ptc_perf_writer *w, int32_t pid,
				 uint16_t misc, const uint8_t *build_id,
				 size_t build_id_len, const char *filename)
{
	/* struct perf_record_header_build_id: header, pid, build_id[24]
	 * (20 bytes of id, u8 size, padding), then the file name padded to
	 * NAME_ALIGN; header.size counts all of it. */
	uint8_t rec[36];
	size_t len, padded;
	struct pw_blob *b = &w->feat[PTC_FEAT_BUILD_ID];
	int err = feat_check(w, PTC_FEAT_BUILD_ID);

	if (err)
		return err;
	if (!build_id || !build_id_len || build_id_len > 20 || !filename)
		return pw_fail(w, ptc_err_invalid, "bad build-id entry");
	len = strlen(filename) + 1;
	padded = (len + PW_NAME_ALIGN - 1) / PW_NAME_ALIGN * PW_NAME_ALIGN;
	if (sizeof(rec) + padded > UINT16_MAX)
		return pw_fail(w, ptc_err_invalid, "file name too long");
	memset(rec, 0, sizeof(rec));
	ptc_put32(rec, PTC_REC_HEADER_BUILD_ID);
	ptc_put16(rec + 4, misc | PW_MISC_BUILD_ID_SIZE);
	ptc_put16(rec + 6, (uint16_t)(sizeof(rec) + padded));
	ptc_put32(rec + 8, (uint32_t)pid);
	memcpy(rec + 12, build_id, build_id_len);
	rec[12 + 20] = (uint8_t)build_id_len;
	err = blob_append(b, rec, sizeof(rec));
	if (!err)
		err = blob_append(b, filename, len);
	if (!err)
		err = blob_append(b, NULL, padded - len);
	return err;
}

/* EVENT_DESC: u32 nr, u32 attr size, then per event the attr, u32 nr_ids,
 * the name as a perf string and the ids. */
static int build_event_desc(struct ptc_perf_writer *w)
{
	struct pw_blob *b = &w->feat[PTC_FEAT_EVENT_DESC];
	uint32_t hdr[2] = { (uint32_t)w->nr_attrs, sizeof(struct perf_event_attr) };
	size_t i;
	int err;

	if (b->set || !w->nr_attrs)
		return 0;
	err = blob_append(b, hdr, sizeof(hdr));
	for (i = 0; !err && i < w->nr_attrs; i++) {
		struct pw_attr *a = &w->attrs[i];
		struct perf_event_attr attr = a->attr;

		attr.size = sizeof(attr);
		err = blob_append(b, &attr, sizeof(attr));
		if (!err)
			err = blob_append(b, &a->nr_ids, sizeof(a->nr_ids));
		if (!err)
			err = blob_string(b, a->name ? a->name : "unknown");
		if (!err && a->nr_ids)
			err = blob_append(b, a->ids, a->nr_ids * sizeof(uint64_t));
	}
	return err;
}

/* --- records --------------------------------------------------------------- */

/* Features perf record puts into a pipe as HEADER_FEATURE records (those
 * perf's feature table marks as synthesizable); the others either refer to
 * file offsets or are read from the file descriptor by perf, which would
 * consume the stream. */
static int pipe_feature(int f)
{
	switch (f) {
	case PTC_FEAT_HOSTNAME: case PTC_FEAT_OSRELEASE: case PTC_FEAT_VERSION:
	case PTC_FEAT_ARCH: case PTC_FEAT_NRCPUS: case PTC_FEAT_CPUDESC:
	case PTC_FEAT_CPUID: case PTC_FEAT_TOTAL_MEM: case PTC_FEAT_EVENT_DESC:
	case PTC_FEAT_CPU_TOPOLOGY: case PTC_FEAT_NUMA_TOPOLOGY:
	case PTC_FEAT_BRANCH_STACK: case PTC_FEAT_CACHE: case PTC_FEAT_MEM_TOPOLOGY:
	case PTC_FEAT_CLOCKID: case PTC_FEAT_COMPRESSED: case PTC_FEAT_CPU_PMU_CAPS:
	case PTC_FEAT_CLOCK_DATA: case PTC_FEAT_HYBRID_TOPOLOGY: case PTC_FEAT_PMU_CAPS:
		return 1;
	default:
		return 0;
	}
}

/* In a pipe the build-ids travel as HEADER_BUILD_ID records, each the
 * feature entry grown to a multiple of 8 bytes. */
static int write_pipe_build_ids(struct ptc_perf_writer *w)
{
	struct pw_blob *b = &w->feat[PTC_FEAT_BUILD_ID];
	size_t off = 0;
	int err = 0;

	while (!err && off + 8 <= b->size) {
		uint16_t size = ptc_le16(b->data + off + 6);
		uint16_t padded = (uint16_t)((size + 7) & ~7);
		uint8_t hdr[8];

		if (size < 8 || off + size > b->size)
			return pw_fail(w, ptc_err_internal, "bad build-id entry");
		memcpy(hdr, b->data + off, 8);
		ptc_put16(hdr + 6, padded);
		err = pw_out(w, hdr, 8);
		if (!err)
			err = pw_out(w, b->data + off + 8, size - 8);
		if (!err)
			err = pw_out(w, NULL, padded - size);
		off += size;
	}
	return err;
}

/* In a pipe the tracing data (the TRACING_DATA feature's bytes) follows a
 * HEADER_TRACING_DATA record, as perf record synthesizes it
 * (perf_event__synthesize_tracing_data): the record is the 8-byte header
 * and a u32, the data's size padded to 8 (header.size 12, so the stream is
 * not 8-aligned after it; later perfs add a u32 of padding, and their
 * readers, like 6.1's, read header.size bytes then the data), then the
 * data and its zero padding.  perf reads the data straight from the
 * stream, parsing it, and checks that what it parsed, padded, is that
 * size. */
static int write_pipe_tracing_data(struct ptc_perf_writer *w)
{
	struct pw_blob *b = &w->feat[PTC_FEAT_TRACING_DATA];
	uint64_t padded = ((uint64_t)b->size + 7) & ~(uint64_t)7;
	uint8_t hdr[12];
	int err;

	if (!b->set)
		return 0;
	if (padded > UINT32_MAX)
		return pw_fail(w, ptc_err_overflow, "tracing data too large for pipe mode");
	ptc_put32(hdr, PTC_REC_HEADER_TRACING_DATA);
	ptc_put16(hdr + 4, 0);
	ptc_put16(hdr + 6, sizeof(hdr));
	ptc_put32(hdr + 8, (uint32_t)padded);
	err = pw_out(w, hdr, sizeof(hdr));
	if (!err)
		err = pw_out(w, b->data, b->size);
	if (!err)
		err = pw_out(w, NULL, (size_t)(padded - b->size));
	return err;
}

static int write_pipe_features(struct ptc_perf_writer *w)
{
	int f, err;

	for (f = 1; f < PTC_FEAT_LAST; f++) {
		struct pw_blob *b = &w->feat[f];
		uint8_t hdr[16];
		size_t size;

		if (!b->set || !pipe_feature(f))
			continue;
		size = sizeof(hdr) + b->size;
		if (size > UINT16_MAX)
			return pw_fail(w, ptc_err_overflow,
				       "feature %d too large for pipe mode", f);
		ptc_put32(hdr, PTC_REC_HEADER_FEATURE);
		ptc_put16(hdr + 4, 0);
		ptc_put16(hdr + 6, (uint16_t)size);
		ptc_put64(hdr + 8, (uint64_t)f);
		err = pw_out(w, hdr, sizeof(hdr));
		if (!err)
			err = pw_out(w, b->data, b->size);
		if (err)
			return err;
	}
	err = write_pipe_tracing_data(w);
	if (err)
		return err;
	return write_pipe_build_ids(w);
}

int ptc_perf_writer_begin(struct ptc_perf_writer *w)
{
	uint8_t hdr[PTC_PERF_FILE_HEADER_SIZE];
	size_t i;
	int err;

	if (!w)
		return -ptc_err_invalid;
	if (w->begun)
		return 0;
	if (!w->nr_attrs)
		return pw_fail(w, ptc_err_invalid, "no attrs");
	w->begun = 1;
	err = build_event_desc(w);
	if (err)
		return err;

	if (w->mode == PTC_PERF_WRITE_PIPE) {
		ptc_put64(hdr, PTC_PERF_MAGIC);
		ptc_put64(hdr + 8, PTC_PERF_PIPE_HEADER_SIZE);
		err = pw_out(w, hdr, PTC_PERF_PIPE_HEADER_SIZE);
		for (i = 0; !err && i < w->nr_attrs; i++) {
			struct pw_attr *a = &w->attrs[i];
			size_t size = 8 + a->attr_size + a->nr_ids * 8;
			uint8_t rh[8];

			if (size > UINT16_MAX)
				return pw_fail(w, ptc_err_overflow,
					       "too many ids for HEADER_ATTR");
			ptc_put32(rh, PTC_REC_HEADER_ATTR);
			ptc_put16(rh + 4, 0);
			ptc_put16(rh + 6, (uint16_t)size);
			err = pw_out(w, rh, sizeof(rh));
			if (!err)
				err = pw_out(w, &a->attr, a->attr_size);
			if (!err)
				err = pw_out(w, a->ids, a->nr_ids * 8);
		}
		if (!err)
			err = write_pipe_features(w);
		return err;
	}

	/* File mode: a placeholder header, the ids, the attrs; the data
	 * follows.  The header is rewritten by finish(). */
	memset(hdr, 0, sizeof(hdr));
	err = pw_out(w, hdr, sizeof(hdr));
	for (i = 0; !err && i < w->nr_attrs; i++) {
		w->attrs[i].ids_offset = w->offset;
		err = pw_out(w, w->attrs[i].ids, w->attrs[i].nr_ids * 8);
	}
	w->attrs_offset = w->offset;
	for (i = 0; !err && i < w->nr_attrs; i++) {
		struct pw_attr *a = &w->attrs[i];
		uint64_t sec[2] = { a->ids_offset, (uint64_t)a->nr_ids * 8 };
		struct perf_event_attr attr = a->attr;

		/* Every attr of a file has the same size: this build's. */
		attr.size = sizeof(attr);
		err = pw_out(w, &attr, sizeof(attr));
		if (!err)
			err = pw_out(w, sec, sizeof(sec));
	}
	w->data_offset = w->offset;
	return err;
}

int ptc_perf_writer_record(struct ptc_perf_writer *w, const void *rec)
{
	uint16_t size;
	int err;

	if (!w || !rec)
		return -ptc_err_invalid;
	size = ptc_le16((const uint8_t *)rec + 6);
	if (size < 8 || size % 8)
		return pw_fail(w, ptc_err_invalid, "record size %u", size);
	err = ptc_perf_writer_begin(w);
	if (err)
		return err;
	if (w->zc && ptc_le32(rec) < PTC_REC_HEADER_ATTR)
		return z_add(w, rec, size);
	err = z_flush(w);
	return err ? err : pw_out(w, rec, size);
}

static size_t sid_put(uint8_t *p, uint64_t t, const struct ptc_perf_writer_sid *s)
{
	size_t n = 0;

	if (t & PERF_SAMPLE_TID) {
		ptc_put32(p + n, s->pid);
		ptc_put32(p + n + 4, s->tid);
		n += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		ptc_put64(p + n, s->time);
		n += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		ptc_put64(p + n, s->id);
		n += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		ptc_put64(p + n, s->stream_id);
		n += 8;
	}
	if (t & PERF_SAMPLE_CPU) {
		ptc_put32(p + n, s->cpu);
		ptc_put32(p + n + 4, 0);
		n += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER) {
		ptc_put64(p + n, s->id);
		n += 8;
	}
	return n;
}

int ptc_perf_writer_event(struct ptc_perf_writer *w, uint32_t type,
			  uint16_t misc, const void *body, size_t body_size,
			  const struct ptc_perf_writer_sid *sid)
{
	uint8_t hdr[8], trailer[48];
	size_t pad = (8 - body_size % 8) % 8, tn = 0, size;
	int err;

	if (!w || (body_size && !body))
		return -ptc_err_invalid;
	if (sid)
		tn = sid_put(trailer, w->sid_type, sid);
	size = 8 + body_size + pad + tn;
	if (size > UINT16_MAX)
		return pw_fail(w, ptc_err_overflow, "record of %zu bytes", size);
	err = ptc_perf_writer_begin(w);
	if (err)
		return err;
	ptc_put32(hdr, type);
	ptc_put16(hdr + 4, misc);
	ptc_put16(hdr + 6, (uint16_t)size);
	if (w->zc && type < PTC_REC_HEADER_ATTR) {
		uint8_t rec[UINT16_MAX];

		memcpy(rec, hdr, 8);
		if (body_size)
			memcpy(rec + 8, body, body_size);
		memset(rec + 8 + body_size, 0, pad);
		memcpy(rec + 8 + body_size + pad, trailer, tn);
		return z_add(w, rec, size);
	}
	err = z_flush(w);
	if (err)
		return err;
	err = pw_out(w, hdr, sizeof(hdr));
	if (!err)
		err = pw_out(w, body, body_size);
	if (!err)
		err = pw_out(w, NULL, pad);
	if (!err)
		err = pw_out(w, trailer, tn);
	return err;
}

int ptc_perf_writer_auxtrace(struct ptc_perf_writer *w, uint64_t offset,
			     uint64_t reference, uint32_t idx, uint32_t tid,
			     uint32_t cpu, const void *data, uint64_t size)
{
	uint8_t rec[PTC_AUXTRACE_RECORD_SIZE];
	uint64_t pad = (8 - size % 8) % 8, ent[2];
	int err;

	if (!w || (size && !data))
		return -ptc_err_invalid;
	err = ptc_perf_writer_begin(w);
	if (!err)
		err = z_flush(w);
	if (err)
		return err;
	ptc_put32(rec, PTC_REC_AUXTRACE);
	ptc_put16(rec + 4, 0);
	ptc_put16(rec + 6, sizeof(rec));
	ptc_put64(rec + 8, size + pad);	/* perf counts the padding here */
	ptc_put64(rec + 16, offset);
	ptc_put64(rec + 24, reference);
	ptc_put32(rec + 32, idx);
	ptc_put32(rec + 36, tid);
	ptc_put32(rec + 40, cpu);
	ptc_put32(rec + 44, 0);
	if (w->mode == PTC_PERF_WRITE_FILE) {
		ent[0] = w->offset;
		ent[1] = sizeof(rec);	/* perf checks it against header.size */
		err = blob_append(&w->auxtrace_index, ent, sizeof(ent));
		if (err)
			return err;
		w->nr_auxtrace++;
	}
	err = pw_out(w, rec, sizeof(rec));
	if (!err)
		err = pw_out(w, data, size);
	if (!err)
		err = pw_out(w, NULL, pad);
	return err;
}

int ptc_perf_writer_finished_round(struct ptc_perf_writer *w)
{
	return ptc_perf_writer_event(w, PTC_REC_FINISHED_ROUND, 0, NULL, 0, NULL);
}

int ptc_perf_writer_finish(struct ptc_perf_writer *w)
{
	uint8_t hdr[PTC_PERF_FILE_HEADER_SIZE];
	uint64_t data_end, bits[4] = { 0, 0, 0, 0 }, sec_off;
	int f, nr = 0, err;

	if (!w)
		return -ptc_err_invalid;
	if (w->finished)
		return pw_fail(w, ptc_err_invalid, "already finished");
	err = ptc_perf_writer_begin(w);
	if (err)
		return err;
	w->finished = 1;
	err = z_flush(w);
	if (!err && w->zc && w->mode == PTC_PERF_WRITE_FILE)
		err = put_compressed_feature(w);	/* now with the real ratio */
	if (err)
		return err;
	if (w->mode == PTC_PERF_WRITE_PIPE)
		return pw_flush(w);

	/* The AUXTRACE feature is perf's index of AUXTRACE records: u64
	 * count, then {file offset of the record, its header.size}. */
	if (w->nr_auxtrace && !w->feat[PTC_FEAT_AUXTRACE].set) {
		struct pw_blob *b = &w->feat[PTC_FEAT_AUXTRACE];

		err = blob_append(b, &w->nr_auxtrace, sizeof(w->nr_auxtrace));
		if (!err)
			err = blob_append(b, w->auxtrace_index.data,
					  w->auxtrace_index.size);
		if (err)
			return err;
	}

	data_end = w->offset;
	for (f = 1; f < PTC_FEAT_LAST; f++)
		if (w->feat[f].set) {
			bits[f / 64] |= 1ULL << (f % 64);
			nr++;
		}
	/* The index of {offset, size} sections, then the sections. */
	sec_off = data_end + (uint64_t)nr * 16;
	for (f = 1; f < PTC_FEAT_LAST && !err; f++) {
		uint64_t sec[2];

		if (!w->feat[f].set)
			continue;
		sec[0] = sec_off;
		sec[1] = w->feat[f].size;
		sec_off += w->feat[f].size;
		err = pw_out(w, sec, sizeof(sec));
	}
	for (f = 1; f < PTC_FEAT_LAST && !err; f++)
		if (w->feat[f].set)
			err = pw_out(w, w->feat[f].data, w->feat[f].size);
	if (!err)
		err = pw_flush(w);
	if (err)
		return err;

	memset(hdr, 0, sizeof(hdr));
	ptc_put64(hdr, PTC_PERF_MAGIC);
	ptc_put64(hdr + 8, PTC_PERF_FILE_HEADER_SIZE);
	ptc_put64(hdr + 16, sizeof(struct perf_event_attr) + 16);
	ptc_put64(hdr + 24, w->attrs_offset);
	ptc_put64(hdr + 32, (uint64_t)w->nr_attrs * (sizeof(struct perf_event_attr) + 16));
	ptc_put64(hdr + 40, w->data_offset);
	ptc_put64(hdr + 48, data_end - w->data_offset);
	/* event_types section (56, 64) stays empty. */
	ptc_put64(hdr + 72, bits[0]);
	ptc_put64(hdr + 80, bits[1]);
	ptc_put64(hdr + 88, bits[2]);
	ptc_put64(hdr + 96, bits[3]);
	return pw_pwrite(w, hdr, sizeof(hdr), 0);
}
