/* Unit tests of the perf.data reader on recordings built here byte by byte
 * (the expected values are what the test wrote), in file mode, pipe mode
 * (through a real pipe), zstd-compressed (COMPRESSED and COMPRESSED2, split
 * so that records straddle compressed records), and broken in the ways the
 * reader must report: wrong or byte-swapped magic, zero-sized records,
 * sizes past the end, truncation, huge claimed sizes, trailing garbage.
 * Also the record parsers on short records and the JSON string escaping. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zstd.h>

#include "../lib/check.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/json.h"
#include "images/locate.h"
#include "input/perf_reader.h"

/* ---- a byte buffer to build recordings in ---------------------------- */

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void putz(struct buf *b, size_t n) { static const uint8_t z[256]; while (n) { size_t k = n < 256 ? n : 256; put(b, z, k); n -= k; } }

/* Start a record; finish it with rec_end (pads to 8, sets size). */
static size_t rec_begin(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->n;
	put32(b, type);
	put(b, &misc, 2);
	putz(b, 2);
	return at;
}

static void rec_end(struct buf *b, size_t at)
{
	uint16_t size;
	putz(b, (8 - (b->n - at) % 8) % 8);
	size = (uint16_t)(b->n - at);
	memcpy(b->p + at + 6, &size, 2);
}

/* Two events whose sample_types differ, both with IDENTIFIER, so that the
 * reader must find a record's event by its id. */
#define ST_A (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
#define ST_B (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)
#define ID_A 101
#define ID_B 202

static void put_attr(struct buf *b, uint32_t type, uint64_t config, uint64_t st)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = PERF_ATTR_SIZE_VER5;
	a.config = config;
	a.sample_type = st;
	a.sample_id_all = 1;
	put(b, &a, PERF_ATTR_SIZE_VER5);
}

/* sample_id trailer for ST_B: TID, TIME, IDENTIFIER */
static void put_sid_b(struct buf *b, uint32_t pid, uint32_t tid, uint64_t time)
{
	put32(b, pid);
	put32(b, tid);
	put64(b, time);
	put64(b, ID_B);
}

/* sample_id trailer for ST_A: TID, TIME, CPU, IDENTIFIER */
static void put_sid_a(struct buf *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	put32(b, pid);
	put32(b, tid);
	put64(b, time);
	put32(b, cpu);
	put32(b, 0);
	put64(b, ID_A);
}

#define AUX1 100	/* bytes of trace after the first AUXTRACE record */
#define AUX2 40

static uint8_t aux_byte(size_t i) { return (uint8_t)(i * 13 + 5); }

/* The data records shared by all the recordings.  Returns how many. */
static int put_records(struct buf *b, int with_aux, int with_unknown)
{
	size_t at, i;
	int n = 0;

	at = rec_begin(b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put32(b, 7); put32(b, 8); put(b, "bench\0\0\0", 8);
	put_sid_b(b, 7, 8, 1000);
	rec_end(b, at); n++;

	at = rec_begin(b, PERF_RECORD_SAMPLE, 0);
	put64(b, ID_A); put64(b, 0x401000); put32(b, 7); put32(b, 8); put64(b, 1001);
	put32(b, 3); put32(b, 0);
	rec_end(b, at); n++;

	at = rec_begin(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	put32(b, 7); put32(b, 8); put64(b, 0x400000); put64(b, 0x2000); put64(b, 0);
	{
		uint8_t bid[24] = { 20, 0, 0, 0 };
		for (i = 0; i < 20; i++)
			bid[4 + i] = (uint8_t)(0xa0 + i);
		put(b, bid, 24);
	}
	put32(b, 5); put32(b, 2); put(b, "/usr/bin/bench\0\0", 16);
	put_sid_a(b, 7, 8, 1002, 3);
	rec_end(b, at); n++;

	at = rec_begin(b, PERF_RECORD_AUX, 0);
	put64(b, 0); put64(b, 4096); put64(b, PTC_AUX_FLAG_TRUNCATED | PTC_AUX_FLAG_COLLISION);
	put_sid_a(b, 7, 8, 1003, 2);
	rec_end(b, at); n++;

	if (with_unknown) {
		at = rec_begin(b, 250, 0);
		put64(b, 0x1234);
		rec_end(b, at);
	}

	if (with_aux) {
		at = rec_begin(b, PTC_REC_AUXTRACE, 0);
		put64(b, AUX1); put64(b, 0); put64(b, 77); put32(b, 0); put32(b, 8); put32(b, 2); put32(b, 0);
		rec_end(b, at); n++;
		for (i = 0; i < AUX1; i++) {
			uint8_t c = aux_byte(i);
			put(b, &c, 1);
		}
		at = rec_begin(b, PTC_REC_AUXTRACE, 0);
		put64(b, AUX2); put64(b, AUX1); put64(b, 78); put32(b, 1); put32(b, 8); put32(b, 3); put32(b, 0);
		rec_end(b, at); n++;
		putz(b, AUX2);
	}

	at = rec_begin(b, PERF_RECORD_LOST_SAMPLES, 0);
	put64(b, 9);
	put_sid_b(b, 7, 8, 1004);
	rec_end(b, at); n++;

	at = rec_begin(b, PERF_RECORD_EXIT, 0);
	put32(b, 7); put32(b, 1); put32(b, 8); put32(b, 1); put64(b, 1005);
	put_sid_b(b, 7, 8, 1005);
	rec_end(b, at); n++;

	at = rec_begin(b, PTC_REC_FINISHED_ROUND, 0);
	rec_end(b, at); n++;
	return n;
}

static void put_string_feat(struct buf *b, const char *s)
{
	size_t len = strlen(s) + 1, padded = (len + 63) / 64 * 64;
	put32(b, (uint32_t)padded);
	put(b, s, len);
	putz(b, padded - len);
}

/* A file-mode recording around data (bytes of records). */
static void build_file(struct buf *out, const struct buf *data)
{
	struct buf f = { 0 }, feat_host = { 0 }, feat_cmd = { 0 }, feat_nr = { 0 };
	uint64_t attrs_off = 104, entry = PERF_ATTR_SIZE_VER5 + 16;
	uint64_t ids_off = attrs_off + 2 * entry, data_off = ids_off + 16;
	uint64_t feat_tab = data_off + data->n, feat_data = feat_tab + 3 * 16;
	uint64_t bitmap0 = 1ull << PTC_FEAT_HOSTNAME | 1ull << PTC_FEAT_NRCPUS | 1ull << PTC_FEAT_CMDLINE;

	put_string_feat(&feat_host, "testhost");
	put32(&feat_nr, 8); put32(&feat_nr, 6);
	put32(&feat_cmd, 2); put_string_feat(&feat_cmd, "perf"); put_string_feat(&feat_cmd, "record");

	put64(&f, PTC_PERF_MAGIC); put64(&f, 104); put64(&f, entry);
	put64(&f, attrs_off); put64(&f, 2 * entry);
	put64(&f, data_off); put64(&f, data->n);
	put64(&f, 0); put64(&f, 0);
	put64(&f, bitmap0); put64(&f, 0); put64(&f, 0); put64(&f, 0);
	put_attr(&f, 8, 0x2001, ST_A); put64(&f, ids_off); put64(&f, 8);
	put_attr(&f, 1, 9, ST_B); put64(&f, ids_off + 8); put64(&f, 8);
	put64(&f, ID_A); put64(&f, ID_B);
	put(&f, data->p, data->n);
	/* section table in bit order: HOSTNAME(3), NRCPUS(7), CMDLINE(11) */
	put64(&f, feat_data); put64(&f, feat_host.n);
	put64(&f, feat_data + feat_host.n); put64(&f, feat_nr.n);
	put64(&f, feat_data + feat_host.n + feat_nr.n); put64(&f, feat_cmd.n);
	put(&f, feat_host.p, feat_host.n);
	put(&f, feat_nr.p, feat_nr.n);
	put(&f, feat_cmd.p, feat_cmd.n);
	*out = f;
	free(feat_host.p); free(feat_cmd.p); free(feat_nr.p);
}

/* A pipe-mode recording: header, HEADER_ATTRs, HEADER_FEATURE, data. */
static void build_pipe(struct buf *out, const struct buf *data)
{
	struct buf f = { 0 };
	size_t at;

	put64(&f, PTC_PERF_MAGIC); put64(&f, 16);
	at = rec_begin(&f, PTC_REC_HEADER_FEATURE, 0);
	put64(&f, PTC_FEAT_HOSTNAME); put_string_feat(&f, "testhost");
	rec_end(&f, at);
	at = rec_begin(&f, PTC_REC_HEADER_ATTR, 0);
	put_attr(&f, 8, 0x2001, ST_A); put64(&f, ID_A);
	rec_end(&f, at);
	at = rec_begin(&f, PTC_REC_HEADER_ATTR, 0);
	put_attr(&f, 1, 9, ST_B); put64(&f, ID_B);
	rec_end(&f, at);
	put(&f, data->p, data->n);
	*out = f;
}

/* ---- opening a buffer as a file or as a pipe --------------------------- */

static char tmpdir[] = "/tmp/ptc-reader-test.XXXXXX";
static int tmpcount;

static int open_as_file(const struct buf *b, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/f%d.data", tmpdir, tmpcount++);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, b->p, b->n) != (ssize_t)b->n)
		abort();
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* A pipe fed by a child process, so that inputs larger than the pipe
 * buffer work and the reader sees a real non-seekable stream. */
static int open_as_pipe(const struct buf *b, pid_t *child)
{
	int p[2];

	if (pipe(p) < 0)
		abort();
	*child = fork();
	if (*child == 0) {
		size_t done = 0;
		close(p[0]);
		while (done < b->n) {
			ssize_t w = write(p[1], b->p + done, b->n - done);
			if (w <= 0)
				_exit(1);
			done += (size_t)w;
		}
		_exit(0);
	}
	close(p[1]);
	return p[0];
}

static void end_pipe(int fd, pid_t child)
{
	int st;
	close(fd);
	waitpid(child, &st, 0);
}

/* ---- checks on the common records --------------------------------------- */

static void check_stream(struct ptc_perf_reader *r, int with_aux, int read_first_aux, int nrec)
{
	struct ptc_perf_record rec;
	int n = 0, ret, naux = 0;

	while ((ret = ptc_perf_next(r, &rec)) > 0) {
		if (rec.type == PTC_REC_HEADER_ATTR || rec.type == PTC_REC_HEADER_FEATURE)
			continue;
		n++;
		CHECK(((uintptr_t)rec.data & 7) == 0, "record data not aligned");
		switch (rec.type) {
		case PERF_RECORD_COMM: {
			struct ptc_perf_comm c;
			CHECK_EQ_U64(ptc_perf_parse_comm(&rec, &c), 0);
			CHECK(!strcmp(c.comm, "bench"), "comm %s", c.comm);
			CHECK_EQ_U64(c.exec, 1);
			CHECK_EQ_U64(c.tid, 8);
			/* trailer of event B: tid, time, identifier */
			CHECK_EQ_U64(rec.sid.valid & (PTC_SID_TID | PTC_SID_TIME | PTC_SID_ID),
				     PTC_SID_TID | PTC_SID_TIME | PTC_SID_ID);
			CHECK_EQ_U64(rec.sid.time, 1000);
			CHECK_EQ_U64(rec.sid.id, ID_B);
			CHECK(!(rec.sid.valid & PTC_SID_CPU), "COMM has no cpu in event B's trailer");
			break;
		}
		case PERF_RECORD_SAMPLE:
			CHECK_EQ_U64(rec.sid.ip, 0x401000);
			CHECK_EQ_U64(rec.sid.cpu, 3);
			CHECK_EQ_U64(rec.sid.time, 1001);
			CHECK_EQ_U64(rec.sid.id, ID_A);
			CHECK(ptc_perf_attr_of(r, rec.sid.id) == ptc_perf_attr(r, 0), "attr of id A");
			break;
		case PERF_RECORD_MMAP2: {
			struct ptc_perf_mmap m;
			char hex[41];
			CHECK_EQ_U64(ptc_perf_parse_mmap(&rec, &m), 0);
			CHECK(!strcmp(m.filename, "/usr/bin/bench"), "mmap %s", m.filename);
			CHECK_EQ_U64(m.has_build_id, 1);
			CHECK_EQ_U64(m.build_id_size, 20);
			ptc_build_id_hex(m.build_id, m.build_id_size, hex);
			CHECK(!strcmp(hex, "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3"), "build-id %s", hex);
			CHECK_EQ_U64(m.prot, 5);
			CHECK_EQ_U64(rec.sid.cpu, 3);
			CHECK_EQ_U64(rec.sid.time, 1002);
			break;
		}
		case PERF_RECORD_AUX: {
			struct ptc_perf_aux a;
			CHECK_EQ_U64(ptc_perf_parse_aux(&rec, &a), 0);
			CHECK_EQ_U64(a.aux_size, 4096);
			CHECK_EQ_U64(a.flags, PTC_AUX_FLAG_TRUNCATED | PTC_AUX_FLAG_COLLISION);
			CHECK_EQ_U64(rec.sid.cpu, 2);
			break;
		}
		case PTC_REC_AUXTRACE: {
			struct ptc_perf_auxtrace at;
			CHECK_EQ_U64(ptc_perf_parse_auxtrace(&rec, &at), 0);
			CHECK_EQ_U64(at.size, naux ? AUX2 : AUX1);
			CHECK_EQ_U64(at.cpu, naux ? 3 : 2);
			CHECK_EQ_U64(rec.aux_size, at.size);
			if (!naux && read_first_aux) {
				uint8_t got[AUX1 + 10];
				size_t have = 0, i;
				ssize_t k;
				/* odd chunk sizes across the window */
				while ((k = ptc_perf_read_aux(r, got + have, 7)) > 0)
					have += (size_t)k;
				CHECK_EQ_U64(k, 0);
				CHECK_EQ_U64(have, AUX1);
				for (i = 0; i < have; i++)
					if (got[i] != aux_byte(i)) {
						CHECK(0, "aux byte %zu = %u", i, got[i]);
						break;
					}
				if (ptc_perf_seekable(r)) {
					uint8_t again[AUX1];
					CHECK_EQ_U64(ptc_perf_pread(r, again, AUX1, rec.aux_offset), 0);
					CHECK(!memcmp(again, got, AUX1), "pread of the aux data");
				}
			}
			naux++;
			break;
		}
		case PERF_RECORD_LOST_SAMPLES: {
			struct ptc_perf_lost l;
			CHECK_EQ_U64(ptc_perf_parse_lost(&rec, &l), 0);
			CHECK_EQ_U64(l.lost, 9);
			CHECK_EQ_U64(rec.sid.time, 1004);
			break;
		}
		case PERF_RECORD_EXIT: {
			struct ptc_perf_task t;
			CHECK_EQ_U64(ptc_perf_parse_task(&rec, &t), 0);
			CHECK_EQ_U64(t.time, 1005);
			CHECK_EQ_U64(t.tid, 8);
			break;
		}
		}
	}
	CHECK(ret == 0, "ended with %d: %s", ret, ptc_perf_errmsg(r));
	CHECK_EQ_U64(n, nrec);
	CHECK_EQ_U64(naux, with_aux ? 2 : 0);
	CHECK_EQ_U64(ptc_perf_stats(r)->unknown_records, 1);
	CHECK_EQ_U64(ptc_perf_stats(r)->records[PERF_RECORD_COMM], 1);
	CHECK_EQ_U64(ptc_perf_stats(r)->aux_bytes, with_aux ? AUX1 + AUX2 : 0);
	CHECK_EQ_U64(ptc_perf_nr_attrs(r), 2);
	CHECK(ptc_perf_info(r)->hostname && !strcmp(ptc_perf_info(r)->hostname, "testhost"),
	      "hostname");
}

static void test_plain(void)
{
	struct buf data = { 0 }, file, pipe_rec;
	struct ptc_perf_reader *r;
	char path[256], err[512];
	int nrec = put_records(&data, 1, 1), fd;
	pid_t child;

	build_file(&file, &data);
	fd = open_as_file(&file, path, sizeof(path));
	CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, path, err, sizeof(err)), 0);
	if (r) {
		CHECK(!ptc_perf_info(r)->pipe_mode, "file mode");
		CHECK(!strcmp(ptc_perf_info(r)->cmdline, "perf record"), "cmdline %s",
		      ptc_perf_info(r)->cmdline);
		CHECK_EQ_U64(ptc_perf_info(r)->nr_cpus_avail, 8);
		CHECK_EQ_U64(ptc_perf_info(r)->nr_cpus_online, 6);
		check_stream(r, 1, 1, nrec);
		ptc_perf_close(r);
	}
	close(fd);

	/* the same, skipping all AUX data */
	fd = open_as_file(&file, path, sizeof(path));
	CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, path, err, sizeof(err)), 0);
	if (r) {
		check_stream(r, 1, 0, nrec);
		ptc_perf_close(r);
	}
	close(fd);

	/* pipe mode through a real pipe: AUX data read, then skipped */
	build_pipe(&pipe_rec, &data);
	fd = open_as_pipe(&pipe_rec, &child);
	CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, "pipe", err, sizeof(err)), 0);
	if (r) {
		CHECK(ptc_perf_info(r)->pipe_mode, "pipe mode");
		CHECK(!ptc_perf_seekable(r), "a pipe is not seekable");
		check_stream(r, 1, 1, nrec);
		CHECK_EQ_U64(ptc_perf_stats(r)->records[PTC_REC_HEADER_ATTR], 2);
		ptc_perf_close(r);
	}
	end_pipe(fd, child);
	fd = open_as_pipe(&pipe_rec, &child);
	CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, "pipe", err, sizeof(err)), 0);
	if (r) {
		check_stream(r, 1, 0, nrec);
		ptc_perf_close(r);
	}
	end_pipe(fd, child);
	/* record offsets through a pipe are the offsets in the file */
	{
		uint64_t off_file[64], off_pipe[64];
		int nf = 0, np = 0, i, pass;
		struct ptc_perf_record rec;
		for (pass = 0; pass < 2; pass++) {
			uint64_t *offs = pass ? off_pipe : off_file;
			int *cnt = pass ? &np : &nf;
			fd = pass ? open_as_pipe(&pipe_rec, &child) : open_as_file(&pipe_rec, path, sizeof(path));
			if (ptc_perf_open_fd(&r, fd, "p", err, sizeof(err)) == 0) {
				while (ptc_perf_next(r, &rec) > 0 && *cnt < 64)
					offs[(*cnt)++] = rec.offset;
				ptc_perf_close(r);
			}
			if (pass)
				end_pipe(fd, child);
			else
				close(fd);
		}
		CHECK_EQ_U64(np, nf);
		for (i = 0; i < nf && i < np; i++)
			CHECK(off_file[i] == off_pipe[i], "record %d at 0x%llx in the file, 0x%llx through a pipe",
			      i, (unsigned long long)off_file[i], (unsigned long long)off_pipe[i]);
	}
	free(data.p); free(file.p); free(pipe_rec.p);
}

/* AUX data larger than the reader's window, skipped and read, through a
 * pipe and a file: the records after it keep their true offsets. */
static void test_big_aux(void)
{
	struct buf data = { 0 }, rec_pipe;
	struct ptc_perf_reader *r;
	struct ptc_perf_record rec;
	char path[256], err[512];
	size_t at, big = 3 * 1024 * 1024 + 8, i;
	uint64_t want_off[3];
	int pass, n, fd;
	pid_t child;

	for (i = 0; i < 3; i++) {
		at = rec_begin(&data, PTC_REC_AUXTRACE, 0);
		put64(&data, big); put64(&data, 0); put64(&data, 0); put32(&data, 0); put32(&data, 8);
		put32(&data, 0); put32(&data, 0);
		rec_end(&data, at);
		putz(&data, big);
		want_off[i] = data.n;	/* relative to the data; the pipe header is added below */
		at = rec_begin(&data, PTC_REC_FINISHED_ROUND, 0);
		rec_end(&data, at);
	}
	build_pipe(&rec_pipe, &data);
	for (i = 0; i < 3; i++)
		want_off[i] += rec_pipe.n - data.n;
	for (pass = 0; pass < 4; pass++) {
		int piped = pass & 1, read_aux = pass & 2;
		fd = piped ? open_as_pipe(&rec_pipe, &child) : open_as_file(&rec_pipe, path, sizeof(path));
		CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, "big", err, sizeof(err)), 0);
		n = 0;
		if (r) {
			int ret;
			while ((ret = ptc_perf_next(r, &rec)) > 0) {
				if (rec.type == PTC_REC_AUXTRACE && read_aux) {
					static uint8_t sink[100000];
					ssize_t k, total = 0;
					while ((k = ptc_perf_read_aux(r, sink, sizeof(sink))) > 0)
						total += k;
					CHECK_EQ_U64(total, big);
				}
				if (rec.type == PTC_REC_FINISHED_ROUND && n < 3) {
					CHECK(rec.offset == want_off[n], "pass %d: record at 0x%llx, want 0x%llx", pass,
					      (unsigned long long)rec.offset, (unsigned long long)want_off[n]);
					n++;
				}
			}
			CHECK(ret == 0, "pass %d: %s", pass, ptc_perf_errmsg(r));
			ptc_perf_close(r);
		}
		CHECK_EQ_U64(n, 3);
		if (piped)
			end_pipe(fd, child);
		else
			close(fd);
	}
	free(data.p);
	free(rec_pipe.p);
}

/* Thousands of events, each followed by a record found through its id:
 * the id lookup must not rebuild anything per event (this would take
 * minutes if it did), and ids map to the right event. */
static void test_many_events(void)
{
	struct buf f = { 0 };
	struct ptc_perf_reader *r;
	struct ptc_perf_record rec;
	char path[256], err[512];
	size_t at;
	uint32_t i, n = 16000, found = 0;
	int fd, ret;

	put64(&f, PTC_PERF_MAGIC); put64(&f, 16);
	for (i = 0; i < n; i++) {
		at = rec_begin(&f, PTC_REC_HEADER_ATTR, 0);
		put_attr(&f, 1, i, (i & 1) ? ST_A : ST_B);
		put64(&f, 1000000 + 4ull * i); put64(&f, 1000001 + 4ull * i);
		rec_end(&f, at);
		at = rec_begin(&f, PERF_RECORD_SAMPLE, 0);
		put64(&f, 1000001 + 4ull * i);	/* IDENTIFIER comes first in both layouts */
		putz(&f, (i & 1) ? 32 : 16);	/* the other fields of each */
		rec_end(&f, at);
	}
	fd = open_as_file(&f, path, sizeof(path));
	CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, path, err, sizeof(err)), 0);
	if (r) {
		while ((ret = ptc_perf_next(r, &rec)) > 0) {
			const struct ptc_perf_attr *a;
			if (rec.type != PERF_RECORD_SAMPLE)
				continue;
			a = ptc_perf_attr_of(r, rec.sid.id);
			if (a && a->attr.config == (rec.sid.id - 1000001) / 4)
				found++;
		}
		CHECK(ret == 0, "%s", ptc_perf_errmsg(r));
		CHECK_EQ_U64(found, n);
		CHECK_EQ_U64(ptc_perf_nr_attrs(r), n);
		ptc_perf_close(r);
	}
	close(fd);
	free(f.p);
}

/* Wrap plain records in COMPRESSED (type2: COMPRESSED2) records holding
 * pieces of one zstd frame of at most piece bytes: records straddle them. */
static void compress_into(struct buf *out, const struct buf *plain, int type2, size_t piece)
{
	size_t cap = ZSTD_compressBound(plain->n), zn, off;
	uint8_t *z = malloc(cap);

	zn = ZSTD_compress(z, cap, plain->p, plain->n, 3);
	if (ZSTD_isError(zn))
		abort();
	for (off = 0; off < zn; off += piece) {
		size_t k = zn - off < piece ? zn - off : piece;
		size_t at = rec_begin(out, type2 ? PTC_REC_COMPRESSED2 : PTC_REC_COMPRESSED, 0);
		if (type2)
			put64(out, k);
		put(out, z + off, k);
		if (type2) {
			rec_end(out, at);	/* COMPRESSED2 is padded to 8 */
		} else {
			uint16_t size = (uint16_t)(out->n - at);
			memcpy(out->p + at + 6, &size, 2);
		}
	}
	free(z);
}

static void test_compressed(void)
{
	struct buf plain = { 0 }, comp, file, pipe_rec;
	struct ptc_perf_reader *r;
	char path[256], err[512];
	int nrec = put_records(&plain, 0, 1), type2, fd;
	pid_t child;

	for (type2 = 0; type2 < 2; type2++) {
		memset(&comp, 0, sizeof(comp));
		compress_into(&comp, &plain, type2, 37);
		build_file(&file, &comp);
		fd = open_as_file(&file, path, sizeof(path));
		CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, path, err, sizeof(err)), 0);
		if (r) {
			check_stream(r, 0, 0, nrec);
			CHECK(ptc_perf_stats(r)->compressed_records > 2, "several compressed records");
			CHECK_EQ_U64(ptc_perf_stats(r)->decompressed_bytes, plain.n);
			ptc_perf_close(r);
		}
		close(fd);
		build_pipe(&pipe_rec, &comp);
		fd = open_as_pipe(&pipe_rec, &child);
		CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, "pipe", err, sizeof(err)), 0);
		if (r) {
			check_stream(r, 0, 0, nrec);
			ptc_perf_close(r);
		}
		end_pipe(fd, child);
		free(comp.p); free(file.p); free(pipe_rec.p);
	}
	free(plain.p);
}

/* Many records through many compressed records: the bounded buffers are
 * reused many times over. */
static void test_compressed_large(void)
{
	struct buf plain = { 0 }, comp = { 0 }, pipe_rec;
	struct ptc_perf_reader *r;
	struct ptc_perf_record rec;
	char err[512];
	size_t i, at, n = 200000, chunk;
	uint64_t seen = 0, sum = 0, want_sum = 0;
	pid_t child;
	int fd, ret;

	/* several frames of ~1 MB each, each split into 60000-byte pieces */
	for (chunk = 0; chunk < 4; chunk++) {
		plain.n = 0;
		for (i = 0; i < n / 4; i++) {
			uint64_t v = chunk * n + i;
			at = rec_begin(&plain, PERF_RECORD_ITRACE_START, 0);
			put32(&plain, (uint32_t)v); put32(&plain, (uint32_t)(v >> 7));
			put_sid_b(&plain, 1, 2, v);
			rec_end(&plain, at);
			want_sum += v;
		}
		compress_into(&comp, &plain, chunk & 1, 60000);
	}
	build_pipe(&pipe_rec, &comp);
	fd = open_as_pipe(&pipe_rec, &child);
	CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, "pipe", err, sizeof(err)), 0);
	if (r) {
		while ((ret = ptc_perf_next(r, &rec)) > 0) {
			struct ptc_perf_itrace_start is;
			if (rec.type != PERF_RECORD_ITRACE_START)
				continue;
			CHECK_EQ_U64(ptc_perf_parse_itrace_start(&rec, &is), 0);
			sum += rec.sid.time;
			seen++;
		}
		CHECK(ret == 0, "%s", ptc_perf_errmsg(r));
		CHECK_EQ_U64(seen, n);
		CHECK_EQ_U64(sum, want_sum);
		ptc_perf_close(r);
	}
	end_pipe(fd, child);
	free(plain.p); free(comp.p); free(pipe_rec.p);
}

/* ---- broken inputs ----------------------------------------------------- */

/* What reading a (modified) recording to the end gave. */
struct outcome {
	int ret;
	uint64_t records, aux_lost, skips, skipped, repairs;
	struct ptc_perf_skip first;	/* (message not kept) */
	char msg[512];		/* the error, else the first skip's message */
};

/* (as_pipe: through a pipe, which the reader cannot seek) */
static void read_outcome_as(const struct buf *b, struct outcome *o, int as_pipe)
{
	struct ptc_perf_reader *r;
	struct ptc_perf_record rec;
	char path[256];
	pid_t child = 0;
	int fd = as_pipe ? open_as_pipe(b, &child) : open_as_file(b, path, sizeof(path));

	memset(o, 0, sizeof(*o));
	o->ret = ptc_perf_open_fd(&r, fd, "broken.data", o->msg, sizeof(o->msg));
	if (o->ret == 0) {
		const struct ptc_perf_stats *st = ptc_perf_stats(r);
		while ((o->ret = ptc_perf_next(r, &rec)) > 0) {
			o->records++;
			o->aux_lost += rec.aux_lost;
		}
		o->skips = st->skips;
		o->skipped = st->skipped_bytes;
		o->repairs = st->repairs;
		if (ptc_perf_nr_skips(r))
			o->first = *ptc_perf_skip(r, 0);
		o->first.message = NULL;
		snprintf(o->msg, sizeof(o->msg), "%s", o->ret < 0 ? ptc_perf_errmsg(r) :
			 ptc_perf_nr_skips(r) ? ptc_perf_skip(r, 0)->message : "");
		ptc_perf_close(r);
	}
	if (as_pipe)
		end_pipe(fd, child);
	else
		close(fd);
}

static void read_outcome(const struct buf *b, struct outcome *o)
{
	read_outcome_as(b, o, 0);
}

/* The final code; msg gets the error or the first damage's message. */
static int read_all(const struct buf *b, char *msg, size_t len)
{
	struct outcome o;

	read_outcome(b, &o);
	snprintf(msg, len, "%s", o.msg);
	return o.ret;
}

/* Damage at off, bytes skipped there (0: repaired), read on to the end;
 * the message names the damaged record at rec_off. */
static void expect_skip_as(const struct buf *b, uint64_t off, uint64_t bytes, int to_end, uint64_t records,
			   int as_pipe, uint64_t rec_off)
{
	struct outcome o;
	char want[64];

	read_outcome_as(b, &o, as_pipe);
	snprintf(want, sizeof(want), "broken.data: offset 0x%llx: ", (unsigned long long)rec_off);
	CHECK(o.ret == 0, "damage at 0x%llx: read ends with %d (%s)", (unsigned long long)off, o.ret, o.msg);
	CHECK(o.skips == 1, "damage at 0x%llx: %llu skips", (unsigned long long)off,
	      (unsigned long long)o.skips);
	CHECK(o.first.offset == off && o.first.bytes == bytes && o.first.to_end == to_end,
	      "damage at 0x%llx: skip at 0x%llx of %llu bytes (to_end %d), want %llu bytes (%d)",
	      (unsigned long long)off, (unsigned long long)o.first.offset,
	      (unsigned long long)o.first.bytes, o.first.to_end, (unsigned long long)bytes, to_end);
	CHECK(o.skipped == bytes && o.repairs == !bytes, "damage at 0x%llx: stats %llu bytes, %llu repairs",
	      (unsigned long long)off, (unsigned long long)o.skipped, (unsigned long long)o.repairs);
	CHECK(strstr(o.msg, want) != NULL, "damage at 0x%llx: message %s", (unsigned long long)off, o.msg);
	CHECK(o.records == records, "damage at 0x%llx: %llu records, want %llu", (unsigned long long)off,
	      (unsigned long long)o.records, (unsigned long long)records);
}

static void expect_skip(const struct buf *b, uint64_t off, uint64_t bytes, int to_end, uint64_t records)
{
	expect_skip_as(b, off, bytes, to_end, records, 0, off);
}

static void expect(const struct buf *b, int code, const char *offset_text)
{
	char msg[512];
	int ret = read_all(b, msg, sizeof(msg));

	CHECK(ret == -code, "got %d (%s), want -%s", ret, msg, ptc_errstr(code));
	CHECK(strstr(msg, "broken.data: offset ") != NULL, "message names file and offset: %s", msg);
	if (offset_text)
		CHECK(strstr(msg, offset_text) != NULL, "message %s lacks %s", msg, offset_text);
}

static void test_broken(void)
{
	struct buf data = { 0 }, file, b = { 0 };
	char msg[512];
	uint64_t data_off, v;
	size_t i;
	uint16_t sz;
	int nrec;

	nrec = put_records(&data, 1, 0);
	build_file(&file, &data);
	data_off = ptc_le64(file.p + 40);
	put(&b, file.p, file.n);

	/* wrong magic */
	memcpy(b.p, "PERFILE1", 8);
	expect(&b, ptc_err_bad_magic, "offset 0x0:");
	/* byte-swapped magic: a big-endian machine's file */
	ptc_put64(b.p, PTC_PERF_MAGIC_SWAPPED);
	expect(&b, ptc_err_foreign_endian, "offset 0x0:");
	memcpy(b.p, file.p, file.n);

	/* a damaged first record (COMM): the reading goes on at the next
	 * record, the COMM's bytes are skipped */
	sz = ptc_le16(b.p + data_off + 6);
	for (i = 0; i < 6; i++) {
		static const uint16_t bad_size[] = { 0, 4, 0xfff8, 0x1f };
		if (i < 4) {
			ptc_put16(b.p + data_off + 6, bad_size[i]);
		} else if (i == 4) {
			ptc_put32(b.p + data_off, 0x12345);	/* no type of perf's */
		} else {
			memset(b.p + data_off, 0xd5, 8);	/* garbage */
		}
		expect_skip(&b, data_off, sz, 0, nrec - 1);
		memcpy(b.p, file.p, file.n);
	}
	/* the last record (FINISHED_ROUND) damaged: lost to the end */
	memset(b.p + data_off + data.n - 8, 0xd5, 8);
	expect_skip(&b, data_off + data.n - 8, 8, 1, nrec - 1);
	memcpy(b.p, file.p, file.n);

	/* huge AUXTRACE size: find the record */
	for (i = data_off; i < data_off + data.n; i += sz) {
		sz = ptc_le16(b.p + i + 6);
		if (ptc_le32(b.p + i) == PTC_REC_AUXTRACE)
			break;
	}
	/* a file cut 30 bytes into the trace data: the record comes out with a
	 * warning, its 30 bytes can be read, then the end is an error */
	{
		struct buf t = { b.p, i + PTC_AUXTRACE_RECORD_SIZE + 30, 0 };
		struct ptc_perf_reader *r;
		struct ptc_perf_record rec;
		char path[256], err[512];
		uint8_t got[AUX1];
		int fd = open_as_file(&t, path, sizeof(path)), ret;
		ssize_t k, have = 0;
		CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, "cut.data", err, sizeof(err)), 0);
		if (r) {
			while ((ret = ptc_perf_next(r, &rec)) > 0 && rec.type != PTC_REC_AUXTRACE)
				;
			CHECK(ret == 1 && rec.aux_size == AUX1, "AUXTRACE handed out: %d %s", ret,
			      ptc_perf_errmsg(r));
			while ((k = ptc_perf_read_aux(r, got + have, sizeof(got) - have)) > 0)
				have += k;
			CHECK_EQ_U64(have, 30);
			CHECK(k == -ptc_err_truncated, "read_aux ends with %zd", k);
			CHECK(got[29] == aux_byte(29), "aux bytes before the cut");
			CHECK(strstr(ptc_perf_errmsg(r), "cut.data: offset 0x") != NULL, "%s", ptc_perf_errmsg(r));
			ptc_perf_close(r);
		}
		close(fd);
	}
	/* its trace data size damaged: the next intact record is found after
	 * the data, which is lost (the queue's next AUXTRACE record does not
	 * say where it ended), the record comes out with aux_lost */
	for (v = 0; v < 3; v++) {
		static const uint64_t bad_aux[] = { UINT64_MAX - 5, 1ull << 40, AUX1 + 16 };
		struct outcome o;
		ptc_put64(b.p + i + 8, bad_aux[v]);
		expect_skip_as(&b, i + PTC_AUXTRACE_RECORD_SIZE, AUX1, 0, nrec, 0, i);
		read_outcome(&b, &o);
		CHECK(o.aux_lost == 1, "aux_lost %llu", (unsigned long long)o.aux_lost);
		CHECK(strstr(o.msg, "its trace data (queue 0) lost") != NULL, "%s", o.msg);
		memcpy(b.p, file.p, file.n);
	}
	/* when the next record of its queue takes up where the data would end
	 * at the next intact record, the data is taken: nothing lost */
	{
		size_t j = i + PTC_AUXTRACE_RECORD_SIZE + AUX1;
		ptc_put32(b.p + j + 32, 0);	/* the second AUXTRACE record in queue 0 (cpu 2) */
		ptc_put32(b.p + j + 40, 2);
		memcpy(file.p, b.p, file.n);
		ptc_put64(b.p + i + 8, UINT64_MAX - 5);
		expect_skip(&b, i, 0, 0, nrec);
		memcpy(b.p, file.p, file.n);
		/* the header size of an AUXTRACE record damaged, its fields whole:
		 * its data ends where the next record starts, it is read whole */
		for (v = 0; v < 3; v++) {
			static const uint16_t bad_size[] = { 0, 12, 56 };
			ptc_put16(b.p + j + 6, bad_size[v]);
			expect_skip(&b, j, 0, 0, nrec);
			memcpy(b.p, file.p, file.n);
		}
		free(file.p);
		build_file(&file, &data);
		memcpy(b.p, file.p, file.n);
	}

	/* huge attribute section and ids */
	ptc_put64(b.p + 32, UINT64_MAX / 2);
	expect(&b, ptc_err_truncated, "offset 0x18:");
	memcpy(b.p, file.p, file.n);
	ptc_put64(b.p + 104 + PERF_ATTR_SIZE_VER5 + 8, 1ull << 60);
	expect(&b, ptc_err_bad_size, NULL);
	memcpy(b.p, file.p, file.n);

	/* huge data size: the records are read, then the end of the file is
	 * reported where the data section should have gone on */
	ptc_put64(b.p + 48, UINT64_MAX - data_off);
	{
		/* the feature sections are then read as records: whatever
		 * they look like, they are an error or damage, named */
		struct outcome o;
		read_outcome(&b, &o);
		CHECK((o.ret < 0 || o.skips) && strstr(o.msg, "broken.data: offset 0x"), "huge data size: %d %s",
		      o.ret, o.msg);
		CHECK(o.records >= (uint64_t)nrec, "huge data size: %llu records", (unsigned long long)o.records);
	}
	memcpy(b.p, file.p, file.n);

	/* truncation at every 8-byte step inside the data section */
	for (v = data_off + 8; v < data_off + data.n; v += 8) {
		struct buf t = { b.p, (size_t)v, 0 };
		int ret = read_all(&t, msg, sizeof(msg));
		CHECK(ret == -ptc_err_truncated || ret == -ptc_err_bad_size,
		      "cut at 0x%llx: %d %s", (unsigned long long)v, ret, msg);
		CHECK(strstr(msg, "offset 0x") != NULL, "cut at 0x%llx: %s", (unsigned long long)v, msg);
	}
	/* inside the header */
	for (v = 0; v < 104; v += 13) {
		struct buf t = { b.p, (size_t)v, 0 };
		CHECK(read_all(&t, msg, sizeof(msg)) < 0, "cut header at %llu", (unsigned long long)v);
	}

	/* pipe mode: garbage after the last record is reported, not fatal */
	{
		struct buf p, g = { 0 };
		struct ptc_perf_reader *r;
		struct ptc_perf_record rec;
		char path[256], err[512];
		int fd, ret;
		build_pipe(&p, &data);
		put(&g, p.p, p.n);
		put(&g, "[ perf record: Woken up 1 times ]\n", 34);
		fd = open_as_file(&g, path, sizeof(path));
		CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, "g.data", err, sizeof(err)), 0);
		if (r) {
			while ((ret = ptc_perf_next(r, &rec)) > 0)
				;
			CHECK_EQ_U64(ret, 0);
			CHECK_EQ_U64(ptc_perf_stats(r)->trailing_offset, p.n);
			CHECK_EQ_U64(ptc_perf_stats(r)->trailing_bytes, 34);
			CHECK(ptc_perf_nr_warnings(r) == 1 && strstr(ptc_perf_warning(r, 0), "trailing"),
			      "warning about trailing garbage");
			ptc_perf_close(r);
		}
		close(fd);
		/* damage in a stream: the reading goes on at the next record
		 * (a damaged first record, the first AUXTRACE record's data
		 * size), garbage to the end is damage, text is not */
		{
			struct outcome o;
			size_t start = p.n - data.n, j;
			uint64_t all;
			read_outcome_as(&p, &o, 1);
			all = o.records;
			CHECK(o.ret == 0 && o.skips == 0, "intact stream: %d %s", o.ret, o.msg);
			memcpy(g.p, p.p, p.n);
			ptc_put16(g.p + start + 6, 4);
			expect_skip_as(&g, start, ptc_le16(p.p + start + 6), 0, all - 1, 1, start);
			memcpy(g.p, p.p, p.n);
			for (j = start; ptc_le32(g.p + j) != PTC_REC_AUXTRACE; j += ptc_le16(g.p + j + 6))
				;
			ptc_put64(g.p + j + 8, UINT64_MAX - 5);
			expect_skip_as(&g, j + PTC_AUXTRACE_RECORD_SIZE, AUX1, 0, all, 1, j);
			memcpy(g.p, p.p, p.n);
			memset(g.p + p.n, 0xd5, 34);
			expect_skip_as(&g, p.n, 34, 1, all, 1, p.n);
		}
		/* pipe mode cut inside the AUX data */
		for (i = 0; i + 16 < p.n; i += 8) {
			struct buf t = { p.p, i, 0 };
			read_all(&t, msg, sizeof(msg));	/* must not crash; ASan checks */
		}
		free(p.p);
		free(g.p);
	}
	free(data.p); free(file.p); free(b.p);
}

/* Damage at 300 places: all counted, the first 256 kept in detail, the
 * last kept one standing for the rest; memory does not grow with them. */
static void test_many_skips(void)
{
	struct buf data = { 0 }, file;
	struct ptc_perf_reader *r;
	struct ptc_perf_record rec;
	const struct ptc_perf_stats *st;
	char path[256], err[512];
	uint64_t kept = 0;
	size_t i, k;
	int fd, ret;

	for (i = 0; i < 300; i++) {
		putz(&data, 8);		/* a header of size 0 */
		for (k = 0; k < 3; k++) {
			size_t at = rec_begin(&data, PTC_REC_FINISHED_ROUND, 0);
			rec_end(&data, at);
		}
	}
	build_file(&file, &data);
	fd = open_as_file(&file, path, sizeof(path));
	CHECK_EQ_U64(ptc_perf_open_fd(&r, fd, "many.data", err, sizeof(err)), 0);
	if (r) {
		while ((ret = ptc_perf_next(r, &rec)) > 0)
			;
		st = ptc_perf_stats(r);
		CHECK_EQ_U64(ret, 0);
		CHECK_EQ_U64(st->skips, 300);
		CHECK_EQ_U64(st->skipped_bytes, 300 * 8);
		CHECK_EQ_U64(st->records[PTC_REC_FINISHED_ROUND], 900);
		CHECK_EQ_U64(ptc_perf_nr_skips(r), 256);
		for (i = 0; i < ptc_perf_nr_skips(r); i++)
			kept += ptc_perf_skip(r, i)->bytes;
		CHECK_EQ_U64(kept, 300 * 8);
		CHECK_EQ_U64(ptc_perf_skip(r, 255)->merged, 44);
		CHECK_EQ_U64(ptc_perf_skip(r, 1)->offset, ptc_le64(file.p + 40) + 32);
		ptc_perf_close(r);
	}
	close(fd);
	free(data.p);
	free(file.p);
}

static void test_parsers_short(void)
{
	struct ptc_perf_record rec;
	uint8_t d[256];
	struct ptc_perf_mmap m;
	struct ptc_perf_comm c;
	struct ptc_perf_auxtrace_error e;

	memset(&rec, 0, sizeof(rec));
	memset(d, 'x', sizeof(d));
	rec.data = d;
	rec.type = PERF_RECORD_MMAP;
	rec.size = 40;
	CHECK_EQ_U64(ptc_perf_parse_mmap(&rec, &m), (uint64_t)-ptc_err_bad_record);
	rec.size = 64;	/* filename without NUL */
	CHECK_EQ_U64(ptc_perf_parse_mmap(&rec, &m), (uint64_t)-ptc_err_bad_record);
	d[63] = 0;
	CHECK_EQ_U64(ptc_perf_parse_mmap(&rec, &m), 0);
	rec.type = PERF_RECORD_COMM;
	rec.size = 16;
	CHECK_EQ_U64(ptc_perf_parse_comm(&rec, &c), (uint64_t)-ptc_err_bad_record);
	rec.type = PTC_REC_AUXTRACE_ERROR;
	rec.size = 100;
	CHECK_EQ_U64(ptc_perf_parse_auxtrace_error(&rec, &e), (uint64_t)-ptc_err_bad_record);
	rec.size = 104;	/* msg without NUL */
	memset(d, 'x', sizeof(d));
	CHECK_EQ_U64(ptc_perf_parse_auxtrace_error(&rec, &e), (uint64_t)-ptc_err_bad_record);
	/* a parser refuses a record of another type */
	rec.type = PERF_RECORD_SAMPLE;
	CHECK_EQ_U64(ptc_perf_parse_comm(&rec, &c), (uint64_t)-ptc_err_bad_record);
	CHECK(!strcmp(ptc_perf_record_name(PTC_REC_COMPRESSED2), "COMPRESSED2"), "name 83");
	CHECK(!strcmp(ptc_perf_record_name(999), "UNKNOWN"), "name 999");
}

static void test_json(void)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	struct ptc_json j;

	ptc_json_init(&j, f);
	ptc_json_begin_object(&j, NULL);
	ptc_json_string(&j, "s", "a\"b\\c\nd\x01\xff\xc3\xa9");
	ptc_json_u64(&j, "n", 18446744073709551615ull);
	ptc_json_begin_array(&j, "a");
	ptc_json_end_array(&j);
	ptc_json_null(&j, "z");
	ptc_json_end_object(&j);
	fclose(f);
	CHECK(!strcmp(out, "{\n  \"s\": \"a\\\"b\\\\c\\nd\\u0001\\u00ff\xc3\xa9\",\n"
			   "  \"n\": 18446744073709551615,\n  \"a\": [],\n  \"z\": null\n}\n"),
	      "json: %s", out);
	free(out);
}

/* --cuts FILE: read offsets from standard input and, for each, read the
 * first N bytes of FILE to the end; print "N CODE MESSAGE".  Used by
 * tests/reader_bad_input.sh to cut recordings at every record boundary
 * without starting a process per cut. */
static int cuts(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct buf whole = { 0 };
	uint8_t chunk[65536];
	unsigned long long n;
	size_t k;

	if (!f)
		return 2;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		put(&whole, chunk, k);
	fclose(f);
	while (scanf("%llu", &n) == 1) {
		struct buf t = { whole.p, n < whole.n ? (size_t)n : whole.n, 0 };
		char msg[512];
		int ret = read_all(&t, msg, sizeof(msg));
		printf("%llu %d %s\n", n, ret, msg);
	}
	free(whole.p);
	return 0;
}

static int main_tests(int argc, char **argv);

/* --records FILE: one line per record, "OFFSET TYPE VALID CPU TIME PID TID IP"
 * (sample-id fields as parsed), for tests/reader_sample_ids.sh to compare
 * with perf. */
static int records(const char *path)
{
	struct ptc_perf_reader *r;
	struct ptc_perf_record rec;
	char err[512];
	int ret;

	if (ptc_perf_open(&r, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	while ((ret = ptc_perf_next(r, &rec)) > 0)
		printf("0x%llx %u %u %u %llu %u %u 0x%llx\n", (unsigned long long)rec.offset, rec.type,
		       rec.sid.valid, rec.sid.cpu, (unsigned long long)rec.sid.time, rec.sid.pid,
		       rec.sid.tid, (unsigned long long)rec.sid.ip);
	if (ret < 0)
		fprintf(stderr, "%s\n", ptc_perf_errmsg(r));
	ptc_perf_close(r);
	return ret < 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--records"))
		return records(argv[2]);
	return main_tests(argc, argv);
}

static int main_tests(int argc, char **argv)
{
	char cmd[512];

	if (!mkdtemp(tmpdir))
		SKIP("cannot make a scratch directory");
	if (argc == 3 && !strcmp(argv[1], "--cuts")) {
		int ret = cuts(argv[2]);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
		return ret;
	}
	if (0)
		SKIP("cannot make a scratch directory");
	test_plain();
	test_big_aux();
	test_many_events();
	test_compressed();
	test_compressed_large();
	test_broken();
	test_many_skips();
	test_parsers_short();
	test_json();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_result();
}
